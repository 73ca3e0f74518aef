// Fused correctness checks for the evaluation contract's comparisons and fingerprints
// (docs/eval-contract.md, "Memory" and "Cost"): one pass over the tensors instead of the dozen
// PyTorch operations a piece that correctness.py's quick comparison and fingerprints run, each of
// them a full read or write of a 6 GiB output. The worker compiles this file with nvcc the first
// time it runs on a GPU (fused_checks.py), checks it against the PyTorch path on a battery of
// tensors, and otherwise keeps the PyTorch path: the verdict never depends on which one ran.
//
// Every kernel writes one partial result a block; the caller finishes the reduction over the
// blocks with a few PyTorch operations and reads everything in one transfer.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <climits>
#include <cmath>
#include <cstdint>

namespace {

__device__ __forceinline__ float as_float(float v) { return v; }
__device__ __forceinline__ float as_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float as_float(__half v) { return __half2float(v); }

// One element of the quick comparison, with PyTorch's roundings: d = |o - r|, bound = fl(fl(rtol *
// |r|) + atol), score = fl(d - bound), rel = d / |r| (0 where r == 0). The explicit _rn intrinsics
// keep nvcc from contracting rtol * |r| + atol into one fused multiply-add.
// Trivially constructible (it lives in shared memory too): start() sets the empty state.
struct Acc {
  float d_max, r_max, rel_max, score;
  long long index;
  unsigned int bad;

  __device__ __forceinline__ void start() {
    d_max = r_max = rel_max = score = -INFINITY;
    index = LLONG_MAX;
    bad = 0;
  }

  __device__ __forceinline__ void add(float o, float r, float atol, float rtol, long long i) {
    const float d = fabsf(__fsub_rn(o, r));
    const float ra = fabsf(r);
    const float s = __fsub_rn(d, __fadd_rn(__fmul_rn(ra, rtol), atol));
    // not finite, or out of tolerance (a NaN score is bad too: the comparison is false)
    if (!(isfinite(d) && isfinite(ra) && s <= 0.0f)) ++bad;
    d_max = fmaxf(d_max, d);
    r_max = fmaxf(r_max, ra);
    rel_max = fmaxf(rel_max, ra == 0.0f ? 0.0f : __fdiv_rn(d, ra));
    if (s > score || (s == score && i < index)) {  // the first of the highest score
      score = s;
      index = i;
    }
  }
  __device__ __forceinline__ void merge(const Acc& o) {
    d_max = fmaxf(d_max, o.d_max);
    r_max = fmaxf(r_max, o.r_max);
    rel_max = fmaxf(rel_max, o.rel_max);
    if (o.score > score || (o.score == score && o.index < index)) {
      score = o.score;
      index = o.index;
    }
    bad += o.bad;
  }
};

__device__ __forceinline__ Acc shfl_down(const Acc& a, int k) {
  Acc b;
  b.d_max = __shfl_down_sync(0xffffffffu, a.d_max, k);
  b.r_max = __shfl_down_sync(0xffffffffu, a.r_max, k);
  b.rel_max = __shfl_down_sync(0xffffffffu, a.rel_max, k);
  b.score = __shfl_down_sync(0xffffffffu, a.score, k);
  b.index = __shfl_down_sync(0xffffffffu, a.index, k);
  b.bad = __shfl_down_sync(0xffffffffu, a.bad, k);
  return b;
}

constexpr int kThreads = 256;

// floats: [blocks][4] (d_max, r_max, rel_max, score); index: [blocks]; bad: [blocks]
template <typename T>
__global__ void __launch_bounds__(kThreads) compare_kernel(const T* __restrict__ out, const T* __restrict__ ref,
                                                           long long n, float atol, float rtol, float* floats,
                                                           long long* index, int* bad) {
  Acc acc;
  acc.start();
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Four elements a thread in flight (their loads first): one at a time leaves too few bytes in
  // flight to stream at the memory's speed. add() keeps the first index among equal scores
  // whatever order it sees them in.
  for (; i + 3 * stride < n; i += 4 * stride) {
    float o[4], r[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      o[u] = as_float(out[i + u * stride]);
      r[u] = as_float(ref[i + u * stride]);
    }
#pragma unroll
    for (int u = 0; u < 4; ++u) acc.add(o[u], r[u], atol, rtol, i + u * stride);
  }
  for (; i < n; i += stride) acc.add(as_float(out[i]), as_float(ref[i]), atol, rtol, i);
  for (int k = 16; k > 0; k >>= 1) acc.merge(shfl_down(acc, k));
  __shared__ Acc warps[kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warps[warp] = acc;
  __syncthreads();
  if (threadIdx.x == 0) {
    Acc total = warps[0];
    for (int w = 1; w < kThreads / 32; ++w) total.merge(warps[w]);
    floats[4 * blockIdx.x + 0] = total.d_max;
    floats[4 * blockIdx.x + 1] = total.r_max;
    floats[4 * blockIdx.x + 2] = total.rel_max;
    floats[4 * blockIdx.x + 3] = total.score;
    index[blockIdx.x] = total.index;
    bad[blockIdx.x] = static_cast<int>(total.bad > 0x7fffffffu ? 0x7fffffffu : total.bad);
  }
}

// The fingerprint of correctness.fingerprints over words W (int32, int16 or uint8) cut in pieces of
// `step` words: plain = sum of the words (sign-extended; bytes zero-extended) and mixed = sum over
// pieces of (piece number + 1) * sum of (word XOR mask(position in the piece)), mask(p) = (p *
// 2654435761 + 40503) mod 2^bits, both modulo 2^64 as PyTorch's int64 sums wrap.
template <typename W, int kBits>
__global__ void __launch_bounds__(kThreads) fingerprint_kernel(const W* __restrict__ words, long long n,
                                                               long long step, unsigned long long* sums) {
  unsigned long long plain = 0, mixed = 0;
  const long long stride = static_cast<long long>(gridDim.x) * blockDim.x;
  const unsigned long long mask_bits = (1ull << kBits) - 1;
  const long long first = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  // The piece and the position in it move with the index: by subtraction when a piece is longer
  // than the grid's stride (the usual case, 64 Mi words), as a 64-bit division an element cost
  // more than the memory traffic.
  long long piece = first / step, pos = first - piece * step;
  auto take = [&](W w, long long i) {  // i: the word's index; piece and pos already at it
    const W m = static_cast<W>((static_cast<unsigned long long>(pos) * 2654435761ull + 40503ull) & mask_bits);
    const W x = static_cast<W>(w ^ m);
    plain += static_cast<unsigned long long>(static_cast<long long>(w));
    mixed += static_cast<unsigned long long>(piece + 1) * static_cast<unsigned long long>(static_cast<long long>(x));
    // on to i + stride
    if (step >= stride) {
      pos += stride;
      if (pos >= step) {
        pos -= step;
        ++piece;
      }
    } else {
      piece = (i + stride) / step;
      pos = (i + stride) - piece * step;
    }
  };
  long long i = first;
  for (; i + 3 * stride < n; i += 4 * stride) {  // four loads in flight, as compare_kernel
    W w[4];
#pragma unroll
    for (int u = 0; u < 4; ++u) w[u] = words[i + u * stride];
#pragma unroll
    for (int u = 0; u < 4; ++u) take(w[u], i + u * stride);
  }
  for (; i < n; i += stride) take(words[i], i);
  for (int k = 16; k > 0; k >>= 1) {
    plain += __shfl_down_sync(0xffffffffu, plain, k);
    mixed += __shfl_down_sync(0xffffffffu, mixed, k);
  }
  __shared__ unsigned long long warps[2][kThreads / 32];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) {
    warps[0][warp] = plain;
    warps[1][warp] = mixed;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long p = 0, q = 0;
    for (int w = 0; w < kThreads / 32; ++w) {
      p += warps[0][w];
      q += warps[1][w];
    }
    sums[2 * blockIdx.x + 0] = p;
    sums[2 * blockIdx.x + 1] = q;
  }
}

int blocks_for(long long n, int max_blocks) {
  const long long want = (n + kThreads - 1) / kThreads;
  return static_cast<int>(want < max_blocks ? (want < 1 ? 1 : want) : max_blocks);
}

}  // namespace

extern "C" {

// Threads a block (the partial buffers hold one entry a block).
int ucut_fused_threads() { return kThreads; }

// dtype: 0 float32, 1 bfloat16, 2 float16. Returns 0, or a cudaError_t of the launch.
int ucut_fused_compare(int dtype, const void* out, const void* ref, long long n, float atol, float rtol,
                       int blocks, float* floats, long long* index, int* bad, void* stream) {
  const int g = blocks_for(n, blocks);
  auto s = static_cast<cudaStream_t>(stream);
  switch (dtype) {
    case 0:
      compare_kernel<float><<<g, kThreads, 0, s>>>(static_cast<const float*>(out), static_cast<const float*>(ref), n,
                                                    atol, rtol, floats, index, bad);
      break;
    case 1:
      compare_kernel<__nv_bfloat16><<<g, kThreads, 0, s>>>(static_cast<const __nv_bfloat16*>(out),
                                                            static_cast<const __nv_bfloat16*>(ref), n, atol, rtol,
                                                            floats, index, bad);
      break;
    case 2:
      compare_kernel<__half><<<g, kThreads, 0, s>>>(static_cast<const __half*>(out), static_cast<const __half*>(ref), n,
                                                     atol, rtol, floats, index, bad);
      break;
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

// word_bytes: 4, 2 or 1. Returns 0, or a cudaError_t of the launch.
int ucut_fused_fingerprint(int word_bytes, const void* words, long long n, long long step, int blocks,
                           unsigned long long* sums, void* stream) {
  const int g = blocks_for(n, blocks);
  auto s = static_cast<cudaStream_t>(stream);
  switch (word_bytes) {
    case 4:
      fingerprint_kernel<int32_t, 31><<<g, kThreads, 0, s>>>(static_cast<const int32_t*>(words), n, step, sums);
      break;
    case 2:
      fingerprint_kernel<int16_t, 15><<<g, kThreads, 0, s>>>(static_cast<const int16_t*>(words), n, step, sums);
      break;
    case 1:
      fingerprint_kernel<uint8_t, 8><<<g, kThreads, 0, s>>>(static_cast<const uint8_t*>(words), n, step, sums);
      break;
    default:
      return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

}  // extern "C"
