// Golden tests of generated kernel libraries: each sample program's .cu must equal
// tests/golden/codegen/<name>.cu (regenerate with UCUTLASS_UPDATE_GOLDEN=1), plus structural
// checks of what every library must contain.
#include "codegen/library.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "codegen/golden_test.h"
#include "codegen/simt_common.h"
#include "codegen/sample_programs.h"
#include "dsl/dsl.h"
#include "dsl/gemm_rules.h"
#include "dsl/interp.h"
#include "support/fs.h"
#include "support/hash.h"

namespace ucut::codegen {
namespace {

TEST(Library, GoldenBf16BiasGelu) {
  dsl::GemmKnobs k;
  k.tile = dsl::TileShape{128, 256, 64};
  k.cluster = dsl::ClusterShape{2, 1};
  check_golden(sample_bf16_bias_gelu(4096, 4096, 4096, k));
}

// A program that must check, and its f32x3s expansion (nullopt, with the failure recorded, if
// either fails).
struct Expanded {
  dsl::Program program, expanded;
};
std::optional<Expanded> expand(const std::string& name, const std::string& text) {
  auto r = dsl::dsl_compile(SourceFile{name, text});
  if (!r.program) {
    ADD_FAILURE() << diag_render_all(SourceFile{name, text}, r.diagnostics);
    return std::nullopt;
  }
  auto x = codegen_expand_split_gemms(*r.program);
  if (!x.ok()) {
    ADD_FAILURE() << x.error().render();
    return std::nullopt;
  }
  return Expanded{*r.program, *x};
}

// f32x3s: the library runs split stages and three TF32 GEMMs; the stage's epilogue (a row max
// to a second output) reads acc + the cross products, and only the big x big GEMM splits K.
TEST(Library, F32x3sExpandsIntoSplitStagesAndThreeTf32Gemms) {
  const char* text =
      "ucut 1\nname f32x3s_split\nin x : f32[256, 2048]\nparam W : f32[512, 2048] = \"fc.weight\"\n"
      "param b : f32[512] = \"fc.bias\"\nout y : f32[256, 512]\nout m : f32[256]\n"
      "stage y = gemm(x, W.T) {\n  precision f32x3s\n  epilogue {\n    let t = acc + b[col]\n    y = relu(t)\n"
      "    m = rowmax(t)\n  }\n}\n";
  auto e = expand("f32x3s_split.ucut", text);
  ASSERT_TRUE(e);
  const dsl::Program* x = &e->expanded;
  ASSERT_EQ(x->stages.size(), 5u);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(std::holds_alternative<dsl::ElementwiseStage>(x->stages[i].body)) << i;
  EXPECT_EQ(x->stages[0].outputs, (std::vector<std::string>{"s0__ab", "s0__as"}));  // A read once
  EXPECT_EQ(x->stages[1].outputs, (std::vector<std::string>{"s0__bb", "s0__bs"}));
  const auto& main = std::get<dsl::GemmStage>(x->stages[4].body);
  EXPECT_EQ(main.knobs.precision, dsl::Precision::tf32);
  EXPECT_EQ(main.knobs.split_k.value_or(1), 4);  // K = 2048: four pieces (gemm_f32x3s_split_k)
  EXPECT_EQ(main.a.tensor, "s0__ab");
  EXPECT_EQ(main.b.tensor, "s0__bb");
  EXPECT_TRUE(main.b.transposed);
  EXPECT_EQ(x->stages[4].outputs, (std::vector<std::string>{"y", "m"}));
  // acc + p2 bound once; every later acc reads it
  ASSERT_FALSE(main.epilogue.stmts.empty());
  EXPECT_EQ(main.epilogue.stmts[0].name, "ucut_acc3");
  const auto& cross = std::get<dsl::GemmStage>(x->stages[3].body);
  EXPECT_EQ(cross.a.tensor, "s0__as");
  EXPECT_EQ(cross.knobs.split_k.value_or(1), 1);
  for (const char* t : {"s0__ab", "s0__as", "s0__bb", "s0__bs", "s0__p1", "s0__p2"}) {
    const dsl::Tensor* tt = x->find_tensor(t);
    ASSERT_NE(tt, nullptr) << t;
    EXPECT_EQ(tt->role, dsl::TensorRole::tmp);
  }
  // every stage the expansion adds runs as the program's stage s0 (a per-stage profile's sums);
  // no other stage's name does
  for (const auto& st : x->stages) EXPECT_TRUE(codegen_stage_runs_as("s0", st.name)) << st.name;
  EXPECT_FALSE(codegen_stage_runs_as("s1", "s10"));
  EXPECT_FALSE(codegen_stage_runs_as("s1", "s10_p1"));
  auto lib = codegen_emit_library(e->program, {"f32x3s_split.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  EXPECT_EQ(lib->config_names.size(), 5u);
  EXPECT_NE(lib->source.find("cvt.rna.tf32.f32"), std::string::npos);
  // other precisions pass through unchanged
  auto same = codegen_expand_split_gemms(sample_f32_scaled(1024, 2048, 512, dsl::Precision::tf32, {}));
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->stages.size(), 1u);
}

// The split stages' math (the C++ interpreter): each operand is read once into its TF32 value,
// whose low 13 mantissa bits are zero, and a remainder that adds back to it exactly.
TEST(Library, F32x3sSplitsAreExactTf32PartsOfTheOperand) {
  const char* text =
      "ucut 1\nin x : f32[8, 64]\nparam W : f32[16, 64] = \"w\"\nout y : f32[8, 16]\n"
      "stage y = gemm(x, W.T) { precision f32x3s }\n";
  auto e = expand("s.ucut", text);
  ASSERT_TRUE(e);
  const dsl::Program* x = &e->expanded;
  dsl::InterpTensors t;
  uint32_t seed = 12345;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<double>(static_cast<float>((seed >> 8) * (1.0 / 16777216.0) * 8.0 - 4.0));
  };
  t["x"].resize(8 * 64);
  t["W"].resize(16 * 64);
  for (auto* v : {&t["x"], &t["W"]})
    for (auto& e : *v) e = next();
  t["x"][3] = 1.0 + std::ldexp(1.0, -11);  // a tie: rounds away from zero
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(dsl::interp_stage(*x, i, t, {}).ok()) << i;
  for (const auto& [src, big, small] : {std::tuple{"x", "s0__ab", "s0__as"}, std::tuple{"W", "s0__bb", "s0__bs"}}) {
    const auto &a = t.at(src), &b = t.at(big), &c = t.at(small);
    ASSERT_EQ(b.size(), a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const float bf = static_cast<float>(b[i]);
      uint32_t bits;
      std::memcpy(&bits, &bf, 4);
      EXPECT_EQ(bits & 0x1fffu, 0u) << src << "[" << i << "] = " << a[i];
      EXPECT_EQ(b[i] + c[i], a[i]) << src << "[" << i << "]";
      EXPECT_LE(std::fabs(c[i]), std::ldexp(std::fabs(a[i]), -11)) << src << "[" << i << "]";
    }
  }
  EXPECT_EQ(t.at("s0__ab")[3], 1.0 + std::ldexp(1.0, -10));
}

// The operands of the A^T @ B tests below, a [2, 40, 24] and b [2, 40, 36], fp32 values.
void fill_transposed_operands(dsl::InterpTensors& t) {
  for (int i = 0; i < 2 * 40 * 24; ++i) t["a"].push_back(static_cast<float>(std::sin(0.71 * i) * 3));
  for (int i = 0; i < 2 * 40 * 36; ++i) t["b"].push_back(static_cast<float>(std::cos(0.37 * i) * 2));
}

// TF32 wgmma reads both operands only K-major: an operand stored otherwise (A written A.T, B as
// [K, N]) is split into its transpose, and the three GEMMs read the parts K-major. The
// interpreter checks the parts element by element against the operand read transposed.
TEST(Library, F32x3sSplitsANonKMajorOperandIntoItsTranspose) {
  const char* text =
      "ucut 1\nin a : f32[2, 40, 24]\nin b : f32[2, 40, 36]\nout y : f32[2, 24, 36]\n"
      "stage y = gemm(a.T, b) { precision f32x3s }\n";
  auto e = expand("t.ucut", text);
  ASSERT_TRUE(e);
  const dsl::Program* x = &e->expanded;
  ASSERT_EQ(x->stages.size(), 5u);
  for (int i = 0; i < 2; ++i) {
    const auto* es = std::get_if<dsl::ElementwiseStage>(&x->stages[i].body);
    ASSERT_NE(es, nullptr) << i;
    EXPECT_TRUE(es->transpose) << i;
  }
  EXPECT_EQ(x->find_tensor("s0__ab")->shape, (std::vector<int64_t>{2, 24, 40}));  // [.., M, K]
  EXPECT_EQ(x->find_tensor("s0__bs")->shape, (std::vector<int64_t>{2, 36, 40}));  // [.., N, K]
  for (int i = 2; i < 5; ++i) {
    const auto& g = std::get<dsl::GemmStage>(x->stages[i].body);
    EXPECT_FALSE(g.a.transposed) << i;
    EXPECT_TRUE(g.b.transposed) << i;
    EXPECT_EQ(g.m, 24);
    EXPECT_EQ(g.n, 36);
    EXPECT_EQ(g.k, 40);
  }
  dsl::InterpTensors t;
  fill_transposed_operands(t);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(dsl::interp_stage(*x, i, t, {}).ok()) << i;
  auto check = [&](const char* src, const char* big, const char* small, int64_t k, int64_t mn) {
    for (int64_t l = 0; l < 2; ++l)
      for (int64_t r = 0; r < mn; ++r)
        for (int64_t c = 0; c < k; ++c) {
          const double v = t.at(src)[(l * k + c) * mn + r];                 // the operand at [l, c, r]
          const size_t at = static_cast<size_t>((l * mn + r) * k + c);      // its part at [l, r, c]
          EXPECT_EQ(t.at(big)[at] + t.at(small)[at], v) << src << " " << l << "," << r << "," << c;
          EXPECT_LE(std::fabs(t.at(small)[at]), std::ldexp(std::fabs(v), -11)) << src;
        }
  };
  check("a", "s0__ab", "s0__as", 40, 24);
  check("b", "s0__bb", "s0__bs", 40, 36);
  auto lib = codegen_emit_library(e->program, {"t.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  EXPECT_EQ(lib->config_names[0], "elementwise_transpose_t256");
  // the same operand read both ways in one program is split twice, once per layout
  const char* both =
      "ucut 1\nin a : f32[64, 64]\nout y : f32[64, 64]\nout z : f32[64, 64]\n"
      "stage y = gemm(a, a) { precision f32x3s }\nstage z = gemm(a, a.T) { precision f32x3s }\n";
  auto e2 = expand("both.ucut", both);
  ASSERT_TRUE(e2);
  int splits = 0;
  for (const auto& st : e2->expanded.stages) splits += std::holds_alternative<dsl::ElementwiseStage>(st.body);
  EXPECT_EQ(splits, 2);  // a (K-major as A and as z's B.T) and a^T (y's B)
}

// An epilogue reading a full-size tensor (a residual): p2 takes the GEMM's one source slot, so the
// GEMM stores acc + p2 and an elementwise stage after it computes what the epilogue did.
TEST(Library, F32x3sWithAResidualRunsTheEpilogueAfterTheGemm) {
  const char* text =
      "ucut 1\nin x : f32[8, 64]\nin r : f32[8, 16]\nparam W : f32[16, 64] = \"w\"\nparam b : f32[16] = \"b\"\n"
      "out y : f32[8, 16]\nstage y = gemm(x, W.T) {\n  precision f32x3s\n  epilogue {\n"
      "    let t = (acc + b[col]) * 0.5\n    y = gelu(t) + r\n  }\n}\n";
  auto e = expand("res.ucut", text);
  ASSERT_TRUE(e);
  const dsl::Program* x = &e->expanded;
  ASSERT_EQ(x->stages.size(), 6u);
  const auto& main = std::get<dsl::GemmStage>(x->stages[4].body);
  EXPECT_EQ(x->stages[4].outputs, (std::vector<std::string>{"s0__acc3"}));
  ASSERT_EQ(main.epilogue.stmts.size(), 1u);  // acc + p2, nothing else: the source slot is p2's
  ASSERT_TRUE(std::holds_alternative<dsl::ElementwiseStage>(x->stages[5].body));
  EXPECT_EQ(x->stages[5].outputs, (std::vector<std::string>{"y"}));
  ASSERT_NE(x->find_tensor("s0__acc3"), nullptr);
  EXPECT_EQ(x->find_tensor("s0__acc3")->role, dsl::TensorRole::tmp);
  // The elementwise stage computes the original epilogue over acc3 (the interpreter, element by element).
  dsl::InterpTensors t;
  for (int i = 0; i < 8 * 16; ++i) {
    t["s0__acc3"].push_back(std::sin(0.37 * i) * 3);
    t["r"].push_back(std::cos(0.11 * i));
  }
  for (int j = 0; j < 16; ++j) t["b"].push_back(0.1 * j - 0.7);
  ASSERT_TRUE(dsl::interp_stage(*x, 5, t, {}).ok());
  const auto& g = std::get<dsl::GemmStage>(e->program.stages[0].body);
  for (int i = 0; i < 8 * 16; ++i) {
    auto read = [&](const dsl::Expr& load) -> Result<double> {
      if (load.name == "b") return t["b"][i % 16];
      return t["r"][i];
    };
    auto want = dsl::interp_epilogue(e->program, g.epilogue, t["s0__acc3"][i], read, {});
    ASSERT_TRUE(want.ok());
    EXPECT_EQ(t["y"][i], *want) << i;
  }
  auto lib = codegen_emit_library(e->program, {"res.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  EXPECT_EQ(lib->config_names.size(), 6u);
}

// Two f32x3s GEMMs of one operand (SwiGLU's x): it is split once, and the second GEMM (whose
// epilogue reads the first's result, so it runs after it) reads the same parts.
TEST(Library, F32x3sSplitsASharedOperandOnce) {
  const char* text =
      "ucut 1\nin x : f32[64, 64]\nparam W1 : f32[32, 64] = \"w1\"\nparam W2 : f32[32, 64] = \"w2\"\n"
      "out y : f32[64, 32]\ntmp t : f32[64, 32]\n"
      "stage t = gemm(x, W1.T) {\n  precision f32x3s\n  epilogue { t = silu(acc) }\n}\n"
      "stage y = gemm(x, W2.T) {\n  precision f32x3s\n  epilogue { y = t * acc }\n}\n";
  auto e = expand("sw.ucut", text);
  ASSERT_TRUE(e);
  const dsl::Program* x = &e->expanded;
  // 2 splits + 3 GEMMs, then W2's split + 3 GEMMs + the epilogue's elementwise stage
  ASSERT_EQ(x->stages.size(), 10u);
  int splits_of_x = 0;
  for (const auto& st : x->stages)
    if (std::holds_alternative<dsl::ElementwiseStage>(st.body) && st.outputs.size() == 2 &&
        st.outputs[0].find("__ab") != std::string::npos)
      ++splits_of_x;
  EXPECT_EQ(splits_of_x, 1);
  const auto& second = std::get<dsl::GemmStage>(x->stages[8].body);
  EXPECT_EQ(second.a.tensor, "s0__ab");
  EXPECT_EQ(std::get<dsl::GemmStage>(x->stages[7].body).a.tensor, "s0__as");
  auto lib = codegen_emit_library(e->program, {"sw.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
}

// With a reduction beside the residual, or vectors of a batched GEMM, the checker refuses (the
// elementwise stage after the GEMM cannot reduce, and broadcasts vectors by the output's rows).
TEST(Library, F32x3sResidualRefusals) {
  const char* batched =
      "ucut 1\nin x : f32[4, 8, 64]\nin r : f32[4, 8, 16]\nparam W : f32[4, 16, 64] = \"w\"\nparam b : f32[16] = \"b\"\n"
      "out y : f32[4, 8, 16]\nstage y = gemm(x, W.T) {\n  precision f32x3s\n  epilogue { y = acc + b[col] + r }\n}\n";
  auto r = dsl::dsl_compile(SourceFile{"b.ucut", batched});
  ASSERT_FALSE(r.program.has_value());
  EXPECT_NE(diag_render_all(SourceFile{"b.ucut", batched}, r.diagnostics).find("does not broadcast this batched GEMM"),
            std::string::npos)
      << diag_render_all(SourceFile{"b.ucut", batched}, r.diagnostics);
  const std::string plain = std::string(batched).replace(std::string(batched).find(" + b[col]"), 9, "");
  auto ok = dsl::dsl_compile(SourceFile{"p.ucut", plain});
  EXPECT_TRUE(ok.program.has_value()) << diag_render_all(SourceFile{"p.ucut", plain}, ok.diagnostics);
}

TEST(Library, GoldenTf32) {
  check_golden(sample_f32_scaled(1024, 2048, 512, dsl::Precision::tf32, {}));
}

TEST(Library, GoldenF32x3) {
  check_golden(sample_f32_scaled(1024, 8192, 8192, dsl::Precision::f32x3, {}));
}

// Whether a stored unit of `lib` carries the runtime header's digest (its store key changes with it).
template <class Lib>
bool stored_unit_carries_digest(const Lib& lib, const std::string& header) {
  const auto text = fs_read(simt_runtime_include_dir() + "/" + header);
  if (!text) return false;
  const std::string line = header + " sha256 " + sha256_hex(*text).substr(0, 16);
  for (const auto& u : lib.units)
    if (u.stored && u.source.find(line) != std::string::npos) return true;
  return false;
}

// f32x3w: CUTLASS's cooperative kernel and epilogue over our main loop (runtime/gemm_f32x3w_rs.cuh,
// A split in registers), whose operands TMA copies as 32-bit words (tfloat32_t, not float: float
// rounds them to TF32 on the way in). The library includes the runtime header, so its folder is on
// the include path and the headers' text in every unit's store key.
TEST(Library, GoldenF32x3w) {
  const dsl::Program p = sample_f32_scaled(1024, 8192, 8192, dsl::Precision::f32x3w, {});
  check_golden(p);
  auto lib = codegen_emit_library(p, {"f32_scaled_f32x3w.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  EXPECT_TRUE(lib->needs_simt_runtime);
  EXPECT_NE(lib->source.find("#include \"gemm_f32x3w_rs.cuh\""), std::string::npos);
  EXPECT_NE(lib->source.find("using ElementA = cutlass::tfloat32_t;"), std::string::npos);
  EXPECT_NE(lib->source.find("ucut_f32x3w::MainloopRs<cute::GMMA::Major::K, cute::GMMA::Major::K,\n"
                             "    ucut_f32x3w::auto_stages_rs<TileShape, false>("),
            std::string::npos);
  EXPECT_EQ(lib->config_names.at(0), "gemm_f32x3w_t128x128x32_c2x1_sA_coop_persist_rm_w1");
  // the stored unit's text (its store key) carries the main loop headers' digests
  for (const char* header : {"gemm_f32x3w.cuh", "gemm_f32x3w_rs.cuh"})
    EXPECT_TRUE(stored_unit_carries_digest(*lib, header)) << header;
  // the same GEMM in TF32 keeps CUTLASS's own main loop and needs no runtime header
  auto tf = codegen_emit_library(sample_f32_scaled(1024, 8192, 8192, dsl::Precision::tf32, {}), {"t.ucut", "h"});
  ASSERT_TRUE(tf.ok());
  EXPECT_FALSE(tf->needs_simt_runtime);
  EXPECT_EQ(tf->source.find("gemm_f32x3w.cuh"), std::string::npos);
}

// f32x3w with B [K, N] (N contiguous), which TF32 wgmma cannot read from shared memory. Beside a
// K-major A the unit computes D.T = B.T A.T: its A is B (M-major, read through registers), its B is
// A (K-major), its output column-major; nothing is transposed, and the binding is the same.
TEST(Library, GoldenF32x3wRegisters) {
  dsl::Program p = sample_f32_scaled(1024, 2048, 4096, dsl::Precision::f32x3w, {});
  p.name = "f32_scaled_f32x3w_kn";
  p.tensors[1].shape = {4096, 2048};
  std::get<dsl::GemmStage>(p.stages[0].body).b.transposed = false;
  check_golden(p);
  auto lib = codegen_emit_library(p, {"f32_scaled_f32x3w_kn.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  EXPECT_TRUE(lib->needs_simt_runtime);
  EXPECT_NE(lib->source.find("#include \"gemm_f32x3w_rs.cuh\""), std::string::npos);
  EXPECT_NE(lib->source.find("ucut_f32x3w::MainloopRs<cute::GMMA::Major::MN, cute::GMMA::Major::K,"), std::string::npos);
  EXPECT_NE(lib->source.find("ucut_f32x3w::auto_stages_rs<TileShape, false>("), std::string::npos);
  EXPECT_NE(lib->source.find("const int M = a.n, N = a.m, K = a.k, L = a.l;  // D.T = B.T A.T"), std::string::npos);
  EXPECT_NE(lib->source.find("args.mainloop.ptr_A = static_cast<ElementA const*>(a.b);"), std::string::npos);
  EXPECT_NE(lib->source.find("args.mainloop.ptr_B = static_cast<ElementB const*>(a.a);"), std::string::npos);
  EXPECT_NE(lib->source.find("ElementC, cutlass::layout::ColumnMajor, AlignC, ElementD, cutlass::layout::ColumnMajor"),
            std::string::npos);
  // the binding is the output's: M, N and the operands as the program has them
  EXPECT_NE(lib->source.find("g.m = 1024; g.n = 2048; g.k = 4096; g.l = 1;\n  g.a = a.tensors[0];  // x\n"
                             "  g.b = a.tensors[1];  // W"),
            std::string::npos);
  for (const char* header : {"gemm_f32x3w.cuh", "gemm_f32x3w_rs.cuh"})
    EXPECT_TRUE(stored_unit_carries_digest(*lib, header)) << header;
  // beside a transposed A the split transposes B's tiles: its big and small parts written K-major
  dsl::Program t = p;
  t.name = "f32_scaled_f32x3w_mn";
  t.tensors[0].shape = {4096, 1024};
  std::get<dsl::GemmStage>(t.stages[0].body).a.transposed = true;
  check_golden(t);
  auto tl = codegen_emit_library(t, {"f32_scaled_f32x3w_mn.ucut", std::string(64, '0')});
  ASSERT_TRUE(tl.ok()) << tl.error().render();
  EXPECT_NE(tl->source.find("ucut_f32x3w::MainloopRs<cute::GMMA::Major::MN, cute::GMMA::Major::MN,"), std::string::npos);
  EXPECT_NE(tl->source.find("ucut_f32x3w::auto_stages_rs<TileShape, true>("), std::string::npos);
  EXPECT_NE(tl->source.find("const int M = a.m, N = a.n, K = a.k, L = a.l;\n"), std::string::npos);
  EXPECT_NE(tl->source.find("using LayoutB = cutlass::layout::RowMajor;  // B [K, N] (N-major)"), std::string::npos);
}

// The transposed product's epilogue: the output's v[row] and per-row reductions are the unit's
// per-column ones (CUTLASS's RowBroadcast, RowReduction) and v[col] its per-row ones; the residual
// is read column-major like D. The same program with W.T keeps the output's orientation.
TEST(Library, GoldenF32x3wSwappedEpilogue) {
  const char* text =
      "ucut 1\nname f32x3w_swapped_epilogue\nin x : f32[256, 512]\nparam W : f32[512, 384] = \"w\"\n"
      "in s : f32[256]\nin b : f32[384]\nin r : f32[256, 384]\nout y : f32[256, 384]\nout rs : f32[256]\n"
      "out cm : f32[384]\n"
      "stage y = gemm(x, W) {\n  precision f32x3w\n  epilogue {\n    let t = relu(acc * s[row] + b[col] + r)\n"
      "    y = t\n    rs = rowsum(t)\n    cm = colmax(t)\n  }\n}\n";
  auto r = dsl::dsl_compile(SourceFile{"f32x3w_swapped_epilogue.ucut", text});
  ASSERT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"f32x3w_swapped_epilogue.ucut", text}, r.diagnostics);
  check_golden(*r.program);
  auto count = [](const std::string& src, const std::string& what) {
    size_t n = 0;
    for (size_t pos = src.find(what); pos != std::string::npos; pos = src.find(what, pos + 1)) ++n;
    return n;
  };
  auto lib = codegen_emit_library(*r.program, {"f32x3w_swapped_epilogue.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  const std::string& src = lib->source;
  EXPECT_NE(src.find("ucut_f32x3w::MainloopRs<cute::GMMA::Major::MN, cute::GMMA::Major::K,"), std::string::npos);
  // s[row] -> RowBroadcast, b[col] -> ColBroadcast; rowsum -> RowReduction, colmax -> ColReduction
  EXPECT_NE(src.find("fusion::Sm90RowBroadcast<0, TileShape, float, float, Stride<_0, _1, int64_t>>;  // vr_"), std::string::npos);
  EXPECT_NE(src.find("fusion::Sm90ColBroadcast<0, TileShape, float, float, Stride<_1, _0, int64_t>>;  // vc_"), std::string::npos);
  EXPECT_NE(src.find("fusion::Sm90RowReduction<cutlass::plus"), std::string::npos);
  EXPECT_NE(src.find("fusion::Sm90ColReduction<cutlass::maximum_with_nan_propagation"), std::string::npos);
  EXPECT_NE(src.find("ElementC, cutlass::layout::ColumnMajor"), std::string::npos);
  // K-major W: the output's own orientation
  std::string kmajor = text;
  kmajor.replace(kmajor.find("param W : f32[512, 384]"), 23, "param W : f32[384, 512]");
  kmajor.replace(kmajor.find("gemm(x, W)"), 10, "gemm(x, W.T)");
  auto k = dsl::dsl_compile(SourceFile{"k.ucut", kmajor});
  ASSERT_TRUE(k.program.has_value()) << diag_render_all(SourceFile{"k.ucut", kmajor}, k.diagnostics);
  auto kl = codegen_emit_library(*k.program, {"k.ucut", std::string(64, '0')});
  ASSERT_TRUE(kl.ok()) << kl.error().render();
  EXPECT_NE(kl->source.find("ucut_f32x3w::MainloopRs<cute::GMMA::Major::K, cute::GMMA::Major::K,"), std::string::npos);
  EXPECT_NE(kl->source.find("fusion::Sm90ColBroadcast<0, TileShape, float, float, Stride<_1, _0, int64_t>>;  // vr_"),
            std::string::npos);
  EXPECT_NE(kl->source.find("fusion::Sm90ColReduction<cutlass::plus"), std::string::npos);
  EXPECT_NE(kl->source.find("fusion::Sm90RowReduction<cutlass::maximum_with_nan_propagation"), std::string::npos);
  EXPECT_EQ(count(kl->source, "cutlass::layout::ColumnMajor"), 1u);  // LayoutB (W.T given as [N, K]) only
}

// The sm80 epilogue pass's reductions: the row sum adds warp-aggregated fp64 partials (N % 32 == 0)
// converted at the end, the column max stays a float atomic into an identity-filled output.
TEST(Library, GoldenF32x3Reductions) {
  const char* text =
      "ucut 1\nname f32x3_reductions\nin x : f32[256, 512]\nparam W : f32[512, 512] = \"fc.weight\"\n"
      "out y : f32[256, 512]\nout s : f32[256]\nout c : f32[512]\n"
      "stage y = gemm(x, W.T) {\n  precision f32x3\n  epilogue {\n    let t = softplus(acc)\n    y = t\n"
      "    s = rowsum(t)\n    c = colmax(t)\n  }\n}\n";
  auto r = dsl::dsl_compile(SourceFile{"f32x3_reductions.ucut", text});
  ASSERT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"f32x3_reductions.ucut", text}, r.diagnostics);
  check_golden(*r.program);
  auto lib = codegen_emit_library(*r.program, {"f32x3_reductions.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok());
  EXPECT_NE(lib->source.find("__shfl_xor_sync"), std::string::npos);
  EXPECT_NE(lib->source.find("atomicAdd(&P.part0[l * M + m], v)"), std::string::npos);
  EXPECT_NE(lib->source.find("to_float<<<"), std::string::npos);
  EXPECT_NE(lib->source.find("ucut_fn::atomic_reduce_max(&P.red1[l * N + n]"), std::string::npos);
  EXPECT_NE(lib->source.find("kRedBytes = 2048"), std::string::npos);  // 256 doubles
}

TEST(Library, GoldenF16ResidualRowmax) {
  dsl::GemmKnobs k;
  k.schedule = dsl::Schedule::pingpong;
  k.tile = dsl::TileShape{64, 128, 64};
  check_golden(sample_f16_residual_rowmax(512, 256, 128, k));
}

TEST(Library, HasTheAbiAndHeader) {
  auto lib = codegen_emit_library(sample_bf16_bias_gelu(256, 256, 256, {}), {"x.ucut", "abc"});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  const std::string& s = lib->source;
  EXPECT_EQ(s.rfind("// generated by ucutlass from x.ucut; do not edit\n", 0), 0u);
  for (const char* sym : {"ucut_abi_version", "ucut_describe", "ucut_last_error", "ucut_workspace_size", "ucut_run"})
    EXPECT_NE(s.find(std::string("UCUT_EXPORT ") + (std::string(sym) == "ucut_describe" || std::string(sym) == "ucut_last_error" ? "const char* " : "int ") + sym), std::string::npos) << sym;
  EXPECT_NE(s.find("\\\"program_hash\\\":\\\"abc\\\""), std::string::npos);
  EXPECT_NE(s.find("Sm90RowBroadcast"), std::string::npos);  // b[col] is CUTLASS's row broadcast
  EXPECT_NE(s.find("ucut_fn_gelu"), std::string::npos);
  ASSERT_EQ(lib->config_names.size(), 1u);
}

// The stream-K scheduler's barrier flags must be zero at every launch: the cached launcher re-runs
// initialize_workspace on calls after the first (a second launch otherwise waits forever).
TEST(Library, StreamKClearsItsWorkspaceOnEveryCall) {
  dsl::GemmKnobs k;
  k.scheduler = dsl::TileScheduler::stream_k;
  auto lib = codegen_emit_library(sample_bf16_bias_gelu(1024, 1024, 8192, k), {"x.ucut", "abc"});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  const std::string& s = lib->source;
  EXPECT_NE(s.find("StreamKScheduler"), std::string::npos);
  auto again = s.find("Stream-K barrier flags back to zero before every launch.");
  ASSERT_NE(again, std::string::npos);
  EXPECT_NE(s.find("GemmKernel::initialize_workspace(c->args, a.workspace, stream)", again), std::string::npos);
  dsl::GemmKnobs p;
  p.scheduler = dsl::TileScheduler::persistent;
  auto plain = codegen_emit_library(sample_bf16_bias_gelu(1024, 1024, 8192, p), {"x.ucut", "abc"});
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->source.find("initialize_workspace"), std::string::npos);
}

// `math auto` on a bf16 stage with a bf16 output uses the approximate forms (functions that have
// one, and division); `math precise` and an fp32 output keep the libm forms.
TEST(Library, MathKnobPicksTheFunctionForms) {
  auto emit = [](const std::string& out_dtype, const std::string& math) {
    std::string text = "ucut 1\nin x : bf16[256, 256]\nparam W : bf16[256, 256] = \"w\"\nout y : " + out_dtype +
                       "[256, 256]\nstage y = gemm(x, W.T) {\n  math " + math +
                       "\n  epilogue { y = gelu_tanh(acc) / (1 + silu(acc)) + gelu(acc) }\n}\n";
    auto r = dsl::dsl_compile({"m.ucut", text});
    EXPECT_TRUE(r.program.has_value()) << text;
    if (!r.program) return std::string();
    auto lib = codegen_emit_library(*r.program, {"m.ucut", "h"});
    EXPECT_TRUE(lib.ok()) << lib.error().render();
    if (!lib.ok()) return std::string();
    // Only the stage's functor body, not the shared function header.
    size_t at = lib->source.find("struct EpiStore<");
    return lib->source.substr(at, lib->source.find("};", at) - at);
  };
  std::string fast = emit("bf16", "auto");
  EXPECT_NE(fast.find("ucut_fast_gelu_tanh("), std::string::npos) << fast;
  EXPECT_NE(fast.find("ucut_fast_silu("), std::string::npos) << fast;
  EXPECT_NE(fast.find("__fdividef("), std::string::npos) << fast;
  EXPECT_NE(fast.find("ucut_fn_gelu("), std::string::npos) << fast;  // erf: no fast form
  for (const auto& precise : {emit("bf16", "precise"), emit("f32", "auto")}) {
    EXPECT_EQ(precise.find("ucut_fast_"), std::string::npos) << precise;
    EXPECT_EQ(precise.find("__fdividef"), std::string::npos) << precise;
    EXPECT_NE(precise.find("ucut_fn_gelu_tanh("), std::string::npos) << precise;
    EXPECT_NE(precise.find(" / "), std::string::npos) << precise;
  }
}

// A program with both GEMM and SIMT stages also comes as units: the GEMM's stored kernel unit
// ("ucut_k<hex>": its device code and host set-up over runtime GemmArgs, holding nothing of this
// program: no shape, name, hash or stage index), "simt" (the other stages, nothing that differs
// between candidates of the program) and "abi", which binds the GEMM's shapes and tensors, declares
// the SIMT stages' functions and calls them. The whole .cu holds the same blocks. A GEMM-only
// program is its stored units and the ABI; a SIMT-only program is one unit.
TEST(Library, ProgramsMixingGemmAndSimtStagesComeAsUnits) {
  const char* text =
      "ucut 1\nname scores\nin q : bf16[512, 128]\nin k : bf16[512, 128]\ntmp s : f32[512, 512]\n"
      "tmp p : f32[512, 512]\nout o : f32[512, 512]\nstage s = gemm(q, k.T) { epilogue { s = acc * 0.125 } }\n"
      "stage p = rowwise softmax(s)\nstage o = elementwise { body { o = p * 2 } }\n";
  auto r = dsl::dsl_compile(SourceFile{"scores.ucut", text});
  ASSERT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"scores.ucut", text}, r.diagnostics);
  auto lib = codegen_emit_library(*r.program, {"scores.ucut", "hash-one"});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  ASSERT_EQ(lib->units.size(), 3u);
  const std::string& unit_name = lib->units[0].name;
  EXPECT_EQ(unit_name.rfind("ucut_k", 0), 0u) << unit_name;
  EXPECT_EQ(unit_name.size(), 6u + 16u);
  EXPECT_TRUE(lib->units[0].stored);
  EXPECT_EQ(lib->units[1].name, "simt");
  EXPECT_EQ(lib->units[2].name, "abi");
  EXPECT_FALSE(lib->units[1].stored || lib->units[2].stored);
  EXPECT_TRUE(lib->units[2].host_only) << "the ABI unit holds no kernel: it compiles as C++";
  EXPECT_FALSE(lib->units[0].host_only || lib->units[1].host_only);
  const std::string &gemm = lib->units[0].source, &simt = lib->units[1].source, &abi = lib->units[2].source;
  EXPECT_NE(gemm.find("#include \"cutlass/"), std::string::npos);
  EXPECT_NE(gemm.find("extern \"C\" int " + unit_name + "_run(const ucut_rt::GemmArgs* a, cudaStream_t stream)"),
            std::string::npos);
  EXPECT_NE(gemm.find("extern \"C\" size_t " + unit_name + "_workspace(const ucut_rt::GemmArgs* a)"), std::string::npos);
  for (const char* absent : {"ucut_s0", "ucut_s1", "ucut_stage_run", "512", "hash-one", "scores", "UCUT_EXPORT int"})
    EXPECT_EQ(gemm.find(absent), std::string::npos) << absent;
  EXPECT_NE(gemm.find("0.125"), std::string::npos) << "an epilogue constant is device code: it stays in the unit";
  for (const char* f : {"ucut_s1_", "ucut_s2_", "size_t ucut_stage_workspace_1() {", "int ucut_stage_run_2("})
    EXPECT_NE(simt.find(f), std::string::npos) << f;
  EXPECT_EQ(simt.find("cutlass/"), std::string::npos);  // the SIMT unit does not parse CUTLASS
  EXPECT_EQ(simt.find("ucut_s0"), std::string::npos);
  for (const auto* u : {&simt}) {
    EXPECT_EQ(u->find("hash-one"), std::string::npos);
    EXPECT_EQ(u->find("scores"), std::string::npos);
    EXPECT_EQ(u->find("UCUT_EXPORT int"), std::string::npos);
  }
  // every stage block (the SIMT unit's, and the GEMM's binding in the ABI unit) and the stored unit
  // are also in the whole library
  for (const auto* u : {&simt, &abi})
    for (size_t at = u->find("// ==== stage "); at != std::string::npos; at = u->find("// ==== stage ", at + 1)) {
      const size_t end = std::min(u->find("// ==== stage ", at + 1), u->find("// ==== workspace plan", at + 1));
      EXPECT_NE(lib->source.find(u->substr(at, end == std::string::npos ? std::string::npos : end - at)),
                std::string::npos);
    }
  EXPECT_NE(lib->source.find(gemm.substr(gemm.find("// ucutlass stored kernel unit"))), std::string::npos);
  for (const char* f : {"namespace ucut_s0", "int ucut_stage_run_0(const ucut_rt::StageArgs& a) { return",
                        "g.m = 512; g.n = 512; g.k = 128; g.l = 1;", "int ucut_stage_run_1(const ucut_rt::StageArgs& a);\n",
                        "size_t ucut_stage_workspace_2();\n", "case 1: return ucut_stage_run_1(a);",
                        "UCUT_EXPORT int ucut_run(", "hash-one"})
    EXPECT_NE(abi.find(f), std::string::npos) << f;
  EXPECT_NE(abi.find("extern \"C\" int " + unit_name + "_run("), std::string::npos);
  EXPECT_EQ(abi.find("cutlass/"), std::string::npos) << "the ABI unit does not parse CUTLASS";
  // another candidate of the program: the same stage units, another ABI unit
  auto again = codegen_emit_library(*r.program, {"other.ucut", "hash-two"});
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->units.size(), 3u);
  EXPECT_EQ(again->units[0].source, gemm);
  EXPECT_EQ(again->units[1].source, simt);
  EXPECT_NE(again->units[2].source, abi);
  // GEMMs only: the stored unit and the ABI
  auto one = codegen_emit_library(sample_bf16_bias_gelu(256, 256, 256, {}), {"x.ucut", "abc"});
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->units.size(), 2u);
  EXPECT_TRUE(one->units[0].stored);
  EXPECT_EQ(one->units[1].name, "abi");
  auto simt_only = dsl::dsl_compile(SourceFile{"s.ucut", "ucut 1\nin x : f32[64, 64]\ntmp t : f32[64, 64]\n"
                                                         "out y : f32[64, 64]\nstage t = rowwise softmax(x)\n"
                                                         "stage y = elementwise { body { y = t + 1 } }\n"});
  ASSERT_TRUE(simt_only.program.has_value());
  auto two = codegen_emit_library(*simt_only.program, {"s.ucut", "abc"});
  ASSERT_TRUE(two.ok());
  EXPECT_TRUE(two->units.empty());
}

// A view is no ABI tensor and takes no workspace: the library points it at its tensor plus the
// offset in bytes (a view of a tmp, 8 floats in), and ucut_describe does not list it.
TEST(Library, AViewIsItsTensorsPointerPlusTheOffset) {
  const char* text =
      "ucut 1\nname views\nin x : f32[4, 24]\ntmp t : f32[4, 24]\nout y : f32[4, 8]\n"
      "view k : f32[4, 8] = t strides [24, 1] offset 8\n"
      "stage t = elementwise { body { t = x * 2 } }\nstage y = elementwise { body { y = k + 1 } }\n";
  auto r = dsl::dsl_compile(SourceFile{"views.ucut", text});
  ASSERT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"views.ucut", text}, r.diagnostics);
  auto lib = codegen_emit_library(*r.program, {"views.ucut", "h"});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  const std::string& s = lib->source;
  EXPECT_NE(s.find("constexpr int kAbiIndex[] = {0, -1, 1, -1, };"), std::string::npos);
  EXPECT_NE(s.find("constexpr size_t kTmpBytes[] = {0u, 384u, 0u, 0u, };"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kViewBase[] = {-1, -1, -1, 1, };"), std::string::npos);
  EXPECT_NE(s.find("constexpr size_t kViewOffsetBytes[] = {0u, 0u, 0u, 32u, };"), std::string::npos);
  EXPECT_NE(s.find("constexpr int kNumAbiTensors = 2;"), std::string::npos);
  EXPECT_EQ(s.find("\\\"name\\\":\\\"k\\\""), std::string::npos);  // not described
  EXPECT_NE(s.find("\\\"name\\\":\\\"y\\\""), std::string::npos);
}

TEST(Library, RejectsAStageTheRulesReject) {
  dsl::GemmKnobs k;
  k.tile = dsl::TileShape{256, 256, 64};  // 256 accumulators per thread
  auto lib = codegen_emit_library(sample_bf16_bias_gelu(256, 256, 256, k), {"x.ucut", "abc"});
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.error().message.find("accumulator_registers"), std::string::npos) << lib.error().message;
}

TEST(Library, RandomSamplesAllEmit) {
  auto progs = sample_random_programs(60, 7);
  EXPECT_EQ(progs.size(), 60u);
  for (const auto& p : progs) {
    auto lib = codegen_emit_library(p, {p.name, "h"});
    EXPECT_TRUE(lib.ok()) << p.name << ": " << (lib.ok() ? "" : lib.error().render());
  }
}

}  // namespace
}  // namespace ucut::codegen

namespace ucut::codegen {
namespace {

// A torch stage is the host's: the library calls it back by stage index, ucut_describe() says
// where its tensors are (ABI positions, tmp offsets in the workspace laid out as the plan does)
// and what to run, with -inf as the string JSON can carry.
TEST(Library, TorchStageCallsTheHostAndDescribesItself) {
  const std::string text =
      "ucut 1\nin x : f32[4, 8]\nparam c : f32[4, 8] = \"mask\"\ntmp s : f32[4, 8]\ntmp m : f32[4, 8]\n"
      "out y : f32[4, 8]\n"
      "stage s = elementwise {\n  body { s = x * 2 }\n}\n"
      "stage m = torch {\n  let k = eq(c, 0)\n  m = masked_fill(s, k, -inf)\n}\n"
      "stage y = elementwise {\n  body { y = exp(m) }\n}\n";
  auto r = dsl::dsl_compile(SourceFile{"t.ucut", text});
  ASSERT_TRUE(r.program) << diag_render_all(SourceFile{"t.ucut", text}, r.diagnostics);
  auto lib = codegen_emit_library(*r.program, {"t.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  EXPECT_NE(lib->source.find("return ucut_rt::host_torch_stage(1);"), std::string::npos);
  EXPECT_NE(lib->source.find("UCUT_EXPORT void ucut_set_host("), std::string::npos);
  const nlohmann::ordered_json t = codegen_torch_describe(*r.program);
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0]["stage"], 1);
  EXPECT_EQ(t[0]["tensors"]["c"], (nlohmann::ordered_json{{"arg", 1}}));
  EXPECT_EQ(t[0]["tensors"]["s"]["offset"], 0);      // the first tmp
  EXPECT_EQ(t[0]["tensors"]["m"]["offset"], 256);    // 128 bytes, rounded up to 256
  EXPECT_EQ(t[0]["tensors"]["m"]["shape"], (nlohmann::ordered_json{4, 8}));
  EXPECT_EQ(t[0]["ops"][1]["inputs"][2], (nlohmann::ordered_json{{"scalar", "-inf"}}));
  EXPECT_EQ(t[0]["ops"][0]["local"], (nlohmann::ordered_json{true}));
  EXPECT_EQ(t[0]["ops"][1]["outputs"], (nlohmann::ordered_json{"m"}));
  // the description the library returns carries the same table
  EXPECT_NE(lib->source.find("torch_stages"), std::string::npos);
}

}  // namespace
}  // namespace ucut::codegen

namespace ucut::codegen {
namespace {

// The stored unit of a one-GEMM program's stage 0, and the ABI unit that binds it.
std::pair<LibraryUnit, LibraryUnit> gemm_units(const std::string& epilogue, const std::string& extra_decls = "") {
  const std::string text = "ucut 1\nin x : bf16[256, 512]\nparam W : bf16[128, 512] = \"w\"\n" + extra_decls +
                           "out y : bf16[256, 128]\nstage y = gemm(x, W.T) {\n  precision bf16\n  tile 128x128x64\n"
                           "  epilogue { " + epilogue + " }\n}\n";
  auto r = dsl::dsl_compile(SourceFile{"e.ucut", text});
  EXPECT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"e.ucut", text}, r.diagnostics);
  if (!r.program) return {};
  auto lib = codegen_emit_library(*r.program, {"e.ucut", "h"});
  EXPECT_TRUE(lib.ok()) << lib.error().render();
  if (!lib.ok() || lib->units.size() != 2) return {};
  return {lib->units[0], lib->units[1]};
}

// A stored unit's text does not depend on the program's names, nor on whether a value read once
// is a `let`: the lowering's `let t = acc + b[col]; y = gelu(t)` is the zoo's `y = gelu(acc + b[col])`.
TEST(Library, StoredUnitsAreOneTextPerEpilogueForm) {
  const std::string bias = "param b : f32[128] = \"b\"\n", other = "param bias_vec : f32[128] = \"bb\"\n";
  const auto [direct, abi1] = gemm_units("y = gelu(acc + b[col])", bias);
  const auto [with_let, abi2] = gemm_units("let t0 = acc + bias_vec[col]\n    y = gelu(t0)", other);
  ASSERT_FALSE(direct.name.empty());
  EXPECT_EQ(direct.name, with_let.name);
  EXPECT_EQ(direct.source, with_let.source);
  EXPECT_NE(gemm_units("y = relu(acc + b[col])", bias).first.name, direct.name) << "another function: another unit";
  // A let read twice stays a let (its value is computed once), so it is another form.
  EXPECT_NE(gemm_units("let t = acc + b[col]\n    y = t * t", bias).first.name,
            gemm_units("y = (acc + b[col]) * (acc + b[col])", bias).first.name);
}

// The roundings to a 16-bit type come in their own block, only into code that calls them: a unit
// without them keeps the text (and the store key) it had before they existed.
TEST(Library, RoundingBlockOnlyWhereCalled) {
  const std::string bias = "param b : f32[128] = \"b\"\n";
  const auto [plain, abi1] = gemm_units("y = gelu(acc + b[col])", bias);
  const auto [rounded, abi2] = gemm_units("y = gelu(round_bf16(acc) + b[col])", bias);
  EXPECT_EQ(plain.source.find("UCUT_ROUNDING_DEFINED"), std::string::npos);
  EXPECT_EQ(plain.source.find("ucut_fn_round_bf16"), std::string::npos);
  EXPECT_NE(rounded.source.find("UCUT_ROUNDING_DEFINED"), std::string::npos);
  EXPECT_NE(rounded.source.find("ucut_fn_round_bf16(acc)"), std::string::npos);
  EXPECT_NE(plain.name, rounded.name);
}

// Inlining a let can change the order the leaves are read in (here the scalar before the bias):
// the binding follows the unit's order, by name.
TEST(Library, TheBindingFollowsTheCanonicalLeafOrder) {
  const auto [unit, abi] =
      gemm_units("let a = acc + b[col]\n    y = alpha * a", "param b : f32[128] = \"b\"\nscalar alpha = 0.5\n");
  ASSERT_FALSE(unit.name.empty());
  // acc is leaf 0; alpha (p0) is read first, then b (t0)
  EXPECT_NE(unit.source.find("static_cast<float>(a.scalar[1])"), std::string::npos) << unit.source;
  EXPECT_NE(unit.source.find("a.vec[2]"), std::string::npos);
  EXPECT_NE(abi.source.find("g.scalar[1] = a.scalars[0];  // alpha"), std::string::npos) << abi.source;
  EXPECT_NE(abi.source.find("g.vec[2] = a.tensors[2];  // b"), std::string::npos) << abi.source;
}

// The sm80-API GEMM (f32x3 here) is a stored unit too: one text for every shape and split-K count
// of its configuration, the epilogue pass (device code with the shapes constant) in the SIMT unit
// with the binding, and `out = acc` into f32 a host-only binding in the ABI unit.
TEST(Library, Sm80GemmIsAStoredUnitAtEveryShape) {
  auto units_of = [](int64_t m, int64_t n, int64_t k, const std::string& epi, int split) {
    const std::string text = "ucut 1\nin x : f32[" + std::to_string(m) + ", " + std::to_string(k) +
                             "]\nparam w : f32[" + std::to_string(n) + ", " + std::to_string(k) +
                             "] = \"w\"\nparam b : f32[" + std::to_string(n) + "] = \"b\"\nout y : f32[" +
                             std::to_string(m) + ", " + std::to_string(n) +
                             "]\nstage y = gemm(x, w.T) {\n  precision f32x3\n  tile 128x128x32\n  stages 3\n"
                             "  split_k " + std::to_string(split) + "\n  epilogue { " + epi + " }\n}\n";
    auto r = dsl::dsl_compile(SourceFile{"f.ucut", text});
    EXPECT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"f.ucut", text}, r.diagnostics);
    auto lib = codegen_emit_library(*r.program, {"f.ucut", "h"});
    EXPECT_TRUE(lib.ok()) << lib.error().render();
    return lib->units;
  };
  const auto a = units_of(1024, 512, 256, "y = acc + b[col]", 1);
  const auto b = units_of(256, 2048, 1024, "y = acc + b[col]", 4);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_TRUE(a[0].stored);
  EXPECT_NE(a[0].source.find("CUTLASS 2.x sm80-API GEMM, emitter sm80-unit-1"), std::string::npos);
  EXPECT_EQ(a[0].name, b[0].name) << "shapes and the split-K count are runtime arguments";
  EXPECT_EQ(a[0].source, b[0].source);
  for (const char* absent : {"1024", "512", "ucut_s0", "epilogue<<<"}) EXPECT_EQ(a[0].source.find(absent), std::string::npos) << absent;
  EXPECT_EQ(a[1].name, "simt");
  EXPECT_NE(a[1].source.find("epilogue<<<"), std::string::npos) << "the epilogue pass compiles with the SIMT stages";
  EXPECT_NE(a[1].source.find("constexpr long long M = 1024, N = 512, K = 256, L = 1;"), std::string::npos);
  EXPECT_EQ(a[1].source.find("cutlass/"), std::string::npos) << "the binding does not parse CUTLASS";
  EXPECT_NE(a[1].source.find(a[0].name + "_run(&g, a.stream)"), std::string::npos);
  EXPECT_NE(b[1].source.find("g.splits = 4;"), std::string::npos);
  EXPECT_EQ(a[2].source.find("epilogue<<<"), std::string::npos);
  // `out = acc` into f32: no epilogue pass; the binding is host code in the ABI unit
  const auto d = units_of(1024, 512, 256, "y = acc", 1);
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0].name, a[0].name) << "the epilogue is not in an sm80 unit: one unit serves every epilogue";
  EXPECT_EQ(d[1].name, "abi");
  EXPECT_NE(d[1].source.find("g.d = a.tensors["), std::string::npos);
}

// The parts A3 [2, 24, 120] and B3 [2, 36, 120] of fill_transposed_operands's a.T @ b (three parts
// of K = 40 side by side) summed over 3K are within 2^bits of each |a| |b| of the exact product;
// `stored` is what a part's value becomes when its tensor stores it.
template <class Stored>
void expect_parts_sum_to_the_product(const dsl::InterpTensors& t, const std::vector<double>& a3,
                                     const std::vector<double>& b3, int bits, Stored stored) {
  ASSERT_EQ(a3.size(), 2u * 24 * 120);
  ASSERT_EQ(b3.size(), 2u * 36 * 120);
  for (int64_t l = 0; l < 2; ++l)
    for (int64_t m = 0; m < 24; ++m)
      for (int64_t n = 0; n < 36; ++n) {
        double parts = 0, exact = 0, mag = 0;
        for (int64_t k = 0; k < 120; ++k)
          parts += stored(a3[static_cast<size_t>((l * 24 + m) * 120 + k)]) *
                   stored(b3[static_cast<size_t>((l * 36 + n) * 120 + k)]);
        for (int64_t k = 0; k < 40; ++k) {
          const double av = t.at("a")[static_cast<size_t>((l * 40 + k) * 24 + m)];
          const double bv = t.at("b")[static_cast<size_t>((l * 40 + k) * 36 + n)];
          exact += av * bv;
          mag += std::fabs(av * bv);
        }
        ASSERT_LE(std::fabs(parts - exact), std::ldexp(mag, bits)) << l << "," << m << "," << n;
      }
}

// f32x3k: one TF32 GEMM over K three times. The split stages write A3 = [Ab | Ab | As] and
// B3 = [Bb | Bs | Bb] (each [.., rows, 3K], K-major whatever the operand's layout), and the
// GEMM's sum over 3K is Ab Bb + Ab Bs + As Bb = A B - As Bs: the interpreter runs the splits and
// the test sums the parts in double, within 2^-21 of each |a| |b| of exact A B (a wrong pairing of
// the parts misses by ~2^-11, a wrong layout by far more). The epilogue stays the stage's own.
TEST(Library, F32x3kIsOneTf32GemmOverTheInterleavedParts) {
  const char* text =
      "ucut 1\nin a : f32[2, 40, 24]\nin b : f32[2, 40, 36]\nin r : f32[2, 24, 36]\nout y : f32[2, 24, 36]\n"
      "stage y = gemm(a.T, b) {\n  precision f32x3k\n  epilogue { y = acc + r }\n}\n";
  auto e = expand("k.ucut", text);
  ASSERT_TRUE(e);
  const dsl::Program* x = &e->expanded;
  ASSERT_EQ(x->stages.size(), 3u);
  for (int i = 0; i < 2; ++i) EXPECT_TRUE(std::holds_alternative<dsl::ElementwiseStage>(x->stages[i].body)) << i;
  const auto& g = std::get<dsl::GemmStage>(x->stages[2].body);
  EXPECT_EQ(g.knobs.precision, dsl::Precision::tf32);
  EXPECT_EQ(g.k, 120);
  EXPECT_FALSE(g.a.transposed);
  EXPECT_TRUE(g.b.transposed);
  EXPECT_EQ(x->find_tensor(g.a.tensor)->shape, (std::vector<int64_t>{2, 24, 120}));
  EXPECT_EQ(x->find_tensor(g.b.tensor)->shape, (std::vector<int64_t>{2, 36, 120}));
  ASSERT_EQ(g.epilogue.stmts.size(), 1u);  // the stage's own epilogue, the residual read in it
  dsl::InterpTensors t;
  fill_transposed_operands(t);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(dsl::interp_stage(*x, i, t, {}).ok()) << i;
  expect_parts_sum_to_the_product(t, t.at(g.a.tensor), t.at(g.b.tensor), -21, [](double v) { return v; });
  auto lib = codegen_emit_library(e->program, {"k.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  ASSERT_EQ(lib->config_names.size(), 3u);
  EXPECT_EQ(lib->config_names[2].rfind("gemm_tf32_", 0), 0u) << lib->config_names[2];
  // one operand in two f32x3k stages is split once per role and layout
  const char* twice =
      "ucut 1\nin x : f32[64, 32]\nparam W1 : f32[48, 32] = \"w1\"\nparam W2 : f32[48, 32] = \"w2\"\n"
      "out y : f32[64, 48]\nout z : f32[64, 48]\n"
      "stage y = gemm(x, W1.T) { precision f32x3k }\nstage z = gemm(x, W2.T) { precision f32x3k }\n";
  auto e2 = expand("k2.ucut", twice);
  ASSERT_TRUE(e2);
  ASSERT_EQ(e2->expanded.stages.size(), 5u);  // x's, W1's, GEMM, W2's, GEMM
  EXPECT_EQ(std::get<dsl::GemmStage>(e2->expanded.stages[2].body).a.tensor,
            std::get<dsl::GemmStage>(e2->expanded.stages[4].body).a.tensor);
}

// x rounded to bf16, nearest even (cvt.rn.bf16.f32; finite x)
float round_bf16(float x) {
  uint32_t u;
  std::memcpy(&u, &x, 4);
  u = (u + 0x7FFFu + ((u >> 16) & 1u)) & 0xFFFF0000u;
  float r;
  std::memcpy(&r, &u, 4);
  return r;
}

// bf16x3: f32x3k's structure with bf16 parts. The split stages write A3 = [Ah | Ah | Al] and
// B3 = [Bh | Bl | Bh] (h = round_bf16(x), l = x - h, which the bf16 store rounds), and one bf16 GEMM
// over 3K sums Ah Bh + Ah Bl + Al Bh, within ~2^-16 of each |a| |b| of exact A B (a wrong pairing
// misses by ~2^-9). Its main loop is the builder's with CUTLASS's FP8 dispatch policy, promoting
// the tensor-core sums into fp32 every 128 of K (dsl::kBf16x3PromoteK).
TEST(Library, Bf16x3IsOnePromotedBf16GemmOverTheInterleavedParts) {
  const char* text =
      "ucut 1\nin a : f32[2, 40, 24]\nin b : f32[2, 40, 36]\nin r : f32[2, 24, 36]\nout y : f32[2, 24, 36]\n"
      "stage y = gemm(a.T, b) {\n  precision bf16x3\n  epilogue { y = acc + r }\n}\n";
  auto e = expand("x.ucut", text);
  ASSERT_TRUE(e);
  const dsl::Program* x = &e->expanded;
  ASSERT_EQ(x->stages.size(), 3u);
  const auto& g = std::get<dsl::GemmStage>(x->stages[2].body);
  EXPECT_EQ(g.knobs.precision, dsl::Precision::bf16);
  EXPECT_EQ(g.promote_k, dsl::kBf16x3PromoteK);
  EXPECT_EQ(g.k, 120);
  EXPECT_EQ(x->find_tensor(g.a.tensor)->dtype, dsl::DType::bf16);
  EXPECT_EQ(x->find_tensor(g.b.tensor)->dtype, dsl::DType::bf16);
  EXPECT_EQ(x->find_tensor(g.a.tensor)->shape, (std::vector<int64_t>{2, 24, 120}));
  dsl::InterpTensors t;
  fill_transposed_operands(t);
  for (int i = 0; i < 2; ++i) ASSERT_TRUE(dsl::interp_stage(*x, i, t, {}).ok()) << i;
  const auto &a3 = t.at(g.a.tensor);
  // the interpreter does not round stores to the tensor's dtype: the bf16 store is applied here
  expect_parts_sum_to_the_product(t, a3, t.at(g.b.tensor), -15,
                                  [](double v) { return static_cast<double>(round_bf16(static_cast<float>(v))); });
  for (int64_t k = 0; k < 40; ++k) {  // A3's row 0: [h | h | l] of a's column 0
    const float av = static_cast<float>(t.at("a")[static_cast<size_t>(k * 24)]);
    EXPECT_EQ(a3[static_cast<size_t>(k)], round_bf16(av)) << k;
    EXPECT_EQ(a3[static_cast<size_t>(40 + k)], round_bf16(av)) << k;
    EXPECT_EQ(a3[static_cast<size_t>(80 + k)], static_cast<double>(av) - round_bf16(av)) << k;
  }
  auto lib = codegen_emit_library(e->program, {"x.ucut", std::string(64, '0')});
  ASSERT_TRUE(lib.ok()) << lib.error().render();
  ASSERT_EQ(lib->config_names.size(), 3u);
  EXPECT_EQ(lib->config_names[2].rfind("gemm_bf16_", 0), 0u) << lib->config_names[2];
  EXPECT_NE(lib->source.find("cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<BuiltMainloop::DispatchPolicy::Stages"),
            std::string::npos);
  EXPECT_NE(lib->source.find("args.mainloop.mma_promotion_interval =\n      128 / "), std::string::npos);
  // the plain bf16 GEMM does not promote
  auto plain = dsl::dsl_compile(SourceFile{"p.ucut", "ucut 1\nin a : bf16[64, 32]\nin b : bf16[48, 32]\n"
                                                     "out y : f32[64, 48]\nstage y = gemm(a, b.T)\n"});
  ASSERT_TRUE(plain.program);
  auto plib = codegen_emit_library(*plain.program, {"p.ucut", std::string(64, '0')});
  ASSERT_TRUE(plib.ok()) << plib.error().render();
  EXPECT_EQ(plib->source.find("mma_promotion_interval"), std::string::npos);
}

// The golden of a bf16x3 Linear-shaped x @ W with W [K, N] (the permuting split of W, the FP8
// policy's promoted main loop, a bias and a ReLU); the nvcc test compiles it.
TEST(Library, GoldenBf16x3) {
  auto r = dsl::dsl_compile(SourceFile{"bf16x3_kn_relu.ucut",
                                       "ucut 1\nname bf16x3_kn_relu\nin x : f32[512, 1024]\nin w : f32[1024, 768]\n"
                                       "in v : f32[768]\nout y : f32[512, 768]\nstage y = gemm(x, w) {\n"
                                       "  precision bf16x3\n  tile 128x128x64\n  cluster 1x1\n  schedule cooperative\n"
                                       "  scheduler persistent\n  epilogue { y = relu(acc + v[col]) }\n}\n"});
  ASSERT_TRUE(r.program);
  check_golden(*r.program);
}

}  // namespace
}  // namespace ucut::codegen
