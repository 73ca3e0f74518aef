#include "lower/lower_expr.h"

#include <cmath>
#include <limits>
#include <optional>

#include "dsl/names.h"

namespace ucut::lower {

using dsl::BinOp;
using dsl::Expr;
using dsl::ExprPtr;
using dsl::Fn;

// ---- factories ------------------------------------------------------------------------------

ExprPtr ex_const(double v) {
  Expr e;
  e.kind = Expr::Kind::constant;
  e.value = v;
  return std::make_shared<const Expr>(std::move(e));
}
ExprPtr ex_acc() {
  Expr e;
  e.kind = Expr::Kind::acc;
  return std::make_shared<const Expr>(std::move(e));
}
ExprPtr ex_local(const std::string& name) {
  Expr e;
  e.kind = Expr::Kind::local;
  e.name = name;
  return std::make_shared<const Expr>(std::move(e));
}
ExprPtr ex_load(const std::string& tensor, dsl::LoadMode mode) {
  Expr e;
  e.kind = Expr::Kind::load;
  e.name = tensor;
  e.mode = mode;
  return std::make_shared<const Expr>(std::move(e));
}
ExprPtr ex_index(dsl::LoadMode which) {
  Expr e;
  e.kind = Expr::Kind::index;
  e.mode = which;
  return std::make_shared<const Expr>(std::move(e));
}
ExprPtr ex_bin(BinOp op, ExprPtr a, ExprPtr b) {
  Expr e;
  e.kind = Expr::Kind::binary;
  e.op = op;
  e.args = {std::move(a), std::move(b)};
  return std::make_shared<const Expr>(std::move(e));
}
ExprPtr ex_fn(Fn fn, std::vector<ExprPtr> args, std::vector<double> params) {
  Expr e;
  e.kind = args.size() >= 2 ? Expr::Kind::call : Expr::Kind::unary;
  e.fn = fn;
  e.args = std::move(args);
  e.params = std::move(params);
  return std::make_shared<const Expr>(std::move(e));
}

// ---- loads ----------------------------------------------------------------------------------

std::vector<int64_t> lower_decl_shape(const LowerState& s, const std::string& base) {
  auto it = s.decl_shape.find(base);
  if (it != s.decl_shape.end()) return it->second;
  return s.need(base).shape;
}

namespace {

bool broadcasts_to(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
  if (from.size() > to.size()) return false;
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i]) return false;
  return true;
}

// [..., cols] with every other extent 1: one value per column.
bool col_like(const std::vector<int64_t>& p, int64_t cols) {
  return !p.empty() && p.back() == cols && shape_numel(p) == cols;
}

}  // namespace

std::vector<int64_t> lower_contiguous_strides(const std::vector<int64_t>& shape) {
  return dsl::dsl_contiguous_strides(shape);
}

std::optional<std::vector<int64_t>> lower_reshape_strides(const std::vector<int64_t>& from,
                                                    const std::vector<int64_t>& stride,
                                                    const std::vector<int64_t>& to) {
  if (shape_numel(from) != shape_numel(to)) return std::nullopt;
  std::vector<int64_t> out(to.size(), 1);
  if (from.empty()) return out;
  int view_d = static_cast<int>(to.size()) - 1;
  int64_t chunk = stride.back(), tensor_n = 1, view_n = 1;
  for (int d = static_cast<int>(from.size()) - 1; d >= 0; --d) {
    tensor_n *= from[static_cast<size_t>(d)];
    const bool chunk_ends =
        d == 0 || (from[static_cast<size_t>(d - 1)] != 1 && stride[static_cast<size_t>(d - 1)] != tensor_n * chunk);
    if (!chunk_ends) continue;
    while (view_d >= 0 && (view_n < tensor_n || to[static_cast<size_t>(view_d)] == 1)) {
      out[static_cast<size_t>(view_d)] = view_n * chunk;
      view_n *= to[static_cast<size_t>(view_d)];
      --view_d;
    }
    if (view_n != tensor_n) return std::nullopt;
    if (d > 0) {
      chunk = stride[static_cast<size_t>(d - 1)];
      tensor_n = view_n = 1;
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

// An elementwise block computing another shape than its ops see (of the same count): an operand
// broadcast in the ops' shape is read through a view in the block's shape, its broadcast dims at
// stride 0, where the reshape keeps the strides expressible.
std::optional<Strided> lower_strided_of(const LowerState& s, const std::string& tensor) {
  if (auto it = s.strided.find(tensor); it != s.strided.end()) return it->second;
  const View v = s.resolve(tensor);
  const std::vector<int64_t>& seen = s.need(tensor).shape;
  if (shape_numel(seen) != s.need(v.base).numel()) return std::nullopt;
  Strided st{v.base, seen, lower_contiguous_strides(seen), 0};
  if (!v.transposed) return st;
  if (seen.size() < 2) return std::nullopt;
  std::vector<int64_t> stored = seen;  // the alias reads the stored tensor with its last two dims swapped
  std::swap(stored[stored.size() - 1], stored[stored.size() - 2]);
  st.strides = lower_contiguous_strides(stored);
  std::swap(st.strides[st.strides.size() - 1], st.strides[st.strides.size() - 2]);
  return st;
}

static std::optional<LoadPlan> seen_broadcast(const LowerState& s, const std::string& tensor, const BlockCtx& ctx,
                                              bool same_shape = false) {
  // same_shape: the block computes what its ops see, and the operand is declared in another shape
  // of its element count (a folded output): read through a view in the shape the op sees
  if (ctx.kind != DraftKind::elementwise || (ctx.seen.empty() && !same_shape)) return std::nullopt;
  const std::vector<int64_t>& space = ctx.seen.empty() ? ctx.shape : ctx.seen;
  const std::vector<int64_t>& seen = s.need(tensor).shape;
  const View v = s.resolve(tensor);
  if (!broadcasts_to(seen, space) || v.transposed) return std::nullopt;
  const std::optional<Strided> st = lower_strided_of(s, tensor);
  if (!st) return std::nullopt;
  std::vector<int64_t> strides(space.size(), 0);  // expanded to the ops' shape
  const size_t lead = space.size() - st->shape.size();
  for (size_t i = 0; i < st->shape.size(); ++i)
    strides[lead + i] = st->shape[i] == space[lead + i] ? st->strides[i] : 0;
  auto r = lower_reshape_strides(space, strides, ctx.shape);
  if (!r) return std::nullopt;
  LoadPlan p;
  p.kind = LoadPlan::Kind::full;
  p.tensor = st->base;
  p.decl = lower_decl_shape(s, st->base);
  p.view = Strided{st->base, ctx.shape, *r, st->offset};
  return p;
}

std::optional<LoadPlan> lower_load_plan(const LowerState& s, const std::string& tensor,
                                        const BlockCtx& ctx, std::string& why) {
  // a DSL view (pass_strided_copies): read whole, in elementwise bodies only (broadcast, or of
  // the block's element count in the block's element order)
  if (auto it = s.strided.find(tensor); it != s.strided.end()) {
    if (auto b = seen_broadcast(s, tensor, ctx)) return b;
    if (ctx.kind != DraftKind::elementwise || !ctx.broadcast ||
        (!broadcasts_to(it->second.shape, ctx.shape) && shape_numel(it->second.shape) != shape_numel(ctx.shape))) {
      why = ctx.kind != DraftKind::elementwise
                ? "'" + tensor + "' is a view at strides of '" + it->second.base + "', which only elementwise stages read"
                : "'" + tensor + "' " + shape_str(it->second.shape) + " (a view of '" + it->second.base +
                      "') cannot be read in an elementwise block computing " + shape_str(ctx.shape);
      return std::nullopt;
    }
    LoadPlan p;
    p.kind = LoadPlan::Kind::full;
    p.tensor = tensor;
    p.decl = it->second.shape;
    return p;
  }
  View v = s.resolve(tensor);
  const problem::Tensor& t = s.need(v.base);
  const std::vector<int64_t>& seen = s.need(tensor).shape;  // the shape the op sees
  LoadPlan p;
  p.tensor = v.base;
  if (t.kind == problem::TensorKind::constant) {
    if (t.value && shape_numel(t.shape) == 1) {
      p.kind = LoadPlan::Kind::constant;
      p.value = *t.value;
      return p;
    }
    why = t.values.empty() ? "constant tensor '" + t.name + "' has no known value"
                           : "constant tensor '" + t.name + "' is a literal of " + std::to_string(t.values.size()) +
                                 " values; expressions read constants of one value";
    return std::nullopt;
  }
  if (v.transposed) {
    why = "'" + tensor + "' is a transposed view, which only GEMM operands can read";
    return std::nullopt;
  }
  if (t.dtype != problem::DType::f32 && t.dtype != problem::DType::f16 &&
      t.dtype != problem::DType::bf16) {
    why = "'" + t.name + "' is " + problem::dtype_name(t.dtype) + "; expressions read f16, bf16 or f32";
    return std::nullopt;
  }
  std::vector<int64_t> decl = lower_decl_shape(s, v.base);
  bool overridden = decl != t.shape;
  bool never_written = t.kind == problem::TensorKind::input || t.kind == problem::TensorKind::parameter ||
                       t.kind == problem::TensorKind::buffer;
  p.decl = decl;
  if (decl == ctx.shape && seen.size() <= ctx.shape.size() && broadcasts_to(seen, ctx.shape) &&
      shape_numel(seen) == shape_numel(ctx.shape)) {
    p.kind = LoadPlan::Kind::full;
    return p;
  }
  // Both the tensor and the block declared with the same folded leading dims (a batched GEMM's
  // [B*H, M, N] read by an elementwise block whose value the next batched GEMM reads the same way),
  // the op seeing [B, H, M, N]: the same elements at the same flat positions.
  if (decl == ctx.shape && seen.size() > ctx.shape.size() && ctx.shape.size() >= 2 &&
      shape_numel(seen) == shape_numel(ctx.shape) && seen[seen.size() - 2] == ctx.shape[ctx.shape.size() - 2] &&
      seen.back() == ctx.shape.back()) {
    p.kind = LoadPlan::Kind::full;
    return p;
  }
  // A full tensor of a batched GEMM over folded leading dims ([B, H, M, N] read as [B*H, M, N]):
  // declared flat when nothing else reads it (a tensor has one declared shape).
  if (!overridden && seen == decl && seen.size() > 3 && ctx.batch > 1 && ctx.shape.size() == 3 &&
      shape_numel(seen) == shape_numel(ctx.shape) && seen[seen.size() - 2] == ctx.rows && seen.back() == ctx.cols &&
      s.consumers(v.base).size() == 1 && !s.is_output(v.base)) {
    p.kind = LoadPlan::Kind::full;
    p.decl = ctx.shape;
    return p;
  }
  // A tensor declared as exactly the shape the op sees (never reshaped, or a declared view such
  // as batch_norm's [C, 1, 1]) broadcasts NumPy-style.
  if (ctx.broadcast && decl == seen && broadcasts_to(seen, ctx.shape)) {
    p.kind = LoadPlan::Kind::full;
    return p;
  }
  if (ctx.vectors && broadcasts_to(seen, ctx.shape)) {
    auto is_vec = [&](int64_t len) {
      return decl == std::vector<int64_t>{len} ||
             (ctx.batch > 1 && decl == std::vector<int64_t>{ctx.batch, len});
    };
    if (col_like(seen, ctx.cols)) {
      if (is_vec(ctx.cols)) {
        p.kind = LoadPlan::Kind::col;
        return p;
      }
      if (never_written && !overridden) {  // [1, N] -> [N] keeps numpy broadcasting intact
        p.kind = LoadPlan::Kind::col;
        p.decl = {ctx.cols};
        return p;
      }
    }
    // One value per row: the op sees [..., R, 1] (or [R] where the block is [R]).
    bool row_seen = !seen.empty() && seen.back() == 1 &&
                    (shape_numel(seen) == ctx.rows || shape_numel(seen) == ctx.rows * ctx.batch);
    if (row_seen && (is_vec(ctx.rows) || (ctx.batch > 1 && decl == std::vector<int64_t>{ctx.batch, ctx.rows}))) {
      p.kind = LoadPlan::Kind::row;
      return p;
    }
  }
  if (auto b = seen_broadcast(s, tensor, ctx, /*same_shape=*/true)) return b;
  why = "'" + tensor + "' " + shape_str(seen) + " cannot be read in a " + draft_kind_name(ctx.kind) +
        " block computing " + shape_str(ctx.shape);
  return std::nullopt;
}

BlockCtx lower_block_ctx(const LowerState& s, const Draft& d) {
  BlockCtx c;
  c.kind = d.kind;
  if (d.kind == DraftKind::gemm) {
    const GemmPlan& g = d.gemm;
    c.shape = g.out_shape();
    c.rows = g.m;
    c.cols = g.n;
    c.batch = g.batch;
    return c;
  }
  if (d.kind == DraftKind::conv) {  // [N, .., K]: rows are output pixels, columns output channels
    c.shape = lower_decl_shape(s, s.resolve(d.value).base);
    c.cols = c.shape.back();
    c.rows = shape_numel(c.shape) / c.cols;
    return c;
  }
  if (d.kind == DraftKind::window) {
    // the window op's own [N, C, spatial...] (a returned squeeze of it is declared so: pass_emit),
    // full reads broadcast to it ([C, 1, 1] per channel)
    c.shape = s.need(s.ops[static_cast<size_t>(d.anchor)].outputs.at(0)).shape;
    c.cols = c.shape.back();
    c.rows = shape_numel(c.shape) / c.cols;
    c.vectors = false;
    c.broadcast = true;
    return c;
  }
  std::string value = !d.value.empty() ? d.value
                      : !d.ops.empty() ? s.ops[static_cast<size_t>(d.ops.front())].outputs.at(0)
                                       : d.dst;
  c.shape = lower_decl_shape(s, s.resolve(value).base);
  if (d.kind == DraftKind::rowwise) {
    const problem::Op& anchor = s.ops[static_cast<size_t>(d.anchor)];
    const auto& in = lower_decl_shape(s, s.resolve(anchor.inputs.at(0).tensor).base);
    c.cols = in.empty() ? 1 : in.back();
    c.rows = c.cols ? shape_numel(in) / c.cols : 0;
    if (d.op == "group_norm") {
      const auto geo = dsl::dsl_rowwise_geometry(d.op, in, static_cast<int64_t>(attr_number(anchor, "num_groups", 0)));
      c.rows = geo.rows;
      c.cols = geo.cols;
    }
    c.vectors = dsl::dsl_rowwise_keeps_shape(d.op);
    return c;
  }
  if (d.kind == DraftKind::elementwise && c.shape.size() > 3) {
    // The stored results declared with folded leading dims (what a batched GEMM reads, [B*H, M, N]
    // for [B, H, M, N]): the block computes that shape; the element positions are the same.
    std::optional<std::vector<int64_t>> folded;
    bool all = true;
    for (const auto& out : draft_escaping(s, d)) {
      const auto od = lower_decl_shape(s, s.resolve(out).base);
      const bool fold = od.size() >= 2 && od.size() < c.shape.size() && shape_numel(od) == shape_numel(c.shape) &&
                        od[od.size() - 2] == c.shape[c.shape.size() - 2] && od.back() == c.shape.back();
      all = all && fold && (!folded || *folded == od);
      if (fold && !folded) folded = od;
    }
    if (all && folded) c.shape = *folded;
  }
  c.cols = c.shape.empty() ? 1 : c.shape.back();
  c.rows = c.cols ? shape_numel(c.shape) / c.cols : 0;
  c.vectors = d.kind == DraftKind::elementwise;
  c.broadcast = d.kind == DraftKind::elementwise;
  if (d.kind == DraftKind::elementwise) {
    const auto& seen = s.need(value).shape;
    if (seen != c.shape && shape_numel(seen) == shape_numel(c.shape)) c.seen = seen;
  }
  return c;
}

BlockCtx lower_prologue_ctx(const std::vector<int64_t>& shape) {
  BlockCtx c;
  c.kind = DraftKind::rowwise;
  c.shape = shape;
  c.cols = shape.empty() ? 1 : shape.back();
  c.rows = c.cols ? shape_numel(shape) / c.cols : 0;
  c.vectors = true;
  return c;
}

// ---- ops ------------------------------------------------------------------------------------

bool lower_expr_needs_index(const problem::Op& op) {
  return op.op == "causal_mask" || op.op == "tril" || op.op == "triu" || op.op == "channel_pad";
}

bool lower_expr_supported(const problem::Op& op, std::string& why) {
  const std::string& n = op.op;
  if (n == "pow") {
    if (op.inputs.size() != 2 || op.inputs[1].is_tensor()) {
      why = "pow with a tensor exponent has no μCUTLASS function";
      return false;
    }
    double e = *op.inputs[1].scalar;
    if (e != 1 && e != 2 && e != 3 && e != 0.5 && e != -0.5 && e != -1) {
      why = "pow with exponent " + std::to_string(e) + " has no μCUTLASS function (2, 3, 0.5, -0.5, -1 do)";
      return false;
    }
  }
  if (n == "div" && !attr_string(op, "rounding_mode", "").empty()) {
    why = "div with rounding_mode has no μCUTLASS function";
    return false;
  }
  if (n == "to") {
    std::string dt = attr_string(op, "dtype", "f32");
    if (dt != "f32" && dt != "f16" && dt != "bf16") {
      why = "conversion to " + dt + " is not expressible (stages write f16, bf16 or f32)";
      return false;
    }
  }
  if (n == "clamp" && op.inputs.size() > 1) {
    why = "clamp with tensor bounds has no μCUTLASS function";
    return false;
  }
  return true;
}

ExprPtr lower_expr_op(const problem::Op& op, const std::function<ExprPtr(size_t)>& in) {
  const std::string& n = op.op;
  auto x = [&] { return in(0); };
  auto un = [&](Fn f, std::vector<double> params = {}) { return ex_fn(f, {x()}, std::move(params)); };
  if (n == "add" || n == "sub") {
    double alpha = attr_number(op, "alpha", 1);
    ExprPtr b = in(1);
    if (alpha != 1) b = ex_bin(BinOp::mul, ex_const(alpha), b);
    return ex_bin(n == "add" ? BinOp::add : BinOp::sub, x(), b);
  }
  if (n == "strided_copy") return x();  // the view's element (pass_strided_copies)
  if (n == "mul") return ex_bin(BinOp::mul, x(), in(1));
  if (n == "div") return ex_bin(BinOp::div, x(), in(1));
  if (n == "maximum") return ex_fn(Fn::max, {x(), in(1)});
  if (n == "minimum") return ex_fn(Fn::min, {x(), in(1)});
  if (n == "pow") {
    double e = *op.inputs[1].scalar;
    if (e == 1) return x();
    if (e == 2) return ex_bin(BinOp::mul, x(), x());
    if (e == 3) return ex_bin(BinOp::mul, ex_bin(BinOp::mul, x(), x()), x());
    if (e == 0.5) return un(Fn::sqrt);
    if (e == -0.5) return un(Fn::rsqrt);
    return ex_bin(BinOp::div, ex_const(1), x());
  }
  if (n == "batch_norm") {
    // eval mode (pass_expand_ops): (x - mean) * rsqrt(var + eps) [* weight] [+ bias]
    ExprPtr e = ex_bin(BinOp::mul, ex_bin(BinOp::sub, x(), in(1)),
                       ex_fn(Fn::rsqrt, {ex_bin(BinOp::add, in(2), ex_const(attr_number(op, "eps", 1e-5)))}));
    if (op.inputs.size() > 3 && op.inputs[3].is_tensor()) e = ex_bin(BinOp::mul, e, in(3));
    if (op.inputs.size() > 4 && op.inputs[4].is_tensor()) e = ex_bin(BinOp::add, e, in(4));
    return e;
  }
  if (n == "causal_mask" || n == "tril" || n == "triu") {
    // x where col <= row + diagonal (tril: fill 0; triu: where col >= row + diagonal), else fill
    // (causal_mask: pass_expand_ops, attention's is_causal)
    const double diag = attr_number(op, "diagonal", 0);
    ExprPtr limit = ex_index(dsl::LoadMode::row);
    if (diag > 0) limit = ex_bin(BinOp::add, limit, ex_const(diag));
    if (diag < 0) limit = ex_bin(BinOp::sub, limit, ex_const(-diag));
    const double fill = n == "causal_mask" ? attr_number(op, "fill", -std::numeric_limits<double>::infinity()) : 0;
    return ex_fn(Fn::where, {ex_fn(n == "triu" ? Fn::ge : Fn::le, {ex_index(dsl::LoadMode::col), limit}), x(),
                             ex_const(fill)});
  }
  if (n == "channel_pad") {
    // input j at channel (last) index j, 0 past the inputs (pass_match_conv's channel padding)
    ExprPtr e = ex_const(0);
    for (size_t j = op.inputs.size(); j-- > 0;)
      e = ex_fn(Fn::where, {ex_fn(Fn::eq, {ex_index(dsl::LoadMode::col), ex_const(static_cast<double>(j))}), in(j), e});
    return e;
  }
  if (n == "neg") return un(Fn::neg);
  if (n == "abs") return un(Fn::abs);
  if (n == "exp") return un(Fn::exp);
  if (n == "log") return un(Fn::log);
  if (n == "sqrt") return un(Fn::sqrt);
  if (n == "rsqrt") return un(Fn::rsqrt);
  if (n == "reciprocal") return ex_bin(BinOp::div, ex_const(1), x());
  if (n == "square") return ex_bin(BinOp::mul, x(), x());
  if (n == "tanh") return un(Fn::tanh);
  if (n == "sigmoid") return un(Fn::sigmoid);
  if (n == "relu") return un(Fn::relu);
  if (n == "relu6") return un(Fn::hardtanh, {0, 6});
  if (n == "leaky_relu") return un(Fn::leaky_relu, {attr_number(op, "negative_slope", 0.01)});
  if (n == "gelu") return un(attr_string(op, "approximate", "none") == "tanh" ? Fn::gelu_tanh : Fn::gelu);
  if (n == "silu") return un(Fn::silu);
  if (n == "mish") return un(Fn::mish);
  if (n == "softplus") return un(Fn::softplus, {attr_number(op, "beta", 1), attr_number(op, "threshold", 20)});
  if (n == "elu") return un(Fn::elu, {attr_number(op, "alpha", 1)});
  if (n == "selu") return un(Fn::selu);
  if (n == "celu") {
    // celu(x) = max(0, x) + min(0, a*(e^(x/a) - 1))
    double a = attr_number(op, "alpha", 1);
    ExprPtr e = ex_fn(Fn::exp, {ex_bin(BinOp::div, x(), ex_const(a))});
    ExprPtr neg = ex_bin(BinOp::mul, ex_const(a), ex_bin(BinOp::sub, e, ex_const(1)));
    return ex_bin(BinOp::add, un(Fn::relu), ex_fn(Fn::min, {neg, ex_const(0)}));
  }
  if (n == "softsign") return un(Fn::softsign);
  if (n == "hardtanh") return un(Fn::hardtanh, {attr_number(op, "min_val", -1), attr_number(op, "max_val", 1)});
  if (n == "clamp") {
    auto lo = attr_opt_number(op, "min");
    auto hi = attr_opt_number(op, "max");
    if (lo && hi) return un(Fn::clamp, {*lo, *hi});
    if (lo) return ex_fn(Fn::max, {x(), ex_const(*lo)});
    if (hi) return ex_fn(Fn::min, {x(), ex_const(*hi)});
    return x();
  }
  if (n == "hardswish") return un(Fn::hardswish);
  if (n == "hardsigmoid") return un(Fn::hardsigmoid);
  if (n == "log_sigmoid") {
    // log(sigmoid(x)) = -softplus(-x)
    return ex_fn(Fn::neg, {ex_fn(Fn::softplus, {ex_fn(Fn::neg, {x()})}, {1, 20})});
  }
  // `to` between float types: the value is unchanged, the store converts.
  return x();
}

}  // namespace ucut::lower
