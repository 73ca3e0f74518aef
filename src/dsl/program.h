// The checked μCUTLASS program ("Kernel IR"): what the checker produces from the AST and what the
// code generator, the SOL program estimate, the search space and the lowering consume. Every
// value here has been validated: a consumer may assume names resolve, shapes agree and knob
// values are legal for the stage (or `auto`). The parser's AST is a separate, looser structure.
//
// Contract owners: src/dsl builds it (dsl_check), src/codegen reads it, src/lower builds it
// programmatically through the same checker (it prints the program and re-checks it).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "support/checked.h"
#include "support/diagnostics.h"

namespace ucut::dsl {

enum class DType { f16, bf16, f32, i32, i64, u8, boolean };

inline int dtype_bytes(DType t) {
  switch (t) {
    case DType::f16: case DType::bf16: return 2;
    case DType::f32: case DType::i32: return 4;
    case DType::i64: return 8;
    case DType::u8: case DType::boolean: return 1;
  }
  return 4;
}

enum class TensorRole {
  in,     // a problem input, bound by position among the `in` declarations
  param,  // a parameter or buffer, bound by its state_dict key
  out,    // a problem output, bound by position among the `out` declarations
  tmp,    // an intermediate between stages, allocated in the kernel library's workspace
  view,   // elements of another tensor at strides: read only by elementwise bodies, never stored
};

// The most elements a tensor (and a dimension) may have: 2^40, 4.4 TB of f32, far beyond any GPU,
// small enough that products of two sizes (M*N*K, bytes) stay well inside 64 bits.
inline constexpr int64_t kMaxElements = int64_t(1) << 40;

struct Tensor {
  std::string name;
  TensorRole role = TensorRole::in;
  DType dtype = DType::f32;
  std::vector<int64_t> shape;  // row-major, contiguous
  std::string binding;         // param: state_dict key; others empty
  // view: element (i0, .., ik) is view_of's flat element view_offset + sum(i_d * view_strides[d])
  std::string view_of;
  std::vector<int64_t> view_strides;
  int64_t view_offset = 0;
  Span span;
  // The checker refuses a tensor of more than kMaxElements, so this cannot overflow for a checked
  // program; a product that would is our bug, stopped here.
  int64_t numel() const {
    auto n = checked_product(shape);
    UCUT_CHECK(n.has_value(), "element count of '" + name + "' overflows");
    return *n;
  }
};

// Row-major strides (in elements) of a contiguous tensor of `shape`.
inline std::vector<int64_t> dsl_contiguous_strides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> st(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) st[i - 1] = st[i] * shape[i];
  return st;
}

// A runtime scalar: `scalar alpha = 0.5` (a value the kernel library takes at run time through
// the ABI's scalars array, in declaration order; 0.5 is its default).
struct Scalar {
  std::string name;
  double default_value = 0;
  Span span;
};

// ---- epilogue expressions ----------------------------------------------------------------

enum class Fn {
#define UCUT_FN(id, name, arity, nparams, defaults, formula) id,
#include "dsl/functions.def"
#undef UCUT_FN
};

enum class BinOp { add, sub, mul, div };

// How a tensor is read inside an epilogue over an output tile of shape [M, N] (batch L):
enum class LoadMode {
  row,   // v[row]: one value per output row (a column vector of length M), e.g. per-row scale
  col,   // v[col]: one value per output column (length N), e.g. a Linear bias
  full,  // r: same shape as the output (a residual/source tensor)
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    acc,       // the accumulator (GEMM) or the stage's primary value (non-GEMM stages)
    constant,  // a numeric literal
    scalar,    // a runtime Scalar, by name
    load,      // a tensor read with a LoadMode
    local,     // a name bound earlier in the same epilogue (`let`)
    unary,     // fn(args[0], params...)
    binary,    // args[0] op args[1]
    call,      // fn(args...) for functions of two or three operands (min, max, lt, ..., where)
    index,     // `row` / `col` (mode): the element's index along the value's second-to-last / last
               // dim, as a float (exact below 2^24); rowwise and elementwise blocks only
  };
  Kind kind = Kind::acc;
  double value = 0;                 // constant
  std::string name;                 // scalar / load / local
  LoadMode mode = LoadMode::full;   // load; index: row or col
  Fn fn = Fn::neg;                  // unary / call
  std::vector<double> params;       // unary: the function's constant parameters, defaults filled in
  BinOp op = BinOp::add;            // binary
  std::vector<ExprPtr> args;
  Span span;
};

enum class ReduceOp { sum, max, min };
enum class ReduceAxis {
  row,  // one value per output row (reduces across N): result length M (per batch)
  col,  // one value per output column (reduces across M): result length N (per batch)
};

// One statement of an epilogue: `let t = expr`, `out = expr`, or `m = rowmax(expr)`.
struct EpilogueStmt {
  enum class Kind { let, store, reduce };
  Kind kind = Kind::store;
  std::string name;        // the let name, or the output tensor
  ExprPtr value;
  ReduceOp reduce_op = ReduceOp::sum;    // reduce only
  ReduceAxis reduce_axis = ReduceAxis::row;
  Span span;
};

struct Epilogue {
  std::vector<EpilogueStmt> stmts;  // in order; exactly one `store` to the stage's main output
};

// ---- GEMM knobs -------------------------------------------------------------------------

// Math used for the matmul: operands are converted (or not) as named, accumulation is fp32.
enum class Precision {
  auto_,   // chosen by the policy/search
  f16,     // f16 operands (data must be f16)
  bf16,    // bf16 operands (data must be bf16)
  tf32,    // f32 data, TF32 tensor cores
  f32x3,   // f32 data, 3xTF32 error-compensated (fp32-faithful)
  f32,     // f32 data, FP32 SIMT (fp32-faithful)
  f32x3s,  // f32 data, 3xTF32 on TF32 wgmma through split operands (fp32-faithful; the library
           // runs it as split stages and three TF32 GEMMs, codegen_expand_split_gemms)
  tf32m,   // f32 data, TF32 tensor cores through mma.sync (the CUTLASS 2.x SM80 kernel): operands in
           // any layout, where wgmma's TF32 reads only K-major ones (a plain x @ W with W [K, N])
  f32x3k,  // f32 data, 3xTF32 as one TF32 wgmma GEMM over K three times: A's parts [Ab | Ab | As]
           // against B's [Bb | Bs | Bb] along K, all in one accumulator (fp32-faithful where K is
           // short; codegen_expand_split_gemms). One pass over the output, where f32x3s makes five.
  f32x3w,  // f32 data, 3xTF32 on TF32 wgmma with the split inside the GEMM's main loop
           // (runtime/gemm_f32x3w.cuh): no split stages, no extra memory passes; the big x big
           // product promoted to an fp32 sum every few K tiles (fp32-faithful at any K)
  bf16x3,  // f32 data, three bf16 products: A's parts [Ah | Ah | Al] against B's [Bh | Bl | Bh]
           // along K (h = x rounded to bf16, l = the remainder rounded to bf16) in one bf16 wgmma
           // GEMM over 3K whose tensor-core sums are promoted into fp32 every 128 of K
           // (codegen_expand_split_gemms). About 16 bits of each operand: not fp32-faithful,
           // 40-80x closer than TF32; bf16 wgmma runs at twice TF32's rate
};
// gemv16, gemv32: not a CUTLASS kernel but a matrix-vector kernel (f32, N = 1, A K-contiguous) that
// adds in the order of cuBLAS's gemv2T_kernel_val + splitKreduce (runtime/gemv.cuh): split_k
// chunks of K, each lane's elements in groups of 16 or 32.
enum class Schedule { auto_, cooperative, pingpong, gemv16, gemv32 };
// Whether the schedule is a GEMV one, and its group (0 for the CUTLASS schedules).
inline bool is_gemv(Schedule s) { return s == Schedule::gemv16 || s == Schedule::gemv32; }
inline int gemv_group(Schedule s) { return s == Schedule::gemv16 ? 16 : s == Schedule::gemv32 ? 32 : 0; }
enum class TileScheduler { auto_, persistent, stream_k };
enum class Raster { auto_, along_m, along_n };
// Epilogue math: precise (IEEE-rounded libm functions) or fast (hardware approximations of
// exp, log, tanh, sqrt and division; see codegen/functors.cpp for each error bound).
enum class MathMode { auto_, precise, fast };

struct TileShape { int m = 0, n = 0, k = 0; };
struct ClusterShape { int m = 1, n = 1; };

struct GemmKnobs {
  Precision precision = Precision::auto_;
  std::optional<TileShape> tile;        // nullopt: auto
  std::optional<ClusterShape> cluster;  // nullopt: auto
  std::optional<int> stages;            // nullopt: auto (as many as shared memory allows)
  Schedule schedule = Schedule::auto_;
  TileScheduler scheduler = TileScheduler::auto_;
  std::optional<int> split_k;           // nullopt: auto; 1: none; >1: split (stream-K / split-K)
  Raster raster = Raster::auto_;
  std::optional<int> swizzle;           // nullopt: auto; 1, 2, 4, 8
  std::optional<int> align;             // elements per access for A/B; nullopt: largest legal
  MathMode math = MathMode::auto_;      // auto: fast when every output of the stage is 16-bit
};

struct Operand {
  std::string tensor;
  bool transposed = false;  // written X.T in the program
  Span span;
};

// out[l] = epilogue(A[l] @ B[l]) for l in batch; A is [M,K] (or [K,M] with .T), B is [K,N]
// (or [N,K] with .T); batched GEMMs use 3-D tensors [L, ., .] (L may be 1 for a broadcast
// operand of rank 2).
struct GemmStage {
  Operand a, b;
  int64_t m = 0, n = 0, k = 0, batch = 1;  // resolved by the checker
  GemmKnobs knobs;
  Epilogue epilogue;
  // Not in the language: set by codegen_expand_split_gemms on bf16x3's one bf16 GEMM, whose main
  // loop then adds its tensor-core sums into an fp32 sum every `promote_k` of K (0: never)
  int promote_k = 0;
};

// A grouped GEMM: several independent GEMMs of possibly different shapes in one launch, sharing
// knobs and the epilogue form; group i writes outputs[i].
struct GroupedGemmStage {
  std::vector<Operand> a, b;
  std::vector<std::array<int64_t, 3>> mnk;  // per group, resolved by the checker
  GemmKnobs knobs;
  Epilogue epilogue;                         // applied to every group; loads index the group's tensors
};

// ---- non-GEMM stages (the non-GEMM stages issue fills these in) ---------------------------

// Common knobs of the non-GEMM stages; nullopt is auto.
// The order a scan adds in (scan stages only). auto / fp64: fp64 accumulators, each output within
// half an fp32 ulp of the exact sum. torch: PyTorch's CUDA fp32 row scan step for step (chunks of
// 2 * 16 elements, the running total folded into each chunk's first element, then a Sklansky
// network), so its rounding is the reference's own; the search offers it where the fp32 reference's
// rounding fails every accurate kernel (long cumsum rows).
enum class ScanOrder { auto_, fp64, torch };

struct SimtKnobs {
  std::optional<int> threads;          // threads per block
  std::optional<int> rows_per_block;
  std::optional<int> vector_width;     // elements per vector access
  std::optional<int> items_per_thread;
  std::optional<int> passes;           // 1 = single-pass online algorithm where one exists
  std::optional<int> cluster;          // rowwise: blocks of a thread-block cluster sharing one row
  ScanOrder order = ScanOrder::auto_;  // scan only
};

// Per-row operation over the last dimension: the input is viewed as [rows, D], D = last dim.
// Output shape: the input's (softmax, log_softmax, layer_norm, rms_norm, l1/l2_normalize) or the
// input's without the last dimension / with it 1 (logsumexp, sum, mean, max, min, argmax, argmin;
// argmax/argmin write i32 or i64). The prologue stores to `input` (acc = the input element) and
// is empty when absent; the epilogue stores to the output (acc = the op's value).
// The ops over several inputs of one shape (cosine_similarity(x, y), pairwise_distance(x, y),
// triplet_margin(anchor, positive, negative)) write one value per row and take no prologue.
struct RowwiseStage {
  std::string op;            // softmax, log_softmax, logsumexp, layer_norm, rms_norm, ...
  std::string input;
  std::vector<std::string> operands;  // the positional inputs after `input` (multi-input ops)
  std::vector<std::string> extra;  // weight, bias, ... (the non-empty ones of the two below)
  std::map<std::string, double> attrs;  // eps (layer_norm, rms_norm, l1/l2_normalize; filled in)
  SimtKnobs knobs;
  Epilogue prologue, epilogue;
  std::string weight, bias;  // layer_norm: both optional; rms_norm: weight optional; "" if absent
  int64_t rows = 0, cols = 0;  // resolved: rows = numel / D, cols = D
};

// sum/mean/max/min over `dims` of inputs[0] (sorted, non-negative; all dims for a full
// reduction), or a loss over two inputs reduced to one value: mse(p, t), l1(p, t),
// huber(p, t; delta), smooth_l1(p, t; beta), kl_div(logp, q), hinge(p, t),
// cross_entropy(logits [N, C], labels i32/i64 [N]). logsumexp, argmax/argmin and max/min with a
// second output (the stage's outputs: values, i64 indices) keep the last dim (the column kernel).
// The prologue (all but cross_entropy; a loss:
// its first input)
// stores to inputs[0]; the epilogue stores to the output (acc = the reduced value).
struct ReduceStage {
  std::string op;            // sum, mean, max, min, mse, l1, huber, smooth_l1, kl_div, hinge, cross_entropy
  std::vector<std::string> inputs;
  std::vector<int> dims;
  std::map<std::string, double> attrs;  // delta (huber), beta (smooth_l1); filled in
  SimtKnobs knobs;
  Epilogue prologue, epilogue;
  std::string reduction;     // losses: "mean", "sum" or (kl_div) "batchmean"; "" for sum/mean/max/min
};

struct ScanStage {
  std::string op;            // cumsum, cumprod
  std::string input;
  int dim = -1;              // resolved by the checker to 0 .. rank-1
  bool exclusive = false, reverse = false;
  std::string mask;          // optional bool/u8 tensor of the input's shape: masked-out
                             // elements contribute the identity (0 for cumsum, 1 for cumprod)
  SimtKnobs knobs;
};

// Fused attention: o = softmax(scale * q k^T [+ causal mask]) v for each matrix of a batch, the
// scores kept in registers (online softmax, in the order runtime/attention.cuh documents).
// q [..., lq, d], k [..., lk, d], v [..., lk, dv], o [..., lq, dv], one f16, bf16 or f32 dtype, the
// leading dims equal, except that k and v may have fewer heads (the dim before Lk) than q, a
// divisor of them: grouped-query attention, query head h reading key/value head h / (Hq / Hkv)
// (PyTorch's enable_gqa); causal: key j is visible to query i when j <= i (PyTorch's is_causal).
// f16/bf16 data: 16-bit tensor-core products; f32 data: 3xTF32 (fp32-faithful).
// Knobs: threads (128 or 256: 16 query rows a warp); no blocks.
struct AttentionStage {
  std::string q, k, v;
  bool causal = false;
  double scale = 0;            // filled in: 1 / sqrt(d) unless given
  SimtKnobs knobs;
  int64_t batch = 1, lq = 0, lk = 0, d = 0, dv = 0;  // resolved by the checker
  int64_t heads = 1, kv_group = 1;  // resolved: q's heads (the dim before Lq; 1 below rank 3) and
                                    // query heads per key/value head (1 unless grouped)
};

// Full loads broadcast numpy-style (right-aligned, size-1 dims) to the output's shape; v[row]
// and v[col] view the output as [numel / last, last].
struct ElementwiseStage {
  SimtKnobs knobs;
  Epilogue body;             // statements over broadcast loads; `acc` is not allowed
  // Internal, not in the language: set only by codegen_expand_split_gemms, whose f32x3s split
  // stage writes an operand's parts K-major for wgmma. Output element (.., i, j) reads every
  // full-size input at (.., j, i): the inputs are the output's shape with its last two dims
  // swapped, no row/col vectors (docs/language.md, f32x3s).
  bool transpose = false;
};

// A convolution forward pass (cross-correlation, groups 1) as a CUTLASS 3.x sm90 implicit GEMM,
// on channels-last tensors: x [N, (D,) (H,) W, C], w [K, (T,) (R,) S, C] (KRSC), out
// [N, (Z,) (P,) Q, K]; `rank` spatial dims (1, 2 or 3; from x's rank), each output size
// (in + lo + hi - dilation*(f - 1) - 1) / stride + 1, PyTorch's. In GEMM terms M = N*P*Q (output
// pixels), N = K (output channels), K = C*R*S: the epilogue is the gemm stage's, `v[col]` one value
// per output channel (a bias, a folded BatchNorm's scale and shift) and a full load a tensor of the
// output's shape (a residual). The GEMM knobs it takes: precision (tf32, bf16, f16), tile, cluster
// (Mx1, M 1 or 2), stages, math (dsl/conv_rules.h).
struct ConvStage {
  std::string x, w;
  int rank = 2;                         // spatial dims
  // per spatial dim, outermost first; filled in (stride 1, padding 0, dilation 1 where not given)
  std::vector<int64_t> stride, pad_lo, pad_hi, dilation;
  // resolved by the checker
  int64_t batch = 0, channels = 0, out_channels = 0;
  std::vector<int64_t> in_size, filter, out_size;
  int64_t m = 0, n = 0, k = 0;          // the implicit GEMM: N*P*Q, K, C*R*S
  GemmKnobs knobs;
  Epilogue epilogue;
};

// A sliding-window reduction over the spatial dims of a channels-first tensor, as PyTorch holds
// it: x [N, C, (D,) (H,) W] -> out [N, C*mult, (Z,) (P,) Q] (`rank` spatial dims, 1 to 3), no layout
// copies. Output element (n, k, o...) reduces the taps t... (each o*stride - pad_lo + t*dilation
// inside x; taps outside are padding) of channel k / mult:
//   max:          the largest tap (padding never wins; NaN propagates, as PyTorch's max_pool)
//   avg:          the taps' sum over the window's size (count_include_pad: the taps inside the
//                 padded input, cut by ceil_mode's extra window; else the taps inside x), or over
//                 `divisor` where given (PyTorch's divisor_override)
//   sum:          sum of x * weight[k, 0, t...] (+ bias[k]): a depthwise conv, weight
//                 [C*mult, 1, window...] (PyTorch's groups = C), the window its spatial dims
//   adaptive_avg: PyTorch's adaptive windows: along each dim, output i averages inputs
//                 floor(i*In/Out) .. ceil((i+1)*In/Out) - 1 (a global pool where Out = 1)
// Each output size is PyTorch's (ceil_mode rounds up, keeping the last window's start inside the
// input or its low padding). The epilogue maps acc (the reduced value, after the bias) to the
// output; its full loads broadcast numpy-style to the output's shape ([C*mult, 1, 1] per channel).
// Accumulates in fp32 (the interpreter: double). Knobs: threads, items_per_thread (outputs a
// thread computes, consecutive along the last dim).
struct WindowStage {
  std::string op;  // max, avg, sum, adaptive_avg
  std::string x, weight, bias;  // weight, bias: sum only (bias optional); "" if absent
  int rank = 2;
  // per spatial dim, outermost first; filled in (window: the weight's for sum, none for
  // adaptive_avg; stride: the window's for pools, 1 for sum; padding 0; dilation 1)
  std::vector<int64_t> window, stride, pad_lo, pad_hi, dilation;
  bool ceil_mode = false;
  bool count_include_pad = true;  // avg only
  int64_t divisor = 0;            // avg only: divisor_override, 0 where not given
  // resolved by the checker
  int64_t batch = 0, channels = 0, out_channels = 0, mult = 1;
  std::vector<int64_t> in_size, out_size;
  SimtKnobs knobs;
  Epilogue epilogue;
};

// PyTorch operations the host runs between kernel stages (a graph break, as torch.compile makes
// for what it cannot compile): the lowering emits one where the problem holds an operation outside
// the language, so the rest still runs as kernels. The operations are the Problem IR's
// (docs/problem-ir.md; the vocabulary is dsl/torch_ops.def), applied in order to the declared
// tensors the stage reads and to its own local values; each stage output is assigned once and
// must match its declaration's dtype and element count (checked by the host when it runs). The
// library calls the host through the ABI (docs/kernel-abi.md, ucut_set_host); no knobs, no blocks.
struct TorchOp {
  struct Operand {
    std::string tensor;            // a declared tensor or an earlier local; empty for a number
    double number = 0;
    bool absent = false;           // `none`: an optional operand left out before a present one
  };
  std::string op;
  std::vector<std::string> outputs;  // locals (`let`) or the stage's declared outputs
  std::vector<bool> output_is_local;
  std::vector<Operand> inputs;
  // Keyword arguments as written: numbers, integer lists, or words (true, false, none, or a
  // string such as tanh); kept sorted by key (the canonical order).
  struct Attr {
    enum class Kind { number, list, word } kind = Kind::number;
    double number = 0;
    std::vector<int64_t> list;
    std::string word;
  };
  std::map<std::string, Attr> attrs;
};

struct TorchStage {
  std::vector<TorchOp> ops;
  std::vector<std::string> reads;   // declared tensors read, in first-use order
};

// ---- the program --------------------------------------------------------------------------

struct Stage {
  std::string name;                 // "s0", "s1", ... unless the program names it
  std::vector<std::string> outputs; // tensors this stage writes (main output first)
  std::variant<GemmStage, GroupedGemmStage, RowwiseStage, ReduceStage, ScanStage, ElementwiseStage,
               AttentionStage, TorchStage, ConvStage, WindowStage>
      body;
  Span span;
};

struct Program {
  int version = 1;                 // `ucut 1`
  std::string name;                // optional `name` line; else the file stem
  std::vector<Tensor> tensors;     // declaration order (ABI order for in/param/out)
  std::vector<Scalar> scalars;
  std::vector<Stage> stages;       // run in this order on one stream

  const Tensor* find_tensor(const std::string& n) const {
    for (const auto& t : tensors)
      if (t.name == n) return &t;
    return nullptr;
  }
};

}  // namespace ucut::dsl
