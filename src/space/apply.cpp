// space_apply (write a candidate's knobs into its stage), space_neighbors (one knob changed at a
// time, for local refinement around the best candidate) and space_candidate_name (identity).
#include <algorithm>
#include <set>
#include <variant>

#include "space/kinds/kinds.h"
#include "space/space.h"

namespace ucut::space {

std::string space_candidate_name(const dsl::Program& p, const StageConfig& c) {
  const dsl::Stage& st = p.stages.at(static_cast<size_t>(c.stage));
  const dsl::StageKind kind = dsl::dsl_stage_kind_of(st);
  if (c.is_gemm && kind != dsl::StageKind::gemm && kind != dsl::StageKind::conv) return "invalid";
  return space_stage_kind(kind).name(p, st, c);
}

dsl::Program space_apply(const dsl::Program& p, const StageConfig& c) {
  dsl::Program out = p;
  dsl::Stage& st = out.stages.at(static_cast<size_t>(c.stage));
  space_stage_kind(dsl::dsl_stage_kind_of(st)).apply(st, c);
  return out;
}

namespace {

// Which knobs two candidates differ in.
int gemm_diff(const dsl::GemmKnobs& a, const dsl::GemmKnobs& b) {
  auto tile_eq = [](const std::optional<dsl::TileShape>& x, const std::optional<dsl::TileShape>& y) {
    return x.has_value() == y.has_value() && (!x || (x->m == y->m && x->n == y->n && x->k == y->k));
  };
  auto cl_eq = [](const std::optional<dsl::ClusterShape>& x, const std::optional<dsl::ClusterShape>& y) {
    return x.has_value() == y.has_value() && (!x || (x->m == y->m && x->n == y->n));
  };
  int d = 0;
  d += a.precision != b.precision;
  d += !tile_eq(a.tile, b.tile);
  d += !cl_eq(a.cluster, b.cluster);
  d += a.stages != b.stages;
  d += a.schedule != b.schedule;
  // scheduler and split_k move together (split-K runs on the stream-K scheduler): one knob.
  d += (a.scheduler != b.scheduler || a.split_k != b.split_k);
  d += a.raster != b.raster;
  d += a.swizzle != b.swizzle;
  d += a.align != b.align;
  d += a.math != b.math;
  return d;
}

int simt_diff(const dsl::SimtKnobs& a, const dsl::SimtKnobs& b) {
  return (a.threads != b.threads) + (a.rows_per_block != b.rows_per_block) + (a.vector_width != b.vector_width) +
         (a.items_per_thread != b.items_per_thread) + (a.passes != b.passes) + (a.cluster != b.cluster) +
         (a.order != b.order);
}

}  // namespace

std::vector<StageConfig> space_neighbors(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o) {
  // The neighbourhood is the valid space filtered to one-knob differences: every neighbour is
  // a point the enumeration would produce, so names and validity agree by construction. The
  // candidate's own knobs are not held fixed (keep_explicit off) so every knob can move.
  SpaceOptions all = o;
  all.keep_explicit = false;
  auto valid = space_valid(p, c.stage, all);
  std::vector<StageConfig> out;
  if (!valid) return out;
  std::set<std::string> seen{c.name};
  for (auto& v : *valid) {
    int d = c.is_gemm ? gemm_diff(v.gemm, c.gemm) : simt_diff(v.simt, c.simt);
    if (d == 1 && seen.insert(v.name).second) out.push_back(std::move(v));
  }
  return out;
}

}  // namespace ucut::space
