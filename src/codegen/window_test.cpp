// window stages end to end on the CPU: the interpreter (the reference semantics) against values
// PyTorch computed (F.max_pool*, F.avg_pool*, F.adaptive_avg_pool2d, F.conv2d with groups = C, in
// float64, on the small integer inputs below), the generated code's goldens
// (tests/golden/codegen/window_*.cu, UCUTLASS_UPDATE_GOLDEN=1 regenerates) and a library for every
// window op.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "codegen/library.h"
#include "codegen/golden_test.h"
#include "dsl/dsl.h"
#include "dsl/interp.h"
#include "support/fs.h"

namespace ucut::codegen {
namespace {

dsl::Program compile(const std::string& name, const std::string& text) {
  auto r = dsl::dsl_compile(SourceFile{name, text});
  if (!r.program) {
    ADD_FAILURE() << diag_render_all(SourceFile{name, text}, r.diagnostics);
    return {};
  }
  return *r.program;
}

// x[i] = (7 i mod 11) - 5, the input every PyTorch value below was computed on.
std::vector<double> ramp(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 7) % 11) - 5;
  return v;
}

// Runs the one-stage program `body` over x [shape] and returns y.
std::vector<double> run(const std::string& decls, const std::string& stage, size_t x_elems,
                        dsl::InterpTensors extra = {}) {
  const dsl::Program p = compile("window", "ucut 1\n" + decls + stage + "\n");
  if (p.stages.empty()) return {};
  dsl::InterpTensors ts = std::move(extra);
  ts["x"] = ramp(x_elems);
  auto st = dsl::interp_stage(p, 0, ts, {});
  if (!st) {
    ADD_FAILURE() << st.error().render();
    return {};
  }
  return ts["y"];
}

void expect_values(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << "element " << i;
}

// F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True), x [1, 2, 5, 5]
TEST(Window, MaxPoolCeilModeMatchesPyTorch) {
  expect_values(run("in x : f32[1, 2, 5, 5]\nout y : f32[1, 2, 3, 3]\n",
                    "stage y = window max(x, window=[3, 3], stride=[2, 2], padding=[1, 1], ceil_mode=true)", 50),
                {4, 5, 5, 4, 4, 5, 3, 4, 2, 5, 4, 4, 5, 5, 4, 2, 5, 1});
}

// F.max_pool2d(x, 2, stride=1, padding=1, dilation=2)
TEST(Window, MaxPoolDilatedMatchesPyTorch) {
  expect_values(run("in x : f32[1, 2, 5, 5]\nout y : f32[1, 2, 5, 5]\n",
                    "stage y = window max(x, window=[2, 2], stride=[1, 1], padding=[1, 1], dilation=[2, 2])", 50),
                {4,  0, 4, 3, -4, 2, 2, 5, 5, 5,  4, 4, 4, 4, 0, -1, 3, 2, 5, 2,  -3, 4, 0, 4, 0,
                 3, -1, 3, 2, -5, 5, 5, 5, 4, 4,  3, 3, 3, 3, -1, 5, 5, 5, 5, 1, -4, 3, -1, 3, -1});
}

// F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, count_include_pad=True / False): the
// divisor is the window inside the padded input, or the taps inside x
TEST(Window, AvgPoolDivisorsMatchPyTorch) {
  const std::string decls = "in x : f32[1, 2, 5, 5]\nout y : f32[1, 2, 3, 3]\n";
  const double n9 = 1.0 / 9;
  expect_values(run(decls, "stage y = window avg(x, window=[3, 3], stride=[2, 2], padding=[1, 1], ceil_mode=true)", 50),
                {-2 * n9, 5 * n9, 5 * n9, -7 * n9, -4 * n9, -2 * n9, 0, -3 * n9, -4 * n9,
                 5 * n9, -1 * n9, 1 * n9, -2 * n9, -2 * n9, -8 * n9, -4 * n9, 2 * n9, -8 * n9});
  expect_values(run(decls, "stage y = window avg(x, window=[3, 3], stride=[2, 2], padding=[1, 1], ceil_mode=true, "
                           "count_include_pad=false)", 50),
                {-0.5, 5.0 / 6, 1.25, -7.0 / 6, -4.0 / 9, -1.0 / 3, 0, -0.5, -1,
                 1.25, -1.0 / 6, 0.25, -1.0 / 3, -2.0 / 9, -4.0 / 3, -1, 1.0 / 3, -2});
}

// F.avg_pool2d(x, 3, stride=2, padding=1, ceil_mode=True, divisor_override=4): the sums over 4
TEST(Window, AvgPoolDivisorOverrideMatchesPyTorch) {
  expect_values(run("in x : f32[1, 2, 5, 5]\nout y : f32[1, 2, 3, 3]\n",
                    "stage y = window avg(x, window=[3, 3], stride=[2, 2], padding=[1, 1], ceil_mode=true, divisor=4)", 50),
                {-0.5, 1.25, 1.25, -1.75, -1, -0.5, 0, -0.75, -1, 1.25, -0.25, 0.25, -0.5, -0.5, -2, -1, 0.5, -2});
}

// F.avg_pool1d(x, 2, stride=3, padding=1, ceil_mode=True), x [1, 2, 7]: the last window starts in
// the input, is cut at the high padding's end
TEST(Window, AvgPool1dCeilModeMatchesPyTorch) {
  expect_values(run("in x : f32[1, 2, 7]\nout y : f32[1, 2, 3]\n",
                    "stage y = window avg(x, window=[2], stride=[3], padding=[1], ceil_mode=true)", 14),
                {-2.5, 1.5, 0.5, 0, 1, 0});
}

// F.adaptive_avg_pool2d(x, (2, 3)): overlapping windows of unequal sizes
TEST(Window, AdaptiveAvgPoolMatchesPyTorch) {
  expect_values(run("in x : f32[1, 2, 5, 5]\nout y : f32[1, 2, 2, 3]\n", "stage y = window adaptive_avg(x)", 50),
                {-4.0 / 3, 0, 4.0 / 3, -1, -8.0 / 9, -1.0 / 6, 4.0 / 3, 2.0 / 9, 1.0 / 3, -1.0 / 6, 5.0 / 9, -7.0 / 6});
}

// F.max_pool3d(x, 2, stride=2, ceil_mode=True), x [1, 1, 3, 4, 4]
TEST(Window, MaxPool3dMatchesPyTorch) {
  expect_values(run("in x : f32[1, 1, 3, 4, 4]\nout y : f32[1, 1, 2, 2, 2]\n",
                    "stage y = window max(x, window=[2, 2, 2], ceil_mode=true)", 48),
                {4, 5, 5, 5, 5, 4, 2, 5});
}

// F.conv2d(x, w, b, stride=2, padding=1, groups=2): a depthwise conv with channel multiplier 2,
// w[i] = (5 i mod 7) - 3
TEST(Window, DepthwiseConvWithMultiplierMatchesPyTorch) {
  std::vector<double> w(36);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<double>((i * 5) % 7) - 3;
  expect_values(run("in x : f32[1, 2, 5, 5]\nparam w : f32[4, 1, 3, 3] = \"w\"\nparam b : f32[4] = \"b\"\n"
                    "out y : f32[1, 4, 3, 3]\n",
                    "stage y = window sum(x, weight=w, bias=b, stride=[2, 2], padding=[1, 1])", 50,
                    {{"w", w}, {"b", {0.5, -1, 2, 0.25}}}),
                {4.5,  -16.5, -11.5, -22.5, -6.5, 49.5, 10.5, 6.5,  -17.5, -10,   4,    -5,
                 39,   -20,   -14,   -12,   -11,  11,   3,    -21,  6,     -13,   18,   -7,
                 10,   10,    -15,   -11.75, 37.25, -6.75, 49.25, -24.75, -4.75, -17.75, -13.75, 22.25});
}

// The epilogue's loads broadcast to the output: a [C, 1, 1] scale per channel.
TEST(Window, EpilogueBroadcastsPerChannel) {
  const auto y = run("in x : f32[1, 2, 5, 5]\nparam s : f32[2, 1, 1] = \"s\"\nout y : f32[1, 2, 1, 1]\n",
                     "stage y = window adaptive_avg(x) { epilogue { y = acc * s + 1 } }", 50, {{"s", {2, -3}}});
  const auto x = ramp(50);
  double m0 = 0, m1 = 0;
  for (size_t i = 0; i < 25; ++i) m0 += x[i] / 25, m1 += x[25 + i] / 25;
  expect_values(y, {m0 * 2 + 1, m1 * -3 + 1});
}

// NaN wins a max window, as in PyTorch's max_pool; padding never does.
TEST(Window, MaxPropagatesNaN) {
  const dsl::Program p = compile("nan", "ucut 1\nin x : f32[1, 1, 4]\nout y : f32[1, 1, 3]\n"
                                        "stage y = window max(x, window=[2], padding=[1])\n");
  ASSERT_FALSE(p.stages.empty());
  dsl::InterpTensors ts{{"x", {-3, std::nan(""), -2, -1}}};
  ASSERT_TRUE(dsl::interp_stage(p, 0, ts, {}).ok());
  const auto& y = ts["y"];  // windows [pad, -3], [NaN, -2], [-1, pad]
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0], -3);
  EXPECT_TRUE(std::isnan(y[1]));
  EXPECT_EQ(y[2], -1);
}

// ---- generated code --------------------------------------------------------------------------

// KernelBench's MaxPool2d (kernel 3, stride 2, padding 1, dilation 2) and an AvgPool3d with
// ceil_mode and count_include_pad false, f32, then the adaptive average of a bf16 tensor; a global
// average (scaled) and a 16 x 16 max pool, whose windows a warp reduces.
const char* const kPools = R"(ucut 1
name window_pools_f32
in x : f32[16, 32, 64, 64]
out ym : f32[16, 32, 31, 31]
in x3 : f32[4, 8, 16, 16, 16]
out ya : f32[4, 8, 9, 9, 9]
in xb : bf16[8, 64, 14, 14]
out yg : bf16[8, 64, 1, 1]
stage ym = window max(x, window=[3, 3], stride=[2, 2], padding=[1, 1], dilation=[2, 2])
stage ya = window avg(x3, window=[3, 3, 3], stride=[2, 2, 2], padding=[1, 1, 1], ceil_mode=true, count_include_pad=false) {
  threads 128 items_per_thread 1
}
stage yg = window adaptive_avg(xb)
in xl : f32[4, 16, 64, 64]
out ygl : f32[4, 16, 1, 1]
out yml : f32[4, 16, 4, 4]
stage ygl = window adaptive_avg(xl) { epilogue { ygl = acc * 2 } }
stage yml = window max(xl, window=[16, 16])
)";

// A depthwise 3x3 conv (channel multiplier 2) with its bias and a ReLU6 (hardtanh 0..6), two outputs a thread.
const char* const kDepthwise = R"(ucut 1
name window_depthwise_relu6
in x : f32[8, 32, 56, 56]
param w : f32[64, 1, 3, 3] = "conv.weight"
param b : f32[64] = "conv.bias"
out y : f32[8, 64, 56, 56]
stage y = window sum(x, weight=w, bias=b, padding=[1, 1]) {
  threads 256 items_per_thread 2
  epilogue { y = hardtanh(acc, 0, 6) }
}
)";

// A depthwise-separable block as the lowering writes it: the window stage writes its NCHW result
// through a view of the [N, C, H*W] tensor the pointwise conv's batched GEMM reads (the view's
// pointer is its tensor's, docs/language.md "Views").
const char* const kSeparable = R"(ucut 1
name window_depthwise_separable
in x : f32[4, 32, 28, 28]
param dw : f32[32, 1, 3, 3] = "depthwise.weight"
param pw : f32[64, 32, 1, 1] = "pointwise.weight"
out y : f32[4, 64, 784]
tmp t_cs : f32[4, 32, 784]
tmp pwb : f32[4, 64, 32]
view pwb_v : f32[4, 64, 32] = pw strides [0, 32, 1] offset 0
view t : f32[4, 32, 28, 28] = t_cs strides [25088, 784, 28, 1] offset 0
stage t = window sum(x, weight=dw, padding=[1, 1]) { epilogue { t = relu(acc) } }
stage pwb = elementwise { body { pwb = pwb_v } }
stage y = gemm(pwb, t_cs) { precision tf32m tile 128x128x32 stages 3 }
)";

TEST(Window, GoldenPools) { check_golden(compile("window_pools_f32", kPools)); }
TEST(Window, GoldenDepthwiseSeparable) { check_golden(compile("window_depthwise_separable", kSeparable)); }
TEST(Window, GoldenDepthwise) { check_golden(compile("window_depthwise_relu6", kDepthwise)); }

}  // namespace
}  // namespace ucut::codegen
