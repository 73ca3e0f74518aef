#include "dsl/interp.h"

#include "dsl/kinds/kinds.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <set>

#include "dsl/names.h"
#include "dsl/simt_plan.h"

namespace ucut::dsl {
namespace {

double prm(const std::vector<double>& p, size_t i, double d) { return i < p.size() ? p[i] : d; }

Result<double> eval(const Program& p, const Expr& e, double acc, const InterpLoad& load,
                    const std::vector<double>& scalars, const std::map<std::string, double>& locals) {
  switch (e.kind) {
    case Expr::Kind::acc: return acc;
    case Expr::Kind::constant: return e.value;
    case Expr::Kind::scalar:
      for (size_t i = 0; i < p.scalars.size(); ++i)
        if (p.scalars[i].name == e.name) return i < scalars.size() ? scalars[i] : p.scalars[i].default_value;
      return make_error(ErrorCode::invalid_input, "unknown scalar '" + e.name + "'");
    case Expr::Kind::load:
    case Expr::Kind::index: return load(e);
    case Expr::Kind::local: {
      auto it = locals.find(e.name);
      if (it == locals.end()) return make_error(ErrorCode::invalid_input, "unknown name '" + e.name + "'");
      return it->second;
    }
    case Expr::Kind::unary:
    case Expr::Kind::binary:
    case Expr::Kind::call: {
      std::vector<double> a;
      for (const auto& arg : e.args) {
        auto v = eval(p, *arg, acc, load, scalars, locals);
        if (!v) return v;
        a.push_back(*v);
      }
      if (e.kind == Expr::Kind::binary) {
        switch (e.op) {
          case BinOp::add: return a[0] + a[1];
          case BinOp::sub: return a[0] - a[1];
          case BinOp::mul: return a[0] * a[1];
          case BinOp::div: return a[0] / a[1];
        }
      }
      return interp_fn(e.fn, a[0], a.size() > 1 ? a[1] : 0.0, a.size() > 2 ? a[2] : 0.0, e.params);
    }
  }
  return make_error(ErrorCode::internal, "unknown expression kind");
}

}  // namespace

double interp_fn(Fn fn, double x, double y, double z, const std::vector<double>& p) {
  const double pi = 3.14159265358979323846;
  switch (fn) {
    case Fn::neg: return -x;
    case Fn::abs: return std::fabs(x);
    case Fn::exp: return std::exp(x);
    case Fn::log: return std::log(x);
    case Fn::sqrt: return std::sqrt(x);
    case Fn::rsqrt: return 1 / std::sqrt(x);
    case Fn::relu: return x > 0 ? x : 0;
    case Fn::leaky_relu: return x >= 0 ? x : prm(p, 0, 0.01) * x;
    case Fn::gelu: return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
    case Fn::gelu_tanh: return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
    case Fn::silu: return x / (1 + std::exp(-x));
    case Fn::sigmoid: return 1 / (1 + std::exp(-x));
    case Fn::tanh: return std::tanh(x);
    case Fn::hardtanh: return std::min(std::max(x, prm(p, 0, -1)), prm(p, 1, 1));
    case Fn::clamp: return std::min(std::max(x, prm(p, 0, 0)), prm(p, 1, 0));
    case Fn::hardswish: return x * std::min(std::max(x + 3, 0.0), 6.0) / 6;
    case Fn::hardsigmoid: return std::min(std::max(x + 3, 0.0), 6.0) / 6;
    case Fn::mish: return x * std::tanh(std::log1p(std::exp(x)));
    case Fn::softplus: {
      double b = prm(p, 0, 1), t = prm(p, 1, 20);
      return b * x > t ? x : std::log1p(std::exp(b * x)) / b;
    }
    case Fn::elu: return x > 0 ? x : prm(p, 0, 1) * std::expm1(x);
    case Fn::selu: return 1.0507009873554805 * (x > 0 ? x : 1.6732632423543772 * std::expm1(x));
    case Fn::softsign: return x / (1 + std::fabs(x));
    case Fn::tf32:
    case Fn::tf32_trunc: {
      // on the float value: keep 10 mantissa bits (rna: add half of the dropped unit first)
      const float f = static_cast<float>(x);
      if (!std::isfinite(f)) return x;
      uint32_t u;
      std::memcpy(&u, &f, 4);
      if (fn == Fn::tf32) u += 0x1000u;
      u &= 0xffffe000u;
      float r;
      std::memcpy(&r, &u, 4);
      return r;
    }
    case Fn::round_bf16: {
      // on the float value: round to nearest even at bit 16, as cvt.rn.bf16.f32 does
      const float f = static_cast<float>(x);
      if (std::isnan(f)) return x;
      uint32_t u;
      std::memcpy(&u, &f, 4);
      u += 0x7fffu + ((u >> 16) & 1u);
      u &= 0xffff0000u;
      float r;
      std::memcpy(&r, &u, 4);
      return r;
    }
    case Fn::round_f16: {
      // on the float value: 11 significant bits (normal) or multiples of 2^-24 (subnormal),
      // nearest even; beyond f16's largest finite value (65504) plus half a unit, infinity
      const double f = static_cast<double>(static_cast<float>(x));
      if (!std::isfinite(f) || f == 0) return f;
      const double a = std::fabs(f);
      if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), f);
      int e = 0;
      std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
      const double q = a < std::ldexp(1.0, -14) ? std::ldexp(1.0, -24) : std::ldexp(1.0, e - 11);
      return std::copysign(std::nearbyint(a / q) * q, f);
    }
    case Fn::min: return std::min(x, y);
    case Fn::max: return std::max(x, y);
    case Fn::lt: return x < y ? 1 : 0;
    case Fn::le: return x <= y ? 1 : 0;
    case Fn::gt: return x > y ? 1 : 0;
    case Fn::ge: return x >= y ? 1 : 0;
    case Fn::eq: return x == y ? 1 : 0;
    case Fn::ne: return x != y ? 1 : 0;
    case Fn::where: return x != 0 ? y : z;
  }
  return 0;
}

Result<std::map<std::string, double>> interp_epilogue_stores(const Program& p, const Epilogue& e,
                                                             double acc, const InterpLoad& load,
                                                             const std::vector<double>& scalars) {
  std::map<std::string, double> locals, stores;
  for (const auto& st : e.stmts) {
    auto v = eval(p, *st.value, acc, load, scalars, locals);
    if (!v) return v.error();
    if (st.kind == EpilogueStmt::Kind::let) locals[st.name] = *v;
    else if (st.kind == EpilogueStmt::Kind::store) stores[st.name] = *v;
    else return make_error(ErrorCode::unsupported, "reductions inside epilogues are not interpreted");
  }
  return stores;
}

Result<double> interp_epilogue(const Program& p, const Epilogue& e, double acc, const InterpLoad& load,
                               const std::vector<double>& scalars) {
  if (e.stmts.empty()) return acc;
  auto s = interp_epilogue_stores(p, e, acc, load, scalars);
  if (!s) return s.error();
  if (s->size() != 1) return make_error(ErrorCode::invalid_input, "an epilogue must store exactly one value");
  return s->begin()->second;
}

namespace {

using Vec = std::vector<double>;

Result<const Vec*> get(const InterpTensors& ts, const std::string& n) {
  auto it = ts.find(n);
  if (it == ts.end()) return make_error(ErrorCode::not_found, "no data for tensor '" + n + "'");
  return &it->second;
}

double attr(const std::map<std::string, double>& a, const char* k, double d) {
  auto it = a.find(k);
  return it == a.end() ? d : it->second;
}

Status run_rowwise(const Program& p, const Stage& st, const RowwiseStage& rs, InterpTensors& ts,
                   const Vec& sc) {
  const Tensor* in = p.find_tensor(rs.input);
  if (!in || in->shape.empty()) return make_error(ErrorCode::invalid_input, "rowwise: bad input");
  auto xv = get(ts, rs.input);
  if (!xv) return xv.error();
  const bool group = rs.op == "group_norm";
  const int64_t groups = static_cast<int64_t>(attr(rs.attrs, "groups", 1));
  const RowGeometry geo = dsl_rowwise_geometry(rs.op, in->shape, groups);
  if (geo.rows == 0) return make_error(ErrorCode::invalid_input, "rowwise: bad input geometry");
  const int64_t cols = geo.cols, rows = geo.rows;
  // group_norm's weight/bias index: the channel of (row, col)
  const int64_t spatial = group ? in->numel() / (in->shape[0] * in->shape[1]) : 1;
  auto channel = [&](int64_t r, int64_t c) { return group ? (r % groups) * (cols / spatial) + c / spatial : c; };
  const Vec* w = nullptr;
  const Vec* b = nullptr;
  if (rs.extra.size() > 0) { auto r = get(ts, rs.extra[0]); if (!r) return r.error(); w = *r; }
  if (rs.extra.size() > 1) { auto r = get(ts, rs.extra[1]); if (!r) return r.error(); b = *r; }
  const std::string& op = rs.op;
  const bool scalar = !dsl_rowwise_keeps_shape(op);
  double eps = attr(rs.attrs, "eps", op == "layer_norm" || group ? 1e-5 : op == "rms_norm" ? 1e-6 : 1e-12);
  Vec out(scalar ? rows : rows * cols);
  int64_t row = 0, col = 0;
  // `row`: the flat row within its matrix (the second-to-last extent), `col` the column
  const int64_t mrows = dsl_matrix_rows(in->shape);
  // an epilogue reads per result (one a row for the reductions: full reads index [rows]), a
  // prologue per input element (full reads index [rows, cols])
  auto reads = [&](bool per_row) -> InterpLoad {
    return [&, per_row](const Expr& e) -> Result<double> {
      if (e.kind == Expr::Kind::index) return static_cast<double>(e.mode == LoadMode::row ? row % mrows : col);
      auto t = get(ts, e.name);
      if (!t) return t.error();
      int64_t i = e.mode == LoadMode::row ? row : e.mode == LoadMode::col ? col : row * (per_row ? 1 : cols) + col;
      if (i < 0 || i >= static_cast<int64_t>((*t)->size()))
        return make_error(ErrorCode::invalid_input, "read of '" + e.name + "' out of range");
      return (**t)[i];
    };
  };
  InterpLoad load = reads(scalar), pro_load = reads(false);
  if (!rs.operands.empty()) {
    // the ops over several inputs: one value per row, no prologue
    std::vector<const Vec*> more;
    for (const auto& n : rs.operands) {
      auto r = get(ts, n);
      if (!r) return r.error();
      more.push_back(*r);
    }
    const double e = attr(rs.attrs, "eps", op == "cosine_similarity" ? 1e-8 : 1e-6);
    const double margin = attr(rs.attrs, "margin", 1);
    col = 0;
    for (row = 0; row < rows; ++row) {
      double xy = 0, xx = 0, yy = 0, d1 = 0, d2 = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const int64_t i = row * cols + c;
        const double x = (**xv)[i], y = (*more[0])[i];
        xy += x * y;
        xx += x * x;
        yy += y * y;
        d1 += (x - y + e) * (x - y + e);
        if (more.size() > 1) d2 += (x - (*more[1])[i] + e) * (x - (*more[1])[i] + e);
      }
      double r;
      if (op == "cosine_similarity") r = xy / (std::max(std::sqrt(xx), e) * std::max(std::sqrt(yy), e));
      else if (op == "pairwise_distance") r = std::sqrt(d1);
      else if (op == "triplet_margin") r = std::max(margin + std::sqrt(d1) - std::sqrt(d2), 0.0);
      else return make_error(ErrorCode::unsupported, "rowwise op '" + op + "' is not interpreted");
      auto v = interp_epilogue(p, rs.epilogue, r, load, sc);
      if (!v) return v.error();
      out[row] = *v;
    }
    ts[st.outputs.at(0)] = std::move(out);
    return ok_status();
  }
  for (row = 0; row < rows; ++row) {
    Vec x(cols);
    for (col = 0; col < cols; ++col) {
      auto v = interp_epilogue(p, rs.prologue, (**xv)[row * cols + col], pro_load, sc);
      if (!v) return v.error();
      x[col] = *v;
    }
    double mx = -std::numeric_limits<double>::infinity(), mn = -mx, sum = 0, sq = 0, sa = 0;
    int64_t amax = 0, amin = 0;
    for (int64_t c = 0; c < cols; ++c) {
      if (x[c] > mx) { mx = x[c]; amax = c; }
      if (x[c] < mn) { mn = x[c]; amin = c; }
      sum += x[c];
      sq += x[c] * x[c];
      sa += std::fabs(x[c]);
    }
    double se = 0;
    for (double v : x) se += std::exp(v - mx);
    const double mean = sum / cols;
    double var = 0;
    for (double v : x) var += (v - mean) * (v - mean);
    var /= cols;
    col = 0;
    if (scalar) {
      double r = op == "logsumexp" ? mx + std::log(se) : op == "sum" ? sum : op == "mean" ? mean
                 : op == "max" ? mx : op == "min" ? mn : op == "argmax" ? double(amax) : double(amin);
      if (op != "argmax" && op != "argmin") {
        auto v = interp_epilogue(p, rs.epilogue, r, load, sc);
        if (!v) return v.error();
        r = *v;
      }
      out[row] = r;
      continue;
    }
    for (col = 0; col < cols; ++col) {
      double y, v = x[col];
      if (op == "softmax") y = std::exp(v - mx) / se;
      else if (op == "log_softmax") y = v - mx - std::log(se);
      else if (op == "layer_norm" || group) y = (v - mean) / std::sqrt(var + eps);
      else if (op == "rms_norm") y = v / std::sqrt(sq / cols + eps);
      else if (op == "l2_normalize") y = v / std::max(std::sqrt(sq), eps);
      else if (op == "l1_normalize") y = v / std::max(sa, eps);
      else return make_error(ErrorCode::unsupported, "rowwise op '" + op + "' is not interpreted");
      if (w) y *= (*w)[channel(row, col)];
      if (b) y += (*b)[channel(row, col)];
      auto e = interp_epilogue(p, rs.epilogue, y, load, sc);
      if (!e) return e.error();
      out[row * cols + col] = *e;
    }
  }
  ts[st.outputs.at(0)] = std::move(out);
  return ok_status();
}

double loss_term(const std::string& op, double x, double t, const std::map<std::string, double>& a) {
  double d = x - t;
  if (op == "mse") return d * d;
  if (op == "l1") return std::fabs(d);
  if (op == "huber") {
    double dl = attr(a, "delta", 1), ad = std::fabs(d);
    return ad < dl ? 0.5 * d * d : dl * (ad - 0.5 * dl);
  }
  if (op == "smooth_l1") {
    double bt = attr(a, "beta", 1), ad = std::fabs(d);
    return ad < bt ? 0.5 * d * d / bt : ad - 0.5 * bt;
  }
  if (op == "kl_div") {
    if (attr(a, "log_target", 0) != 0) return std::exp(t) * (t - x);
    return t > 0 ? t * (std::log(t) - x) : 0;
  }
  if (op == "hinge") return std::max(1 - x * t, 0.0);
  return x;
}

Status run_reduce(const Program& p, const Stage& st, const ReduceStage& rs, InterpTensors& ts,
                  const Vec& sc) {
  if (rs.inputs.empty()) return make_error(ErrorCode::invalid_input, "reduce: no input");
  const Tensor* in = p.find_tensor(rs.inputs[0]);
  auto xv = get(ts, rs.inputs[0]);
  if (!in || !xv) return make_error(ErrorCode::invalid_input, "reduce: bad input");
  const Vec& x = **xv;
  const int red = dsl_loss_reduction(rs.reduction);
  Vec out;
  if (rs.op == "cross_entropy") {
    auto tv = get(ts, rs.inputs.at(1));
    if (!tv) return tv.error();
    const int64_t rows = in->shape.at(0), cols = in->shape.at(1);
    const double ignore = attr(rs.attrs, "ignore_index", -100);
    double total = 0, count = 0;
    for (int64_t r = 0; r < rows; ++r) {
      double t = (**tv)[r];
      if (t == ignore) continue;
      double mx = -std::numeric_limits<double>::infinity(), se = 0;
      for (int64_t c = 0; c < cols; ++c) mx = std::max(mx, x[r * cols + c]);
      for (int64_t c = 0; c < cols; ++c) se += std::exp(x[r * cols + c] - mx);
      total += mx + std::log(se) - x[r * cols + static_cast<int64_t>(t)];
      count += 1;
    }
    out = {red == 0 ? total / count : total};
  } else if (rs.inputs.size() == 2) {
    auto tv = get(ts, rs.inputs[1]);
    if (!tv) return tv.error();
    double total = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      auto v = interp_epilogue(p, rs.prologue, x[i], [](const Expr&) -> Result<double> {
        return make_error(ErrorCode::unsupported, "reduce prologues cannot read tensors");
      }, sc);
      if (!v) return v.error();
      total += loss_term(rs.op, *v, (**tv)[i], rs.attrs);
    }
    out = {red == 0 ? total / x.size() : red == 2 ? total / in->shape.at(0) : total};
  } else {
    const int rank = static_cast<int>(in->shape.size());
    std::set<int> dims;
    for (int d : rs.dims) dims.insert(d < 0 ? d + rank : d);
    if (dims.empty())
      for (int d = 0; d < rank; ++d) dims.insert(d);
    int64_t n_out = 1, r_total = 1;
    for (int d = 0; d < rank; ++d) (dims.count(d) ? r_total : n_out) *= in->shape[d];
    // argmax/argmin, max/min with indices: the extreme value and the index of its first
    // occurrence along the reduced dim (a NaN is the extreme); logsumexp: max + log sum exp
    const bool arg = dsl_reduce_writes_indices(rs.op, st.outputs.size());
    const bool upper = rs.op == "max" || rs.op == "argmax" || rs.op == "logsumexp";
    const double init = upper ? -INFINITY : rs.op == "min" || rs.op == "argmin" ? INFINITY : rs.op == "prod" ? 1 : 0;
    out.assign(n_out, init);
    Vec index(n_out, -1);
    std::vector<int64_t> out_of(x.size());
    Vec val(x.size());
    for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
      int64_t rem = i, o = 0, mul = 1, rc = 0, rmul = 1;
      for (int d = rank - 1; d >= 0; --d) {
        int64_t c = rem % in->shape[d];
        rem /= in->shape[d];
        if (!dims.count(d)) { o += c * mul; mul *= in->shape[d]; }
        else { rc += c * rmul; rmul *= in->shape[d]; }
      }
      auto v = interp_epilogue(p, rs.prologue, x[i], [](const Expr&) -> Result<double> {
        return make_error(ErrorCode::unsupported, "reduce prologues cannot read tensors");
      }, sc);
      if (!v) return v.error();
      out_of[static_cast<size_t>(i)] = o;
      val[static_cast<size_t>(i)] = *v;
      double& a = out[o];
      if (arg) {
        const bool better = !std::isnan(a) && (std::isnan(*v) || (upper ? *v > a : *v < a) || index[o] < 0);
        if (better) { a = *v; index[o] = static_cast<double>(rc); }
      } else {
        a = upper ? std::max(a, *v) : rs.op == "min" ? std::min(a, *v) : rs.op == "prod" ? a * *v : a + *v;
      }
    }
    if (rs.op == "logsumexp") {
      Vec se(n_out, 0);
      for (size_t i = 0; i < x.size(); ++i) se[out_of[i]] += std::exp(val[i] - out[out_of[i]]);
      for (int64_t o = 0; o < n_out; ++o)
        if (out[o] != -INFINITY) out[o] += std::log(se[o]);
    }
    if (rs.op == "mean")
      for (auto& v : out) v /= static_cast<double>(r_total);
    if (arg) {
      if (st.outputs.size() == 2) ts[st.outputs.at(1)] = index;  // max/min: values and indices
      else out = index;                                             // argmax/argmin
      ts[st.outputs.at(0)] = std::move(out);
      return ok_status();  // no epilogue
    }
  }
  for (size_t o = 0; o < out.size(); ++o) {
    auto v = interp_epilogue(p, rs.epilogue, out[o], [&](const Expr& e) -> Result<double> {
      if (e.kind == Expr::Kind::index)
        return make_error(ErrorCode::invalid_input, "a reduce stage's values have no row and column");
      auto t = get(ts, e.name);
      if (!t) return t.error();
      return (**t).at(o);
    }, sc);
    if (!v) return v.error();
    out[o] = *v;
  }
  ts[st.outputs.at(0)] = std::move(out);
  return ok_status();
}

Status run_scan(const Program& p, const Stage& st, const ScanStage& s, InterpTensors& ts) {
  const Tensor* in = p.find_tensor(s.input);
  auto xv = get(ts, s.input);
  if (!in || !xv) return make_error(ErrorCode::invalid_input, "scan: bad input");
  const Vec* m = nullptr;
  if (!s.mask.empty()) { auto r = get(ts, s.mask); if (!r) return r.error(); m = *r; }
  const int rank = static_cast<int>(in->shape.size());
  const int dim = s.dim < 0 ? s.dim + rank : s.dim;
  int64_t outer = 1, inner = 1, len = in->shape.at(dim);
  for (int d = 0; d < dim; ++d) outer *= in->shape[d];
  for (int d = dim + 1; d < rank; ++d) inner *= in->shape[d];
  const bool prod = s.op == "cumprod";
  Vec out((**xv).size());
  if (s.knobs.order == ScanOrder::torch && inner == 1) {
    // PyTorch's CUDA row scan in fp32, as its threads run it (ATen ScanUtils.cuh): chunks of
    // 2 * nx elements (past the row's end: the identity), the running total folded into the
    // chunk's first element, then Sklansky steps m = 0..l where thread x (of nx) updates element
    // ti = ((x >> m) << (m + 1)) + 2^m + x % 2^m from element ((x >> m) << (m + 1)) + 2^m - 1.
    const int l = simt_torch_scan_log_threads_x(outer, len);
    const int64_t nx = int64_t{1} << l;
    const float id = prod ? 1.f : 0.f;
    auto op = [prod](float a, float b) { return prod ? a * b : a + b; };
    // exclusive (cumsum only): what PyTorch computes for cumsum(x) - x, the inclusive sum minus
    // the element, rounded once more
    std::vector<float> buf(static_cast<size_t>(2 * nx)), elem(buf.size());
    for (int64_t o = 0; o < outer; ++o) {
      float total = id;
      for (int64_t b = 0; b < len; b += 2 * nx) {
        for (int64_t j = 0; j < 2 * nx; ++j) {
          const int64_t q = b + j;
          float e = id;
          if (q < len) {
            const int64_t idx = o * len + (s.reverse ? len - 1 - q : q);
            e = static_cast<float>((**xv)[idx]);
            if (m && (*m)[idx] == 0) e = id;
          }
          buf[static_cast<size_t>(j)] = e;
          elem[static_cast<size_t>(j)] = e;
        }
        buf[0] = op(buf[0], total);
        for (int mm = 0; mm <= l; ++mm) {
          const int64_t sz = int64_t{1} << mm;
          for (int64_t x = 0; x < nx; ++x) {
            const int64_t a = ((x >> mm) << (mm + 1)) | sz;
            const int64_t ti = a + x % sz, si = a - 1;
            buf[static_cast<size_t>(ti)] = op(buf[static_cast<size_t>(ti)], buf[static_cast<size_t>(si)]);
          }
        }
        for (int64_t j = 0; j < 2 * nx && b + j < len; ++j) {
          const float y = buf[static_cast<size_t>(j)];
          out[static_cast<size_t>(o * len + (s.reverse ? len - 1 - (b + j) : b + j))] =
              s.exclusive ? y - elem[static_cast<size_t>(j)] : y;
        }
        total = buf[static_cast<size_t>(2 * nx - 1)];
      }
    }
    ts[st.outputs.at(0)] = std::move(out);
    return ok_status();
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      double run = prod ? 1 : 0;
      for (int64_t l = 0; l < len; ++l) {
        int64_t ll = s.reverse ? len - 1 - l : l;
        int64_t idx = (o * len + ll) * inner + i;
        double e = (**xv)[idx];
        if (m && (*m)[idx] == 0) e = prod ? 1 : 0;
        if (s.exclusive) { out[idx] = run; run = prod ? run * e : run + e; }
        else { run = prod ? run * e : run + e; out[idx] = run; }
      }
    }
  ts[st.outputs.at(0)] = std::move(out);
  return ok_status();
}

Status run_elementwise(const Program& p, const Stage& st, const ElementwiseStage& es, InterpTensors& ts,
                       const Vec& sc) {
  const Tensor* out0 = p.find_tensor(st.outputs.at(0));
  if (!out0) return make_error(ErrorCode::invalid_input, "elementwise: unknown output");
  std::vector<int64_t> os = out0->shape.empty() ? std::vector<int64_t>{1} : out0->shape;
  const int64_t numel = out0->numel(), last = os.back();
  std::map<std::string, Vec> outs;
  int64_t idx = 0;
  const int64_t mrows = dsl_matrix_rows(os);
  InterpLoad load = [&](const Expr& e) -> Result<double> {
    if (e.kind == Expr::Kind::index) return static_cast<double>(e.mode == LoadMode::row ? idx / last % mrows : idx % last);
    auto t = get(ts, e.name);
    const Tensor* td = p.find_tensor(e.name);
    if (!t || !td) return make_error(ErrorCode::not_found, "no data for '" + e.name + "'");
    if (e.mode == LoadMode::row) return (**t).at(idx / last);
    if (e.mode == LoadMode::col) return (**t).at(idx % last);
    if (es.transpose) {  // output (.., i, j) reads (.., j, i) of an input [.., last, rows]
      const int64_t rows = os.size() >= 2 ? os[os.size() - 2] : 1, mat = rows * last;
      const int64_t i = idx % mat / last, j = idx % last;
      return (**t).at(idx / mat * mat + j * rows + i);
    }
    // a view of the output's element count that does not broadcast: the output's element order
    if (td->role == TensorRole::view && td->numel() == numel && td->shape != os && !simt_broadcasts_to(td->shape, os))
      return (**t).at(idx);
    int64_t off = 0, stride = 1, rem = idx;
    for (size_t k = 0; k < os.size(); ++k) {
      int64_t c = rem % os[os.size() - 1 - k];
      rem /= os[os.size() - 1 - k];
      if (k < td->shape.size()) {
        int64_t te = td->shape[td->shape.size() - 1 - k];
        if (te != 1) off += c * stride;
        stride *= te;
      }
    }
    return (**t).at(off);
  };
  for (idx = 0; idx < numel; ++idx) {
    auto s = interp_epilogue_stores(p, es.body, 0, load, sc);
    if (!s) return s.error();
    for (auto& [n, v] : *s) {
      auto& o = outs[n];
      if (o.empty()) o.resize(numel);
      o[idx] = v;
    }
  }
  for (auto& [n, v] : outs) ts[n] = std::move(v);
  return ok_status();
}

// Exact attention in double (the kernel's order is its own; see runtime/attention.cuh).
Status run_attention(const Stage& st, const AttentionStage& a, InterpTensors& ts) {
  auto q = get(ts, a.q), k = get(ts, a.k), v = get(ts, a.v);
  if (!q) return q.error();
  if (!k) return k.error();
  if (!v) return v.error();
  Vec out(static_cast<size_t>(a.batch * a.lq * a.dv));
  std::vector<double> w(static_cast<size_t>(a.lk));
  for (int64_t b = 0; b < a.batch; ++b)
    for (int64_t i = 0; i < a.lq; ++i) {
      const int64_t kb = (b / a.heads) * (a.heads / a.kv_group) + (b % a.heads) / a.kv_group;  // its k/v matrix
      const int64_t keys = a.causal ? std::min(a.lk, i + 1) : a.lk;
      double mx = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < a.d; ++d)
          dot += (**q).at((b * a.lq + i) * a.d + d) * (**k).at((kb * a.lk + j) * a.d + d);
        w[static_cast<size_t>(j)] = dot * a.scale;
        mx = std::max(mx, w[static_cast<size_t>(j)]);
      }
      for (int64_t j = 0; j < keys; ++j) sum += w[static_cast<size_t>(j)] = std::exp(w[static_cast<size_t>(j)] - mx);
      for (int64_t e = 0; e < a.dv; ++e) {
        double o = 0;
        for (int64_t j = 0; j < keys; ++j) o += w[static_cast<size_t>(j)] * (**v).at((kb * a.lk + j) * a.dv + e);
        out[static_cast<size_t>((b * a.lq + i) * a.dv + e)] = keys > 0 ? o / sum : 0;
      }
    }
  ts[st.outputs.at(0)] = std::move(out);
  return ok_status();
}

}  // namespace

Status interp_rowwise_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& sc) {
  return run_rowwise(p, st, std::get<RowwiseStage>(st.body), ts, sc);
}

Status interp_reduce_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& sc) {
  return run_reduce(p, st, std::get<ReduceStage>(st.body), ts, sc);
}

Status interp_scan_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>&) {
  return run_scan(p, st, std::get<ScanStage>(st.body), ts);
}

Status interp_elementwise_stage(const Program& p, const Stage& st, InterpTensors& ts, const std::vector<double>& sc) {
  const auto* r = &std::get<ElementwiseStage>(st.body);
  // the views it reads, gathered from their tensors (when those hold data)
  std::set<std::string> loads;
  std::function<void(const ExprPtr&)> walk = [&](const ExprPtr& e) {
    if (!e) return;
    if (e->kind == Expr::Kind::load) loads.insert(e->name);
    for (const auto& a : e->args) walk(a);
  };
  for (const auto& stmt : r->body.stmts) walk(stmt.value);
  for (const auto& t : p.tensors) {
    if (t.role != TensorRole::view || !loads.count(t.name)) continue;
    auto b = ts.find(t.view_of);
    if (b == ts.end()) continue;
    Vec v(static_cast<size_t>(t.numel()));
    std::vector<int64_t> at(t.shape.size(), 0);
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t off = t.view_offset;
      for (size_t d = 0; d < at.size(); ++d) off += at[d] * t.view_strides[d];
      if (off < 0 || off >= static_cast<int64_t>(b->second.size()))
        return make_error(ErrorCode::invalid_input, "view '" + t.name + "' reads outside '" + t.view_of + "'");
      v[i] = b->second[static_cast<size_t>(off)];
      for (size_t d = at.size(); d-- > 0;) {
        if (++at[d] < t.shape[d]) break;
        at[d] = 0;
      }
    }
    ts[t.name] = std::move(v);
  }
  return run_elementwise(p, st, *r, ts, sc);
}

Status interp_attention_stage(const Program&, const Stage& st, InterpTensors& ts, const std::vector<double>&) {
  return run_attention(st, std::get<AttentionStage>(st.body), ts);
}

Status interp_stage(const Program& p, int stage_index, InterpTensors& ts, const std::vector<double>& sc) {
  if (stage_index < 0 || stage_index >= static_cast<int>(p.stages.size()))
    return make_error(ErrorCode::invalid_input, "no stage " + std::to_string(stage_index));
  const Stage& st = p.stages[stage_index];
  if (st.outputs.empty()) return make_error(ErrorCode::invalid_input, "stage has no output");
  Status r = dsl_kind(dsl_stage_kind_of(st)).interpret(p, st, ts, sc);
  if (!r) return r;
  // an output that is a contiguous slice of a tensor (checker.cpp) lands in that tensor's elements
  for (const auto& o : st.outputs) {
    const Tensor* t = p.find_tensor(o);
    if (!t || t->role != TensorRole::view) continue;
    const Tensor* b = p.find_tensor(t->view_of);
    auto v = ts.find(o);
    if (!b || v == ts.end()) continue;
    std::vector<double>& base = ts[b->name];
    base.resize(static_cast<size_t>(b->numel()), 0.0);
    if (t->view_offset < 0 || t->view_offset + static_cast<int64_t>(v->second.size()) > b->numel())
      return make_error(ErrorCode::invalid_input, "slice '" + o + "' lies outside '" + b->name + "'");
    std::copy(v->second.begin(), v->second.end(), base.begin() + t->view_offset);
  }
  return ok_status();
}

}  // namespace ucut::dsl
