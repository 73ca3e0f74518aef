// The matrix-vector kernel of `schedule gemv` (docs/language.md): y[m] = sum_k A[m, k] * x[k] for
// a row-major A [M, K] and a contiguous x [K], in fp32, adding in exactly the order of the kernels
// cuBLAS runs for PyTorch's fp32 GEMV on the H200 (gemv2T_kernel_val<..., 128, 16, G/8, G/8, ...>,
// with cublasLt::splitKreduce_kernel when K is split; found on the GPU, docs/benchmarks.md run AY):
//
//   K is cut into S chunks of C = ceil(K / S) elements (the last shorter); per row and chunk,
//   lane l (0..15) takes the chunk's elements l, l + 16, l + 32, ... in groups of G (16 or 32) of
//   its own elements (16·G chunk elements a step); a group is a product then an FMA chain in order,
//   t = x0*y0, t = fma(x1, y1, t), ...; the lane adds its groups in order, acc = acc + t (acc from
//   0); the chunk's partial is lane 0 + lane 1 + ... + lane 15 in lane order; the output is the
//   partials added in chunk order, p0 + p1 + ... + p(S-1).
//
// Bit for bit equal to cuBLAS on random and rescaled inputs at G = 16, S = 132 (one chunk per SM) on
// 8192 x 262144, and at G = 32 on 4096 and 2048 x 262144 (S = 33), 16384 and 32768 x 8192 and
// 65536 x 4096 (S = 1); FMA-free groups or another S are not (7,192 and 7,539 of 8,192 outputs
// apart on 8192 x 262144).
// Hand-written; no CUTLASS.
#pragma once

#include <cstdint>
#include <cuda_bf16.h>  // the epilogue pass's 16-bit loads and stores (gemm_epilogue_pass)
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace ucut_gemv {

constexpr int kLanes = 16;  // lanes of one row

// One block: kRows rows of one chunk (the code generator's gemm_gemv_rows_per_block; more rows
// share one staging of x's piece). Each half-warp is one row. GROUP: a lane's elements per group
// (16 or 32). A is read once, with streaming loads.
template <int GROUP, int kRows>
__global__ void __launch_bounds__(kRows * kLanes)
    partials(const float* __restrict__ a, const float* __restrict__ x, float* __restrict__ part, long long M,
             long long K, long long chunk) {
  constexpr int kGroup = GROUP;
  constexpr int kStep = kLanes * kGroup;  // chunk elements per group step
  constexpr int kPiece = 8 * kStep;       // x elements staged in shared memory at a time
  __shared__ float xs[kPiece];
  const int lane = threadIdx.x % kLanes;
  const long long m = static_cast<long long>(blockIdx.x) * kRows + threadIdx.x / kLanes;
  const long long start = static_cast<long long>(blockIdx.y) * chunk;
  long long n = K - start;
  if (n > chunk) n = chunk;
  if (n < 0) n = 0;
  const float* row = a + (m < M ? m : 0) * K + start;
  float acc = 0.f;
  for (long long base = 0; base < n; base += kPiece) {
    const int len = static_cast<int>(n - base < kPiece ? n - base : kPiece);
    __syncthreads();
    for (int i = threadIdx.x; i < len; i += blockDim.x) xs[i] = x[start + base + i];
    __syncthreads();
    if (m >= M) continue;
    for (int g = 0; g < len; g += kStep) {
      const int o = g + lane;  // this lane's first element of the group
      if (o >= len) break;     // the lane has no element left in this chunk
      float v[kGroup];
#pragma unroll
      for (int q = 0; q < kGroup; ++q) v[q] = o + kLanes * q < len ? __ldcs(row + base + o + kLanes * q) : 0.f;
      float t = __fmul_rn(v[0], xs[o]);
#pragma unroll
      for (int q = 1; q < kGroup; ++q)
        if (o + kLanes * q < len) t = __fmaf_rn(v[q], xs[o + kLanes * q], t);
      acc = __fadd_rn(acc, t);
    }
  }
  // lanes in order: every thread of the half-warp takes part (rows past M add zeros, unused)
  const int first = threadIdx.x & (32 - kLanes);
  float s = __shfl_sync(0xffffffffu, acc, first);
  for (int l = 1; l < kLanes; ++l) s = __fadd_rn(s, __shfl_sync(0xffffffffu, acc, first + l));
  if (lane == 0 && m < M) part[static_cast<long long>(blockIdx.y) * M + m] = s;
}

// out[m] = part[0][m] + part[1][m] + ... in chunk order.
__global__ void __launch_bounds__(256) reduce(const float* __restrict__ part, float* __restrict__ out, long long M,
                                              int splits) {
  const long long m = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (m >= M) return;
  float s = part[m];
  for (int c = 1; c < splits; ++c) s = __fadd_rn(s, part[static_cast<long long>(c) * M + m]);
  out[m] = s;
}

// Bytes of partials `run` needs in `work` (none for one chunk: the chunk's sums are the outputs).
inline size_t workspace_bytes(long long M, int splits) {
  return splits > 1 ? static_cast<size_t>(M) * static_cast<size_t>(splits) * sizeof(float) : 0;
}

// y = A x on `stream` in groups of GROUP (16 or 32), ROWS rows a block; `work` holds
// workspace_bytes(M, splits). Returns the launch error.
template <int GROUP, int ROWS>
inline cudaError_t run(const float* a, const float* x, float* y, float* work, long long M, long long K, int splits,
                       cudaStream_t stream) {
  if (M <= 0) return cudaSuccess;
  const long long chunk = (K + splits - 1) / splits;
  const dim3 grid(static_cast<unsigned>((M + ROWS - 1) / ROWS), static_cast<unsigned>(splits));
  partials<GROUP, ROWS><<<grid, ROWS * kLanes, 0, stream>>>(a, x, splits > 1 ? work : y, M, K, chunk);
  if (splits > 1) reduce<<<static_cast<unsigned>((M + 255) / 256), 256, 0, stream>>>(work, y, M, splits);
  return cudaGetLastError();
}

}  // namespace ucut_gemv
