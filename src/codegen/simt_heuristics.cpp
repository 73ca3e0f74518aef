#include "codegen/simt_heuristics.h"

#include <algorithm>
#include <string>

#include "codegen/simt_common.h"
#include "dsl/simt_rules.h"

namespace ucut::codegen {
namespace {

bool pow2(int v) { return v > 0 && (v & (v - 1)) == 0; }

Status check_threads(int t) {
  if (t < 32 || t > 1024 || t % 32 != 0)
    return make_error(ErrorCode::invalid_input,
                      "threads " + std::to_string(t) + " is not a multiple of 32 in [32, 1024]",
                      "use 128, 256, 512 or 1024, or auto");
  return ok_status();
}

Result<int> pick_vec(const dsl::SimtKnobs& knobs, int bytes, int64_t inner) {
  int best = simt_vector_width(bytes, inner);
  if (!knobs.vector_width) return best;
  int v = *knobs.vector_width;
  if (!pow2(v) || v * bytes > 16)
    return make_error(ErrorCode::invalid_input,
                      "vector width " + std::to_string(v) +
                          " is not a power of two of at most 16 bytes",
                      "use at most " + std::to_string(16 / bytes) + " for this dtype, or auto");
  if (inner % v != 0)
    return make_error(ErrorCode::invalid_input,
                      "vector width " + std::to_string(v) + " does not divide the innermost extent " +
                          std::to_string(inner),
                      "use " + std::to_string(best) + " or auto");
  return v;
}

}  // namespace

Result<RowPlan> simt_plan_rowwise(int64_t rows, int64_t cols, int in_bytes,
                                  const dsl::SimtKnobs& knobs) {
  (void)rows;
  RowPlan p;
  auto vec = pick_vec(knobs, in_bytes, cols);
  if (!vec) return vec.error();
  p.vec = *vec;
  const int64_t nv = cols / p.vec;
  if (knobs.threads) {
    if (auto s = check_threads(*knobs.threads); !s) return s.error();
  }
  if (knobs.rows_per_block) {
    int r = *knobs.rows_per_block;
    int t = knobs.threads ? *knobs.threads : std::max(32, std::min(1024, r * 32));
    if (!dsl::simt_row_group_ok(t, r))
      return make_error(ErrorCode::invalid_input,
                        "rows per block " + std::to_string(r) + " does not split " +
                            std::to_string(t) + " threads into a power-of-two group of at most 32 lanes "
                            "(or 1 row per block)",
                        "use 1 (block per row) or threads/32 (warp per row)");
    p.threads = t;
    p.group = t / r;
  } else if (knobs.threads) {
    p.threads = *knobs.threads;
    p.group = nv <= 128 ? std::min(32, std::max(1, simt_next_pow2((nv + 3) / 4))) : p.threads;
  } else if (nv <= 128) {
    p.threads = 256;
    p.group = std::min(32, std::max(1, simt_next_pow2((nv + 3) / 4)));
  } else {
    p.threads = std::clamp(simt_next_pow2((nv + 7) / 8), 128, 1024);
    p.group = p.threads;
  }
  const int64_t need = (nv + p.group - 1) / p.group;  // vectors per thread to cache the row
  const bool fits = need * p.vec <= 32 || (need * p.vec <= 64 && p.threads <= 512);
  bool cached = fits;
  if (knobs.passes) {
    if (*knobs.passes == 1 && !fits)
      return make_error(ErrorCode::invalid_input,
                        "passes 1 needs the row of " + std::to_string(cols) +
                            " elements in registers, more than " + std::to_string(p.group) +
                            " threads can hold",
                        "use passes 2 or auto");
    if (*knobs.passes < 1 || *knobs.passes > 2)
      return make_error(ErrorCode::invalid_input, "passes must be 1 or 2", "use 1, 2 or auto");
    cached = *knobs.passes == 1;
  }
  p.cached = cached;
  if (knobs.items_per_thread) {
    int it = *knobs.items_per_thread;
    if (it < 1 || it > 64)
      return make_error(ErrorCode::invalid_input, "items per thread must be in [1, 64]", "or auto");
    if (cached && it < need)
      return make_error(ErrorCode::invalid_input,
                        "items per thread " + std::to_string(it) + " cannot cache a row of " +
                            std::to_string(cols) + " elements (needs " + std::to_string(need) + ")",
                        "use at least " + std::to_string(need) + ", passes 2, or auto");
    p.items = it;
  } else {
    p.items = cached ? static_cast<int>(std::max<int64_t>(1, need)) : 4;
  }
  if (!knobs.threads && !knobs.rows_per_block && !cached) {
    p.threads = 1024;
    p.group = 1024;
  }
  return p;
}

Result<ReducePlan> simt_plan_reduce(bool inner, int64_t inner_run, int64_t n_out,
                                    int64_t r_total, int in_bytes, const dsl::SimtKnobs& knobs) {
  ReducePlan p;
  auto vec = pick_vec(knobs, in_bytes, inner_run);
  if (!vec) return vec.error();
  p.vec = *vec;
  if (knobs.threads) {
    if (auto s = check_threads(*knobs.threads); !s) return s.error();
    p.threads = *knobs.threads;
  } else {
    // Column (outer) reductions: 1024 threads = 32 rows of threads per block keep the most
    // loads in flight. H200, 16384x16384 fp32 column max: 256 threads 70% of copy bandwidth,
    // 512 84%, 1024 88% (docs/benchmarks.md, run C).
    p.threads = inner ? (r_total >= 4096 ? 512 : 128) : 1024;
  }
  // blocks without splitting
  const int64_t tiles = inner ? n_out
                              : n_out / inner_run * ((inner_run + 32 * p.vec - 1) / (32 * p.vec));
  // Column reductions: this split count (16 blocks per SM) only bounds the workspace; the
  // launcher picks the count that fills one wave of resident blocks at run time
  // (ucut_simt::one_wave_splits). Fixed splits left a partly full last wave: 640 blocks of 1024
  // threads ran 2.4 waves (docs/benchmarks.md, runs C-E).
  const int64_t want_blocks = (inner ? 4LL : 16LL) * kSimtSmCount;
  // at least 32 Ki elements a split: the inner kernel counts elements, the outer kernel counts
  // reduced rows of 32*VEC elements each
  const int64_t min_chunk = inner ? 32 * 1024 : std::max<int64_t>(64, 32 * 1024 / (32 * p.vec));
  int64_t splits = 1;
  if (tiles < want_blocks && r_total >= 2 * min_chunk)
    splits = std::min<int64_t>((want_blocks + tiles - 1) / tiles, r_total / min_chunk);
  splits = std::clamp<int64_t>(splits, 1, 65535);
  int64_t chunk = (r_total + splits - 1) / splits;
  if (inner) chunk = (chunk + p.vec - 1) / p.vec * p.vec;  // vectors never straddle splits
  splits = (r_total + chunk - 1) / std::max<int64_t>(chunk, 1);
  p.splits = static_cast<int>(std::max<int64_t>(splits, 1));
  p.r_chunk = std::max<int64_t>(chunk, 1);
  return p;
}

Result<ScanPlan> simt_plan_scan(int64_t rows, int64_t cols, int in_bytes,
                                const dsl::SimtKnobs& knobs) {
  (void)rows;
  ScanPlan p;
  auto vec = pick_vec(knobs, in_bytes, cols);
  if (!vec) return vec.error();
  p.vec = *vec;
  if (knobs.threads) {
    if (auto s = check_threads(*knobs.threads); !s) return s.error();
    p.threads = *knobs.threads;
  } else {
    p.threads = cols < 2048 ? 128 : 256;
  }
  // enough items to hold a row of up to 16*threads elements in one tile (fewer carries and
  // barriers), between one and four vectors a thread
  const int64_t per_thread = (cols + p.threads - 1) / p.threads;
  p.items = static_cast<int>(std::clamp<int64_t>((per_thread + p.vec - 1) / p.vec, 1, 4)) * p.vec;
  if (knobs.items_per_thread) {
    int it = *knobs.items_per_thread;
    if (it < p.vec || it % p.vec != 0 || it > 64)
      return make_error(ErrorCode::invalid_input,
                        "items per thread " + std::to_string(it) +
                            " must be a multiple of the vector width " + std::to_string(p.vec) +
                            " and at most 64",
                        "use " + std::to_string(2 * p.vec) + " or auto");
    p.items = it;
  }
  return p;
}

Result<ElementwisePlan> simt_plan_elementwise(int64_t numel, int64_t last_dim, int out_bytes,
                                              const dsl::SimtKnobs& knobs) {
  ElementwisePlan p;
  auto vec = pick_vec(knobs, out_bytes, last_dim);
  if (!vec) return vec.error();
  p.vec = *vec;
  if (knobs.threads) {
    if (auto s = check_threads(*knobs.threads); !s) return s.error();
    p.threads = *knobs.threads;
  }
  const int64_t vectors = numel / p.vec;
  p.blocks = std::clamp<int64_t>((vectors + p.threads - 1) / p.threads, 1, kSimtSmCount * 16LL);
  return p;
}

}  // namespace ucut::codegen
