// Device functors for the epilogue function table (dsl/functions.def): one `__device__` function
// per entry, as CUDA C++ text, so every emitter (GEMM epilogues, the non-GEMM stages) calls the
// same math. The text is guarded by a macro, so several stages of one .cu may paste it; the
// library emitter may instead write it once as a header.
#pragma once

#include <string>
#include <vector>

#include "dsl/program.h"

namespace ucut::codegen {

// The guarded block of `__device__ __forceinline__ float ucut_fn_<name>(float x[, float y]
// [, float p0, float p1])` definitions for every function of functions.def, plus
// `ucut_fast_<name>` for the functions whose `math fast` form differs (hardware approximations
// of exp, log, tanh, sqrt and division; same formulas).
const std::string& codegen_functors_source();
// `ucut_fn_round_bf16` and `ucut_fn_round_f16` (functions.def's roundings to a 16-bit type), in
// their own guarded block: emitted only into code that calls them, so the block above, and with
// it every stored unit's text and key, does not change when they are added.
const std::string& codegen_rounding_source();

// A call of function `fn` on already-rendered float operands, with its constant parameters
// (defaults filled in by the checker) rendered as float literals. `fast`: the approximate form
// where one exists.
std::string codegen_fn_call(dsl::Fn fn, const std::vector<std::string>& args,
                            const std::vector<double>& params, bool fast = false);

// Whether function `fn` has a distinct `math fast` form.
bool codegen_fn_has_fast(dsl::Fn fn);

// A float literal that round-trips `v` ("1.5f", "-INFINITY", "NAN").
std::string codegen_float_literal(double v);

}  // namespace ucut::codegen
