// Spellings of the language's enumerations, written once and shared by the checker (parsing
// words, "did you mean") and the printer (canonical text): dtypes, GEMM knob values, non-GEMM
// operations and their stage kinds. Function names live in functions.def.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dsl/program.h"

namespace ucut::dsl {

const char* dsl_dtype_str(DType t);
std::optional<DType> dsl_dtype_parse(const std::string& s);
std::vector<std::string> dsl_dtype_names();
bool dsl_dtype_is_float(DType t);

const char* dsl_role_str(TensorRole r);

const char* dsl_precision_str(Precision p);
const char* dsl_schedule_str(Schedule s);
const char* dsl_scheduler_str(TileScheduler s);
const char* dsl_raster_str(Raster r);
const char* dsl_math_str(MathMode m);
const char* dsl_scan_order_str(ScanOrder o);

// Functions of functions.def, by id.
struct FnInfo {
  Fn id;
  const char* name;
  int arity;
  int nparams;
  const char* defaults;  // comma-separated, "" if the parameters are required
  const char* formula;
};
const std::vector<FnInfo>& dsl_functions();
const FnInfo& dsl_function(Fn f);
const FnInfo* dsl_function_find(const std::string& name);

// Row/column reductions usable as an epilogue statement `m = rowmax(h)`.
struct ReductionInfo {
  const char* name;
  ReduceOp op;
  ReduceAxis axis;
};
const std::vector<ReductionInfo>& dsl_reductions();

// The stage kinds and the operations of the non-GEMM kinds.
// What the attention kernels take: head dims 64 and 128, at most 65535 matrices (one launch's
// grid), and blocks of 128 or 256 threads (runtime/attention.cuh, mma.sync: 64 or 128 query rows)
// or, on 16-bit data, 384 (runtime/attention_sm90.cuh, Hopper's warp-specialised wgmma kernel: 128
// rows; the default there, f32's 128). The checker, the code generator, the search space and the
// lowering's choice to fuse all ask these.
bool dsl_attention_head_dim_ok(int64_t d, DType dtype);
bool dsl_attention_threads_ok(int threads, DType dtype);
constexpr int kAttentionHopperThreads = 384;
int dsl_attention_default_threads(DType dtype);
int dsl_attention_rows(int threads);  // query rows a block
constexpr int64_t kAttentionMaxMatrices = 65535;
// The tensor-core FLOPs of an attention stage: both products over the visible (query, key)
// pairs only (a causal mask skips about half, and so does the kernel).
int64_t dsl_attention_flops(const AttentionStage& a);
// The DSL kind word of a checked stage ("gemm", "rowwise", ..., "attention").
const char* dsl_stage_kind(const Stage& st);
const std::vector<std::string>& dsl_stage_kinds();
const std::vector<std::string>& dsl_rowwise_ops();
const std::vector<std::string>& dsl_reduce_ops();   // plain reductions then losses
const std::vector<std::string>& dsl_scan_ops();
bool dsl_reduce_is_loss(const std::string& op);
// Whether a reduce stage of `op` with `n_outputs` outputs writes indices (i64, the column kernel
// keeping a value with its index): argmax/argmin, or max/min with a second output.
bool dsl_reduce_writes_indices(const std::string& op, size_t n_outputs);
// A loss stage's `reduction` setting (ReduceStage::reduction) as 0 mean (also unset), 1 sum,
// 2 batchmean: what the code generator and the interpreter compute.
int dsl_loss_reduction(const std::string& reduction);
bool dsl_rowwise_keeps_shape(const std::string& op);  // softmax, norms: output shape == input
// Positional tensor inputs of a rowwise op: 2 for cosine_similarity and pairwise_distance, 3 for
// triplet_margin, else 1.
int dsl_rowwise_inputs(const std::string& op);
// The rows of a rowwise stage over an input of `shape`: rows of the last dim, except group_norm,
// whose rows are the (sample, group) pairs: shape[0] * groups rows of numel / that elements
// (channels at dim 1, `groups` dividing them). {0, 0} for an empty shape or bad groups.
struct RowGeometry {
  int64_t rows = 0, cols = 0;
};
RowGeometry dsl_rowwise_geometry(const std::string& op, const std::vector<int64_t>& shape, int64_t groups);
// The rows of one matrix of a value of `shape` (its second-to-last extent; 1 below rank 2): what
// `row` counts in an expression, the flat row modulo this.
int64_t dsl_matrix_rows(const std::vector<int64_t>& shape);

// The operations a torch stage may run (dsl/torch_ops.def): name, operand and result counts.
struct TorchOpInfo {
  const char* name;
  int min_inputs, max_inputs, min_outputs, max_outputs;
};
const std::vector<TorchOpInfo>& dsl_torch_ops();
const TorchOpInfo* dsl_torch_op(const std::string& name);  // null when unknown

// Knob names a stage kind accepts, in canonical print order.
const std::vector<std::string>& dsl_stage_knobs(const std::string& kind);

// Shortest decimal text that reads back to the same double ("2", "0.1", "1e-05").
std::string dsl_number_str(double v);

// Words no tensor, scalar or program may be named: keywords, the expression words (`acc`, `row`,
// `col`, `inf`, `let`) and the transpose suffix. The lowering renames problem tensors around them.
const std::set<std::string>& dsl_reserved_words();

}  // namespace ucut::dsl
