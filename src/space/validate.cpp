// space_validate: the GEMM legality rules (gemm_rules_check on the stage with the candidate's
// knobs: what compiles) plus the space's own rules (what is worth compiling), each a named
// predicate returning the reason with its numbers. The SIMT rules mirror the checker's knob
// checks so invalid SIMT candidates never reach dsl_compile. Each kind's entry (space/kinds/) picks
// its rules; space_validate looks the stage's kind up.
#include <variant>

#include "dsl/simt_plan.h"
#include "space/kinds/kinds.h"
#include "space/space.h"
#include "space/stage_facts.h"

namespace ucut::space {

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
std::string str(int64_t v) { return std::to_string(v); }

// split_k_useful: splitting K only pays when the M x N tiles cannot fill the GPU and each split
// still has enough K tiles to pipeline. Limits: fewer output tiles than half the 132 SMs of an
// H100/H200 (a fuller grid gains nothing from more CTAs), and at least 4 K tiles per split (a
// mainloop of fewer iterations cannot hide its prologue and the partial-sum fix-up).
constexpr int64_t kSplitKMaxTiles = 66;
constexpr int64_t kSplitKMinKTilesPerSplit = 4;
void rule_split_k_useful(const GemmFacts& f, const dsl::GemmKnobs& k, std::vector<Violation>& v) {
  int sk = k.split_k.value_or(1);
  if (sk <= 1) return;
  // f32x3s splits K for accuracy, not for filling the grid (gemm_rules: rule_f32x3s), and FP32
  // SIMT for the reference's summation order (enumerate.cpp): only the pipelining limit applies
  if (k.precision == dsl::Precision::f32x3s || k.precision == dsl::Precision::f32) {
    if (ceil_div(f.k, k.tile->k) < kSplitKMinKTilesPerSplit * sk)
      v.push_back({"split_k_useful", "split_k " + str(sk) + " leaves " + str(ceil_div(f.k, k.tile->k) / sk) +
                                         " K tiles per split (K=" + str(f.k) + "), fewer than " +
                                         str(kSplitKMinKTilesPerSplit)});
    return;
  }
  int64_t tiles = ceil_div(f.m, k.tile->m) * ceil_div(f.n, k.tile->n) * f.batch;
  int64_t k_tiles = ceil_div(f.k, k.tile->k);
  if (tiles >= kSplitKMaxTiles)
    v.push_back({"split_k_useful", "split_k " + str(sk) + " with " + str(tiles) + " output tiles: the grid is already full (" +
                                       str(tiles) + " >= " + str(kSplitKMaxTiles) + ")"});
  else if (k_tiles < kSplitKMinKTilesPerSplit * sk)
    v.push_back({"split_k_useful", "split_k " + str(sk) + " leaves " + str(k_tiles / sk) + " K tiles per split (K=" +
                                       str(f.k) + "), fewer than " + str(kSplitKMinKTilesPerSplit)});
}

// cluster_within_grid: a cluster larger than the tile grid along an axis launches CTAs with no
// work and multicasts to nobody.
void rule_cluster_within_grid(const GemmFacts& f, const dsl::GemmKnobs& k, std::vector<Violation>& v) {
  if (!k.cluster) return;
  int64_t tm = ceil_div(f.m, k.tile->m), tn = ceil_div(f.n, k.tile->n);
  if (k.cluster->m > tm || k.cluster->n > tn)
    v.push_back({"cluster_within_grid", "cluster " + str(k.cluster->m) + "x" + str(k.cluster->n) + " exceeds the " +
                                            str(tm) + "x" + str(tn) + " tile grid"});
}

// tile_not_oversized: a tile extent beyond the problem extent rounded up to 64 (the smallest
// wgmma tile step) only computes padding. The CUTLASS 2.x tables have no 64x64 tile, so where none
// of the family's tiles fits (a 64 x 16 output: Mamba2's chunk states) the rule leaves M and N to
// the ranking's padding cost instead of rejecting every tile.
void rule_tile_not_oversized(const GemmFacts& f, const dsl::GemmKnobs& k, std::vector<Violation>& v) {
  auto cap = [](int64_t e) { return std::max<int64_t>(64, ceil_div(e, 64) * 64); };
  bool some_fits = true;
  if (dsl::gemm_family(k.precision) == dsl::GemmFamily::sm80) {
    some_fits = false;
    for (const auto& t : dsl::gemm_sm80_tiles(k.precision)) some_fits = some_fits || (t.m <= cap(f.m) && t.n <= cap(f.n));
  }
  if (some_fits && (k.tile->m > cap(f.m) || k.tile->n > cap(f.n)))
    v.push_back({"tile_not_oversized", "tile " + str(k.tile->m) + "x" + str(k.tile->n) + " is larger than the " +
                                           str(f.m) + "x" + str(f.n) + " output"});
  if (k.tile->k > std::max<int64_t>(f.k, 8) * 2)
    v.push_back({"tile_not_oversized", "tile K " + str(k.tile->k) + " is more than twice K=" + str(f.k)});
}

// swizzle_within_grid: swizzling groups `swizzle` tiles across the raster direction; wider than
// the grid it only reorders nothing (and duplicates a configuration).
void rule_swizzle_within_grid(const GemmFacts& f, const dsl::GemmKnobs& k, std::vector<Violation>& v) {
  int w = k.swizzle.value_or(1);
  if (w <= 1) return;
  int64_t across = k.raster == dsl::Raster::along_n ? ceil_div(f.m, k.tile->m) : ceil_div(f.n, k.tile->n);
  if (w > across)
    v.push_back({"swizzle_within_grid", "swizzle " + str(w) + " is wider than the " + str(across) +
                                            " tiles across the raster direction"});
}

// SIMT rules (the checker's, so invalid settings never reach it).
void simt_rules(const SimtFacts& f, const dsl::SimtKnobs& k, std::vector<Violation>& v) {
  int th = k.threads.value_or(256), vw = k.vector_width.value_or(1);
  if (th % 32 != 0 || th < 32 || th > 1024)
    v.push_back({"simt_threads_legal", "threads " + str(th) + " is not a multiple of 32 from 32 to 1024"});
  if (vw * f.elem_bytes > 16)
    v.push_back({"simt_vector_fits", "vector_width " + str(vw) + " is " + str(vw * f.elem_bytes) +
                                         " bytes; one access loads at most 16"});
  if (f.last_dim % vw != 0)
    v.push_back({"simt_vector_divides", "vector_width " + str(vw) + " does not divide the last dimension " +
                                            str(f.last_dim)});
  // simt_block_not_idle: a block wider than the work it is given leaves threads idle; with
  // rows_per_block r a block covers r rows of `cols` elements in `vw`-wide accesses.
  if (f.rows_kind && k.rows_per_block) {
    int64_t work = *k.rows_per_block * ceil_div(f.last_dim, vw);
    if (work * 2 <= th && th > 128)
      v.push_back({"simt_block_not_idle", "threads " + str(th) + " for " + str(work) + " vector accesses per block"});
    if (*k.rows_per_block > 1 && f.last_dim / vw >= th)
      v.push_back({"simt_rows_per_block_small_rows", "rows_per_block " + str(*k.rows_per_block) +
                                                         " with rows that already fill a block"});
    // The code generator's grouping rule (dsl/simt_plan.h).
    const int r = *k.rows_per_block;
    if (!dsl::simt_row_group_ok(th, r))
      v.push_back({"simt_rows_per_block_group", "rows_per_block " + str(r) + " does not split " + str(th) +
                                                    " threads into a power-of-two group of at most 32 lanes per row"});
  } else if (!f.rows_kind && f.total > 0 && ceil_div(f.total, vw) < th && th > 128) {
    v.push_back({"simt_block_not_idle", "threads " + str(th) + " for " + str(ceil_div(f.total, vw)) + " accesses"});
  }
}

}  // namespace

std::vector<Violation> space_validate_gemm(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o) {
  (void)o;
  std::vector<Violation> v;
  const dsl::Stage& st = p.stages.at(static_cast<size_t>(c.stage));
  dsl::GemmStage s = std::get<dsl::GemmStage>(st.body);
  s.knobs = c.gemm;
  const dsl::Tensor* out = p.find_tensor(st.outputs.at(0));
  for (const auto& r : dsl::gemm_rules_check(p, s, *out)) v.push_back({r.rule, r.message});
  if (!v.empty()) return v;  // the space rules assume a legal, fully resolved stage
  GemmFacts f = gemm_facts(p, s);
  dsl::GemmKnobs k = dsl::gemm_resolve_auto(p, s, *out);
  if (dsl::is_gemv(k.schedule)) return v;  // no tile, cluster or swizzle to judge
  rule_split_k_useful(f, k, v);
  rule_cluster_within_grid(f, k, v);
  rule_tile_not_oversized(f, k, v);
  rule_swizzle_within_grid(f, k, v);
  return v;
}

std::vector<Violation> space_validate_simt(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o) {
  (void)o;
  std::vector<Violation> v;
  const dsl::Stage& st = p.stages.at(static_cast<size_t>(c.stage));
  simt_rules(simt_facts(p, st), c.simt, v);
  // simt_plan: the launch plan the code generator would make for these knobs exists (the
  // checker's and the code generator's rule, dsl/simt_plan.h)
  if (v.empty()) {
    const dsl::Program applied = space_apply(p, c);
    const dsl::Stage& ast = applied.stages.at(static_cast<size_t>(c.stage));
    if (auto why = dsl::simt_plan_refusal(ast, [&](const std::string& n) { return applied.find_tensor(n); }))
      v.push_back({"simt_plan", why->message});
  }
  return v;
}

std::vector<Violation> space_validate_none(const dsl::Program&, const StageConfig&, const SpaceOptions&) {
  return {};  // no knobs to judge
}

std::vector<Violation> space_validate(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o) {
  const dsl::Stage& st = p.stages.at(static_cast<size_t>(c.stage));
  const dsl::StageKind kind = dsl::dsl_stage_kind_of(st);
  if (c.is_gemm && kind != dsl::StageKind::gemm && kind != dsl::StageKind::conv)
    return {{"stage_kind", "a GEMM configuration for a non-GEMM stage"}};
  return space_stage_kind(kind).validate(p, c, o);
}

}  // namespace ucut::space
