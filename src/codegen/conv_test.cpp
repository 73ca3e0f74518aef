// conv stages end to end on the CPU: the interpreter (the reference semantics) against a direct
// convolution written from PyTorch's NCHW definition, the generated code's goldens
// (tests/golden/codegen/conv_*.cu, UCUTLASS_UPDATE_GOLDEN=1 regenerates), the stored unit's
// sharing across shapes, and the space's configurations.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>

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

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// PyTorch's conv (NC spatial, weights K C spatial), bias, then relu(... + residual), in double.
struct Case {
  int64_t n, c, k;
  std::vector<int64_t> size, filter, lo, hi, stride, dil;
};

std::vector<int64_t> out_size(const Case& c) {
  std::vector<int64_t> o;
  for (size_t i = 0; i < c.size.size(); ++i)
    o.push_back((c.size[i] + c.lo[i] + c.hi[i] - c.dil[i] * (c.filter[i] - 1) - 1) / c.stride[i] + 1);
  return o;
}

int64_t prod(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t e : v) p *= e;
  return p;
}

// Row-major index of `at` in `shape`.
int64_t flat(const std::vector<int64_t>& shape, const std::vector<int64_t>& at) {
  int64_t f = 0;
  for (size_t i = 0; i < shape.size(); ++i) f = f * shape[i] + at[i];
  return f;
}

// Advances `at` over `shape` (last fastest); false after the last element.
bool next(const std::vector<int64_t>& shape, std::vector<int64_t>& at) {
  for (size_t d = shape.size(); d-- > 0;) {
    if (++at[d] < shape[d]) return true;
    at[d] = 0;
  }
  return false;
}

void check_case(const Case& c) {
  const size_t r = c.size.size();
  const std::vector<int64_t> o = out_size(c);
  std::vector<int64_t> xs{c.n, c.c}, ws{c.k, c.c}, ys{c.n, c.k};  // NCHW / KCRS / NKPQ
  xs.insert(xs.end(), c.size.begin(), c.size.end());
  ws.insert(ws.end(), c.filter.begin(), c.filter.end());
  ys.insert(ys.end(), o.begin(), o.end());
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(static_cast<size_t>(prod(xs))), w(static_cast<size_t>(prod(ws))), b(static_cast<size_t>(c.k)),
      res(static_cast<size_t>(prod(ys)));
  for (auto* v : {&x, &w, &b, &res})
    for (auto& e : *v) e = u(rng);
  // the direct convolution, PyTorch's definition
  std::vector<double> want(res.size());
  std::vector<int64_t> at(ys.size(), 0);
  do {
    double acc = b[static_cast<size_t>(at[1])];
    std::vector<int64_t> f(r, 0);
    do {
      std::vector<int64_t> xi{at[0], 0};
      bool inside = true;
      for (size_t i = 0; i < r; ++i) {
        const int64_t p = at[2 + i] * c.stride[i] + f[i] * c.dil[i] - c.lo[i];
        inside = inside && p >= 0 && p < c.size[i];
        xi.push_back(p);
      }
      if (!inside) continue;
      for (int64_t ch = 0; ch < c.c; ++ch) {
        xi[1] = ch;
        std::vector<int64_t> wi{at[1], ch};
        wi.insert(wi.end(), f.begin(), f.end());
        acc += x[static_cast<size_t>(flat(xs, xi))] * w[static_cast<size_t>(flat(ws, wi))];
      }
    } while (next(c.filter, f));
    const size_t yi = static_cast<size_t>(flat(ys, at));
    want[yi] = std::max(acc + res[yi], 0.0);
  } while (next(ys, at));

  // the same in channels-last tensors for the conv stage
  auto to_last = [](const std::vector<double>& v, const std::vector<int64_t>& shape) {
    std::vector<int64_t> last{shape[0]};
    last.insert(last.end(), shape.begin() + 2, shape.end());
    last.push_back(shape[1]);
    std::vector<double> out(v.size());
    std::vector<int64_t> a(shape.size(), 0);
    do {
      std::vector<int64_t> l{a[0]};
      l.insert(l.end(), a.begin() + 2, a.end());
      l.push_back(a[1]);
      out[static_cast<size_t>(flat(last, l))] = v[static_cast<size_t>(flat(shape, a))];
    } while (next(shape, a));
    return std::make_pair(out, last);
  };
  auto [xl, xls] = to_last(x, xs);
  auto [wl, wls] = to_last(w, ws);
  auto [rl, yls] = to_last(res, ys);
  auto [wantl, unused] = to_last(want, ys);
  (void)unused;
  std::vector<int64_t> pad = c.lo;
  pad.insert(pad.end(), c.hi.begin(), c.hi.end());
  const std::string text = "ucut 1\nin x : f32" + shape_str(xls) + "\nparam w : f32" + shape_str(wls) +
                           " = \"w\"\nparam b : f32[" + std::to_string(c.k) + "] = \"b\"\nin r : f32" + shape_str(yls) +
                           "\nout y : f32" + shape_str(yls) + "\nstage y = conv(x, w, stride=" + shape_str(c.stride) +
                           ", padding=" + shape_str(pad) + ", dilation=" + shape_str(c.dil) +
                           ") { epilogue { y = relu(acc + b[col] + r) } }\n";
  dsl::Program p = compile("conv_case", text);
  ASSERT_EQ(p.stages.size(), 1u) << text;
  dsl::InterpTensors ts{{"x", xl}, {"w", wl}, {"b", b}, {"r", rl}};
  auto st = dsl::interp_stage(p, 0, ts, {});
  ASSERT_TRUE(st.ok()) << st.error().render();
  const auto& got = ts["y"];
  ASSERT_EQ(got.size(), wantl.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], wantl[i], 1e-12) << "element " << i << "\n" << text;
}

TEST(Conv, InterpreterMatchesDirectConvolution1d) {
  check_case({3, 4, 8, {29}, {3}, {2}, {1}, {3}, {4}});
}

TEST(Conv, InterpreterMatchesDirectConvolution2d) {
  check_case({2, 8, 4, {9, 11}, {3, 2}, {1, 0}, {2, 1}, {2, 1}, {1, 2}});
}

TEST(Conv, InterpreterMatchesDirectConvolution3d) {
  check_case({1, 4, 8, {5, 6, 7}, {3, 3, 2}, {1, 0, 1}, {0, 1, 1}, {1, 2, 1}, {2, 1, 1}});
}

// examples/conv2d_nchw_bias_relu.ucut: NCHW in and out through view copies around the conv, the
// form the lowering targets, against PyTorch's definition on the NCHW tensors.
TEST(Conv, NchwProgramThroughLayoutStages) {
  auto text = fs_read(std::string(UCUTLASS_SOURCE_DIR) + "/examples/conv2d_nchw_bias_relu.ucut");
  ASSERT_TRUE(text.ok());
  dsl::Program p = compile("conv2d_nchw_bias_relu", *text);
  ASSERT_EQ(p.stages.size(), 4u);
  const int64_t N = 2, C = 16, K = 32, H = 32, W = 32;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> x(static_cast<size_t>(N * C * H * W)), w(static_cast<size_t>(K * C * 9)), b(static_cast<size_t>(K));
  for (auto* v : {&x, &w, &b})
    for (auto& e : *v) e = u(rng);
  dsl::InterpTensors ts{{"x", x}, {"w", w}, {"b", b}};
  for (int i = 0; i < 4; ++i) {
    auto st = dsl::interp_stage(p, i, ts, {});
    ASSERT_TRUE(st.ok()) << "stage " << i << ": " << st.error().render();
  }
  const auto& y = ts["y"];
  ASSERT_EQ(y.size(), static_cast<size_t>(N * K * H * W));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t q = 0; q < W; ++q) {
          double acc = b[static_cast<size_t>(k)];
          for (int64_t c = 0; c < C; ++c)
            for (int64_t r = 0; r < 3; ++r)
              for (int64_t s = 0; s < 3; ++s) {
                const int64_t ih = h + r - 1, iw = q + s - 1;
                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                acc += x[static_cast<size_t>(((n * C + c) * H + ih) * W + iw)] *
                       w[static_cast<size_t>(((k * C + c) * 3 + r) * 3 + s)];
              }
          ASSERT_NEAR(y[static_cast<size_t>(((n * K + k) * H + h) * W + q)], std::max(acc, 0.0), 1e-12);
        }
}

// ---- generated code --------------------------------------------------------------------------

// A 2-D tf32 conv with a bias and ReLU (KernelBench level 2's Conv2d + ReLU + bias).
const char* const kConv2d = R"(ucut 1
name conv2d_tf32_bias_relu
in x : f32[8, 32, 32, 16]
param w : f32[64, 3, 3, 16] = "conv.weight"
param b : f32[64] = "conv.bias"
out y : f32[8, 32, 32, 64]
stage y = conv(x, w, padding=[1, 1]) { tile 128x64x16 epilogue { y = relu(acc + b[col]) } }
)";

// A 3-D bf16 conv with a folded BatchNorm and a residual, asymmetric padding, stride 2.
const char* const kConv3d = R"(ucut 1
name conv3d_bf16_bn_residual
in x : bf16[2, 8, 16, 16, 32]
param w : bf16[64, 3, 3, 3, 32] = "conv.weight"
param s : f32[64] = "bn.scale"
param t : f32[64] = "bn.shift"
in r : bf16[2, 4, 8, 8, 64]
out y : bf16[2, 4, 8, 8, 64]
stage y = conv(x, w, stride=[2, 2, 2], padding=[1, 1, 1, 0, 0, 0]) {
  cluster 2x1 stages 4
  epilogue { y = gelu(acc * s[col] + t[col]) + r }
}
)";

TEST(Conv, GoldenConv2dTf32BiasRelu) { check_golden(compile("conv2d_tf32_bias_relu", kConv2d)); }
TEST(Conv, GoldenConv3dBf16BnResidual) { check_golden(compile("conv3d_bf16_bn_residual", kConv3d)); }

TEST(Conv, OneStoredUnitForEveryShape) {
  auto text_at = [](int n, int h, int c, int k) {
    std::string s = "ucut 1\nin x : f32[" + std::to_string(n) + ", " + std::to_string(h) + ", " + std::to_string(h) +
                    ", " + std::to_string(c) + "]\nparam w : f32[" + std::to_string(k) + ", 3, 3, " +
                    std::to_string(c) + "] = \"w\"\nparam bias : f32[" + std::to_string(k) + "] = \"b\"\nout y : f32[" +
                    std::to_string(n) + ", " + std::to_string(h) + ", " + std::to_string(h) + ", " + std::to_string(k) +
                    "]\nstage y = conv(x, w, padding=[1, 1]) { tile 128x64x32 epilogue { y = relu(acc + bias[col]) } }\n";
    return s;
  };
  auto a = codegen_emit_library(compile("a", text_at(8, 32, 16, 64)), {"a.ucut", std::string(64, '0')});
  auto b = codegen_emit_library(compile("b", text_at(2, 56, 64, 32)), {"b.ucut", std::string(64, '0')});
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<std::string> ua, ub;
  for (const auto& u : a->units)
    if (u.stored) ua.push_back(u.name + "\n" + u.source);
  for (const auto& u : b->units)
    if (u.stored) ub.push_back(u.name + "\n" + u.source);
  ASSERT_EQ(ua.size(), 1u);
  EXPECT_EQ(ua, ub);  // the shapes and the tensors' names are runtime arguments
  EXPECT_NE(a->source, b->source);
}

}  // namespace
}  // namespace ucut::codegen
