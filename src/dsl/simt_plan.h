// The launch plans of the non-GEMM stages, shared by the checker (which rejects every knob
// setting a plan refuses, so a checked program always compiles), the search space (which never
// offers one) and the code generator. The `auto` policy: given a stage's static shape and its knobs, the
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
//     rows of more than 4096 vectors (16 Ki f32) are split across a thread-block cluster of
//     2, 4 or 8 blocks (the smallest whose parts are at most 2048 vectors; 8 blocks take parts
//     of up to 8192), each part in 128 to 512 threads of 16 vectors: rows of up to 256 Ki f32
//     stay in registers; rowwise stages only;
//   - longer rows: two sweeps from global memory (online statistics, then the write), 1024
//     threads, 4 vectors in flight per thread.
//  reduce: inner kernel 512 threads (128 when under 4 Ki elements are reduced per output);
//     outputs too few to fill the GPU split the reduced range (about 4 blocks per SM, each split
//     at least 32 Ki elements); outer (column) kernel 1024 threads (32 rows of 32 lanes * VEC
//     columns), 8 reduced rows in flight a thread, as many splits as fill one wave of resident
//     blocks (chosen at run time, at most 16 blocks per SM; each split at least 64 rows).
//  scan: block-per-row, VEC by the dtype, THREADS = 128 for rows under 2 Ki elements, else 256;
//     ITEMS = the row's share per thread rounded up to whole vectors, 1 to 4 vectors (a row of
//     up to 16*THREADS f32 elements is one tile: one BlockScan, no carry).
//  elementwise: 256 threads, VEC by the output dtype, grid = min(vectors/256, 132*16) blocks
//     with a grid-stride loop.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dsl/program.h"
#include "support/result.h"

namespace ucut::dsl {

// Several rows per block split the block into one group of lanes per row: a power of two of at
// most 32 lanes (a warp or less). One row per block takes the whole block.
inline bool simt_row_group_ok(int threads, int rows_per_block) {
  if (rows_per_block < 1 || threads % rows_per_block != 0) return false;
  if (rows_per_block == 1) return true;
  const int g = threads / rows_per_block;
  return g <= 32 && (g & (g - 1)) == 0;
}

// The widest vector (elements) of at most 16 bytes (and at most `cap` elements when cap > 0)
// that divides `inner`.
int simt_vector_width(int bytes, int64_t inner, int cap = 0);
int simt_next_pow2(int64_t v);

inline constexpr int kSimtSmCount = 132;  // H200; the plan's only hardware fact

struct RowPlan {
  int threads = 256;
  int group = 32;   // threads per row: <= 32 (sub-warp/warp per row) or == threads (block)
  int vec = 4;
  int items = 4;    // vectors per thread: the register cache (cached) or loads in flight
  bool cached = true;
  int cluster = 1;  // blocks of a thread-block cluster sharing one row (block per row, cached)
};
// Rows longer than this many vectors (512 threads x 8) go to a cluster under `auto`.
inline constexpr int64_t kClusterRowVectors = 4096;
// cluster_ok: the stage takes the cluster knob (rowwise stages; cross-entropy's rows do not).
Result<RowPlan> simt_plan_rowwise(int64_t rows, int64_t cols, int in_bytes,
                                  const SimtKnobs& knobs, bool cluster_ok = false);

struct ReducePlan {
  int threads = 256;
  int vec = 4;
  int unroll = 8;       // outer (column) kernel: reduced rows a thread loads at once (items_per_thread)
  int splits = 1;
  int64_t r_chunk = 0;  // reduced elements per split
  int cluster = 1;      // outer kernel: splits combined in a thread-block cluster (= splits, no workspace)
};
// inner: whether the innermost dim is reduced; inner_run: L (inner) or I (outer kernel);
// n_out: outputs; r_total: reduced elements per output.
// A reduction's dimensions merged into alternating kept/reduced groups (extent-1 dimensions
// dropped; outermost first), and what the plan needs from them. `dims`: the reduced dimensions
// (non-negative; empty = all).
struct ReduceGroup {
  int64_t ext = 1, stride = 1;
  bool reduced = false;
};
struct ReduceGeometry {
  std::vector<ReduceGroup> groups;  // the last one is the innermost run
  bool inner = true;                // the innermost run is reduced (else: a column reduction)
  int64_t run = 1;                  // the innermost run's extent
  int64_t n_out = 1, r_total = 1;   // outputs; reduced elements per output
};
ReduceGeometry simt_reduce_geometry(const std::vector<int64_t>& shape, const std::vector<int>& dims);

// state_bytes: one column's running state in the column kernel (4: max/min/prod; 8: sums in
// double, logsumexp's (max, sum-exp); 16: a value with its index), which bounds its shared memory.
Result<ReducePlan> simt_plan_reduce(bool inner, int64_t inner_run, int64_t n_out,
                                    int64_t r_total, int in_bytes, const SimtKnobs& knobs,
                                    int state_bytes = 8);
// The column-kernel state of a reduce stage (above): 16 for argmax/argmin and max/min with two
// outputs (values and indices), 8 for sum/mean/logsumexp, else 4.
int simt_reduce_state_bytes(const Stage& st);

struct ScanPlan {
  int threads = 256;
  int items = 8;        // order torch: chunks of 32 in a segment (a lane's items in it)
  int vec = 4;
  // order torch: scan_row_torch_kernel, a warp a row (threads / 32 rows a block). auto: 128
  // threads, 16 chunks (run AM's best); 256 x 8 where rows are not 16-byte aligned (run AO)
  bool torch = false;
  int stages = 4;       // order torch: segments in each warp's shared-memory ring (2..4)
};
// log2 of the x-threads PyTorch's CUDA row scan uses for `rows` rows of `cols` (ATen's
// get_log_num_threads_x_inner_scan: (9 + log2 cols - log2 rows) / 2, both logs rounded up, within
// 4..9): each chunk it scans is 2^(l + 1) elements. `order torch` emulates l = 4 (32-element
// chunks: every row at least as long as the rows are many, e.g. 16384 x 16384, 65536 x 4096).
int simt_torch_scan_log_threads_x(int64_t rows, int64_t cols);
// Why `order torch` cannot run the scan `sc` of `in` into `out` ("": it can): PyTorch's row scan
// is emulated for an f32 scan along the last dimension, inclusive, or an exclusive cumsum (what
// PyTorch computes for cumsum(x) - x: its inclusive sum minus the element). The checker reports it; the
// search space offers the order only where it is "". (The chunk rule is the plan's.)
std::string simt_torch_scan_refusal(const ScanStage& sc, const Tensor& in, const Tensor& out);
Result<ScanPlan> simt_plan_scan(int64_t rows, int64_t cols, int in_bytes,
                                const SimtKnobs& knobs);

struct ElementwisePlan {
  int threads = 128;
  int vec = 4;
  int unroll = 4;       // vectors a thread loads before it computes (items_per_thread)
  int64_t blocks = 1;   // one block per threads * unroll consecutive vectors
};
// The widest element (bytes) an elementwise stage moves as a vector: its stores, and the loads
// read along the last dimension (a [col] vector, or a tensor whose last extent is the output's
// `last` > 1). `find` resolves tensor names. The plan's vector width is sized by it.
int simt_elementwise_vector_bytes(const ElementwiseStage& es, int64_t last,
                                  const std::function<const Tensor*(const std::string&)>& find);
Result<ElementwisePlan> simt_plan_elementwise(int64_t numel, int64_t last_dim, int out_bytes,
                                              const SimtKnobs& knobs);

// The permuting form of an elementwise stage (docs/language.md, "Convolution"): a full read of a view
// of the output's shape (or of its element count, read in the output's element order) whose dims,
// merged where the view runs on from one into the next (the output is contiguous, so it merges with
// it; size-1 dims dropped), end in a dim of stride other than 0 or +-1 while another dim `j` runs at
// stride +-1 (a layout copy: NCHW <-> NHWC, KCRS -> KRSC, x.permute(..).contiguous(), the
// interleave of a strided transposed conv's phases), and whose tile holds at least kPermuteMinTile used elements
// (one per thread of the 256-thread block; smaller matrices take the vector form). The code
// generator moves tiles of dims (j, last) through shared memory; the stage's SIMT knobs do not
// apply, so the space offers one configuration.
inline constexpr int64_t kPermuteMinTile = 256;
struct MergedView {
  std::vector<int64_t> shape, strides;
};
MergedView simt_merge_view(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides);
struct PermuteTiling {
  std::vector<int64_t> shape;  // the first permuting view's merged dims (in the output's element order)
  size_t j = 0;                // the merged dim that view reads at stride +-1
  int64_t tj = 0, tc = 0;      // tile along j and along the c-run (every dim after j, flattened: a
                               // contiguous run of the output): up to 1024 elements, a side under
                               // 32 lending the rest to the other
  int64_t c_extent() const;    // the c-run's length
  std::string name() const;    // "elementwise_permute_<tj>x<tc>"
};
// The tiling of the first permuting view the body reads (statement order), if any.
std::optional<PermuteTiling> simt_permute_tiling(const ElementwiseStage& es, const Tensor& out,
                                                 const std::function<const Tensor*(const std::string&)>& find);
// Whether view `t` is read through `pt`'s tile (the output's element count, the same merged dims,
// stride +-1 at j), and its merged strides.
std::optional<std::vector<int64_t>> simt_permute_strides(const Tensor& t, const Tensor& out, const PermuteTiling& pt);

// Whether a tensor of `shape` broadcasts to `out` NumPy-style (right-aligned, each dim equal or 1).
// A full read of a view that does not, of the output's element count, reads in the output's
// element order (a reshape; docs/language.md, "Views").
bool simt_broadcasts_to(const std::vector<int64_t>& shape, const std::vector<int64_t>& out);

// The plan a checked non-GEMM stage gets from its knobs (the same call the code generator
// makes), or why there is none; nullopt for GEMM stages and stages without a planned kernel.
// The checker reports it, and the search space never offers a configuration that has one.
std::optional<Error> simt_plan_refusal(const Stage& st,
                                       const std::function<const Tensor*(const std::string&)>& find);

}  // namespace ucut::dsl
