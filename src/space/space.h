// The search space of one stage of a checked program: enumerate the knob settings
// (enumerate.cpp), keep the valid ones (validate.cpp: gemm_rules_check plus named space rules),
// rank them analytically before anything is compiled (rank.cpp: SOL time at the precision,
// wave quantization, tile padding, pipeline depth, cluster multicast, epilogue cost), apply one
// to a program and list its one-knob neighbours for local refinement (apply.cpp).
// Everything here is pure and deterministic: the same inputs give the same lists in the same order.
#pragma once

#include <string>
#include <vector>

#include "dsl/gemm_rules.h"
#include "dsl/program.h"
#include "sol/hardware.h"
#include "sol/peaks.h"
#include "space/knobs.h"
#include "support/result.h"

namespace ucut::space {

struct SpaceOptions {
  sol::Policy policy = sol::Policy::tf32;
  // Explicit (non-auto) knobs of the stage stay fixed; auto ones are enumerated. The precision
  // is always taken from the policy's ladder unless keep_precision is set.
  bool keep_explicit = true;
  bool keep_precision = false;
  int max_split_k = 8;  // split_k values tried: 2, 4, ... up to this
  // The GPU's multiprocessors (sol::HwSpec::sms; RealSpace sets it): the gemv schedules'
  // first chunk count, one chunk per SM as cuBLAS's GEMV splits K.
  int sms = 132;
};

// One configuration of one stage. GEMM stages fill `gemm` (every knob explicit except those the
// kernel family requires auto, e.g. schedule on the fp32-faithful sm80 kernels); other stages
// fill `simt`. `name` is the canonical configuration name, the configuration's identity. A
// program candidate (search::Candidate) is one StageConfig per stage, applied to the program.
struct StageConfig {
  int stage = 0;
  bool is_gemm = true;
  dsl::GemmKnobs gemm;
  dsl::SimtKnobs simt;
  int rung = 0;  // position on the precision ladder: 0 is tried first, later rungs are fallbacks
  std::string name;
};

struct Violation {
  std::string rule;     // "fits_smem", "split_k_useful", ...
  std::string message;  // with the numbers
};

// The ranking of one stage configuration, with the factors that produced it (for `ucutlass space`).
struct RankedConfig {
  StageConfig config;
  double t_est = 0;          // seconds, the analytic estimate
  double t_sol = 0;          // seconds, the stage's roofline at this precision
  double wave_eff = 1;       // busy SM fraction over all waves
  double tile_eff = 1;       // useful / padded MACs (or elements)
  double mainloop_eff = 1;   // tile shape, pipeline depth and multicast factor
  double epilogue_s = 0;     // epilogue time not hidden behind the mainloop
};

// The grid an SM90 GEMM's tile scheduler runs for tiles_m x tiles_n output tiles with a cluster
// and a requested swizzle (CUTLASS's own padding: whole clusters, then whole swizzle x cluster
// groups, the swizzle cut to what the grid allows); its padded tiles run the mainloop too.
struct Sm90Grid {
  int64_t tiles_m = 0, tiles_n = 0;
  int swizzle = 1;  // the swizzle the scheduler keeps
};
Sm90Grid sm90_grid(int64_t tiles_m, int64_t tiles_n, int cluster_m, int cluster_n, int swizzle);

// The precision ladder of a GEMM stage under a policy: its rungs, first tried first, each the
// precisions of one accuracy (a candidate's `rung`). f32 data: exact -> {f32x3s, f32x3k, f32x3w},
// f32x3, f32; tf32 -> {tf32, tf32m}, {f32x3s, f32x3k, f32x3w}, f32x3, f32 (tf32m: TF32 on mma.sync, for the
// operand layouts wgmma's TF32 does not read; f32x3k only where K < 1024, enumerate.cpp);
// bf16 -> as tf32 (bf16 math on f32 data needs the lowering's
// conversion stages). f16/bf16 data: that dtype only.
std::vector<std::vector<dsl::Precision>> space_precision_ladder(sol::Policy policy, dsl::DType operand_dtype);
// The f32 ladder of a policy, before any experimental precision joins it.
std::vector<std::vector<dsl::Precision>> space_precision_ladder_base(sol::Policy policy);
// Whether f32x3w is on the 3xTF32-on-wgmma rung: yes unless UCUTLASS_OFFER_F32X3W=0 (docs/optimizer.md).
bool space_offers_f32x3w();
// Whether f32x3w is enumerated where B is [K, N] (its split transposes B's tiles,
// runtime/gemm_f32x3w_rs.cuh; run DX: 34 TFLOP/s): only with UCUTLASS_OFFER_F32X3W_KN=1.
bool space_offers_f32x3w_kn();
// Whether f32 data's ladder under the tf32 and bf16 policies holds bf16x3 (three bf16 products,
// split stages and one promoted bf16 GEMM) as its own rung between TF32 and 3xTF32: only with
// UCUTLASS_OFFER_BF16X3=1 until it is measured on a GPU (docs/cli.md).
bool space_offers_bf16x3();

// Every knob combination considered for `stage` (not yet validated), in a fixed order.
// Errors: the stage index is out of range.
Result<std::vector<StageConfig>> space_enumerate(const dsl::Program& program, int stage,
                                               const SpaceOptions& options);

// Why a candidate is not valid (empty: valid): the GEMM legality rules (gemm_rules_check) and
// the space's own rules (split_k_useful, cluster_within_grid, tile_not_oversized,
// swizzle_within_grid, simt_* rules).
std::vector<Violation> space_validate(const dsl::Program& program, const StageConfig& c,
                                      const SpaceOptions& options);

// enumerate + validate: the valid candidates, in enumeration order.
Result<std::vector<StageConfig>> space_valid(const dsl::Program& program, int stage,
                                           const SpaceOptions& options);

// Ranks candidates by (rung, estimated time, name): fastest first on each rung of the ladder.
std::vector<RankedConfig> space_rank(const dsl::Program& program,
                                        const std::vector<StageConfig>& candidates,
                                        const sol::HwSpec& hw);

// The program with the candidate's knobs written into its stage.
dsl::Program space_apply(const dsl::Program& program, const StageConfig& c);

// Valid candidates that differ from `c` in exactly one knob, in knob-table order.
std::vector<StageConfig> space_neighbors(const dsl::Program& program, const StageConfig& c,
                                       const SpaceOptions& options);

// Fills in candidate.name from its knobs (gemm_config_name of the resolved knobs, or the SIMT
// stage's "rowwise_th256_rpb1_v4"-style name).
std::string space_candidate_name(const dsl::Program& program, const StageConfig& c);

}  // namespace ucut::space
