// Checked GEMM programs built in C++ (no parser needed): the fixed examples of the golden and
// nvcc tests, and random VALID configurations (through gemm_rules) for the compile sample that
// proves the rules (`ucutlass compile --sample N`, bench/gemm/compile_sample.sh).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dsl/program.h"

namespace ucut::codegen {

// y = gelu(x @ W.T + b[col]) in bf16 (nn.Linear + GELU), M x N x K.
dsl::Program sample_bf16_bias_gelu(int64_t m, int64_t n, int64_t k, const dsl::GemmKnobs& knobs);
// y = x @ W.T in f32 with the given precision (tf32, f32x3 or f32), times a runtime scalar alpha.
dsl::Program sample_f32_scaled(int64_t m, int64_t n, int64_t k, dsl::Precision precision,
                               const dsl::GemmKnobs& knobs);
// y = relu(acc * s[row] + r) with rowmax into m (f16, a transposed A), exercises the residual,
// per-row vectors and a reduction.
dsl::Program sample_f16_residual_rowmax(int64_t m, int64_t n, int64_t k, const dsl::GemmKnobs& knobs);

// `count` random valid single-GEMM programs (seeded): random precision, layouts, sizes, knobs
// and epilogue; every one passes gemm_rules_check. Names are sample_<i>.
std::vector<dsl::Program> sample_random_programs(int count, uint64_t seed);

}  // namespace ucut::codegen
