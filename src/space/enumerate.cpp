// space_enumerate: the knob values considered per stage kind, as data, and their product; each
// kind's entry (space/kinds/) enumerates its own, the GEMM's here.
// GEMM (sm90 family: f16, bf16, tf32): tile M, N in {64, 128, 256}, K one or two 128-byte
// swizzle rows; cluster 1x1, 2x1, 1x2; cooperative or pingpong; persistent or stream-K, and
// split-K 2..max_split_k on stream-K; raster along M or N; swizzle 1, 2, 4, 8; stages auto (as
// many as fit, which is what CUTLASS's auto carve-out does). GEMM (sm80 family: f32x3, f32): the
// tiles gemm_rules accepts, stages 3 and 4 (f32 SIMT also 5), split-K 1, 2, 4 (f32 SIMT 1, 2, 3, 4,
// 6, 8, 12, 16: the summation orders), swizzle 1, 2, 4.
// SIMT stages (space/kinds/simt.cpp and each kind's file): threads, rows per block and vector width.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <variant>

#include "dsl/gemm_rules.h"
#include "dsl/names.h"
#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"
#include "space/space.h"

namespace ucut::space {

using dsl::Precision;

namespace {
// FP32 SIMT splits K for speed where the grid is short of tiles, and to reproduce the reference's
// summation order everywhere: cuBLAS's fp32 kernels often sum K in pieces (serial split-K, or
// parallel with a reduce kernel), and a split of the same count sums every output in the same
// order. Each count is one summation class (app/adapters_space.h).
const std::vector<int> kSimtSplits = {1, 2, 3, 4, 6, 8, 12, 16};
// The tensor-core SM80 kernels (3xTF32 and TF32 on mma.sync) split K to fill the grid only: up to
// the language's 16 slices, so a few output tiles over a long K reach every SM
// (kb1_matmul_large_k: 256 x 256 x 524288 is 8 tiles of 64 x 128, a quarter of the SMs at 4
// slices); validate.cpp's split_k_useful keeps a split only where the tiles are fewer than half the
// SMs and each slice has 4 K tiles.
const std::vector<int> kTensorOpSplits = {1, 2, 4, 8, 16};
}  // namespace

bool space_offers_f32x3w() {
  const char* v = std::getenv("UCUTLASS_OFFER_F32X3W");
  return !(v && std::string(v) == "0");
}

bool space_offers_f32x3w_kn() {
  const char* v = std::getenv("UCUTLASS_OFFER_F32X3W_KN");
  return v && std::string(v) == "1";
}

bool space_offers_bf16x3() {
  const char* v = std::getenv("UCUTLASS_OFFER_BF16X3");
  return v && std::string(v) == "1";
}

namespace {

// f32 data's ladder with f32x3w on the 3xTF32-on-wgmma rung (where offered), without bf16x3
std::vector<std::vector<Precision>> ladder_f32(sol::Policy policy) {
  // f32x3w (3xTF32 with the split in the main loop) shares the 3xTF32-on-wgmma rung: as accurate
  // as f32x3 (run DU: 1.16-1.18x its speed on the H100); UCUTLASS_OFFER_F32X3W=0 leaves it out
  if (space_offers_f32x3w()) {
    auto ladder = space_precision_ladder_base(policy);
    for (auto& rung : ladder)
      if (std::find(rung.begin(), rung.end(), Precision::f32x3k) != rung.end()) rung.push_back(Precision::f32x3w);
    return ladder;
  }
  return space_precision_ladder_base(policy);
}

}  // namespace

std::vector<std::vector<Precision>> space_precision_ladder(sol::Policy policy, dsl::DType t) {
  if (t == dsl::DType::f16) return {{Precision::f16}};
  if (t == dsl::DType::bf16) return {{Precision::bf16}};
  auto ladder = ladder_f32(policy);
  // bf16x3 (three bf16 products): less accurate than 3xTF32, far more than TF32, its own rung
  // between them (the TF32 bound, space/precision.h, decides whether a problem starts on it)
  if (space_offers_bf16x3() && policy != sol::Policy::exact && ladder.size() > 1)
    ladder.insert(ladder.begin() + 1, {Precision::bf16x3});
  return ladder;
}

std::vector<std::vector<Precision>> space_precision_ladder_base(sol::Policy policy) {
  switch (policy) {
    // f32x3s (3xTF32 on wgmma, split stages) before f32x3 (the one-kernel SM80 3xTF32): ~1.45x
    // faster on 4096 x 8192 x 8192, a little less accurate (docs/benchmarks.md run Y). FP32 SIMT
    // last on every ladder: the slowest, but it sums each output in one FMA chain in K order, as
    // PyTorch's fp32 GEMM does, so it passes where the reference's own rounding fails every
    // tensor-core kernel (SearchSpace::summation_order_rung; docs/optimizer.md).
    // TF32's rung holds both kernels: wgmma's (K-major operands) and mma.sync's (any layout; an
    // x @ W with W [K, N] would otherwise skip TF32 for 3xTF32 even where TF32 passes).
    // f32x3k (3xTF32 as one TF32 GEMM over K three times) shares f32x3s's rung: as accurate as
    // f32x3s with K in one piece, the only case where it is offered (space_enumerate_gemm).
    case sol::Policy::exact: return {{Precision::f32x3s, Precision::f32x3k}, {Precision::f32x3}, {Precision::f32}};
    case sol::Policy::tf32:
    case sol::Policy::bf16:
      return {{Precision::tf32, Precision::tf32m},
              {Precision::f32x3s, Precision::f32x3k},
              {Precision::f32x3},
              {Precision::f32}};
  }
  return {{Precision::f32x3}};
}

namespace {

// One 128-byte swizzle row of K per operand dtype (64 for 16-bit, 32 for tf32) and twice that.
std::vector<int> sm90_tile_ks(Precision p) {
  return dsl::dtype_bytes(dsl::gemm_mma_dtype(p)) == 2 ? std::vector<int>{64, 128} : std::vector<int>{32, 64};
}

// The fp32-faithful CUTLASS 2.x tiles: gemm_rules' table.
std::vector<dsl::TileShape> sm80_tiles(Precision p) {
  std::vector<dsl::TileShape> out;
  for (const auto& r : dsl::gemm_sm80_tiles(p)) out.push_back({r.m, r.n, r.k});
  return out;
}

// The gemv schedules' chunk counts: one per SM, a quarter of that, then none (K in one chunk per
// row), each no more than K. What cuBLAS chose on the H200 (run AY): 132 chunks with groups of 16
// (8192 x 262144), 33 with groups of 32 (4096 and 2048 x 262144), one (16384 x 8192, 65536 x 4096).
std::vector<int> gemv_splits(int64_t k, int sms) {
  std::vector<int> out;
  for (int s : {sms, sms / 4, 1})
    if (s >= 1 && s <= k && s <= dsl::kGemvMaxSplitK && std::find(out.begin(), out.end(), s) == out.end())
      out.push_back(s);
  return out;
}

}  // namespace

std::vector<StageConfig> space_enumerate_gemm(const dsl::Program& p, int si, const dsl::GemmStage& g,
                                              const SpaceOptions& o) {
  std::vector<StageConfig> out;
  const dsl::Tensor* a = p.find_tensor(g.a.tensor);
  dsl::DType data = a ? a->dtype : dsl::DType::f32;
  std::vector<std::vector<Precision>> ladder = space_precision_ladder(o.policy, data);
  if (o.keep_precision && g.knobs.precision != Precision::auto_) ladder = {{g.knobs.precision}};
  const dsl::GemmKnobs& fx = g.knobs;
  bool keep = o.keep_explicit;
  for (size_t rung = 0; rung < ladder.size(); ++rung) {
   for (Precision prec : ladder[rung]) {
    // f32x3k keeps all three products in one tensor-core accumulator: offered where f32x3s keeps
    // its big x big product in one K piece too (gemm_f32x3s_split_k), the accuracy both share
    if (prec == Precision::f32x3k && fx.precision != Precision::f32x3k && dsl::gemm_f32x3s_split_k(g.k) > 1)
      continue;
    // f32x3w on a B [K, N] beside a transposed A transposes B's tiles in its split, at a third of
    // its speed with the other layouts (run DX, 34 against 106 TFLOP/s; slower than mma.sync's
    // f32x3): offered only with UCUTLASS_OFFER_F32X3W_KN=1 (docs/cli.md). Beside a K-major A the
    // unit computes the transposed product instead (gemm_f32x3w_swaps_ab) and is offered.
    if (prec == Precision::f32x3w && fx.precision != Precision::f32x3w && dsl::gemm_f32x3w_transposes_b(g) &&
        !space_offers_f32x3w_kn())
      continue;
    auto push = [&](dsl::GemmKnobs k) {
      StageConfig c;
      c.stage = si;
      c.is_gemm = true;
      k.precision = prec;
      c.gemm = k;
      c.rung = static_cast<int>(rung);
      out.push_back(std::move(c));
    };
    // FP32 FFMA in the orders of cuBLAS's two GEMV kernels (schedules gemv16, gemv32) for a
    // one-column GEMM: each group size and chunk count is its own summation order (gemv.cuh).
    if (prec == Precision::f32 && dsl::gemm_gemv_shape(g))
      for (auto sch : {dsl::Schedule::gemv16, dsl::Schedule::gemv32}) {
        if (keep && fx.schedule != dsl::Schedule::auto_ && fx.schedule != sch) continue;
        for (int sk : space_or_fixed<int>(keep, fx.split_k, gemv_splits(g.k, o.sms))) {
          dsl::GemmKnobs k;
          k.schedule = sch;
          k.split_k = sk;
          k.math = keep ? fx.math : dsl::MathMode::auto_;
          push(k);
        }
      }
    if (keep && dsl::is_gemv(fx.schedule)) continue;
    if (dsl::gemm_family(prec) == dsl::GemmFamily::sm80) {
      std::vector<dsl::TileShape> tiles = sm80_tiles(prec);
      if (keep && fx.tile) tiles = {*fx.tile};
      for (const auto& t : tiles)
        for (int st : space_or_fixed<int>(keep, fx.stages, prec == Precision::f32 ? std::vector<int>{3, 4, 5}
                                                                                : std::vector<int>{3, 4}))
          for (int sk : space_or_fixed<int>(keep, fx.split_k, prec == Precision::f32 ? kSimtSplits : kTensorOpSplits))
            for (int w : space_or_fixed<int>(keep, fx.swizzle, {1, 2, 4})) {
              dsl::GemmKnobs k;
              k.tile = t;
              k.stages = st;
              k.split_k = sk;
              k.swizzle = w;
              k.align = keep ? fx.align : std::nullopt;
              k.math = keep ? fx.math : dsl::MathMode::auto_;
              push(k);
            }
      continue;
    }
    std::vector<dsl::TileShape> tiles;
    for (int m : {64, 128, 256})
      for (int n : {64, 128, 256})
        for (int kk : sm90_tile_ks(prec)) tiles.push_back({m, n, kk});
    if (keep && fx.tile) tiles = {*fx.tile};
    std::vector<dsl::ClusterShape> clusters = {{1, 1}, {2, 1}, {1, 2}};
    if (keep && fx.cluster) clusters = {*fx.cluster};
    std::vector<dsl::Schedule> schedules = {dsl::Schedule::cooperative, dsl::Schedule::pingpong};
    if (keep && fx.schedule != dsl::Schedule::auto_) schedules = {fx.schedule};
    std::vector<dsl::TileScheduler> schedulers = {dsl::TileScheduler::persistent, dsl::TileScheduler::stream_k};
    if (keep && fx.scheduler != dsl::TileScheduler::auto_) schedulers = {fx.scheduler};
    std::vector<int> splits = {1};
    for (int s = 2; s <= o.max_split_k; s *= 2) splits.push_back(s);
    if (keep && fx.split_k) splits = {*fx.split_k};
    if (prec == Precision::f32x3w) {
      // its main loop's own shapes (gemm_rules: rule_f32x3w): its tiles on the cooperative kernel,
      // one output tile a work unit
      if (!(keep && fx.tile)) tiles.assign(dsl::gemm_f32x3w_tiles().begin(), dsl::gemm_f32x3w_tiles().end());
      if (!(keep && fx.schedule != dsl::Schedule::auto_)) schedules = {dsl::Schedule::cooperative};
      if (!(keep && fx.scheduler != dsl::TileScheduler::auto_)) schedulers = {dsl::TileScheduler::persistent};
      if (!(keep && fx.split_k)) splits = {1};
    }
    if (prec == Precision::f32x3s) {
      // the big x big GEMM in K pieces on stream-K (gemm_rules: rule_f32x3s)
      if (!(keep && fx.schedule != dsl::Schedule::auto_)) schedules = {dsl::Schedule::cooperative};
      const bool pieces = dsl::gemm_f32x3s_split_k(g.k) > 1;
      if (!(keep && fx.scheduler != dsl::TileScheduler::auto_))
        schedulers = {pieces ? dsl::TileScheduler::stream_k : dsl::TileScheduler::persistent};
      if (!(keep && fx.split_k)) splits = pieces ? std::vector<int>{4, 8} : std::vector<int>{1};
    }
    std::vector<dsl::Raster> rasters = {dsl::Raster::along_m, dsl::Raster::along_n};
    if (keep && fx.raster != dsl::Raster::auto_) rasters = {fx.raster};
    for (const auto& t : tiles)
      for (const auto& cl : clusters)
        for (auto sch : schedules)
          for (auto ts : schedulers)
            for (int sk : splits) {
              if (sk > 1 && ts != dsl::TileScheduler::stream_k) continue;  // split-K runs on stream-K
              for (auto r : rasters)
                for (int w : space_or_fixed<int>(keep, fx.swizzle, {1, 2, 4, 8})) {
                  dsl::GemmKnobs k;
                  k.tile = t;
                  k.cluster = cl;
                  k.stages = keep ? fx.stages : std::nullopt;
                  k.schedule = sch;
                  k.scheduler = ts;
                  k.split_k = sk;
                  k.raster = r;
                  k.swizzle = w;
                  k.align = keep ? fx.align : std::nullopt;
                  k.math = keep ? fx.math : dsl::MathMode::auto_;
                  push(k);
                }
            }
   }
  }
  return out;
}

Result<std::vector<StageConfig>> space_enumerate(const dsl::Program& p, int stage, const SpaceOptions& o) {
  if (stage < 0 || stage >= static_cast<int>(p.stages.size()))
    return make_error(ErrorCode::invalid_input,
                      "stage " + std::to_string(stage) + " does not exist; the program has " +
                          std::to_string(p.stages.size()) + " stage(s)",
                      "stages are numbered from 0 in program order");
  const dsl::Stage& st = p.stages[static_cast<size_t>(stage)];
  auto out = space_stage_kind(dsl::dsl_stage_kind_of(st)).enumerate(p, stage, o);
  if (!out) return out.error();
  for (auto& c : *out) c.name = space_candidate_name(p, c);
  return out;
}

Result<std::vector<StageConfig>> space_valid(const dsl::Program& p, int stage, const SpaceOptions& o) {
  auto all = space_enumerate(p, stage, o);
  if (!all) return all.error();
  std::vector<StageConfig> out;
  for (auto& c : *all)
    if (space_validate(p, c, o).empty()) out.push_back(std::move(c));
  return out;
}

}  // namespace ucut::space
