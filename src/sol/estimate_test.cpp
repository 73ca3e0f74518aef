// t_SOL hand-computed for six fixtures under every policy on the H200 datasheet peaks
// (FP32 66.9, TF32 494.7, BF16 989.4 TFLOP/s; 4.8 TB/s; exact = TF32/3 = 164.9 TFLOP/s), plus
// ridge/bottleneck, calibrated bounds, the gap and the dominating ops.
#include "sol/estimate.h"

#include <gtest/gtest.h>

#include "problem/problem.h"

namespace ucut::sol {
namespace {

ProblemCost load_cost(const std::string& name) {
  auto p = problem::problem_load(std::string(UCUTLASS_SOURCE_DIR) + "/tests/data/problems/" + name + ".json");
  EXPECT_TRUE(p.ok()) << p.error().render();
  auto c = sol_problem_cost(*p);
  EXPECT_TRUE(c.ok()) << c.error().render();
  return *c;
}

HwSpec h200() { return *hw_lookup("h200"); }

struct Case {
  const char* name;
  double exact, tf32, bf16;  // t_SOL in seconds, by hand (see the comments)
  bool exact_c, tf32_c, bf16_c;  // compute-bound?
};

const Case kCases[] = {
    // 137438953472 FLOP / {164.9, 494.7, 989.4}e12; memory 201326592 B / 4.8e12 = 41.94 us
    {"gemm_square", 8.334685e-04, 2.778228e-04, 1.389114e-04, true, true, true},
    // 8589934592 / 164.9e12 = 52.09 us > memory 134479872 / 4.8e12 = 28.02 us; tf32 17.36 us
    // and bf16 8.68 us fall below it, so those two are memory-bound at 28.02 us
    {"gemm_tall_skinny", 5.209178e-05, 2.801664e-05, 2.801664e-05, true, false, false},
    // 137447342080 / rate + 67108864 / 66.9e12 (gelu, SIMT); memory 335577088 / 4.8e12 = 69.9 us
    {"linear_bias_gelu", 8.345225e-04, 2.788429e-04, 1.399230e-04, true, true, true},
    // memory: 536870912 / 4.8e12 = 111.85 us (compute 402653184 / 66.9e12 = 6.0 us)
    {"softmax_rows", 1.118481e-04, 1.118481e-04, 1.118481e-04, false, false, false},
    // bf16 data: 1099511627776 / 989.4e12 under every policy
    {"gemm_bf16", 1.111291e-03, 1.111291e-03, 1.111291e-03, true, true, true},
    // 17188257792 / rate + 58720256 / 66.9e12; memory 58728448 / 4.8e12 = 12.24 us
    {"linear_relu_softmax", 1.051122e-04, 3.562254e-05, 1.825014e-05, true, true, true},
};

TEST(SolEstimate, HandComputedTsolEveryPolicy) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    ProblemCost cost = load_cost(c.name);
    const double want[] = {c.exact, c.tf32, c.bf16};
    const bool bound[] = {c.exact_c, c.tf32_c, c.bf16_c};
    for (int i = 0; i < 3; ++i) {
      SolReport r = sol_estimate(h200(), cost, kAllPolicies[i]);
      EXPECT_NEAR(r.bound.t_sol, want[i], want[i] * 1e-5) << policy_name(kAllPolicies[i]);
      EXPECT_EQ(r.bound.compute_bound, bound[i]) << policy_name(kAllPolicies[i]);
      EXPECT_EQ(r.bound.origin, "datasheet");
      ASSERT_EQ(r.by_policy.size(), 3u);
      EXPECT_DOUBLE_EQ(r.by_policy[size_t(i)].t_sol, r.bound.t_sol);
      // The intensity-vs-ridge verdict agrees with the time comparison.
      EXPECT_EQ(r.intensity > r.bound.ridge, r.bound.compute_bound);
    }
  }
}

// bf16x3's bound: the bf16 policy's with its fp32 tensor-class FLOPs three times longer
// (137438953472 FLOP x 3 / 989.4e12 = 416.7 us on gemm_square, compute-bound); tall-skinny's
// 3 x 8.68 us = 26.05 us stays under its memory's 28.02 us.
TEST(SolEstimate, ScaledTensorF32BoundForBf16x3) {
  SolReport sq = sol_estimate(h200(), load_cost("gemm_square"), Policy::bf16);
  const SolBound b = sol_scale_tensor_f32(sq.bound, 3.0);
  EXPECT_NEAR(b.t_sol, 3 * 1.389114e-04, 3 * 1.389114e-04 * 1e-5);
  EXPECT_TRUE(b.compute_bound);
  EXPECT_NEAR(b.tensor_f32_rate, 989.4e12 / 3, 1e9);
  SolReport ts = sol_estimate(h200(), load_cost("gemm_tall_skinny"), Policy::bf16);
  const SolBound t = sol_scale_tensor_f32(ts.bound, 3.0);
  EXPECT_NEAR(t.t_sol, 2.801664e-05, 2.801664e-05 * 1e-5);
  EXPECT_FALSE(t.compute_bound);
}

TEST(SolEstimate, IntensityAndRidge) {
  SolReport r = sol_estimate(h200(), load_cost("gemm_square"), Policy::tf32);
  EXPECT_NEAR(r.intensity, 137438953472.0 / 201326592.0, 1e-9);  // 682.67 FLOP/B
  EXPECT_NEAR(r.bound.ridge, 494.7e12 / 4.8e12, 1e-9);             // 103.06 FLOP/B
  SolReport s = sol_estimate(h200(), load_cost("softmax_rows"), Policy::tf32);
  EXPECT_NEAR(s.intensity, 0.75, 1e-12);                           // 6 FLOP per 8 bytes
  EXPECT_NEAR(s.bound.ridge, 66.9e12 / 4.8e12, 1e-9);              // SIMT-only mix
}

TEST(SolEstimate, ExactPolicyUsesSimtWhereItBeats3xTf32) {
  // RTX 4090: TF32 82.6 / 3 = 27.5 < FP32 SIMT 82.6 TFLOP/s, so exact divides by 82.6e12.
  HwSpec g = *hw_lookup("rtx-4090");
  SolReport r = sol_estimate(g, load_cost("gemm_square"), Policy::exact);
  EXPECT_DOUBLE_EQ(r.bound.tensor_f32_rate, 82.6e12);
  EXPECT_NEAR(r.bound.t_sol, 137438953472.0 / 82.6e12, 1e-12);
  // H100 SXM: exact is TF32 / 3 (the contract's table value).
  SolReport h = sol_estimate(*hw_lookup("h100-sxm"), load_cost("gemm_square"), Policy::exact);
  EXPECT_DOUBLE_EQ(h.bound.tensor_f32_rate, 494.7e12 / 3);
}

Calibration fake_h200_calibration() {
  Calibration c;
  c.gpu = "h200";
  c.copy_bw = 4.2e12;
  c.gemm_bf16 = 795e12;
  c.gemm_fp16 = 764e12;
  c.gemm_tf32 = 389e12;
  c.gemm_fp32 = 50.5e12;
  return c;
}

TEST(SolEstimate, CalibratedBoundsAreReportedBesideTheDatasheet) {
  ProblemCost cost = load_cost("linear_bias_gelu");
  SolReport r = sol_estimate(h200(), cost, Policy::tf32, fake_h200_calibration());
  ASSERT_TRUE(r.calibrated.has_value());
  EXPECT_EQ(r.calibrated->origin, "calibrated");
  // 137447342080 / 389e12 + 67108864 / 50.5e12 = 353.34 us + 1.33 us = 354.66 us
  EXPECT_NEAR(r.calibrated->t_sol, 137447342080.0 / 389e12 + 67108864.0 / 50.5e12, 1e-12);
  EXPECT_NEAR(r.calibrated->t_sol, 3.546640e-04, 3.546640e-04 * 1e-5);
  EXPECT_EQ(&r.reference(), &*r.calibrated);
  ASSERT_EQ(r.calibrated_by_policy.size(), 3u);
  // exact, calibrated: max(389/3, 50.5) = 129.67 TFLOP/s
  EXPECT_NEAR(r.calibrated_by_policy[0].tensor_f32_rate, 389e12 / 3, 1);
  // Another policy's bound comes with the reference's peaks: calibrated here, datasheet without.
  ASSERT_NE(r.reference_for(Policy::exact), nullptr);
  EXPECT_EQ(r.reference_for(Policy::exact), &r.calibrated_by_policy[0]);
  SolReport d = sol_estimate(h200(), cost, Policy::tf32);
  ASSERT_NE(d.reference_for(Policy::exact), nullptr);
  EXPECT_EQ(d.reference_for(Policy::exact)->origin, "datasheet");
  EXPECT_EQ(d.reference_for(Policy::exact)->policy, Policy::exact);
  // memory-bound problem: 536870912 B / 4.2e12
  SolReport s = sol_estimate(h200(), load_cost("softmax_rows"), Policy::tf32, fake_h200_calibration());
  EXPECT_NEAR(s.calibrated->t_sol, 536870912.0 / 4.2e12, 1e-15);
}

TEST(SolEstimate, GapAndGamingGuard) {
  SolReport r = sol_estimate(h200(), load_cost("gemm_square"), Policy::tf32);
  double t = r.bound.t_sol;
  SolGap g = sol_gap(r.bound, 2 * t);
  EXPECT_DOUBLE_EQ(g.gap, 2.0);
  EXPECT_DOUBLE_EQ(g.fraction, 0.5);
  EXPECT_FALSE(g.faster_than_light);
  EXPECT_FALSE(sol_gap(r.bound, 0.95 * t).faster_than_light);  // within the 10% allowance
  EXPECT_TRUE(sol_gap(r.bound, 0.85 * t).faster_than_light);
}

TEST(SolEstimate, AProblemBeyondTheGpusMemorySaysSo) {
  // 3 · 131072² · 4 B = 206.2 GB of tensors against the H200's 141 GB; 4096³ fits.
  SolReport big = sol_estimate(h200(), load_cost("gemm_too_large"), Policy::tf32);
  EXPECT_FALSE(big.fits_memory());
  EXPECT_EQ(sol_memory_overflow(big),
            "the problem's tensors (inputs, parameters and outputs) need 206.2 GB, more than the h200's 141.0 GB "
            "of memory: it cannot run there");
  SolReport small = sol_estimate(h200(), load_cost("gemm_square"), Policy::tf32);
  EXPECT_TRUE(small.fits_memory());
  EXPECT_EQ(sol_memory_overflow(small), "");
}

TEST(SolEstimate, TopOpsByShare) {
  SolReport r = sol_estimate(h200(), load_cost("linear_relu_softmax"), Policy::tf32, std::nullopt, 2);
  ASSERT_EQ(r.top_ops.size(), 2u);
  // linear alone: max(17188257792 / 494.7e12 = 34.75 us, (4194304+2097152+2048+8388608)·4 / 4.8e12 = 12.24 us)
  EXPECT_EQ(r.top_ops[0].op, "linear");
  EXPECT_EQ(r.top_ops[0].line, 13);
  EXPECT_TRUE(r.top_ops[0].compute_bound);
  EXPECT_NEAR(r.top_ops[0].t, 17188257792.0 / 494.7e12, 1e-12);
  // relu and softmax each move 2·8388608·4 bytes: 13.98 us, memory-bound; the first listed wins ties
  EXPECT_EQ(r.top_ops[1].op, "relu");
  EXPECT_FALSE(r.top_ops[1].compute_bound);
  double total = 17188257792.0 / 494.7e12 + 2 * (2 * 8388608.0 * 4 / 4.8e12);
  EXPECT_NEAR(r.top_ops[0].share, (17188257792.0 / 494.7e12) / total, 1e-9);
}

}  // namespace
}  // namespace ucut::sol
