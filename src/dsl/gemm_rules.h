// The validity rules of GEMM stages and the `auto` resolver: exactly what makes a GEMM stage
// compile with the code generator (src/codegen/gemm_*.cpp) against CUTLASS 4.2 for sm_90a.
// The checker (dsl_check) reports each RuleViolation as a diagnostic at the named knob; the
// code generator resolves `auto` knobs with gemm_resolve_auto, and the search enumerates knob
// values and keeps those with no violation. A checked program that fails nvcc is a bug here.
//
// Two kernel families implement a GEMM stage:
//   sm90: CUTLASS 3.x warp-specialized TMA kernels (wgmma) for f16, bf16 and tf32, EVT epilogue;
//   sm80: CUTLASS 2.x multistage kernels (mma.sync / SIMT) for the fp32-faithful modes f32x3 and
//         f32, with the epilogue applied by a generated SIMT kernel after the GEMM.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dsl/program.h"

namespace ucut::dsl {

struct RuleViolation {
  std::string rule;     // predicate name, e.g. "fits_smem"
  std::string knob;     // knob to point at: tile cluster stages schedule scheduler split_k
                        // precision align raster swizzle a b out
  std::string message;  // what is wrong, with the numbers
  std::string hint;     // what to write instead
};

// Checks a (single) GEMM stage whose main output is `out`. `auto` knobs are resolved first
// (gemm_resolve_auto), so an explicit knob that leaves no legal choice for an `auto` one is
// reported at the explicit knob. Empty result: the stage compiles.
std::vector<RuleViolation> gemm_rules_check(const Program& program, const GemmStage& stage,
                                            const Tensor& out);

// The same rules for a grouped GEMM: knobs are shared, every group is checked.
std::vector<RuleViolation> gemm_rules_check_grouped(const Program& program,
                                                    const GroupedGemmStage& stage,
                                                    const std::vector<const Tensor*>& outs);

// Fills every `auto` knob with the heuristic default (explicit knobs are kept). When the
// explicit knobs leave no legal choice, the result is still complete; gemm_rules_check reports
// why. Schedule, scheduler, raster and math are never auto in the result.
GemmKnobs gemm_resolve_auto(const Program& program, const GemmStage& stage, const Tensor& out);

// f32x3s: the K pieces of its big x big TF32 GEMM by default (4 from K = 1024 on, where one
// piece's tensor-core accumulation drifts past atol = 1e-4; else 1), and the least it accepts.
int gemm_f32x3s_split_k(int64_t k);

// schedule gemv16 / gemv32 (runtime/gemv.cuh): the most K chunks it takes, and its auto: 132, one
// chunk per SM of an H100/H200, which is what cuBLAS chose for an 8192 x 262144 fp32 GEMV on the
// H200 (docs/benchmarks.md run AY). The language's split_k range is gemv's; the CUTLASS kernels take
// at most 16 (rule split_k_legal).
inline constexpr int kGemvMaxSplitK = 1024;
inline constexpr int kGemvDefaultSplitK = 132;
// Why a GEMM stage's shape is not one the gemv schedules run (one output column, no batch, A's
// rows contiguous along K, i.e. A untransposed; B [K, 1] is contiguous along K either way): the
// knob to point at and what the stage has, the first of them; nullopt when it is. The checker's
// rule gemv_shape and the space's offer ask this one test.
struct GemvShapeRefusal {
  std::string knob;  // "out" or "a"
  std::string what;  // "computes one output column; this GEMM has N = 4"
};
std::optional<GemvShapeRefusal> gemm_gemv_shape_refusal(const GemmStage& s);
inline bool gemm_gemv_shape(const GemmStage& s) { return !gemm_gemv_shape_refusal(s).has_value(); }
// Rows a block of the gemv kernel (runtime/gemv.cuh takes it as a template argument): 512 / G,
// 32 rows of 512 threads for groups of 16, 16 of 256 for 32; the fastest of 8, 16 and 32 on the
// H200 (docs/benchmarks.md run AY: 8192 x 262144 in 1.957 ms at 32 rows against 2.069 at 8).
inline int gemm_gemv_rows_per_block(Schedule s) { return 512 / gemv_group(s); }

// ---- facts shared with the code generator -------------------------------------------------

enum class GemmFamily { sm90, sm80 };
GemmFamily gemm_family(Precision p);

// The operand data type a precision needs (f16, bf16 or f32).
DType gemm_operand_dtype(Precision p);
// The dtype the tensor cores read: the operand dtype, but bf16 for bf16x3 (f32 data split into
// bf16 parts): its tiles, alignment, shared memory and TMA rows are a bf16 GEMM's.
DType gemm_mma_dtype(Precision p);
// The precisions the library runs as split stages and GEMMs over the parts
// (codegen_expand_split_gemms): f32x3s, f32x3k, bf16x3.
inline bool gemm_is_split(Precision p) {
  return p == Precision::f32x3s || p == Precision::f32x3k || p == Precision::bf16x3;
}
// bf16x3's bf16 GEMM adds its tensor-core sums into an fp32 sum every this many of K (3K, the
// parts side by side): two 64-wide k-tiles, one 128-wide.
inline constexpr int kBf16x3PromoteK = 128;
// Whether the stage's main loop promotes its tensor-core sums into fp32 (bf16x3, before or after
// its expansion), holding two sets of accumulators: its tiles get half the accumulator registers.
inline bool gemm_promotes(const GemmStage& s, const GemmKnobs& k) {
  return k.precision == Precision::bf16x3 || s.promote_k > 0;
}

// The CUTLASS 2.x (sm80) tiles of f32x3 and f32, in the order the space enumerates them: one
// table for the rules, the space and the code generator. Threadblock M N K, warp M N K.
struct Sm80Tile { int m, n, k, wm, wn, wk; };
std::span<const Sm80Tile> gemm_sm80_tiles(Precision p);
// The table row of tile `t` at precision `p`; nullptr when the kernel has no such tile.
const Sm80Tile* gemm_sm80_find(Precision p, const TileShape& t);

// Whether an operand is K-major in memory: A untransposed ([M,K] row-major) and B transposed
// (B given as [N,K], written W.T) are K-major.
inline bool gemm_a_k_major(const GemmStage& s) { return !s.a.transposed; }
inline bool gemm_b_k_major(const GemmStage& s) { return s.b.transposed; }
// f32x3w where A is K-major and B is [K, N]: the unit computes D.T = B.T A.T, so B's tiles are its
// main loop's register-sourced A (M-major: any layout reads through registers) and A's its K-major
// B; D and a residual are addressed column-major (the same memory), the output's per-row vectors and
// reductions are the unit's per-column ones (codegen/gemm_sm90.cpp). No tile is transposed.
inline bool gemm_f32x3w_swaps_ab(const GemmStage& s) { return gemm_a_k_major(s) && !gemm_b_k_major(s); }
// Whether the stage's unit at knobs `k` computes the transposed product (its M and N the output's
// N and M): the one test the code generator, the rules' shared-memory count and the ranking share.
inline bool gemm_unit_transposed(const GemmStage& s, const GemmKnobs& k) {
  return k.precision == Precision::f32x3w && gemm_f32x3w_swaps_ab(s);
}
// f32x3w whose split transposes B's tiles (B [K, N] beside a transposed A): the slow form.
inline bool gemm_f32x3w_transposes_b(const GemmStage& s) { return !gemm_a_k_major(s) && !gemm_b_k_major(s); }

// The sm90 epilogue shared-memory estimate in bytes (an upper bound of CUTLASS's
// CollectiveEpilogue::SharedStorage plus the kernel's fixed shared state), used for explicit
// stage counts. `has_source`: a full residual is read through C; `staged_vectors`: the vectors
// CUTLASS's Sm90RowBroadcast stages in shared memory (one per v[col] leaf, or per v[row] leaf where
// f32x3w swaps A and B); per-row broadcasts and reductions live in registers.
int gemm_sm90_epilogue_smem(const GemmKnobs& k, DType out, bool has_source, DType source, int staged_vectors);
// Bytes of one mainloop stage (A tile + B tile + its pipeline barrier).
int gemm_sm90_stage_bytes(const GemmKnobs& k);
// f32x3w's part buffers beside its stages (runtime/gemm_f32x3w_rs.cuh: A is split in registers),
// double-buffered (the split of the k-tile in flight and of the next one), 1 KiB of slack each (to
// match or reach a swizzle phase): the unit's B's small parts, and where its split transposes B
// (gemm_f32x3w_transposes_b) its big parts too; 0 for other precisions.
int gemm_f32x3w_small_bytes(const GemmStage& s, const GemmKnobs& k);
// f32x3w's tiles (the main loop's three accumulators a thread and its doubled shared memory allow),
// `auto`'s first: one table for the rules, the resolver and the space.
std::span<const TileShape> gemm_f32x3w_tiles();
// f32x3w adds the big x big product's tensor-core sum into an fp32 total every this many k-tiles
// (runtime/gemm_f32x3w.cuh, Promote), as FP8 GEMMs promote theirs: TF32 wgmma accumulation drifts
// past atol = 1e-4 over K in the thousands (rule_f32x3s).
inline constexpr int kF32x3wPromoteKTiles = 4;
// Usable shared memory per block on sm_90 (cutlass::gemm::collective::detail::
// sm90_smem_capacity_bytes): 227 KiB.
inline constexpr int kSm90SmemBytes = 232448;

// Canonical configuration name of resolved knobs, e.g.
// "gemm_bf16_t128x256x64_c2x1_sA_coop_persist_k1_rm_w1". Identity for caches and memory.
std::string gemm_config_name(const GemmKnobs& resolved, bool stages_auto);

const char* precision_name(Precision p);
const char* dtype_name(DType t);

}  // namespace ucut::dsl
