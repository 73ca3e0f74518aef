// Device helpers shared by the non-GEMM stage templates (rowwise, reduce, scan, elementwise):
// dtype conversion to and from the fp32 compute type, 16-byte vector loads and stores, warp and
// block all-reductions and block scans of small structs, thread-block cluster helpers, and the
// reduction operators. Generated code includes it; hand-written, no CUTLASS. It includes neither
// CUB nor cooperative_groups on purpose: their headers were ~3 of the ~4.5 s a SIMT unit took to
// compile (docs/kernel-abi.md); the block reduction below sums in CUB's order, so results are the
// same as with CUB's BlockReduce.
#pragma once

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

namespace ucut_simt {

using i64 = long long;

// ---- dtype conversion: every stage computes in fp32 ---------------------------------------
template <class T> __device__ __forceinline__ float to_f(T v) { return static_cast<float>(v); }
template <> __device__ __forceinline__ float to_f<__half>(__half v) { return __half2float(v); }
template <> __device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
template <> __device__ __forceinline__ float to_f<bool>(bool v) { return v ? 1.f : 0.f; }

template <class T> __device__ __forceinline__ T from_f(float v) { return static_cast<T>(v); }
template <> __device__ __forceinline__ __half from_f<__half>(float v) { return __float2half_rn(v); }
template <> __device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ bool from_f<bool>(float v) { return v != 0.f; }

// A scalar read converted to float (broadcast loads of epilogue expressions).
template <class T> __device__ __forceinline__ float ld(const void* p, i64 i) {
  return to_f<T>(static_cast<const T*>(p)[i]);
}

// ---- vector access: V elements of T in one (up to 16-byte) transaction ----------------------
template <class T, int V> struct alignas(sizeof(T) * V) Vec { T v[V]; };

template <class T, int V>
__device__ __forceinline__ void load_vec(const T* p, i64 i, float (&out)[V]) {
  Vec<T, V> v = *reinterpret_cast<const Vec<T, V>*>(p + i);
#pragma unroll
  for (int k = 0; k < V; ++k) out[k] = to_f<T>(v.v[k]);
}
// Streaming load for data read exactly once (does not displace reusable lines in L1).
template <class T, int V>
__device__ __forceinline__ void load_vec_stream(const T* p, i64 i, float (&out)[V]) {
  Vec<T, V> v;
  if constexpr (sizeof(Vec<T, V>) == 16) {
    int4 r = __ldcs(reinterpret_cast<const int4*>(p + i));
    v = *reinterpret_cast<Vec<T, V>*>(&r);
  } else {
    v = *reinterpret_cast<const Vec<T, V>*>(p + i);
  }
#pragma unroll
  for (int k = 0; k < V; ++k) out[k] = to_f<T>(v.v[k]);
}
template <class T, int V>
__device__ __forceinline__ void store_vec(T* p, i64 i, const float (&in)[V]) {
  Vec<T, V> v;
#pragma unroll
  for (int k = 0; k < V; ++k) v.v[k] = from_f<T>(in[k]);
  *reinterpret_cast<Vec<T, V>*>(p + i) = v;
}

// ---- reduction operators ------------------------------------------------------------------
struct SumOp {
  static __device__ __forceinline__ float identity() { return 0.f; }
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct ProdOp {
  static __device__ __forceinline__ float identity() { return 1.f; }
  __device__ __forceinline__ float operator()(float a, float b) const { return a * b; }
};
// max/min propagate NaN like torch.max / torch.amax.
struct MaxOp {
  static __device__ __forceinline__ float identity() { return -INFINITY; }
  __device__ __forceinline__ float operator()(float a, float b) const {
    return (a != a || a > b) ? a : b;
  }
};
struct MinOp {
  static __device__ __forceinline__ float identity() { return INFINITY; }
  __device__ __forceinline__ float operator()(float a, float b) const {
    return (a != a || a < b) ? a : b;
  }
};

// Online softmax state: running max m and sum of exp(x - m).
struct MaxSum {
  float m, s;
};
struct MaxSumOp {
  __device__ __forceinline__ MaxSum operator()(const MaxSum& a, const MaxSum& b) const {
    float m = fmaxf(a.m, b.m);
    if (m == -INFINITY) return MaxSum{m, 0.f};
    return MaxSum{m, a.s * __expf(a.m - m) + b.s * __expf(b.m - m)};
  }
};
__device__ __forceinline__ void online_add(MaxSum& st, float x) {
  if (x > st.m) {
    st.s = st.s * __expf(st.m - x) + 1.f;
    st.m = x;
  } else if (x != -INFINITY) {  // a masked element adds exactly 0 (and -inf - -inf is NaN)
    st.s += __expf(x - st.m);
  }
}

// Welford state: count, mean, sum of squared deviations.
struct Welford {
  float n, mean, m2;
};
struct WelfordOp {
  __device__ __forceinline__ Welford operator()(const Welford& a, const Welford& b) const {
    float n = a.n + b.n;
    if (n == 0.f) return Welford{0.f, 0.f, 0.f};
    float d = b.mean - a.mean;
    float wb = b.n / n;
    return Welford{n, a.mean + d * wb, a.m2 + b.m2 + d * d * a.n * wb};
  }
};
__device__ __forceinline__ void welford_add(Welford& w, float x) {
  w.n += 1.f;
  float d = x - w.mean;
  w.mean += d / w.n;
  w.m2 += d * (x - w.mean);
}

// Value with its index, for argmax/argmin (first index wins ties, like torch). A column kernel's
// thread keeps a 32-bit index (ArgValOf<int>: its row offset) and widens it after its sweep.
template <class I> struct ArgValOf {
  float v;
  I i;
};
using ArgVal = ArgValOf<i64>;
template <bool MAX> struct ArgOp {
  template <class I>
  __device__ __forceinline__ ArgValOf<I> operator()(const ArgValOf<I>& a, const ArgValOf<I>& b) const {
    bool a_nan = a.v != a.v, b_nan = b.v != b.v;
    if (a_nan || b_nan) {
      if (a_nan && b_nan) return a.i < b.i ? a : b;
      return a_nan ? a : b;
    }
    bool better = MAX ? (b.v > a.v) : (b.v < a.v);
    if (better || (b.v == a.v && b.i < a.i)) return b;
    return a;
  }
};

// ---- shuffles of the reduction states ------------------------------------------------------
__device__ __forceinline__ float shfl_xor(float v, int m) {
  return __shfl_xor_sync(0xffffffffu, v, m);
}
__device__ __forceinline__ double shfl_xor(double v, int m) { return __shfl_xor_sync(0xffffffffu, v, m); }
__device__ __forceinline__ MaxSum shfl_xor(MaxSum v, int m) {
  return MaxSum{shfl_xor(v.m, m), shfl_xor(v.s, m)};
}
__device__ __forceinline__ Welford shfl_xor(Welford v, int m) {
  return Welford{shfl_xor(v.n, m), shfl_xor(v.mean, m), shfl_xor(v.m2, m)};
}
__device__ __forceinline__ ArgVal shfl_xor(ArgVal v, int m) {
  return ArgVal{shfl_xor(v.v, m), __shfl_xor_sync(0xffffffffu, v.i, m)};
}

__device__ __forceinline__ float shfl_down(float v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ double shfl_down(double v, int d) { return __shfl_down_sync(0xffffffffu, v, d); }
__device__ __forceinline__ MaxSum shfl_down(MaxSum v, int d) { return MaxSum{shfl_down(v.m, d), shfl_down(v.s, d)}; }
__device__ __forceinline__ Welford shfl_down(Welford v, int d) {
  return Welford{shfl_down(v.n, d), shfl_down(v.mean, d), shfl_down(v.m2, d)};
}
__device__ __forceinline__ ArgVal shfl_down(ArgVal v, int d) {
  return ArgVal{shfl_down(v.v, d), __shfl_down_sync(0xffffffffu, v.i, d)};
}

// All-reduce among the GROUP consecutive lanes that own one row (GROUP a power of two <= 32).
template <int GROUP, class T, class Op>
__device__ __forceinline__ T group_allreduce(T v, Op op) {
#pragma unroll
  for (int m = GROUP / 2; m > 0; m /= 2) v = op(v, shfl_xor(v, m));
  return v;
}

// All-reduce over the whole block of THREADS threads (a multiple of 32), in CUB BlockReduce's
// (BLOCK_REDUCE_WARP_REDUCTIONS) order: each warp reduces down to its lane 0 with offsets 1, 2,
// ..., 16 (lane i combines op(its value, lane i + offset's)), then the warps' results combine
// left to right, warp 0 first. Every thread combines them itself (no broadcast step). Every
// thread of the block must call it (uniform control flow).
template <int THREADS, class T, class Op>
__device__ __forceinline__ T block_allreduce(T v, Op op) {
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "a block reduction runs on whole warps");
  constexpr int WARPS = THREADS / 32;
  __shared__ T part[WARPS];
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    T o = shfl_down(v, d);
    if ((threadIdx.x % 32) + d < 32) v = op(v, o);
  }
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = v;
  __syncthreads();
  T out = part[0];
#pragma unroll
  for (int w = 1; w < WARPS; ++w) out = op(out, part[w]);
  __syncthreads();  // part may be reused by the next call
  return out;
}

// Exclusive scan over the whole block of THREADS threads (a multiple of 32) of one value each,
// with identity `id`: `prefix` gets op over the lower threads' values, `total` the block's. A
// warp scans with shuffles (Kogge-Stone), the warps' totals are scanned by every thread in warp
// order. The caller synchronizes before the next call (the shared totals are reused).
template <int THREADS, class T, class Op>
__device__ __forceinline__ void block_exclusive_scan(T v, T id, Op op, T& prefix, T& total) {
  static_assert(THREADS % 32 == 0 && THREADS <= 1024, "a block scan runs on whole warps");
  constexpr int WARPS = THREADS / 32;
  __shared__ T warp_total[WARPS];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  T inc = v;
#pragma unroll
  for (int d = 1; d < 32; d *= 2) {
    T o = __shfl_up_sync(0xffffffffu, inc, d);
    if (lane >= d) inc = op(o, inc);
  }
  if (lane == 31) warp_total[warp] = inc;
  T ex = __shfl_up_sync(0xffffffffu, inc, 1);
  if (lane == 0) ex = id;
  __syncthreads();
  T before = id, all = id;
#pragma unroll
  for (int w = 0; w < WARPS; ++w) {
    if (w == warp) before = all;
    all = op(all, warp_total[w]);
  }
  prefix = op(before, ex);
  total = all;
}

// Row all-reduce: a block when GROUP == THREADS > 32, else lanes of a warp.
template <int THREADS, int GROUP, class T, class Op>
__device__ __forceinline__ T row_allreduce(T v, Op op) {
  if constexpr (GROUP == THREADS && THREADS > 32) {
    return block_allreduce<THREADS>(v, op);
  } else {
    return group_allreduce<GROUP>(v, op);
  }
}

// ---- thread-block clusters: a row split across CLUSTER blocks --------------------------------
// The sm_90 cluster built-ins (what cooperative_groups::this_cluster() calls): a barrier of all
// threads of the cluster with release/acquire semantics, this block's rank, and a peer block's
// copy of a shared variable.
__device__ __forceinline__ void cluster_sync() {
  __cluster_barrier_arrive();
  __cluster_barrier_wait();
}
__device__ __forceinline__ unsigned cluster_rank() { return __clusterRelativeBlockRank(); }
template <class T>
__device__ __forceinline__ T* cluster_peer(T* p, unsigned rank) {
  return static_cast<T*>(__cluster_map_shared_rank(static_cast<void*>(p), rank));
}

// All-reduce of a block-uniform value across the CLUSTER blocks of a cluster through distributed
// shared memory. Every thread of every block calls it (uniform control flow); SLOT names the call
// site, so two calls in one kernel use different shared slots and need no barrier in between.
// Each block reads the peers' slots in rank order, so every block gets the same result. The
// block must not exit before its peers have read its slot: cluster_arrive after the last call,
// cluster_leave at the end of the kernel.
template <int CLUSTER, int SLOT, class T, class Op>
__device__ __forceinline__ T cluster_allreduce(T v, Op op) {
  if constexpr (CLUSTER == 1) {
    return v;
  } else {
    __shared__ T slot;
    if (threadIdx.x == 0) slot = v;
    cluster_sync();
    T part[CLUSTER];
#pragma unroll
    for (int r = 0; r < CLUSTER; ++r) part[r] = *cluster_peer(&slot, r);
    T out = part[0];
#pragma unroll
    for (int r = 1; r < CLUSTER; ++r) out = op(out, part[r]);
    return out;
  }
}
struct ClusterToken {};
template <int CLUSTER>
__device__ __forceinline__ ClusterToken cluster_arrive() {
  if constexpr (CLUSTER > 1) __cluster_barrier_arrive();
  return ClusterToken{};
}
template <int CLUSTER>
__device__ __forceinline__ void cluster_leave(ClusterToken) {
  if constexpr (CLUSTER > 1) __cluster_barrier_wait();
}

// Epilogue/prologue that leaves the value unchanged.
struct Identity {
  __device__ __forceinline__ float operator()(float acc, i64, i64) const { return acc; }
};

}  // namespace ucut_simt

namespace ucut_simt {
// Host-side checks used by the generated launchers.
// Host: launches `kernel` on `grid` in clusters of `cluster` blocks (a plain launch when the
// cluster is one block).
template <class... P, class... A>
inline cudaError_t launch_in_clusters(void (*kernel)(P...), dim3 cluster, dim3 grid, int threads,
                                      cudaStream_t stream, A&&... args) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3((unsigned)threads);
  cfg.dynamicSmemBytes = 0;
  cfg.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = cluster.x;
  attr[0].val.clusterDim.y = cluster.y;
  attr[0].val.clusterDim.z = cluster.z;
  cfg.attrs = attr;
  cfg.numAttrs = cluster.x * cluster.y * cluster.z > 1 ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<A&&>(args)...);
}
// `grid` blocks in clusters of `cluster` blocks along x (rowwise: a row's blocks).
template <class... P, class... A>
inline cudaError_t launch_clustered(void (*kernel)(P...), int cluster, long long grid, int threads,
                                    cudaStream_t stream, A&&... args) {
  return launch_in_clusters(kernel, dim3((unsigned)cluster), dim3((unsigned)grid), threads, stream,
                            static_cast<A&&>(args)...);
}
// A 2-D grid in clusters of `cluster` blocks along y (column reductions: a tile's splits).
template <class... P, class... A>
inline cudaError_t launch_clustered_y(void (*kernel)(P...), int cluster, dim3 grid, int threads,
                                      cudaStream_t stream, A&&... args) {
  return launch_in_clusters(kernel, dim3(1, (unsigned)cluster), grid, threads, stream, static_cast<A&&>(args)...);
}

// Host: the split count of a split reduction that fills one wave of resident blocks: `tiles`
// blocks per split, `occupancy` blocks per SM, at most `max_splits` (the plan's count, which
// bounds the workspace) and at least 1. Writes the matching chunk of the reduced range.
inline int one_wave_splits(int occupancy, int sms, long long tiles, int max_splits, long long r_total,
                           long long* r_chunk) {
  long long slots = (long long)(occupancy > 0 ? occupancy : 1) * (sms > 0 ? sms : 1);
  long long s = slots / (tiles > 0 ? tiles : 1);
  if (s > max_splits) s = max_splits;
  if (s < 1) s = 1;
  long long chunk = (r_total + s - 1) / s;
  if (chunk < 1) chunk = 1;
  *r_chunk = chunk;
  return (int)((r_total + chunk - 1) / chunk);
}

inline bool aligned(const void* p, int bytes) {
  return (reinterpret_cast<unsigned long long>(p) % static_cast<unsigned long long>(bytes)) == 0;
}
}  // namespace ucut_simt
