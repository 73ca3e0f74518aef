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

// Two problem inputs multiplied: kb-v01's 1e-2 holds TF32's relative error but not the absolute
// error on the rescaled trial (sign-mixed inputs) once K is past a few dozen.
TEST(Tf32Bound, TwoRescaledInputsFailALooseToleranceOverALongK) {
  auto inputs = [](int k) {
    return parse(fmt::format(R"(ucut 1
in  a : f32[256, {0}]
in  b : f32[{0}, 512]
out y : f32[256, 512]
stage y = gemm(a, b) {{
  epilogue {{ y = acc }}
}}
)", k));
  };
  const double kb = space_profile_rtol_f32("kb-v01");
  auto b = space_tf32_bound(inputs(4096), sol::Policy::tf32, kb);
  EXPECT_TRUE(b.fails);
  EXPECT_NE(b.reason.find("K = 4096"), std::string::npos) << b.reason;
  EXPECT_NE(b.reason.find("rescaled trial"), std::string::npos) << b.reason;
  EXPECT_FALSE(space_tf32_bound(inputs(8), sol::Policy::tf32, kb).fails);  // 4 sigma = 7.4e-3
  EXPECT_FALSE(space_tf32_bound(inputs(4096), sol::Policy::exact, kb).fails);
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
