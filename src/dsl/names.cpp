#include "dsl/names.h"

#include "dsl/kinds/kinds.h"
#include "dsl/stage_kind.h"

#include <charconv>
#include <iterator>
#include <variant>
#include <cstdlib>

namespace ucut::dsl {

namespace {
struct DTypeName {
  DType t;
  const char* name;
};
const DTypeName kDTypes[] = {{DType::f16, "f16"}, {DType::bf16, "bf16"}, {DType::f32, "f32"},
                             {DType::i32, "i32"}, {DType::i64, "i64"},   {DType::u8, "u8"},
                             {DType::boolean, "bool"}};
}  // namespace

const char* dsl_dtype_str(DType t) {
  for (const auto& d : kDTypes)
    if (d.t == t) return d.name;
  return "?";
}
std::optional<DType> dsl_dtype_parse(const std::string& s) {
  for (const auto& d : kDTypes)
    if (s == d.name) return d.t;
  return std::nullopt;
}
std::vector<std::string> dsl_dtype_names() {
  std::vector<std::string> v;
  for (const auto& d : kDTypes) v.emplace_back(d.name);
  return v;
}
bool dsl_dtype_is_float(DType t) { return t == DType::f16 || t == DType::bf16 || t == DType::f32; }

const char* dsl_role_str(TensorRole r) {
  switch (r) {
    case TensorRole::in: return "in";
    case TensorRole::param: return "param";
    case TensorRole::out: return "out";
    case TensorRole::tmp: return "tmp";
    case TensorRole::view: return "view";
  }
  return "?";
}

const char* dsl_precision_str(Precision p) {
  switch (p) {
    case Precision::auto_: return "auto";
    case Precision::f16: return "f16";
    case Precision::bf16: return "bf16";
    case Precision::tf32: return "tf32";
    case Precision::f32x3: return "f32x3";
    case Precision::f32: return "f32";
    case Precision::f32x3s: return "f32x3s";
    case Precision::tf32m: return "tf32m";
    case Precision::f32x3k: return "f32x3k";
    case Precision::f32x3w: return "f32x3w";
    case Precision::bf16x3: return "bf16x3";
  }
  return "auto";
}
const char* dsl_schedule_str(Schedule s) {
  switch (s) {
    case Schedule::auto_: return "auto";
    case Schedule::cooperative: return "cooperative";
    case Schedule::pingpong: return "pingpong";
    case Schedule::gemv16: return "gemv16";
    case Schedule::gemv32: return "gemv32";
  }
  return "auto";
}
const char* dsl_scheduler_str(TileScheduler s) {
  switch (s) {
    case TileScheduler::auto_: return "auto";
    case TileScheduler::persistent: return "persistent";
    case TileScheduler::stream_k: return "stream_k";
  }
  return "auto";
}
const char* dsl_scan_order_str(ScanOrder o) {
  switch (o) {
    case ScanOrder::auto_: return "auto";
    case ScanOrder::fp64: return "fp64";
    case ScanOrder::torch: return "torch";
  }
  return "auto";
}

const char* dsl_math_str(MathMode m) {
  switch (m) {
    case MathMode::auto_: return "auto";
    case MathMode::precise: return "precise";
    case MathMode::fast: return "fast";
  }
  return "auto";
}
const char* dsl_raster_str(Raster r) {
  switch (r) {
    case Raster::auto_: return "auto";
    case Raster::along_m: return "along_m";
    case Raster::along_n: return "along_n";
  }
  return "auto";
}

const std::vector<FnInfo>& dsl_functions() {
  static const std::vector<FnInfo> table = {
#define UCUT_FN(id, name, arity, nparams, defaults, formula) {Fn::id, name, arity, nparams, defaults, formula},
#include "dsl/functions.def"
#undef UCUT_FN
  };
  return table;
}
const FnInfo& dsl_function(Fn f) { return dsl_functions()[static_cast<size_t>(f)]; }
const FnInfo* dsl_function_find(const std::string& name) {
  for (const auto& f : dsl_functions())
    if (name == f.name) return &f;
  return nullptr;
}

const std::vector<ReductionInfo>& dsl_reductions() {
  static const std::vector<ReductionInfo> r = {
      {"rowsum", ReduceOp::sum, ReduceAxis::row}, {"rowmax", ReduceOp::max, ReduceAxis::row},
      {"rowmin", ReduceOp::min, ReduceAxis::row}, {"colsum", ReduceOp::sum, ReduceAxis::col},
      {"colmax", ReduceOp::max, ReduceAxis::col}, {"colmin", ReduceOp::min, ReduceAxis::col}};
  return r;
}

bool dsl_attention_head_dim_ok(int64_t d, DType dtype) {
  // 16-bit tiles swizzle 8 16-byte chunks a row (multiples of 64); the f32 kernel's padded rows
  // take any multiple of 16, of which minGPT's 96 is also compiled and offered
  return d == 64 || d == 128 || (dtype == DType::f32 && d == 96);
}
bool dsl_attention_threads_ok(int threads, DType dtype) {
  return threads == 128 || threads == 256 || (threads == kAttentionHopperThreads && dtype != DType::f32);
}
int dsl_attention_default_threads(DType dtype) { return dtype == DType::f32 ? 128 : kAttentionHopperThreads; }
int dsl_attention_rows(int threads) { return threads == kAttentionHopperThreads ? 128 : threads / 2; }

int64_t dsl_attention_flops(const AttentionStage& a) {
  int64_t pairs = a.lq * a.lk;
  if (a.causal) {
    const int64_t full = std::min(a.lq, a.lk);  // query i < lk sees keys 0..i
    pairs = full * (full + 1) / 2 + (a.lq - full) * a.lk;
  }
  return 2 * a.batch * pairs * (a.d + a.dv);
}

const char* dsl_stage_kind(const Stage& st) { return dsl_stage_kind_word(dsl_stage_kind_of(st)); }

const std::vector<std::string>& dsl_stage_kinds() {
  static const std::vector<std::string> k = [] {
    std::vector<std::string> words;
    for (StageKind kind : dsl_stage_kind_list()) words.push_back(dsl_stage_kind_word(kind));
    return words;
  }();
  return k;
}

const std::vector<TorchOpInfo>& dsl_torch_ops() {
  static const std::vector<TorchOpInfo> ops = {
#define UCUT_TORCH_OP(name, min_in, max_in, min_out, max_out) {#name, min_in, max_in, min_out, max_out},
#include "dsl/torch_ops.def"
#undef UCUT_TORCH_OP
  };
  return ops;
}

const TorchOpInfo* dsl_torch_op(const std::string& name) {
  for (const auto& o : dsl_torch_ops())
    if (name == o.name) return &o;
  return nullptr;
}
const std::vector<std::string>& dsl_rowwise_ops() {
  static const std::vector<std::string> k = {"softmax", "log_softmax", "logsumexp", "layer_norm",
                                             "rms_norm", "group_norm", "l1_normalize", "l2_normalize", "sum",
                                             "mean", "max", "min", "argmax", "argmin",
                                             "cosine_similarity", "pairwise_distance", "triplet_margin"};
  return k;
}
const std::vector<std::string>& dsl_reduce_ops() {
  static const std::vector<std::string> k = {"sum",    "mean",   "max", "min",   "logsumexp", "argmax",
                                             "argmin", "mse",    "l1",  "huber", "smooth_l1", "kl_div",
                                             "hinge",  "cross_entropy"};
  return k;
}
const std::vector<std::string>& dsl_scan_ops() {
  static const std::vector<std::string> k = {"cumsum", "cumprod"};
  return k;
}
bool dsl_reduce_is_loss(const std::string& op) {
  return !(op == "sum" || op == "mean" || op == "max" || op == "min" || op == "logsumexp" || op == "argmax" ||
           op == "argmin");
}
bool dsl_reduce_writes_indices(const std::string& op, size_t n_outputs) {
  return op == "argmax" || op == "argmin" || ((op == "max" || op == "min") && n_outputs == 2);
}
int dsl_loss_reduction(const std::string& reduction) {
  return reduction == "sum" ? 1 : reduction == "batchmean" ? 2 : 0;
}
bool dsl_rowwise_keeps_shape(const std::string& op) {
  return op == "softmax" || op == "log_softmax" || op == "layer_norm" || op == "rms_norm" ||
         op == "l1_normalize" || op == "l2_normalize" || op == "group_norm";
}
int dsl_rowwise_inputs(const std::string& op) {
  return op == "triplet_margin" ? 3 : op == "cosine_similarity" || op == "pairwise_distance" ? 2 : 1;
}
int64_t dsl_matrix_rows(const std::vector<int64_t>& shape) {
  return shape.size() < 2 ? 1 : shape[shape.size() - 2];
}

RowGeometry dsl_rowwise_geometry(const std::string& op, const std::vector<int64_t>& shape, int64_t groups) {
  RowGeometry g;
  if (shape.empty()) return g;
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  if (op == "group_norm") {
    if (shape.size() < 2 || groups < 1 || shape[1] % groups != 0 || shape[0] * groups == 0) return g;
    g.rows = shape[0] * groups;
  } else {
    if (shape.back() == 0) return g;
    g.rows = n / shape.back();
  }
  g.cols = n / g.rows;
  return g;
}

const std::vector<std::string>& dsl_stage_knobs(const std::string& kind) {
  static const std::vector<std::string> none;
  const std::optional<StageKind> k = dsl_stage_kind_parse(kind);
  return k ? dsl_kind(*k).knobs() : none;
}

std::string dsl_number_str(double v) {
  if (v == 0) return "0";  // also -0
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

const std::set<std::string>& dsl_reserved_words() {
  static const std::set<std::string> words = {"acc",   "row",    "col",    "inf",   "let",      "true",
                                              "false", "auto",   "ucut",   "name",  "in",       "param",
                                              "out",   "tmp",    "scalar", "stage", "epilogue", "prologue",
                                              "body",  "T",      "nan",    "none",  "view"};
  return words;
}

}  // namespace ucut::dsl
