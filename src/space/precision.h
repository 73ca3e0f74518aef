// The TF32 rounding bound: whether plain TF32 can meet the tolerance, decided before any attempt
// (the precision analogue of the SOL bound; docs/optimizer.md).
//
// TF32 keeps 10 explicit mantissa bits: each fp32 operand is rounded with a relative error up to
// 2^-11 (4.9e-4), so a product carries up to ~1e-3 and a K-term dot product of random-sign terms
// an error of the same relative size as its result (both grow as sqrt(K)). Where a GEMM's result
// reaches a problem output element for element (its epilogue, an elementwise or rowwise stage
// after it: an output with as many elements as the GEMM's result), that error is the output's,
// and a relative tolerance below kTf32RelativeError fails on some element of any realistic input
// (the default contract's 1e-4 failed every such problem measured since session 3). Where every
// output is smaller (a row reduction, logsumexp, a mean), errors average and TF32 may pass
// (measured: gred_linear_logsumexp, gred_linear_mean_gelu), so it is tried.
#pragma once

#include <string>

#include "dsl/program.h"
#include "sol/peaks.h"

namespace ucut::space {

// Twice TF32's unit roundoff: below this relative tolerance one rounded product can fail.
inline constexpr double kTf32RelativeError = 9.8e-4;

// A loose tolerance (kb-v01's 1e-2) holds TF32's relative error, but not always its absolute one.
// The contract's rescaled trial (inputs x4 - 2, docs/eval-contract.md §1) makes a problem input
// sign-mixed with E[x^2] >= 4/3 (U[0,1) becomes U[-2,2); randn inputs grow more). A GEMM of two
// such inputs sums K products of mean square >= 16/9 whose TF32 roundings (relative up to 2^-11
// each operand) add up to an absolute error of standard deviation about sqrt(K) * (4/3) * 2^-11,
// and with outputs near zero (there are always some in millions of sign-mixed sums) every element
// over atol fails. Measured on the H200 (2026-12-04): K = 4096, max error 0.13 against atol 0.01;
// a Linear layer (weights ~ 1/sqrt(K), not rescaled) stays at ~5e-4 and passes. The bound counts a
// failure where four standard deviations exceed atol: GEMMs whose operands are both problem inputs.
inline constexpr double kRescaledProductRms = 4.0 / 3.0;
inline constexpr double kTf32UnitRoundoff = 4.8828125e-4;  // 2^-11

// 3xTF32 (f32x3s, f32x3) is fp32-faithful per product, but the products' sum is not PyTorch's:
// on a GEMM of two rescaled inputs its absolute error against the fp32 reference grows with K as a
// TF32 one does with a unit roundoff of about 2^-20 (measured on the H200, 2026-12-04, run BO of
// docs/benchmarks.md: max error 5.3e-4 at K = 1024, 7.9e-4 to 9.2e-4 at 2048, 7.2e-4 to 2.3e-3
// at 4096, 1.6e-3 to 4.8e-3 at 8192; 2.3e-4 at K = 256 passed, its outputs large). Under the
// default 1e-4 every such GEMM from K = 1024 on failed both 3xTF32 kernels, and only FP32 SIMT (the
// summation-order rung: one FMA chain per output, in K order, as cuBLAS's SGEMM) passed. The bound
// counts a failure where four standard deviations exceed atol: K > ~390 at 1e-4; at kb-v01's 1e-2
// not below K ~ 3.9e6. (What it does not model: f32x3s's big x big GEMM accumulates each K piece
// in the tensor core, whose drift grows with the piece: kb1_matmul_large_k, K = 524288 in 8
// pieces, failed kb-v01's rescaled trial by 0.64 in run BN; gemm_rules' f32x3s split_k rule.)
inline constexpr double k3xTf32UnitRoundoff = 9.5367431640625e-7;  // 2^-20

// bf16x3 (three bf16 products, a = ah + al): each operand keeps about 16 bits, the dropped al bl
// and the remainders past al are ~2^-18 of a product. Its rounding simulated against float64
// (numpy, 2026-12-07, 256 x 4096 x 256, inputs U[-2, 2) as the rescaled trial makes them, exact
// sums): std 1.9e-4, 69x under TF32's 1.3e-2 in the same simulation. The unit roundoff here is
// TF32's scaled by that ratio, so the bound's four standard deviations keep TF32's margin: 2.4e-3
// at K = 4096 (kb-v01's atol 1e-2 holds), past 1e-2 from K ~ 70000 (kb1_matmul_large_k's 524288
// stays on 3xTF32). Its GEMM promotes its tensor-core sums into fp32 every 128 of K, so the
// accumulation adds no drift of its own (one accumulator over 3K products would: f32x3s's
// 1024-long K pieces measured up to 2.3e-3, run BO).
inline constexpr double kBf16x3UnitRoundoff = 7.0e-6;
// Twice it: below this relative tolerance one product's rounding can fail.
inline constexpr double kBf16x3RelativeError = 2 * kBf16x3UnitRoundoff;

struct Tf32Bound {
  bool fails = false;   // plain TF32 cannot meet the tolerance: the ladder starts one rung up
  // bf16x3 cannot meet it either (with `fails`; always where `faithful_fails`): where the ladder
  // holds bf16x3 (space_offers_bf16x3) it starts at 3xTF32, two rungs up, else at bf16x3
  bool bf16x3_fails = true;
  // 3xTF32 cannot meet it either (two rescaled problem inputs, a long K, atol 1e-4): the ladder
  // starts at the summation-order rung (FP32 SIMT) and the contract's SOL is that rung's
  bool faithful_fails = false;
  std::string reason;   // for the report: which stage and why (empty when !fails)
};

// `rtol_f32`: the contract profile's relative tolerance for fp32 outputs (1e-4 by default); its
// absolute tolerance is the same number in both profiles.
// Only programs whose ladder starts at TF32 (f32 data under the tf32 or bf16 policy) can fail it;
// 3xTF32 (`faithful_fails`) is judged under every policy.
Tf32Bound space_tf32_bound(const dsl::Program& program, sol::Policy policy, double rtol_f32);

// The fp32 relative tolerance of a contract profile (support/contract_profiles.h: "kb-v01" 1e-2,
// "default" 1e-4); an unknown name reads as the default.
double space_profile_rtol_f32(const std::string& profile);

}  // namespace ucut::space
