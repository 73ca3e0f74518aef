// Golden lowering tests: every tests/golden/lower/<name>.json lowers to exactly <name>.ucut (or
// fails with exactly the message in <name>.err), and every lowered text checks again through
// dsl_compile. UCUTLASS_UPDATE_GOLDEN=1 rewrites the expected files. Plus unit tests of decisions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "dsl/dsl.h"
#include "dsl/interp.h"
#include "lower/lower.h"

namespace ucut::lower {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(UCUTLASS_SOURCE_DIR) / "tests" / "golden" / "lower";

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The policy a fixture is lowered under (default tf32).
sol::Policy policy_for(const std::string& name) {
  static const std::map<std::string, sol::Policy> table = {
      {"bf16_convert", sol::Policy::bf16},
      {"conv2d_bf16_policy", sol::Policy::bf16},
      {"linear_bias_gelu_exact", sol::Policy::exact},
  };
  auto it = table.find(name);
  return it == table.end() ? sol::Policy::tf32 : it->second;
}

// Fixtures named *unsupported* are lowered strictly (no torch stages): their .err is the reason
// a torch stage names in its note.
Result<LoweredProgram> lower_file(const fs::path& json, sol::Policy policy) {
  auto p = problem::problem_parse(slurp(json), json.filename().string());
  if (!p) return p.error();
  LowerOptions o;
  o.policy = policy;
  o.torch_stages = json.stem().string().find("unsupported") == std::string::npos;
  return lower_problem(*p, o);
}

TEST(LowerGolden, EveryFixtureMatches) {
  bool update = (std::getenv("UCUTLASS_UPDATE_GOLDEN") || std::getenv("UCUT_UPDATE_GOLDEN"));
  int n = 0;
  for (const auto& e : fs::directory_iterator(kDir)) {
    if (e.path().extension() != ".json") continue;
    std::string name = e.path().stem().string();
    SCOPED_TRACE(name);
    ++n;
    auto r = lower_file(e.path(), policy_for(name));
    fs::path ucut = kDir / (name + ".ucut"), err = kDir / (name + ".err");
    std::string got = r ? r->text : r.error().render() + "\n";
    fs::path want_path = r ? ucut : err;
    if (update) {
      std::ofstream(want_path) << got;
      continue;
    }
    ASSERT_TRUE(fs::exists(want_path)) << "no expected file " << want_path << "; got:\n" << got;
    EXPECT_EQ(got, slurp(want_path));
    if (r) {
      auto again = dsl::dsl_compile(SourceFile{name + ".ucut", r->text});
      ASSERT_TRUE(again.program.has_value()) << "lowered text does not check";
      EXPECT_EQ(dsl::dsl_print(*again.program), r->text);
    } else {
      EXPECT_EQ(r.error().code, ErrorCode::unsupported) << got;
    }
  }
  EXPECT_GE(n, 15) << "fixtures missing from " << kDir;
}

TEST(Lower, ExactPolicyUsesF32x3) {
  auto r = lower_file(kDir / "linear_bias_gelu.json", sol::Policy::exact);
  ASSERT_TRUE(r) << r.error().render();
  const auto& g = std::get<dsl::GemmStage>(r->program.stages.at(0).body);
  EXPECT_EQ(g.knobs.precision, dsl::Precision::f32x3);
  EXPECT_FALSE(g.knobs.tile.has_value());  // everything but the precision is auto
}

TEST(Lower, Tf32PolicyUsesTf32WhenKMajor) {
  auto r = lower_file(kDir / "linear_bias_gelu.json", sol::Policy::tf32);
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_EQ(r->program.stages.size(), 1u);  // bias and GELU fused into the epilogue
  EXPECT_EQ(std::get<dsl::GemmStage>(r->program.stages[0].body).knobs.precision, dsl::Precision::tf32);
}

TEST(Lower, Tf32FallsBackToTf32OnMmaSyncForTransposedA) {
  auto r = lower_file(kDir / "matmul_transposed.json", sol::Policy::tf32);
  ASSERT_TRUE(r) << r.error().render();
  const auto& g = std::get<dsl::GemmStage>(r->program.stages.at(0).body);
  EXPECT_EQ(g.knobs.precision, dsl::Precision::tf32m);
  EXPECT_TRUE(g.a.transposed);
  bool noted = false;
  for (const auto& n : r->notes) noted = noted || n.find("tf32 on wgmma is not possible") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Lower, Bf16PolicyConvertsLargeGemm) {
  auto r = lower_file(kDir / "bf16_convert.json", sol::Policy::bf16);
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_EQ(r->program.stages.size(), 3u);  // two conversions, then the GEMM
  EXPECT_TRUE(std::holds_alternative<dsl::ElementwiseStage>(r->program.stages[0].body));
  EXPECT_EQ(std::get<dsl::GemmStage>(r->program.stages[2].body).knobs.precision, dsl::Precision::bf16);
}

TEST(Lower, Bf16PolicyKeepsTf32ForSmallGemm) {
  // 512x2048x1024: the conversions cost more than the BF16 rate saves.
  auto r = lower_file(kDir / "linear_bias_gelu.json", sol::Policy::bf16);
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_EQ(r->program.stages.size(), 1u);
  EXPECT_EQ(std::get<dsl::GemmStage>(r->program.stages[0].body).knobs.precision, dsl::Precision::tf32);
}

TEST(Lower, RowReductionGoesIntoTheEpilogue) {
  auto r = lower_file(kDir / "gemm_rowsum.json", sol::Policy::tf32);
  ASSERT_TRUE(r) << r.error().render();
  const auto& g = std::get<dsl::GemmStage>(r->program.stages.at(0).body);
  bool has_reduce = false;
  for (const auto& st : g.epilogue.stmts) has_reduce = has_reduce || st.kind == dsl::EpilogueStmt::Kind::reduce;
  EXPECT_TRUE(has_reduce);
  EXPECT_EQ(r->program.stages.size(), 2u);  // the GEMM, then the mean's scale and *2
}

TEST(Lower, UnsupportedNamesTheOp) {
  auto r = lower_file(kDir / "unsupported_conv.json", sol::Policy::tf32);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::unsupported);
  EXPECT_NE(r.error().message.find("op 0 (conv2d)"), std::string::npos) << r.error().message;
}

}  // namespace
}  // namespace ucut::lower

namespace ucut::lower {
namespace {

Result<LoweredProgram> lower_with_torch(const std::string& name) {
  auto p = problem::problem_parse(slurp(kDir / (name + ".json")), name + ".json");
  if (!p) return p.error();
  return lower_problem(*p, LowerOptions{});
}

// A graph break: the convolution runs in a torch stage, the ReLU after it stays a kernel, and the
// note says why the convolution is PyTorch's.
TEST(LowerTorch, AnOpOutsideTheLanguageBecomesATorchStage) {
  auto r = lower_with_torch("torch_conv_relu");
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_EQ(r->program.stages.size(), 2u);
  const auto* t = std::get_if<dsl::TorchStage>(&r->program.stages[0].body);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->ops.size(), 1u);
  EXPECT_EQ(t->ops[0].op, "conv2d");
  EXPECT_EQ(t->ops[0].attrs.at("stride").list, (std::vector<int64_t>{1, 1}));
  EXPECT_TRUE(std::holds_alternative<dsl::ElementwiseStage>(r->program.stages[1].body));
  EXPECT_EQ(r->torch_ops, std::vector<int>{0});
  bool noted = false;
  for (const auto& n : r->notes)
    noted = noted || n.find("torch stage: torch_conv_relu: op 0 (conv2d)") != std::string::npos;
  EXPECT_TRUE(noted);
}

// minGPT's attention: the GEMMs stay kernels, the head permutes, the mask's slices, the comparison
// and the masked_fill run in torch stages; the -inf fill reaches the stage as a number.
TEST(LowerTorch, MaskedAttentionKeepsItsGemmsAsKernels) {
  auto r = lower_with_torch("torch_masked_attention");
  ASSERT_TRUE(r) << r.error().render();
  int gemms = 0, torch_stages = 0;
  bool masked_fill = false;
  for (const auto& st : r->program.stages) {
    if (std::holds_alternative<dsl::GemmStage>(st.body)) ++gemms;
    if (const auto* t = std::get_if<dsl::TorchStage>(&st.body)) {
      ++torch_stages;
      for (const auto& op : t->ops)
        if (op.op == "masked_fill") masked_fill = op.inputs.at(2).tensor.empty() && op.inputs[2].number < 0 &&
                                                  std::isinf(op.inputs[2].number);
    }
  }
  EXPECT_EQ(gemms, 4);  // c_attn, q k^T, att v, c_proj
  EXPECT_GT(torch_stages, 0);
  EXPECT_TRUE(masked_fill) << r->text;
}

// The same attention with the mask buffer's triangular structure (problem.json "structure"): the
// masked_fill is a causal mask in the softmax's prologue, and the mask's slices, comparison and
// fill leave the torch stages (the head permutes stay there).
TEST(LowerTorch, ATriangularMaskBufferBecomesACausalMask) {
  auto r = lower_with_torch("masked_attention_tril");
  ASSERT_TRUE(r) << r.error().render();
  int gemms = 0, rowwise = 0;
  for (const auto& st : r->program.stages) {
    if (std::holds_alternative<dsl::GemmStage>(st.body)) ++gemms;
    if (const auto* rw = std::get_if<dsl::RowwiseStage>(&st.body)) {
      ++rowwise;
      EXPECT_EQ(rw->op, "softmax");
      EXPECT_FALSE(rw->prologue.stmts.empty()) << r->text;  // where(col <= row, x, -inf)
    }
    if (const auto* t = std::get_if<dsl::TorchStage>(&st.body)) {
      for (const auto& op : t->ops) {
        EXPECT_TRUE(op.op != "masked_fill" && op.op != "eq" && op.op != "slice") << op.op << "\n" << r->text;
      }
    }
  }
  EXPECT_EQ(gemms, 4);
  EXPECT_EQ(rowwise, 1);
  EXPECT_EQ(r->program.find_tensor("bias"), nullptr) << r->text;  // the mask buffer is not read
  bool noted = false;
  for (const auto& n : r->notes) noted = noted || n.find("masked_fill with a triangular mask") != std::string::npos;
  EXPECT_TRUE(noted);
  // Without the structure the mask is data the lowering cannot see: the masked_fill stays PyTorch's.
  auto p = problem::problem_parse(slurp(kDir / "masked_attention_tril.json"), "m.json");
  ASSERT_TRUE(p);
  for (auto& t : p->tensors) t.triangle.reset();
  auto plain = lower_problem(*p, LowerOptions{});
  ASSERT_TRUE(plain) << plain.error().render();
  bool torch_fill = false;
  for (const auto& st : plain->program.stages)
    if (const auto* t = std::get_if<dsl::TorchStage>(&st.body))
      for (const auto& op : t->ops) torch_fill = torch_fill || op.op == "masked_fill";
  EXPECT_TRUE(torch_fill);
}

// relu(x.masked_fill(mask[:12, 2:14].bool(), -1e4)) with mask = triu(ones(16, 16), 1): the slice's
// column offset moves the diagonal; one elementwise stage computes it, and the interpreter's
// values are the masked_fill's, element by element.
TEST(LowerTorch, ATriangularMaskFoldsWithItsSliceOffsets) {
  auto r = lower_with_torch("masked_relu_triu");
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_EQ(r->program.stages.size(), 1u) << r->text;
  ASSERT_TRUE(std::holds_alternative<dsl::ElementwiseStage>(r->program.stages[0].body)) << r->text;
  const int64_t b = 2, h = 4, n = 12;
  dsl::InterpTensors io;
  std::vector<double> x(static_cast<size_t>(b * h * n * n));
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37 * static_cast<double>(i)) * 3;
  io["x"] = x;
  ASSERT_TRUE(dsl::interp_stage(r->program, 0, io, {})) << r->text;
  const auto& out = io.at("out0");
  ASSERT_EQ(out.size(), x.size());
  for (int64_t bh = 0; bh < b * h; ++bh)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = static_cast<size_t>((bh * n + i) * n + j);
        const bool filled = (j + 2) - i >= 1;  // triu(ones, 1)[i, j + 2]
        const double want = std::max(0.0, filled ? -1e4 : x[at]);
        ASSERT_EQ(out[at], want) << "bh " << bh << " i " << i << " j " << j << "\n" << r->text;
      }
}

// ReLU attention (KernelBench's level-3 relu self-attention at test size): the folded mask and the
// relu join the scores' GEMM epilogue, which reads the element's position from vectors of the
// positions a first stage writes (`position_16 = col`); the head split and permutes are copies of
// views of the projection (pass_strided_copies), so no torch stage is left.
TEST(LowerTorch, AFoldedMaskBetweenBatchedGemmsJoinsTheScoresEpilogue) {
  auto r = lower_with_torch("masked_relu_attention");
  ASSERT_TRUE(r) << r.error().render();
  int copies = 0, positions = 0;
  for (const auto& st : r->program.stages) {
    EXPECT_FALSE(std::holds_alternative<dsl::TorchStage>(st.body)) << r->text;
    const auto* e = std::get_if<dsl::ElementwiseStage>(&st.body);
    if (!e) continue;
    ASSERT_EQ(e->body.stmts.size(), 1u) << r->text;
    const auto& v = e->body.stmts[0].value;
    ASSERT_TRUE(v) << r->text;
    if (v->kind == dsl::Expr::Kind::index) {  // the positions 0 .. 15
      ++positions;
      continue;
    }
    ASSERT_EQ(v->kind, dsl::Expr::Kind::load) << r->text;  // a copy of a view
    const dsl::Tensor* src = r->program.find_tensor(v->name);
    ASSERT_TRUE(src && src->role == dsl::TensorRole::view) << r->text;
    ++copies;
  }
  EXPECT_EQ(positions, 1) << r->text;
  EXPECT_EQ(copies, 3) << r->text;  // q, k and v
  EXPECT_NE(r->text.find("where(le(position_16[col], position_16[row]), "), std::string::npos) << r->text;
  EXPECT_NE(r->text.find("relu("), std::string::npos) << r->text;
  // the scores' GEMM stores the masked relu: the second GEMM reads it
  const dsl::Tensor* scores = r->program.find_tensor("t17");
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(scores->shape, (std::vector<int64_t>{8, 16, 16})) << r->text;
}

// Mamba2's segsum builds its mask in forward, ~torch.tril(torch.ones(T, T, dtype=bool)): tril of a
// constant of ones, negated, folds the same way; exp(where(col <= row, s, -inf)) is one elementwise
// stage and the interpreter's values are masked_fill's.
TEST(LowerTorch, AMaskBuiltInForwardFoldsToo) {
  auto r = lower_with_torch("segsum_tril_mask");
  ASSERT_TRUE(r) << r.error().render();
  int at = -1;
  for (size_t i = 0; i < r->program.stages.size(); ++i) {
    const auto& st = r->program.stages[i];
    if (std::holds_alternative<dsl::ElementwiseStage>(st.body)) at = static_cast<int>(i);
    if (const auto* t = std::get_if<dsl::TorchStage>(&st.body)) {
      for (const auto& op : t->ops) {
        EXPECT_TRUE(op.op != "masked_fill" && op.op != "tril" && op.op != "bitwise_not") << op.op << "\n" << r->text;
      }
    }
  }
  ASSERT_GE(at, 0) << r->text;
  const int64_t bh = 6, n = 16;
  dsl::InterpTensors io;
  std::vector<double> sv(static_cast<size_t>(bh * n * n));
  for (size_t i = 0; i < sv.size(); ++i) sv[i] = std::cos(0.11 * static_cast<double>(i));
  io["t3"] = sv;
  ASSERT_TRUE(dsl::interp_stage(r->program, at, io, {})) << r->text;
  const auto& out = io.at("out0");
  for (int64_t b = 0; b < bh; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const size_t k = static_cast<size_t>((b * n + i) * n + j);
        ASSERT_EQ(out[k], j <= i ? std::exp(sv[k]) : 0.0) << b << " " << i << " " << j;
      }
}

// An op repeating an earlier one (the same cumsum of x twice) is merged: one scan stage, its result
// read twice, and a note names both ops.
TEST(Lower, ARepeatedOpIsComputedOnce) {
  auto r = lower_with_torch("repeated_op");
  ASSERT_TRUE(r) << r.error().render();
  int scans = 0;
  for (const auto& st : r->program.stages) scans += std::holds_alternative<dsl::ScanStage>(st.body);
  EXPECT_EQ(scans, 1) << r->text;
  bool noted = false;
  for (const auto& n : r->notes) noted = noted || n.find("op 1 (cumsum) at line 6 repeats op 0 (cumsum) at line 5") != std::string::npos;
  EXPECT_TRUE(noted);
}

// LayerNorm over 4 rows of 2^20 elements: each row in 128 chunks (E[x] and E[x^2] per chunk, their
// means per row, then one elementwise stage), and the stages' values, run by the interpreter, are
// layer_norm's to 1e-9 (the interpreter computes in double).
TEST(Lower, ALongRowLayerNormSplitsIntoChunks) {
  auto r = lower_with_torch("layer_norm_long_rows");
  ASSERT_TRUE(r) << r.error().render();
  int rowwise = 0;
  for (const auto& st : r->program.stages) rowwise += std::holds_alternative<dsl::RowwiseStage>(st.body);
  EXPECT_GE(rowwise, 1) << r->text;
  const dsl::Tensor* x = r->program.find_tensor("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->shape, (std::vector<int64_t>{4, 128, 8192})) << r->text;
  const int64_t rows = 4, d = int64_t(1) << 20;
  dsl::InterpTensors io;
  std::vector<double> xv(static_cast<size_t>(rows * d)), w(static_cast<size_t>(d)), b(static_cast<size_t>(d));
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.5 + 0.5 * std::sin(0.001 * static_cast<double>(i) * (1 + i % 7));
  for (size_t i = 0; i < w.size(); ++i) {
    w[i] = 1 + 0.25 * std::cos(0.01 * static_cast<double>(i));
    b[i] = 0.1 * std::sin(0.03 * static_cast<double>(i));
  }
  io["x"] = xv;
  io["ln_weight"] = w;
  io["ln_bias"] = b;
  for (size_t k = 0; k < r->program.stages.size(); ++k)
    ASSERT_TRUE(dsl::interp_stage(r->program, static_cast<int>(k), io, {})) << k << "\n" << r->text;
  const auto& out = io.at("out0");
  for (int64_t row = 0; row < rows; ++row) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += xv[static_cast<size_t>(row * d + j)];
    mean /= static_cast<double>(d);
    for (int64_t j = 0; j < d; ++j) var += std::pow(xv[static_cast<size_t>(row * d + j)] - mean, 2);
    var /= static_cast<double>(d);
    for (int64_t j = 0; j < d; j += 997) {
      const size_t at = static_cast<size_t>(row * d + j);
      const double want = (xv[at] - mean) / std::sqrt(var + 1e-5) * w[static_cast<size_t>(j)] + b[static_cast<size_t>(j)];
      ASSERT_NEAR(out[at], want, 1e-9) << row << " " << j;
    }
  }
}

// A mean over every element of an elementwise chain of two tensors reduces the rows first: a
// rowwise mean whose prologue reads the second tensor (in full for mean((p - t) ** 2), per column
// for the hinge loss with t broadcast), then the mean of the row means, and no elementwise stage
// writes the chain's value. The interpreter's result is the mean over every element.
TEST(Lower, AFullReductionOfTwoTensorsReducesTheRowsFirst) {
  for (const std::string name : {"mse_manual_rows", "hinge_broadcast_rows"}) {
    SCOPED_TRACE(name);
    auto r = lower_with_torch(name);
    ASSERT_TRUE(r) << r.error().render();
    ASSERT_EQ(r->program.stages.size(), 2u) << r->text;
    ASSERT_TRUE(std::holds_alternative<dsl::RowwiseStage>(r->program.stages[0].body)) << r->text;
    EXPECT_FALSE(std::get<dsl::RowwiseStage>(r->program.stages[0].body).prologue.stmts.empty()) << r->text;
    const bool hinge = name == "hinge_broadcast_rows";
    const int64_t rows = 512, cols = 1024;
    dsl::InterpTensors io;
    std::vector<double> p(static_cast<size_t>(rows * cols)), t(static_cast<size_t>(hinge ? cols : rows * cols));
    for (size_t i = 0; i < p.size(); ++i) p[i] = 1.5 * std::sin(0.37 * static_cast<double>(i));
    for (size_t i = 0; i < t.size(); ++i) t[i] = hinge ? (i % 3 ? 1.0 : -1.0) : std::cos(0.11 * static_cast<double>(i));
    io["predictions"] = p;
    io["targets"] = t;
    for (size_t k = 0; k < r->program.stages.size(); ++k)
      ASSERT_TRUE(dsl::interp_stage(r->program, static_cast<int>(k), io, {})) << k << "\n" << r->text;
    double want = 0;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const double a = p[static_cast<size_t>(i * cols + j)];
        want += hinge ? std::max(0.0, 1 - a * t[static_cast<size_t>(j)]) : std::pow(a - t[static_cast<size_t>(i * cols + j)], 2);
      }
    want /= static_cast<double>(rows * cols);
    ASSERT_EQ(io.at("out0").size(), 1u);
    EXPECT_NEAR(io.at("out0")[0], want, 1e-12 * std::abs(want) + 1e-12);
  }
}

// KernelBench's L1 norm, x / mean(|x|, dim=1, keepdim=True): one rowwise l1_normalize whose
// epilogue multiplies by the row length (one read and one write of x, where the mean and the divide
// were two stages reading it twice); the interpreter's values are PyTorch's.
TEST(Lower, XOverTheMeanOfItsAbsoluteValueIsOneRowwiseStage) {
  auto r = lower_with_torch("l1_norm_mean");
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_EQ(r->program.stages.size(), 1u) << r->text;
  ASSERT_TRUE(std::holds_alternative<dsl::RowwiseStage>(r->program.stages[0].body)) << r->text;
  EXPECT_EQ(std::get<dsl::RowwiseStage>(r->program.stages[0].body).op, "l1_normalize") << r->text;
  const int64_t rows = 64, cols = 1000;
  dsl::InterpTensors io;
  std::vector<double> x(static_cast<size_t>(rows * cols));
  for (size_t i = 0; i < x.size(); ++i) x[i] = 2.0 * std::sin(0.29 * static_cast<double>(i)) - 0.1;
  io["x"] = x;
  ASSERT_TRUE(dsl::interp_stage(r->program, 0, io, {})) << r->text;
  const auto& out = io.at("out0");
  ASSERT_EQ(out.size(), x.size());
  for (int64_t i = 0; i < rows; ++i) {
    double mean = 0;
    for (int64_t j = 0; j < cols; ++j) mean += std::abs(x[static_cast<size_t>(i * cols + j)]);
    mean /= static_cast<double>(cols);
    for (int64_t j = 0; j < cols; j += 97) {
      const double want = x[static_cast<size_t>(i * cols + j)] / mean;
      EXPECT_NEAR(out[static_cast<size_t>(i * cols + j)], want, 1e-12 * std::abs(want) + 1e-12) << i << " " << j;
    }
  }
}

// minGPT's head split and merge at test size: split, view, transpose(1, 2) are one view of x read
// by the scale's stage, and the merge (transpose, contiguous, view) one copy the output aliases;
// no torch stage, and the interpreter's result is 2 * x[..., 8:16].
TEST(Lower, HeadSplitsAndMergesAreCopiesOfViews) {
  auto r = lower_with_torch("head_split_permute");
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_EQ(r->program.stages.size(), 2u) << r->text;
  int views = 0;
  std::string out;
  for (const auto& t : r->program.tensors) {
    views += t.role == dsl::TensorRole::view;
    if (t.role == dsl::TensorRole::out) out = t.name;
  }
  EXPECT_EQ(views, 2) << r->text;
  dsl::InterpTensors io;
  std::vector<double> x(2 * 4 * 24);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) * 0.5 - 7;
  io["x"] = x;
  for (size_t k = 0; k < r->program.stages.size(); ++k)
    ASSERT_TRUE(dsl::interp_stage(r->program, static_cast<int>(k), io, {})) << k << "\n" << r->text;
  const auto& y = io.at(out);
  ASSERT_EQ(y.size(), 2u * 4 * 8);
  for (size_t b = 0; b < 2; ++b)
    for (size_t t = 0; t < 4; ++t)
      for (size_t c = 0; c < 8; ++c) EXPECT_EQ(y[(b * 4 + t) * 8 + c], 2 * x[(b * 4 + t) * 24 + 8 + c]) << b << t << c;
}

// (s - m) @ v over [B, H, T, T] with m [B, H, T, 1]: the difference is computed in the batched GEMM's
// folded [B*H, T, T] declaration, m read through a view in that shape (stride 0 where it is
// broadcast); the interpreter's difference is s - m.
TEST(Lower, ABroadcastOperandOfAFoldedBlockIsReadThroughAView) {
  auto r = lower_with_torch("folded_block_broadcast");
  ASSERT_TRUE(r) << r.error().render();
  ASSERT_TRUE(std::holds_alternative<dsl::ElementwiseStage>(r->program.stages.at(0).body)) << r->text;
  const dsl::Tensor* mb = r->program.find_tensor("m_b");
  ASSERT_TRUE(mb && mb->role == dsl::TensorRole::view) << r->text;
  EXPECT_EQ(mb->view_strides, (std::vector<int64_t>{4, 1, 0})) << r->text;
  dsl::InterpTensors io;
  std::vector<double> sv(96), mv(24);
  for (size_t i = 0; i < sv.size(); ++i) sv[i] = static_cast<double>(i) * 0.25;
  for (size_t i = 0; i < mv.size(); ++i) mv[i] = 100.0 * static_cast<double>(i);
  io["s"] = sv;
  io["m"] = mv;
  ASSERT_TRUE(dsl::interp_stage(r->program, 0, io, {})) << r->text;
  const auto& d = io.at("t0");
  for (size_t i = 0; i < 96; ++i) EXPECT_EQ(d[i], sv[i] - mv[i / 4]) << i;
}

// Attention written out (q @ k^T, a scale, a causal mask, softmax, @ v) with head dim 64 is one
// fused attention stage; not where the scores are also returned, nor with a negative scale after
// the mask's -inf, nor with head dim 48 (attention_rank4: the GEMMs and the softmax stay).
TEST(Lower, WrittenOutAttentionIsOneFusedStage) {
  const std::string text = slurp(kDir / "attention_manual_causal.json");
  auto lower_text = [](const std::string& t) -> Result<LoweredProgram> {
    auto p = problem::problem_parse(t, "attention_manual_causal.json");
    if (!p) return p.error();
    return lower_problem(*p, LowerOptions{});
  };
  auto fused = lower_text(text);
  ASSERT_TRUE(fused) << fused.error().render();
  ASSERT_EQ(fused->program.stages.size(), 1u) << fused->text;
  const auto* a = std::get_if<dsl::AttentionStage>(&fused->program.stages[0].body);
  ASSERT_NE(a, nullptr) << fused->text;
  EXPECT_TRUE(a->causal);
  EXPECT_EQ(a->scale, 0.125);
  // the scores returned too: three stages, the scaled scores reading the returned (folded) ones
  // through a view, the softmax's result declared folded for the second GEMM
  auto j = nlohmann::json::parse(text);
  j["outputs"].push_back("t1");
  for (auto& t : j["tensors"])
    if (t["name"] == "t1") {
      t["kind"] = "output";
      t["index"] = 1;
    }
  auto returned = lower_text(j.dump());
  ASSERT_TRUE(returned) << returned.error().render();
  for (const auto& st : returned->program.stages) {
    EXPECT_FALSE(std::holds_alternative<dsl::AttentionStage>(st.body)) << returned->text;
    EXPECT_FALSE(std::holds_alternative<dsl::TorchStage>(st.body)) << returned->text;
  }
  auto n = nlohmann::json::parse(text);
  n["ops"][2]["inputs"][1]["scalar"] = -0.125;
  auto negative = lower_text(n.dump());
  ASSERT_TRUE(negative) << negative.error().render();
  for (const auto& st : negative->program.stages)
    EXPECT_FALSE(std::holds_alternative<dsl::AttentionStage>(st.body)) << negative->text;
}

// Strict lowering (torch_stages = false) keeps the old contract: the op is named, nothing lowers.
TEST(LowerTorch, StrictLoweringStillNamesTheOp) {
  auto p = problem::problem_parse(slurp(kDir / "torch_conv_relu.json"), "torch_conv_relu.json");
  ASSERT_TRUE(p);
  LowerOptions o;
  o.torch_stages = false;
  auto r = lower_problem(*p, o);
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("op 0 (conv2d)"), std::string::npos);
}

// A problem of nothing but unsupported ops keeps no kernel stage: that is not a program worth
// searching but the PyTorch fallback.
TEST(LowerTorch, NoKernelStageIsUnsupported) {
  auto p = problem::problem_parse(slurp(kDir / "torch_conv_relu.json"), "torch_conv_relu.json");
  ASSERT_TRUE(p);
  p->ops.pop_back();  // drop the relu: the conv writes the output itself
  p->ops[0].outputs = {"out0"};
  auto r = lower_problem(*p, LowerOptions{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code, ErrorCode::unsupported);
  EXPECT_NE(r.error().message.find("no kernel stage: every operation runs in PyTorch"), std::string::npos)
      << r.error().message;
}

}  // namespace
}  // namespace ucut::lower
