// pass_simt_stages: one draft per non-GEMM anchor op and one elementwise draft per remaining
// elementwise op, then all drafts sorted by their first op (run order):
//   softmax / log_softmax over the last dim, layer_norm / rms_norm over trailing dims,
//   group_norm over (sample, group) rows, cosine_similarity and triplet_margin
//   (pass_expand_ops) over the last dim                                -> rowwise
//   sum / mean / max / min / amax / amin / argmax / argmin / logsumexp over the last dim -> rowwise
//   sum / mean / max / min over other dims or all dims               -> reduce (dims=[...])
//   norm (p = 1, 2, 'fro', inf) as sum/max of a |x| or x^2 prologue (then sqrt) -> either
//   mse_loss, l1_loss, smooth_l1_loss, huber_loss, kl_div, cross_entropy
//                                                                     -> reduce (loss)
//   cumsum / cumprod                                                  -> scan
//   attention (pass_expand_ops' fused scaled_dot_product_attention)   -> attention
//   max_pool / avg_pool / adaptive_avg_pool, depthwise_conv (pass_match_conv) -> window
// Then a chain of one-input elementwise ops from a problem input or parameter to a rowwise or
// reduce stage's input, each step the only reader of the one before and of the same shape,
// becomes that stage's prologue (log(p) before kl_div, x * x before a sum, x / T before softmax):
// no intermediate tensor.
// Runs after pass_match_gemm. Golden tests: tests/golden/lower/softmax.json, layer_norm.json,
// reduce_sum.json, mse_loss.json, cumsum.json, maxpool2d.json, avgpool2d_pad.json, adaptive_avgpool.json,
// depthwise_conv2d.json.
#include <algorithm>
#include <set>

#include "dsl/simt_plan.h"
#include "lower/lower_expr.h"
#include "lower/passes.h"

namespace ucut::lower {

namespace {

// The DSL operation of a last-dim reduction (rowwise), or "".
std::string rowwise_reduction(const std::string& op) {
  if (op == "sum" || op == "mean" || op == "max" || op == "min" || op == "argmax" || op == "argmin" ||
      op == "logsumexp")
    return op;
  if (op == "amax") return "max";
  if (op == "amin") return "min";
  return "";
}

Status extra_outputs_dead(const LowerState& s, const problem::Op& op) {
  for (size_t k = 1; k < op.outputs.size(); ++k)
    if (!s.consumers(op.outputs[k]).empty() || s.is_output(op.outputs[k]))
      return s.unsupported(op.id, "its output '" + op.outputs[k] + "' (the indices) is used; a stage writes one output",
                           "use argmax/argmin for the indices");
  return ok_status();
}

// The op dividing x by a per-row value `row` (x / row, a true division, x and what it divides
// the same tensor, neither transposed, its output of x's shape) when it is `row`'s only reader;
// -1 otherwise. The normalizations below fuse it into their rowwise stage.
int row_divide(const LowerState& s, const std::string& x, const std::string& row) {
  const int reader = s.only_reader(row);
  if (reader < 0) return -1;
  const problem::Op& div = s.ops[static_cast<size_t>(reader)];
  if (div.op != "div" || div.inputs.size() != 2 || !div.inputs[0].is_tensor() || !div.inputs[1].is_tensor() ||
      !attr_string(div, "rounding_mode", "").empty())
    return -1;
  const View vx = s.resolve(x), num = s.resolve(div.inputs[0].tensor);
  if (num.base != vx.base || num.transposed || vx.transposed || s.resolve(div.inputs[1].tensor).base != s.resolve(row).base)
    return -1;
  if (s.need(div.outputs.at(0)).shape != s.need(x).shape) return -1;
  return reader;
}

// x / norm(x, p, dim=-1, keepdim=True) with p = 1 or 2 is one rowwise l1/l2_normalize (eps 0:
// plain division, NaN for an all-zero row as in PyTorch) when the divide is the norm's only
// reader and divides the norm's own input. The divide joins the draft: its output is the value.
void fuse_normalize(LowerState& s, const problem::Op& norm, Draft& d) {
  auto p = lower_norm_order(norm);
  if (!p || (*p != 1 && *p != 2) || !attr_bool(norm, "keepdim", false)) return;
  const int div = row_divide(s, norm.inputs.at(0).tensor, norm.outputs.at(0));
  if (div < 0) return;
  d.op = *p == 1 ? "l1_normalize" : "l2_normalize";
  d.value = s.ops[static_cast<size_t>(div)].outputs.at(0);
  s.dead[static_cast<size_t>(div)] = true;
}

// x / mean(|x|, dim=-1, keepdim=True) (KernelBench's L1 norm) is x / (sum |x| / n): one rowwise
// l1_normalize, its value times n (the divide becomes that multiply, fused into the stage's
// epilogue), when |x| is the mean's input and read nowhere else and the divide is the mean's only
// reader and divides x. One read and one write of x where the mean and the divide took two reads
// (run DG: kb1_l1_norm's two stages 8.5 ms at best; kb1_l2_norm's one 6.0 ms). The values differ
// from PyTorch's by the order of one division and one multiply (a few units in the last place).
void fuse_mean_normalize(LowerState& s, const problem::Op& mean, Draft& d) {
  if (mean.op != "mean" || !attr_bool(mean, "keepdim", false) || mean.inputs.size() != 1 ||
      !mean.inputs[0].is_tensor() || mean.outputs.size() != 1)
    return;
  const std::string a = mean.inputs[0].tensor;
  if (s.resolve(a).base != a || s.only_reader(a) != mean.id) return;
  const int w = s.writer(a);
  if (w < 0) return;
  const problem::Op& ab = s.ops[static_cast<size_t>(w)];
  if (ab.op != "abs" || ab.inputs.size() != 1 || !ab.inputs[0].is_tensor() || ab.outputs.size() != 1) return;
  const std::string x = ab.inputs[0].tensor;
  const problem::Tensor& xt = s.need(x);
  if (s.resolve(x).base != x || xt.shape.empty() || s.need(a).shape != xt.shape) return;  // x itself, stored
  const int reader = row_divide(s, x, mean.outputs[0]);
  if (reader < 0) return;
  problem::Op& div = s.ops[static_cast<size_t>(reader)];
  const int64_t n = xt.shape.back();
  d.op = "l1_normalize";
  d.value = s.add_tensor("l1_normalized", xt.dtype, xt.shape);
  s.ops[static_cast<size_t>(mean.id)].inputs[0].tensor = x;  // the stage reads x itself
  s.dead[static_cast<size_t>(w)] = true;                      // |x| is the stage's own
  problem::Operand v, scale;
  v.tensor = d.value;
  scale.scalar = static_cast<double>(n);
  div.op = "mul";
  div.inputs = {v, scale};
  div.attrs = nlohmann::json::object();
}

Result<Draft> anchor_draft(LowerState& s, const problem::Op& op) {
  Draft d;
  d.anchor = op.id;
  d.value = op.outputs.at(0);
  const std::string& n = op.op;
  const problem::Tensor& in = s.need(s.resolve(op.inputs.at(0).tensor).base);
  int rank = static_cast<int>(in.shape.size());
  // a row op over the last dim, or why not
  auto last_dim_row_op = [&](const std::string& hint) -> Result<Draft> {
    auto dims = attr_dims(op, rank);
    if (rank == 0 || (dims && (dims->size() != 1 || (*dims)[0] != rank - 1)))
      return s.unsupported(op.id, n + " over a dimension other than the last; rowwise stages work over the last dimension",
                           hint);
    d.kind = DraftKind::rowwise;
    d.op = n;
    return d;
  };
  if (n == "softmax" || n == "log_softmax") return last_dim_row_op("transpose so the softmax dimension is last");
  if (n == "cosine_similarity" || n == "triplet_margin") {
    // one value per row of inputs of one shape (no broadcasting), over the last dim
    const size_t k = n == "triplet_margin" ? 3 : 2;
    if (op.inputs.size() < k)
      return s.unsupported(op.id, n + " needs " + std::to_string(k) + " tensor inputs");
    for (size_t i = 0; i < k; ++i) {
      if (!op.inputs[i].is_tensor())
        return s.unsupported(op.id, n + "'s operand " + std::to_string(i) + " is not a tensor");
      const problem::Tensor& t = s.need(op.inputs[i].tensor);
      if (t.shape != s.need(op.inputs[0].tensor).shape || t.dtype != s.need(op.inputs[0].tensor).dtype)
        return s.unsupported(op.id, n + " of inputs of different shapes or dtypes (" +
                                        shape_str(s.need(op.inputs[0].tensor).shape) + " and " + shape_str(t.shape) +
                                        "): a rowwise stage does not broadcast",
                             "expand the inputs to one shape in PyTorch");
    }
    return last_dim_row_op("transpose so that dimension is last");
  }
  if (n == "layer_norm" || n == "rms_norm") {
    std::vector<int64_t> ns;
    if (op.attrs.contains("normalized_shape") && op.attrs.at("normalized_shape").is_array())
      for (const auto& v : op.attrs.at("normalized_shape")) ns.push_back(v.get<int64_t>());
    // Normalizing over the last k dims of a stored (untransposed) tensor is normalizing rows of
    // their product: the input, the output and the weight/bias are declared flattened.
    const size_t k = ns.size();
    bool trailing = rank > 0 && k >= 1 && k <= static_cast<size_t>(rank) &&
                    std::equal(ns.begin(), ns.end(), in.shape.end() - static_cast<std::ptrdiff_t>(k));
    if (!trailing)
      return s.unsupported(op.id, n + " over normalized_shape " + shape_str(ns) + " of a " + shape_str(in.shape) +
                                      " input; rowwise stages normalize trailing dimensions",
                           "normalize over the last dimension(s)");
    int64_t row = 1;
    for (auto v : ns) row *= v;
    for (size_t i = 1; i < op.inputs.size(); ++i)
      if (op.inputs[i].is_tensor() && s.need(s.resolve(op.inputs[i].tensor).base).numel() != row)
        return s.unsupported(op.id, "the weight/bias of " + n + " must have one value per normalized element");
    if (k > 1) {
      View iv = s.resolve(op.inputs.at(0).tensor), ov = s.resolve(op.outputs.at(0));
      if (iv.transposed || ov.transposed)
        return s.unsupported(op.id, n + " over several dims of a transposed view needs a copy");
      std::vector<int64_t> flat = {in.numel() / row, row};
      s.decl_shape[iv.base] = flat;
      s.decl_shape[ov.base] = flat;
    }
    d.kind = DraftKind::rowwise;
    d.op = n;
    return d;
  }
  if (n == "group_norm") {
    // rows of (sample, group): channels at dim 1 in `num_groups` equal groups of a stored
    // (untransposed) tensor; weight and bias hold one value per channel
    const int64_t g = static_cast<int64_t>(attr_number(op, "num_groups", 0));
    if (rank < 2 || g < 1 || in.shape[1] % g != 0)
      return s.unsupported(op.id, "group_norm with " + std::to_string(g) + " groups of a " + shape_str(in.shape) +
                                      " input: the groups must split the channels (dim 1) equally");
    if (s.resolve(op.inputs.at(0).tensor).transposed || s.resolve(op.outputs.at(0)).transposed)
      return s.unsupported(op.id, "group_norm of a transposed view needs a copy");
    for (size_t i = 1; i < op.inputs.size(); ++i)
      if (op.inputs[i].is_tensor() && s.need(s.resolve(op.inputs[i].tensor).base).numel() != in.shape[1])
        return s.unsupported(op.id, "the weight/bias of group_norm must have one value per channel");
    d.kind = DraftKind::rowwise;
    d.op = n;
    return d;
  }
  if (s.cls[static_cast<size_t>(op.id)] == OpClass::reduction) {
    auto dims = attr_dims(op, rank);
    bool last = rank > 0 && dims && dims->size() == 1 && (*dims)[0] == rank - 1;
    std::string rop = n == "amax" ? "max" : n == "amin" ? "min" : n;
    // max/min(x, dim) return (values, indices): with the indices used, a reduce of the value
    // and its index (the column kernel), or argmax/argmin when the values are not used
    if ((n == "max" || n == "min") && op.outputs.size() == 2 && dims && dims->size() == 1) {
      auto used = [&](const std::string& t) { return s.is_output(t) || !s.consumers(t).empty(); };
      const bool idx = used(op.outputs[1]), val = used(op.outputs[0]);
      if (idx && !val) {
        d.value = op.outputs[1];
        rop = n == "max" ? "argmax" : "argmin";
      } else if (idx && !last) {
        d.indices = op.outputs[1];
      }
    }
    if (d.indices.empty() && d.value == op.outputs.at(0)) {
      Status st = extra_outputs_dead(s, op);
      if (!st) return st.error();
    }
    if (n == "norm") {
      // p = 2 / 'fro': sqrt(sum x^2); p = 1: sum |x|; p = inf: max |x| (pass_emit writes the
      // prologue and the square root).
      auto p = lower_norm_order(op);
      if (!p)
        return s.unsupported(op.id, "norm of order " + op.attrs.value("p", nlohmann::json(2)).dump() +
                                        " has no reduce form (p = 1, 2, 'fro' and inf do)");
      rop = *p == 1 || *p == 2 ? "sum" : "max";
    }
    if (last) {
      d.kind = DraftKind::rowwise;
      d.op = n == "norm" ? rop : rowwise_reduction(rop);
      if (n == "norm") fuse_normalize(s, op, d);
      if (n == "mean") fuse_mean_normalize(s, op, d);
      return d;
    }
    if (rop != "sum" && rop != "mean" && rop != "max" && rop != "min" && rop != "logsumexp" && rop != "argmax" &&
        rop != "argmin")
      return s.unsupported(op.id, n + " over dims other than the last is not a reduce operation (sum, mean, max, "
                                      "min, logsumexp, argmax, argmin are)");
    if (rop == "logsumexp" || rop == "argmax" || rop == "argmin" || !d.indices.empty()) {
      // the column kernel: the last dim kept; the indices run along one reduced dim
      std::vector<int> red;
      if (dims) red = *dims;
      else for (int i = 0; i < rank; ++i) red.push_back(i);
      if (dsl::simt_reduce_geometry(in.shape, red).inner)
        return s.unsupported(op.id, n + " over dims " + shape_str(std::vector<int64_t>(red.begin(), red.end())) +
                                        " of " + shape_str(in.shape) +
                                        " reduces the last dimension together with others; the reduce " + rop +
                                        " keeps the last dimension (a column reduction)");
      if (rop != "logsumexp" && red.size() != 1)
        return s.unsupported(op.id, n + " over several dims: indices run along one dimension");
    }
    d.kind = DraftKind::reduce;
    d.op = rop;
    return d;
  }
  if (s.cls[static_cast<size_t>(op.id)] == OpClass::loss) {
    static const std::map<std::string, std::string> names = {
        {"mse_loss", "mse"},     {"l1_loss", "l1"},         {"smooth_l1_loss", "smooth_l1"},
        {"huber_loss", "huber"}, {"kl_div", "kl_div"},      {"cross_entropy", "cross_entropy"},
        {"hinge_loss", "hinge"}};  // hinge_loss: written out (pass_expand_ops)
    std::string red = attr_string(op, "reduction", "mean");
    if (red != "mean" && red != "sum" && !(n == "kl_div" && red == "batchmean"))
      return s.unsupported(op.id, "reduction='" + red + "': a reduce loss produces one value (mean or sum)");
    if (n == "kl_div" && attr_bool(op, "log_target", false))
      return s.unsupported(op.id, "kl_div with log_target=True is not the reduce kl_div");
    // PyTorch's hinge_embedding_loss is x where y = 1 and max(0, margin - x) where y = -1: not
    // the language's hinge, max(0, 1 - p t) (the SVM hinge, which `mean(clamp(1 - p * t,
    // min=0))` lowers to), so it has no reduce form
    if (n == "hinge_embedding_loss")
      return s.unsupported(op.id, "hinge_embedding_loss (x where y = 1, max(0, margin - x) where y = -1) is not the "
                                  "reduce hinge, max(0, 1 - p t)",
                           "write the loss as torch.mean(torch.clamp(1 - p * t, min=0)) if that is the one meant");
    if (n == "cross_entropy" && (attr_number(op, "label_smoothing", 0) != 0 || op.inputs.size() > 2))
      return s.unsupported(op.id, "cross_entropy with weights or label smoothing");
    if (op.inputs.size() < 2 || !op.inputs[1].is_tensor())
      return s.unsupported(op.id, "a loss takes an input and a target tensor");
    d.kind = DraftKind::reduce;
    d.op = names.at(n);
    return d;
  }
  if (n == "cumsum" || n == "cumprod") {
    d.kind = DraftKind::scan;
    d.op = n;
    return d;
  }
  return s.unsupported(op.id, "no stage kind for this op");
}

// The chain of one-input, shape-keeping elementwise ops from a stored problem input/parameter (or
// a view of one declared in the shape read) to the anchor's input (each step the only reader of
// the one before): the draft's prologue.
void absorb_prologue(LowerState& s, Draft& d) {
  if (d.anchor < 0 || (d.kind != DraftKind::rowwise && d.kind != DraftKind::reduce)) return;
  const problem::Op& anchor = s.ops[static_cast<size_t>(d.anchor)];
  if (anchor.op == "norm" || anchor.op == "cross_entropy" || anchor.op == "cosine_similarity" ||
      anchor.op == "triplet_margin" || anchor.inputs.empty() || !anchor.inputs[0].is_tensor())
    return;  // (the ops over several inputs take no prologue)
  std::string cur = anchor.inputs[0].tensor;
  for (size_t k = 1; k < anchor.inputs.size(); ++k)  // e.g. mse(t, t): the prologue maps input 0 only
    if (anchor.inputs[k].is_tensor() && s.resolve(anchor.inputs[k].tensor).base == s.resolve(cur).base) return;
  const auto shape = s.need(cur).shape;
  const auto dtype = s.need(cur).dtype;
  int reader = d.anchor;
  std::vector<int> chain;
  // where the prologue may read other tensors: rowwise stages whose rows are the input's (not
  // group_norm's (sample, group) rows), the input declared as the op sees it
  const bool reads_ok = d.kind == DraftKind::rowwise && d.op != "group_norm" &&
                        lower_decl_shape(s, s.resolve(cur).base) == shape;
  const BlockCtx ctx = lower_prologue_ctx(shape);
  while (true) {
    if (s.resolve(cur).base != cur || s.only_reader(cur) != reader) break;
    const int p = s.writer(cur);
    if (p < 0) break;
    const problem::Op& op = s.ops[static_cast<size_t>(p)];
    std::string why;
    if (s.dead[static_cast<size_t>(p)] || s.cls[static_cast<size_t>(p)] != OpClass::elementwise || op.op == "to" ||
        op.outputs.size() != 1 || !lower_expr_supported(op, why) || (lower_expr_needs_index(op) && !draft_has_position(d)))
      break;
    std::set<std::string> ins;  // one tensor, maybe read twice (x * x)
    bool absent = false;
    for (const auto& o : op.inputs) {
      if (o.is_tensor()) ins.insert(o.tensor);
      absent = absent || o.is_absent();  // needs a value the chain does not have
    }
    if (absent || ins.empty()) break;
    bool view = false;  // a DSL view's copy: its elements are not the viewed tensor's
    for (const auto& t : ins) view = view || s.strided.count(t);
    if (view) break;
    // a rowwise prologue also reads other tensors (per row, per column or in full): the chain
    // goes on through the first operand of its shape and dtype, the others are loads
    std::string in;  // in operand order; one an elementwise op computes for this op alone first
    for (int pass = 0; pass < 2 && in.empty(); ++pass)
      for (const auto& o : op.inputs) {
        if (!in.empty() || !o.is_tensor() || s.need(o.tensor).shape != shape || s.need(o.tensor).dtype != dtype)
          continue;
        const int w = s.writer(o.tensor);
        if (pass == 1 || (w >= 0 && s.cls[static_cast<size_t>(w)] == OpClass::elementwise && s.only_reader(o.tensor) == p))
          in = o.tensor;
      }
    if (in.empty()) break;
    if (ins.size() > 1) {
      if (!reads_ok) break;
      bool loadable = true;
      for (const auto& t : ins) {
        if (t == in) continue;
        const problem::Tensor& b = s.need(s.resolve(t).base);
        const bool stored = b.kind == problem::TensorKind::input || b.kind == problem::TensorKind::parameter ||
                            b.kind == problem::TensorKind::buffer || b.kind == problem::TensorKind::constant;
        std::string why;
        loadable = loadable && stored && s.resolve(t).base != s.resolve(in).base && lower_load_plan(s, t, ctx, why);
      }
      if (!loadable) break;
    }
    if (s.need(in).shape != shape || s.need(in).dtype != dtype) break;
    chain.push_back(p);
    reader = p;
    cur = in;
  }
  // the source (`cur`, the first op's input): a problem input or parameter, stored as it is
  // (no view, no producer); a chain from a tensor some op produces is left to that op's
  // epilogue, except its ops that read the element's position (a GEMM epilogue reads positions
  // from vectors, a prologue has them): the prologue keeps the chain up to the last of them and
  // reads the tensor before it
  if (!chain.empty() && s.producer(cur) >= 0) {
    size_t keep = 0;
    for (size_t k = 0; k < chain.size(); ++k)
      if (lower_expr_needs_index(s.ops[static_cast<size_t>(chain[k])])) keep = k + 1;
    chain.resize(keep);
    if (!chain.empty())  // the one tensor the first kept op reads
      for (const auto& o : s.ops[static_cast<size_t>(chain.back())].inputs)
        if (o.is_tensor()) cur = o.tensor;
  }
  if (chain.empty()) return;
  // a reshape of a stored tensor declared in the shape the chain reads (split_long_layer_norm's
  // [R, S, C] view of x) reads that tensor itself
  const View v = s.resolve(cur);
  if (v.base != cur && (v.transposed || lower_decl_shape(s, v.base) != s.need(cur).shape)) return;
  d.prologue_src = v.base;
  d.prologue_ops.assign(chain.rbegin(), chain.rend());
}

// A window draft for a pooling op or a depthwise conv (pass_match_conv): the stage reads its input
// as stored ([N, C, spatial...], 1 to 3 spatial dims, every window list one entry per dim); what
// it cannot take (an unbatched input, a read through a view) runs in a torch stage with the reason.
Result<Draft> window_draft(const LowerState& s, const problem::Op& op) {
  if (op.inputs.empty() || !op.inputs[0].is_tensor() || op.outputs.size() != 1)
    return s.unsupported(op.id, "a window op reads one input tensor and writes one output");
  const std::string& in = op.inputs[0].tensor;
  const View v = s.resolve(in);
  const auto& seen = s.need(in).shape;
  if (v.transposed || s.strided.count(in) || lower_decl_shape(s, v.base) != seen)
    return s.unsupported(op.id, "reads '" + in + "' through a view; a window stage reads its input as stored",
                         "make the input contiguous in PyTorch");
  const size_t pooled = op.op == "adaptive_avg_pool" ? op.attrs.value("output_size", nlohmann::json::array()).size()
                        : op.op == "depthwise_conv"  ? seen.size() - 2
                                                     : op.attrs.value("kernel_size", nlohmann::json::array()).size();
  if (pooled < 1 || pooled > 3 || seen.size() != pooled + 2)
    return s.unsupported(op.id, "pools " + std::to_string(pooled) + " dims of '" + in + "' " + shape_str(seen) +
                                    "; a window stage reads [N, C, spatial...] with 1 to 3 spatial dims",
                         "add the batch dim in PyTorch (x.unsqueeze(0)) for an unbatched input");
  Draft d;
  d.kind = DraftKind::window;
  d.anchor = op.id;
  d.value = op.outputs[0];
  return d;
}

int first_op(const Draft& d) {
  if (d.anchor >= 0) return d.anchor;
  return d.ops.empty() ? 1 << 30 : d.ops.front();
}

}  // namespace

Status pass_simt_stages(LowerState& s) {
  for (const auto& op : s.ops) {
    size_t i = static_cast<size_t>(op.id);
    if (s.dead[i]) continue;
    OpClass c = s.cls[i];
    if (c == OpClass::torch) {  // PyTorch runs it: a stage of its own, nothing fuses into it
      Draft d;
      d.kind = DraftKind::torch;
      d.anchor = op.id;
      s.drafts.push_back(std::move(d));
    } else if (c == OpClass::attention) {  // no prologue, no epilogue: the kernel is the whole stage
      Draft d;
      d.kind = DraftKind::attention;
      d.anchor = op.id;
      d.value = op.outputs.at(0);
      s.drafts.push_back(std::move(d));
    } else if (c == OpClass::window) {  // pooling, depthwise convs: a window stage, its epilogue fused later
      auto d = window_draft(s, op);
      if (!d) return d.error();
      s.drafts.push_back(std::move(*d));
    } else if (c == OpClass::row_op || c == OpClass::reduction || c == OpClass::loss || c == OpClass::scan) {
      auto d = anchor_draft(s, op);
      if (!d) return d.error();
      s.drafts.push_back(std::move(*d));
    } else if (c == OpClass::elementwise) {
      if (op.outputs.size() != 1) return s.unsupported(op.id, "an elementwise op has one output");
      Draft d;
      d.kind = DraftKind::elementwise;
      d.ops = {op.id};
      s.drafts.push_back(std::move(d));
    }
  }
  std::set<int> absorbed;
  for (auto& d : s.drafts) {
    absorb_prologue(s, d);
    absorbed.insert(d.prologue_ops.begin(), d.prologue_ops.end());
  }
  std::erase_if(s.drafts, [&](const Draft& d) {
    return d.kind == DraftKind::elementwise && d.ops.size() == 1 &&
           (absorbed.count(d.ops.front()) || s.dead[static_cast<size_t>(d.ops.front())]);  // or fused away
  });
  std::stable_sort(s.drafts.begin(), s.drafts.end(),
                   [](const Draft& a, const Draft& b) { return first_op(a) < first_op(b); });
  return ok_status();
}

}  // namespace ucut::lower
