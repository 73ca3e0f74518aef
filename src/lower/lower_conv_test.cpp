// The lowering of convolutions (pass_match_conv) run by the interpreter on the CPU: every stage of
// the lowered program of each tests/golden/lower/conv*.json fixture (layout copies, the conv stage
// or the pointwise GEMM, the epilogue, the copy back to NCHW) against PyTorch's definition of the
// problem written out directly in double on the NCHW tensors (a depthwise conv's window stage too). The goldens themselves are checked
// by lower_test.cpp with the others.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "dsl/interp.h"
#include "lower/lower.h"

namespace ucut::lower {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(UCUTLASS_SOURCE_DIR) / "tests" / "golden" / "lower";

struct Lowered {
  problem::Problem problem;
  LoweredProgram lowered;
};

Lowered lower_fixture(const std::string& name, sol::Policy policy = sol::Policy::tf32) {
  std::ifstream f(kDir / (name + ".json"));
  std::stringstream ss;
  ss << f.rdbuf();
  auto p = problem::problem_parse(ss.str(), name + ".json");
  EXPECT_TRUE(p) << p.error().render();
  LowerOptions o;
  o.policy = policy;
  auto r = lower_problem(*p, o);
  EXPECT_TRUE(r) << r.error().render();
  return {*p, *r};
}

// PyTorch's conv (NC.., weights KC.., zero padding on both sides) in double.
struct ConvSpec {
  std::vector<int64_t> x, w, stride, pad, dil;
  int64_t groups = 1;
};

std::vector<int64_t> conv_out_shape(const ConvSpec& c) {
  std::vector<int64_t> o{c.x[0], c.w[0]};
  for (size_t i = 2; i < c.x.size(); ++i)
    o.push_back((c.x[i] + 2 * c.pad[i - 2] - c.dil[i - 2] * (c.w[i] - 1) - 1) / c.stride[i - 2] + 1);
  return o;
}

int64_t count(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::vector<double> direct_conv(const ConvSpec& c, const std::vector<double>& x, const std::vector<double>& w,
                                const std::vector<double>* bias) {
  const std::vector<int64_t> o = conv_out_shape(c);
  const size_t r = c.x.size() - 2;
  // spatial sizes padded to 3 dims
  int64_t in[3] = {1, 1, 1}, f[3] = {1, 1, 1}, out[3] = {1, 1, 1}, sd[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pd[3] = {0, 0, 0};
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    in[j] = c.x[2 + i], f[j] = c.w[2 + i], out[j] = o[2 + i], sd[j] = c.stride[i], dl[j] = c.dil[i], pd[j] = c.pad[i];
  }
  const int64_t N = c.x[0], C = c.x[1], K = c.w[0], CG = C / c.groups, KG = K / c.groups;
  std::vector<double> y(static_cast<size_t>(count(o)));
  size_t at = 0;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t a = 0; a < out[0]; ++a)
        for (int64_t b = 0; b < out[1]; ++b)
          for (int64_t e = 0; e < out[2]; ++e, ++at) {
            double acc = bias ? (*bias)[static_cast<size_t>(k)] : 0;
            for (int64_t ch = k / KG * CG; ch < (k / KG + 1) * CG; ++ch)
              for (int64_t t = 0; t < f[0]; ++t)
                for (int64_t u = 0; u < f[1]; ++u)
                  for (int64_t v = 0; v < f[2]; ++v) {
                    const int64_t i0 = a * sd[0] + t * dl[0] - pd[0], i1 = b * sd[1] + u * dl[1] - pd[1],
                                  i2 = e * sd[2] + v * dl[2] - pd[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    acc += x[static_cast<size_t>((((n * C + ch) * in[0] + i0) * in[1] + i1) * in[2] + i2)] *
                           w[static_cast<size_t>((((k * CG + ch % CG) * f[0] + t) * f[1] + u) * f[2] + v)];
                  }
            y[at] = acc;
          }
  return y;
}

// PyTorch's transposed conv in double, from its definition: x [N, C, ..] scatters through w [C, K, ..],
// y[n, k, i·stride + j·dilation - padding] += x[n, c, i]·w[c, k, j]; the output y's shape given.
std::vector<double> direct_conv_transpose(const ConvSpec& c, const std::vector<int64_t>& o, const std::vector<double>& x,
                                          const std::vector<double>& w) {
  const size_t r = c.x.size() - 2;
  int64_t in[3] = {1, 1, 1}, f[3] = {1, 1, 1}, out[3] = {1, 1, 1}, sd[3] = {1, 1, 1}, dl[3] = {1, 1, 1}, pd[3] = {0, 0, 0};
  for (size_t i = 0; i < r; ++i) {
    const size_t j = 3 - r + i;
    in[j] = c.x[2 + i], f[j] = c.w[2 + i], out[j] = o[2 + i], sd[j] = c.stride[i], dl[j] = c.dil[i], pd[j] = c.pad[i];
  }
  const int64_t N = c.x[0], C = c.x[1], KG = c.w[1], K = KG * c.groups, CG = C / c.groups;
  std::vector<double> y(static_cast<size_t>(count(o)), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t a = 0; a < in[0]; ++a)
        for (int64_t b = 0; b < in[1]; ++b)
          for (int64_t e = 0; e < in[2]; ++e)
            for (int64_t k = ch / CG * KG; k < (ch / CG + 1) * KG; ++k)
              for (int64_t t = 0; t < f[0]; ++t)
                for (int64_t u = 0; u < f[1]; ++u)
                  for (int64_t v = 0; v < f[2]; ++v) {
                    const int64_t o0 = a * sd[0] + t * dl[0] - pd[0], o1 = b * sd[1] + u * dl[1] - pd[1],
                                  o2 = e * sd[2] + v * dl[2] - pd[2];
                    if (o0 < 0 || o0 >= out[0] || o1 < 0 || o1 >= out[1] || o2 < 0 || o2 >= out[2]) continue;
                    y[static_cast<size_t>((((n * K + k) * out[0] + o0) * out[1] + o1) * out[2] + o2)] +=
                        x[static_cast<size_t>((((n * C + ch) * in[0] + a) * in[1] + b) * in[2] + e)] *
                        w[static_cast<size_t>((((ch * KG + k % KG) * f[0] + t) * f[1] + u) * f[2] + v)];
                  }
  return y;
}

// Random values for every input and parameter of the problem (running variances positive).
dsl::InterpTensors random_inputs(const problem::Problem& p) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  dsl::InterpTensors io;
  for (const auto& t : p.tensors) {
    if (t.kind != problem::TensorKind::input && t.kind != problem::TensorKind::parameter &&
        t.kind != problem::TensorKind::buffer)
      continue;
    std::vector<double> v(static_cast<size_t>(t.numel()));
    const bool positive = t.name.find("running_var") != std::string::npos;
    for (auto& e : v) e = positive ? 0.5 + std::abs(u(rng)) : u(rng);
    io[t.name] = v;
  }
  return io;
}

// A gemm stage with untransposed operands (what a pointwise conv lowers to), which the interpreter
// does not run: out[l] = epilogue(A[l] @ B[l]), v[row] and v[col] vectors, full reads of the output's shape.
void run_gemm(const dsl::Program& p, const dsl::Stage& st, dsl::InterpTensors& io) {
  const auto& g = std::get<dsl::GemmStage>(st.body);
  ASSERT_FALSE(g.a.transposed || g.b.transposed);
  const std::vector<double>& a = io.at(g.a.tensor);
  const std::vector<double>& b = io.at(g.b.tensor);
  const size_t M = static_cast<size_t>(g.m), N = static_cast<size_t>(g.n), K = static_cast<size_t>(g.k);
  const size_t L = static_cast<size_t>(g.batch);
  std::vector<double> out(L * M * N);
  for (size_t l = 0; l < L; ++l)
    for (size_t m = 0; m < M; ++m)
      for (size_t n = 0; n < N; ++n) {
        double acc = 0;
        for (size_t k = 0; k < K; ++k) acc += a[(l * M + m) * K + k] * b[(l * K + k) * N + n];
        auto load = [&](const dsl::Expr& e) -> Result<double> {
          const std::vector<double>& t = io.at(e.name);
          if (e.mode == dsl::LoadMode::row) return t[m];
          if (e.mode == dsl::LoadMode::col) return t[n];
          return t[(l * M + m) * N + n];
        };
        auto v = dsl::interp_epilogue(p, g.epilogue, acc, load, {});
        ASSERT_TRUE(v.ok()) << v.error().render();
        out[(l * M + m) * N + n] = *v;
      }
  io[st.outputs.at(0)] = out;
}

// Runs every stage; the DSL names of the problem's tensors are the names with '.' as '_'.
std::vector<double> run_all(const LoweredProgram& l, dsl::InterpTensors io) {
  dsl::InterpTensors named;
  for (auto& [k, v] : io) {
    std::string n = k;
    for (char& ch : n)
      if (ch == '.') ch = '_';
    named[n] = v;
  }
  for (size_t i = 0; i < l.program.stages.size(); ++i) {
    if (std::holds_alternative<dsl::GemmStage>(l.program.stages[i].body)) {
      run_gemm(l.program, l.program.stages[i], named);
      continue;
    }
    auto st = dsl::interp_stage(l.program, static_cast<int>(i), named, {});
    EXPECT_TRUE(st.ok()) << "stage " << i << ": " << st.error().render() << "\n" << l.text;
  }
  return named["out0"];
}

// Lowers `name`, interprets it, and compares out0 with epi(conv(x, w) + bias) element by element
// (epi gets the value, the flat NCHW index and the channel).
void check(const std::string& name, const ConvSpec& c, bool bias, size_t want_stages,
           const std::function<double(double, size_t, int64_t, const dsl::InterpTensors&)>& epi,
           sol::Policy policy = sol::Policy::tf32) {
  Lowered l = lower_fixture(name, policy);
  ASSERT_EQ(l.lowered.program.stages.size(), want_stages) << l.lowered.text;
  for (const auto& s : l.lowered.program.stages)
    ASSERT_FALSE(std::holds_alternative<dsl::TorchStage>(s.body)) << l.lowered.text;
  dsl::InterpTensors io = random_inputs(l.problem);
  const std::vector<double> got = run_all(l.lowered, io);
  const std::vector<double> y = direct_conv(c, io.at("x"), io.at("conv.weight"), bias ? &io.at("conv.bias") : nullptr);
  ASSERT_EQ(got.size(), y.size()) << l.lowered.text;
  const std::vector<int64_t> o = conv_out_shape(c);
  const int64_t per_channel = count(o) / (o[0] * o[1]);
  for (size_t i = 0; i < y.size(); ++i) {
    const int64_t k = static_cast<int64_t>(i) / per_channel % o[1];
    ASSERT_NEAR(got[i], epi(y[i], i, k, io), 1e-12) << name << " element " << i;
  }
}

// check() for a transposed conv: out0 against epi(conv_transpose(x, w) + bias).
void check_transposed(const std::string& name, const ConvSpec& c, const std::vector<int64_t>& out, bool bias,
                      size_t want_stages, const std::function<double(double)>& epi) {
  Lowered l = lower_fixture(name);
  ASSERT_EQ(l.lowered.program.stages.size(), want_stages) << l.lowered.text;
  for (const auto& s : l.lowered.program.stages)
    ASSERT_FALSE(std::holds_alternative<dsl::TorchStage>(s.body)) << l.lowered.text;
  dsl::InterpTensors io = random_inputs(l.problem);
  const std::vector<double> got = run_all(l.lowered, io);
  std::vector<double> y = direct_conv_transpose(c, out, io.at("x"), io.at("conv.weight"));
  ASSERT_EQ(got.size(), y.size()) << l.lowered.text;
  const int64_t per_channel = count(out) / (out[0] * out[1]);
  for (size_t i = 0; i < y.size(); ++i) {
    const size_t k = static_cast<size_t>(static_cast<int64_t>(i) / per_channel % out[1]);
    ASSERT_NEAR(got[i], epi(y[i] + (bias ? io.at("conv.bias")[k] : 0.0)), 1e-12) << name << " element " << i;
  }
}

double mish(double v) { return v * std::tanh(std::log1p(std::exp(v))); }

TEST(LowerConv, Conv2dBiasReluIsOneConvStageBetweenLayoutCopies) {
  // x and weight copies, the conv with bias + relu, the copy back to NCHW
  check("conv2d_bias_relu", {{2, 16, 10, 12}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}}, true, 4,
        [](double v, size_t, int64_t, const dsl::InterpTensors&) { return std::max(v, 0.0); });
}

// Under the bf16 policy the layout copies convert x and w to bf16 and the conv stage runs bf16 with
// an f32 output (the interpreter keeps every value in double, so the result is the same).
TEST(LowerConv, Bf16PolicyConvertsTheOperandsInTheLayoutCopies) {
  check("conv2d_bias_relu", {{2, 16, 10, 12}, {32, 16, 3, 3}, {1, 1}, {1, 1}, {1, 1}}, true, 4,
        [](double v, size_t, int64_t, const dsl::InterpTensors&) { return std::max(v, 0.0); }, sol::Policy::bf16);
  Lowered l = lower_fixture("conv2d_bias_relu", sol::Policy::bf16);
  for (const char* t : {"x_nhwc", "conv_weight_krsc"}) {
    const auto* x = l.lowered.program.find_tensor(t);
    ASSERT_NE(x, nullptr) << t;
    EXPECT_EQ(x->dtype, dsl::DType::bf16) << t;
  }
  EXPECT_EQ(l.lowered.program.find_tensor("out0_nhwc")->dtype, dsl::DType::f32);
  const auto& conv = std::get<dsl::ConvStage>(l.lowered.program.stages.at(2).body);
  EXPECT_EQ(conv.knobs.precision, dsl::Precision::bf16);
  // C = 3 pads to 8 channels (16-byte rows of bf16), not 4
  Lowered c3 = lower_fixture("conv_cin3", sol::Policy::bf16);
  EXPECT_EQ(c3.lowered.program.find_tensor("x_nhwc")->shape, (std::vector<int64_t>{2, 9, 11, 8}));
}

// A reduction over the channels after the conv reads the channels-last result's rows (a rowwise
// stage) and no copy back to NCHW is made: min (keepdim, into the [N, 1, H, W] output) then tanh,
// and a logsumexp without keepdim after a ReLU in the conv's epilogue.
void check_channel_reduction(const std::string& name, const ConvSpec& c,
                             const std::function<double(const std::vector<double>&)>& reduce) {
  Lowered l = lower_fixture(name);
  ASSERT_EQ(l.lowered.program.stages.size(), 4u) << l.lowered.text;  // x, w copies, conv, rowwise
  EXPECT_TRUE(std::holds_alternative<dsl::RowwiseStage>(l.lowered.program.stages.at(3).body)) << l.lowered.text;
  dsl::InterpTensors io = random_inputs(l.problem);
  const std::vector<double> got = run_all(l.lowered, io);
  const std::vector<double> y = direct_conv(c, io.at("x"), io.at("conv.weight"), &io.at("conv.bias"));
  const std::vector<int64_t> o = conv_out_shape(c);
  const int64_t k = o[1], sp = count(o) / (o[0] * o[1]);
  ASSERT_EQ(got.size(), static_cast<size_t>(o[0] * sp)) << l.lowered.text;
  for (int64_t n = 0; n < o[0]; ++n)
    for (int64_t i = 0; i < sp; ++i) {
      std::vector<double> ch;
      for (int64_t j = 0; j < k; ++j) ch.push_back(y[static_cast<size_t>((n * k + j) * sp + i)]);
      ASSERT_NEAR(got[static_cast<size_t>(n * sp + i)], reduce(ch), 1e-12) << name << " position " << n << ", " << i;
    }
}

TEST(LowerConv, ChannelReductionsReadChannelsLastRows) {
  check_channel_reduction("conv_channel_min", {{2, 8, 9, 11}, {16, 8, 3, 3}, {1, 1}, {0, 0}, {1, 1}},
                          [](const std::vector<double>& ch) { return std::tanh(*std::min_element(ch.begin(), ch.end())); });
  check_channel_reduction("conv_channel_logsumexp", {{2, 8, 7, 5}, {16, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1}},
                          [](const std::vector<double>& ch) {
                            double m = -INFINITY, s = 0;
                            for (double v : ch) m = std::max(m, std::max(v, 0.0));
                            for (double v : ch) s += std::exp(std::max(v, 0.0) - m);
                            return m + std::log(s);
                          });
}

TEST(LowerConv, Conv3dMishTanhJoinTheEpilogue) {
  check("conv3d_mish_tanh", {{2, 8, 6, 7, 8}, {16, 8, 3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}}, true, 4,
        [](double v, size_t, int64_t, const dsl::InterpTensors&) { return std::tanh(mish(v)); });
}

TEST(LowerConv, Conv1dStridedDilated) {
  check("conv1d", {{3, 8, 40}, {16, 8, 5}, {2}, {0}, {2}}, false, 4,
        [](double v, size_t, int64_t, const dsl::InterpTensors&) { return v; });
}

// Cin = 3, off the 4-channel alignment: x and w copied with a fourth channel of zeros.
TEST(LowerConv, Cin3IsPaddedWithZeroChannelsInTheLayoutCopies) {
  check("conv_cin3", {{2, 3, 9, 11}, {16, 3, 3, 3}, {2, 2}, {1, 1}, {1, 1}}, true, 4,
        [](double v, size_t, int64_t, const dsl::InterpTensors&) { return std::max(v, 0.0); });
  Lowered l = lower_fixture("conv_cin3");
  const auto* x = l.lowered.program.find_tensor("x_nhwc");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->shape, (std::vector<int64_t>{2, 9, 11, 4}));
}

// A transposed conv of stride 1 is the conv of the flipped, in/out-swapped weight (a view at
// negative strides) with padding dilation·(k - 1) - padding.
TEST(LowerConv, ConvTranspose2dIsAConvOfTheFlippedWeight) {
  check_transposed("conv_transpose2d", {{2, 8, 7, 9}, {8, 16, 3, 3}, {1, 1}, {1, 0}, {1, 2}}, {2, 16, 7, 13}, true, 4,
                   [](double v) { return std::tanh(v); });
}

// ... with Cin = 3 padded to 4 in both copies and output_padding 1 on the high side only.
TEST(LowerConv, ConvTranspose1dCin3OutputPadding) {
  check_transposed("conv_transpose1d_cin3", {{2, 3, 10}, {3, 8, 4}, {1}, {2}, {2}}, {2, 8, 13}, false, 4,
                   [](double v) { return std::max(v, 0.0); });
}

// A transposed conv of stride 2 (3x3, padding 1, output_padding 1) as four conv stages, one per
// output phase, writing slices of one phase-major tensor, then one copy back to NCHW with the ReLU:
// x's copy, four weight copies and convs, the copy.
TEST(LowerConv, StridedConvTransposeByOutputPhases) {
  check_transposed("conv_transpose2d_strided", {{2, 8, 7, 9}, {8, 16, 3, 3}, {2, 2}, {1, 1}, {1, 1}}, {2, 16, 14, 18},
                   false, 10, [](double v) { return std::max(v, 0.0); });
  Lowered l = lower_fixture("conv_transpose2d_strided");
  int convs = 0;
  for (const auto& st : l.lowered.program.stages) convs += std::holds_alternative<dsl::ConvStage>(st.body);
  EXPECT_EQ(convs, 4) << l.lowered.text;
  bool noted = false;
  for (const auto& n : l.lowered.notes) noted = noted || n.find("as 4 conv stages (one per output phase") != std::string::npos;
  EXPECT_TRUE(noted);
}

// ... stride 3 in 1-D (5 taps: phases of 2, 1 and 2 taps, one of them at padding 1 below), C = 6
// padded to 8, with a bias in every phase's epilogue; and 3-D (kernel 3x4x3, output_padding
// (1, 0, 1)): eight phases read back through an 8-dim view, the tanh in the copy.
TEST(LowerConv, StridedConvTransposePhasesIn1dAnd3d) {
  check_transposed("conv_transpose1d_s3", {{2, 6, 11}, {6, 12, 5}, {3}, {1}, {1}}, {2, 12, 33}, true, 8,
                   [](double v) { return v; });
  check_transposed("conv_transpose3d_s2", {{2, 4, 3, 4, 5}, {4, 8, 3, 4, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}},
                   {2, 8, 6, 8, 10}, true, 18, [](double v) { return std::tanh(v); });
}

// An output size off a multiple of the stride (9 x 11 at stride 2): phases of 5 x 6 outputs, the
// copy back into a 10 x 12 result, a second copy (with the scale) cropping it.
TEST(LowerConv, StridedConvTransposeWithAnOddOutputIsCropped) {
  check_transposed("conv_transpose2d_s2_odd", {{2, 4, 5, 6}, {4, 8, 3, 3}, {2, 2}, {1, 1}, {1, 1}}, {2, 8, 9, 11}, true,
                   11, [](double v) { return v * 2.0; });
}

// Phases no tap reaches (stride 2, dilation 2: the odd outputs get nothing but the bias, here none)
// are fills of their slices: x's copy, phase (0, 0)'s weight copy and conv, three fills, the copy
// back with the ReLU.
TEST(LowerConv, StridedConvTransposeFillsThePhasesNoTapReaches) {
  check_transposed("conv_transpose2d_dilated_unreached", {{2, 4, 5, 6}, {4, 8, 3, 3}, {2, 2}, {2, 2}, {2, 2}},
                   {2, 8, 10, 12}, false, 7, [](double v) { return std::max(v, 0.0); });
  Lowered l = lower_fixture("conv_transpose2d_dilated_unreached");
  bool noted = false;
  for (const auto& n : l.lowered.notes) noted = noted || n.find("as 1 conv stage and 3 fills") != std::string::npos;
  EXPECT_TRUE(noted);
}

// eval BatchNorm and the scale in the conv's epilogue (per-channel vectors), the residual add in the
// copy back to NCHW.
TEST(LowerConv, BatchNormScaleInTheEpilogueResidualInTheCopy) {
  check("conv_batchnorm_scale", {{2, 8, 9, 9}, {16, 8, 3, 3}, {1, 1}, {0, 0}, {1, 1}}, true, 4,
        [](double v, size_t i, int64_t k, const dsl::InterpTensors& io) {
          const size_t c = static_cast<size_t>(k);
          const double bn = (v - io.at("bn.running_mean")[c]) / std::sqrt(io.at("bn.running_var")[c] + 1e-5) *
                                io.at("bn.weight")[c] +
                            io.at("bn.bias")[c];
          return bn * 2.0 + io.at("r")[i];
        });
}

// A pointwise conv is the batched GEMM on the NCHW tensors (the weight copied per sample), the
// bias and the per-channel add as v[row] in its epilogue.
TEST(LowerConv, PointwiseIsABatchedGemmInNchw) {
  check("conv_pointwise", {{2, 16, 6, 5}, {32, 16, 1, 1}, {1, 1}, {0, 0}, {1, 1}}, true, 2,
        [](double v, size_t, int64_t k, const dsl::InterpTensors& io) {
          return 1.0 / (1.0 + std::exp(-(v + io.at("bias")[static_cast<size_t>(k)])));
        });
  Lowered l = lower_fixture("conv_pointwise");
  EXPECT_TRUE(std::holds_alternative<dsl::GemmStage>(l.lowered.program.stages.at(1).body)) << l.lowered.text;
}

// A depthwise conv (groups = C, channel multiplier 2) is one window stage on the NCHW tensors, its
// bias in the stage and the ReLU6 in its epilogue: against the dense conv whose weight is zero
// off each output channel's own input channel.
TEST(LowerConv, DepthwiseIsOneWindowStageOnNchw) {
  Lowered l = lower_fixture("window_depthwise_conv2d");
  ASSERT_EQ(l.lowered.program.stages.size(), 1u) << l.lowered.text;
  ASSERT_TRUE(std::holds_alternative<dsl::WindowStage>(l.lowered.program.stages[0].body)) << l.lowered.text;
  dsl::InterpTensors io = random_inputs(l.problem);
  const std::vector<double> got = run_all(l.lowered, io);
  const ConvSpec c{{2, 32, 28, 28}, {64, 32, 3, 3}, {2, 2}, {1, 1}, {1, 1}};
  const std::vector<double>& w = io.at("conv.weight");  // [64, 1, 3, 3]
  std::vector<double> dense(static_cast<size_t>(count(c.w)), 0.0);
  for (int64_t k = 0; k < 64; ++k)
    for (int64_t t = 0; t < 9; ++t)
      dense[static_cast<size_t>((k * 32 + k / 2) * 9 + t)] = w[static_cast<size_t>(k * 9 + t)];
  const std::vector<double> y = direct_conv(c, io.at("x"), dense, &io.at("conv.bias"));
  ASSERT_EQ(got.size(), y.size());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(got[i], std::min(std::max(y[i], 0.0), 6.0), 1e-12) << i;
}

// A depthwise-separable block (depthwise 3x3, ReLU, pointwise 8 -> 12 with bias): the window stage
// writes its result through an NCHW view of the [N, C, H*W] tensor the pointwise conv's batched
// GEMM reads, so no layout copy (before, the pointwise conv of a stage's result took the conv stage
// between channels-last copies: 5 stages, 0.56x eager on cv1_depthwise_separable2d in run CW).
TEST(LowerConv, DepthwiseSeparableReadsTheWindowResultAsAGemmOperand) {
  Lowered l = lower_fixture("conv_depthwise_separable");
  ASSERT_EQ(l.lowered.program.stages.size(), 3u) << l.lowered.text;
  ASSERT_TRUE(std::holds_alternative<dsl::WindowStage>(l.lowered.program.stages[0].body)) << l.lowered.text;
  ASSERT_TRUE(std::holds_alternative<dsl::GemmStage>(l.lowered.program.stages[2].body)) << l.lowered.text;
  dsl::InterpTensors io = random_inputs(l.problem);
  const std::vector<double> got = run_all(l.lowered, io);
  const ConvSpec dw{{2, 8, 6, 5}, {8, 8, 3, 3}, {1, 1}, {1, 1}, {1, 1}};
  std::vector<double> dense(static_cast<size_t>(count(dw.w)), 0.0);
  const std::vector<double>& w = io.at("depthwise.weight");  // [8, 1, 3, 3]
  for (int64_t k = 0; k < 8; ++k)
    for (int64_t t = 0; t < 9; ++t) dense[static_cast<size_t>((k * 8 + k) * 9 + t)] = w[static_cast<size_t>(k * 9 + t)];
  std::vector<double> mid = direct_conv(dw, io.at("x"), dense, nullptr);
  for (double& v : mid) v = std::max(v, 0.0);
  const ConvSpec pw{{2, 8, 6, 5}, {12, 8, 1, 1}, {1, 1}, {0, 0}, {1, 1}};
  const std::vector<double> y = direct_conv(pw, mid, io.at("pointwise.weight"), &io.at("pointwise.bias"));
  ASSERT_EQ(got.size(), y.size());
  for (size_t i = 0; i < y.size(); ++i) ASSERT_NEAR(got[i], y[i], 1e-12) << i;
}

// A grouped conv (groups 4) as one conv stage per group, each on its own NHWC copy of its channels,
// writing slices of one tensor; the bias and the ReLU in the copy back: 4 x (x copy, weight copy,
// conv) + the copy. And a grouped strided transposed conv: 2 groups x 4 phases.
TEST(LowerConv, GroupedConvsBySlices) {
  check("conv_grouped", {{2, 16, 8, 8}, {32, 4, 3, 3}, {1, 1}, {0, 0}, {1, 1}, 4}, true, 13,
        [](double v, size_t, int64_t, const dsl::InterpTensors&) { return std::max(v, 0.0); });
  check_transposed("conv_transpose2d_grouped_s2", {{2, 8, 5, 6}, {8, 8, 3, 3}, {2, 2}, {1, 1}, {1, 1}, 2},
                   {2, 16, 10, 12}, true, 2 + 2 * 4 * 2 + 1, [](double v) { return std::max(v, 0.0); });
}

}  // namespace
}  // namespace ucut::lower
