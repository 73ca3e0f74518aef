// Tests of the search space: enumeration counts, every valid GEMM candidate passing the GEMM
// rules, the space rules, ranking sanity on known shapes, apply and neighbours. No timings.
#include <gtest/gtest.h>

#include <cstdlib>

#include <set>

#include "dsl/dsl.h"
#include "space/space.h"
#include "space/stage_facts.h"
#include "support/scoped_env.h"

namespace ucut::space {
namespace {

dsl::Program compile(const std::string& text) {
  auto r = dsl::dsl_compile(SourceFile{"t.ucut", text});
  EXPECT_TRUE(r.program.has_value()) << diag_render_all(SourceFile{"t.ucut", text}, r.diagnostics);
  return r.program ? *r.program : dsl::Program{};
}

// y = x @ W.T for x [m, k], W [n, k] with data dtype `dt`.
dsl::Program gemm_program(int64_t m, int64_t n, int64_t k, const std::string& dt, const std::string& prec = "auto") {
  std::string s = "ucut 1\nin x : " + dt + "[" + std::to_string(m) + ", " + std::to_string(k) + "]\n" +
                  "param W : " + dt + "[" + std::to_string(n) + ", " + std::to_string(k) + "] = \"w\"\n" +
                  "out y : " + dt + "[" + std::to_string(m) + ", " + std::to_string(n) + "]\n" +
                  "stage y = gemm(x, W.T) { precision " + prec + " }\n";
  return compile(s);
}

sol::HwSpec h200() { return *sol::hw_lookup("h200"); }

// Stage 0's valid configurations of `p`, ranked for the H200 (empty, with a failure, if none).
std::vector<RankedConfig> rank_stage0(const dsl::Program& p) {
  auto v = space_valid(p, 0, {});
  EXPECT_TRUE(v);
  auto r = v ? space_rank(p, *v, h200()) : std::vector<RankedConfig>{};
  EXPECT_FALSE(r.empty());
  return r;
}

const RankedConfig* find_tile(const std::vector<RankedConfig>& r, int m, int n, size_t& pos) {
  for (size_t i = 0; i < r.size(); ++i) {
    const auto& t = r[i].config.gemm.tile;
    if (t && t->m == m && t->n == n) {
      pos = i;
      return &r[i];
    }
  }
  return nullptr;
}

TEST(Space, Knobs_TableIsComplete) {
  std::set<std::string> dsl_names, shorts;
  for (const auto& k : space_knobs()) {
    EXPECT_TRUE(dsl_names.insert(k.dsl).second) << k.dsl;
    EXPECT_TRUE(shorts.insert(k.short_name).second) << k.short_name;
    EXPECT_EQ(space_knob_parse(k.dsl), k.id);
  }
  EXPECT_EQ(space_knobs().size(), 12u);
  EXPECT_FALSE(space_knob_parse("tiles").has_value());
}

// The gemv schedules: only for a one-column fp32 GEMM with A read along K, on the FP32 rung, in one
// chunk per SM (SpaceOptions::sms), a quarter of that and one chunk, each in groups of 16 and 32; a
// program that fixes the schedule or the chunks keeps them.
TEST(Space, GemvCandidates) {
  auto gemv_names = [](const std::string& text, SpaceOptions o) {
    std::vector<std::string> out;
    auto valid = space_valid(compile(text), 0, o);
    EXPECT_TRUE(valid.ok());
    if (valid.ok())
      for (const auto& c : *valid)
        if (dsl::is_gemv(c.gemm.schedule)) {
          EXPECT_EQ(c.gemm.precision, dsl::Precision::f32) << c.name;
          out.push_back(c.name);
        }
    return out;
  };
  const std::string col = "ucut 1\nin a : f32[512, 8192]\nin x : f32[8192, 1]\nout y : f32[512, 1]\n";
  SpaceOptions o;
  o.sms = 78;
  EXPECT_EQ(gemv_names(col + "stage y = gemm(a, x)\n", o),
            (std::vector<std::string>{"gemv16_f32_k78", "gemv16_f32_k19", "gemv16_f32_k1", "gemv32_f32_k78",
                                      "gemv32_f32_k19", "gemv32_f32_k1"}));
  EXPECT_EQ(gemv_names(col + "stage y = gemm(a, x) { split_k 5 }\n", o),
            (std::vector<std::string>{"gemv16_f32_k5", "gemv32_f32_k5"}));
  auto fixed = space_valid(compile(col + "stage y = gemm(a, x) { schedule gemv32 }\n"), 0, o);
  ASSERT_TRUE(fixed.ok());
  ASSERT_EQ(fixed->size(), 3u);  // nothing but gemv32
  for (const auto& c : *fixed) EXPECT_EQ(c.gemm.schedule, dsl::Schedule::gemv32) << c.name;
  EXPECT_TRUE(gemv_names("ucut 1\nin a : f32[8192, 512]\nin x : f32[8192, 1]\nout y : f32[512, 1]\n"
                         "stage y = gemm(a.T, x)\n", o).empty());
  EXPECT_TRUE(gemv_names("ucut 1\nin a : f32[512, 8192]\nin x : f32[8192, 2]\nout y : f32[512, 2]\n"
                         "stage y = gemm(a, x)\n", o).empty());
  EXPECT_TRUE(gemv_names("ucut 1\nin a : f32[512, 40]\nin x : f32[40, 1]\nout y : f32[512, 1]\n"
                         "stage y = gemm(a, x)\n", o) ==
              (std::vector<std::string>{"gemv16_f32_k19", "gemv16_f32_k1", "gemv32_f32_k19", "gemv32_f32_k1"}));  // 78 > K
}

TEST(Space, Ladder) {
  using P = dsl::Precision;
  using R = std::vector<std::vector<P>>;
  {
    const ScopedEnv off("UCUTLASS_OFFER_BF16X3", "0");  // bf16x3's rung left out (below)
    EXPECT_EQ(space_precision_ladder(sol::Policy::tf32, dsl::DType::f32),
              (R{{P::tf32, P::tf32m}, {P::f32x3s, P::f32x3k, P::f32x3w}, {P::f32x3}, {P::f32}}));
  }
  EXPECT_EQ(space_precision_ladder(sol::Policy::exact, dsl::DType::f32),
            (R{{P::f32x3s, P::f32x3k, P::f32x3w}, {P::f32x3}, {P::f32}}));
  EXPECT_EQ(space_precision_ladder(sol::Policy::tf32, dsl::DType::bf16), (R{{P::bf16}}));
  // UCUTLASS_OFFER_F32X3W=0 leaves f32x3w (3xTF32 with the split in the main loop) out
  ::setenv("UCUTLASS_OFFER_F32X3W", "0", 1);
  EXPECT_EQ(space_precision_ladder(sol::Policy::exact, dsl::DType::f32),
            (R{{P::f32x3s, P::f32x3k}, {P::f32x3}, {P::f32}}));
  EXPECT_EQ(space_precision_ladder(sol::Policy::tf32, dsl::DType::bf16), (R{{P::bf16}}));
  ::unsetenv("UCUTLASS_OFFER_F32X3W");
  // UCUTLASS_OFFER_BF16X3=1 puts bf16x3 (three bf16 products) on its own rung between TF32 and
  // 3xTF32 under the tf32 and bf16 policies (the exact policy starts at 3xTF32, 16-bit data has one rung)
  const ScopedEnv on("UCUTLASS_OFFER_BF16X3", "1");
  EXPECT_EQ(space_precision_ladder(sol::Policy::tf32, dsl::DType::f32),
            (R{{P::tf32, P::tf32m}, {P::bf16x3}, {P::f32x3s, P::f32x3k, P::f32x3w}, {P::f32x3}, {P::f32}}));
  EXPECT_EQ(space_precision_ladder(sol::Policy::bf16, dsl::DType::f32)[1], (std::vector<P>{P::bf16x3}));
  EXPECT_EQ(space_precision_ladder(sol::Policy::exact, dsl::DType::f32),
            (R{{P::f32x3s, P::f32x3k, P::f32x3w}, {P::f32x3}, {P::f32}}));
  EXPECT_EQ(space_precision_ladder(sol::Policy::tf32, dsl::DType::bf16), (R{{P::bf16}}));
  // its candidates: bf16 tiles (K 64 or 128), for any operand layout
  auto kn = compile("ucut 1\nin a : f32[512, 1024]\nin b : f32[1024, 768]\nout y : f32[512, 768]\n"
                    "stage y = gemm(a, b)\n");
  auto v = space_valid(kn, 0, {});
  ASSERT_TRUE(v);
  int bx3 = 0;
  for (const auto& c : *v)
    if (c.gemm.precision == P::bf16x3) {
      ++bx3;
      EXPECT_EQ(c.rung, 1) << c.name;
      EXPECT_TRUE(c.gemm.tile->k == 64 || c.gemm.tile->k == 128) << c.name;
    }
  EXPECT_GT(bx3, 0);
}

// A plain x @ W (W [K, N], N contiguous) cannot run wgmma's TF32; its TF32 rung is mma.sync's
// (tf32m), so a tolerance TF32 meets (kb-v01) is tried at TF32's speed before 3xTF32 (issue 25:
// the level-1 fp32 GEMMs stayed on 3xTF32 under kb-v01 while the ceiling assumed TF32).
TEST(Space, KNByBGetsTf32OnMmaSyncAtTheFirstRung) {
  using P = dsl::Precision;
  auto p = dsl::dsl_compile(SourceFile{"t.ucut", "ucut 1\nin a : f32[4096, 4096]\nin b : f32[4096, 4096]\n"
                                                 "out y : f32[4096, 4096]\nstage y = gemm(a, b)\n"}).program;
  ASSERT_TRUE(p);
  auto valid = space_valid(*p, 0, {});
  ASSERT_TRUE(valid);
  int tf32m = 0, tf32 = 0;
  for (const auto& c : *valid) {
    if (c.gemm.precision == P::tf32m) {
      ++tf32m;
      EXPECT_EQ(c.rung, 0);
    }
    if (c.gemm.precision == P::tf32) ++tf32;
  }
  EXPECT_GT(tf32m, 0);
  EXPECT_EQ(tf32, 0);  // wgmma's TF32 reads B only K-major
}

TEST(Space, EnumerationCountsAreFixed) {
  auto p = gemm_program(4096, 4096, 4096, "bf16");
  auto all = space_enumerate(p, 0, {});
  ASSERT_TRUE(all);
  // 9 tile MxN x 2 K x 3 clusters x 2 schedules x (persistent + stream-K x (1 + splits 2,4,8))
  // x 2 rasters x 4 swizzles.
  EXPECT_EQ(all->size(), 9u * 2 * 3 * 2 * 5 * 2 * 4);
  // f32 data: the tf32 rung (sm90 tf32, and sm80 tf32m: 6 tiles x 2 stages x 5 splits x 3
  // swizzles), the f32x3s rung (cooperative stream-K, K in 4 or 8 pieces: 9 x 2 x 3 clusters x 2
  // splits x 2 rasters x 4 swizzles) with f32x3w (2 tiles x 3 clusters x 2 rasters x 4 swizzles),
  // the sm80 f32x3 rung (as tf32m) and the FP32 SIMT rung (5 tiles x 3 stages x 8 splits, the
  // summation orders, x 3 swizzles); bf16x3's rung between TF32 and 3xTF32 has bf16's knobs.
  const size_t bf16x3 = 9u * 2 * 3 * 2 * 5 * 2 * 4;
  const ScopedEnv on("UCUTLASS_OFFER_BF16X3", "1");
  auto f = space_enumerate(gemm_program(4096, 4096, 4096, "f32"), 0, {});
  ASSERT_TRUE(f);
  EXPECT_EQ(f->size(), 9u * 2 * 3 * 2 * 5 * 2 * 4 + 6 * 2 * 5 * 3 + bf16x3 + 9 * 2 * 3 * 2 * 2 * 4 +
                           2 * 3 * 2 * 4 + 6 * 2 * 5 * 3 + 5 * 3 * 8 * 3);
  // a short K takes f32x3s in one piece (persistent): 9 x 2 x 3 x 2 x 4, and f32x3k on the same
  // rung with TF32's knobs (K < 1024 only: in the 4096 case above it is not offered)
  auto s = space_enumerate(gemm_program(4096, 4096, 512, "f32"), 0, {});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->size(), 9u * 2 * 3 * 2 * 5 * 2 * 4 + 6 * 2 * 5 * 3 + bf16x3 + 9 * 2 * 3 * 2 * 4 +
                           9u * 2 * 3 * 2 * 5 * 2 * 4 + 2 * 3 * 2 * 4 + 6 * 2 * 5 * 3 + 5 * 3 * 8 * 3);
  for (const auto& c : *s) {
    if (c.gemm.precision == dsl::Precision::f32x3k || c.gemm.precision == dsl::Precision::f32x3w) {
      EXPECT_EQ(c.rung, 2);
    }
    if (c.gemm.precision == dsl::Precision::bf16x3) {
      EXPECT_EQ(c.rung, 1);
    }
  }
  // without bf16x3 (UCUTLASS_OFFER_BF16X3=0) the 3xTF32-on-wgmma rung is the second
  const ScopedEnv off("UCUTLASS_OFFER_BF16X3", "0");
  auto s0 = space_enumerate(gemm_program(4096, 4096, 512, "f32"), 0, {});
  ASSERT_TRUE(s0);
  EXPECT_EQ(s0->size(), s->size() - bf16x3);
  for (const auto& c : *s0) {
    if (c.gemm.precision == dsl::Precision::f32x3k) {
      EXPECT_EQ(c.rung, 1);
    }
  }
  EXPECT_FALSE(space_enumerate(p, 3, {}));  // no such stage
}

// precision f32x3w written: its main loop's shapes only (2 tiles x 3 clusters x 2 rasters x 4
// swizzles, cooperative, persistent, one K piece); the rules refuse none of them (the space's own
// usefulness rules drop the clusters and swizzles wider than a one-tile-high grid).
TEST(Space, F32x3wEnumeratesItsMainLoopsShapes) {
  auto p = compile("ucut 1\nin x : f32[128, 32768]\nparam W : f32[32768, 32768] = \"w\"\nout y : f32[128, 32768]\n"
                   "stage y = gemm(x, W.T) { precision f32x3w }\n");
  SpaceOptions o;
  o.keep_precision = true;
  auto all = space_enumerate(p, 0, o);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 2u * 3 * 2 * 4);
  auto valid = space_valid(p, 0, o);
  ASSERT_TRUE(valid);
  EXPECT_GT(valid->size(), 0u);
  const auto& g = std::get<dsl::GemmStage>(p.stages[0].body);
  for (const auto& c : *all) {
    dsl::GemmStage with = g;
    with.knobs = c.gemm;
    EXPECT_TRUE(dsl::gemm_rules_check(p, with, p.tensors[2]).empty()) << dsl::gemm_config_name(c.gemm, true);
    EXPECT_EQ(c.gemm.precision, dsl::Precision::f32x3w);
    EXPECT_EQ(c.gemm.tile->m, 128);
    EXPECT_EQ(c.gemm.tile->k, 32);
    EXPECT_EQ(c.gemm.schedule, dsl::Schedule::cooperative);
    EXPECT_EQ(c.gemm.scheduler, dsl::TileScheduler::persistent);
    EXPECT_EQ(c.gemm.split_k.value_or(1), 1);
  }
  // A [K, N] weight beside a transposed A: legal (the split transposes B's tiles), but enumerated
  // on the ladder only with UCUTLASS_OFFER_F32X3W_KN=1 (run DX: a third of the other layouts'
  // speed); written, it is kept. A transposed A alone is offered as is (read into registers at the
  // K-major form's speed), and so is a [K, N] B alone (the unit computes the transposed product).
  auto kn = compile("ucut 1\nin xt : f32[1024, 512]\nparam W : f32[1024, 2048] = \"w\"\nout y : f32[512, 2048]\n"
                    "stage y = gemm(xt.T, W)\n");
  auto swapped = compile("ucut 1\nin x : f32[512, 1024]\nparam W : f32[1024, 2048] = \"w\"\nout y : f32[512, 2048]\n"
                         "stage y = gemm(x, W)\n");
  auto mk = compile("ucut 1\nin xt : f32[1024, 512]\nparam W : f32[2048, 1024] = \"w\"\nout y : f32[512, 2048]\n"
                    "stage y = gemm(xt.T, W.T)\n");
  auto count = [&](const dsl::Program& q, SpaceOptions so) {
    auto e = space_enumerate(q, 0, so);
    EXPECT_TRUE(e);
    if (!e) return -1;
    const std::vector<StageConfig> configs = std::move(*e);
    int n = 0;
    for (const auto& c : configs) n += c.gemm.precision == dsl::Precision::f32x3w;
    return n;
  };
  ::unsetenv("UCUTLASS_OFFER_F32X3W_KN");
  EXPECT_EQ(count(kn, {}), 0);
  EXPECT_EQ(count(mk, {}), 2 * 3 * 2 * 4);
  EXPECT_EQ(count(swapped, {}), 2 * 3 * 2 * 4);
  ::setenv("UCUTLASS_OFFER_F32X3W_KN", "1", 1);
  EXPECT_EQ(count(kn, {}), 2 * 3 * 2 * 4);
  ::unsetenv("UCUTLASS_OFFER_F32X3W_KN");
  auto written = compile("ucut 1\nin xt : f32[1024, 512]\nparam W : f32[1024, 2048] = \"w\"\nout y : f32[512, 2048]\n"
                         "stage y = gemm(xt.T, W) { precision f32x3w }\n");
  EXPECT_EQ(count(written, o), 2 * 3 * 2 * 4);
}

// A layout copy (a view read across its strided merged last dim) takes the permuting form, whose
// tiles take no knobs: one configuration, named by its tile; a plain elementwise stage the grid.
// kb1_matmul_large_k (256 x 256 x 524288, B [K, N]): eight 64 x 128 tiles. The sm80 3xTF32
// kernel fills the H200's 132 SMs only in 16 K slices (the language's most); at the 4 it once had
// (a quarter of the SMs) FP32 SIMT ranked above it. A full grid keeps one slice (split_k_useful).
TEST(Space, AFewTilesOverALongKSplitTheTensorOpSm80KernelsWide) {
  auto p = compile(
      "ucut 1\nin a : f32[256, 524288]\nin b : f32[524288, 256]\nout c : f32[256, 256]\n"
      "stage c = gemm(a, b)\n");
  const RankedConfig* best_x3 = nullptr;
  const RankedConfig* best_simt = nullptr;
  const auto ranked = rank_stage0(p);
  for (const auto& c : ranked) {
    if (c.config.gemm.precision == dsl::Precision::f32x3 && !best_x3) best_x3 = &c;
    if (c.config.gemm.precision == dsl::Precision::f32 && !best_simt) best_simt = &c;
  }
  ASSERT_TRUE(best_x3 && best_simt);
  EXPECT_EQ(best_x3->config.gemm.split_k.value_or(1), 16) << best_x3->config.name;
  EXPECT_LT(best_x3->t_est, best_simt->t_est) << best_x3->config.name << " against " << best_simt->config.name;
  // a full grid (4096 x 4096: 256 tiles or more) keeps one slice on the tensor cores (FP32 SIMT,
  // on the same ladder, splits for the summation order)
  int x3 = 0;
  for (const auto& c : rank_stage0(gemm_program(4096, 4096, 4096, "f32", "f32x3")))
    if (c.config.gemm.precision == dsl::Precision::f32x3) {
      ++x3;
      EXPECT_EQ(c.config.gemm.split_k.value_or(1), 1) << c.config.name;
    }
  EXPECT_GT(x3, 0);
}

TEST(Space, APermutingCopyHasOneConfiguration) {
  auto p = compile("ucut 1\nin x : f32[2, 16, 10, 12]\nout y : f32[2, 10, 12, 16]\nout z : f32[2, 16, 10, 12]\n"
                   "view xv : f32[2, 10, 12, 16] = x strides [1920, 12, 1, 120] offset 0\n"
                   "stage y = elementwise { body { y = xv } }\nstage z = elementwise { body { z = 2 * x } }\n");
  auto copy = space_enumerate(p, 0, {});
  ASSERT_TRUE(copy);
  ASSERT_EQ(copy->size(), 1u);
  EXPECT_EQ(space_candidate_name(p, copy->front()), "elementwise_permute_64x16");  // merged [2, 120, 16]
  auto plain = space_enumerate(p, 1, {});
  ASSERT_TRUE(plain);
  EXPECT_GT(plain->size(), 1u);
}

TEST(Space, EveryValidGemmCandidatePassesTheRules) {
  for (const char* dt : {"bf16", "f32"}) {
    auto p = gemm_program(2048, 1024, 4096, dt);
    auto v = space_valid(p, 0, {});
    ASSERT_TRUE(v);
    ASSERT_GT(v->size(), 50u) << dt;
    std::set<std::string> names;
    for (const auto& c : *v) {
      dsl::Program q = space_apply(p, c);
      const auto& g = std::get<dsl::GemmStage>(q.stages[0].body);
      EXPECT_TRUE(dsl::gemm_rules_check(q, g, *q.find_tensor("y")).empty()) << c.name;
      names.insert(c.name);
    }
    EXPECT_EQ(names.size(), v->size()) << "canonical names must be unique identities";
  }
}

TEST(Space, ValidCandidatesRecheckAsProgramText) {
  auto p = gemm_program(1024, 1024, 1024, "f32");
  auto v = space_valid(p, 0, {});
  ASSERT_TRUE(v);
  for (size_t i = 0; i < v->size(); i += 97) {  // a spread sample; text checking is slower
    std::string text = dsl::dsl_print(space_apply(p, (*v)[i]));
    auto r = dsl::dsl_compile(SourceFile{"c.ucut", text});
    EXPECT_TRUE(r.program.has_value()) << (*v)[i].name << "\n" << text;
  }
}

TEST(Space, SpaceRulesGiveReasons) {
  auto p = gemm_program(4096, 4096, 4096, "bf16");
  StageConfig c;
  c.is_gemm = true;
  c.gemm.precision = dsl::Precision::bf16;
  c.gemm.tile = dsl::TileShape{128, 256, 64};
  c.gemm.cluster = dsl::ClusterShape{1, 1};
  c.gemm.schedule = dsl::Schedule::cooperative;
  c.gemm.scheduler = dsl::TileScheduler::stream_k;
  c.gemm.split_k = 4;
  c.gemm.raster = dsl::Raster::along_m;
  c.gemm.swizzle = 1;
  auto v = space_validate(p, c, {});
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].rule, "split_k_useful");
  // Skinny output, long K: split-K is worth trying.
  auto skinny = gemm_program(128, 128, 16384, "bf16");
  c.gemm.tile = dsl::TileShape{128, 128, 64};
  EXPECT_TRUE(space_validate(skinny, c, {}).empty());
  // A tile larger than the output.
  auto small = gemm_program(64, 64, 4096, "bf16");
  c.gemm.split_k = 1;
  c.gemm.scheduler = dsl::TileScheduler::persistent;
  auto v2 = space_validate(small, c, {});
  ASSERT_FALSE(v2.empty());
  EXPECT_EQ(v2[0].rule, "tile_not_oversized");
  // FP32 SIMT splits K on a full grid too: each split count is a summation order (the reference's
  // may be one); the SM80 3xTF32 kernel does not.
  auto full = gemm_program(4096, 4096, 8192, "f32");
  StageConfig simt;
  simt.is_gemm = true;
  simt.gemm.precision = dsl::Precision::f32;
  simt.gemm.tile = dsl::TileShape{128, 256, 8};
  simt.gemm.stages = 4;
  simt.gemm.split_k = 3;
  simt.gemm.swizzle = 4;
  EXPECT_TRUE(space_validate(full, simt, {}).empty());
  simt.gemm.precision = dsl::Precision::f32x3;
  simt.gemm.tile = dsl::TileShape{128, 128, 32};
  simt.gemm.split_k = 2;
  auto v3 = space_validate(full, simt, {});
  ASSERT_EQ(v3.size(), 1u);
  EXPECT_EQ(v3[0].rule, "split_k_useful");
}

TEST(Space, BigTileRanksAboveSmallTileFor4096Bf16) {
  auto p = gemm_program(4096, 4096, 4096, "bf16");
  auto v = space_valid(p, 0, {});
  ASSERT_TRUE(v);
  auto r = space_rank(p, *v, h200());
  size_t big = 0, small = 0;
  ASSERT_TRUE(find_tile(r, 128, 256, big));
  ASSERT_TRUE(find_tile(r, 64, 64, small));
  EXPECT_LT(big, small);
  ASSERT_TRUE(r[0].config.gemm.tile.has_value());
  EXPECT_GE(r[0].config.gemm.tile->m * r[0].config.gemm.tile->n, 128 * 128) << r[0].config.name;
  EXPECT_GE(r[0].t_est, r[0].t_sol);  // never faster than the roofline
}

TEST(Space, IrregularShapePrefersLessWaste) {
  // 1000 x 1000: a 256-wide tile pads to 1024 with 4 tiles per side (16 tiles: a fraction of the
  // 132 SMs busy); 128-wide and smaller tiles fill more of the GPU.
  auto p = gemm_program(1000, 1000, 1000, "bf16");
  auto v = space_valid(p, 0, {});
  ASSERT_TRUE(v);
  auto r = space_rank(p, *v, h200());
  const auto& best = r.front();
  EXPECT_LE(best.config.gemm.tile->m * best.config.gemm.tile->n, 128 * 128) << best.config.name;
  // 1100 x 1100: 128 pads to 1152 (95.5% useful), 256 pads to 1280 (86%). Compared without a
  // cluster or swizzle, whose own padding of the scheduler's grid tile_eff counts too (below).
  auto q = gemm_program(1104, 1104, 1024, "bf16");
  auto rq = space_rank(q, *space_valid(q, 0, {}), h200());
  auto plain = [&](int m, int n) -> const RankedConfig* {
    for (const auto& c : rq) {
      const auto& g = c.config.gemm;
      if (g.tile && g.tile->m == m && g.tile->n == n && g.cluster && g.cluster->m * g.cluster->n == 1 &&
          g.swizzle.value_or(1) == 1)
        return &c;
    }
    return nullptr;
  };
  const RankedConfig* t128 = plain(128, 128);
  const RankedConfig* t256 = plain(256, 128);
  ASSERT_TRUE(t128 && t256);
  EXPECT_GT(t128->tile_eff, t256->tile_eff);
  EXPECT_NEAR(t128->tile_eff, (1104.0 / 1152) * (1104.0 / 1152) * (1024.0 / 1024), 1e-9);
}

// CUTLASS's SM90 schedulers pad the tile grid to whole clusters and swizzle groups, and the padded
// tiles run the mainloop: run DE's kb1_matmul_3d_tensor (16384 x 768) took 1.78 ms at swizzle 8
// and 0.98 ms at swizzle 1 with 128x256 tiles in a 1x2 cluster (3 tiles along N padded to 8 or 4).
TEST(Space, TheSchedulersPaddedGridCountsAsWork) {
  Sm90Grid g = sm90_grid(64, 3, 1, 2, 8);  // 3 along N: swizzle cut to 4, then 3 -> 4 -> 8
  EXPECT_EQ(g.tiles_m, 64);
  EXPECT_EQ(g.tiles_n, 8);
  EXPECT_EQ(g.swizzle, 4);
  g = sm90_grid(64, 3, 1, 2, 1);  // whole clusters only: 3 -> 4
  EXPECT_EQ(g.tiles_n, 4);
  EXPECT_EQ(g.swizzle, 1);
  g = sm90_grid(128, 6, 1, 1, 8);  // 6 allows 8: 6 -> 8
  EXPECT_EQ(g.tiles_n, 8);
  EXPECT_EQ(g.tiles_m, 128);
  EXPECT_EQ(g.swizzle, 8);
  g = sm90_grid(1, 40, 2, 1, 8);  // one tile along M: a whole cluster makes 2, which allows
  EXPECT_EQ(g.tiles_m, 4);        // swizzle 2, which pads to 2 x 2: four times the work
  EXPECT_EQ(g.tiles_n, 40);
  EXPECT_EQ(g.swizzle, 2);
  g = sm90_grid(1, 40, 1, 1, 8);  // without the cluster: nothing to swizzle
  EXPECT_EQ(g.tiles_m, 1);
  EXPECT_EQ(g.swizzle, 1);

  // The ranking: at the kb1_matmul_3d_tensor shape (TF32, many waves), 128x256 tiles in a 1x2
  // cluster rank swizzle 1 above swizzle 8, and tile_eff says why.
  auto p = gemm_program(16384, 768, 2048, "f32", "tf32");
  auto r = space_rank(p, *space_valid(p, 0, {}), h200());
  auto pick = [&](int swizzle) -> const RankedConfig* {
    for (const auto& c : r) {
      const auto& k = c.config.gemm;
      if (k.tile && k.tile->m == 128 && k.tile->n == 256 && k.cluster && k.cluster->m == 1 && k.cluster->n == 2 &&
          k.swizzle.value_or(1) == swizzle && k.precision == dsl::Precision::tf32)
        return &c;
    }
    return nullptr;
  };
  const RankedConfig* w1 = pick(1);
  const RankedConfig* w8 = pick(8);
  ASSERT_TRUE(w1 && w8);
  EXPECT_NEAR(w1->tile_eff / w8->tile_eff, 2.0, 1e-9);  // 4 against 8 tiles along N
  EXPECT_LT(w1->t_est, w8->t_est * 0.6);
}

TEST(Space, LadderRungsRankInOrder) {
  auto p = gemm_program(2048, 2048, 2048, "f32");
  auto r = space_rank(p, *space_valid(p, 0, {}), h200());
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.front().config.gemm.precision, dsl::Precision::tf32);
  EXPECT_EQ(r.back().config.gemm.precision, dsl::Precision::f32);
  for (size_t i = 1; i < r.size(); ++i) EXPECT_LE(r[i - 1].config.rung, r[i].config.rung);
}

// A residual in the epilogue: f32x3s is offered (the epilogue runs as an elementwise pass after
// the GEMM), and its ranking pays that pass: an [M, N] fp32 write and read back.
TEST(Space, F32x3sWithAResidualIsOfferedAndPaysItsPass) {
  auto text = [](const std::string& value) {
    return "ucut 1\nin x : f32[4096, 8192]\nin r : f32[4096, 4096]\nparam W : f32[4096, 8192] = \"w\"\n"
           "out y : f32[4096, 4096]\nstage y = gemm(x, W.T) { epilogue { y = " + value + " } }\n";
  };
  auto with = compile(text("acc * 0.5 + r"));
  auto without = compile(text("acc * 0.5"));
  auto rw = space_rank(with, *space_valid(with, 0, {}), h200());
  auto ro = space_rank(without, *space_valid(without, 0, {}), h200());
  auto first = [](const std::vector<RankedConfig>& r) -> const RankedConfig* {  // best-ranked f32x3s
    for (const auto& c : r)
      if (c.config.gemm.precision == dsl::Precision::f32x3s) return &c;
    return nullptr;
  };
  const RankedConfig* b = first(ro);
  ASSERT_NE(first(rw), nullptr);
  ASSERT_NE(b, nullptr);
  const RankedConfig* a = nullptr;  // the same configuration with the residual
  for (const auto& c : rw)
    if (c.config.name == b->config.name) a = &c;
  ASSERT_NE(a, nullptr) << b->config.name;
  // the pass: 4096 x 4096 fp32 written and read (134 MB) plus the residual's own read, all
  // of it beyond the GEMM's hidden epilogue
  const sol::HwSpec hw = h200();
  EXPECT_GT(a->t_est - b->t_est, 4096.0 * 4096 * 4 * 2 / hw.mem_bw);
}

// 3xTF32's two kernels against each other: f32x3s (split stages, three wgmma GEMMs with [M, N]
// partials) wins where the MMAs are the time (4096^3), the one-kernel f32x3 (at mma.sync's rate)
// where K is short and the passes are (K = 32, an 8192 x 8192 output: run BN's tall-skinny case).
TEST(Space, ThreeTf32KernelsRankByWhatTheirPassesCost) {
  auto best = [](const std::vector<RankedConfig>& r, dsl::Precision p) {
    double t = 0;
    for (const auto& c : r)
      if (c.config.gemm.precision == p && (t == 0 || c.t_est < t)) t = c.t_est;
    return t;
  };
  auto square = gemm_program(4096, 4096, 4096, "f32");
  auto rs = space_rank(square, *space_valid(square, 0, {}), h200());
  ASSERT_GT(best(rs, dsl::Precision::f32x3s), 0);
  ASSERT_GT(best(rs, dsl::Precision::f32x3), 0);
  EXPECT_LT(best(rs, dsl::Precision::f32x3s) * 1.3, best(rs, dsl::Precision::f32x3));
  auto skinny = gemm_program(8192, 8192, 32, "f32");
  auto rk = space_rank(skinny, *space_valid(skinny, 0, {}), h200());
  ASSERT_GT(best(rk, dsl::Precision::f32x3s), 0);
  ASSERT_GT(best(rk, dsl::Precision::f32x3), 0);
  EXPECT_GT(best(rk, dsl::Precision::f32x3s), 1.25 * best(rk, dsl::Precision::f32x3));
  // the passes: at least the two partials' 16 bytes per output element beyond the output
  EXPECT_GT(best(rk, dsl::Precision::f32x3s), 8192.0 * 8192 * (16 + 4) / h200().mem_bw);
  // kb1_bmm (128 batches of 512 x 2048 x 1024): f32x3 ran 3.8 ms, f32x3s 5.6 ms (runs DE, DG,
  // H100); calibrated, f32x3 is ahead by the opening's margin (BuiltinOptions::rung_advantage)
  auto bmm = compile("ucut 1\nin a : f32[128, 512, 1024]\nin b : f32[128, 1024, 2048]\n"
                     "out y : f32[128, 512, 2048]\nstage y = gemm(a, b) { }\n");
  auto rb = space_rank(bmm, *space_valid(bmm, 0, {}), *sol::hw_lookup("h100"));
  ASSERT_GT(best(rb, dsl::Precision::f32x3s), 0);
  ASSERT_GT(best(rb, dsl::Precision::f32x3), 0);
  EXPECT_GT(best(rb, dsl::Precision::f32x3s), 1.25 * best(rb, dsl::Precision::f32x3));
}

// A batched 64 x 16 output with an N-contiguous B (Mamba2's chunk states): no tf32 wgmma (B not
// K-major) and no CUTLASS 2.x tile within 64 x 64, yet the space keeps the SM80 kernels (the
// least padded ranked first) instead of leaving the stage with nothing to run.
TEST(Space, ASmallOutputKeepsTheSm80Tiles) {
  auto p = compile("ucut 1\nin a : f32[512, 64, 64]\nin b : f32[512, 64, 16]\nout y : f32[512, 64, 16]\n"
                   "stage y = gemm(a, b) { }\n");
  auto valid = space_valid(p, 0, {});
  ASSERT_TRUE(valid);
  ASSERT_FALSE(valid->empty());
  auto r = space_rank(p, *valid, h200());
  bool sm80 = false;
  for (const auto& c : r) sm80 = sm80 || dsl::gemm_family(c.config.gemm.precision) == dsl::GemmFamily::sm80;
  EXPECT_TRUE(sm80);
}

// No estimate is under its stage's roofline, whatever the multicast and swizzle factors add (a
// memory-bound 128-row layer of KernelBench's wide MLP came out under it).
TEST(Space, NoEstimateBeatsTheRoofline) {
  for (const auto& p : {gemm_program(4096, 4096, 4096, "bf16"), gemm_program(1024, 8192, 8192, "f32"),
                        gemm_program(8192, 8192, 32, "f32"), gemm_program(128, 32768, 16384, "f32")}) {
    for (const auto& c : space_rank(p, *space_valid(p, 0, {}), h200()))
      EXPECT_GE(c.t_est, c.t_sol) << c.config.name;
  }
}

TEST(Space, NeighborsDifferInOneKnob) {
  auto p = gemm_program(4096, 4096, 4096, "bf16");
  auto r = space_rank(p, *space_valid(p, 0, {}), h200());
  const StageConfig& best = r.front().config;
  auto n = space_neighbors(p, best, {});
  ASSERT_FALSE(n.empty());
  std::set<std::string> names;
  for (const auto& c : n) {
    EXPECT_NE(c.name, best.name);
    EXPECT_TRUE(space_validate(p, c, {}).empty()) << c.name;
    names.insert(c.name);
  }
  EXPECT_EQ(names.size(), n.size());
  // Deterministic: the same call gives the same list.
  auto again = space_neighbors(p, best, {});
  ASSERT_EQ(again.size(), n.size());
  for (size_t i = 0; i < n.size(); ++i) EXPECT_EQ(again[i].name, n[i].name);
}

TEST(Space, ExplicitKnobsStayFixed) {
  auto text = std::string("ucut 1\nin x : bf16[4096, 4096]\nparam W : bf16[4096, 4096] = \"w\"\n") +
              "out y : bf16[4096, 4096]\nstage y = gemm(x, W.T) { tile 128x256x64 }\n";
  auto p = compile(text);
  auto v = space_valid(p, 0, {});
  ASSERT_TRUE(v);
  ASSERT_FALSE(v->empty());
  for (const auto& c : *v) EXPECT_EQ(c.gemm.tile->n, 256) << c.name;
}

TEST(Space, SimtStagesHaveAHandfulOfCandidates) {
  auto p = compile("ucut 1\nin x : f32[4096, 1000]\nout y : f32[4096, 1000]\nstage y = rowwise softmax(x)\n");
  auto all = space_enumerate(p, 0, {});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 4u * 4 * 4);
  auto v = space_valid(p, 0, {});
  ASSERT_TRUE(v);
  ASSERT_FALSE(v->empty());
  EXPECT_LT(v->size(), all->size());
  for (const auto& c : *v) {
    EXPECT_EQ(1000 % c.simt.vector_width.value_or(1), 0) << c.name;  // 8 does not divide 1000
    std::string text = dsl::dsl_print(space_apply(p, c));
    EXPECT_TRUE(dsl::dsl_compile(SourceFile{"s.ucut", text}).program.has_value()) << c.name;
  }
  auto r = space_rank(p, *v, h200());
  EXPECT_EQ(r.front().config.simt.vector_width, 4);  // 16-byte accesses first
}

// An attention stage has one knob, the block: on 16-bit data Hopper's kernel (384 threads) and
// mma.sync's 128 and 256; on f32 the last two only. Each candidate re-checks as program text, is
// predicted no faster than its bound (half the pairs under the causal mask) and Hopper's kernel
// (the fastest, run AZ) ranks first, then the 64-row block (run AR). A program that fixes the block
// keeps it.
TEST(Space, AttentionOffersTheBlocks) {
  const std::string head = "ucut 1\nin q : bf16[8, 32, 4096, 128]\nin k : bf16[8, 32, 4096, 128]\n"
                           "in v : bf16[8, 32, 4096, 128]\nout o : bf16[8, 32, 4096, 128]\n";
  auto p = compile(head + "stage o = attention(q, k, v, causal=true)\n");
  auto v = space_valid(p, 0, {});
  ASSERT_TRUE(v);
  ASSERT_EQ(v->size(), 3u);
  for (const auto& c : *v) {
    std::string text = dsl::dsl_print(space_apply(p, c));
    EXPECT_TRUE(dsl::dsl_compile(SourceFile{"s.ucut", text}).program.has_value()) << c.name;
  }
  auto r = space_rank(p, *v, h200());
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].config.name, "attention_th384");
  EXPECT_EQ(r[1].config.name, "attention_th128");
  const double causal_flops = 2.0 * 256 * (4096.0 * 4097 / 2) * 256;
  for (const auto& x : r) {
    EXPECT_NEAR(x.t_sol, causal_flops / h200().bf16, 1e-9) << x.config.name;
    EXPECT_GT(x.t_est, x.t_sol) << x.config.name;
  }
  auto fixed = compile(head + "stage o = attention(q, k, v) { threads 256 }\n");
  SpaceOptions keep;
  keep.keep_explicit = true;
  auto f = space_valid(fixed, 0, keep);
  ASSERT_TRUE(f);
  ASSERT_EQ(f->size(), 1u);
  EXPECT_EQ(f->front().simt.threads, 256);
  auto f32 = compile("ucut 1\nin q : f32[4, 512, 64]\nout o : f32[4, 512, 64]\nstage o = attention(q, q, q)\n");
  auto w = space_valid(f32, 0, {});
  ASSERT_TRUE(w);
  ASSERT_EQ(w->size(), 2u);
  for (const auto& c : *w) EXPECT_NE(c.simt.threads, 384) << c.name;
}

// Elementwise fp32 streams rank 128 threads with 8-byte accesses first (runs T and U), the plan
// the stage's `auto` takes.
TEST(Space, ElementwiseRanksEightByteAccessesIn128ThreadsFirst) {
  auto p = compile("ucut 1\nin x : f32[16384, 16384]\nout y : f32[16384, 16384]\n"
                   "stage y = elementwise { body { y = relu(x) } }\n");
  auto r = rank_stage0(p);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.front().config.simt.vector_width, 2);
  EXPECT_EQ(r.front().config.simt.threads, 128);
}

// Rows of 4096 f32 (1024 four-wide vectors) in 1024-thread blocks leave each thread one vector
// between two block reductions: the cross-entropy reduce (one block a row) ranks smaller blocks
// first (kb1_cross_entropy: 0.79x eager in 1024 threads, 2.94x in fewer), and so does a rowwise
// softmax over the same rows.
TEST(Space, ShortRowsRankSmallerBlocksFirst) {
  auto ce = compile("ucut 1\nin x : f32[32768, 4096]\nin t : i64[32768]\nout y : f32[1]\n"
                    "stage y = reduce cross_entropy(x, t)\n");
  auto sm = compile("ucut 1\nin x : f32[32768, 4096]\nout y : f32[32768, 4096]\n"
                    "stage y = rowwise softmax(x)\n");
  for (const dsl::Program* p : {&ce, &sm}) {
    auto r = rank_stage0(*p);
    ASSERT_FALSE(r.empty());
    EXPECT_LT(r.front().config.simt.threads.value_or(256), 1024) << r.front().config.name;
    for (const auto& c : r)  // a 1024-thread block of one vector a thread is predicted slower
      if (c.config.simt.threads == 1024 && c.config.simt.vector_width == 4) {
        EXPECT_GT(c.t_est, r.front().t_est) << c.config.name;
      }
  }
}

// Rows of 65,535 f32 (run DG, H100): a row reduction (kb1_l1_norm's mean of |x|, one value a row)
// reads each row once however it runs, so the streamed block per row ranks first (8.5 ms for the
// problem against 11.6-13.7 ms in clusters); a row normalized in place (kb1_l2_norm) needs the
// row twice and ranks a cluster's register cache first, in a block under 512 threads (6.0 ms in
// 128 threads x 8 blocks against 7.7 ms in 1024 x 4 and 10.0 ms streamed).
TEST(Space, ARowReductionStreamsAndARowWrittenBackCachesInACluster) {
  auto l1 = compile("ucut 1\nin x : f32[32768, 65535]\nout y : f32[32768, 1]\n"
                    "stage y = rowwise mean(x) {\n  prologue {\n    x = abs(acc)\n  }\n  epilogue {\n    y = acc\n  }\n}\n");
  auto l2 = compile("ucut 1\nin x : f32[32768, 65535]\nout y : f32[32768, 65535]\n"
                    "stage y = rowwise l2_normalize(x, eps=0)\n");
  auto r1 = rank_stage0(l1);
  ASSERT_FALSE(r1.empty());
  EXPECT_EQ(r1.front().config.simt.cluster.value_or(1), 1) << r1.front().config.name;
  for (const auto& c : r1) {
    if (c.config.simt.cluster.value_or(1) > 1) {
      EXPECT_GT(c.t_est, r1.front().t_est) << c.config.name;
    }
  }
  auto r2 = rank_stage0(l2);
  ASSERT_FALSE(r2.empty());
  EXPECT_GT(r2.front().config.simt.cluster.value_or(1), 1) << r2.front().config.name;
  EXPECT_LT(r2.front().config.simt.threads.value_or(1024), 512) << r2.front().config.name;
  // With 16-byte vectors a row reduction keeps the 1024-thread cluster of 2 measured best
  // (kb1_hinge_loss: 77% of its bound against 65% streamed one block a row, run DJ)
  auto hinge = compile("ucut 1\nin x : f32[32768, 32768]\nout y : f32[32768, 1]\n"
                       "stage y = rowwise mean(x) {\n  prologue {\n    x = max(1 - acc, 0)\n  }\n  epilogue {\n    y = acc\n  }\n}\n");
  auto r3 = rank_stage0(hinge);
  ASSERT_FALSE(r3.empty());
  EXPECT_EQ(r3.front().config.name, "rowwise_th1024_rpb1_v4_cl2");
}

// Rows written back that no block caches are streamed twice (three passes over memory where the
// bound counts two): run DY (H100) timed kb1_softmax's and kb1_log_softmax's 393216-wide rows and
// kb1_instancenorm's 262144-wide ones at 59-60% of their bound in one streaming block a row, which
// the ranking had put first at an estimated 80%. A cluster that caches the row ranks first now: 8
// blocks for 262144, and 16 for 393216, which no cluster of 8 holds (48 values a thread).
TEST(Space, LongRowsWrittenBackRankACachingClusterFirst) {
  auto norm = compile("ucut 1\nin x : f32[7168, 262144]\nout y : f32[7168, 262144]\n"
                      "stage y = rowwise layer_norm(x, eps=1e-05)\n");
  auto r1 = rank_stage0(norm);
  ASSERT_FALSE(r1.empty());
  EXPECT_EQ(r1.front().config.simt.cluster.value_or(1), 8) << r1.front().config.name;
  for (const auto& c : r1) EXPECT_NE(c.config.simt.cluster.value_or(1), 16) << c.config.name;
  auto soft = compile("ucut 1\nin x : f32[4096, 393216]\nout y : f32[4096, 393216]\nstage y = rowwise softmax(x)\n");
  auto r2 = rank_stage0(soft);
  ASSERT_FALSE(r2.empty());
  EXPECT_EQ(r2.front().config.simt.cluster.value_or(1), 16) << r2.front().config.name;
  for (const auto& c : r2)
    if (c.config.simt.cluster.value_or(1) == 1) {
      EXPECT_GT(c.t_est, r2.front().t_est) << c.config.name;
      // streamed: two reads and a write, 2/3 of the estimate's bandwidth at most
      EXPECT_GE(c.t_est, 1.5 * c.t_sol) << c.config.name;
    }
  // every cluster of 16 offered re-checks as program text (the code generator's plan)
  auto v = space_valid(soft, 0, {});
  ASSERT_TRUE(v);
  int sixteen = 0;
  for (const auto& c : *v)
    if (c.simt.cluster.value_or(1) == 16) {
      ++sixteen;
      std::string text = dsl::dsl_print(space_apply(soft, c));
      EXPECT_TRUE(dsl::dsl_compile(SourceFile{"s.ucut", text}).program.has_value()) << c.name;
    }
  EXPECT_GT(sixteen, 0);
  // a short row stays streamed-free: 4096 f32 rows are cached by one block, no cluster of 16
  auto small = compile("ucut 1\nin x : f32[32768, 4096]\nout y : f32[32768, 4096]\nstage y = rowwise softmax(x)\n");
  for (const auto& c : rank_stage0(small)) EXPECT_NE(c.config.simt.cluster.value_or(1), 16) << c.config.name;
}

// A column reduction may split its reduced rows across a cluster (2, 4 or 8 blocks), a row
// reduction may not: every valid column candidate with a cluster re-checks as program text.
TEST(Space, ColumnReductionsOfferClusters) {
  auto cols = compile("ucut 1\nin x : f32[16384, 4096]\nout y : f32[4096]\nstage y = reduce sum(x, dims=[0])\n");
  auto v = space_valid(cols, 0, {});
  ASSERT_TRUE(v);
  std::set<int> seen;
  for (const auto& c : *v) {
    if (!c.simt.cluster) continue;
    seen.insert(*c.simt.cluster);
    std::string text = dsl::dsl_print(space_apply(cols, c));
    EXPECT_TRUE(dsl::dsl_compile(SourceFile{"s.ucut", text}).program.has_value()) << c.name;
  }
  EXPECT_EQ(seen, (std::set<int>{2, 4, 8}));
  auto rows = compile("ucut 1\nin x : f32[4096, 16384]\nout y : f32[4096]\nstage y = reduce sum(x, dims=[1])\n");
  auto w = space_valid(rows, 0, {});
  ASSERT_TRUE(w);
  ASSERT_FALSE(w->empty());
  for (const auto& c : *w) EXPECT_FALSE(c.simt.cluster.has_value()) << c.name;
}

// Several rows per block need a power-of-two group of at most 32 lanes per row: the code
// generator refuses threads 1024 with rows_per_block 2, so the space never offers it.
TEST(Space, RowsPerBlockKeepsRowGroupsWithinAWarp) {
  auto p = compile("ucut 1\nin x : f32[65536, 64]\nout y : f32[65536, 64]\nstage y = rowwise softmax(x)\n");
  auto v = space_valid(p, 0, {});
  ASSERT_TRUE(v);
  ASSERT_FALSE(v->empty());
  for (const auto& c : *v) {
    int r = c.simt.rows_per_block.value_or(1), t = c.simt.threads.value_or(256);
    if (r > 1) {
      EXPECT_EQ(t % r, 0) << c.name;
      EXPECT_LE(t / r, 32) << c.name;
      EXPECT_EQ((t / r) & (t / r - 1), 0) << c.name;
    }
  }
  StageConfig bad = v->front();
  bad.simt.threads = 1024;
  bad.simt.rows_per_block = 2;
  bool named = false;
  for (const auto& x : space_validate(p, bad, {})) named = named || x.rule == "simt_rows_per_block_group";
  EXPECT_TRUE(named);
}

// Scans offer PyTorch's own fp32 order beside the fp64 plans where the checker allows it (an
// f32 row scan, inclusive or an exclusive cumsum, whose rows PyTorch walks in 32-element chunks),
// in blocks of 128 or 256 threads loading 4, 8 or 16 chunks ahead.
TEST(Space, ScansOfferPyTorchsOrderWhereItIsEmulated) {
  auto names = [](const std::string& decl, const std::string& call) {
    auto p = compile("ucut 1\n" + decl + "stage y = scan " + call + " {\n}\n");
    std::set<std::string> out;
    auto v = space_valid(p, 0, {});
    EXPECT_TRUE(v);
    if (v)
      for (const auto& c : *v) out.insert(c.name);
    return out;
  };
  const std::string square = "in x : f32[16384, 16384]\nout y : f32[16384, 16384]\n";
  const std::string torch = "scan_torch_th256_u8";
  auto n = names(square, "cumsum(x)");
  EXPECT_TRUE(n.count(torch));
  EXPECT_TRUE(n.count("scan_torch_th128_u16"));
  EXPECT_TRUE(n.count("scan_th256_v4"));
  EXPECT_TRUE(names(square, "cumsum(x, reverse=true)").count(torch));
  EXPECT_TRUE(names(square, "cumsum(x, exclusive=true)").count(torch));  // cumsum(x) - x
  EXPECT_FALSE(names(square, "cumprod(x, exclusive=true)").count(torch));  // PyTorch has none
  EXPECT_FALSE(names("in x : f32[4, 16384]\nout y : f32[4, 16384]\n", "cumsum(x)").count(torch));  // 1024-element chunks
  EXPECT_FALSE(names("in x : f16[16384, 16384]\nout y : f16[16384, 16384]\n", "cumsum(x)").count(torch));
}

// A long-row scan opens with PyTorch's order on its shared-memory ring: the fp64 row kernel walks
// a row longer than its tile with no load ahead (kb1_cumsum, 32 K-long rows: 0.43x eager, the
// ring 2.03x). On rows of one tile both are bandwidth kernels, and the fp64 kernel stays near them.
TEST(Space, LongRowScansOpenWithTheTorchRing) {
  auto ranked = [](const std::string& shape, const std::string& call) {
    return rank_stage0(compile("ucut 1\nin x : f32" + shape + "\nout y : f32" + shape + "\nstage y = scan " + call + " {\n}\n"));
  };
  for (const std::string call : {"cumsum(x)", "cumprod(x)", "cumsum(x, reverse=true)", "cumsum(x, exclusive=true)"}) {
    auto r = ranked("[32768, 32768]", call);
    ASSERT_FALSE(r.empty());
    EXPECT_EQ(r.front().config.simt.order, dsl::ScanOrder::torch) << call << ": " << r.front().config.name;
    EXPECT_EQ(r.front().config.name, "scan_torch_th128_u16") << call;
    for (const auto& c : r)
      if (c.config.simt.order != dsl::ScanOrder::torch) {
        EXPECT_GT(c.t_est, 3 * r.front().t_est) << c.config.name;
      }
  }
  // 1 Ki-long rows fit one tile of a 128-thread fp64 plan (scan_cumsum_rows_1k: 92% of SOL)
  auto shortrows = ranked("[262144, 1024]", "cumsum(x)");
  ASSERT_FALSE(shortrows.empty());
  for (const auto& c : shortrows)
    if (c.config.simt.order != dsl::ScanOrder::torch && c.config.simt.threads == 1024) {
      EXPECT_LT(c.t_est, 1.2 * shortrows.front().t_est) << c.config.name;
    }
}

// group_norm's rows are (sample, group) pairs of C/groups x H x W elements, not the last dim:
// kb1_groupnorm (112 x 64 x 512 x 512, 8 groups: 896 rows of 2 Mi) opens with one row a block,
// every SM busy (1.49x eager, run BN), not with 8 rows a block (112 blocks: 0.77x, runs CD, CR).
TEST(Space, GroupNormRanksByItsGroups) {
  auto p = compile("ucut 1\nin x : f32[112, 64, 512, 512]\nparam w : f32[64] = \"w\"\nparam b : f32[64] = \"b\"\n"
                   "out y : f32[112, 64, 512, 512]\nstage y = rowwise group_norm(x, weight=w, bias=b, eps=1e-05, groups=8)\n");
  auto r = rank_stage0(p);
  ASSERT_FALSE(r.empty());
  EXPECT_EQ(r.front().config.simt.rows_per_block.value_or(1), 1) << r.front().config.name;
  EXPECT_EQ(r.front().config.simt.vector_width.value_or(1), 4) << r.front().config.name;
  EXPECT_EQ(simt_facts(p, p.stages[0]).row_len, 8 * 512 * 512);
  EXPECT_EQ(simt_facts(p, p.stages[0]).last_dim, 512);
}

// A column reduction reading 4-byte columns (an odd kept run) is also offered 16 reduced rows
// loaded ahead, 64 bytes a thread as 8-byte columns 8 rows ahead have (98% of the bandwidth), and
// opens with it in 512 threads without a cluster (the tiles fill the GPU); so does a value with its
// index (argmax: the kernel keeps a 32-bit row offset, which fits 16 rows ahead in 64 registers),
// but not a column wide enough for 8-byte vectors (they rank first).
TEST(Space, NarrowColumnReductionsLoadSixteenRowsAhead) {
  auto opening = [](const std::string& decl, const std::string& op) {
    auto p = compile("ucut 1\n" + decl + "stage y = reduce " + op + "(x, dims=[1])\n");
    auto v = space_valid(p, 0, {});
    EXPECT_TRUE(v);
    std::set<int> items;
    if (v)
      for (const auto& c : *v) items.insert(c.simt.items_per_thread.value_or(0));
    auto r = v ? space_rank(p, *v, h200()) : std::vector<RankedConfig>{};
    return std::make_pair(r.empty() ? StageConfig{} : r.front().config, items);
  };
  const std::string odd = "in x : f32[128, 4096, 4095]\nout y : f32[128, 4095]\n";
  for (const std::string op : {"sum", "mean", "max"}) {
    auto [c, items] = opening(odd, op);
    EXPECT_EQ(items, (std::set<int>{0, 16})) << op;
    EXPECT_EQ(c.name, "reduce_th512_rpb1_v1_u16") << op;
  }
  auto [am, am_items] = opening("in x : f32[128, 4096, 4095]\nout y : i64[128, 4095]\n", "argmax");
  EXPECT_EQ(am_items, (std::set<int>{0, 16})) << am.name;
  EXPECT_EQ(am.name, "reduce_th512_rpb1_v1_u16");
  EXPECT_EQ(am.simt.threads, 512) << am.name;
  EXPECT_FALSE(am.simt.cluster.has_value()) << am.name;
  auto [even_c, even_items] = opening("in x : f32[128, 4096, 4096]\nout y : f32[128, 4096]\n", "sum");
  EXPECT_TRUE(even_items.count(16));  // its 4-byte configurations
  EXPECT_FALSE(even_c.simt.items_per_thread.has_value()) << even_c.name;  // 8- or 16-byte vectors first
  EXPECT_GE(even_c.simt.vector_width.value_or(1), 2) << even_c.name;
}

}  // namespace
}  // namespace ucut::space

namespace ucut::space {
namespace {

// f32x3k (3xTF32 in one TF32 GEMM over K three times): on an output-bound short-K GEMM (the kb
// suite's small-K matmul, 32768^2 x 64, B as [K, N]) it makes one pass over the 4 GiB output where
// f32x3s makes five (p1, p2 written and read, then the output), so it ranks first on the rung, near
// the write bound; from K = 1024 it is not offered (its one accumulator drifts as f32x3s's one K
// piece does, which f32x3s splits there).
TEST(Space, F32x3kLeadsTheRungOnAShortKAndIsNotOfferedOnALongOne) {
  auto p = dsl::dsl_compile(SourceFile{"t.ucut", "ucut 1\nin a : f32[32768, 64]\nin b : f32[64, 32768]\n"
                                                 "out y : f32[32768, 32768]\nstage y = gemm(a, b)\n"}).program;
  ASSERT_TRUE(p);
  const auto ranked = rank_stage0(*p);
  double k3 = 0, s3 = 0;
  for (const auto& r : ranked) {
    if (r.config.gemm.precision == dsl::Precision::f32x3k && (k3 == 0 || r.t_est < k3)) k3 = r.t_est;
    if (r.config.gemm.precision == dsl::Precision::f32x3s && (s3 == 0 || r.t_est < s3)) s3 = r.t_est;
  }
  ASSERT_GT(k3, 0);
  ASSERT_GT(s3, 0);
  EXPECT_LT(k3 * 3, s3);
  const double write = 32768.0 * 32768 * 4 / h200().mem_bw;
  EXPECT_GT(k3, write);
  EXPECT_LT(k3, 1.5 * write);
  auto longk = space_enumerate(gemm_program(2048, 2048, 1024, "f32"), 0, {});
  ASSERT_TRUE(longk);
  for (const auto& c : *longk) EXPECT_NE(c.gemm.precision, dsl::Precision::f32x3k);
}

}  // namespace
}  // namespace ucut::space
