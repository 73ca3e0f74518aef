// Shared emission helpers of the non-GEMM stage emitters (stage_rowwise/reduce/scan/elementwise):
// CUDA type names, vector-width choice, rendering epilogue expressions to CUDA text, prologue /
// epilogue functor structs, and the launch-and-check boilerplate of a generated launcher.
// Runtime templates the generated code calls live in runtime/simt_*.cuh.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/stage_emitter.h"
#include "dsl/program.h"
#include "support/result.h"

namespace ucut::codegen {

// Folder holding simt_*.cuh: the library build passes it to nvcc with -I.
std::string simt_runtime_include_dir();
// The runtime headers in that folder (their contents key the kernel cache).
std::vector<std::string> simt_runtime_headers();

// "float", "__half", "__nv_bfloat16", "int", "long long", "unsigned char", "bool".
const char* simt_cuda_type(dsl::DType t);
bool simt_is_float(dsl::DType t);
const char* simt_dtype_name(dsl::DType t);

// "ucut_s<index>_": the prefix of every namespace-scope name a stage emits.
std::string simt_prefix(int stage_index);

// Index of a tensor / scalar in Program::tensors / Program::scalars; -1 when absent.
int simt_tensor_index(const dsl::Program& p, const std::string& name);
int simt_scalar_index(const dsl::Program& p, const std::string& name);

// How a load of a tensor inside an expression is rendered, given the tensor's field name in
// the functor (e.g. "t0") and its dtype; returns the float-valued CUDA expression.
using LoadRenderer =
    std::function<Result<std::string>(const dsl::Expr& load, const std::string& field,
                                      const dsl::Tensor& tensor)>;

// A prologue/epilogue functor: `struct NAME { fields; float operator()(float acc, i64 row,
// i64 col) const; }` plus the launcher-side initializer reading StageArgs `args`.
struct FunctorCode {
  std::string type;        // "ucut_s0_epi" or "ucut_simt::Identity"
  std::string definition;  // empty for Identity
  std::string init;        // "ucut_s0_epi{args.tensors[2], (float)args.scalars[0]}"
};

// Renders `epi` (lets plus one store; no reductions) as a functor named `name`. `what` names
// the expression in messages ("rowwise prologue of stage s1"). An empty epilogue is Identity.
// `index`: how `row` and `col` are computed from the functor's arguments (simt_matrix_index);
// empty when the block has no element position.
struct IndexExprs {
  std::string row, col;  // integer CUDA expressions; empty: not available
};
Result<FunctorCode> simt_emit_functor(const dsl::Program& program, const dsl::Epilogue& epi,
                                      const std::string& name, const std::string& what,
                                      const LoadRenderer& render_load, const IndexExprs& index = {});

// `row` and `col` of the elements of a value of `shape`, given CUDA expressions of an element's
// flat row (over every leading dim) and column: the flat row modulo the matrix's rows
// (dsl_matrix_rows), and the column.
IndexExprs simt_matrix_index(const std::vector<int64_t>& shape, const std::string& flat_row, const std::string& col);

// Renders one expression; `acc` is the text for Expr::acc (empty: acc not allowed); loads are
// registered in `fields` (tensor names, in order of first use) and rendered via render_load.
struct ExprEnv {
  const dsl::Program* program = nullptr;
  std::string acc;
  std::string what;
  std::vector<std::string>* fields = nullptr;      // tensor names, field i is "t<i>"
  std::vector<std::string>* scalars = nullptr;     // scalar names, field i is "s<i>"
  LoadRenderer render_load;
  IndexExprs index;  // `row` / `col`
};
Result<std::string> simt_render_expr(const dsl::Expr& e, const ExprEnv& env);

// The offset in a tensor of shape `ts` and strides `st` of the element output position `var` reads,
// walking `walk` from its last dim (the output's shape, broadcasting `ts` NumPy-style, or a view's
// own shape in the output's element order): a term for each dim the tensor does not broadcast
// and does not repeat (stride 0); `small` divides in 32 bits (every position below 2^31).
std::string simt_element_offset(const std::vector<int64_t>& walk, const std::vector<int64_t>& ts,
                                const std::vector<int64_t>& st, bool small, const std::string& var = "i");
// The same for a contiguous tensor of shape `ts` broadcast to the output's shape `out`.
std::string simt_broadcast_offset(const std::vector<int64_t>& out, const std::vector<int64_t>& ts,
                                  const std::string& var = "i");

// The statements that check a kernel launch and return ABI code 4 with a message.
std::string simt_launch_check(const std::string& stage_name);

// The comment line every stage's definitions open with. The functor block
// (codegen_functors_source) comes from the library emitter, once per library.
std::string simt_banner(const dsl::Program& program, int stage_index, const std::string& kind);

// The stage and its name for messages ("stage s2"), with an internal check on the variant.
const dsl::Stage& simt_stage(const dsl::Program& program, int stage_index);
std::string simt_stage_label(const dsl::Program& program, int stage_index);

}  // namespace ucut::codegen
