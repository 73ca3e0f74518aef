#include "space/precision.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "dsl/dsl.h"

namespace ucut::space {
namespace {

dsl::Program parse(const std::string& text) {
  auto r = dsl::dsl_compile({"t.ucut", text});
  EXPECT_TRUE(r.program) << text;
  return r.program ? *r.program : dsl::Program{};
}

const char* kLinearGelu = R"(ucut 1
in    x : f32[256, 512]
param W : f32[1024, 512] = "fc.weight"
param b : f32[1024]      = "fc.bias"
out   y : f32[256, 1024]
stage y = gemm(x, W.T) {
  epilogue { y = gelu(acc + b[col]) }
}
)";

// The GEMM's result is the output: TF32's rounding is the output's error.
TEST(Tf32Bound, AnElementwiseEpilogueUnderTheDefaultToleranceFails) {
  auto b = space_tf32_bound(parse(kLinearGelu), sol::Policy::tf32, 1e-4);
  EXPECT_TRUE(b.fails);
  EXPECT_NE(b.reason.find("rtol 1e-04"), std::string::npos) << b.reason;
  EXPECT_NE(b.reason.find("262144 results"), std::string::npos) << b.reason;
  EXPECT_TRUE(space_tf32_bound(parse(kLinearGelu), sol::Policy::bf16, 1e-4).fails);
}

// kb-v01's 1e-2 holds TF32's error; the exact policy has no TF32 rung to skip.
TEST(Tf32Bound, ALooseToleranceOrTheExactPolicyKeepsTf32) {
  EXPECT_FALSE(space_tf32_bound(parse(kLinearGelu), sol::Policy::tf32, space_profile_rtol_f32("kb-v01")).fails);
  EXPECT_FALSE(space_tf32_bound(parse(kLinearGelu), sol::Policy::exact, 1e-4).fails);
  EXPECT_DOUBLE_EQ(space_profile_rtol_f32("default"), 1e-4);
}

// y = a @ b for two problem inputs a [256, K] and b [K, 512] (both rescaled on the contract's trial).
dsl::Program inputs(int k) {
  return parse(fmt::format(R"(ucut 1
in  a : f32[256, {0}]
in  b : f32[{0}, 512]
out y : f32[256, 512]
stage y = gemm(a, b) {{
  epilogue {{ y = acc }}
}}
)", k));
}

// Two problem inputs multiplied: kb-v01's 1e-2 holds TF32's relative error but not the absolute
// error on the rescaled trial (sign-mixed inputs) once K is past a few dozen.
TEST(Tf32Bound, TwoRescaledInputsFailALooseToleranceOverALongK) {
  const double kb = space_profile_rtol_f32("kb-v01");
  auto b = space_tf32_bound(inputs(4096), sol::Policy::tf32, kb);
  EXPECT_TRUE(b.fails);
  EXPECT_NE(b.reason.find("K = 4096"), std::string::npos) << b.reason;
  EXPECT_NE(b.reason.find("rescaled trial"), std::string::npos) << b.reason;
  EXPECT_FALSE(space_tf32_bound(inputs(8), sol::Policy::tf32, kb).fails);  // 4 sigma = 7.4e-3
  EXPECT_FALSE(space_tf32_bound(inputs(4096), sol::Policy::exact, kb).fails);
}

// The default 1e-4 on a GEMM of two rescaled inputs: past K ~ 390 even 3xTF32's sums miss the fp32
// reference on outputs near zero (run BO: K = 1024, 2048 and 4096 failed both 3xTF32 kernels, K =
// 256 passed), so the ladder starts at FP32 SIMT, under every policy; a Linear (a parameter
// weight, not rescaled) and kb-v01's 1e-2 keep 3xTF32.
// bf16x3 (three bf16 products, ~70x under TF32's rounding) holds kb-v01's 1e-2 where TF32 does not,
// on two rescaled inputs over K = 4096 (kb1's matmuls), but not over K = 524288
// (kb1_matmul_large_k) nor under the default 1e-4; a Linear's small weights keep the default
// tolerance's absolute error, so only the relative one judges it there.
TEST(Tf32Bound, Bf16x3HoldsALooseToleranceWhereTf32DoesNot) {
  const double kb = space_profile_rtol_f32("kb-v01");
  auto b = space_tf32_bound(inputs(4096), sol::Policy::tf32, kb);
  EXPECT_TRUE(b.fails);
  EXPECT_FALSE(b.bf16x3_fails);
  EXPECT_TRUE(space_tf32_bound(inputs(524288), sol::Policy::tf32, kb).bf16x3_fails);
  EXPECT_TRUE(space_tf32_bound(inputs(4096), sol::Policy::tf32, 1e-4).bf16x3_fails);
  auto linear = space_tf32_bound(parse(kLinearGelu), sol::Policy::tf32, 1e-4);
  EXPECT_TRUE(linear.fails);
  EXPECT_FALSE(linear.bf16x3_fails);
  EXPECT_TRUE(space_tf32_bound(parse(kLinearGelu), sol::Policy::tf32, 1e-5).bf16x3_fails);
}

TEST(Tf32Bound, TwoRescaledInputsFailEven3xTf32UnderTheDefaultTolerance) {
  auto b = space_tf32_bound(inputs(1024), sol::Policy::tf32, 1e-4);
  EXPECT_TRUE(b.fails);
  EXPECT_TRUE(b.faithful_fails);
  EXPECT_NE(b.reason.find("3xTF32"), std::string::npos) << b.reason;
  EXPECT_NE(b.reason.find("K = 1024"), std::string::npos) << b.reason;
  auto e = space_tf32_bound(inputs(4096), sol::Policy::exact, 1e-4);
  EXPECT_TRUE(e.faithful_fails);
  EXPECT_FALSE(e.fails);  // the exact policy has no TF32 rung
  auto short_k = space_tf32_bound(inputs(256), sol::Policy::tf32, 1e-4);
  EXPECT_TRUE(short_k.fails);  // TF32 still fails 1e-4 ...
  EXPECT_FALSE(short_k.faithful_fails) << short_k.reason;  // ... 3xTF32 does not
  EXPECT_FALSE(space_tf32_bound(inputs(4096), sol::Policy::tf32, space_profile_rtol_f32("kb-v01")).faithful_fails);
  EXPECT_FALSE(space_tf32_bound(parse(kLinearGelu), sol::Policy::tf32, 1e-4).faithful_fails);
  // q k^T into a softmax (scaled dot-product attention of inputs): normalized before the output
  auto sdpa = parse(R"(ucut 1
in  q : f32[8, 1024, 1024]
in  k : f32[8, 1024, 1024]
in  v : f32[8, 1024, 1024]
tmp s : f32[8, 1024, 1024]
tmp a : f32[8, 1024, 1024]
out y : f32[8, 1024, 1024]
stage s = gemm(q, k.T) {
  epilogue { s = acc * 0.03125 }
}
stage a = rowwise softmax(s) {
}
stage y = gemm(a, v) {
  epilogue { y = acc }
}
)");
  EXPECT_FALSE(space_tf32_bound(sdpa, sol::Policy::tf32, 1e-4).faithful_fails);
}

// A row reduction leaves one output per row: the rounding may average out, so TF32 is tried.
TEST(Tf32Bound, AReductionToFewerOutputsKeepsTf32) {
  auto p = parse(R"(ucut 1
in    x : f32[256, 512]
param W : f32[1024, 512] = "fc.weight"
out   s : f32[256]
tmp   y : f32[256, 1024]
stage y = gemm(x, W.T) {
  epilogue {
    s = rowsum(acc)
    y = acc
  }
}
)");
  auto b = space_tf32_bound(p, sol::Policy::tf32, 1e-4);
  EXPECT_FALSE(b.fails) << b.reason;
  EXPECT_TRUE(b.reason.empty());
}

// 16-bit data has no TF32 rung.
TEST(Tf32Bound, SixteenBitDataIsNotJudged) {
  auto p = parse(R"(ucut 1
in    x : bf16[256, 512]
in    w : bf16[1024, 512]
out   y : bf16[256, 1024]
stage y = gemm(x, w.T) {
  epilogue { y = acc }
}
)");
  EXPECT_FALSE(space_tf32_bound(p, sol::Policy::tf32, 1e-4).fails);
}

}  // namespace
}  // namespace ucut::space
