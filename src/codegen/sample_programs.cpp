// Sample programs (see sample_programs.h).
#include "codegen/sample_programs.h"

#include <random>

#include "dsl/gemm_rules.h"

namespace ucut::codegen {

namespace {

using namespace dsl;

Tensor tensor(std::string name, TensorRole role, DType dt, std::vector<int64_t> shape,
              std::string binding = {}) {
  Tensor t;
  t.name = std::move(name);
  t.role = role;
  t.dtype = dt;
  t.shape = std::move(shape);
  t.binding = std::move(binding);
  return t;
}

ExprPtr acc() { return std::make_shared<Expr>(); }
ExprPtr load(std::string name, LoadMode mode) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::load;
  e->name = std::move(name);
  e->mode = mode;
  return e;
}
ExprPtr scalar(std::string name) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::scalar;
  e->name = std::move(name);
  return e;
}
ExprPtr bin(BinOp op, ExprPtr a, ExprPtr b) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::binary;
  e->op = op;
  e->args = {std::move(a), std::move(b)};
  return e;
}
ExprPtr call(Fn fn, ExprPtr a, std::vector<double> params = {}) {
  auto e = std::make_shared<Expr>();
  e->kind = Expr::Kind::unary;
  e->fn = fn;
  e->args = {std::move(a)};
  e->params = std::move(params);
  return e;
}
EpilogueStmt store(std::string out, ExprPtr v) {
  EpilogueStmt s;
  s.kind = EpilogueStmt::Kind::store;
  s.name = std::move(out);
  s.value = std::move(v);
  return s;
}

Stage gemm_stage(std::string out, std::string a, bool at, std::string b, bool bt, int64_t m, int64_t n,
                 int64_t k, const GemmKnobs& knobs, Epilogue ep) {
  GemmStage g;
  g.a.tensor = std::move(a);
  g.a.transposed = at;
  g.b.tensor = std::move(b);
  g.b.transposed = bt;
  g.m = m;
  g.n = n;
  g.k = k;
  g.knobs = knobs;
  g.epilogue = std::move(ep);
  Stage s;
  s.name = "s0";
  s.outputs = {std::move(out)};
  s.body = std::move(g);
  return s;
}

}  // namespace

Program sample_bf16_bias_gelu(int64_t m, int64_t n, int64_t k, const GemmKnobs& knobs) {
  Program p;
  p.name = "bf16_bias_gelu";
  p.tensors = {tensor("x", TensorRole::in, DType::bf16, {m, k}),
               tensor("W", TensorRole::param, DType::bf16, {n, k}, "linear.weight"),
               tensor("b", TensorRole::param, DType::bf16, {n}, "linear.bias"),
               tensor("y", TensorRole::out, DType::bf16, {m, n})};
  Epilogue ep;
  ep.stmts = {store("y", call(Fn::gelu, bin(BinOp::add, acc(), load("b", LoadMode::col))))};
  p.stages = {gemm_stage("y", "x", false, "W", true, m, n, k, knobs, ep)};
  return p;
}

Program sample_f32_scaled(int64_t m, int64_t n, int64_t k, Precision precision, const GemmKnobs& knobs) {
  Program p;
  p.name = std::string("f32_scaled_") + precision_name(precision);
  p.tensors = {tensor("x", TensorRole::in, DType::f32, {m, k}),
               tensor("W", TensorRole::param, DType::f32, {n, k}, "linear.weight"),
               tensor("y", TensorRole::out, DType::f32, {m, n})};
  Scalar alpha;
  alpha.name = "alpha";
  alpha.default_value = 0.5;
  p.scalars = {alpha};
  GemmKnobs kn = knobs;
  kn.precision = precision;
  Epilogue ep;
  ep.stmts = {store("y", bin(BinOp::mul, acc(), scalar("alpha")))};
  p.stages = {gemm_stage("y", "x", false, "W", true, m, n, k, kn, ep)};
  return p;
}

Program sample_f16_residual_rowmax(int64_t m, int64_t n, int64_t k, const GemmKnobs& knobs) {
  Program p;
  p.name = "f16_residual_rowmax";
  p.tensors = {tensor("a", TensorRole::in, DType::f16, {k, m}),
               tensor("B", TensorRole::in, DType::f16, {k, n}),
               tensor("s", TensorRole::in, DType::f32, {m}),
               tensor("r", TensorRole::in, DType::f16, {m, n}),
               tensor("y", TensorRole::out, DType::f16, {m, n}),
               tensor("mx", TensorRole::out, DType::f32, {m})};
  Epilogue ep;
  EpilogueStmt let;
  let.kind = EpilogueStmt::Kind::let;
  let.name = "t";
  let.value = call(Fn::relu, bin(BinOp::add, bin(BinOp::mul, acc(), load("s", LoadMode::row)), load("r", LoadMode::full)));
  auto local = std::make_shared<Expr>();
  local->kind = Expr::Kind::local;
  local->name = "t";
  EpilogueStmt red;
  red.kind = EpilogueStmt::Kind::reduce;
  red.name = "mx";
  red.value = local;
  red.reduce_op = ReduceOp::max;
  red.reduce_axis = ReduceAxis::row;
  ep.stmts = {let, store("y", local), red};
  Stage st = gemm_stage("y", "a", true, "B", false, m, n, k, knobs, ep);
  st.outputs.push_back("mx");
  p.stages = {st};
  return p;
}

std::vector<Program> sample_random_programs(int count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](auto... v) {
    int vals[] = {v...};
    return vals[rng() % sizeof...(v)];
  };
  std::vector<Program> out;
  int attempts = 0;
  while (static_cast<int>(out.size()) < count && attempts++ < count * 200) {
    GemmKnobs k;
    int prec = pick(0, 1, 2, 3);  // f16, bf16, tf32, f32x3
    k.precision = prec == 0 ? Precision::f16 : prec == 1 ? Precision::bf16 : prec == 2 ? Precision::tf32 : Precision::f32x3;
    DType dt = gemm_operand_dtype(k.precision);
    bool sm90 = gemm_family(k.precision) == GemmFamily::sm90;
    int64_t m = pick(128, 256, 384, 1000, 2048), n = pick(128, 256, 512, 1024), kk = pick(64, 256, 512, 4096);
    bool at = rng() % 2, bt = rng() % 2;
    if (k.precision == Precision::tf32) at = false, bt = true;
    if (sm90) {
      int bytes = dtype_bytes(dt);
      int tm = pick(64, 128, 256), tn = pick(64, 128, 256);
      int tk = bytes == 2 ? pick(32, 64, 128) : pick(16, 32, 64);
      k.tile = TileShape{tm, tn, tk};
      k.schedule = rng() % 2 ? Schedule::cooperative : Schedule::pingpong;
      if (rng() % 2) k.cluster = ClusterShape{pick(1, 2), pick(1, 2)};
      k.scheduler = rng() % 3 == 0 ? TileScheduler::stream_k : TileScheduler::persistent;
      if (k.scheduler == TileScheduler::stream_k && rng() % 2) k.split_k = pick(2, 3, 4);
      if (rng() % 3 == 0) k.stages = pick(2, 3, 4, 5);
      k.raster = rng() % 2 ? Raster::along_m : Raster::along_n;
      k.swizzle = pick(1, 2, 4, 8);
    } else {
      k.tile = rng() % 2 ? TileShape{128, 128, 32} : TileShape{64, 128, 32};
      if (rng() % 4 == 0) k.split_k = 2;
    }
    Program p;
    p.name = "sample_" + std::to_string(out.size());
    DType od = sm90 ? static_cast<DType>(pick(0, 1, 2)) : DType::f32;  // f16, bf16 or f32 output
    p.tensors = {tensor("A", TensorRole::in, dt, at ? std::vector<int64_t>{kk, m} : std::vector<int64_t>{m, kk}),
                 tensor("B", TensorRole::in, dt, bt ? std::vector<int64_t>{n, kk} : std::vector<int64_t>{kk, n}),
                 tensor("bias", TensorRole::in, DType::f32, {n}),
                 tensor("rs", TensorRole::in, dt, {m}),
                 tensor("Y", TensorRole::out, od, {m, n})};
    int epi = pick(0, 1, 2, 3, 4);
    Fn fns[] = {Fn::relu, Fn::gelu, Fn::silu, Fn::tanh, Fn::sigmoid, Fn::hardswish, Fn::mish, Fn::elu};
    Fn fn = fns[rng() % 8];
    ExprPtr v = acc();
    if (epi >= 1) v = bin(BinOp::add, v, load("bias", LoadMode::col));
    if (epi >= 2) v = call(fn, v, fn == Fn::elu ? std::vector<double>{1.0} : std::vector<double>{});
    if (epi >= 3) v = bin(BinOp::mul, v, load("rs", LoadMode::row));
    Epilogue ep;
    ep.stmts = {store("Y", v)};
    if (epi == 4) {
      p.tensors.push_back(tensor("rowsum", TensorRole::out, DType::f32, {m}));
      EpilogueStmt red;
      red.kind = EpilogueStmt::Kind::reduce;
      red.name = "rowsum";
      red.value = v;
      red.reduce_op = ReduceOp::sum;
      red.reduce_axis = ReduceAxis::row;
      ep.stmts.push_back(red);
    }
    Stage st = gemm_stage("Y", "A", at, "B", bt, m, n, kk, k, ep);
    if (epi == 4) st.outputs.push_back("rowsum");
    p.stages = {st};
    const auto& g = std::get<GemmStage>(p.stages[0].body);
    if (!gemm_rules_check(p, g, p.tensors[4]).empty()) continue;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ucut::codegen
