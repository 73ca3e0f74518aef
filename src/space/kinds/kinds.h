// The space layer's table of stage kinds (the registry's space column; the key is dsl::StageKind,
// dsl/stage_kinds.def): per kind, how its configurations are enumerated, validated, ranked, named
// and written back into the stage, and what the space's facts read from it. space_enumerate,
// space_validate, space_rank, space_apply, space_candidate_name, simt_facts and space_tf32_bound
// look the stage's kind up here instead of switching over kinds. One file per kind in this folder
// defines its entry (`space_kind_<id>`); table.cpp lists them from stage_kinds.def, so a kind
// without an entry fails to link.
#pragma once

#include <set>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "dsl/stage_kind.h"
#include "space/space.h"
#include "space/stage_facts.h"

namespace ucut::space {

struct SpaceStageKind {
  dsl::StageKind id;
  bool rows_kind;  // rows_per_block applies (SimtFacts::rows_kind)
  // The configurations considered for stage `si`, in a fixed order, not yet named or validated.
  Result<std::vector<StageConfig>> (*enumerate)(const dsl::Program& p, int si, const SpaceOptions& o);
  // What the facts read (SimtFacts): the tensor whose shape is the stage's data shape, and the
  // tensors the stage reads (duplicates allowed).
  void (*io)(const dsl::Program& p, const dsl::Stage& st, std::string& data, std::vector<std::string>& reads);
  std::vector<Violation> (*validate)(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o);
  RankedConfig (*rank)(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c, const sol::HwSpec& hw);
  void (*apply)(dsl::Stage& st, const StageConfig& c);
  std::string (*name)(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c);
  // The tensors a row or column reduction of this stage reads (space_tf32_bound: a GEMM result
  // they read is normalized or summed before it reaches an output); most kinds add none.
  void (*reduction_reads)(const dsl::Stage& st, std::set<std::string>& out);
  // The elements of one row of a row kernel where that is not the data's last dimension
  // (SimtFacts::row_len; group_norm's rows are (sample, group) pairs); null or 0: the last dimension.
  int64_t (*row_length)(const dsl::Program& p, const dsl::Stage& st) = nullptr;
};

const SpaceStageKind& space_stage_kind(dsl::StageKind k);

#define UCUT_STAGE_KIND(id, Type) extern const SpaceStageKind space_kind_##id;
#include "dsl/stage_kinds.def"
#undef UCUT_STAGE_KIND

// ---- parts the entries share ----------------------------------------------------------------

template <typename T>
std::vector<T> space_or_fixed(bool keep, const std::optional<T>& fixed, std::vector<T> all) {
  if (keep && fixed) return {*fixed};
  return all;
}

// stage_facts.cpp: append the tensors a block (prologue, epilogue, body) loads.
void space_block_loads(const dsl::Epilogue& block, std::vector<std::string>& reads);

// enumerate.cpp: the GEMM stage's configurations (every precision of the policy's ladder).
std::vector<StageConfig> space_enumerate_gemm(const dsl::Program& p, int si, const dsl::GemmStage& g,
                                              const SpaceOptions& o);
// simt.cpp: the SIMT grid of threads x rows per block x vector width x cluster over the stage's
// knobs `fx` (rows: rows_per_block applies; clusters: 0 for none), appended to `out`.
void space_enumerate_simt_grid(int si, const dsl::SimtKnobs& fx, bool rows, const std::vector<int>& clusters,
                               const SpaceOptions& o, std::vector<StageConfig>& out);
// One configuration with no knobs (a stage the host runs).
std::vector<StageConfig> space_enumerate_none(int si);

// validate.cpp: the GEMM legality and space rules; the SIMT rules and the launch plan's.
std::vector<Violation> space_validate_gemm(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o);
std::vector<Violation> space_validate_simt(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o);
std::vector<Violation> space_validate_none(const dsl::Program& p, const StageConfig& c, const SpaceOptions& o);

// rank.cpp: the analytic models.
RankedConfig space_rank_gemm(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c,
                             const sol::HwSpec& hw);
RankedConfig space_rank_simt(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c,
                             const sol::HwSpec& hw);
RankedConfig space_rank_attention(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c,
                                  const sol::HwSpec& hw);
// space_rank_simt's estimate of `r` again with the efficiency `eff` (its t_sol and wave_eff kept):
// a kind's own rank that knows its kernel better than the generic model.
void space_simt_set_eff(RankedConfig& r, double eff);
// The access-width efficiency of the SIMT model (bytes one access moves).
double space_access_eff(int bytes);
RankedConfig space_rank_torch(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c,
                              const sol::HwSpec& hw);

// Write the candidate's knobs into a stage of body type `Body`: a GEMM family's knobs when the
// candidate is a GEMM configuration, a SIMT family's when it is not.
template <class Body>
void space_apply_knobs(dsl::Stage& st, const StageConfig& c) {
  auto& body = std::get<Body>(st.body);
  if constexpr (std::is_same_v<decltype(body.knobs), dsl::GemmKnobs>) {
    if (c.is_gemm) body.knobs = c.gemm;
  } else {
    if (!c.is_gemm) body.knobs = c.simt;
  }
}
void space_apply_none(dsl::Stage& st, const StageConfig& c);

// simt.cpp: the SIMT configuration name ("rowwise_th256_rpb1_v4"); no reduction reads.
std::string space_simt_name(const dsl::Program& p, const dsl::Stage& st, const StageConfig& c);
void space_no_reduction_reads(const dsl::Stage& st, std::set<std::string>& out);

}  // namespace ucut::space
