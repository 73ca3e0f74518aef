// The reduce stage templates: reductions over any set of dimensions and the full-reduction
// losses. The emitter merges adjacent dimensions into alternating kept/reduced groups and picks:
//   reduce_inner_kernel: the innermost dimension is reduced. One block per (output, split)
//     sweeps the output's reduced elements with coalesced VEC-wide loads (a row sum, a full
//     reduction, batch-norm statistics over [N, C, HW]).
//   reduce_outer_kernel: the innermost dimension is kept (column reductions). A block covers
//     32*VEC adjacent outputs with THREADS/32 rows of threads walking the reduced index, then
//     combines the rows of threads in shared memory in a fixed order.
// When outputs are too few to fill the GPU the reduced range is split across blocks (`splits`)
// and each block writes a partial to the stage's workspace; reduce_finalize_kernel combines
// the partials in a fixed order. Everything is deterministic: no atomics.
#pragma once

#include <type_traits>

#include "simt_common.cuh"

namespace ucut_simt {

enum RedOp : int { kRedSum, kRedMax, kRedMin, kRedProd,
                   // column (outer kernel) only: online (max, sum-exp) pairs; the extreme value
                   // with its index along the one reduced dimension (values to out, indices to out2)
                   kRedLogSumExp, kRedArgMax, kRedArgMin };
template <int OP> constexpr bool red_is_arg = OP == kRedArgMax || OP == kRedArgMin;
// Elementwise loss terms f(x, t) reduced with a sum (full reductions of two inputs).
enum Loss : int { kNoLoss, kMse, kL1, kHuber, kSmoothL1, kKlDiv, kKlDivLogTarget, kHinge };

template <int OP> __device__ __forceinline__ float red_identity() {
  if constexpr (OP == kRedMax) return -INFINITY;
  else if constexpr (OP == kRedMin) return INFINITY;
  else if constexpr (OP == kRedProd) return 1.f;
  else return 0.f;
}
template <int OP> __device__ __forceinline__ float red_combine(float a, float b) {
  if constexpr (OP == kRedMax) return MaxOp()(a, b);
  else if constexpr (OP == kRedMin) return MinOp()(a, b);
  else if constexpr (OP == kRedProd) return a * b;
  else return a + b;
}
// Column reductions (reduce_outer_kernel and the split finalize) accumulate sums in double: a sum
// over 16 K rows carries partials ~100x its elements, and fp32 accumulation drifts past atol=1e-4
// near zero. (Each thread's own rows are summed in fp32 with Kahan compensation first, as
// accurate and cheaper than converting every element.) Max/min/prod stay in float (exact, or no
// better in double).
template <int OP> struct RedAcc { using T = float; };
template <> struct RedAcc<kRedSum> { using T = double; };
template <> struct RedAcc<kRedLogSumExp> { using T = MaxSum; };
template <> struct RedAcc<kRedArgMax> { using T = ArgVal; };
template <> struct RedAcc<kRedArgMin> { using T = ArgVal; };
// What a split writes to the workspace: a float, or the whole state of the pair ops.
template <int OP> struct RedPartial { using T = float; };
template <> struct RedPartial<kRedLogSumExp> { using T = MaxSum; };
template <> struct RedPartial<kRedArgMax> { using T = ArgVal; };
template <> struct RedPartial<kRedArgMin> { using T = ArgVal; };
template <int OP> __device__ __forceinline__ typename RedAcc<OP>::T red_identity_acc() {
  if constexpr (OP == kRedLogSumExp) return MaxSum{-INFINITY, 0.f};
  else if constexpr (OP == kRedArgMax) return ArgVal{-INFINITY, (i64)1 << 62};
  else if constexpr (OP == kRedArgMin) return ArgVal{INFINITY, (i64)1 << 62};
  else return typename RedAcc<OP>::T(red_identity<OP>());
}
template <int OP, class T> __device__ __forceinline__ T red_combine_acc(T a, T b) {
  if constexpr (OP == kRedSum) return a + b;
  else if constexpr (OP == kRedLogSumExp) return MaxSumOp()(a, b);
  else if constexpr (OP == kRedArgMax) return ArgOp<true>()(a, b);
  else if constexpr (OP == kRedArgMin) return ArgOp<false>()(a, b);
  else return red_combine<OP>(a, b);
}
// One element x into a thread's state (sums: Kahan, and argmax/argmin: a 32-bit index, in the kernel).
template <int OP, class T> __device__ __forceinline__ void red_add(T& a, float x) {
  if constexpr (OP == kRedLogSumExp) online_add(a, x);
  else a = red_combine_acc<OP, T>(a, T(x));
}
template <int OP, class T> __device__ __forceinline__ float red_value(const T& a, float scale) {
  if constexpr (OP == kRedLogSumExp) return a.m == -INFINITY ? a.m : a.m + logf(a.s);
  else if constexpr (red_is_arg<OP>) return a.v;
  else return float(a * T(scale));
}
template <int OP, class T> __device__ __forceinline__ typename RedPartial<OP>::T red_to_partial(const T& a) {
  return typename RedPartial<OP>::T(a);
}
template <int OP> __device__ __forceinline__ typename RedAcc<OP>::T red_from_partial(
    const typename RedPartial<OP>::T& p) {
  return typename RedAcc<OP>::T(p);
}

template <int OP, class T = float> struct RedCombine {
  __device__ __forceinline__ T operator()(T a, T b) const { return red_combine_acc<OP, T>(a, b); }
};

template <int LOSS> __device__ __forceinline__ float loss_term(float x, float t, float alpha) {
  if constexpr (LOSS == kMse) { float d = x - t; return d * d; }
  else if constexpr (LOSS == kL1) return fabsf(x - t);
  else if constexpr (LOSS == kHuber) {
    float d = fabsf(x - t);
    return d < alpha ? 0.5f * d * d : alpha * (d - 0.5f * alpha);
  } else if constexpr (LOSS == kSmoothL1) {
    float d = fabsf(x - t);
    return d < alpha ? 0.5f * d * d / alpha : d - 0.5f * alpha;
  } else if constexpr (LOSS == kKlDiv) return t > 0.f ? t * (logf(t) - x) : 0.f;
  else if constexpr (LOSS == kKlDivLogTarget) return expf(t) * (t - x);
  else if constexpr (LOSS == kHinge) return fmaxf(1.f - x * t, 0.f);
  else return x;
}

// Up to 8 merged dimension groups: offset of a flat index inside the groups (row-major).
struct Groups {
  int n;
  i64 ext[8];
  i64 stride[8];
  __device__ __forceinline__ i64 offset(i64 idx) const {
    i64 off = 0;
    for (int g = n - 1; g >= 0; --g) {
      const i64 q = idx / ext[g];
      off += (idx - q * ext[g]) * stride[g];
      idx = q;
    }
    return off;
  }
};

struct ReduceParams {
  const void* x;
  const void* t;       // second operand of a loss, same shape as x
  void* out;           // [n_out] final results (when splits == 1); arg ops: the values, or null
  long long* out2;     // arg ops: [n_out] indices along the reduced dimension
  void* partial;       // workspace partials (when splits > 1): RedPartial<OP>::T each
  Groups kept;         // kept groups (inner kernel: all; outer kernel: all but the innermost)
  Groups red;          // reduced groups (inner kernel: all but the innermost run of length L)
  i64 n_out;           // number of outputs
  i64 inner;           // inner kernel: L, the innermost reduced run; outer kernel: I, kept run
  i64 r_total;         // reduced elements per output (inner: Q*L; outer: Q)
  i64 r_chunk;         // reduced elements per split (multiple of VEC for the inner kernel)
  int splits;
  float scale;         // final multiplier (1/count for means)
  float alpha;         // loss parameter (huber delta, smooth_l1 beta)
};

// Writes output o of a reduction from its final state (arg ops: the value, if asked, and the index).
template <int OP, class Epi, class T>
__device__ __forceinline__ void red_store(const ReduceParams& p, const Epi& epi, i64 o, const T& a) {
  using Tout = typename Epi::Tout;
  if constexpr (red_is_arg<OP>) {
    if (p.out) static_cast<Tout*>(p.out)[o] = from_f<Tout>(epi(a.v, o, 0));
    p.out2[o] = a.i;
  } else {
    static_cast<Tout*>(p.out)[o] = from_f<Tout>(epi(red_value<OP>(a, p.scale), o, 0));
  }
}

template <int OP, int LOSS, class Tin, class Tt, int THREADS, int VEC, bool SIMPLE, class Pro, class Epi>
__global__ void __launch_bounds__(THREADS)
reduce_inner_kernel(ReduceParams p, Pro pro, Epi epi) {
  const i64 o = blockIdx.x;
  const int s = blockIdx.y;
  const i64 base = p.kept.offset(o);
  const Tin* x = static_cast<const Tin*>(p.x);
  const Tt* t = static_cast<const Tt*>(p.t);
  const i64 r_begin = (i64)s * p.r_chunk;
  const i64 r_end = min(p.r_total, r_begin + p.r_chunk);
  float acc = red_identity<OP>();
  constexpr int UNROLL = 4;  // independent loads in flight per thread
  for (i64 r0 = r_begin + (i64)threadIdx.x * VEC; r0 < r_end; r0 += (i64)THREADS * VEC * UNROLL) {
    float v[UNROLL][VEC], w[UNROLL][VEC];
    i64 off[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const i64 r = r0 + (i64)u * THREADS * VEC;
      if (r < r_end) {
        if constexpr (SIMPLE) {
          off[u] = base + r;
        } else {
          const i64 q = r / p.inner;
          off[u] = base + p.red.offset(q) + (r - q * p.inner);
        }
        load_vec_stream<Tin, VEC>(x, off[u], v[u]);
        if constexpr (LOSS != kNoLoss) load_vec_stream<Tt, VEC>(t, off[u], w[u]);
      }
    }
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) {
      const i64 r = r0 + (i64)u * THREADS * VEC;
      if (r < r_end) {
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          float e;
          if constexpr (LOSS != kNoLoss) e = loss_term<LOSS>(pro(v[u][k], o, off[u] + k), w[u][k], p.alpha);
          else e = pro(v[u][k], o, off[u] + k);
          acc = red_combine<OP>(acc, e);
        }
      }
    }
  }
  acc = block_allreduce<THREADS>(acc, RedCombine<OP>());
  if (threadIdx.x == 0) {
    if (p.splits == 1) {
      using Tout = typename Epi::Tout;
      static_cast<Tout*>(p.out)[o] = from_f<Tout>(epi(acc * p.scale, o, 0));
    } else {
      static_cast<float*>(p.partial)[o * p.splits + s] = acc;
    }
  }
}

// UNROLL: reduced rows each thread loads before combining (VEC-wide loads in flight).
// CLUSTER > 1: the grid's y blocks (splits == CLUSTER) form one cluster; each block's partials
// stay in its shared memory and rank r combines a 1/CLUSTER slice of the columns from every
// rank in rank order (deterministic), then writes the outputs.
// At least 1024 resident threads an SM (at most 64 registers a thread): a one-wave grid of
// blocks of any size keeps the same loads in flight an SM.
template <int OP, class Tin, int THREADS, int VEC, class Pro, class Epi, int UNROLL = 4, int CLUSTER = 1>
__global__ void __launch_bounds__(THREADS, (THREADS < 1024 ? 1024 / THREADS : 1))
reduce_outer_kernel(ReduceParams p, Pro pro, Epi epi) {
  constexpr int ROWS = THREADS / 32;
  const i64 tiles = (p.inner + 32 * VEC - 1) / (32 * VEC);
  const i64 oo = blockIdx.x / tiles;
  const i64 i = ((blockIdx.x - oo * tiles) * 32 + threadIdx.x % 32) * VEC;
  const int ty = threadIdx.x / 32;
  const int s = blockIdx.y;
  const Tin* x = static_cast<const Tin*>(p.x);
  const i64 base = p.kept.offset(oo) + i;
  const i64 r_begin = (i64)s * p.r_chunk;
  const i64 r_end = min(p.r_total, r_begin + p.r_chunk);
  using A = typename RedAcc<OP>::T;
  A acc[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) acc[k] = red_identity_acc<OP>();
  // Sums: each thread adds its rows in fp32 with Kahan compensation (four fp32 adds an element,
  // no float -> double conversion in the loop), then hands s - c to the fp64 combine.
  float ks[VEC], kc[VEC];
#pragma unroll
  for (int k = 0; k < VEC; ++k) ks[k] = kc[k] = 0.f;
  // Argmax/argmin: a thread's state holds its row as a 32-bit offset from r_begin (ArgOp's rule
  // on ArgValOf<int>; kNoRow: none yet), widened to an ArgVal after the sweep. A 64-bit index
  // beside every loaded row spilled at 16 rows ahead (ptxas: 272 bytes at 512 threads); the
  // launch code refuses an r_chunk of 2^31 or more (codegen/stage_reduce.cpp).
  constexpr int kNoRow = 0x7fffffff;
  ArgValOf<int> arg[VEC];
  if constexpr (red_is_arg<OP>) {
#pragma unroll
    for (int k = 0; k < VEC; ++k) arg[k] = ArgValOf<int>{red_identity_acc<OP>().v, kNoRow};
  }
  // One reduced group (a plain column reduction) is one stride: no index division per load.
  auto sweep = [&](auto one_group) {
    const i64 rstride = p.red.stride[0];
    for (i64 r0 = r_begin + ty; r0 < r_end; r0 += (i64)ROWS * UNROLL) {
      float v[UNROLL][VEC];
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const i64 r = r0 + (i64)u * ROWS;
        const i64 off = decltype(one_group)::value ? r * rstride : p.red.offset(r);
        if (r < r_end) load_vec_stream<Tin, VEC>(x, base + off, v[u]);
      }
#pragma unroll
      for (int u = 0; u < UNROLL; ++u) {
        const i64 r = r0 + (i64)u * ROWS;
        if (r < r_end) {
#pragma unroll
          for (int k = 0; k < VEC; ++k) {
            const float x1 = pro(v[u][k], oo * p.inner + i + k, 0);
            if constexpr (OP == kRedSum) {
              const float y = __fsub_rn(x1, kc[k]);
              const float t = __fadd_rn(ks[k], y);
              kc[k] = __fsub_rn(__fsub_rn(t, ks[k]), y);
              ks[k] = t;
            } else if constexpr (red_is_arg<OP>) {
              arg[k] = ArgOp<OP == kRedArgMax>()(arg[k], ArgValOf<int>{x1, (int)(r - r_begin)});
            } else {
              red_add<OP>(acc[k], x1);
            }
          }
        }
      }
    }
    if constexpr (OP == kRedSum) {
#pragma unroll
      for (int k = 0; k < VEC; ++k) acc[k] = A(ks[k]) - A(kc[k]);
    }
    if constexpr (red_is_arg<OP>) {
#pragma unroll
      for (int k = 0; k < VEC; ++k)
        if (arg[k].i != kNoRow) acc[k] = ArgVal{arg[k].v, r_begin + arg[k].i};
    }
  };
  if (i < p.inner) {
    if (p.red.n == 1) sweep(std::true_type{});
    else sweep(std::false_type{});
  }
  __shared__ A sm[ROWS][32 * VEC + 1];
#pragma unroll
  for (int k = 0; k < VEC; ++k) sm[ty][(threadIdx.x % 32) * VEC + k] = acc[k];
  __syncthreads();
  if constexpr (CLUSTER > 1) {
    static_assert(32 * VEC % CLUSTER == 0, "a cluster splits the block's columns evenly");
    __shared__ A part[32 * VEC];
    for (int e = threadIdx.x; e < 32 * VEC; e += THREADS) {
      A a = sm[0][e];
      for (int y = 1; y < ROWS; ++y) a = red_combine_acc<OP, A>(a, sm[y][e]);
      part[e] = a;
    }
    cluster_sync();
    constexpr int SLICE = 32 * VEC / CLUSTER;
    const int rank = (int)cluster_rank();
    for (int e = rank * SLICE + threadIdx.x; e < (rank + 1) * SLICE; e += THREADS) {
      A a = *cluster_peer(&part[e], 0);
#pragma unroll
      for (int r = 1; r < CLUSTER; ++r) a = red_combine_acc<OP, A>(a, *cluster_peer(&part[e], r));
      const i64 ii = ((blockIdx.x - oo * tiles) * 32) * VEC + e;
      if (ii < p.inner) red_store<OP>(p, epi, oo * p.inner + ii, a);
    }
    cluster_sync();  // the peers have read this block's partials
    return;
  }
  // rows of threads combined in a fixed order: deterministic
  for (int e = threadIdx.x; e < 32 * VEC; e += THREADS) {
    A a = sm[0][e];
    for (int y = 1; y < ROWS; ++y) a = red_combine_acc<OP, A>(a, sm[y][e]);
    const i64 ii = ((blockIdx.x - oo * tiles) * 32) * VEC + e;
    if (ii < p.inner) {
      const i64 o = oo * p.inner + ii;
      if (p.splits == 1) red_store<OP>(p, epi, o, a);
      else static_cast<typename RedPartial<OP>::T*>(p.partial)[o * p.splits + s] = red_to_partial<OP>(a);
    }
  }
}

// Combines the `splits` partials of every output (one warp per output, fixed order).
template <int OP, class Epi>
__global__ void __launch_bounds__(256) reduce_finalize_kernel(ReduceParams p, Epi epi) {
  const i64 o = (i64)blockIdx.x * 8 + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (o >= p.n_out) return;  // whole warps leave together
  using A = typename RedAcc<OP>::T;
  using P = typename RedPartial<OP>::T;
  A a = red_identity_acc<OP>();
  for (int s = lane; s < p.splits; s += 32)
    a = red_combine_acc<OP, A>(a, red_from_partial<OP>(static_cast<const P*>(p.partial)[o * p.splits + s]));
  a = group_allreduce<32>(a, RedCombine<OP, A>());
  if (lane == 0) red_store<OP>(p, epi, o, a);
}

// Cross-entropy's last step: sum of the per-row losses and of the valid flags (written by the
// rowwise kCrossEntropyRow kernel), one block, fixed order; mean divides by the valid count.
template <class Tout, int THREADS, class Epi>
__global__ void __launch_bounds__(THREADS)
cross_entropy_finalize_kernel(const float* loss, const float* valid, i64 rows, bool mean,
                              void* out, Epi epi) {
  float l = 0.f, c = 0.f;
  for (i64 r = threadIdx.x; r < rows; r += THREADS) {
    l += loss[r];
    c += valid[r];
  }
  l = block_allreduce<THREADS>(l, SumOp());
  c = block_allreduce<THREADS>(c, SumOp());
  if (threadIdx.x == 0) static_cast<Tout*>(out)[0] = from_f<Tout>(epi(mean ? l / c : l, 0, 0));
}

// Typed epilogue wrapper: carries the output dtype for the reduce kernels.
template <class T, class F> struct TypedEpi {
  using Tout = T;
  F f;
  __device__ __forceinline__ float operator()(float acc, i64 r, i64 c) const { return f(acc, r, c); }
};

}  // namespace ucut_simt
