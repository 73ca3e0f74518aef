// The `auto` policy of the non-GEMM stages: given a stage's static shape and its knobs, the
// launch plan (threads, rows per block, vector width, items per thread, passes, splits). Knobs
// the program sets are honoured or rejected with a reason; unset ones follow these rules:
//
//  rowwise ([rows, cols], VEC = 16 bytes of the input dtype, shrunk until it divides cols):
//   - cols/VEC <= 128 vectors: warp-per-row (GROUP = lanes per row, the smallest power of two
//     giving <= 4 vectors a lane, at most 32), 256 threads, 256/GROUP rows per block;
//   - else block-per-row: THREADS = next_pow2(vectors / 8) clamped to [128, 1024], ITEMS =
//     ceil(vectors / THREADS); the row stays in registers (one pass) while ITEMS*VEC <= 32
//     floats a thread (cols <= 32768 at 1024 threads), which keeps the 1024-thread block under
//     64 registers a thread without spilling;
//   - longer rows: two sweeps from global memory (online statistics, then the write), 1024
//     threads, 4 vectors in flight per thread.
//  reduce: inner kernel 256 threads; outputs < 2*132 (the H200's SMs) split the reduced range so
//     that about 4 blocks per SM run, each split at least 32 Ki elements; outer kernel 256
//     threads (8 rows of 32 lanes * VEC columns), split likewise when its tiles are few (each
//     split at least 64 reduced rows).
//  scan: block-per-row, VEC by the dtype, THREADS = 128 for rows under 2 Ki elements, else 256;
//     ITEMS = the row's share per thread rounded up to whole vectors, 1 to 4 vectors (a row of
//     up to 16*THREADS f32 elements is one tile: one BlockScan, no carry).
//  elementwise: 256 threads, VEC by the output dtype, grid = min(vectors/256, 132*16) blocks
//     with a grid-stride loop.
#pragma once

#include <cstdint>

#include "dsl/program.h"
#include "support/result.h"

namespace ucut::codegen {

inline constexpr int kSimtSmCount = 132;  // H200; the plan's only hardware fact

struct RowPlan {
  int threads = 256;
  int group = 32;   // threads per row: <= 32 (sub-warp/warp per row) or == threads (block)
  int vec = 4;
  int items = 4;    // vectors per thread: the register cache (cached) or loads in flight
  bool cached = true;
};
Result<RowPlan> simt_plan_rowwise(int64_t rows, int64_t cols, int in_bytes,
                                  const dsl::SimtKnobs& knobs);

struct ReducePlan {
  int threads = 256;
  int vec = 4;
  int splits = 1;
  int64_t r_chunk = 0;  // reduced elements per split
};
// inner: whether the innermost dim is reduced; inner_run: L (inner) or I (outer kernel);
// n_out: outputs; r_total: reduced elements per output.
Result<ReducePlan> simt_plan_reduce(bool inner, int64_t inner_run, int64_t n_out,
                                    int64_t r_total, int in_bytes, const dsl::SimtKnobs& knobs);

struct ScanPlan {
  int threads = 256;
  int items = 8;
  int vec = 4;
};
Result<ScanPlan> simt_plan_scan(int64_t rows, int64_t cols, int in_bytes,
                                const dsl::SimtKnobs& knobs);

struct ElementwisePlan {
  int threads = 256;
  int vec = 4;
  int64_t blocks = 1;
};
Result<ElementwisePlan> simt_plan_elementwise(int64_t numel, int64_t last_dim, int out_bytes,
                                              const dsl::SimtKnobs& knobs);

}  // namespace ucut::codegen
