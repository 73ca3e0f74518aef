// The lowering's working state: a mutable copy of the problem's tensors and ops (passes may add
// synthetic ones), the view aliases, and the list of draft stages that pass_emit turns into a
// dsl::Program. A Draft is a stage before it has expressions: an anchor op (the GEMM, the row
// operation, the reduction, the scan) plus the elementwise ops fused after it, in order.
// Shared helpers (op classes, attributes, shapes) live in lower_state.cpp.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dsl/program.h"
#include "lower/lower.h"
#include "problem/problem.h"
#include "support/result.h"

namespace ucut::lower {

// What kind of work an op is, for the passes.
enum class OpClass {
  view,         // aliases its input: reshape, transpose, contiguous, dropout (eval), ...
  gemm,         // linear, matmul, mm, bmm, addmm, baddbmm
  conv,         // conv: a channels-last convolution (pass_match_conv rewrites conv1d/2d/3d to it)
  window,       // max_pool, avg_pool, adaptive_avg_pool, depthwise_conv (pass_match_conv): a window stage
  elementwise,  // one value per output element from broadcast inputs (lower_expr.h vocabulary)
  row_op,       // softmax, log_softmax, layer_norm, rms_norm over the last dimension
  reduction,    // sum, mean, amax, amin, max, min, logsumexp, argmax, argmin over dims
  loss,         // mse_loss, l1_loss, ... reduced to one value
  scan,         // cumsum, cumprod
  attention,    // softmax(q k^T * scale [causal]) v, fused (pass_expand_ops rewrites sdpa to it)
  torch,        // runs in a torch stage: LowerOptions::torch_ops (the language cannot express it)
  unsupported,
};

enum class DraftKind { gemm, conv, rowwise, reduce, scan, elementwise, convert, attention, torch, window };

const char* draft_kind_name(DraftKind k);

// A tensor seen through view ops: the stored tensor and whether the last two dims are swapped.
struct View {
  std::string base;
  bool transposed = false;
};

// The elements of a stored tensor a chain of data-moving views reads (split, slice, select,
// permute, and reshapes of those): element (i0, .., ik) is base's flat element
// offset + sum(i_d * strides[d]). Declared as a DSL `view` (pass_strided_copies).
struct Strided {
  std::string base;
  std::vector<int64_t> shape, strides;
  int64_t offset = 0;
};

struct GemmPlan {
  std::string a, b;              // operand tensors (view bases)
  bool a_t = false, b_t = false; // written X.T
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool batched = false;          // an operand of rank 3 (a batch of 1 too): the product is [L, M, N]
  std::string bias;              // linear's bias [N]: acc + bias[col]
  std::string c;                 // addmm/baddbmm's input: alpha*acc + beta*c
  double alpha = 1, beta = 1;
  dsl::Precision precision = dsl::Precision::auto_;
  // The shape the stage computes, as the checker reads its operands.
  std::vector<int64_t> out_shape() const {
    return batched || batch > 1 ? std::vector<int64_t>{batch, m, n} : std::vector<int64_t>{m, n};
  }
};

struct Draft {
  DraftKind kind = DraftKind::elementwise;
  int anchor = -1;               // op id (gemm, conv, rowwise, reduce, scan, window); -1 for elementwise/convert
  std::vector<int> ops;          // elementwise ops fused after the anchor, in order
  std::vector<int> reductions;   // gemm: reductions computed in the epilogue (pass_row_reductions)
  std::string value;             // the tensor the anchor produces (what `acc` is); "" otherwise
  GemmPlan gemm;
  std::string src, dst;          // convert: dst = src in another dtype
  std::string op;                // rowwise/reduce/scan: the DSL operation name
  std::string indices;           // reduce max/min: the indices, a second output (values in `value`)
  // rowwise/reduce: elementwise ops applied to each input element first (the stage's prologue),
  // in run order, computing the anchor's input from the stored tensor `prologue_src`
  std::vector<int> prologue_ops;
  std::string prologue_src;
};

struct LowerState {
  LowerState(const problem::Problem& p, const LowerOptions& o);

  const problem::Problem& problem;
  LowerOptions options;
  std::vector<problem::Tensor> tensors;   // problem tensors plus synthetic ones
  std::vector<problem::Op> ops;           // problem ops plus synthetic ones; ops[i].id == i
  std::vector<bool> dead;                 // per op: its result reaches no output
  std::vector<OpClass> cls;               // per op
  std::vector<int> origin;                // per op: the problem op it comes from (-1: none)
  std::map<std::string, View> views;      // view-op outputs -> what they alias
  // DSL views (pass_strided_copies): each also in `views`, aliasing its base, so readers and
  // producers of the base see it
  std::map<std::string, Strided> strided;
  std::vector<Draft> drafts;              // the stages, in run order
  std::map<std::string, std::vector<int64_t>> decl_shape;  // DSL shape where it differs
  std::map<std::string, dsl::DType> decl_dtype;            // synthetic tensors' DSL dtype
  std::vector<std::string> notes;
  // The problem op the last LowerState::unsupported error named (-1: none): lower_problem runs it
  // in a torch stage and lowers again.
  mutable int unsupported_op = -1;

  const problem::Tensor* tensor(const std::string& name) const;
  // What an error message starts with: options.label, else the problem's name.
  const std::string& label() const { return options.label.empty() ? problem.name : options.label; }
  const problem::Tensor& need(const std::string& name) const;  // UCUT_CHECKed lookup
  // Follows view aliases to the stored tensor.
  View resolve(const std::string& name) const;
  // Whether `t` is `name` or on its chain of aliases (resolve() walks it to the end): attention's
  // `k_T`, a transposed alias of a copied key, reads the key.
  bool reads_through(const std::string& name, const std::string& t) const;
  // Ops (live, not views) that read `name` directly or through views.
  std::vector<int> consumers(const std::string& name) const;
  bool is_output(const std::string& name) const;
  // The one live op reading `name` when it is not returned, else -1 (the pattern fusions'
  // "each step is the only reader of the one before").
  int only_reader(const std::string& name) const;
  // Adds a synthetic tensor (kind intermediate) and returns its unique name.
  std::string add_tensor(const std::string& stem, problem::DType dtype, std::vector<int64_t> shape);
  // Adds a synthetic op and returns its id.
  int add_op(problem::Op op);
  // Replaces op `id` by `ops` (in run order, ids renumbered; later ops move up), each labelled
  // as coming from the replaced op. Only before any draft exists (drafts hold op ids).
  void replace_op(int id, std::vector<problem::Op> with);
  // The draft that produces `tensor` (after views), or -1 for tensors no draft writes.
  int producer(const std::string& tensor) const;
  // The live op writing `tensor` (after views), or -1.
  int writer(const std::string& tensor) const;
  // "op 3 (conv2d)" for messages.
  std::string op_label(int id) const;
  Error unsupported(int op_id, const std::string& why, const std::string& hint = {}) const;
  // Recomputes `dead`: an op is dead when none of its results reaches a problem output. With
  // `note`, each dead op gets a note saying so (pass_dead_ops; a rewrite that orphans ops, such as
  // the triangular mask fold, recomputes without notes).
  void mark_dead_ops(bool note);
};

// ---- drafts ---------------------------------------------------------------------------------

// Stored tensors (view bases) a draft computes in registers: the anchor's value and the fused
// ops' outputs (a torch draft: its operation's results). Any of them can be stored; the others
// live only inside the stage.
std::vector<std::string> draft_locals(const LowerState& s, const Draft& d);
// The locals read outside the draft or returned by the problem: what the stage must store.
std::vector<std::string> draft_escaping(const LowerState& s, const Draft& d);
// Op ids a draft covers (anchor, fused ops, epilogue reductions).
std::vector<int> draft_op_ids(const Draft& d);
// Whether a rowwise/reduce draft writes indices (argmax/argmin, or a reduce max/min with its
// indices): it takes no epilogue and nothing merges or fuses into it.
bool draft_writes_indices(const Draft& d);
// Whether the draft's blocks have the element's position (`row`/`col`): elementwise drafts and
// rowwise ones other than group_norm (whose rows are (sample, group)); the checker's allow_index.
bool draft_has_position(const Draft& d);

// ---- helpers shared by the passes ---------------------------------------------------------

OpClass op_class(const problem::Op& op);
bool is_gemm_op(const std::string& name);

// Attribute readers with PyTorch defaults; a null attribute reads as the default.
double attr_number(const problem::Op& op, const char* key, double def);
std::optional<double> attr_opt_number(const problem::Op& op, const char* key);
std::string attr_string(const problem::Op& op, const char* key, const std::string& def);
bool attr_bool(const problem::Op& op, const char* key, bool def);
// `dims` / `dim` as a list normalized to [0, rank); nullopt when absent or null (all dims).
std::optional<std::vector<int>> attr_dims(const problem::Op& op, int rank);

// The order of a `norm` op as 1, 2 (also 'fro') or infinity; nullopt for any other order.
std::optional<double> lower_norm_order(const problem::Op& op);

// The permutation a permute/transpose/t op applies (output dim i is input dim perm[i]) to a
// rank-`rank` input; nullopt for dims out of range or another op.
std::optional<std::vector<int>> op_permutation(const problem::Op& op, int rank);
// Whether a permutation keeps the leading dims and swaps the last two (a GEMM operand's `X.T`).
bool permutation_swaps_last_two(const std::vector<int>& perm);

std::string shape_str(const std::vector<int64_t>& s);
// The element count of a shape (1 for []).
int64_t shape_numel(const std::vector<int64_t>& s);
// The shape with leading 1s removed ([1, 1, 64] -> [64]).
std::vector<int64_t> squeeze_leading(const std::vector<int64_t>& s);

}  // namespace ucut::lower
