// The GEMM rules and resolver: every named predicate fires on a program that breaks it (with the
// knob it points at) and stays quiet on the measured-good configurations; `auto` resolves to a
// complete legal configuration.
#include "dsl/gemm_rules.h"

#include <gtest/gtest.h>

namespace ucut::dsl {
namespace {

Tensor t(std::string name, TensorRole role, DType dt, std::vector<int64_t> shape) {
  Tensor x;
  x.name = std::move(name);
  x.role = role;
  x.dtype = dt;
  x.shape = std::move(shape);
  return x;
}

// y = x @ W.T with x [m,k], W [n,k] of dtype dt.
struct Fixture {
  Program p;
  GemmStage s;
  Fixture(DType dt, int64_t m, int64_t n, int64_t k, DType out = DType::f32, bool bt = true) {
    p.tensors = {t("x", TensorRole::in, dt, {m, k}),
                 t("W", TensorRole::param, dt, bt ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n}),
                 t("y", TensorRole::out, out, {m, n})};
    s.a.tensor = "x";
    s.b.tensor = "W";
    s.b.transposed = bt;
    s.m = m;
    s.n = n;
    s.k = k;
    EpilogueStmt st;
    st.kind = EpilogueStmt::Kind::store;
    st.name = "y";
    st.value = std::make_shared<Expr>();
    s.epilogue.stmts = {st};
  }
  std::vector<RuleViolation> check() { return gemm_rules_check(p, s, p.tensors[2]); }
};

bool has(const std::vector<RuleViolation>& v, const std::string& rule, const std::string& knob) {
  for (const auto& r : v)
    if (r.rule == rule && r.knob == knob) return true;
  return false;
}

std::string all(const std::vector<RuleViolation>& v) {
  std::string s;
  for (const auto& r : v) s += r.rule + "(" + r.knob + "): " + r.message + "\n";
  return s;
}

TEST(GemmRules, MeasuredGoodConfigsPass) {
  Fixture f(DType::bf16, 4096, 4096, 4096, DType::bf16);
  f.s.knobs.precision = Precision::bf16;
  f.s.knobs.tile = TileShape{128, 256, 64};
  f.s.knobs.cluster = ClusterShape{2, 1};
  f.s.knobs.schedule = Schedule::cooperative;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  f.s.knobs.tile = TileShape{128, 128, 64};
  f.s.knobs.cluster = ClusterShape{1, 2};
  f.s.knobs.schedule = Schedule::pingpong;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  Fixture g(DType::f32, 1024, 8192, 8192);
  g.s.knobs.precision = Precision::f32x3;
  g.s.knobs.tile = TileShape{128, 128, 32};
  g.s.knobs.stages = 3;
  EXPECT_TRUE(g.check().empty()) << all(g.check());
}

TEST(GemmRules, AutoResolvesEverything) {
  Fixture f(DType::f32, 1024, 2048, 512);
  GemmKnobs k = gemm_resolve_auto(f.p, f.s, f.p.tensors[2]);
  EXPECT_EQ(k.precision, Precision::f32x3);  // fp32-faithful by default
  EXPECT_TRUE(k.tile && k.cluster && k.stages && k.split_k && k.swizzle && k.align);
  EXPECT_NE(k.schedule, Schedule::auto_);
  EXPECT_NE(k.scheduler, TileScheduler::auto_);
  EXPECT_NE(k.raster, Raster::auto_);
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  Fixture h(DType::bf16, 4096, 4096, 4096, DType::bf16);
  k = gemm_resolve_auto(h.p, h.s, h.p.tensors[2]);
  EXPECT_EQ(k.precision, Precision::bf16);
  EXPECT_EQ(k.tile->m, 128);
  EXPECT_EQ(k.tile->n, 256);
  EXPECT_EQ(k.schedule, Schedule::cooperative);
  EXPECT_GE(*k.stages, 3);
  EXPECT_TRUE(h.check().empty()) << all(h.check());
}

TEST(GemmRules, PrecisionMatchesDtype) {
  Fixture f(DType::f16, 256, 256, 256);
  f.s.knobs.precision = Precision::bf16;
  EXPECT_TRUE(has(f.check(), "precision_matches_dtype", "precision")) << all(f.check());
}

TEST(GemmRules, Tf32NeedsKMajor) {
  Fixture f(DType::f32, 256, 256, 256, DType::f32, /*bt=*/false);
  f.s.knobs.precision = Precision::tf32;
  EXPECT_TRUE(has(f.check(), "tf32_k_major", "b")) << all(f.check());
  f.s.knobs.precision = Precision::f32x3;  // any layout
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  // f32x3s: its split stages write the parts K-major (codegen/split_gemm.cpp)
  f.s.knobs.precision = Precision::f32x3s;
  EXPECT_FALSE(has(f.check(), "tf32_k_major", "b")) << all(f.check());
  // ... so TMA reads K-contiguous parts: K must be 16-byte aligned, N need not be for the operand
  Fixture g(DType::f32, 256, 256, 250, DType::f32, /*bt=*/false);
  g.s.knobs.precision = Precision::f32x3s;
  EXPECT_TRUE(has(g.check(), "tma_aligned", "a")) << all(g.check());
  EXPECT_TRUE(has(g.check(), "tma_aligned", "b")) << all(g.check());
  // f32x3k likewise: its parts are [.., rows, 3K], 3K 16-byte aligned exactly when K is
  f.s.knobs.precision = Precision::f32x3k;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  g.s.knobs.precision = Precision::f32x3k;
  EXPECT_TRUE(has(g.check(), "tma_aligned", "a")) << all(g.check());
  EXPECT_NE(all(g.check()).find("split parts"), std::string::npos) << all(g.check());
  Fixture h(DType::f32, 256, 256, 252, DType::f32, /*bt=*/false);  // K*4 = 1008 bytes, a multiple of 16
  h.s.knobs.precision = Precision::f32x3k;
  EXPECT_TRUE(h.check().empty()) << all(h.check());
}

// bf16x3: f32 data, any layout (its split stages write bf16 parts K-major), a bf16 GEMM's tiles,
// alignment and shared memory; the parts' rows of 3K bf16 are 16-byte aligned when K is a multiple
// of 8 (K = 252 is not: 1512 bytes), and bf16 data is refused (it needs f32 operands).
TEST(GemmRules, Bf16x3IsABf16GemmOverSplitF32) {
  Fixture f(DType::f32, 256, 256, 256, DType::f32, /*bt=*/false);
  f.s.knobs.precision = Precision::bf16x3;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  EXPECT_EQ(gemm_mma_dtype(Precision::bf16x3), DType::bf16);
  EXPECT_EQ(gemm_operand_dtype(Precision::bf16x3), DType::f32);
  EXPECT_TRUE(gemm_is_split(Precision::bf16x3));
  GemmKnobs k = gemm_resolve_auto(f.p, f.s, f.p.tensors[2]);
  EXPECT_EQ(k.tile->k, 64);  // one 128-byte swizzle row of bf16
  EXPECT_EQ(*k.align, 8);
  f.s.knobs.tile = TileShape{128, 128, 32};  // a bf16 wgmma tile, not a tf32 one
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  Fixture g(DType::f32, 256, 256, 252, DType::f32, /*bt=*/false);
  g.s.knobs.precision = Precision::bf16x3;
  EXPECT_TRUE(has(g.check(), "tma_aligned", "a")) << all(g.check());
  Fixture h(DType::f32, 256, 256, 248);
  h.s.knobs.precision = Precision::bf16x3;
  EXPECT_TRUE(h.check().empty()) << all(h.check());
  Fixture b(DType::bf16, 256, 256, 256, DType::bf16);
  b.s.knobs.precision = Precision::bf16x3;
  EXPECT_TRUE(has(b.check(), "precision_matches_dtype", "precision")) << all(b.check());
  // its promoting main loop holds the accumulators twice: 64 registers' worth a thread at most
  // (128 x 256 cooperative spilled), where a plain bf16 GEMM takes 128
  f.s.knobs.tile = TileShape{128, 256, 64};
  f.s.knobs.schedule = Schedule::cooperative;
  EXPECT_TRUE(has(f.check(), "accumulator_registers", "tile")) << all(f.check());
  f.s.knobs.tile = TileShape{128, 128, 64};
  f.s.knobs.schedule = Schedule::pingpong;
  EXPECT_TRUE(has(f.check(), "accumulator_registers", "tile")) << all(f.check());
  f.s.knobs.tile = TileShape{64, 128, 64};
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  Fixture p16(DType::bf16, 256, 256, 256, DType::bf16);
  p16.s.knobs.precision = Precision::bf16;
  p16.s.knobs.tile = TileShape{128, 256, 64};
  p16.s.knobs.schedule = Schedule::cooperative;
  EXPECT_TRUE(p16.check().empty()) << all(p16.check());
  p16.s.promote_k = kBf16x3PromoteK;  // bf16x3's own GEMM after the expansion
  EXPECT_TRUE(has(p16.check(), "accumulator_registers", "tile")) << all(p16.check());
}

// f32x3w: the in-kernel split's main loop (runtime/gemm_f32x3w.cuh) has its own shapes. Auto
// resolves to them, with the stages that fit beside its two small-part buffers; each rule names
// the knob that breaks it.
TEST(GemmRules, F32x3wShapes) {
  Fixture f(DType::f32, 128, 32768, 32768);
  f.s.knobs.precision = Precision::f32x3w;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  GemmKnobs k = gemm_resolve_auto(f.p, f.s, f.p.tensors[2]);
  EXPECT_EQ(k.schedule, Schedule::cooperative);
  EXPECT_EQ(k.scheduler, TileScheduler::persistent);
  EXPECT_EQ(*k.split_k, 1);
  EXPECT_EQ(k.tile->m, 128);
  EXPECT_EQ(k.tile->n, 128);
  EXPECT_EQ(k.tile->k, 32);
  // 227 KiB less the epilogue and 2 x 32 KiB of small parts: three or four 32 KiB stages, not six
  EXPECT_GE(*k.stages, 2);
  EXPECT_LE(*k.stages, 4);
  EXPECT_EQ(gemm_f32x3w_small_bytes(f.s, k), 2 * 128 * 32 * 4 + 1024);  // B's small parts (A's are in registers)
  f.s.knobs.stages = 6;
  EXPECT_TRUE(has(f.check(), "fits_smem", "stages")) << all(f.check());
  f.s.knobs.stages.reset();
  f.s.knobs.tile = TileShape{256, 128, 32};  // not its tile: that message alone, no shared-memory one
  EXPECT_TRUE(has(f.check(), "f32x3w_tile", "tile")) << all(f.check());
  EXPECT_FALSE(has(f.check(), "fits_smem", "tile")) << all(f.check());
  f.s.knobs.tile = TileShape{128, 128, 32};
  f.s.knobs.stages = 6;  // the small parts named beside the epilogue
  ASSERT_TRUE(has(f.check(), "fits_smem", "stages")) << all(f.check());
  EXPECT_NE(all(f.check()).find("f32x3w's split buffers 33792 bytes"), std::string::npos) << all(f.check());
  f.s.knobs.stages.reset();
  f.s.knobs.tile = TileShape{128, 64, 32};
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  f.s.knobs.schedule = Schedule::pingpong;
  EXPECT_TRUE(has(f.check(), "f32x3w_schedule", "schedule")) << all(f.check());
  f.s.knobs.schedule = Schedule::auto_;
  f.s.knobs.split_k = 4;
  EXPECT_TRUE(has(f.check(), "f32x3w_scheduler", "split_k")) << all(f.check());
  f.s.knobs.split_k.reset();
  f.s.knobs.scheduler = TileScheduler::stream_k;
  EXPECT_TRUE(has(f.check(), "f32x3w_scheduler", "scheduler")) << all(f.check());
  // A [K, N] weight (which TF32 wgmma cannot read from shared memory): beside a K-major A the unit
  // computes the transposed product (B read through registers, A's small parts buffered); beside a
  // transposed A the split writes B's big and small parts double-buffered K-major; plain TF32
  // still refuses it.
  Fixture g(DType::f32, 256, 256, 256, DType::f32, /*bt=*/false);
  g.s.knobs.precision = Precision::f32x3w;
  EXPECT_TRUE(g.check().empty()) << all(g.check());
  GemmKnobs kn = gemm_resolve_auto(g.p, g.s, g.p.tensors[2]);
  EXPECT_TRUE(gemm_f32x3w_swaps_ab(g.s));
  EXPECT_FALSE(gemm_f32x3w_transposes_b(g.s));
  EXPECT_EQ(gemm_f32x3w_small_bytes(g.s, kn), 2 * 128 * 32 * 4 + 1024);
  g.s.a.transposed = true;
  EXPECT_FALSE(gemm_f32x3w_swaps_ab(g.s));
  EXPECT_TRUE(gemm_f32x3w_transposes_b(g.s));
  EXPECT_EQ(gemm_f32x3w_small_bytes(g.s, kn), 2 * (2 * 128 * 32 * 4 + 1024));
  g.s.a.transposed = false;
  g.s.knobs.precision = Precision::tf32;
  EXPECT_TRUE(has(g.check(), "tf32_k_major", "b")) << all(g.check());
  // other precisions have no part buffers
  GemmKnobs t = k;
  t.precision = Precision::tf32;
  EXPECT_EQ(gemm_f32x3w_small_bytes(f.s, t), 0);
}

TEST(GemmRules, TmaAligned) {
  Fixture f(DType::bf16, 256, 256, 100);  // K*2 = 200 bytes
  EXPECT_TRUE(has(f.check(), "tma_aligned", "a")) << all(f.check());
  EXPECT_TRUE(has(f.check(), "tma_aligned", "b"));
  Fixture g(DType::bf16, 256, 252, 256, DType::bf16);  // N*2 = 504 bytes
  EXPECT_TRUE(has(g.check(), "tma_aligned", "out")) << all(g.check());
}

TEST(GemmRules, TileLegalAndRegisters) {
  Fixture f(DType::bf16, 1024, 1024, 1024);
  f.s.knobs.tile = TileShape{96, 128, 64};
  EXPECT_TRUE(has(f.check(), "tile_legal", "tile"));
  f.s.knobs.tile = TileShape{256, 256, 64};
  EXPECT_TRUE(has(f.check(), "accumulator_registers", "tile")) << all(f.check());
  f.s.knobs.tile = TileShape{128, 256, 64};
  f.s.knobs.schedule = Schedule::pingpong;
  EXPECT_TRUE(has(f.check(), "accumulator_registers", "tile"));
}

TEST(GemmRules, CooperativeNeedsTileM128) {
  Fixture f(DType::bf16, 1024, 1024, 1024);
  f.s.knobs.tile = TileShape{64, 128, 64};
  f.s.knobs.schedule = Schedule::cooperative;
  EXPECT_TRUE(has(f.check(), "schedule_compatible", "schedule")) << all(f.check());
}

TEST(GemmRules, ClusterLegal) {
  Fixture f(DType::bf16, 1024, 1024, 1024);
  f.s.knobs.cluster = ClusterShape{3, 1};
  EXPECT_TRUE(has(f.check(), "cluster_legal", "cluster"));
  f.s.knobs.cluster = ClusterShape{4, 2};
  EXPECT_TRUE(has(f.check(), "cluster_legal", "cluster"));
  Fixture g(DType::f32, 256, 256, 256);
  g.s.knobs.precision = Precision::f32x3;
  g.s.knobs.cluster = ClusterShape{2, 1};
  EXPECT_TRUE(has(g.check(), "cluster_legal", "cluster"));
}

TEST(GemmRules, FitsSmem) {
  Fixture f(DType::bf16, 1024, 1024, 1024);
  f.s.knobs.tile = TileShape{128, 256, 64};
  f.s.knobs.stages = 5;  // 5 x 48 KiB > 227 KiB
  auto v = f.check();
  EXPECT_TRUE(has(v, "fits_smem", "stages")) << all(v);
  f.s.knobs.stages = 4;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  f.s.knobs.stages = 1;
  EXPECT_TRUE(has(f.check(), "fits_smem", "stages"));
}

// f32x3s: the split's GEMMs that add a partial product read an fp32 source, whose epilogue
// leaves a 128 x 256 x 64 TF32 tile one stage (runs DE, DG: such candidates failed to generate);
// K 32 keeps two, and the same tile in plain TF32 (no source) fits.
TEST(GemmRules, F32x3sCountsItsPartialProductSource) {
  Fixture f(DType::f32, 4096, 4096, 4096);
  f.s.knobs.precision = Precision::f32x3s;
  f.s.knobs.tile = TileShape{128, 256, 64};
  auto v = f.check();
  EXPECT_TRUE(has(v, "fits_smem", "tile")) << all(v);
  f.s.knobs.tile = TileShape{128, 256, 32};
  EXPECT_TRUE(f.check().empty()) << all(f.check());
  f.s.knobs.tile = TileShape{128, 256, 64};
  f.s.knobs.precision = Precision::tf32;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
}

TEST(GemmRules, StreamKNeedsCooperative) {
  Fixture f(DType::bf16, 1024, 1024, 1024);
  f.s.knobs.tile = TileShape{64, 128, 64};
  f.s.knobs.schedule = Schedule::pingpong;
  f.s.knobs.scheduler = TileScheduler::stream_k;
  EXPECT_TRUE(has(f.check(), "stream_k_needs_cooperative", "scheduler")) << all(f.check());
  f.s.knobs.scheduler = TileScheduler::persistent;
  f.s.knobs.split_k = 2;
  EXPECT_TRUE(has(f.check(), "split_k_needs_stream_k", "split_k")) << all(f.check());
}

TEST(GemmRules, SplitKBounds) {
  Fixture f(DType::bf16, 256, 256, 128);
  f.s.knobs.split_k = 4;  // only 2 K tiles of 64
  EXPECT_TRUE(has(f.check(), "split_k_legal", "split_k")) << all(f.check());
  f.s.knobs.split_k = 2;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
}

TEST(GemmRules, AlignAndSwizzle) {
  Fixture f(DType::bf16, 256, 256, 256);
  f.s.knobs.align = 4;
  EXPECT_TRUE(has(f.check(), "align_legal", "align"));
  f.s.knobs.align = 8;
  f.s.knobs.swizzle = 3;
  EXPECT_TRUE(has(f.check(), "swizzle_legal", "swizzle"));
}

TEST(GemmRules, ReductionOutputsAreF32) {
  Fixture f(DType::bf16, 256, 256, 256, DType::bf16);
  f.p.tensors.push_back(t("m", TensorRole::out, DType::bf16, {256}));
  EpilogueStmt r;
  r.kind = EpilogueStmt::Kind::reduce;
  r.name = "m";
  r.value = std::make_shared<Expr>();
  f.s.epilogue.stmts.push_back(r);
  EXPECT_TRUE(has(f.check(), "reduction_f32", "out")) << all(f.check());
  f.p.tensors.back().dtype = DType::f32;
  EXPECT_TRUE(f.check().empty()) << all(f.check());
}

TEST(GemmRules, ConfigNamesAreCanonical) {
  Fixture f(DType::bf16, 4096, 4096, 4096, DType::bf16);
  f.s.knobs.tile = TileShape{128, 256, 64};
  f.s.knobs.cluster = ClusterShape{2, 1};
  GemmKnobs k = gemm_resolve_auto(f.p, f.s, f.p.tensors[2]);
  EXPECT_EQ(gemm_config_name(k, true), "gemm_bf16_t128x256x64_c2x1_sA_coop_persist_rm_w1_mf");
  f.s.knobs.math = MathMode::precise;
  k = gemm_resolve_auto(f.p, f.s, f.p.tensors[2]);
  EXPECT_EQ(gemm_config_name(k, true), "gemm_bf16_t128x256x64_c2x1_sA_coop_persist_rm_w1");
}

// `math auto` is fast only when the matmul is 16-bit and every output is 16-bit.
TEST(GemmRules, MathAutoIsFastOnlyForSixteenBitOutputs) {
  auto math = [](DType data, DType out) {
    Fixture f(data, 256, 256, 256, out);
    return gemm_resolve_auto(f.p, f.s, f.p.tensors[2]).math;
  };
  EXPECT_EQ(math(DType::bf16, DType::bf16), MathMode::fast);
  EXPECT_EQ(math(DType::f16, DType::f16), MathMode::fast);
  EXPECT_EQ(math(DType::f16, DType::bf16), MathMode::fast);
  EXPECT_EQ(math(DType::f16, DType::f32), MathMode::precise);  // an fp32 output keeps libm
  EXPECT_EQ(math(DType::f32, DType::f32), MathMode::precise);  // f32x3
  Fixture tf(DType::f32, 256, 256, 256, DType::f16);
  tf.s.knobs.precision = Precision::tf32;
  EXPECT_EQ(gemm_resolve_auto(tf.p, tf.s, tf.p.tensors[2]).math, MathMode::precise);
  Fixture explicit_fast(DType::f32, 256, 256, 256, DType::f32);
  explicit_fast.s.knobs.math = MathMode::fast;
  GemmKnobs k = gemm_resolve_auto(explicit_fast.p, explicit_fast.s, explicit_fast.p.tensors[2]);
  EXPECT_EQ(k.math, MathMode::fast);
  EXPECT_NE(gemm_config_name(k, true).find("_mf"), std::string::npos);
  EXPECT_TRUE(explicit_fast.check().empty()) << all(explicit_fast.check());
}

}  // namespace
}  // namespace ucut::dsl
