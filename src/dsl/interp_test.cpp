// Hand-computed checks of the CPU interpreter of the non-GEMM stages (the tests' reference).
#include "dsl/interp.h"

#include <string>
#include <vector>

#include "dsl/dsl.h"
#include "dsl/simt_plan.h"

#include <cmath>

#include <gtest/gtest.h>

#include <sstream>

#include <fstream>

namespace ucut::dsl {
namespace {

Tensor T(const std::string& n, DType d, std::vector<int64_t> s) {
  Tensor t;
  t.name = n;
  t.dtype = d;
  t.shape = std::move(s);
  return t;
}

Program one_stage(std::vector<Tensor> ts, decltype(Stage::body) body) {
  Program p;
  p.name = "t";
  p.tensors = std::move(ts);
  Stage st;
  st.name = "s0";
  st.outputs = {"y"};
  st.body = std::move(body);
  p.stages.push_back(st);
  return p;
}

TEST(Interp, SoftmaxOfASmallRow) {
  RowwiseStage rs;
  rs.op = "softmax";
  rs.input = "x";
  auto p = one_stage({T("x", DType::f32, {1, 3}), T("y", DType::f32, {1, 3})}, rs);
  InterpTensors ts{{"x", {0.0, std::log(2.0), std::log(5.0)}}};
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  EXPECT_NEAR(ts["y"][0], 1.0 / 8, 1e-12);
  EXPECT_NEAR(ts["y"][1], 2.0 / 8, 1e-12);
  EXPECT_NEAR(ts["y"][2], 5.0 / 8, 1e-12);
}

// A view reads its tensor at strides from an offset: the k third of a [2, 4, 24] projection seen
// as [B, H, T, D] = [2, 2, 4, 4], and its transpose broadcast against a [4] row.
TEST(Interp, ViewsReadAtTheirStrides) {
  auto r = dsl_compile({"v.ucut",
                        "ucut 1\nin t0 : f32[2, 4, 24]\nin b : f32[4]\nout y : f32[2, 2, 4, 4]\n"
                        "view kv : f32[2, 2, 4, 4] = t0 strides [96, 4, 24, 1] offset 8\n"
                        "stage y = elementwise { body { y = kv + b } }\n"});
  ASSERT_TRUE(r.program.has_value());
  InterpTensors ts;
  std::vector<double> t0(2 * 4 * 24), b = {0, 100, 200, 300};
  for (size_t i = 0; i < t0.size(); ++i) t0[i] = static_cast<double>(i);
  ts["t0"] = t0;
  ts["b"] = b;
  ASSERT_TRUE(interp_stage(*r.program, 0, ts, {}).ok());
  for (int bb = 0; bb < 2; ++bb)
    for (int h = 0; h < 2; ++h)
      for (int t = 0; t < 4; ++t)
        for (int d = 0; d < 4; ++d) {
          const size_t at = static_cast<size_t>(((bb * 2 + h) * 4 + t) * 4 + d);
          EXPECT_EQ(ts["y"][at], t0[static_cast<size_t>(bb * 96 + t * 24 + 8 + h * 4 + d)] + b[static_cast<size_t>(d)]);
        }
  // the same view into a [4, 4, 4] output (a batched GEMM's folded operand): the output's element
  // order, as the kernel reads it
  auto f = dsl_compile({"f.ucut",
                        "ucut 1\nin t0 : f32[2, 4, 24]\nout y : f32[4, 4, 4]\n"
                        "view kv : f32[2, 2, 4, 4] = t0 strides [96, 4, 24, 1] offset 8\n"
                        "stage y = elementwise { body { y = kv } }\n"});
  ASSERT_TRUE(f.program.has_value());
  InterpTensors fs{{"t0", t0}};
  ASSERT_TRUE(interp_stage(*f.program, 0, fs, {}).ok());
  for (size_t i = 0; i < 64; ++i) {
    const size_t bb = i / 32, h = i / 16 % 2, t = i / 4 % 4, d = i % 4;
    EXPECT_EQ(fs["y"][i], t0[bb * 96 + t * 24 + 8 + h * 4 + d]) << i;
  }
}

// Stages writing contiguous slices of a tmp (two phases of an interleave) and a view reading it
// across them: y[i, j, k] = z[k, i, j], z's halves 2a and b + 1.
TEST(Interp, SlicesWrittenThenReadThroughAView) {
  std::ifstream f(std::string(UCUTLASS_SOURCE_DIR) + "/tests/golden/dsl/ok/view_slices_written.ucut");
  std::stringstream ss;
  ss << f.rdbuf();
  auto r = dsl_compile({"s.ucut", ss.str()});
  ASSERT_TRUE(r.program.has_value());
  InterpTensors ts;
  std::vector<double> a(12), b(12);
  for (size_t i = 0; i < 12; ++i) a[i] = static_cast<double>(i), b[i] = 100.0 + static_cast<double>(i);
  ts["a"] = a;
  ts["b"] = b;
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(interp_stage(*r.program, i, ts, {}).ok()) << i;
  ASSERT_EQ(ts["y"].size(), 24u);
  for (size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(ts["y"][i * 2], 2 * a[i]) << i;
    EXPECT_EQ(ts["y"][i * 2 + 1], b[i] + 1) << i;
  }
}

TEST(Interp, LayerNormWithWeightAndBias) {
  RowwiseStage rs;
  rs.op = "layer_norm";
  rs.input = "x";
  rs.extra = {"w", "b"};
  rs.attrs["eps"] = 0;
  auto p = one_stage({T("x", DType::f32, {1, 4}), T("w", DType::f32, {4}), T("b", DType::f32, {4}),
                      T("y", DType::f32, {1, 4})}, rs);
  // mean 2.5, variance 1.25
  InterpTensors ts{{"x", {1, 2, 3, 4}}, {"w", {2, 2, 2, 2}}, {"b", {0, 0, 0, 1}}};
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  const double s = 1 / std::sqrt(1.25);
  EXPECT_NEAR(ts["y"][0], 2 * -1.5 * s, 1e-12);
  EXPECT_NEAR(ts["y"][3], 2 * 1.5 * s + 1, 1e-12);
}

// The ops over several inputs, by hand: row 0 of x = (3, 4), y = (4, 3), n = (0, 0).
TEST(Interp, CosinePairwiseAndTripletRows) {
  InterpTensors data{{"x", {3, 4, 1, 0}}, {"y", {4, 3, 0, 0}}, {"n", {0, 0, 1, 0}}};
  auto run = [&](const std::string& op, std::vector<std::string> more, std::map<std::string, double> attrs) {
    RowwiseStage rs;
    rs.op = op;
    rs.input = "x";
    rs.operands = std::move(more);
    rs.attrs = std::move(attrs);
    auto p = one_stage({T("x", DType::f32, {2, 2}), T("y", DType::f32, {2, 2}), T("n", DType::f32, {2, 2}),
                        T("y", DType::f32, {2})}, rs);
    p.stages[0].outputs = {"out"};
    p.tensors.back().name = "out";
    InterpTensors ts = data;
    EXPECT_TRUE(interp_stage(p, 0, ts, {}).ok()) << op;
    return ts["out"];
  };
  // (12 + 12) / (5 * 5); row 1: y is all zero, its norm clamped to eps
  auto c = run("cosine_similarity", {"y"}, {{"eps", 1e-8}});
  EXPECT_NEAR(c[0], 24.0 / 25, 1e-12);
  EXPECT_NEAR(c[1], 0.0, 1e-12);
  // |x - y + eps|: |(-1 + e, 1 + e)|
  const double e = 1e-6;
  auto d = run("pairwise_distance", {"y"}, {{"eps", e}});
  EXPECT_NEAR(d[0], std::sqrt((-1 + e) * (-1 + e) + (1 + e) * (1 + e)), 1e-12);
  // max(margin + |x - y + eps| - |x - n + eps|, 0): row 0 |(3, 4) + e| = ~5, row 1 |(0, 0) + e|
  auto t = run("triplet_margin", {"y", "n"}, {{"eps", e}, {"margin", 4.0}});
  EXPECT_NEAR(t[0], 4.0 + d[0] - std::sqrt((3 + e) * (3 + e) + (4 + e) * (4 + e)), 1e-12);
  EXPECT_NEAR(t[1], 4.0 + std::sqrt((1 + e) * (1 + e) + e * e) - std::sqrt(2 * e * e), 1e-12);
  auto z = run("triplet_margin", {"y", "n"}, {{"eps", e}, {"margin", 0.0}});
  EXPECT_EQ(z[0], 0.0);  // 1.41 - 5 < 0: clamped
}

// Column logsumexp and the column extremes with their indices (first occurrence; NaN wins).
TEST(Interp, ColumnLogSumExpAndMaxWithIndices) {
  // x = [[1, 5], [3, 5], [2, NaN]] (3 rows, 2 columns), reduced over dim 0
  InterpTensors ts{{"x", {1, 5, 3, 5, 2, NAN}}};
  auto run = [&](const std::string& op, std::vector<std::string> outs, DType dt) {
    ReduceStage rs;
    rs.op = op;
    rs.inputs = {"x"};
    rs.dims = {0};
    auto p = one_stage({T("x", DType::f32, {3, 2}), T(outs[0], dt, {2})}, rs);
    if (outs.size() > 1) p.tensors.push_back(T(outs[1], DType::i64, {2}));
    p.stages[0].outputs = outs;
    EXPECT_TRUE(interp_stage(p, 0, ts, {}).ok()) << op;
  };
  run("max", {"v", "i"}, DType::f32);
  EXPECT_EQ(ts["v"][0], 3);
  EXPECT_EQ(ts["i"][0], 1);
  EXPECT_TRUE(std::isnan(ts["v"][1]));
  EXPECT_EQ(ts["i"][1], 2);
  run("argmin", {"a"}, DType::i64);
  EXPECT_EQ(ts["a"][0], 0);
  EXPECT_EQ(ts["a"][1], 2);
  ts["x"] = {0, 1, std::log(3.0), 1, 0, 1};
  run("logsumexp", {"l"}, DType::f32);
  EXPECT_NEAR(ts["l"][0], std::log(1 + 3 + 1.0), 1e-12);
  EXPECT_NEAR(ts["l"][1], 1 + std::log(3.0), 1e-12);
}

// tf32 keeps 10 mantissa bits rounding to nearest (ties away from zero), tf32_trunc drops them.
TEST(Interp, Tf32RoundingAndTruncation) {
  const double ulp = std::ldexp(1.0, -10);  // of a TF32 value in [1, 2)
  EXPECT_EQ(interp_fn(Fn::tf32, 1 + 0.49 * ulp, 0, 0, {}), 1.0);
  EXPECT_EQ(interp_fn(Fn::tf32, 1 + 0.5 * ulp, 0, 0, {}), 1 + ulp);  // a tie: away from zero
  EXPECT_EQ(interp_fn(Fn::tf32, -(1 + 0.5 * ulp), 0, 0, {}), -(1 + ulp));
  EXPECT_EQ(interp_fn(Fn::tf32_trunc, 1 + 0.99 * ulp, 0, 0, {}), 1.0);
  EXPECT_EQ(interp_fn(Fn::tf32_trunc, -(1 + 0.99 * ulp), 0, 0, {}), -1.0);
  EXPECT_TRUE(std::isinf(interp_fn(Fn::tf32, INFINITY, 0, 0, {})));
  // x - tf32(x) is exact in fp32 and below half a TF32 unit
  const double x = 1.2345678;
  EXPECT_LE(std::fabs(x - interp_fn(Fn::tf32, x, 0, 0, {})), 0.5 * ulp + 1e-9);
}

// round_bf16 / round_f16 round as PyTorch stores a bf16 / f16 result: nearest, ties to even, f16's
// range and subnormals included.
TEST(Interp, SixteenBitRoundingIsNearestEven) {
  const double b = std::ldexp(1.0, -7);  // a bf16 unit in [1, 2)
  EXPECT_EQ(interp_fn(Fn::round_bf16, 1 + 0.49 * b, 0, 0, {}), 1.0);
  EXPECT_EQ(interp_fn(Fn::round_bf16, 1 + 0.5 * b, 0, 0, {}), 1.0);           // a tie: to even (1)
  EXPECT_EQ(interp_fn(Fn::round_bf16, 1 + 1.5 * b, 0, 0, {}), 1 + 2 * b);     // a tie: to even (1 + 2b)
  EXPECT_EQ(interp_fn(Fn::round_bf16, -(1 + 0.51 * b), 0, 0, {}), -(1 + b));
  EXPECT_TRUE(std::isnan(interp_fn(Fn::round_bf16, NAN, 0, 0, {})));
  EXPECT_TRUE(std::isinf(interp_fn(Fn::round_bf16, 3.4e38, 0, 0, {})));      // past bf16's largest value
  const double h = std::ldexp(1.0, -10);  // an f16 unit in [1, 2)
  EXPECT_EQ(interp_fn(Fn::round_f16, 1 + 0.5 * h, 0, 0, {}), 1.0);
  EXPECT_EQ(interp_fn(Fn::round_f16, 1 + 1.5 * h, 0, 0, {}), 1 + 2 * h);
  EXPECT_EQ(interp_fn(Fn::round_f16, 3.14159, 0, 0, {}), 3.140625);
  EXPECT_EQ(interp_fn(Fn::round_f16, 65519.0, 0, 0, {}), 65504.0);            // f16's largest finite value
  EXPECT_TRUE(std::isinf(interp_fn(Fn::round_f16, -65520.0, 0, 0, {})));
  EXPECT_EQ(interp_fn(Fn::round_f16, std::ldexp(1.0, -25), 0, 0, {}), 0.0);   // half the smallest subnormal: even
  EXPECT_EQ(interp_fn(Fn::round_f16, 3 * std::ldexp(1.0, -25), 0, 0, {}), std::ldexp(1.0, -23));
  EXPECT_EQ(interp_fn(Fn::round_f16, 0.1, 0, 0, {}), 0.0999755859375);
}

// Two groups of two channels of two elements: each group normalized on its own, weight and
// bias indexed by channel.
TEST(Interp, GroupNormRowsAreGroupsAndWeightsChannels) {
  RowwiseStage rs;
  rs.op = "group_norm";
  rs.input = "x";
  rs.extra = {"w", "b"};
  rs.attrs["eps"] = 0;
  rs.attrs["groups"] = 2;
  auto p = one_stage({T("x", DType::f32, {1, 4, 2}), T("w", DType::f32, {4}), T("b", DType::f32, {4}),
                      T("y", DType::f32, {1, 4, 2})}, rs);
  // group 0: 1 2 3 4 (mean 2.5, variance 1.25); group 1: 5 6 7 8 (mean 6.5, variance 1.25)
  InterpTensors ts{{"x", {1, 2, 3, 4, 5, 6, 7, 8}}, {"w", {1, 2, 3, 4}}, {"b", {0, 0, 0, 10}}};
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  const double s = 1 / std::sqrt(1.25);
  EXPECT_NEAR(ts["y"][0], -1.5 * s, 1e-12);         // channel 0
  EXPECT_NEAR(ts["y"][3], 2 * 1.5 * s, 1e-12);      // channel 1
  EXPECT_NEAR(ts["y"][4], 3 * -1.5 * s, 1e-12);     // channel 2, the first of group 1
  EXPECT_NEAR(ts["y"][7], 4 * 1.5 * s + 10, 1e-12); // channel 3
}

TEST(Interp, CumsumReverseExclusiveMasked) {
  ScanStage sc;
  sc.op = "cumsum";
  sc.input = "x";
  sc.exclusive = true;
  sc.reverse = true;
  sc.mask = "m";
  auto p = one_stage({T("x", DType::f32, {1, 4}), T("m", DType::boolean, {1, 4}),
                      T("y", DType::f32, {1, 4})}, sc);
  InterpTensors ts{{"x", {1, 2, 3, 4}}, {"m", {1, 1, 0, 1}}};
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  EXPECT_EQ(ts["y"], (std::vector<double>{6, 4, 4, 0}));
}

// The warp form of PyTorch's row scan that scan_row_torch_kernel runs (runtime/simt_scan.cuh): lane
// i of a 32-element chunk, the running total folded into lane 0, then per step m every lane with bit
// m set adds lane (i & ~(2^(m+1) - 1)) | (2^m - 1), all lanes reading before any writes.
std::vector<float> warp_scan(const std::vector<float>& row, bool prod) {
  std::vector<float> out(row.size());
  float total = prod ? 1.f : 0.f;
  for (size_t b = 0; b < row.size(); b += 32) {
    float v[32];
    for (int i = 0; i < 32; ++i) v[i] = b + i < row.size() ? row[b + i] : (prod ? 1.f : 0.f);
    v[0] = prod ? v[0] * total : v[0] + total;
    for (int m = 0; m < 5; ++m) {
      const int s = 1 << m;
      float w[32];
      for (int i = 0; i < 32; ++i) w[i] = v[(i & ~(2 * s - 1)) | (s - 1)];
      for (int i = 0; i < 32; ++i)
        if (i & s) v[i] = prod ? v[i] * w[i] : v[i] + w[i];
    }
    for (int i = 0; i < 32 && b + i < row.size(); ++i) out[b + i] = v[i];
    total = v[31];
  }
  return out;
}

// `order torch`: PyTorch's fp32 order, which differs from an exact (fp64) cumsum in the last bits,
// equals the warp form bit for bit (cumsum and cumprod, a row that ends inside a chunk), and stays
// an accurate prefix sum.
// PyTorch's choice of chunk (ATen's get_log_num_threads_x_inner_scan and its test's values).
TEST(Interp, TorchScanChunkFollowsATen) {
  EXPECT_EQ(simt_torch_scan_log_threads_x(4096, 8), 4);
  EXPECT_EQ(simt_torch_scan_log_threads_x(4097, 8), 4);
  EXPECT_EQ(simt_torch_scan_log_threads_x(95760, 8), 4);
  EXPECT_EQ(simt_torch_scan_log_threads_x(16384, 16384), 4);
  EXPECT_EQ(simt_torch_scan_log_threads_x(65536, 4096), 4);
  EXPECT_EQ(simt_torch_scan_log_threads_x(64, 256), 5);    // (9 + 8 - 6) / 2
  EXPECT_EQ(simt_torch_scan_log_threads_x(4, 16384), 9);   // capped at 512 threads
}

// order torch's launch: `auto` is the fastest measured plan (128 threads, segments of 16 chunks;
// 256 x 8 on rows that are not 16-byte aligned), the ring of segments stays within 36 KB a block.
TEST(Interp, TorchScanPlanKeepsItsRingInSharedMemory) {
  SimtKnobs k;
  k.order = ScanOrder::torch;
  auto a = simt_plan_scan(16384, 16384, 4, k);
  ASSERT_TRUE(a);
  EXPECT_TRUE(a->torch);
  EXPECT_EQ(a->threads, 128);
  EXPECT_EQ(a->items, 16);
  EXPECT_EQ(a->stages, 4);
  auto odd = simt_plan_scan(16384, 16381, 4, k);
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->threads, 256);
  EXPECT_EQ(odd->items, 8);
  k.threads = 256;
  k.items_per_thread = 16;
  auto two = simt_plan_scan(16384, 16384, 4, k);
  ASSERT_TRUE(two);
  EXPECT_EQ(two->stages, 2);  // 16 KB a segment
  k.threads = 1024;
  auto big = simt_plan_scan(16384, 16384, 4, k);
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("shared memory"), std::string::npos) << big.error().message;
}

TEST(Interp, TorchOrderScanIsPyTorchsSklanskyInFp32) {
  const int64_t rows = 1024, cols = 1000;  // PyTorch's rule gives 16 x-threads: 32-element chunks
  ASSERT_EQ(simt_torch_scan_log_threads_x(rows, cols), 4);
  std::vector<double> x(rows * cols);
  uint32_t seed = 12345;
  for (auto& e : x) {
    seed = seed * 1664525u + 1013904223u;
    e = static_cast<float>((static_cast<double>(seed >> 8) / (1 << 24) - 0.5) * 4);
  }
  for (const char* op : {"cumsum", "cumprod"}) {
    const bool prod = std::string(op) == "cumprod";
    std::vector<double> in = x;
    if (prod)
      for (auto& e : in) e = static_cast<float>(1.0 + e * 1e-3);
    ScanStage sc;
    sc.op = op;
    sc.input = "x";
    sc.knobs.order = ScanOrder::torch;
    auto p = one_stage({T("x", DType::f32, {rows, cols}), T("y", DType::f32, {rows, cols})}, sc);
    InterpTensors ts{{"x", in}};
    ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
    sc.knobs.order = ScanOrder::auto_;
    InterpTensors exact{{"x", in}};
    ASSERT_TRUE(interp_stage(one_stage({T("x", DType::f32, {rows, cols}), T("y", DType::f32, {rows, cols})}, sc), 0,
                             exact, {}).ok());
    int differs = 0;
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> row(in.begin() + r * cols, in.begin() + (r + 1) * cols);
      const auto want = warp_scan(row, prod);
      for (int64_t c = 0; c < cols; ++c) {
        const double got = ts["y"][static_cast<size_t>(r * cols + c)];
        ASSERT_EQ(got, static_cast<double>(want[static_cast<size_t>(c)])) << op << " row " << r << " col " << c;
        const double e = exact["y"][static_cast<size_t>(r * cols + c)];
        EXPECT_NEAR(got, e, 1e-4 * (1 + std::abs(e))) << op;
        differs += static_cast<float>(e) != static_cast<float>(got);
      }
    }
    EXPECT_GT(differs, 0) << op << ": the fp32 order must round differently from the exact sum somewhere";
  }
}

// Reversed: PyTorch's scan of the flipped row.
TEST(Interp, TorchOrderReverseScansTheFlippedRow) {
  const int64_t rows = 128, cols = 77;
  ASSERT_EQ(simt_torch_scan_log_threads_x(rows, cols), 4);
  std::vector<double> in(rows * cols);
  for (int64_t c = 0; c < rows * cols; ++c) in[static_cast<size_t>(c)] = static_cast<float>(0.1 * (c % 7) - 0.3);
  ScanStage sc;
  sc.op = "cumsum";
  sc.input = "x";
  sc.reverse = true;
  sc.knobs.order = ScanOrder::torch;
  InterpTensors ts{{"x", in}};
  ASSERT_TRUE(interp_stage(one_stage({T("x", DType::f32, {rows, cols}), T("y", DType::f32, {rows, cols})}, sc), 0, ts, {}).ok());
  std::vector<float> flipped(in.rend() - cols, in.rend());  // row 0, flipped
  const auto want = warp_scan(flipped, false);
  for (int64_t c = 0; c < cols; ++c)
    EXPECT_EQ(ts["y"][static_cast<size_t>(c)], static_cast<double>(want[static_cast<size_t>(cols - 1 - c)])) << c;
}

// Exclusive, reversed and masked at once: what PyTorch computes for cumsum(x * m) - x * m of a
// flipped row, its inclusive fp32 sum minus the element, rounded once more.
TEST(Interp, TorchOrderExclusiveIsTheInclusiveSumMinusTheElement) {
  const int64_t rows = 128, cols = 77;
  std::vector<double> in(rows * cols), mask(rows * cols);
  for (int64_t c = 0; c < rows * cols; ++c) {
    in[static_cast<size_t>(c)] = static_cast<float>(0.37 * (c % 11) - 1.1);
    mask[static_cast<size_t>(c)] = (c % 3) != 0;
  }
  ScanStage sc;
  sc.op = "cumsum";
  sc.input = "x";
  sc.mask = "m";
  sc.reverse = true;
  sc.exclusive = true;
  sc.knobs.order = ScanOrder::torch;
  auto prog = one_stage({T("x", DType::f32, {rows, cols}), T("m", DType::boolean, {rows, cols}),
                         T("y", DType::f32, {rows, cols})},
                        sc);
  InterpTensors ts{{"x", in}, {"m", mask}};
  ASSERT_TRUE(interp_stage(prog, 0, ts, {}).ok());
  std::vector<float> flipped(static_cast<size_t>(cols));  // row 0 masked and flipped
  for (int64_t c = 0; c < cols; ++c)
    flipped[static_cast<size_t>(c)] = mask[static_cast<size_t>(cols - 1 - c)] ? static_cast<float>(in[static_cast<size_t>(cols - 1 - c)]) : 0.f;
  const auto incl = warp_scan(flipped, false);
  int nonzero = 0;
  for (int64_t c = 0; c < cols; ++c) {
    const size_t q = static_cast<size_t>(cols - 1 - c);
    const float want = incl[q] - flipped[q];
    EXPECT_EQ(ts["y"][static_cast<size_t>(c)], static_cast<double>(want)) << c;
    nonzero += want != 0.f;
  }
  EXPECT_GT(nonzero, cols / 2);
  EXPECT_EQ(ts["y"][static_cast<size_t>(cols - 1)], 0.0);  // the first element of the flipped row
}

TEST(Interp, CrossEntropyWithIgnoredRow) {
  ReduceStage rs;
  rs.op = "cross_entropy";
  rs.inputs = {"x", "t"};
  auto p = one_stage({T("x", DType::f32, {3, 2}), T("t", DType::i64, {3}), T("y", DType::f32, {1})}, rs);
  // row 0: logits (0, 0), target 1 -> log 2; row 1 ignored; row 2: (log 3, 0), target 0 -> log(4/3)
  InterpTensors ts{{"x", {0, 0, 7, 7, std::log(3.0), 0}}, {"t", {1, -100, 0}}};
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  EXPECT_NEAR(ts["y"][0], (std::log(2.0) + std::log(4.0 / 3)) / 2, 1e-12);
}

TEST(Interp, ColumnSumAndHuberMean) {
  ReduceStage rs;
  rs.op = "sum";
  rs.inputs = {"x"};
  rs.dims = {0};
  auto p = one_stage({T("x", DType::f32, {2, 3}), T("y", DType::f32, {3})}, rs);
  InterpTensors ts{{"x", {1, 2, 3, 10, 20, 30}}};
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  EXPECT_EQ(ts["y"], (std::vector<double>{11, 22, 33}));

  ReduceStage h;
  h.op = "huber";
  h.inputs = {"x", "t"};
  h.attrs["delta"] = 1;
  auto q = one_stage({T("x", DType::f32, {2}), T("t", DType::f32, {2}), T("y", DType::f32, {1})}, h);
  InterpTensors hs{{"x", {0.5, 3}}, {"t", {0, 0}}};  // 0.125 and 2.5
  ASSERT_TRUE(interp_stage(q, 0, hs, {}).ok());
  EXPECT_NEAR(hs["y"][0], (0.125 + 2.5) / 2, 1e-12);
}

// reduction=sum and batchmean are what the stage says (the suite's loss_kl_div lowers to
// reduction=sum then / rows; both the code generator and this interpreter computed a mean).
TEST(Interp, LossReductionSetting) {
  auto run = [](const std::string& reduction) {
    ReduceStage k;
    k.op = "kl_div";
    k.inputs = {"x", "t"};
    k.reduction = reduction;
    auto p = one_stage({T("x", DType::f32, {2, 2}), T("t", DType::f32, {2, 2}), T("y", DType::f32, {1})}, k);
    InterpTensors ts{{"x", {std::log(0.5), std::log(0.5), std::log(0.25), std::log(0.75)}},
                     {"t", {0.5, 0.5, 0.5, 0.5}}};
    EXPECT_TRUE(interp_stage(p, 0, ts, {}).ok());
    return ts["y"][0];
  };
  // sum of t (ln t - x): row 0 zero, row 1 0.5 ln 2 + 0.5 ln(2/3)
  const double total = 0.5 * std::log(2.0) + 0.5 * std::log(2.0 / 3.0);
  EXPECT_NEAR(run("sum"), total, 1e-12);
  EXPECT_NEAR(run("batchmean"), total / 2, 1e-12);
  EXPECT_NEAR(run("mean"), total / 4, 1e-12);
  EXPECT_NEAR(run(""), total / 4, 1e-12);
}

TEST(Interp, ElementwiseBroadcastAndFunctions) {
  auto load = [](const std::string& n, LoadMode m) {
    auto e = std::make_shared<Expr>();
    e->kind = Expr::Kind::load;
    e->name = n;
    e->mode = m;
    return e;
  };
  auto add = std::make_shared<Expr>();
  add->kind = Expr::Kind::binary;
  add->op = BinOp::add;
  add->args = {load("x", LoadMode::full), load("b", LoadMode::full)};
  auto relu = std::make_shared<Expr>();
  relu->kind = Expr::Kind::unary;
  relu->fn = Fn::relu;
  relu->args = {add};
  ElementwiseStage es;
  EpilogueStmt s;
  s.kind = EpilogueStmt::Kind::store;
  s.name = "y";
  s.value = relu;
  es.body.stmts = {s};
  auto p = one_stage({T("x", DType::f32, {2, 2}), T("b", DType::f32, {2}), T("y", DType::f32, {2, 2})}, es);
  InterpTensors ts{{"x", {1, -5, 3, 4}}, {"b", {10, 1}}};
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  EXPECT_EQ(ts["y"], (std::vector<double>{11, 0, 13, 5}));
  EXPECT_NEAR(interp_fn(Fn::gelu, 1.0, 0, 0, {}), 0.8413447460685429, 1e-12);
  EXPECT_NEAR(interp_fn(Fn::softplus, 30.0, 0, 0, {1, 20}), 30.0, 1e-12);
}

// `row`/`col`: the element's position within its matrix. A causal softmax over two [3, 3]
// matrices (rows flattened across the batch): row i keeps columns 0..i, the rest weigh 0; an
// elementwise body sees the same positions.
TEST(Interp, PositionsInARowwisePrologueAndAnElementwiseBody) {
  auto r = dsl_compile({"pos.ucut",
                        "ucut 1\nin s : f32[2, 3, 3]\nout p : f32[2, 3, 3]\nout t : f32[2, 3, 3]\n"
                        "stage p = rowwise softmax(s) { prologue { s = where(le(col, row), acc, -inf) } }\n"
                        "stage t = elementwise { body { t = row * 10 + col + where(gt(col, row), 0.5, 0) } }\n"});
  ASSERT_TRUE(r.program);
  InterpTensors ts{{"s", std::vector<double>(18, 0.0)}};
  ts["s"][4] = std::log(3.0);  // matrix 0, row 1, col 1: weight 3 against col 0's 1 (matrix 1: even)
  ASSERT_TRUE(interp_stage(*r.program, 0, ts, {}).ok());
  const std::vector<double> want = {1, 0, 0, 0.25, 0.75, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3};
  for (size_t m = 0; m < 2; ++m)
    for (size_t i = 0; i < 9; ++i)
      EXPECT_NEAR(ts["p"][m * 9 + i], m == 1 && (i == 3 || i == 4) ? 0.5 : want[i], 1e-12) << m << "," << i;
  ASSERT_TRUE(interp_stage(*r.program, 1, ts, {}).ok());
  EXPECT_EQ(ts["t"], (std::vector<double>{0, 1.5, 2.5, 10, 11, 12.5, 20, 21, 22, 0, 1.5, 2.5, 10, 11, 12.5, 20, 21, 22}));
  EXPECT_EQ(interp_fn(Fn::where, 0, 1, 2, {}), 2);
  EXPECT_EQ(interp_fn(Fn::le, 2, 2, 0, {}), 1);
  EXPECT_EQ(interp_fn(Fn::lt, 2, 2, 0, {}), 0);
}

// A loss's prologue maps its first input before the loss term: mse(2 x, t).
TEST(Interp, LossPrologueMapsThePrediction) {
  auto acc = std::make_shared<Expr>();
  acc->kind = Expr::Kind::acc;
  auto two = std::make_shared<Expr>();
  two->kind = Expr::Kind::constant;
  two->value = 2;
  auto twice = std::make_shared<Expr>();
  twice->kind = Expr::Kind::binary;
  twice->op = BinOp::mul;
  twice->args = {two, acc};
  ReduceStage rs;
  rs.op = "mse";
  rs.inputs = {"x", "t"};
  EpilogueStmt st;
  st.kind = EpilogueStmt::Kind::store;
  st.name = "x";
  st.value = twice;
  rs.prologue.stmts = {st};
  auto p = one_stage({T("x", DType::f32, {2}), T("t", DType::f32, {2}), T("y", DType::f32, {1})}, rs);
  InterpTensors ts{{"x", {1, 2}}, {"t", {0, 1}}};
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  EXPECT_NEAR(ts["y"][0], (4.0 + 9.0) / 2, 1e-12);  // (2 - 0)^2 and (4 - 1)^2
}

// Two queries over three keys of one matrix, by hand: with q.k = [0, ln 2 / s, ln 3 / s] for the
// second query the weights are 1 : 2 : 3 (and causal, the first query sees key 0 only).
TEST(Interp, AttentionByHandCausalAndNot) {
  const double s = 0.5, l2 = std::log(2.0) / s, l3 = std::log(3.0) / s;
  for (bool causal : {false, true}) {
    AttentionStage a;
    a.q = "q";
    a.k = "k";
    a.v = "v";
    a.causal = causal;
    a.scale = s;
    a.batch = 1;
    a.lq = 2;
    a.lk = 3;
    a.d = 1;
    a.dv = 2;
    Program p = one_stage({T("q", DType::bf16, {2, 1}), T("k", DType::bf16, {3, 1}), T("v", DType::bf16, {3, 2}),
                           T("y", DType::bf16, {2, 2})},
                          a);
    InterpTensors ts;
    ts["q"] = {0, 1};
    ts["k"] = {0, l2, l3};
    ts["v"] = {6, 1, 12, 2, 18, 3};
    ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
    const auto& y = ts.at("y");
    // query 0: every score 0: the mean of the visible rows of v (causal: row 0 only)
    EXPECT_NEAR(y[0], causal ? 6 : 12, 1e-12);
    EXPECT_NEAR(y[1], causal ? 1 : 2, 1e-12);
    // query 1: weights 1 : 2 : 3 over all keys; causal: keys 0 and 1 only, 1 : 2
    EXPECT_NEAR(y[2], causal ? (6 + 2 * 12) / 3.0 : (6 + 2 * 12 + 3 * 18) / 6.0, 1e-12);
    EXPECT_NEAR(y[3], causal ? (1 + 2 * 2) / 3.0 : (1 + 2 * 2 + 3 * 3) / 6.0, 1e-12);
  }
}

// Grouped-query attention: query heads 0 and 1 of each batch read the one key/value head of that
// batch (kv_group 2), so each equals attention over those keys by itself.
TEST(Interp, GroupedQueryHeadsShareTheirKeyValueHead) {
  AttentionStage a;
  a.q = "q";
  a.k = "k";
  a.v = "v";
  a.scale = 1;
  a.batch = 4;  // 2 batches x 2 query heads
  a.heads = 2;
  a.kv_group = 2;
  a.lq = 1;
  a.lk = 2;
  a.d = 1;
  a.dv = 1;
  Program p = one_stage({T("q", DType::bf16, {2, 2, 1, 1}), T("k", DType::bf16, {2, 1, 2, 1}),
                         T("v", DType::bf16, {2, 1, 2, 1}), T("y", DType::bf16, {2, 2, 1, 1})},
                        a);
  InterpTensors ts;
  ts["q"] = {0, std::log(3.0), 0, std::log(3.0)};  // per batch: q = 0 and q = ln 3
  ts["k"] = {0, 1, 0, 1};                          // keys 0 and 1 in both batches
  ts["v"] = {10, 20, 100, 200};                    // batch 0's values, batch 1's
  ASSERT_TRUE(interp_stage(p, 0, ts, {}).ok());
  const auto& y = ts.at("y");
  // q = 0: equal weights; q = ln 3: weights 1 : 3 (scores 0 and ln 3)
  EXPECT_NEAR(y[0], 15, 1e-12);
  EXPECT_NEAR(y[1], (10 + 3 * 20) / 4.0, 1e-12);
  EXPECT_NEAR(y[2], 150, 1e-12);
  EXPECT_NEAR(y[3], (100 + 3 * 200) / 4.0, 1e-12);
}

}  // namespace
}  // namespace ucut::dsl
