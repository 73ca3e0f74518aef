#include "lower/lower_state.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <set>

#include "support/diagnostics.h"

namespace ucut::lower {

const char* draft_kind_name(DraftKind k) {
  switch (k) {
    case DraftKind::gemm: return "gemm";
    case DraftKind::conv: return "conv";
    case DraftKind::rowwise: return "rowwise";
    case DraftKind::reduce: return "reduce";
    case DraftKind::scan: return "scan";
    case DraftKind::elementwise: return "elementwise";
    case DraftKind::convert: return "convert";
    case DraftKind::attention: return "attention";
    case DraftKind::torch: return "torch";
    case DraftKind::window: return "window";
  }
  return "?";
}

LowerState::LowerState(const problem::Problem& p, const LowerOptions& o)
    : problem(p), options(o), tensors(p.tensors), ops(p.ops) {
  for (size_t i = 0; i < ops.size(); ++i) ops[i].id = static_cast<int>(i);
  dead.assign(ops.size(), false);
  for (const auto& op : ops) {
    cls.push_back(o.torch_ops.count(op.id) ? OpClass::torch : op_class(op));
    origin.push_back(op.id);
  }
}

const problem::Tensor* LowerState::tensor(const std::string& name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

const problem::Tensor& LowerState::need(const std::string& name) const {
  const problem::Tensor* t = tensor(name);
  UCUT_CHECK(t != nullptr, "lowering refers to unknown tensor " + name);
  return *t;
}

View LowerState::resolve(const std::string& name) const {
  View v{name, false};
  for (int guard = 0; guard < 1000; ++guard) {
    auto it = views.find(v.base);
    if (it == views.end()) return v;
    v.transposed = v.transposed != it->second.transposed;
    v.base = it->second.base;
  }
  return v;
}

bool LowerState::reads_through(const std::string& name, const std::string& t) const {
  std::string n = name;
  for (int guard = 0; guard < 1000; ++guard) {
    if (n == t) return true;
    auto it = views.find(n);
    if (it == views.end()) return false;
    n = it->second.base;
  }
  return false;
}

std::vector<int> LowerState::consumers(const std::string& name) const {
  std::string base = resolve(name).base;
  std::vector<int> out;
  for (const auto& op : ops) {
    if (dead[static_cast<size_t>(op.id)] || cls[static_cast<size_t>(op.id)] == OpClass::view) continue;
    for (const auto& in : op.inputs)
      if (in.is_tensor() && resolve(in.tensor).base == base) {
        out.push_back(op.id);
        break;
      }
  }
  return out;
}

int LowerState::only_reader(const std::string& name) const {
  if (is_output(name)) return -1;
  auto r = consumers(name);
  return r.size() == 1 ? r[0] : -1;
}

bool LowerState::is_output(const std::string& name) const {
  std::string base = resolve(name).base;
  for (const auto& o : problem.outputs)
    if (resolve(o).base == base) return true;
  return false;
}

std::string LowerState::add_tensor(const std::string& stem, problem::DType dtype,
                                   std::vector<int64_t> shape) {
  std::string name = stem;
  for (int i = 2; tensor(name); ++i) name = stem + "_" + std::to_string(i);
  problem::Tensor t;
  t.name = name;
  t.kind = problem::TensorKind::intermediate;
  t.dtype = dtype;
  t.shape = std::move(shape);
  tensors.push_back(std::move(t));
  return name;
}

int LowerState::add_op(problem::Op op) {
  op.id = static_cast<int>(ops.size());
  ops.push_back(op);
  dead.push_back(false);
  cls.push_back(op_class(op));
  origin.push_back(-1);
  return op.id;
}

void LowerState::replace_op(int id, std::vector<problem::Op> with) {
  UCUT_CHECK(drafts.empty() && !with.empty() && id >= 0 && static_cast<size_t>(id) < ops.size(),
             "replace_op before the drafts, with at least one op");
  const auto at = static_cast<std::ptrdiff_t>(id);
  const size_t n = with.size();
  const int from = origin[static_cast<size_t>(id)];
  const bool was_dead = dead[static_cast<size_t>(id)];
  ops.erase(ops.begin() + at);
  dead.erase(dead.begin() + at);
  cls.erase(cls.begin() + at);
  origin.erase(origin.begin() + at);
  std::vector<OpClass> new_cls;
  for (const auto& op : with) new_cls.push_back(op_class(op));
  ops.insert(ops.begin() + at, with.begin(), with.end());
  dead.insert(dead.begin() + at, n, was_dead);
  cls.insert(cls.begin() + at, new_cls.begin(), new_cls.end());
  origin.insert(origin.begin() + at, n, from);
  for (size_t i = 0; i < ops.size(); ++i) ops[i].id = static_cast<int>(i);
}

void LowerState::mark_dead_ops(bool note) {
  std::set<std::string> live(problem.outputs.begin(), problem.outputs.end());
  for (size_t i = ops.size(); i-- > 0;) {
    const problem::Op& op = ops[i];
    bool used = false;
    for (const auto& o : op.outputs) {
      used = used || live.count(o);
      // a slice of a tensor read through views (a strided transposed conv's phase) is live with it
      if (auto it = strided.find(o); it != strided.end()) used = used || live.count(it->second.base);
    }
    dead[i] = !used;
    if (!used) {
      if (note) notes.push_back(op_label(op.id) + " does not reach an output and is not lowered");
      continue;
    }
    for (const auto& in : op.inputs)
      if (in.is_tensor()) {
        live.insert(in.tensor);
        // what it reads through an alias (attention's `k_T` of a copied key) is read too
        live.insert(resolve(in.tensor).base);
        if (auto it = strided.find(in.tensor); it != strided.end()) live.insert(it->second.base);
      }
  }
}

int LowerState::writer(const std::string& tensor_name) const {
  const std::string base = resolve(tensor_name).base;
  for (const auto& op : ops)
    if (!dead[static_cast<size_t>(op.id)])
      for (const auto& o : op.outputs)
        if (o == base) return op.id;
  return -1;
}

int LowerState::producer(const std::string& tensor_name) const {
  std::string base = resolve(tensor_name).base;
  for (size_t d = 0; d < drafts.size(); ++d) {
    const Draft& dr = drafts[d];
    if (dr.kind == DraftKind::convert) {
      if (dr.dst == base) return static_cast<int>(d);
      continue;
    }
    if (!dr.value.empty() && resolve(dr.value).base == base) return static_cast<int>(d);
    if (dr.kind == DraftKind::torch)
      for (const auto& o : ops[static_cast<size_t>(dr.anchor)].outputs)
        if (resolve(o).base == base) return static_cast<int>(d);
    for (int id : dr.ops)
      for (const auto& o : ops[static_cast<size_t>(id)].outputs)
        if (resolve(o).base == base) return static_cast<int>(d);
    for (int id : dr.reductions)
      for (const auto& o : ops[static_cast<size_t>(id)].outputs)
        if (resolve(o).base == base) return static_cast<int>(d);
  }
  return -1;
}

namespace {

// The problem op an op comes from (a step of an op pass_expand_ops wrote out: the original).
const problem::Op& source_op(const LowerState& s, int id) {
  const int from = s.origin[static_cast<size_t>(id)];
  return from >= 0 ? s.problem.ops[static_cast<size_t>(from)] : s.ops[static_cast<size_t>(id)];
}

// An op the extractor wrote out from a torch.einsum, or an einsum it kept opaque.
bool from_einsum(const problem::Op& op) {
  return op.from.rfind("einsum(", 0) == 0 ||
         (op.op == "opaque" && op.attrs.value("target", std::string()) == "aten::einsum.default");
}

}  // namespace

std::string LowerState::op_label(int id) const {
  const problem::Op& op = ops[static_cast<size_t>(id)];
  // the problem's op numbers; a step of an expanded op names both, an op written out from an
  // einsum names the einsum
  const int from = origin[static_cast<size_t>(id)];
  const problem::Op& src = source_op(*this, id);
  std::string s = "op " + std::to_string(from >= 0 ? from : id) + " (" + op.op +
                  (src.op != op.op ? ", from " + src.op : "") + (src.from.empty() ? "" : ", from " + src.from) +
                  ")";
  if (op.line > 0) s += " at line " + std::to_string(op.line);
  return s;
}

Error LowerState::unsupported(int op_id, const std::string& why, const std::string& hint) const {
  if (op_id >= 0 && static_cast<size_t>(op_id) < origin.size()) unsupported_op = origin[static_cast<size_t>(op_id)];
  // The user wrote an einsum, not the permute or reshape it became: say what einsums lower.
  if (from_einsum(source_op(*this, op_id)))
    return make_error(ErrorCode::unsupported, label() + ": " + op_label(op_id) + ": " + why,
                      "an einsum lowers when it is a sum, or a (batched) matmul whose operands are "
                      "[batch.., M, K] and [batch.., K, N] (either one's last two indices may be swapped) "
                      "and whose output is [batch.., M, N], e.g. 'bik,bkj->bij' or 'bik,bjk->bij'; rewrite it "
                      "so, or this step stays on PyTorch");
  return make_error(ErrorCode::unsupported, label() + ": " + op_label(op_id) + ": " + why, hint);
}

// ---- drafts ---------------------------------------------------------------------------------

std::vector<int> draft_op_ids(const Draft& d) {
  std::vector<int> ids;
  if (d.anchor >= 0) ids.push_back(d.anchor);
  ids.insert(ids.end(), d.ops.begin(), d.ops.end());
  ids.insert(ids.end(), d.reductions.begin(), d.reductions.end());
  return ids;
}

bool draft_writes_indices(const Draft& d) { return d.op == "argmax" || d.op == "argmin" || !d.indices.empty(); }

bool draft_has_position(const Draft& d) {
  return d.kind == DraftKind::elementwise || (d.kind == DraftKind::rowwise && d.op != "group_norm");
}

std::vector<std::string> draft_locals(const LowerState& s, const Draft& d) {
  std::vector<std::string> out;
  if (d.kind == DraftKind::convert) return {d.dst};
  if (d.kind == DraftKind::torch) {
    for (const auto& o : s.ops[static_cast<size_t>(d.anchor)].outputs) out.push_back(s.resolve(o).base);
    return out;
  }
  if (!d.value.empty()) out.push_back(s.resolve(d.value).base);
  for (int id : d.ops) out.push_back(s.resolve(s.ops[static_cast<size_t>(id)].outputs.at(0)).base);
  return out;
}

std::vector<std::string> draft_escaping(const LowerState& s, const Draft& d) {
  std::vector<int> inside = draft_op_ids(d);
  std::vector<std::string> out;
  for (const auto& t : draft_locals(s, d)) {
    bool esc = s.is_output(t);
    for (int c : s.consumers(t))
      esc = esc || std::find(inside.begin(), inside.end(), c) == inside.end();
    if (esc) out.push_back(t);
  }
  return out;
}

// ---- op classes -----------------------------------------------------------------------------

bool is_gemm_op(const std::string& n) {
  return n == "linear" || n == "matmul" || n == "mm" || n == "bmm" || n == "addmm" || n == "baddbmm";
}

OpClass op_class(const problem::Op& op) {
  static const std::set<std::string> views = {"view",    "reshape", "permute", "transpose", "t",
                                              "squeeze", "unsqueeze", "flatten", "contiguous",
                                              "clone",   "dropout", "expand"};
  static const std::set<std::string> elementwise = {
      "strided_copy",  // pass_strided_copies: a DSL view copied into a stored tensor
      "add",  "sub",     "mul",        "div",        "pow",         "maximum",     "minimum",
      "neg",  "abs",     "exp",        "log",        "sqrt",        "rsqrt",       "reciprocal",
      "square", "tanh",  "sigmoid",    "relu",       "relu6",       "leaky_relu",  "gelu",
      "silu", "mish",    "softplus",   "elu",        "selu",        "celu",        "softsign",
      "hardtanh", "clamp", "hardswish", "hardsigmoid", "log_sigmoid", "to",
      "causal_mask",   // causal_mask: pass_expand_ops (attention's is_causal)
      "tril", "triu",   // on the element's position, like causal_mask
      "channel_pad"};   // pass_match_conv: channels padded with zeros (on the channel index)
  static const std::set<std::string> row_ops = {"softmax",    "log_softmax",       "layer_norm",
                                                "rms_norm",   "group_norm",        "cosine_similarity",
                                                "triplet_margin"};  // triplet_margin: pass_expand_ops
  static const std::set<std::string> reductions = {"sum",  "mean",   "amax",   "amin",     "max",
                                                   "min",  "argmax", "argmin", "logsumexp", "norm"};
  static const std::set<std::string> losses = {"mse_loss",  "l1_loss",      "smooth_l1_loss",
                                               "huber_loss", "kl_div",      "cross_entropy",
                                               "hinge_embedding_loss", "hinge_loss"};
  const std::string& n = op.op;
  if (views.count(n)) return OpClass::view;
  if (is_gemm_op(n)) return OpClass::gemm;
  if (n == "conv") return OpClass::conv;  // pass_match_conv
  if (elementwise.count(n)) return OpClass::elementwise;
  if (row_ops.count(n)) return OpClass::row_op;
  if (reductions.count(n)) return OpClass::reduction;
  if (losses.count(n)) return OpClass::loss;
  if (n == "cumsum" || n == "cumprod") return OpClass::scan;
  if (n == "attention") return OpClass::attention;  // pass_expand_ops
  // pooling, and a depthwise conv (pass_match_conv renames it): window stages (pass_simt_stages)
  if (n == "max_pool" || n == "avg_pool" || n == "adaptive_avg_pool" || n == "depthwise_conv") return OpClass::window;
  return OpClass::unsupported;
}

// ---- attributes -----------------------------------------------------------------------------

double attr_number(const problem::Op& op, const char* key, double def) {
  return attr_opt_number(op, key).value_or(def);
}

std::optional<double> attr_opt_number(const problem::Op& op, const char* key) {
  if (!op.attrs.is_object() || !op.attrs.contains(key)) return std::nullopt;
  const auto& v = op.attrs.at(key);
  if (v.is_boolean()) return v.get<bool>() ? 1.0 : 0.0;
  return problem::problem_number(v);  // "inf", "-inf", "nan" included
}

std::string attr_string(const problem::Op& op, const char* key, const std::string& def) {
  if (!op.attrs.is_object() || !op.attrs.contains(key)) return def;
  const auto& v = op.attrs.at(key);
  return v.is_string() ? v.get<std::string>() : def;
}

bool attr_bool(const problem::Op& op, const char* key, bool def) {
  if (!op.attrs.is_object() || !op.attrs.contains(key)) return def;
  const auto& v = op.attrs.at(key);
  return v.is_boolean() ? v.get<bool>() : def;
}

std::optional<std::vector<int>> attr_dims(const problem::Op& op, int rank) {
  const nlohmann::json* v = nullptr;
  if (op.attrs.is_object() && op.attrs.contains("dims")) v = &op.attrs.at("dims");
  else if (op.attrs.is_object() && op.attrs.contains("dim")) v = &op.attrs.at("dim");
  if (!v || v->is_null()) return std::nullopt;
  std::vector<int> out;
  auto add = [&](const nlohmann::json& d) {
    if (!d.is_number_integer()) return;
    int x = d.get<int>();
    out.push_back(x < 0 ? x + rank : x);
  };
  if (v->is_array())
    for (const auto& d : *v) add(d);
  else
    add(*v);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<double> lower_norm_order(const problem::Op& op) {
  if (!op.attrs.contains("p") || op.attrs.at("p").is_null()) return 2.0;
  const auto& p = op.attrs.at("p");
  if (p.is_string() && p.get<std::string>() == "fro") return 2.0;
  auto v = problem::problem_number(p);
  if (v && (*v == 1 || *v == 2 || *v == std::numeric_limits<double>::infinity())) return v;
  return std::nullopt;
}

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

std::optional<std::vector<int>> op_permutation(const problem::Op& op, int rank) {
  std::vector<int> p(static_cast<size_t>(rank));
  std::iota(p.begin(), p.end(), 0);
  if (op.op == "t") {
    if (rank < 2) return rank == 1 ? std::optional(p) : std::nullopt;
    std::swap(p[0], p[1]);
    return p;
  }
  if (op.op == "transpose") {
    int a = static_cast<int>(attr_number(op, "dim0", 0)), b = static_cast<int>(attr_number(op, "dim1", 1));
    if (a < 0) a += rank;
    if (b < 0) b += rank;
    if (a < 0 || b < 0 || a >= rank || b >= rank) return std::nullopt;
    std::swap(p[static_cast<size_t>(a)], p[static_cast<size_t>(b)]);
    return p;
  }
  if (!op.attrs.contains("dims") || !op.attrs.at("dims").is_array() || static_cast<int>(op.attrs.at("dims").size()) != rank)
    return std::nullopt;
  for (int i = 0; i < rank; ++i) {
    int d = op.attrs.at("dims")[static_cast<size_t>(i)].get<int>();
    if (d < 0) d += rank;
    if (d < 0 || d >= rank) return std::nullopt;
    p[static_cast<size_t>(i)] = d;
  }
  return p;
}

bool permutation_swaps_last_two(const std::vector<int>& p) {
  const int r = static_cast<int>(p.size());
  if (r < 2) return false;
  for (int i = 0; i < r - 2; ++i)
    if (p[static_cast<size_t>(i)] != i) return false;
  return p[static_cast<size_t>(r - 2)] == r - 1 && p[static_cast<size_t>(r - 1)] == r - 2;
}

int64_t shape_numel(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::vector<int64_t> squeeze_leading(const std::vector<int64_t>& s) {
  size_t i = 0;
  while (i + 1 < s.size() && s[i] == 1) ++i;
  return std::vector<int64_t>(s.begin() + static_cast<std::ptrdiff_t>(i), s.end());
}

}  // namespace ucut::lower
