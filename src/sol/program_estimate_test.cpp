// The program-level floor, hand-computed on H200 datasheet peaks (tf32 policy) for programs built
// directly as checked IR: a GEMM writing an unfused intermediate that a softmax stage re-reads, a
// GEMM at a slower precision than the policy allows, and a program that can reach SOL.
#include "sol/program_estimate.h"

#include <gtest/gtest.h>

namespace ucut::sol {
namespace {

using namespace ucut::dsl;

Tensor tensor(const std::string& name, TensorRole role, std::vector<int64_t> shape) {
  Tensor t;
  t.name = name;
  t.role = role;
  t.shape = std::move(shape);
  return t;
}

ExprPtr acc() { return std::make_shared<Expr>(); }

Stage gemm_stage(const std::string& name, const std::string& a, const std::string& b, const std::string& out,
                 Precision precision) {
  GemmStage g;
  g.a.tensor = a;
  g.b.tensor = b;
  g.m = g.n = g.k = 4096;
  g.knobs.precision = precision;
  EpilogueStmt store;
  store.kind = EpilogueStmt::Kind::store;
  store.name = out;
  store.value = acc();
  g.epilogue.stmts.push_back(store);
  Stage s;
  s.name = name;
  s.outputs = {out};
  s.body = g;
  return s;
}

// s0: t0 = x @ w (4096³, fp32, auto precision); s1: out = softmax(t0) over rows.
Program two_stage() {
  Program p;
  p.name = "gemm_softmax";
  p.tensors = {tensor("x", TensorRole::in, {4096, 4096}), tensor("w", TensorRole::param, {4096, 4096}),
               tensor("t0", TensorRole::tmp, {4096, 4096}), tensor("out", TensorRole::out, {4096, 4096})};
  p.stages.push_back(gemm_stage("s0", "x", "w", "t0", Precision::auto_));
  RowwiseStage r;
  r.op = "softmax";
  r.input = "t0";
  Stage s1;
  s1.name = "s1";
  s1.outputs = {"out"};
  s1.body = r;
  p.stages.push_back(s1);
  return p;
}

HwSpec h200() { return *hw_lookup("h200"); }

// Problem SOL of the fused computation (tf32): 137438953472 / 494.7e12 + 100663296 / 66.9e12
// = 277.82 us + 1.50 us = 279.33 us (memory: x, w, out = 201326592 B / 4.8e12 = 41.9 us).
constexpr double kProblemSol = 137438953472.0 / 494.7e12 + 100663296.0 / 66.9e12;

TEST(SolProgram, TwoStageWithIntermediate) {
  ProgramEstimate e = sol_program_estimate(h200(), two_stage(), Policy::tf32);
  ASSERT_EQ(e.stages.size(), 2u);
  const StageLine& s0 = e.stages[0];
  EXPECT_EQ(s0.kind, "gemm");
  EXPECT_EQ(s0.precision, "auto->tf32");
  EXPECT_EQ(s0.flops, 137438953472);     // 2·4096³ (the plain store epilogue adds nothing)
  EXPECT_EQ(s0.bytes_read, 134217728);   // x + w: 2·4096²·4
  EXPECT_EQ(s0.bytes_written, 67108864); // t0
  EXPECT_NEAR(s0.t_floor, 137438953472.0 / 494.7e12, 1e-12);  // 277.82 us, compute-bound
  const StageLine& s1 = e.stages[1];
  EXPECT_EQ(s1.kind, "rowwise");
  EXPECT_EQ(s1.flops, 100663296);        // 6 per element
  EXPECT_EQ(s1.bytes_read, 67108864);    // t0 read back
  EXPECT_EQ(s1.bytes_written, 67108864);
  EXPECT_NEAR(s1.t_floor, 134217728.0 / 4.8e12, 1e-12);      // 27.96 us, memory-bound
  EXPECT_EQ(e.tmp_bytes, 134217728);     // t0 written once and read once
  EXPECT_NEAR(e.t_floor, 137438953472.0 / 494.7e12 + 134217728.0 / 4.8e12, 1e-12);  // 305.78 us
  EXPECT_EQ(sol_program_explain(e, kProblemSol),
            "problem SOL 279.33 us, this program's floor 305.78 us because stage s1 re-reads the 67.11 MB "
            "intermediate t0 (134.2 MB of intermediate traffic, 27.96 us at 4.800 TB/s)");
  std::string text = sol_program_render(e, kProblemSol);
  EXPECT_NE(text.find("s0     gemm         auto->tf32"), std::string::npos) << text;
  EXPECT_NE(text.find("[reads t0]"), std::string::npos) << text;
  EXPECT_NE(text.find("[writes t0]"), std::string::npos) << text;
}

TEST(SolProgram, SlowerPrecisionThanThePolicyIsNamed) {
  Program p;
  p.name = "gemm_3xtf32";
  p.tensors = {tensor("x", TensorRole::in, {4096, 4096}), tensor("w", TensorRole::param, {4096, 4096}),
               tensor("out", TensorRole::out, {4096, 4096})};
  p.stages.push_back(gemm_stage("s0", "x", "w", "out", Precision::f32x3));
  ProgramEstimate e = sol_program_estimate(h200(), p, Policy::tf32);
  EXPECT_NEAR(e.t_floor, 137438953472.0 / (494.7e12 / 3), 1e-12);  // 833.47 us
  EXPECT_EQ(sol_program_explain(e, 137438953472.0 / 494.7e12),
            "problem SOL 277.82 us, this program's floor 833.47 us because stage s0 computes at f32x3 "
            "(164.9 TFLOP/s) where the tf32 policy allows 494.7 TFLOP/s");
}

TEST(SolProgram, FusedProgramReachesSol) {
  Program p;
  p.name = "gemm";
  p.tensors = {tensor("x", TensorRole::in, {4096, 4096}), tensor("w", TensorRole::param, {4096, 4096}),
               tensor("out", TensorRole::out, {4096, 4096})};
  p.stages.push_back(gemm_stage("s0", "x", "w", "out", Precision::tf32));
  ProgramEstimate e = sol_program_estimate(h200(), p, Policy::tf32);
  EXPECT_EQ(e.tmp_bytes, 0);
  EXPECT_EQ(sol_program_explain(e, 137438953472.0 / 494.7e12),
            "problem SOL 277.82 us, this program's floor 277.82 us: the program can reach the problem's speed of light");
}

TEST(SolProgram, EpilogueFunctionsCountByTheIrConvention) {
  Program p;
  p.name = "gemm_gelu";
  p.tensors = {tensor("x", TensorRole::in, {4096, 4096}), tensor("w", TensorRole::param, {4096, 4096}),
               tensor("b", TensorRole::param, {4096}), tensor("out", TensorRole::out, {4096, 4096})};
  Stage s = gemm_stage("s0", "x", "w", "out", Precision::tf32);
  // out = gelu(acc + b[col]): 1 add + 8 for gelu per output element, and b is read.
  auto load = std::make_shared<Expr>();
  load->kind = Expr::Kind::load;
  load->name = "b";
  load->mode = LoadMode::col;
  auto add = std::make_shared<Expr>();
  add->kind = Expr::Kind::binary;
  add->op = BinOp::add;
  add->args = {acc(), load};
  auto gelu = std::make_shared<Expr>();
  gelu->kind = Expr::Kind::unary;
  gelu->fn = Fn::gelu;
  gelu->args = {add};
  std::get<GemmStage>(s.body).epilogue.stmts[0].value = gelu;
  p.stages.push_back(s);
  ProgramEstimate e = sol_program_estimate(h200(), p, Policy::tf32);
  EXPECT_EQ(e.stages[0].flops, 137438953472 + 9 * 16777216);
  EXPECT_EQ(e.stages[0].bytes_read, 134217728 + 4096 * 4);
}

}  // namespace
}  // namespace ucut::sol
