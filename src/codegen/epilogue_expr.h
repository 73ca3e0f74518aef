// Epilogue expressions as CUDA C++ text, shared by the GEMM emitters: the leaf inputs an
// epilogue reads (accumulator, residual, row/column vectors, runtime scalars), the scalar C++ of
// a statement's value over those leaves (lets inlined as locals, constants as float literals),
// and the device functor header for every function of src/dsl/functions.def (formulas exactly as
// written there; golden-tested through the generated libraries).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "dsl/program.h"

namespace ucut::codegen {

// One input of an epilogue, in the order the emitters pass them.
struct EpiLeaf {
  enum class Kind { acc, full, row, col, scalar } kind = Kind::acc;
  std::string name;      // tensor or scalar name ("" for acc)
  int scalar_index = -1; // index in Program::scalars
  std::string var;       // C++ variable name inside generated code
};

// The leaves `epilogue` reads: always acc first, then tensors and scalars in first-use order.
std::vector<EpiLeaf> epi_leaves(const dsl::Program& p, const dsl::Epilogue& epilogue);

// C++ statements computing every `let` of the epilogue into float locals, followed by nothing;
// leaf variables are named by EpiLeaf::var and must be in scope. `indent` prefixes each line.
// `fast`: the stage's resolved `math` is fast (approximate functions and division).
std::string epi_lets_cpp(const dsl::Epilogue& epilogue, const std::string& indent, bool fast = false);

// The float C++ expression of `e` (lets referenced by their local names).
std::string epi_expr_cpp(const dsl::Expr& e, bool fast = false);

// The device functor header: namespace ucut_fn with one __device__ float function per entry of
// functions.def (with its constant parameters as trailing float arguments) and the atomic
// reduction helpers. Emitted once per library, and before each unit; `code` is what follows it:
// where that calls a rounding to a 16-bit type (ucut_fn_round_*), their block is added.
std::string epi_functor_header(const std::string& code);

// A float literal spelled exactly ("static_cast<float>(0.5)").
std::string epi_float(double v);

// `epilogue` in a form that carries no program text, and how its names map back: lets read once
// (or never) are written into their reader, then loaded tensors are named t0, t1, ..., scalars
// p0, p1, ... and the remaining lets v0, v1, ... in the order the statements read them, the
// store's output `out` and the reductions' r0, r1, .... Code emitted from it is the same text for
// every epilogue of the same form (a stored kernel unit, docs/kernel-abi.md); a GEMM's leaves
// (epi_leaves of the canonical epilogue) are bound to the program's tensors and scalars through
// tensor_of and scalar_of.
struct CanonicalEpilogue {
  dsl::Epilogue epilogue;
  std::map<std::string, std::string> tensor_of, scalar_of;  // canonical name -> the program's
};
CanonicalEpilogue epi_canonical(const dsl::Epilogue& epilogue);

// The main store statement of an epilogue (its single `store` kind statement), or nullptr.
const dsl::EpilogueStmt* epi_main_store(const dsl::Epilogue& epilogue);

// Whether the epilogue is exactly `out = acc` (no loads, functions or reductions).
bool epi_is_identity(const dsl::Epilogue& epilogue);

}  // namespace ucut::codegen
