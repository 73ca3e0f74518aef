// The rowwise stage template: one operation per row of an input viewed as [rows, cols] (the
// last dimension is the row). A row is owned by GROUP consecutive threads: a sub-warp or warp
// (GROUP <= 32, THREADS/GROUP rows per block, shuffle reductions) for short rows, or the whole
// block (GROUP == THREADS, block_allreduce) for long rows.
//   CACHED: the row is loaded once into registers (ITEMS vectors of VEC elements per thread) and
//           written from there: one read and one write of the data (the memory-bound optimum).
//           Softmax reduces a (max, sum-exp) pair in one all-reduce (online softmax combine).
//   streaming: rows longer than the register cache are swept twice from global memory, the first
//           sweep accumulating online statistics (online softmax, Welford), the second writing.
//   CLUSTER > 1 (CACHED, one row per block): a row is split across a thread-block cluster of
//           CLUSTER blocks, each caching cols/CLUSTER elements; the blocks exchange their
//           partial statistics through distributed shared memory. Smaller blocks from several
//           rows share an SM, so one row's reductions overlap another's loads, and rows up to
//           CLUSTER times longer stay in registers (one read, one write).
// Generated code instantiates rowwise_kernel with its prologue/epilogue functors.
#pragma once

#include "simt_common.cuh"

namespace ucut_simt {

enum RowOp : int {
  kSoftmax, kLogSoftmax, kLogSumExp, kLayerNorm, kRmsNorm, kL1Normalize, kL2Normalize,
  kRowSum, kRowMean, kRowMax, kRowMin, kRowArgmax, kRowArgmin,
  kCrossEntropyRow,  // per-row loss lse(x) - x[target] (0 when target == ignore_index)
  kGroupNorm,        // layer norm of a (sample, group) row; weight/bias per channel
};

// layer_norm and group_norm share the statistics (mean, biased variance) and the normalization
__host__ __device__ constexpr bool row_op_is_layer_norm(int op) { return op == kLayerNorm || op == kGroupNorm; }

__host__ __device__ constexpr bool row_op_is_scalar(int op) {
  return op == kLogSumExp || op == kRowSum || op == kRowMean || op == kRowMax ||
         op == kRowMin || op == kRowArgmax || op == kRowArgmin || op == kCrossEntropyRow;
}

struct RowParams {
  const void* x;        // [rows, cols]
  void* out;            // [rows, cols] or [rows]
  const void* weight;   // [cols] (group_norm: [channels]) or null
  const void* bias;     // [cols] (group_norm: [channels]) or null
  const long long* target;  // cross-entropy class indices [rows]
  float* valid;         // cross-entropy: 1 where the row counts, else 0 [rows]
  i64 rows, cols;
  float eps;
  i64 ignore_index;
  // group_norm: rows are (sample, group); the channel of (row, col) is
  // (row % groups) * (cols / spatial) + col / spatial (spatial: elements per channel)
  i64 groups, spatial;
};

// Per-thread statistics of one row, all-reduced across the row's threads.
template <int OP> struct RowStat;
template <> struct RowStat<kSoftmax> { using T = MaxSum; };
template <> struct RowStat<kLogSoftmax> { using T = MaxSum; };
template <> struct RowStat<kLogSumExp> { using T = MaxSum; };
template <> struct RowStat<kCrossEntropyRow> { using T = MaxSum; };
template <> struct RowStat<kLayerNorm> { using T = Welford; };
template <> struct RowStat<kGroupNorm> { using T = Welford; };
template <> struct RowStat<kRmsNorm> { using T = float; };
template <> struct RowStat<kL1Normalize> { using T = float; };
template <> struct RowStat<kL2Normalize> { using T = float; };
template <> struct RowStat<kRowSum> { using T = float; };
template <> struct RowStat<kRowMean> { using T = float; };
template <> struct RowStat<kRowMax> { using T = float; };
template <> struct RowStat<kRowMin> { using T = float; };
template <> struct RowStat<kRowArgmax> { using T = ArgVal; };
template <> struct RowStat<kRowArgmin> { using T = ArgVal; };

template <int OP> __device__ __forceinline__ typename RowStat<OP>::T row_stat_init() {
  if constexpr (OP == kSoftmax || OP == kLogSoftmax || OP == kLogSumExp || OP == kCrossEntropyRow)
    return MaxSum{-INFINITY, 0.f};
  else if constexpr (row_op_is_layer_norm(OP)) return Welford{0.f, 0.f, 0.f};
  else if constexpr (OP == kRowMax) return -INFINITY;
  else if constexpr (OP == kRowMin) return INFINITY;
  else if constexpr (OP == kRowArgmax) return ArgVal{-INFINITY, (i64)1 << 62};
  else if constexpr (OP == kRowArgmin) return ArgVal{INFINITY, (i64)1 << 62};
  else return 0.f;
}

template <int OP> __device__ __forceinline__ void row_stat_add(typename RowStat<OP>::T& st, float x, i64 c) {
  if constexpr (OP == kSoftmax || OP == kLogSoftmax || OP == kLogSumExp || OP == kCrossEntropyRow)
    online_add(st, x);
  else if constexpr (row_op_is_layer_norm(OP)) welford_add(st, x);
  else if constexpr (OP == kRmsNorm || OP == kL2Normalize) st += x * x;
  else if constexpr (OP == kL1Normalize) st += fabsf(x);
  else if constexpr (OP == kRowMax) st = MaxOp()(st, x);
  else if constexpr (OP == kRowMin) st = MinOp()(st, x);
  else if constexpr (OP == kRowArgmax) st = ArgOp<true>()(st, ArgVal{x, c});
  else if constexpr (OP == kRowArgmin) st = ArgOp<false>()(st, ArgVal{x, c});
  else st += x;
}

template <int OP> struct RowStatOp {
  __device__ __forceinline__ auto operator()(const typename RowStat<OP>::T& a,
                                             const typename RowStat<OP>::T& b) const {
    if constexpr (OP == kSoftmax || OP == kLogSoftmax || OP == kLogSumExp || OP == kCrossEntropyRow)
      return MaxSumOp()(a, b);
    else if constexpr (row_op_is_layer_norm(OP)) return WelfordOp()(a, b);
    else if constexpr (OP == kRowMax) return MaxOp()(a, b);
    else if constexpr (OP == kRowMin) return MinOp()(a, b);
    else if constexpr (OP == kRowArgmax) return ArgOp<true>()(a, b);
    else if constexpr (OP == kRowArgmin) return ArgOp<false>()(a, b);
    else return a + b;
  }
};

// What the elementwise ops need per row after the reduction.
struct RowFinal {
  float a = 0.f, b = 0.f;  // softmax: max, 1/sum; log_softmax: max + log(sum); norms: mean, scale
};

template <int OP, class S>
__device__ __forceinline__ RowFinal row_finalize(const S& st, const RowParams& p) {
  RowFinal f;
  if constexpr (OP == kSoftmax) { f.a = st.m; f.b = 1.f / st.s; }
  else if constexpr (OP == kLogSoftmax) { f.a = st.m + logf(st.s); }
  else if constexpr (row_op_is_layer_norm(OP)) { f.a = st.mean; f.b = rsqrtf(st.m2 / (float)p.cols + p.eps); }
  else if constexpr (OP == kRmsNorm) { f.b = rsqrtf(st / (float)p.cols + p.eps); }
  else if constexpr (OP == kL2Normalize) { f.b = 1.f / fmaxf(sqrtf(st), p.eps); }
  else if constexpr (OP == kL1Normalize) { f.b = 1.f / fmaxf(st, p.eps); }
  return f;
}

template <int OP, class Tw>
__device__ __forceinline__ float row_apply(float x, const RowFinal& f, const RowParams& p, i64 row, i64 c) {
  if constexpr (OP == kSoftmax) return __expf(x - f.a) * f.b;
  else if constexpr (OP == kLogSoftmax) return x - f.a;
  else if constexpr (OP == kGroupNorm) {
    float y = (x - f.a) * f.b;
    if (p.weight || p.bias) {
      // 32-bit division: the code generator keeps cols below 2^31
      const unsigned sp = (unsigned)p.spatial;
      const i64 ch = (row % p.groups) * (i64)((unsigned)p.cols / sp) + (i64)((unsigned)c / sp);
      if (p.weight) y *= ld<Tw>(p.weight, ch);
      if (p.bias) y += ld<Tw>(p.bias, ch);
    }
    return y;
  } else if constexpr (OP == kLayerNorm || OP == kRmsNorm) {
    float y = OP == kLayerNorm ? (x - f.a) * f.b : x * f.b;
    if (p.weight) y *= ld<Tw>(p.weight, c);
    if (p.bias) y += ld<Tw>(p.bias, c);
    return y;
  } else return x * f.b;
}

template <int OP, class Tin, class Tout, class Tw, int THREADS, int GROUP, int VEC, int ITEMS,
          bool CACHED, class Pro, class Epi, int CLUSTER = 1>
__global__ void __launch_bounds__(THREADS)
rowwise_kernel(RowParams p, Pro pro, Epi epi) {
  static_assert(GROUP == THREADS || (GROUP <= 32 && (GROUP & (GROUP - 1)) == 0), "row group");
  static_assert(CLUSTER == 1 || (CACHED && GROUP == THREADS), "a cluster splits one cached row");
  using S = typename RowStat<OP>::T;
  constexpr int ROWS_PER_BLOCK = THREADS / GROUP;
  constexpr int STEP = GROUP * VEC;
  const int lane = threadIdx.x % GROUP;
  const i64 row = (i64)(blockIdx.x / CLUSTER) * ROWS_PER_BLOCK + threadIdx.x / GROUP;
  const bool active = row < p.rows;
  const i64 cols = p.cols;
  // this block's columns [base, end): the whole row, or its part of the cluster's row: parts of
  // ceil(cols / (CLUSTER * VEC)) whole vectors, the last one shorter where they do not divide the
  // row (cols is a multiple of VEC; the plan gives every block a part)
  const i64 part = CLUSTER == 1 ? cols : (cols / VEC + CLUSTER - 1) / CLUSTER * VEC;
  const i64 base = CLUSTER == 1 ? 0 : (i64)(blockIdx.x % CLUSTER) * part;
  const i64 end = CLUSTER == 1 ? cols : (base + part < cols ? base + part : cols);
  const Tin* x = static_cast<const Tin*>(p.x) + (active ? row : 0) * cols;
  Tout* out = static_cast<Tout*>(p.out);
  S st = row_stat_init<OP>();
  float v[CACHED ? ITEMS : 1][VEC];

  if constexpr (CACHED) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const i64 c = base + (i64)(j * GROUP + lane) * VEC;
      if (active && c < end) {
        load_vec_stream<Tin, VEC>(x, c, v[j]);
#pragma unroll
        for (int k = 0; k < VEC; ++k) v[j][k] = pro(v[j][k], row, c + k);
      }
    }
    if constexpr (OP == kSoftmax || OP == kLogSoftmax || OP == kLogSumExp || OP == kCrossEntropyRow) {
      float m = -INFINITY;
#pragma unroll
      for (int j = 0; j < ITEMS; ++j)
        if (active && base + (i64)(j * GROUP + lane) * VEC < end)
#pragma unroll
          for (int k = 0; k < VEC; ++k) m = fmaxf(m, v[j][k]);
      float s = 0.f;
      if (m != -INFINITY) {
#pragma unroll
        for (int j = 0; j < ITEMS; ++j)
          if (active && base + (i64)(j * GROUP + lane) * VEC < end)
#pragma unroll
            for (int k = 0; k < VEC; ++k) s += __expf(v[j][k] - m);
      }
      st = MaxSum{m, s};
    } else if constexpr (row_op_is_layer_norm(OP)) {
      // exact two-pass from registers: mean, then the sum of squared deviations
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < ITEMS; ++j)
        if (active && base + (i64)(j * GROUP + lane) * VEC < end)
#pragma unroll
          for (int k = 0; k < VEC; ++k) sum += v[j][k];
      const float mean = cluster_allreduce<CLUSTER, 0>(row_allreduce<THREADS, GROUP>(sum, SumOp()), SumOp()) / (float)cols;
      float sq = 0.f;
#pragma unroll
      for (int j = 0; j < ITEMS; ++j)
        if (active && base + (i64)(j * GROUP + lane) * VEC < end)
#pragma unroll
          for (int k = 0; k < VEC; ++k) sq += (v[j][k] - mean) * (v[j][k] - mean);
      st = Welford{(float)cols, mean, sq};
    } else {
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 c = base + (i64)(j * GROUP + lane) * VEC;
        if (active && c < end)
#pragma unroll
          for (int k = 0; k < VEC; ++k) row_stat_add<OP>(st, v[j][k], c + k);
      }
    }
  } else {
    for (i64 c0 = (i64)lane * VEC; c0 < cols; c0 += (i64)STEP * ITEMS) {
      float w[ITEMS][VEC];
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 c = c0 + (i64)j * STEP;
        if (active && c < cols) load_vec<Tin, VEC>(x, c, w[j]);
      }
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 c = c0 + (i64)j * STEP;
        if (active && c < cols)
#pragma unroll
          for (int k = 0; k < VEC; ++k) row_stat_add<OP>(st, pro(w[j][k], row, c + k), c + k);
      }
    }
  }

  if constexpr (row_op_is_layer_norm(OP) && CACHED) {
    // the mean is already uniform; only the squared deviations remain to be summed
    st.m2 = cluster_allreduce<CLUSTER, 1>(row_allreduce<THREADS, GROUP>(st.m2, SumOp()), SumOp());
  } else {
    st = cluster_allreduce<CLUSTER, 0>(row_allreduce<THREADS, GROUP>(st, RowStatOp<OP>()), RowStatOp<OP>());
  }
  // the peers' partials have been read: a block may leave once every block of its cluster has
  // read this block's (cluster_leave)
  const ClusterToken leave = cluster_arrive<CLUSTER>();

  if constexpr (row_op_is_scalar(OP)) {
    if (lane == 0 && active && base == 0) {
      if constexpr (OP == kCrossEntropyRow) {
        const i64 t = p.target[row];
        float loss = 0.f, valid = 0.f;
        if (t != p.ignore_index) {
          valid = 1.f;
          loss = (t < 0 || t >= cols) ? NAN : st.m + logf(st.s) - pro(to_f<Tin>(x[t]), row, t);
        }
        static_cast<float*>(p.out)[row] = loss;
        p.valid[row] = valid;
      } else if constexpr (OP == kRowArgmax || OP == kRowArgmin) {
        out[row] = static_cast<Tout>(st.i);
      } else {
        float r;
        if constexpr (OP == kLogSumExp) r = st.m + logf(st.s);
        else if constexpr (OP == kRowMean) r = st / (float)cols;
        else r = st;
        out[row] = from_f<Tout>(epi(r, row, 0));
      }
    }
  } else {
    const RowFinal f = row_finalize<OP>(st, p);
    Tout* orow = out + (active ? row : 0) * cols;
    if constexpr (CACHED) {
#pragma unroll
      for (int j = 0; j < ITEMS; ++j) {
        const i64 c = base + (i64)(j * GROUP + lane) * VEC;
        if (active && c < end) {
          float y[VEC];
#pragma unroll
          for (int k = 0; k < VEC; ++k) y[k] = epi(row_apply<OP, Tw>(v[j][k], f, p, row, c + k), row, c + k);
          store_vec<Tout, VEC>(orow, c, y);
        }
      }
    } else {
      for (i64 c0 = (i64)lane * VEC; c0 < cols; c0 += (i64)STEP * ITEMS) {
        float w[ITEMS][VEC];
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          const i64 c = c0 + (i64)j * STEP;
          if (active && c < cols) load_vec<Tin, VEC>(x, c, w[j]);
        }
#pragma unroll
        for (int j = 0; j < ITEMS; ++j) {
          const i64 c = c0 + (i64)j * STEP;
          if (active && c < cols) {
            float y[VEC];
#pragma unroll
            for (int k = 0; k < VEC; ++k)
              y[k] = epi(row_apply<OP, Tw>(pro(w[j][k], row, c + k), f, p, row, c + k), row, c + k);
            store_vec<Tout, VEC>(orow, c, y);
          }
        }
      }
    }
  }
  cluster_leave<CLUSTER>(leave);
}

// ---- the ops over several inputs of one shape, one value per row ------------------------------
// cosine_similarity(x, y): sum(x y) / (max(|x|, eps) max(|y|, eps)); pairwise_distance(x, y):
// |x - y + eps|; triplet_margin(a, p, n): max(margin + |a - p + eps| - |a - n + eps|, 0). Each
// row's inputs are swept once (ITEMS vectors of each input in flight a thread), the per-thread
// sums all-reduced across the row's GROUP threads. No prologue, no cluster.
enum RowMultiOp : int { kCosineSimilarity, kPairwiseDistance, kTripletMargin };

struct Sum3 {
  float a, b, c;
};
struct Sum3Op {
  __device__ __forceinline__ Sum3 operator()(const Sum3& x, const Sum3& y) const {
    return Sum3{x.a + y.a, x.b + y.b, x.c + y.c};
  }
};
__device__ __forceinline__ Sum3 shfl_xor(Sum3 v, int m) {
  return Sum3{shfl_xor(v.a, m), shfl_xor(v.b, m), shfl_xor(v.c, m)};
}
__device__ __forceinline__ Sum3 shfl_down(Sum3 v, int d) {
  return Sum3{shfl_down(v.a, d), shfl_down(v.b, d), shfl_down(v.c, d)};
}

struct RowMultiParams {
  const void* x;  // [rows, cols]
  const void* y;  // [rows, cols]
  const void* z;  // [rows, cols] (triplet_margin's negative) or null
  void* out;      // [rows]
  i64 rows, cols;
  float eps, margin;
};

template <int OP, class Tin, class Tout, int THREADS, int GROUP, int VEC, int ITEMS, class Epi>
__global__ void __launch_bounds__(THREADS)
rowwise_multi_kernel(RowMultiParams p, Epi epi) {
  static_assert(GROUP == THREADS || (GROUP <= 32 && (GROUP & (GROUP - 1)) == 0), "row group");
  constexpr int N = OP == kTripletMargin ? 3 : 2;
  constexpr int ROWS_PER_BLOCK = THREADS / GROUP;
  constexpr int STEP = GROUP * VEC;
  const int lane = threadIdx.x % GROUP;
  const i64 row = (i64)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / GROUP;
  const bool active = row < p.rows;
  const i64 cols = p.cols;
  const i64 off = (active ? row : 0) * cols;
  const Tin* in[N];
  in[0] = static_cast<const Tin*>(p.x) + off;
  in[1] = static_cast<const Tin*>(p.y) + off;
  if constexpr (N == 3) in[2] = static_cast<const Tin*>(p.z) + off;
  const float eps = p.eps;
  Sum3 st{0.f, 0.f, 0.f};
  for (i64 c0 = (i64)lane * VEC; c0 < cols; c0 += (i64)STEP * ITEMS) {
    float w[N][ITEMS][VEC];
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const i64 c = c0 + (i64)j * STEP;
      if (active && c < cols)
#pragma unroll
        for (int n = 0; n < N; ++n) load_vec_stream<Tin, VEC>(in[n], c, w[n][j]);
    }
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const i64 c = c0 + (i64)j * STEP;
      if (active && c < cols)
#pragma unroll
        for (int k = 0; k < VEC; ++k) {
          const float x = w[0][j][k], y = w[1][j][k];
          if constexpr (OP == kCosineSimilarity) {
            st.a = fmaf(x, y, st.a);
            st.b = fmaf(x, x, st.b);
            st.c = fmaf(y, y, st.c);
          } else {
            const float d = x - y + eps;
            st.a = fmaf(d, d, st.a);
            if constexpr (N == 3) {
              const float e = x - w[2][j][k] + eps;
              st.b = fmaf(e, e, st.b);
            }
          }
        }
    }
  }
  st = row_allreduce<THREADS, GROUP>(st, Sum3Op());
  if (lane == 0 && active) {
    float r;
    if constexpr (OP == kCosineSimilarity) r = st.a / (fmaxf(sqrtf(st.b), eps) * fmaxf(sqrtf(st.c), eps));
    else if constexpr (OP == kPairwiseDistance) r = sqrtf(st.a);
    else r = fmaxf(p.margin + sqrtf(st.a) - sqrtf(st.b), 0.f);
    static_cast<Tout*>(p.out)[row] = from_f<Tout>(epi(r, row, 0));
  }
}

}  // namespace ucut_simt
