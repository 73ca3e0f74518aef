// A CPU interpreter of the checked program's non-GEMM stage semantics and of epilogue
// expressions (functions.def formulas in double precision). Tests use it as the reference the
// generated kernels must match; it is slow and simple on purpose. Tensors are flat row-major
// double vectors keyed by tensor name (integer tensors hold their values as doubles).
// Semantics (shared with src/codegen/stage_*.cpp):
//  - rowwise: over the last dim; prologue maps each x (acc = x), epilogue maps each result
//    (acc = result; loads: t[row], t[col], t full = t[row*cols+col]); eps defaults 1e-5
//    (layer_norm), 1e-6 (rms_norm), 1e-12 (l1/l2_normalize, which divide by max(norm, eps)).
//    group_norm's rows are (sample, group) pairs (dsl_rowwise_geometry); its weight/bias are
//    indexed by the channel of (row, col).
//  - reduce: sum/mean/max/min/prod over `dims` (empty: all); losses over every element with
//    attrs reduction 0 mean / 1 sum / 2 batchmean (kl_div), delta, beta, log_target,
//    ignore_index (cross_entropy, default -100; mean divides by the rows that count).
//  - scan: masked-out elements contribute the identity; exclusive starts from the identity.
//  - elementwise: numpy broadcasting of full loads; t[row]/t[col] index the output viewed as
//    [numel/last, last].
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "dsl/program.h"
#include "support/result.h"

namespace ucut::dsl {

using InterpTensors = std::map<std::string, std::vector<double>>;

// f(x[, y[, z]]) of one functions.def entry with its constant parameters.
double interp_fn(Fn fn, double x, double y, double z, const std::vector<double>& params);

// Reads of tensors inside an expression (the caller knows the index mode's meaning), and the
// element's position: Expr::Kind::index asks for `row` or `col` (mode) of the value computed.
using InterpLoad = std::function<Result<double>(const Expr& load)>;

// The value of an epilogue's single store (lets evaluated in order), with `acc`.
Result<double> interp_epilogue(const Program& p, const Epilogue& e, double acc,
                               const InterpLoad& load, const std::vector<double>& scalars);
// All stores of an epilogue, by output name (elementwise stages).
Result<std::map<std::string, double>> interp_epilogue_stores(const Program& p, const Epilogue& e,
                                                             double acc, const InterpLoad& load,
                                                             const std::vector<double>& scalars);

// Runs stage `stage_index` (rowwise, reduce, scan or elementwise) reading and writing `tensors`.
Status interp_stage(const Program& p, int stage_index, InterpTensors& tensors,
                    const std::vector<double>& scalars);

}  // namespace ucut::dsl
