// The non-GEMM stages: rowwise, reduce, scan and elementwise (issue 5), and their SIMT knobs.
#include <algorithm>
#include <cmath>

#include "dsl/checker.h"
#include "dsl/names.h"
#include "dsl/simt_plan.h"

namespace ucut::dsl::detail {

namespace {

struct Args {
  std::vector<const AstArg*> positional;
  std::map<std::string, const AstArg*> keyword;
};

// Splits a call's arguments; reports unknown or repeated keywords and positional counts.
bool split_args(Checker& c, const AstStage& s, size_t n_pos, const std::vector<std::string>& keys, Args& out) {
  const std::string call = s.op ? s.kind.text + " " + s.op->text : s.kind.text;
  for (const auto& a : s.args) {
    if (a.kind == AstArg::Kind::pair) {
      c.error(a.span, "unexpected group in " + call, "arguments are tensor names and key=value settings");
      return false;
    }
    if (!a.key) {
      if (!out.keyword.empty()) {
        c.error(a.span, "positional arguments come before key=value arguments", "move it to the front");
        return false;
      }
      out.positional.push_back(&a);
      continue;
    }
    if (std::find(keys.begin(), keys.end(), a.key->text) == keys.end()) {
      std::string list;
      for (const auto& k : keys) list += (list.empty() ? "" : ", ") + k;
      std::string g = diag_closest(a.key->text, keys);
      c.error(a.key->span, call + " has no setting '" + a.key->text + "'",
              !g.empty() ? "did you mean '" + g + "'?" : list.empty() ? "remove it" : "settings: " + list);
      return false;
    }
    if (out.keyword.count(a.key->text)) {
      c.error(a.key->span, "'" + a.key->text + "' is given twice", "keep one");
      return false;
    }
    out.keyword[a.key->text] = &a;
  }
  if (out.positional.size() != n_pos) {
    c.error(out.positional.size() > n_pos ? out.positional[n_pos]->span : s.op ? s.op->span : s.kind.span,
            call + " takes " + std::to_string(n_pos) + " tensor argument" + (n_pos == 1 ? "" : "s") + ", found " +
                std::to_string(out.positional.size()),
            n_pos == 1   ? "write " + call + "(x)"
            : n_pos == 3 && !s.op ? "write " + call + "(q, k, v)"
            : n_pos == 3 ? "write " + call + "(anchor, positive, negative)"
                         : "write " + call + "(input, target)");
    return false;
  }
  for (const AstArg* a : out.positional)
    if (a->kind != AstArg::Kind::name || a->transposed) {
      c.error(a->span, "expected a tensor name", "write the name of a declared tensor");
      return false;
    }
  return true;
}

// `zero_ok`: 0 is accepted too (l1/l2_normalize: x / max(norm, 0) is x / norm, as PyTorch's
// x / torch.norm(x) computes it, NaN for an all-zero row included).
std::optional<double> positive_number(Checker& c, const Args& a, const std::string& key, double def, bool& ok,
                                      bool zero_ok = false) {
  auto it = a.keyword.find(key);
  if (it == a.keyword.end()) return def;
  const AstArg* v = it->second;
  if (v->kind != AstArg::Kind::number || !(v->number > 0 || (zero_ok && v->number == 0))) {
    c.error(v->span, key + (zero_ok ? " must be a non-negative number" : " must be a positive number"),
            "write " + key + "=" + dsl_number_str(def));
    ok = false;
    return std::nullopt;
  }
  return v->number;
}

const Tensor* tensor_kw(Checker& c, const Args& a, const std::string& key, bool& ok) {
  auto it = a.keyword.find(key);
  if (it == a.keyword.end()) return nullptr;
  if (it->second->kind != AstArg::Kind::name || it->second->transposed) {
    c.error(it->second->span, key + " takes a tensor name", "write " + key + "=<tensor>");
    ok = false;
    return nullptr;
  }
  const Tensor* t = c.need_tensor(it->second->name, key);
  if (!t) ok = false;
  return t;
}

bool need_float(Checker& c, const Tensor& t, Span at, const std::string& what) {
  if (dsl_dtype_is_float(t.dtype)) return true;
  c.error(at, what + " '" + t.name + "' must be f16, bf16 or f32, but it is " + dsl_dtype_str(t.dtype),
          "convert it in the PyTorch program");
  return false;
}

bool op_known(Checker& c, const AstStage& s, const std::vector<std::string>& ops, const std::string& example) {
  if (!s.op) {
    c.error(s.kind.span, s.kind.text + " stages name their operation", "write 'stage y = " + example + "'");
    return false;
  }
  if (std::find(ops.begin(), ops.end(), s.op->text) != ops.end()) return true;
  std::string list;
  for (const auto& o : ops) list += (list.empty() ? "" : ", ") + o;
  std::string g = diag_closest(s.op->text, ops);
  c.error(s.op->span, "unknown " + s.kind.text + " operation '" + s.op->text + "'",
          g.empty() ? s.kind.text + " operations: " + list : "did you mean '" + g + "'?");
  return false;
}

}  // namespace

bool Checker::simt_knobs(const AstStage& s, SimtKnobs& k, const Tensor& data) {
  bool ok = true;
  k.threads = int_knob(s, "threads", 32, 1024, ok, "threads is a multiple of 32 from 32 to 1024");
  if (k.threads && *k.threads % 32 != 0) {
    error(knob(s, "threads")->value_span, "threads must be a multiple of 32 (a warp), found " + std::to_string(*k.threads),
          "use 128, 256, 512 or 1024");
    ok = false;
  }
  k.rows_per_block = int_knob(s, "rows_per_block", 1, 64, ok, "rows_per_block is 1 to 64");
  k.vector_width = int_knob(s, "vector_width", 1, 16, ok, "vector_width is 1, 2, 4, 8 or 16 elements", true);
  if (k.vector_width) {
    int bytes = *k.vector_width * dtype_bytes(data.dtype);
    int64_t last = data.shape.empty() ? 1 : data.shape.back();
    if (bytes > 16) {
      error(knob(s, "vector_width")->value_span,
            "vector_width " + std::to_string(*k.vector_width) + " of " + dsl_dtype_str(data.dtype) + " is " +
                std::to_string(bytes) + " bytes; one access loads at most 16",
            "use vector_width " + std::to_string(16 / dtype_bytes(data.dtype)));
      ok = false;
    } else if (last % *k.vector_width != 0) {
      error(knob(s, "vector_width")->value_span,
            "vector_width " + std::to_string(*k.vector_width) + " does not divide the last dimension " +
                std::to_string(last) + " of '" + data.name + "'",
            "use a vector width that divides " + std::to_string(last) + ", or auto");
      ok = false;
    }
  }
  k.items_per_thread = int_knob(s, "items_per_thread", 1, 64, ok, "items_per_thread is 1 to 64");
  k.passes = int_knob(s, "passes", 1, 2, ok, "passes is 1 (single pass, online) or 2");
  k.cluster = int_knob(s, "cluster", 1, 16, ok,
                       "cluster is 1, 2, 4, 8 or 16 blocks sharing a row (a column reduction: 1 to 8)", true);
  return ok;
}

bool Checker::simt_plan_ok(const AstStage& s, const Stage& st) {
  auto refused = simt_plan_refusal(st, [this](const std::string& n) { return tensor(n); });
  if (!refused) return true;
  // the knobs a plan refuses, most specific first; all `auto`: the stage itself
  Span at = s.kind.span;
  for (const char* name : {"order", "cluster", "items_per_thread", "passes", "rows_per_block", "threads", "vector_width"})
    if (const AstKnob* k = set_knob(s, name)) {
      at = k->value_span;
      break;
    }
  error(at, "no launch plan for these knobs: " + refused->message, refused->hint);
  return false;
}

bool Checker::check_rowwise(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  if (!op_known(*this, s, dsl_rowwise_ops(), "rowwise softmax(x)")) return false;
  const std::string& op = s.op->text;
  std::vector<std::string> keys;
  if (op == "layer_norm") keys = {"weight", "bias", "eps"};
  else if (op == "group_norm") keys = {"groups", "weight", "bias", "eps"};
  else if (op == "rms_norm") keys = {"weight", "eps"};
  else if (op == "l1_normalize" || op == "l2_normalize" || op == "cosine_similarity" || op == "pairwise_distance")
    keys = {"eps"};
  else if (op == "triplet_margin") keys = {"margin", "eps"};
  const int n_in = dsl_rowwise_inputs(op);
  Args a;
  if (!split_args(*this, s, static_cast<size_t>(n_in), keys, a)) return false;
  if (s.outputs.size() != 1 || s.tuple_outputs) {
    error(s.outputs[0].span, "a rowwise stage has one output", "write 'stage y = rowwise " + op + "(x)'");
    return false;
  }
  bool is_arg = op == "argmax" || op == "argmin";
  // a prologue maps the one input; the ops over several inputs take none
  if (const AstBlock* b = block(s, "prologue"); b && n_in > 1) {
    error(b->keyword.span, op + " reads " + std::to_string(n_in) + " inputs; a prologue maps one",
          "compute the inputs in an elementwise stage before it");
    return false;
  }
  if (!check_blocks_allowed(s, is_arg ? std::vector<std::string>{"prologue"} : std::vector<std::string>{"prologue", "epilogue"}))
    return false;
  RowwiseStage r;
  r.op = op;
  const Tensor* in = need_tensor(a.positional[0]->name, "rowwise input");
  if (!in) return false;
  reads.push_back({in->name, a.positional[0]->span});
  if (!need_float(*this, *in, a.positional[0]->span, "the input")) return false;
  if (in->shape.empty()) {
    error(a.positional[0]->span, "rowwise operations work over the last dimension; '" + in->name + "' is a scalar",
          "declare it with at least one dimension");
    return false;
  }
  r.input = in->name;
  for (int k = 1; k < n_in; ++k) {
    const AstArg* pa = a.positional[static_cast<size_t>(k)];
    const Tensor* t = need_tensor(pa->name, "rowwise input");
    if (!t) return false;
    reads.push_back({t->name, pa->span});
    if (t->shape != in->shape || t->dtype != in->dtype) {
      error(pa->span, op + " reads inputs of one shape and dtype: '" + t->name + "' is " + dsl_dtype_str(t->dtype) +
                          shape_str(t->shape) + ", '" + in->name + "' is " + dsl_dtype_str(in->dtype) +
                          shape_str(in->shape),
            "declare '" + t->name + " : " + dsl_dtype_str(in->dtype) + shape_str(in->shape) + "'");
      return false;
    }
    r.operands.push_back(t->name);
  }
  const bool group = op == "group_norm";
  bool ok = true;
  int64_t groups = 1;
  if (group) {
    // rows are (sample, group) pairs: channels at dim 1 split into `groups` equal groups
    auto it = a.keyword.find("groups");
    if (it == a.keyword.end()) {
      error(s.op->span, "group_norm needs its number of groups", "write group_norm(x, groups=32, ...)");
      return false;
    }
    const AstArg* v = it->second;
    if (v->kind != AstArg::Kind::number || v->number < 1 || v->number != static_cast<double>(static_cast<int64_t>(v->number))) {
      error(v->span, "groups must be a positive whole number", "write groups=32");
      return false;
    }
    groups = static_cast<int64_t>(v->number);
    if (in->shape.size() < 2 || in->shape[1] % groups != 0) {
      error(v->span, "group_norm splits the channels (dim 1) of '" + in->name + "' " + shape_str(in->shape) +
                         " into " + std::to_string(groups) + " equal groups, " +
                         (in->shape.size() < 2 ? std::string("but it has no dim 1")
                                               : "but " + std::to_string(groups) + " does not divide " +
                                                     std::to_string(in->shape[1]) + " channels"),
            in->shape.size() < 2 ? "declare the input as [N, C, ...]"
                                 : "use a number of groups that divides " + std::to_string(in->shape[1]));
      return false;
    }
    r.attrs["groups"] = static_cast<double>(groups);
  }
  const RowGeometry geo = dsl_rowwise_geometry(op, in->shape, groups);
  r.cols = geo.cols;
  r.rows = geo.rows;
  const Tensor* out = tensor(st.outputs[0]);
  std::vector<int64_t> drop(in->shape.begin(), in->shape.end() - 1), keep1 = drop;
  keep1.push_back(1);
  bool keeps = dsl_rowwise_keeps_shape(op);
  // a shape-keeping result may be declared with its leading dims folded or split (a batched GEMM's
  // [B*H, M, N] of a [B, H, M, N] input): the same rows, the same matrices
  const bool same_rows = keeps && !group && out->numel() == in->numel() && !out->shape.empty() &&
                         out->shape.back() == in->shape.back() &&
                         dsl_matrix_rows(out->shape) == dsl_matrix_rows(in->shape);
  // a reduction's result may carry its size-1 dims anywhere (the same element order): [N, 1, H, W] for
  // the rows of an [N, H, W, C] input (a channel reduction read channels-last, pass_match_conv)
  auto squeezed = [](const std::vector<int64_t>& v) {
    std::vector<int64_t> o;
    for (int64_t d : v)
      if (d != 1) o.push_back(d);
    return o;
  };
  const bool same_elements = !keeps && squeezed(out->shape) == squeezed(drop);
  if (keeps ? (out->shape != in->shape && !same_rows) : (out->shape != drop && out->shape != keep1 && !same_elements)) {
    std::vector<int64_t> want = keeps ? in->shape : drop;
    error(s.outputs[0].span, "rowwise " + op + " of " + shape_str(in->shape) + " gives " + shape_str(want) +
                                 " but '" + out->name + "' is " + shape_str(out->shape),
          "declare '" + out->name + " : " + dsl_dtype_str(out->dtype) + shape_str(want) + "'");
    return false;
  }
  if (is_arg ? !(out->dtype == DType::i32 || out->dtype == DType::i64) : !dsl_dtype_is_float(out->dtype)) {
    error(s.outputs[0].span, "rowwise " + op + " writes " + (is_arg ? "i32 or i64" : "f16, bf16 or f32") + ", but '" +
                                 out->name + "' is " + dsl_dtype_str(out->dtype),
          "declare '" + out->name + "' as " + (is_arg ? "i64" : "f32"));
    return false;
  }
  for (const char* key : {"weight", "bias"}) {
    const Tensor* t = tensor_kw(*this, a, key, ok);
    if (!ok) return false;
    if (!t) continue;
    Span sp = a.keyword.at(key)->span;
    const int64_t per = group ? in->shape[1] : r.cols;  // group_norm: one value per channel
    if (t->shape != std::vector<int64_t>{per}) {
      error(sp, std::string("the ") + key + " of " + op + " has one value per " + (group ? "channel" : "column") +
                    ": '" + t->name + "' must have shape [" + std::to_string(per) + "], but it is " + tensor_str(*t),
            "declare it as [" + std::to_string(per) + "]");
      return false;
    }
    if (!need_float(*this, *t, sp, std::string("the ") + key)) return false;
    reads.push_back({t->name, sp});
    (std::string(key) == "weight" ? r.weight : r.bias) = t->name;
    r.extra.push_back(t->name);
  }
  if (std::find(keys.begin(), keys.end(), "eps") != keys.end()) {
    double def = op == "layer_norm" || group   ? 1e-5
                 : op == "rms_norm"             ? 1e-6
                 : op == "cosine_similarity"    ? 1e-8
                 : n_in > 1                     ? 1e-6  // pairwise_distance, triplet_margin
                                                : 1e-12;
    auto eps = positive_number(*this, a, "eps", def, ok, op != "layer_norm" && op != "rms_norm" && !group);
    if (!ok) return false;
    r.attrs["eps"] = *eps;
  }
  if (op == "triplet_margin") {
    double margin = 1;
    if (auto it = a.keyword.find("margin"); it != a.keyword.end()) {
      if (it->second->kind != AstArg::Kind::number) {
        error(it->second->span, "margin must be a number", "write margin=1");
        return false;
      }
      margin = it->second->number;
    }
    r.attrs["margin"] = margin;
  }
  if (!simt_knobs(s, r.knobs, *in)) return false;
  BlockRules pro;
  pro.what = "the prologue of this rowwise stage";
  pro.target = in->name;
  pro.shape = in->shape;
  pro.rows = r.rows;
  pro.cols = r.cols;
  pro.allow_vectors = !group;  // a group's row and column are not dims of the tensor
  pro.allow_index = !group;
  pro.index_hint = "group_norm's rows are (sample, group), not a dim of the tensor: use an elementwise stage";
  std::vector<TensorUse> extra;
  if (const AstBlock* b = block(s, "prologue"))
    if (!check_block(b, pro, s.kind.span, r.prologue, reads, extra)) return false;
  BlockRules epi = pro;
  epi.what = "the epilogue of this rowwise stage";
  epi.target = out->name;
  epi.shape = out->shape;
  epi.allow_vectors = keeps && !group;  // [row]/[col] index a [rows, D] result
  epi.allow_index = keeps && !group;
  if (!keeps) epi.index_hint = "this stage writes one value a row: use the position in its prologue";
  if (!is_arg && !check_block(block(s, "epilogue"), epi, s.kind.span, r.epilogue, reads, extra)) return false;
  st.body = std::move(r);
  return true;
}

bool Checker::check_reduce(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  if (!op_known(*this, s, dsl_reduce_ops(), "reduce sum(x, dims=[0])")) return false;
  const std::string& op = s.op->text;
  bool loss = dsl_reduce_is_loss(op);
  std::vector<std::string> keys = loss ? std::vector<std::string>{"reduction"} : std::vector<std::string>{"dims"};
  if (op == "huber") keys.push_back("delta");
  if (op == "smooth_l1") keys.push_back("beta");
  Args a;
  if (!split_args(*this, s, loss ? 2 : 1, keys, a)) return false;
  // max/min may write two outputs: the values and their indices along the one reduced dim
  const bool pair = (op == "max" || op == "min") && s.tuple_outputs && s.outputs.size() == 2;
  if ((s.outputs.size() != 1 || s.tuple_outputs) && !pair) {
    error(s.outputs[0].span,
          op == "max" || op == "min" ? "reduce " + op + " has one output, or two: (values, indices)"
                                     : "a reduce stage has one output",
          op == "max" || op == "min" ? "write 'stage (v, i) = reduce " + op + "(x, dims=[0])'"
                                     : "write 'stage y = reduce " + op + "(...)'");
    return false;
  }
  // the ops of the column kernel only: a state per column (not a float), the last dim kept
  const bool arg = dsl_reduce_writes_indices(op, pair ? 2 : 1);
  const bool column_only = arg || op == "logsumexp";
  if (const AstBlock* b = block(s, "epilogue"); b && arg) {
    error(b->keyword.span, "reduce " + op + (pair ? " with indices" : "") + " takes no epilogue: " +
                               (pair ? "the values and indices are written as they are" : "it writes indices"),
          "apply the expression in a following elementwise stage");
    return false;
  }
  // a loss's prologue maps its first input (the prediction); cross_entropy takes none
  if (const AstBlock* b = block(s, "prologue"); b && op == "cross_entropy") {
    error(b->keyword.span, "cross_entropy takes no prologue: its logits go to the rowwise cross-entropy kernel as they are",
          "compute the logits in an elementwise stage before it");
    return false;
  }
  if (!check_blocks_allowed(s, op == "cross_entropy" ? std::vector<std::string>{"epilogue"}
                                                     : std::vector<std::string>{"prologue", "epilogue"}))
    return false;
  ReduceStage r;
  r.op = op;
  std::vector<const Tensor*> ins;
  for (const AstArg* p : a.positional) {
    const Tensor* t = need_tensor(p->name, "reduce input");
    if (!t) return false;
    reads.push_back({t->name, p->span});
    ins.push_back(t);
    r.inputs.push_back(t->name);
  }
  const Tensor* in = ins[0];
  const Tensor* out = tensor(st.outputs[0]);
  bool ok = true;
  std::vector<int64_t> want;
  if (!loss) {
    if (!need_float(*this, *in, a.positional[0]->span, "the input")) return false;
    int rank = static_cast<int>(in->shape.size());
    std::set<int> dims;
    if (auto it = a.keyword.find("dims"); it != a.keyword.end()) {
      if (it->second->kind != AstArg::Kind::list || it->second->list.empty()) {
        error(it->second->span, "dims takes a list of dimensions", "write dims=[0] or dims=[0, 1]");
        return false;
      }
      for (int64_t d : it->second->list) {
        int64_t nd = d < 0 ? d + rank : d;
        if (nd < 0 || nd >= rank) {
          error(it->second->span, "dimension " + std::to_string(d) + " is out of range for '" + in->name + "' of rank " +
                                      std::to_string(rank),
                "dimensions run from 0 to " + std::to_string(rank - 1) + " (or -" + std::to_string(rank) + " to -1)");
          return false;
        }
        if (!dims.insert(static_cast<int>(nd)).second) {
          error(it->second->span, "dimension " + std::to_string(d) + " is listed twice", "list each dimension once");
          return false;
        }
      }
    } else {
      for (int d = 0; d < rank; ++d) dims.insert(d);
    }
    r.dims.assign(dims.begin(), dims.end());
    std::vector<int64_t> keep = in->shape;
    for (int d : dims) keep[static_cast<size_t>(d)] = 1;
    for (int d = 0; d < rank; ++d)
      if (!dims.count(d)) want.push_back(in->shape[static_cast<size_t>(d)]);
    bool full = static_cast<int>(dims.size()) == rank;
    if (column_only) {
      const ReduceGeometry g = simt_reduce_geometry(in->shape, r.dims);
      const std::string what = "reduce " + op + (pair ? " with indices" : "");
      if (g.inner) {
        error(s.op->span, what + " runs in the column kernel, which keeps the last dimension; dims " +
                              shape_str(std::vector<int64_t>(r.dims.begin(), r.dims.end())) + " of " +
                              shape_str(in->shape) + " reduce it",
              "over the last dimension write rowwise " + (op == "logsumexp" ? op : arg && pair ? op + " and rowwise arg" + op
                                                                                                : op));
        return false;
      }
      if (arg && dims.size() != 1) {
        error(s.op->span, what + " reduces one dimension (the indices run along it), not " + std::to_string(dims.size()),
              "list one dimension in dims");
        return false;
      }
    }
    bool shape_ok = out->shape == want || out->shape == keep || (full && out->shape == std::vector<int64_t>{1});
    if (!shape_ok) {
      error(s.outputs[0].span, "reduce " + op + " of " + shape_str(in->shape) + " gives " + shape_str(want) +
                                   " but '" + out->name + "' is " + shape_str(out->shape),
            "declare '" + out->name + " : " + dsl_dtype_str(out->dtype) + shape_str(want) +
                "' (or keep the reduced dimensions as 1)");
      return false;
    }
  } else {
    const Tensor* t = ins[1];
    if (op == "cross_entropy") {
      if (!need_float(*this, *in, a.positional[0]->span, "the logits")) return false;
      if (in->shape.size() != 2) {
        error(a.positional[0]->span, "cross_entropy takes logits of shape [N, C]; '" + in->name + "' is " +
                                         shape_str(in->shape),
              "declare the logits as [batch, classes]");
        return false;
      }
      if (!(t->dtype == DType::i32 || t->dtype == DType::i64) || t->shape != std::vector<int64_t>{in->shape[0]}) {
        error(a.positional[1]->span, "cross_entropy takes class indices of shape [" + std::to_string(in->shape[0]) +
                                         "] and dtype i64 or i32; '" + t->name + "' is " + tensor_str(*t),
              "declare '" + t->name + " : i64[" + std::to_string(in->shape[0]) + "]'");
        return false;
      }
    } else {
      if (!need_float(*this, *in, a.positional[0]->span, "the input") ||
          !need_float(*this, *t, a.positional[1]->span, "the target"))
        return false;
      if (in->shape != t->shape) {
        error(a.positional[1]->span, op + " compares tensors of one shape: '" + in->name + "' is " +
                                         shape_str(in->shape) + ", '" + t->name + "' is " + shape_str(t->shape),
              "pass an input and a target of the same shape");
        return false;
      }
    }
    for (size_t d = 0; d < in->shape.size(); ++d) r.dims.push_back(static_cast<int>(d));
    r.reduction = "mean";
    if (auto it = a.keyword.find("reduction"); it != a.keyword.end()) {
      std::vector<std::string> allowed = {"mean", "sum"};
      if (op == "kl_div") allowed.push_back("batchmean");
      const AstArg* v = it->second;
      if (v->kind != AstArg::Kind::name || v->transposed ||
          std::find(allowed.begin(), allowed.end(), v->name.text) == allowed.end()) {
        std::string g = v->kind == AstArg::Kind::name ? diag_closest(v->name.text, allowed) : "";
        error(v->span, "reduction is " + std::string(op == "kl_div" ? "mean, sum or batchmean" : "mean or sum"),
              g.empty() ? "write reduction=mean" : "did you mean '" + g + "'?");
        return false;
      }
      r.reduction = v->name.text;
    }
    if (op == "huber") r.attrs["delta"] = positive_number(*this, a, "delta", 1.0, ok).value_or(1.0);
    if (op == "smooth_l1") r.attrs["beta"] = positive_number(*this, a, "beta", 1.0, ok).value_or(1.0);
    if (!ok) return false;
    if (out->shape != std::vector<int64_t>{} && out->shape != std::vector<int64_t>{1}) {
      error(s.outputs[0].span, "a loss is one value, but '" + out->name + "' is " + shape_str(out->shape),
            "declare '" + out->name + " : f32[]'");
      return false;
    }
    want = out->shape;
  }
  const bool index_out = op == "argmax" || op == "argmin";
  if (index_out ? out->dtype != DType::i64 : !dsl_dtype_is_float(out->dtype)) {
    error(s.outputs[0].span, "reduce " + op + " writes " + (index_out ? "i64 indices" : "f16, bf16 or f32") +
                                 ", but '" + out->name + "' is " + dsl_dtype_str(out->dtype),
          "declare '" + out->name + "' as " + (index_out ? "i64" : "f32"));
    return false;
  }
  if (pair) {
    const Tensor* idx = tensor(st.outputs[1]);
    if (idx->dtype != DType::i64 || idx->shape != out->shape) {
      error(s.outputs[1].span, "the indices of reduce " + op + " are i64 of the values' shape, but '" + idx->name +
                                   "' is " + dsl_dtype_str(idx->dtype) + shape_str(idx->shape),
            "declare '" + idx->name + " : i64" + shape_str(out->shape) + "'");
      return false;
    }
  }
  if (!simt_knobs(s, r.knobs, *in)) return false;
  std::vector<TensorUse> extra;
  if (op != "cross_entropy") {
    BlockRules pro;
    pro.what = "the prologue of this reduce stage";
    pro.target = in->name;
    pro.shape = in->shape;
    pro.allow_vectors = false;
    pro.index_hint = "a reduce stage's elements have no row and column: use a rowwise stage, or an elementwise "
                     "stage before this one";
    if (const AstBlock* b = block(s, "prologue"))
      if (!check_block(b, pro, s.kind.span, r.prologue, reads, extra)) return false;
  }
  BlockRules epi;
  epi.what = "the epilogue of this reduce stage";
  epi.target = out->name;
  epi.shape = out->shape;
  epi.allow_vectors = false;
  if (!arg && !check_block(block(s, "epilogue"), epi, s.kind.span, r.epilogue, reads, extra)) return false;
  st.body = std::move(r);
  return true;
}

bool Checker::check_scan(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  if (!op_known(*this, s, dsl_scan_ops(), "scan cumsum(x, dim=1)")) return false;
  Args a;
  if (!split_args(*this, s, 1, {"dim", "exclusive", "reverse", "mask"}, a)) return false;
  if (s.outputs.size() != 1 || s.tuple_outputs) {
    error(s.outputs[0].span, "a scan stage has one output", "write 'stage y = scan cumsum(x)'");
    return false;
  }
  if (!check_blocks_allowed(s, {})) return false;
  ScanStage r;
  r.op = s.op->text;
  const Tensor* in = need_tensor(a.positional[0]->name, "scan input");
  if (!in) return false;
  reads.push_back({in->name, a.positional[0]->span});
  if (!need_float(*this, *in, a.positional[0]->span, "the input")) return false;
  int rank = static_cast<int>(in->shape.size());
  if (rank == 0) {
    error(a.positional[0]->span, "a scan needs at least one dimension", "declare '" + in->name + "' with a shape");
    return false;
  }
  r.input = in->name;
  r.dim = rank - 1;
  if (auto it = a.keyword.find("dim"); it != a.keyword.end()) {
    const AstArg* v = it->second;
    double d = v->number;
    if (v->kind != AstArg::Kind::number || d < -rank || d >= rank || d != static_cast<int>(d)) {
      error(v->span, "dim must be a dimension of '" + in->name + "' (0 to " + std::to_string(rank - 1) + ", or negative from the end)",
            "write dim=" + std::to_string(rank - 1));
      return false;
    }
    r.dim = static_cast<int>(d) < 0 ? static_cast<int>(d) + rank : static_cast<int>(d);
  }
  for (const char* key : {"exclusive", "reverse"}) {
    auto it = a.keyword.find(key);
    if (it == a.keyword.end()) continue;
    const AstArg* v = it->second;
    if (v->kind != AstArg::Kind::name || (v->name.text != "true" && v->name.text != "false")) {
      error(v->span, std::string(key) + " is true or false", std::string("write ") + key + "=true");
      return false;
    }
    (std::string(key) == "exclusive" ? r.exclusive : r.reverse) = v->name.text == "true";
  }
  bool ok = true;
  if (const Tensor* m = tensor_kw(*this, a, "mask", ok)) {
    Span sp = a.keyword.at("mask")->span;
    if (m->shape != in->shape || !(m->dtype == DType::boolean || m->dtype == DType::u8)) {
      error(sp, "the mask must be bool or u8 of the input's shape " + shape_str(in->shape) + ", but it is " + tensor_str(*m),
            "declare '" + m->name + " : bool" + shape_str(in->shape) + "'");
      return false;
    }
    reads.push_back({m->name, sp});
    r.mask = m->name;
  }
  if (!ok) return false;
  const Tensor* out = tensor(st.outputs[0]);
  if (out->shape != in->shape || !dsl_dtype_is_float(out->dtype)) {
    error(s.outputs[0].span, "scan " + r.op + " of " + tensor_str(*in) + " writes a float tensor of the same shape, but '" +
                                 out->name + "' is " + tensor_str(*out),
          "declare '" + out->name + " : " + dsl_dtype_str(in->dtype) + shape_str(in->shape) + "'");
    return false;
  }
  if (!simt_knobs(s, r.knobs, *in)) return false;
  r.knobs.order = static_cast<ScanOrder>(word_knob(s, "order", {"auto", "fp64", "torch"}, ok));
  if (!ok) return false;
  if (r.knobs.order == ScanOrder::torch) {
    // PyTorch's row scan, as torch.cumsum / torch.cumprod run it (a reversed scan is the same on
    // the flipped row): a warp a row, whatever the block (threads) or the chunks in each segment
    // of a warp's ring (items_per_thread); elements are summed one a lane.
    std::string why = simt_torch_scan_refusal(r, *in, *out);
    if (why.empty())
      if (set_knob(s, "vector_width"))
        why = "it reads one element a lane (a warp a row); vector_width does not apply";
    if (!why.empty()) {
      error(knob(s, "order")->value_span, "order torch: " + why, "use order auto");
      return false;
    }
  }
  st.body = std::move(r);
  return true;
}

bool Checker::check_elementwise(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  if (s.op) {
    error(s.op->span, "elementwise stages have no operation name", "write 'stage y = elementwise { body { y = ... } }'");
    return false;
  }
  if (!check_args_none(s)) return false;
  if (s.outputs.size() != 1 || s.tuple_outputs) {
    error(s.outputs[0].span, "an elementwise stage has one output", "write one stage per output");
    return false;
  }
  if (!check_blocks_allowed(s, {"body"})) return false;
  ElementwiseStage r;
  const Tensor* out = tensor(st.outputs[0]);
  if (!dsl_dtype_is_float(out->dtype)) {
    error(s.outputs[0].span, "elementwise stages write f16, bf16 or f32, but '" + out->name + "' is " +
                                 dsl_dtype_str(out->dtype),
          "declare '" + out->name + "' as f32");
    return false;
  }
  if (!simt_knobs(s, r.knobs, *out)) return false;
  BlockRules rules;
  rules.what = "the body of this elementwise stage";
  rules.target = out->name;
  rules.allow_acc = false;
  rules.broadcast = true;
  rules.shape = out->shape;
  rules.cols = out->shape.empty() ? 1 : out->shape.back();
  rules.rows = out->numel() / rules.cols;
  rules.allow_index = true;
  std::vector<TensorUse> extra;
  if (!check_block(block(s, "body"), rules, s.kind.span, r.body, reads, extra)) return false;
  st.body = std::move(r);
  return true;
}

bool Checker::check_attention(const AstStage& s, Stage& st, std::vector<TensorUse>& reads) {
  if (s.op) {
    error(s.op->span, "attention stages have no operation name", "write 'stage o = attention(q, k, v, causal=true)'");
    return false;
  }
  Args a;
  if (!split_args(*this, s, 3, {"causal", "scale"}, a)) return false;
  if (s.outputs.size() != 1 || s.tuple_outputs) {
    error(s.outputs[0].span, "an attention stage has one output", "write 'stage o = attention(q, k, v)'");
    return false;
  }
  if (!check_blocks_allowed(s, {})) return false;
  AttentionStage r;
  const char* role[3] = {"query", "key", "value"};
  const Tensor* t[3] = {};
  for (int i = 0; i < 3; ++i) {
    t[i] = need_tensor(a.positional[static_cast<size_t>(i)]->name, std::string("attention ") + role[i]);
    if (!t[i]) return false;
    reads.push_back({t[i]->name, a.positional[static_cast<size_t>(i)]->span});
  }
  const Tensor& q = *t[0];
  const Tensor& k = *t[1];
  const Tensor& v = *t[2];
  const Tensor* out = tensor(st.outputs[0]);
  const Span at = a.positional[0]->span;
  for (const Tensor* x : {t[0], t[1], t[2], out})
    if (!dsl_dtype_is_float(x->dtype)) {
      error(x == out ? s.outputs[0].span : at,
            "attention runs on f16, bf16 or f32 data, but '" + x->name + "' is " + dsl_dtype_str(x->dtype),
            "convert it in the PyTorch program");
      return false;
    }
  if (k.dtype != q.dtype || v.dtype != q.dtype || out->dtype != q.dtype) {
    error(at, "attention's q, k, v and output share one dtype, but they are " + tensor_str(q) + ", " + tensor_str(k) +
                  ", " + tensor_str(v) + " and " + tensor_str(*out),
          "convert them to one dtype in the PyTorch program");
    return false;
  }
  const size_t rank = q.shape.size();
  auto lead = [](const Tensor& x) { return std::vector<int64_t>(x.shape.begin(), x.shape.end() - 2); };
  bool shapes = rank >= 2 && k.shape.size() == rank && v.shape.size() == rank && out->shape.size() == rank;
  // grouped-query attention: k and v with fewer heads (the dim before Lk), a divisor of q's
  auto kv_lead_fits = [&](const Tensor& x) {
    if (lead(x) == lead(q)) return true;
    if (rank < 3 || lead(x).size() != lead(q).size()) return false;
    std::vector<int64_t> a = lead(x), b = lead(q);
    const int64_t hkv = a.back(), hq = b.back();
    a.pop_back();
    b.pop_back();
    return a == b && hkv > 0 && hq % hkv == 0;
  };
  shapes = shapes && kv_lead_fits(k) && lead(v) == lead(k) && lead(*out) == lead(q);
  shapes = shapes && k.shape[rank - 1] == q.shape[rank - 1] && v.shape[rank - 2] == k.shape[rank - 2];
  shapes = shapes && out->shape[rank - 2] == q.shape[rank - 2] && out->shape[rank - 1] == v.shape[rank - 1];
  if (!shapes) {
    error(at, "attention needs q [..., H, Lq, D], k [..., Hkv, Lk, D], v [..., Hkv, Lk, Dv] and the output "
              "[..., H, Lq, Dv] with the same leading dims (Hkv = H, or a divisor of it), but they are " + tensor_str(q) + ", " + tensor_str(k) + ", " +
              tensor_str(v) + " and " + tensor_str(*out),
          "give k and v q's leading dims (or a divisor of its heads) and the output q's leading dims, Lq and Dv");
    return false;
  }
  r.q = q.name;
  r.k = k.name;
  r.v = v.name;
  r.lq = q.shape[rank - 2];
  r.lk = k.shape[rank - 2];
  r.d = q.shape[rank - 1];
  r.dv = v.shape[rank - 1];
  r.batch = 1;
  for (size_t i = 0; i + 2 < rank; ++i) r.batch *= q.shape[i];
  if (rank >= 3) {
    r.heads = q.shape[rank - 3];
    r.kv_group = k.shape[rank - 3] > 0 ? q.shape[rank - 3] / k.shape[rank - 3] : 1;
  }
  if (r.lq == 0 || r.lk == 0 || r.batch == 0) {
    error(at, "attention over empty tensors (" + tensor_str(q) + ", " + tensor_str(k) + ")", "give every dim an extent");
    return false;
  }
  for (int64_t d : {r.d, r.dv})
    if (!dsl_attention_head_dim_ok(d, q.dtype)) {
      error(at, std::string("the fused attention kernel takes head dims ") +
                    (q.dtype == DType::f32 ? "64, 96 and 128" : "64 and 128 for 16-bit data") + ", not " +
                    std::to_string(d),
            "write attention of other head dims as a gemm stage, a rowwise softmax and a second gemm stage");
      return false;
    }
  if (r.batch > kAttentionMaxMatrices) {
    error(at, "attention over " + std::to_string(r.batch) + " matrices; one launch takes at most " +
                  std::to_string(kAttentionMaxMatrices),
          "split the batch in PyTorch");
    return false;
  }
  bool ok = true;
  if (auto it = a.keyword.find("causal"); it != a.keyword.end()) {
    const AstArg* c = it->second;
    if (c->kind != AstArg::Kind::name || (c->name.text != "true" && c->name.text != "false")) {
      error(c->span, "causal is true or false", "write causal=true");
      return false;
    }
    r.causal = c->name.text == "true";
  }
  const std::optional<double> scale = positive_number(*this, a, "scale", 1.0 / std::sqrt(static_cast<double>(r.d)), ok);
  if (!ok || !scale) return false;
  r.scale = *scale;
  r.knobs.threads = int_knob(s, "threads", 32, 1024, ok, "threads is 128, 256 or (16-bit data) 384");
  if (!ok) return false;
  if (r.knobs.threads && !dsl_attention_threads_ok(*r.knobs.threads, q.dtype)) {
    if (*r.knobs.threads == kAttentionHopperThreads)
      error(knob(s, "threads")->value_span, "threads 384 is the Hopper kernel of 16-bit attention, not f32's",
            "use threads 128 or 256 on f32 data");
    else
      error(knob(s, "threads")->value_span,
            "an attention block has 128 or 256 threads (64 or 128 query rows) or, on 16-bit data, 384 (Hopper's "
            "kernel, 128 rows), not " + std::to_string(*r.knobs.threads),
            "use threads 384 (16-bit data) or 128");
    return false;
  }
  st.body = std::move(r);
  return true;
}

}  // namespace ucut::dsl::detail
