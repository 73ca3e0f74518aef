// Expressions for the lowering: how one elementwise Problem-IR op becomes a dsl::Expr over its
// operands, and how a tensor is read inside a block (full, v[row], v[col] or a constant) given
// the block's shape. Used by pass_fuse_epilogue (may this op join that stage?) and pass_emit
// (build the statements), so both agree by construction.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dsl/program.h"
#include "lower/lower_state.h"

namespace ucut::lower {

// What a block computes and which reads it allows (mirrors the checker's BlockRules).
struct BlockCtx {
  DraftKind kind = DraftKind::elementwise;
  std::vector<int64_t> shape;   // DSL shape of the value the block stores
  int64_t rows = 0, cols = 0;   // v[row] length and v[col] length
  int64_t batch = 1;            // GEMM batch: vectors may be [batch, len]
  bool vectors = true;          // v[row] / v[col] allowed
  bool broadcast = false;       // full reads broadcast numpy-style (elementwise bodies)
  // elementwise: the shape its ops see when the block computes another one of the same count (a
  // batched GEMM's folded [B*H, M, N], a returned reshape); empty where they agree
  std::vector<int64_t> seen;
};

// The block of a draft: its epilogue (gemm, rowwise, reduce) or body (elementwise).
BlockCtx lower_block_ctx(const LowerState& s, const Draft& d);

// The prologue block of a rowwise stage over an input the op sees (and declares) as `shape`:
// its rows and columns are the input's, and it reads other tensors per row, per column or in full.
BlockCtx lower_prologue_ctx(const std::vector<int64_t>& shape);

// How one tensor operand is read in a block; nullopt with `why` set when it cannot be.
struct LoadPlan {
  enum class Kind { constant, full, row, col } kind = Kind::full;
  std::string tensor;          // the stored tensor (after views)
  double value = 0;            // constant
  std::vector<int64_t> decl;   // the DSL shape this read needs the tensor declared with
  // an operand broadcast in the ops' shape read in a block computing another shape: a DSL view of
  // `tensor` in the block's shape (stride 0 where broadcast), which pass_emit declares
  std::optional<Strided> view;
};
std::optional<LoadPlan> lower_load_plan(const LowerState& s, const std::string& tensor,
                                        const BlockCtx& ctx, std::string& why);

// The strides of a strided tensor reshaped to `to` without moving data (PyTorch's rule for
// `view`), or nullopt where a new dim spans old dims not laid out one after another.
std::optional<std::vector<int64_t>> lower_reshape_strides(const std::vector<int64_t>& from,
                                                          const std::vector<int64_t>& stride,
                                                          const std::vector<int64_t>& to);
std::vector<int64_t> lower_contiguous_strides(const std::vector<int64_t>& shape);

// The strides of `tensor` over the stored tensor it reads: a DSL view's own, or those of a stored
// tensor (through pass_views' aliases; a transposed alias with its last two strides swapped) seen
// with its element count; nullopt otherwise.
std::optional<Strided> lower_strided_of(const LowerState& s, const std::string& tensor);

// The DSL shape a tensor is (or will be) declared with: decl_shape override or problem shape.
std::vector<int64_t> lower_decl_shape(const LowerState& s, const std::string& base);

// Whether an elementwise op's expression reads the element's position (`row`/`col`), which
// only rowwise and elementwise blocks have: such an op joins no GEMM or reduce block.
bool lower_expr_needs_index(const problem::Op& op);

// Whether an elementwise op is in the expression vocabulary; `why` says what is missing.
bool lower_expr_supported(const problem::Op& op, std::string& why);

// The expression of `op` given its operands' expressions: operand(i) returns the expression of
// op.inputs[i] (a constant for scalar operands).
dsl::ExprPtr lower_expr_op(const problem::Op& op,
                           const std::function<dsl::ExprPtr(size_t)>& operand);

// Small factories.
dsl::ExprPtr ex_const(double v);
dsl::ExprPtr ex_acc();
dsl::ExprPtr ex_local(const std::string& name);
dsl::ExprPtr ex_load(const std::string& tensor, dsl::LoadMode mode);
dsl::ExprPtr ex_index(dsl::LoadMode which);  // `row` or `col`
dsl::ExprPtr ex_bin(dsl::BinOp op, dsl::ExprPtr a, dsl::ExprPtr b);
dsl::ExprPtr ex_fn(dsl::Fn fn, std::vector<dsl::ExprPtr> args, std::vector<double> params = {});

}  // namespace ucut::lower
