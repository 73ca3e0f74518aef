// pass_match_conv: PyTorch's conv1d/2d/3d (groups = 1, optional bias) and the elementwise ops after
// it that one value per channel can express, on NCHW tensors, become
//   - a pointwise conv (1x1.., stride 1, padding 0): a (batched) GEMM in NCHW itself, per sample
//     W[K, C] @ X[C, H*W] -> Y[K, H*W], no layout change; for a batch N > 1 the weight is first
//     copied N times ([N, K, C], a view at batch stride 0: the gemm stage shares a 2-D B across the
//     batch, not a 2-D A); the bias and the per-channel ops are the GEMM epilogue's v[row];
//   - any other conv: copies of x (NCHW -> NHWC) and of the weight (KCRS -> KRSC) through views
//     with permuted strides, each an elementwise stage run on every call (the weight's copy is
//     K*C*R*S elements, small beside the activations; a prepared parameter would need the kernel
//     library to own a relaid-out copy of a parameter, which it does not), the `conv` op (a conv
//     draft; bias and the per-channel ops are its epilogue's v[col]) writing NHWC, then one copy
//     back to NCHW of the chain's last value, under the name the problem gives it;
//   - a transposed conv of stride 1: the conv of the flipped weight; of stride > 1, and any grouped
//     conv (1 < groups < C), by slices: one conv per output phase and group writing slices of one
//     tensor, read back by one copy (by_slices).
// The epilogue chain: from the conv's output, while the value has one reader and is not returned,
// an elementwise op of the output's shape whose other operands are numbers or parameters holding one
// value per channel ([K, 1, ..], [1, K, 1, ..], eval batch_norm's statistics). Ops after the chain
// (a residual add, anything else) read the NCHW copy and join its stage (pass_fuse_epilogue), so a
// residual costs no extra pass over memory. A reduction over the channels alone that is the chain's
// only reader reads the channels-last result's rows instead, and no copy back is made (channel_rows).
// A depthwise conv (groups = C_in, any channel multiplier) becomes a window stage on the NCHW
// tensors (depthwise(): the op renamed depthwise_conv, its bias in the stage, the elementwise ops
// after it fused into the window's epilogue by pass_fuse_epilogue).
// A conv refused here (1 < groups < C, a padding string, the exact policy on f32 data, a shape outside
// the conv stage's rules: channel alignment, the im2col bounds) names the reason and runs in a torch
// stage (lower.cpp's retry). Under the bf16 policy on f32 data the two layout copies write bf16 and the
// conv runs bf16. Runs after pass_strided_copies, before pass_check_ops; the conv drafts are made
// here, the GEMMs by pass_match_gemm. Golden tests: tests/golden/lower/conv2d_bias_relu.json,
// conv3d_mish_tanh.json, conv1d.json, conv_pointwise.json, conv_batchnorm_scale.json,
// conv_grouped.json, conv_transpose2d_grouped_s2.json, depthwise_conv2d.json, conv2d_bf16_policy.json, conv_channel_min.json,
// conv_channel_logsumexp.json, conv_transpose2d_strided.json, conv_transpose1d_s3.json,
// conv_transpose3d_s2.json, conv_transpose2d_dilated_unreached.json.
#include <algorithm>
#include <numeric>
#include <optional>
#include <set>

#include "dsl/conv_rules.h"
#include "lower/lower_expr.h"
#include "lower/passes.h"

namespace ucut::lower {

namespace {

bool is_transposed(const std::string& n) {
  return n == "conv_transpose1d" || n == "conv_transpose2d" || n == "conv_transpose3d";
}

// The most channels a padded layout copy selects among (one view each, read per element): a
// larger C off the alignment stays refused (conv_align_c) rather than copied that slowly.
constexpr int64_t kMaxPaddedChannels = 16;
// A grouped conv runs as one conv stage per group (by_slices): at most this many.
constexpr int64_t kMaxSliceGroups = 16;

bool is_conv(const std::string& n) { return n == "conv1d" || n == "conv2d" || n == "conv3d" || is_transposed(n); }

problem::Operand tensor_operand(const std::string& t) { return problem::Operand{t, std::nullopt}; }

// An integer list attribute with one entry per spatial dim (an integer repeats); nullopt otherwise.
std::optional<std::vector<int64_t>> spatial_attr(const problem::Op& op, const char* key, size_t rank, int64_t def) {
  if (!op.attrs.is_object() || !op.attrs.contains(key) || op.attrs.at(key).is_null())
    return std::vector<int64_t>(rank, def);
  const auto& v = op.attrs.at(key);
  if (v.is_number_integer()) return std::vector<int64_t>(rank, v.get<int64_t>());
  if (!v.is_array()) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& e : v) {
    if (!e.is_number_integer()) return std::nullopt;
    out.push_back(e.get<int64_t>());
  }
  if (out.size() == 1) out.assign(rank, out[0]);
  if (out.size() != rank) return std::nullopt;
  return out;
}

// The strides of a contiguous tensor of `shape` read with its dim 1 moved last (NC.. -> N..C).
std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& shape) {
  const auto st = lower_contiguous_strides(shape);
  std::vector<int64_t> out{st[0]};
  out.insert(out.end(), st.begin() + 2, st.end());
  out.push_back(st[1]);
  return out;
}

std::vector<int64_t> channels_last_shape(const std::vector<int64_t>& shape) {
  std::vector<int64_t> out{shape[0]};
  out.insert(out.end(), shape.begin() + 2, shape.end());
  out.push_back(shape[1]);
  return out;
}

class ConvMatcher {
 public:
  explicit ConvMatcher(LowerState& s) : s_(s) {}

  Status run() {
    std::vector<int> convs;
    for (const auto& op : s_.ops)
      if (!s_.dead[static_cast<size_t>(op.id)] && s_.cls[static_cast<size_t>(op.id)] != OpClass::torch &&
          is_conv(op.op))
        convs.push_back(op.id);
    // later convs first: replace_op moves the ids after the replaced op
    for (auto it = convs.rbegin(); it != convs.rend(); ++it)
      if (Status st = lower_one(*it); !st) return st;
    s_.mark_dead_ops(false);
    for (const auto& op : s_.ops)
      if (!s_.dead[static_cast<size_t>(op.id)] && s_.cls[static_cast<size_t>(op.id)] == OpClass::conv) {
        Draft d;
        d.kind = DraftKind::conv;
        d.anchor = op.id;
        d.value = op.outputs.at(0);
        s_.drafts.push_back(std::move(d));
      }
    return ok_status();
  }

 private:
  LowerState& s_;

  // The stored tensor an operand reads as it is (no transposed or reshaped alias), or "".
  std::string plain(const std::string& t) const {
    const View v = s_.resolve(t);
    if (v.transposed || s_.strided.count(t)) return "";
    if (lower_decl_shape(s_, v.base) != s_.need(t).shape) return "";
    return v.base;
  }

  // Whether `in` holds one value per channel of an NC.. value of rank `rank`, read by chain ops only.
  bool per_channel(const std::string& in, int64_t k, size_t rank, const std::vector<int>& chain_ops) const {
    const View v = s_.resolve(in);
    if (v.transposed || s_.strided.count(in)) return false;
    const problem::Tensor& base = s_.need(v.base);
    if (base.numel() != k || s_.is_output(v.base)) return false;
    if (base.kind != problem::TensorKind::parameter && base.kind != problem::TensorKind::buffer &&
        base.kind != problem::TensorKind::input)
      return false;
    const auto& seen = s_.need(in).shape;
    if (seen.size() > rank) return false;
    // [.., K, 1, .., 1] with K at dim 1 of the value (NumPy broadcasting aligns the last dims)
    if (seen.size() + 1 < rank) return false;
    const size_t at = seen.size() + 1 - rank;
    for (size_t i = 0; i < seen.size(); ++i)
      if (seen[i] != (i == at ? k : 1)) return false;
    for (int c : s_.consumers(v.base))
      if (std::find(chain_ops.begin(), chain_ops.end(), c) == chain_ops.end()) return false;
    auto it = s_.decl_shape.find(v.base);
    return it == s_.decl_shape.end() || shape_numel(it->second) == k;
  }

  // The elementwise ops after the conv (output `y`, [N, K, ..]) an epilogue computes, in order.
  std::vector<int> epilogue_chain(const std::string& y, int64_t k) const {
    std::vector<int> chain;
    std::string cur = y;
    const auto& shape = s_.need(y).shape;
    for (;;) {
      const int r = s_.only_reader(cur);
      if (r < 0) break;
      const problem::Op& op = s_.ops[static_cast<size_t>(r)];
      std::string why;
      if (s_.cls[static_cast<size_t>(r)] != OpClass::elementwise || op.op == "strided_copy" || op.outputs.size() != 1 ||
          lower_expr_needs_index(op) || !lower_expr_supported(op, why) || s_.need(op.outputs[0]).shape != shape ||
          s_.need(op.outputs[0]).dtype != s_.need(y).dtype)
        break;
      std::vector<int> with = chain;
      with.push_back(r);
      bool ok = true, reads_cur = false;
      for (const auto& in : op.inputs) {
        if (!in.is_tensor()) continue;
        if (in.tensor == cur) {
          reads_cur = true;
          continue;
        }
        const problem::Tensor& b = s_.need(s_.resolve(in.tensor).base);
        if (b.kind == problem::TensorKind::constant && b.value && b.numel() == 1) continue;
        ok = ok && per_channel(in.tensor, k, shape.size(), with);
      }
      if (!ok || !reads_cur) break;
      chain.push_back(r);
      cur = op.outputs[0];
    }
    return chain;
  }

  // A view of `base` and the op copying it into a new tensor (of dtype `to`, or base's); returns the
  // copy's name.
  std::string copy_through_view(const std::string& base, const std::string& stem, const Strided& v,
                                std::vector<problem::Op>& ops, int line,
                                std::optional<problem::DType> to = std::nullopt) {
    const problem::Tensor& t = s_.need(base);
    const problem::DType dt = t.dtype;
    const std::string view = s_.add_tensor(stem + "_v", dt, v.shape);
    s_.strided[view] = v;
    s_.views[view] = View{base, false};
    const std::string out = s_.add_tensor(stem, to.value_or(dt), v.shape);
    problem::Op c;
    c.op = "strided_copy";
    c.inputs = {tensor_operand(view)};
    c.outputs = {out};
    c.line = line;
    ops.push_back(std::move(c));
    return out;
  }

  // A copy of `base` read through `v` (channels last: the view's last dim is the channels) into a
  // new tensor of `cp` >= the view's C channels, channels C.. cp - 1 zeros (the conv stage's
  // channel alignment; zero taps add nothing). Padded, it reads one view per channel, each
  // broadcast along the channel dim (stride 0), and selects by the element's channel index
  // (`channel_pad`, on `col`), so every read stays inside the tensor (a view reading past C
  // would not). The copy is of dtype `to` (the bf16 policy converts the operands here).
  std::string relayout(const std::string& base, const std::string& stem, const Strided& v, int64_t cp,
                       std::vector<problem::Op>& ops, int line, problem::DType to) {
    const int64_t c = v.shape.back(), cs = v.strides.back();
    if (c == cp) return copy_through_view(base, stem, v, ops, line, to);
    const problem::DType dt = s_.need(base).dtype;
    problem::Op pad;
    pad.op = "channel_pad";
    for (int64_t j = 0; j < c; ++j) {
      Strided vj = v;
      vj.shape.back() = cp;
      vj.strides.back() = 0;
      vj.offset += j * cs;
      const std::string view = s_.add_tensor(stem + "_c" + std::to_string(j) + "_v", dt, vj.shape);
      s_.strided[view] = vj;
      s_.views[view] = View{base, false};
      pad.inputs.push_back(tensor_operand(view));
    }
    std::vector<int64_t> shape = v.shape;
    shape.back() = cp;
    pad.outputs = {s_.add_tensor(stem, to, shape)};
    pad.line = line;
    ops.push_back(pad);
    return pad.outputs[0];
  }

  // The conv operands' layout copies: their dtype, the data's or bf16 under the bf16 policy on f32
  // data (converted in the copies, which are made anyway: no pass of their own, and half the bytes
  // written), and their channels, `c` or, off the conv stage's 16-byte channel alignment (C = 3),
  // padded with zero channels up to it.
  struct Operands {
    bool to_bf16;
    problem::DType dtype;
    int64_t channels;
  };
  Operands operands(problem::DType data, int64_t c) const {
    const bool to_bf16 = s_.options.policy == sol::Policy::bf16 && data == problem::DType::f32;
    const problem::DType od = to_bf16 ? problem::DType::bf16 : data;
    const int64_t align = dsl::conv_align(od == problem::DType::f32 ? dsl::DType::f32 : dsl::DType::bf16);
    return {to_bf16, od, c % align == 0 || c > kMaxPaddedChannels ? c : (c + align - 1) / align * align};
  }

  // A reduction over the channels alone (dim 1: sum, mean, max, min, amax, amin, logsumexp; a max/min's
  // indices unread), the only reader of the conv chain's NCHW result `last`, reads the channels-last
  // `value` instead, over its last dim: a rowwise stage over K contiguous values, and no copy back to
  // NCHW at all. Without keepdim the result's shape is the same; with it, the reduction writes
  // [N, spatial.., 1] into the [N, 1, spatial..] tensor's memory (the same element order; a reshape
  // alias, as the pointwise path's product). Returns whether it rewrote the reduction.
  bool channel_rows(const std::string& last, const std::string& value, int rank, int line,
                    std::map<int, std::vector<problem::Op>>& replace) {
    if (s_.is_output(last)) return false;
    const std::vector<int> readers = s_.consumers(last);
    if (readers.size() != 1 || replace.count(readers[0])) return false;
    const int rid = readers[0];
    problem::Op r = s_.ops[static_cast<size_t>(rid)];
    static const std::set<std::string> ops = {"sum", "mean", "max", "min", "amax", "amin", "logsumexp"};
    if (s_.cls[static_cast<size_t>(rid)] != OpClass::reduction || !ops.count(r.op) || r.inputs.empty() ||
        !r.inputs[0].is_tensor() || r.inputs[0].tensor != last || r.outputs.empty() || r.outputs.size() > 2)
      return false;
    for (size_t i = 1; i < r.inputs.size(); ++i)
      if (r.inputs[i].is_tensor()) return false;
    const auto dims = attr_dims(r, rank);
    if (!dims || *dims != std::vector<int>{1}) return false;
    if (r.outputs.size() == 2 && (s_.is_output(r.outputs[1]) || !s_.consumers(r.outputs[1]).empty())) return false;
    r.inputs[0] = tensor_operand(value);
    r.attrs.erase("dim");
    r.attrs["dims"] = std::vector<int>{rank - 1};
    std::vector<problem::Op> now;
    if (attr_bool(r, "keepdim", false)) {
      std::vector<int64_t> rows = s_.need(value).shape;
      rows.back() = 1;
      const std::string v = r.outputs[0];
      const std::string rv = s_.add_tensor(v + "_rows", s_.need(v).dtype, rows);
      s_.views[rv] = View{v, false};
      r.outputs[0] = rv;
      if (r.outputs.size() == 2) r.outputs[1] = s_.add_tensor(r.outputs[1] + "_rows", s_.need(r.outputs[1]).dtype, rows);
      problem::Op rs;
      rs.op = "reshape";
      rs.inputs = {tensor_operand(rv)};
      rs.outputs = {v};
      rs.attrs = {{"shape", s_.need(v).shape}};
      rs.line = line;
      now = {r, rs};
    } else {
      now = {r};
    }
    replace[rid] = std::move(now);
    return true;
  }

  // A [len] or [len, 1] alias of a per-channel tensor, the base declared [len].
  std::string channel_vector(const std::string& in, int64_t len, bool as_rows) {
    const View v = s_.resolve(in);
    s_.decl_shape[v.base] = {len};
    std::vector<int64_t> seen = as_rows ? std::vector<int64_t>{len, 1} : std::vector<int64_t>{len};
    const std::string a = s_.add_tensor(v.base + (as_rows ? "_rows" : "_cols"), s_.need(v.base).dtype, seen);
    s_.views[a] = View{v.base, false};
    return a;
  }

  // The chain's ops on `value` (the conv's result in the stage's layout, shape `shape`), each
  // writing a new tensor of that shape; returns the last value's name.
  std::string rewrite_chain(const std::vector<int>& chain, const std::string& y, std::string value,
                            const std::vector<int64_t>& shape, int64_t k, bool as_rows,
                            std::map<int, std::vector<problem::Op>>& replace) {
    std::string cur = y;
    for (int id : chain) {
      problem::Op op = s_.ops[static_cast<size_t>(id)];
      for (auto& in : op.inputs) {
        if (!in.is_tensor()) continue;
        if (in.tensor == cur) in.tensor = value;
        else if (s_.need(s_.resolve(in.tensor).base).kind != problem::TensorKind::constant)
          in.tensor = channel_vector(in.tensor, k, as_rows);
      }
      cur = op.outputs[0];
      value = s_.add_tensor(cur + (as_rows ? "_g" : "_nhwc"), s_.need(cur).dtype, shape);
      op.outputs = {value};
      replace[id].push_back(std::move(op));
    }
    return value;
  }

  Status lower_one(int id) {
    const problem::Op op = s_.ops[static_cast<size_t>(id)];
    if (op.inputs.size() < 2 || !op.inputs[0].is_tensor() || !op.inputs[1].is_tensor() || op.outputs.size() != 1)
      return s_.unsupported(id, "a conv reads an input and a weight tensor and writes one output");
    const std::string x = plain(op.inputs[0].tensor), w = plain(op.inputs[1].tensor);
    const std::string bias = op.inputs.size() > 2 && op.inputs[2].is_tensor() ? plain(op.inputs[2].tensor) : "";
    if (x.empty() || w.empty() || (op.inputs.size() > 2 && op.inputs[2].is_tensor() && bias.empty()))
      return s_.unsupported(id, "a conv's operands are read as stored here, not through a reshape or transpose",
                            "make the operands contiguous tensors of their own in PyTorch");
    const auto xs = s_.need(x).shape, ws = s_.need(w).shape, ys = s_.need(op.outputs[0]).shape;
    const size_t rank = xs.size() >= 3 ? xs.size() - 2 : 0;
    if (rank < 1 || rank > 3 || ws.size() != xs.size() || ys.size() != xs.size())
      return s_.unsupported(id, "a conv without a batch dimension ([C, ..] input) is not lowered",
                            "unsqueeze the batch in PyTorch");
    const bool transposed = is_transposed(op.op);
    const int64_t groups = static_cast<int64_t>(attr_number(op, "groups", 1));
    if (depthwise_route(op, xs)) return depthwise(id, ws, ys);
    if (groups < 1 || xs[1] % groups != 0 || (transposed ? ws[0] != xs[1] : ws[1] * groups != xs[1]))
      return s_.unsupported(id, "groups = " + std::to_string(groups) + " does not split the " + std::to_string(xs[1]) +
                                " input channels as the weight " + shape_str(ws) + " says");
    auto stride = spatial_attr(op, "stride", rank, 1), pad = spatial_attr(op, "padding", rank, 0),
         dil = spatial_attr(op, "dilation", rank, 1);
    if (!stride || !pad || !dil)
      return s_.unsupported(id, "a padding other than numbers ('same', 'valid') is not lowered",
                            "give the padding as integers in the Model");
    const int64_t n = xs[0], c = xs[1], k = transposed ? ws[1] : ws[0];
    // a transposed conv (weight [C, K, ..]) of stride 1 is the conv of the flipped, in/out-swapped
    // weight with padding dilation·(f - 1) - padding (output_padding on the high side)
    std::vector<int64_t> pad_hi = *pad;
    if (groups != 1 || (transposed && std::any_of(stride->begin(), stride->end(), [](int64_t v) { return v != 1; })))
      return by_slices(id, x, w, bias, xs, ws, ys, *stride, *pad, *dil, groups, transposed);
    if (transposed) {
      const auto out_pad = spatial_attr(op, "output_padding", rank, 0);
      for (size_t i = 0; i < rank; ++i) {
        const int64_t lo = (*dil)[i] * (ws[2 + i] - 1) - (*pad)[i];
        if (lo < 0 || !out_pad)
          return s_.unsupported(id, "a transposed conv whose padding exceeds dilation * (kernel - 1) crops its input: "
                                    "not lowered; it runs in a torch stage");
        (*pad)[i] = lo;
        pad_hi[i] = lo + (*out_pad)[i];
      }
    }
    bool pointwise = !transposed;
    for (size_t i = 0; i < rank; ++i)
      pointwise = pointwise && ws[2 + i] == 1 && (*stride)[i] == 1 && (*pad)[i] == 0;
    const problem::DType dt = s_.need(x).dtype;
    std::vector<int> chain = epilogue_chain(op.outputs[0], k);
    std::map<int, std::vector<problem::Op>> replace;  // op id -> what replaces it
    const std::string last = chain.empty() ? op.outputs[0] : s_.ops[static_cast<size_t>(chain.back())].outputs[0];
    if (pointwise && gemm_readable(x, last, id)) {
      // per sample W[K, C] @ X[C, S] = Y[K, S], S the spatial size, all NCHW
      const int64_t sp = shape_numel(xs) / (n * c);
      std::vector<problem::Op> pre;
      std::string a;
      if (n > 1) {  // the weight N times over: the gemm stage batches A with B
        a = copy_through_view(w, w + "_batched", Strided{w, {n, k, c}, {0, c, 1}, 0}, pre, op.line);
      } else {
        a = s_.add_tensor(w + "_kc", dt, {k, c});
        s_.views[a] = View{w, false};
      }
      const std::vector<int64_t> cs = n > 1 ? std::vector<int64_t>{n, c, sp} : std::vector<int64_t>{c, sp};
      const std::string b = s_.add_tensor(x + "_cs", dt, cs);
      if (s_.need(x).kind == problem::TensorKind::intermediate) {
        // x is a stage's result (a depthwise conv's, in a depthwise-separable block): it is stored
        // as [N, C, S], which its stage writes whole through an NCHW view (docs/language.md, views)
        s_.strided[x] = Strided{b, xs, lower_contiguous_strides(xs), 0};
      } else {
        s_.views[b] = View{x, false};
      }
      const std::vector<int64_t> shape = n > 1 ? std::vector<int64_t>{n, k, sp} : std::vector<int64_t>{k, sp};
      std::string value = s_.add_tensor(op.outputs[0] + "_g", s_.need(op.outputs[0]).dtype, shape);
      problem::Op mm;
      mm.op = "matmul";
      mm.inputs = {tensor_operand(a), tensor_operand(b)};
      mm.outputs = {value};
      mm.line = op.line;
      pre.push_back(mm);
      if (!bias.empty()) {  // the bias: one value per row of each product
        problem::Op add;
        add.op = "add";
        const std::string biased = s_.add_tensor(op.outputs[0] + "_biased", s_.need(op.outputs[0]).dtype, shape);
        add.inputs = {tensor_operand(value), tensor_operand(channel_vector(bias, k, true))};
        add.outputs = {biased};
        add.line = op.line;
        pre.push_back(add);
        value = biased;
      }
      replace[id] = pre;
      const std::string out = rewrite_chain(chain, op.outputs[0], value, shape, k, true, replace);
      // the product's rows are the NCHW output's: its last value is the problem's tensor, declared
      // so, through a reshape (pass_views' `return y.view(..)` alias, which keeps the writer live)
      s_.views[out] = View{last, false};
      problem::Op rs;
      rs.op = "reshape";
      rs.inputs = {tensor_operand(out)};
      rs.outputs = {last};
      rs.attrs = {{"shape", s_.need(last).shape}};
      rs.line = op.line;
      replace[chain.empty() ? id : chain.back()].push_back(std::move(rs));
      s_.notes.push_back(s_.op_label(id) + ": a pointwise conv is a " + (n > 1 ? "batched " : "") +
                         "GEMM on the NCHW tensors (W[K, C] @ X[C, H*W] per sample" +
                         (n > 1 ? "; the weight copied once per sample, the gemm stage shares only a 2-D B" : "") + ")");
    } else {
      if (s_.options.policy == sol::Policy::exact && dt == problem::DType::f32)
        return s_.unsupported(id, "the exact policy needs fp32-faithful math, and the sm90 conv runs TF32 at best "
                                  "(CUTLASS 4.2 has no 3xTF32 or FP32 convolution for sm90); it runs in a torch stage",
                              "use the tf32 policy to run it as a conv stage");
      const auto [to_bf16, od, cp] = operands(dt, c);
      std::vector<int64_t> wk = ws;  // the fprop weight's KCRS shape
      if (transposed) std::swap(wk[0], wk[1]);
      std::vector<int64_t> xp = xs, wp = wk;
      xp[1] = wp[1] = cp;
      if (Status st = check_rules(id, xp, wp, ys, *stride, *pad, pad_hi, *dil, od, dt, !bias.empty(), chain); !st)
        return st;
      std::vector<problem::Op> pre;
      const std::string xh =
          relayout(x, x + "_nhwc", Strided{x, channels_last_shape(xs), channels_last_strides(xs), 0}, cp, pre, op.line, od);
      Strided wv{w, channels_last_shape(ws), channels_last_strides(ws), 0};
      if (transposed) {
        // KRSC of the flipped weight: [C, K, R, S] read at (k, R-1-r, S-1-s, c), negative strides
        // from the last tap
        const auto st = lower_contiguous_strides(ws);
        wv.shape = channels_last_shape(wk);
        wv.strides = {st[1]};
        for (size_t i = 0; i < rank; ++i) {
          wv.strides.push_back(-st[2 + i]);
          wv.offset += (ws[2 + i] - 1) * st[2 + i];
        }
        wv.strides.push_back(st[0]);
      }
      const std::string wh = relayout(w, w + (transposed ? "_flipped_krsc" : "_krsc"), wv, cp, pre, op.line, od);
      const std::vector<int64_t> yl = channels_last_shape(ys);
      const std::string value = s_.add_tensor(op.outputs[0] + "_nhwc", s_.need(op.outputs[0]).dtype, yl);
      problem::Op cv;
      cv.op = "conv";
      cv.inputs = {tensor_operand(xh), tensor_operand(wh)};
      if (!bias.empty()) {
        s_.decl_shape[bias] = {k};
        cv.inputs.push_back(tensor_operand(bias));
      }
      cv.outputs = {value};
      cv.attrs = {{"stride", *stride}, {"padding", *pad}, {"dilation", *dil}};
      if (pad_hi != *pad) cv.attrs["padding_hi"] = pad_hi;  // pass_emit's pad_hi
      cv.line = op.line;
      pre.push_back(cv);
      replace[id] = pre;
      const std::string out = rewrite_chain(chain, op.outputs[0], value, yl, k, false, replace);
      if (channel_rows(last, out, static_cast<int>(xs.size()), op.line, replace)) {
        s_.notes.push_back(s_.op_label(id) + ": a conv stage on channels-last copies of x and the weight" +
                           (to_bf16 ? " (bf16: the bf16 policy)" : std::string()) +
                           "; the reduction over its channels after it reads the channels-last result's rows (no "
                           "copy back to NCHW)" +
                           (chain.empty() ? std::string() : "; " + std::to_string(chain.size()) + " op(s) in its epilogue"));
      } else {
      // back to NCHW: the view of the NHWC value with the channel stride moved to dim 1
      std::vector<int64_t> back = lower_contiguous_strides(yl);
      back.insert(back.begin() + 1, back.back());
      back.pop_back();
      std::vector<problem::Op>& tail = replace[chain.empty() ? id : chain.back()];
      const std::string view = s_.add_tensor(out + "_nchw_v", s_.need(out).dtype, ys);
      s_.strided[view] = Strided{out, ys, back, 0};
      s_.views[view] = View{out, false};
      problem::Op c2;
      c2.op = "strided_copy";
      c2.inputs = {tensor_operand(view)};
      c2.outputs = {last};
      c2.line = op.line;
      tail.push_back(std::move(c2));
      s_.notes.push_back(s_.op_label(id) + ": a conv stage on channels-last copies: x NCHW -> NHWC and the weight " +
                         (transposed ? "CKRS -> KRSC, flipped (a transposed conv of stride 1 is the conv of the "
                                       "flipped weight)"
                                     : "KCRS -> KRSC") +
                         " before it (each call" + (to_bf16 ? ", converted to bf16: the bf16 policy" : "") + ")" +
                         (cp == c ? std::string()
                                  : ", their " + std::to_string(c) + " channels padded with zeros to " +
                                        std::to_string(cp) + " (the stage's 16-byte channel rows)") +
                         ", the result back to NCHW after it" +
                         (chain.empty() ? std::string() : "; " + std::to_string(chain.size()) + " op(s) in its epilogue"));
      }
    }
    for (auto it = replace.rbegin(); it != replace.rend(); ++it) {
      const size_t at = static_cast<size_t>(it->first), count = it->second.size();
      s_.replace_op(it->first, std::move(it->second));
      // replace_op classes ops by name: an eval batch_norm is elementwise since pass_expand_ops
      for (size_t j = at; j < at + count; ++j)
        if (s_.cls[j] == OpClass::unsupported && s_.ops[j].op == "batch_norm") s_.cls[j] = OpClass::elementwise;
    }
    return ok_status();
  }

  // A conv by slices: one conv stage per group and, for a transposed conv, per output phase, each
  // writing its NHWC slice of one tmp z [G·phases, N, Q.., K/G], read back as the NCHW output by one
  // copy (a view of its element count, [N, (G,) K/G, Q1, (s1,) ..]: the permuting form tiles it).
  //  - groups: group g's conv reads its channels of x (an NHWC copy of its own) and its rows of the
  //    weight; the bias is added in the copy back (a view of it per group is no tensor);
  //  - a transposed conv: the outputs o = q·s + φ of one phase φ (per spatial dim) are a stride-1
  //    conv of x with the taps t where (φ + padding - t·dilation) is a multiple of s (every
  //    s / gcd(s, dilation)-th tap, flipped, at dilation dilation / gcd(s, dilation)); stride 1 is
  //    one phase of every tap. The bias (groups 1) is each phase conv's epilogue.
  // An output size off a multiple of the stride: each phase makes ceil(O / s) outputs and a second
  // copy crops the result. A phase no tap reaches (a kernel smaller than the stride, or stride and
  // dilation sharing a factor) is a fill of its slice: the bias, or zeros. Ops after the conv join the
  // last copy's stage. Refused (a torch stage, with the reason): more than 16 groups, a phase that
  // would crop its input, and what the conv stage's rules refuse (channels per group off the
  // alignment).
  Status by_slices(int id, const std::string& x, const std::string& w, const std::string& bias,
                   const std::vector<int64_t>& xs, const std::vector<int64_t>& ws, const std::vector<int64_t>& ys,
                   const std::vector<int64_t>& stride, const std::vector<int64_t>& pad,
                   const std::vector<int64_t>& dil, int64_t groups, bool transposed) {
    const problem::Op op = s_.ops[static_cast<size_t>(id)];
    const std::string label = s_.op_label(id);
    const size_t rank = xs.size() - 2;
    const problem::DType dt = s_.need(x).dtype;
    const std::string what = transposed ? "a transposed conv" : "a grouped conv";
    if (s_.options.policy == sol::Policy::exact && dt == problem::DType::f32)
      return s_.unsupported(id, "the exact policy needs fp32-faithful math, and the sm90 conv runs TF32 at best; it runs "
                                "in a torch stage",
                            "use the tf32 policy to run it as conv stages");
    if (groups > kMaxSliceGroups)
      return s_.unsupported(id, "groups = " + std::to_string(groups) + ": more than " + std::to_string(kMaxSliceGroups) +
                                    " groups would be as many conv stages; it runs in a torch stage",
                            "nothing to change: it stays on PyTorch (cuDNN)");
    const int64_t n = xs[0], c = xs[1], cg = c / groups, kg = transposed ? ws[1] : ws[0] / groups;
    // per dim, per phase: the taps (tap m at t = tmax - m·step), the conv's stride, dilation, padding
    struct Phase {
      int64_t tmax = 0, taps = 0, step = 0, cstride = 1, dilation = 0, lo = 0, hi = 0;
    };
    std::vector<std::vector<Phase>> phases(rank);
    std::vector<int64_t> q(rank), sp(rank, 1);  // each phase's output size; phases per dim
    bool cropped = false;
    for (size_t i = 0; i < rank; ++i) {
      const int64_t s = stride[i], o = ys[2 + i], in = xs[2 + i], f = ws[2 + i];
      if (!transposed) {  // one phase: the conv itself, taps in order
        q[i] = o;
        phases[i].push_back(Phase{0, f, -1, s, dil[i], pad[i], pad[i]});
        continue;
      }
      // an output size off a multiple of the stride: every phase makes ceil(o / s) outputs (the
      // last ones of some phases past the output, cropped by a second copy)
      q[i] = (o + s - 1) / s;
      cropped = cropped || o % s != 0;
      sp[i] = s;
      const int64_t g = std::gcd(s, dil[i]);
      for (int64_t ph = 0; ph < s; ++ph) {
        Phase P;
        int64_t cmin = 0;
        for (int64_t t = f - 1; t >= 0; --t) {
          const int64_t v = ph + pad[i] - t * dil[i];
          if (((v % s) + s) % s != 0) continue;
          if (P.taps == 0) P.tmax = t, cmin = v / s;
          ++P.taps;
        }
        if (P.taps == 0) {  // no tap reaches this phase: its outputs are the bias alone (a fill)
          phases[i].push_back(P);
          continue;
        }
        P.step = s / g;
        P.dilation = dil[i] / g;
        P.lo = -cmin;
        P.hi = q[i] - in + cmin + P.dilation * (P.taps - 1);
        if (P.lo < 0 || P.hi < 0)
          return s_.unsupported(id, "a transposed conv whose output phase would crop its input (padding " +
                                        std::to_string(pad[i]) + ", stride " + std::to_string(s) +
                                        "): not lowered; it runs in a torch stage",
                                "nothing to change: it stays on PyTorch (cuDNN)");
        phases[i].push_back(P);
      }
    }
    const auto [to_bf16, od, cp] = operands(dt, cg);
    int64_t count = 1, per = n * kg;  // phases; elements of one slice
    for (size_t i = 0; i < rank; ++i) count *= sp[i], per *= q[i];
    // every sub-conv against the conv stage's rules first: a refusal makes nothing
    std::vector<int64_t> xp = xs, yq{n, kg};
    xp[1] = cp;
    yq.insert(yq.end(), q.begin(), q.end());
    struct Sub {  // one phase: its index per dim (outermost first) and its conv's per-dim settings
      std::vector<size_t> at;
      std::vector<int64_t> cs, lo, hi, dl;
      bool empty = false;  // a dim's phase no tap reaches: no conv, a fill
    };
    std::vector<Sub> all;
    for (int64_t f = 0; f < count; ++f) {
      Sub sub;
      sub.at.resize(rank);
      for (size_t i = rank, rest = static_cast<size_t>(f); i-- > 0;) {
        sub.at[i] = rest % static_cast<size_t>(sp[i]);
        rest /= static_cast<size_t>(sp[i]);
      }
      std::vector<int64_t> wp{kg, cp};
      for (size_t i = 0; i < rank; ++i) {
        const Phase& P = phases[i][sub.at[i]];
        sub.empty = sub.empty || P.taps == 0;
        wp.push_back(P.taps);
        sub.cs.push_back(P.cstride);
        sub.lo.push_back(P.lo);
        sub.hi.push_back(P.hi);
        sub.dl.push_back(P.dilation);
      }
      if (!sub.empty)
        if (Status st = check_rules(id, xp, wp, yq, sub.cs, sub.lo, sub.hi, sub.dl, od, dt,
                                    !bias.empty() && groups == 1, {});
            !st)
          return st;
      all.push_back(std::move(sub));
    }
    int64_t fills = 0;
    for (const Sub& sub : all) fills += sub.empty;
    if (fills == count)
      return s_.unsupported(id, "no output phase of this transposed conv has a tap; it runs in a torch stage");
    std::vector<problem::Op> pre;
    const problem::DType yt = s_.need(op.outputs[0]).dtype;
    std::vector<int64_t> zshape{groups * count, n};
    zshape.insert(zshape.end(), q.begin(), q.end());
    zshape.push_back(kg);
    const std::string z = s_.add_tensor(op.outputs[0] + (transposed ? "_phases" : "_groups"), yt, zshape);
    std::vector<int64_t> slice{n};
    slice.insert(slice.end(), q.begin(), q.end());
    slice.push_back(kg);
    const auto wst = lower_contiguous_strides(ws);
    const int64_t spatial = shape_numel(xs) / (n * c);
    if (!bias.empty() && groups == 1) s_.decl_shape[bias] = {kg};
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<int64_t> xg = xs;
      xg[1] = cg;
      const std::string gtag = groups > 1 ? "_g" + std::to_string(g) : "";
      const std::string xh = relayout(x, x + gtag + "_nhwc",
                                      Strided{x, channels_last_shape(xg), channels_last_strides(xs), g * cg * spatial},
                                      cp, pre, op.line, od);
      for (int64_t f = 0; f < count; ++f) {
        const Sub& sub = all[static_cast<size_t>(f)];
        const std::vector<size_t>& at = sub.at;
        std::string tag = gtag + (transposed ? "_phase" : "");
        if (transposed)
          for (size_t i = 0; i < rank; ++i) tag += std::to_string(at[i]);
        // z's slice of this group and phase: written, never read as such
        auto slice_of = [&] {
          const std::string zf = s_.add_tensor(z + tag, yt, slice);
          s_.strided[zf] = Strided{z, slice, lower_contiguous_strides(slice), (g * count + f) * per};
          return zf;
        };
        if (sub.empty) {  // the slice holds the bias (groups 1) or zeros (the copy back adds a group's bias)
          const std::string zf = slice_of();
          const std::string zero = s_.add_tensor(z + tag + "_zero", yt, {1});
          s_.tensors.back().kind = problem::TensorKind::constant;
          s_.tensors.back().value = 0.0;
          problem::Op fill;
          fill.op = "add";
          fill.inputs = {tensor_operand(zero), tensor_operand(!bias.empty() && groups == 1 ? bias : zero)};
          fill.outputs = {zf};
          fill.line = op.line;
          pre.push_back(std::move(fill));
          continue;
        }
        // KRSC of the group's weight: rows kk, taps m.., channels cc
        Strided wv{w, {kg}, {transposed ? wst[1] : wst[0]}, transposed ? g * cg * wst[0] : g * kg * wst[0]};
        for (size_t i = 0; i < rank; ++i) {
          const Phase& P = phases[i][at[i]];
          wv.shape.push_back(P.taps);
          wv.strides.push_back(-P.step * wst[2 + i]);
          wv.offset += P.tmax * wst[2 + i];
        }
        wv.shape.push_back(cg);
        wv.strides.push_back(transposed ? wst[0] : wst[1]);
        const std::string wh = relayout(w, w + tag + (transposed ? "_flipped_krsc" : "_krsc"), wv, cp, pre, op.line, od);
        const std::string zf = slice_of();
        problem::Op cv;
        cv.op = "conv";
        cv.inputs = {tensor_operand(xh), tensor_operand(wh)};
        if (!bias.empty() && groups == 1) cv.inputs.push_back(tensor_operand(bias));
        cv.outputs = {zf};
        cv.attrs = {{"stride", sub.cs}, {"padding", sub.lo}, {"dilation", sub.dl}};
        if (sub.hi != sub.lo) cv.attrs["padding_hi"] = sub.hi;
        cv.line = op.line;
        pre.push_back(std::move(cv));
      }
    }
    // back to NCHW: y [N, K, O..] read from z as [N, (G,) K/G, Q1, (s1,) ..] (its element order)
    std::vector<int64_t> vshape{n}, vstr{per / n};
    if (groups > 1) vshape.push_back(groups), vstr.push_back(count * per);
    vshape.push_back(kg);
    vstr.push_back(1);
    std::vector<int64_t> qs(rank), ps(rank);
    for (size_t i = rank, qst = kg, pst = per; i-- > 0;) {
      qs[i] = static_cast<int64_t>(qst);
      qst *= static_cast<size_t>(q[i]);
      ps[i] = static_cast<int64_t>(pst);
      pst *= static_cast<size_t>(sp[i]);
    }
    for (size_t i = 0; i < rank; ++i) {
      vshape.push_back(q[i]);
      vstr.push_back(qs[i]);
      if (sp[i] > 1) vshape.push_back(sp[i]), vstr.push_back(ps[i]);
    }
    const std::string view = s_.add_tensor(z + "_nchw_v", yt, vshape);
    s_.strided[view] = Strided{z, vshape, vstr, 0};
    s_.views[view] = View{z, false};
    problem::Op c2;
    c2.op = "strided_copy";
    c2.inputs = {tensor_operand(view)};
    c2.line = op.line;
    if (cropped) {  // the phases' outputs in full, [N, K, Q1·s1, ..], then their first O.. of each dim
      std::vector<int64_t> full{n, groups * kg};
      for (size_t i = 0; i < rank; ++i) full.push_back(q[i] * sp[i]);
      const std::string padded = s_.add_tensor(op.outputs[0] + "_uncropped", yt, full);
      c2.outputs = {padded};
      pre.push_back(std::move(c2));
      const std::string crop = s_.add_tensor(padded + "_v", yt, ys);
      s_.strided[crop] = Strided{padded, ys, lower_contiguous_strides(full), 0};
      s_.views[crop] = View{padded, false};
      c2 = problem::Op{};
      c2.op = "strided_copy";
      c2.inputs = {tensor_operand(crop)};
      c2.line = op.line;
    }
    if (!bias.empty() && groups > 1) {  // the bias after the copy, one value per channel
      const std::string copied = s_.add_tensor(op.outputs[0] + "_nobias", yt, ys);
      c2.outputs = {copied};
      pre.push_back(std::move(c2));
      std::vector<int64_t> bshape(rank + 1, 1);
      bshape[0] = groups * kg;
      s_.decl_shape[bias] = bshape;  // declared [K, 1, ..], as batch_norm's vectors (pass_expand_ops)
      const std::string b = s_.add_tensor(bias + "_per_channel", s_.need(bias).dtype, bshape);
      s_.views[b] = View{bias, false};
      problem::Op add;
      add.op = "add";
      add.inputs = {tensor_operand(copied), tensor_operand(b)};
      add.outputs = {op.outputs[0]};
      add.line = op.line;
      pre.push_back(std::move(add));
    } else {
      c2.outputs = {op.outputs[0]};
      pre.push_back(std::move(c2));
    }
    s_.replace_op(id, std::move(pre));
    std::string sizes;
    for (size_t i = 0; i < rank; ++i) sizes += (i ? "x" : "") + std::to_string(stride[i]);
    auto many = [](int64_t v, const std::string& what) { return std::to_string(v) + " " + what + (v == 1 ? "" : "s"); };
    s_.notes.push_back(label + ": " + what + (transposed ? " of stride " + sizes : std::string()) +
                       (groups > 1 ? " with " + std::to_string(groups) + " groups" : std::string()) + " as " +
                       many(groups * (count - fills), "conv stage") +
                       (fills > 0 ? " and " + many(groups * fills, "fill") + " (output phases no tap reaches)"
                                  : std::string()) +
                       " (" +
                       (groups > 1 ? "one per group" + std::string(count > 1 ? " and " : "") : std::string()) +
                       (count > 1 ? "one per output phase, each the stride-1 conv of its taps of the flipped weight"
                                  : std::string()) +
                       ") writing slices of one NHWC tensor; x copied NCHW -> NHWC " +
                       (groups > 1 ? "per group" : "once") + (to_bf16 ? " (bf16: the bf16 policy)" : "") +
                       ", the result read back to NCHW in one copy" +
                       (cropped ? " (and a second cropping it: an output size off a multiple of the stride)" : "") +
                       (!bias.empty() && groups > 1 ? " with the bias" : ""));
    return ok_status();
  }

  // A depthwise conv (groups = C_in, C_out = mult * C_in) is a window stage's weighted sum on the
  // NCHW tensors themselves (no layout copies), its bias in the stage: the op is renamed
  // depthwise_conv, its stride / padding / dilation written as lists, and pass_simt_stages drafts it.
  Status depthwise(int id, const std::vector<int64_t>& ws, const std::vector<int64_t>& ys) {
    problem::Op& op = s_.ops[static_cast<size_t>(id)];
    if (auto why = depthwise_refusal(op, ws, ys)) return s_.unsupported(id, why->first, why->second);
    const size_t rank = ws.size() - 2;
    const auto stride = spatial_attr(op, "stride", rank, 1), pad = spatial_attr(op, "padding", rank, 0),
               dil = spatial_attr(op, "dilation", rank, 1);
    op.op = "depthwise_conv";
    op.attrs["stride"] = *stride;
    op.attrs["padding"] = *pad;
    op.attrs["dilation"] = *dil;
    s_.cls[static_cast<size_t>(id)] = OpClass::window;
    s_.notes.push_back(s_.op_label(id) + ": a depthwise conv (groups = C) as a window stage's weighted sum on the "
                                         "NCHW tensors" + (op.inputs.size() > 2 && op.inputs[2].is_tensor() ? ", its bias in the stage" : ""));
    return ok_status();
  }

  // Whether the pointwise conv's NCHW operands can be read by the GEMM as [C, S] matrices: x is read
  // by this conv only (it is redeclared so) and is a problem input or the result of a window or
  // elementwise stage (which then writes it through a view of the [N, C, S] tensor the GEMM reads),
  // and the last value, declared as the product's rows, is read only by elementwise ops and torch
  // stages (which read it in any shape of its count).
  bool gemm_readable(const std::string& x, const std::string& last, int id) const {
    for (int c : s_.consumers(x))
      if (c != id) return false;
    if (s_.decl_shape.count(x)) return false;
    const problem::TensorKind xk = s_.need(x).kind;
    if (xk == problem::TensorKind::intermediate) {
      const int w = s_.writer(x);
      if (w < 0 || s_.views.count(x) || s_.strided.count(x) || s_.is_output(x)) return false;
      const OpClass k = s_.cls[static_cast<size_t>(w)];
      if (k != OpClass::window && k != OpClass::elementwise && !becomes_depthwise(w)) return false;
    } else if (xk != problem::TensorKind::input) {
      return false;
    }
    for (int c : s_.consumers(last)) {
      const OpClass k = s_.cls[static_cast<size_t>(c)];
      if (k != OpClass::elementwise && k != OpClass::torch) return false;
    }
    return true;
  }

  // Whether lower_one takes conv `op` (input shape `xs`) to depthwise(): groups = C_in > 1, not
  // transposed.
  static bool depthwise_route(const problem::Op& op, const std::vector<int64_t>& xs) {
    const int64_t groups = static_cast<int64_t>(attr_number(op, "groups", 1));
    return groups != 1 && !is_transposed(op.op) && groups == xs[1];
  }

  // Why depthwise() leaves a depthwise conv to a torch stage (the reason and the hint), or nothing
  // when it makes it a window stage.
  static std::optional<std::pair<std::string, std::string>> depthwise_refusal(const problem::Op& op,
                                                                            const std::vector<int64_t>& ws,
                                                                            const std::vector<int64_t>& ys) {
    const size_t rank = ws.size() - 2;
    if (!spatial_attr(op, "stride", rank, 1) || !spatial_attr(op, "padding", rank, 0) ||
        !spatial_attr(op, "dilation", rank, 1))
      return std::pair<std::string, std::string>{"a padding other than numbers ('same', 'valid') is not lowered",
                                                 "write the padding as numbers in the model"};
    if (ws[1] != 1 || ys[1] != ws[0])
      return std::pair<std::string, std::string>{
          "a depthwise conv's weight is [C_out, 1, k...]; this one is " + shape_str(ws), ""};
    return std::nullopt;
  }

  // Whether conv op `id`, not matched yet (run() matches later convs first), is one lower_one
  // will make a window stage (depthwise_route, no depthwise_refusal), its operands read as stored.
  bool becomes_depthwise(int id) const {
    const problem::Op& op = s_.ops[static_cast<size_t>(id)];
    if (s_.cls[static_cast<size_t>(id)] == OpClass::torch || !is_conv(op.op) || op.inputs.size() < 2 ||
        !op.inputs[0].is_tensor() || !op.inputs[1].is_tensor() || op.outputs.size() != 1)
      return false;
    const std::string x = plain(op.inputs[0].tensor), w = plain(op.inputs[1].tensor);
    if (x.empty() || w.empty()) return false;
    const auto xs = s_.need(x).shape, ws = s_.need(w).shape, ys = s_.need(op.outputs[0]).shape;
    if (xs.size() < 3 || xs.size() > 5 || ws.size() != xs.size() || ys.size() != xs.size()) return false;
    return depthwise_route(op, xs) && !depthwise_refusal(op, ws, ys);
  }

  // conv_rules_check on the stage this conv becomes: the first violation, with its hint, refuses it.
  Status check_rules(int id, const std::vector<int64_t>& xs, const std::vector<int64_t>& ws,
                     const std::vector<int64_t>& ys, const std::vector<int64_t>& stride,
                     const std::vector<int64_t>& pad, const std::vector<int64_t>& pad_hi,
                     const std::vector<int64_t>& dil, problem::DType operands, problem::DType output, bool bias,
                     const std::vector<int>& chain) const {
    dsl::Program p;
    auto dsl_dtype = [](problem::DType t) {
      return t == problem::DType::bf16 ? dsl::DType::bf16 : t == problem::DType::f16 ? dsl::DType::f16 : dsl::DType::f32;
    };
    dsl::Tensor xt;
    xt.name = "x";
    xt.dtype = dsl_dtype(operands);
    xt.shape = channels_last_shape(xs);
    p.tensors.push_back(xt);
    dsl::Tensor out = xt;
    out.name = "y";
    out.dtype = dsl_dtype(output);
    out.shape = channels_last_shape(ys);
    dsl::ConvStage c;
    c.x = "x";
    c.w = "w";
    const size_t r = xs.size() - 2;
    c.rank = static_cast<int>(r);
    c.stride = stride;
    c.pad_lo = pad;
    c.pad_hi = pad_hi;
    c.dilation = dil;
    c.batch = xs[0];
    c.channels = xs[1];
    c.out_channels = ws[0];
    c.in_size.assign(xs.begin() + 2, xs.end());
    c.filter.assign(ws.begin() + 2, ws.end());
    c.out_size.assign(ys.begin() + 2, ys.end());
    c.m = shape_numel(c.out_size) * c.batch;
    c.n = c.out_channels;
    c.k = c.channels * shape_numel(c.filter);
    // the epilogue's per-channel vectors count against shared memory: one per bias and operand
    int vectors = bias ? 1 : 0;
    for (int op : chain)
      for (const auto& in : s_.ops[static_cast<size_t>(op)].inputs)
        vectors += in.is_tensor() && s_.need(s_.resolve(in.tensor).base).kind != problem::TensorKind::constant ? 1 : 0;
    dsl::EpilogueStmt st;
    st.kind = dsl::EpilogueStmt::Kind::store;
    st.name = "y";
    st.value = ex_acc();
    for (int i = 0; i < vectors; ++i) st.value = ex_bin(dsl::BinOp::add, st.value, ex_load("b", dsl::LoadMode::col));
    c.epilogue.stmts = {st};
    auto v = dsl::conv_rules_check(p, c, out);
    if (v.empty()) return ok_status();
    return s_.unsupported(id, "the conv stage's rule " + v[0].rule + ": " + v[0].message + "; it runs in a torch stage",
                          v[0].hint);
  }
};

}  // namespace

Status pass_match_conv(LowerState& s) { return ConvMatcher(s).run(); }

}  // namespace ucut::lower
