// The 16-bit fused attention of attention.cuh on Hopper (sm_90a), warp-specialised in the manner
// of FlashAttention-3: a producer warpgroup (one thread of it) copies q once and the key and value
// blocks into a two-stage ring of shared memory with the tensor memory accelerator (TMA), handed
// over through mbarriers, and two consumer warpgroups of 64 query rows each run
//   S_j = q k_j^T                          (wgmma, both operands in shared memory)
//   O  = O * 2^(m_{j-2} - m_{j-1}) + P_{j-1} v_{j-1}   (wgmma, P from registers), behind S_j
// and work out block j's softmax while the tensor cores still run P_{j-1} v_{j-1}; the two
// warpgroups take turns at the tensor cores (ping-pong), so one's softmax hides the other's
// products. The arithmetic is attention_fwd_kernel's, operation for operation (the same key blocks
// of 128 first to last, scaled scores, maxima, ex2.approx, sums, rescales, roundings and
// rcp.approx), so the output is the same bit for bit; only the schedule differs (docs/benchmarks.md
// run AZ). Head dims 64 and 128; 384 threads and about 161 KB of shared memory a block.
#pragma once

#include <cuda.h>

#include "attention.cuh"

namespace ucut_attn {

// ---- wgmma wrappers ---------------------------------------------------------------------
// m64nNk16 with fp32 accumulators d (N / 2 a thread, laid out as mma.sync's m16n8 tiles:
// d[4 * t + e] is element e of 8-column tile t). SS: a and b from shared-memory descriptors,
// both K-major; RS: a from registers (an m16n8k16 A fragment a warp), b transposed (N-major).
#define UCUT_WG_D8(i) \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define UCUT_WG_D32 UCUT_WG_D8(0), UCUT_WG_D8(8), UCUT_WG_D8(16), UCUT_WG_D8(24)
#define UCUT_WG_D64 UCUT_WG_D32, UCUT_WG_D8(32), UCUT_WG_D8(40), UCUT_WG_D8(48), UCUT_WG_D8(56)
#define UCUT_WG_R32                                                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31}"
#define UCUT_WG_R64                                                                                                   \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, " \
  "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "  \
  "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

template <class T> struct WgType;
template <> struct WgType<__nv_bfloat16> { static constexpr bool bf16 = true; };
template <> struct WgType<__half> { static constexpr bool bf16 = false; };

// d (+)= a b, 64 x 128 x 16, a and b in shared memory (scale_d 0: d = a b).
template <class T>
__device__ __forceinline__ void wgmma_ss_n128(float (&d)[64], uint64_t da, uint64_t db, int scale_d) {
  if constexpr (WgType<T>::bf16)
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " UCUT_WG_R64 ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : UCUT_WG_D64
                 : "l"(da), "l"(db), "r"(scale_d));
  else
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " UCUT_WG_R64 ", %64, %65, p, 1, 1, 0, 0;\n}\n"
                 : UCUT_WG_D64
                 : "l"(da), "l"(db), "r"(scale_d));
}

// d += a b, 64 x 128 x 16, a from registers, b transposed in shared memory.
template <class T>
__device__ __forceinline__ void wgmma_rs_n128(float (&d)[64], const uint32_t (&a)[4], uint64_t db) {
  if constexpr (WgType<T>::bf16)
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " UCUT_WG_R64
                 ", {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
                 : UCUT_WG_D64
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
  else
    asm volatile("wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 " UCUT_WG_R64
                 ", {%64, %65, %66, %67}, %68, 1, 1, 1, 1;\n"
                 : UCUT_WG_D64
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

// d += a b, 64 x 64 x 16, a from registers, b transposed in shared memory.
template <class T>
__device__ __forceinline__ void wgmma_rs_n64(float (&d)[32], const uint32_t (&a)[4], uint64_t db) {
  if constexpr (WgType<T>::bf16)
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 " UCUT_WG_R32
                 ", {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                 : UCUT_WG_D32
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
  else
    asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 " UCUT_WG_R32
                 ", {%32, %33, %34, %35}, %36, 1, 1, 1, 1;\n"
                 : UCUT_WG_D32
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db));
}

#undef UCUT_WG_D8
#undef UCUT_WG_D32
#undef UCUT_WG_D64
#undef UCUT_WG_R32
#undef UCUT_WG_R64

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Pins registers an asynchronous wgmma writes: the compiler may not move their reads or writes
// across this point (issue, wait).
template <int N> __device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N> __device__ __forceinline__ void fence_regs(uint32_t (&r)[N][4]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
}

// A shared-memory matrix descriptor, 128-byte swizzle: `lead` and `stride` byte offsets.
__device__ __forceinline__ uint64_t gmma_desc(const void* p, uint32_t lead, uint32_t stride) {
  const uint64_t a = smem_addr(p);
  return ((a & 0x3FFFF) >> 4) | (static_cast<uint64_t>(lead >> 4) << 16) | (static_cast<uint64_t>(stride >> 4) << 32) |
         (uint64_t{1} << 62);
}

// ---- mbarriers ----------------------------------------------------------------------------
__device__ __forceinline__ void mbar_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_addr(bar)), "r"(count));
}
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(smem_addr(bar)) : "memory");
}
__device__ __forceinline__ void mbar_wait(uint64_t* bar, int parity) {
  asm volatile(
      "{\n.reg .pred done;\nWAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n}\n" ::"r"(smem_addr(bar)),
      "r"(parity)
      : "memory");
}

// ---- the tensor memory accelerator (TMA) ---------------------------------------------------
// q, k and v as 3-d tensors [matrices, rows, head dim] (rows past the end read as zeros), copied
// in boxes of 128 rows x 64 elements, which land in exactly the 128-byte swizzled slabs above.
struct TmaMaps {
  CUtensorMap q, k, v;
};

__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("{\n.reg .b64 st;\nmbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}
// Box (c0 = column, c1 = row, c2 = matrix) of `map` into shared memory at dst, completing on bar.
__device__ __forceinline__ void tma_load(void* dst, const CUtensorMap* map, int c0, int c1, int c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::
          "r"(smem_addr(dst)),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(smem_addr(bar))
      : "memory");
}
// Rows [r0, r0 + R) of matrix m, all C columns, as C / 64 slabs of R x 64.
template <class T, int R, int C>
__device__ __forceinline__ void tma_tile(T* s, const CUtensorMap* map, i64 r0, i64 m, uint64_t* bar) {
#pragma unroll
  for (int slab = 0; slab < C / 64; ++slab)
    tma_load(s + slab * R * 64, map, slab * 64, static_cast<int>(r0), static_cast<int>(m), bar);
}

using EncodeTiled = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                 const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                 CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// The driver's cuTensorMapEncodeTiled through the runtime (no link against libcuda); null if absent.
inline EncodeTiled encode_tiled() {
  static EncodeTiled fn = [] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      return static_cast<EncodeTiled>(nullptr);
    return reinterpret_cast<EncodeTiled>(f);
  }();
  return fn;
}

// A [mats, rows, cols] tensor of T at ptr: boxes of 128 rows x 64 columns, 128-byte swizzle.
template <class T>
bool make_map(CUtensorMap* map, const void* ptr, i64 mats, i64 rows, i64 cols) {
  const EncodeTiled enc = encode_tiled();
  if (!enc) return false;
  const CUtensorMapDataType ty =
      std::is_same_v<T, __nv_bfloat16> ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows),
                              static_cast<cuuint64_t>(mats)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(cols) * 2, static_cast<cuuint64_t>(rows * cols) * 2};
  const cuuint32_t box[3] = {64, 128, 1}, step[3] = {1, 1, 1};
  return enc(map, ty, 3, const_cast<void*>(ptr), dims, strides, box, step, CU_TENSOR_MAP_INTERLEAVE_NONE,
             CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// ---- the kernel ---------------------------------------------------------------------------
constexpr int kWsRows = 128;    // query rows a block: two consumer warpgroups of 64
constexpr int kWsKeys = 128;    // keys a block (the reference's key blocks)
constexpr int kWsThreads = 384; // two consumer warpgroups and the producer warpgroup
constexpr int kWsStages = 2;    // the key and value rings (3: slower, run AZ)

template <int D, int DV>
constexpr int ws_smem_bytes() {
  return (kWsRows * D + kWsStages * kWsKeys * (D + DV)) * 2 + 1024 + 128;  // + alignment, barriers
}

template <class T, int D, int DV, bool CAUSAL>
__global__ void __launch_bounds__(kWsThreads, 1) attention_ws_kernel(Params p, const __grid_constant__ TmaMaps maps) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert((D == 64 || D == 128) && (DV == 64 || DV == 128), "head dims 64 and 128");
  constexpr int BM = kWsRows, BN = kWsKeys, ST = kWsStages;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  // the 128-byte swizzle is on address bits: every slab starts 1024-byte aligned
  unsigned char* base = smem_raw + ((1024u - (smem_addr(smem_raw) & 1023u)) & 1023u);
  T* sq = reinterpret_cast<T*>(base);
  T* sk = sq + BM * D;        // ST stages of BN x D
  T* sv = sk + ST * BN * D;   // ST stages of BN x DV
  uint64_t* bars = reinterpret_cast<uint64_t*>(sv + ST * BN * DV);
  uint64_t* q_full = bars;         // q landed
  uint64_t* k_full = bars + 1;     // [ST] a key block landed
  uint64_t* v_full = k_full + ST;  // [ST] a value block landed
  uint64_t* k_free = v_full + ST;  // [ST] every consumer warp is done reading a key block
  uint64_t* v_free = k_free + ST;  // [ST] ... a value block
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const BlockRows<T, BM, BN, D, DV, CAUSAL> blk(p);
  const int n_blocks = blk.n_blocks;
  constexpr int kConsumerWarps = 8;
  if (tid == 0) {
    mbar_init(q_full, 1);
    for (int s = 0; s < ST; ++s) {
      mbar_init(k_full + s, 1);
      mbar_init(v_full + s, 1);
      mbar_init(k_free + s, kConsumerWarps);
      mbar_init(v_free + s, kConsumerWarps);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  }
  __syncthreads();

  if (warp >= kConsumerWarps) {  // the producer warpgroup: one thread issues every copy
    asm volatile("setmaxnreg.dec.sync.aligned.u32 32;\n" ::: "memory");
    if (tid == kConsumerWarps * 32) {
      mbar_expect_tx(q_full, BM * D * 2);
      tma_tile<T, BM, D>(sq, &maps.q, blk.m0, blk.b, q_full);
      for (int j = 0; j < n_blocks; ++j) {
        const int s = j % ST, ph = (j / ST - 1) & 1;
        if (j >= ST) mbar_wait(k_free + s, ph);  // the block ST before is read
        mbar_expect_tx(k_full + s, BN * D * 2);
        tma_tile<T, BN, D>(sk + s * BN * D, &maps.k, static_cast<i64>(j) * BN, blk.kb, k_full + s);
        if (j >= ST) mbar_wait(v_free + s, ph);
        mbar_expect_tx(v_full + s, BN * DV * 2);
        tma_tile<T, BN, DV>(sv + s * BN * DV, &maps.v, static_cast<i64>(j) * BN, blk.kb, v_full + s);
      }
    }
    return;
  }

  // a consumer warpgroup: 64 rows; its warps 16 each (the accumulator layout of attention.cuh)
  asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n" ::: "memory");
  const int wg = warp / 4, wwarp = warp % 4;
  const i64 wrow = blk.m0 + wg * 64 + wwarp * 16;  // this warp's first row
  const i64 row0 = wrow + lane / 4;                // this lane's rows: row0 and row0 + 8
  const T* qa = sq + wg * 64 * 64;                 // this warpgroup's rows in every slab of q
  float s[BN / 8][4], acc[DV / 8][4], row_max[2], row_sum[2];
  uint32_t pf[BN / 16][4];
  float(&sf)[BN / 2] = reinterpret_cast<float(&)[BN / 2]>(s);
  float(&af)[DV / 2] = reinterpret_cast<float(&)[DV / 2]>(acc);
  clear_state<DV>(acc, row_max, row_sum);

  auto issue_scores = [&](int j) {  // S = q k_j^T
    const T* kt = sk + (j % ST) * BN * D;
    fence_regs(sf);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma_ss_n128<T>(sf, gmma_desc(qa + (kk / 4) * (BM * 64) + (kk % 4) * 16, 16, 1024),
                       gmma_desc(kt + (kk / 4) * (BN * 64) + (kk % 4) * 16, 16, 1024), kk > 0);
    wgmma_commit();
  };
  auto issue_values = [&](int j) {  // O += P_j v_j
    const T* vt = sv + (j % ST) * BN * DV;
    fence_regs(af);
    fence_regs(pf);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < BN / 16; ++kk) {
      // v read transposed (its dv slabs BN * 128 bytes apart, 8 keys 1024 bytes apart)
      const uint64_t db = gmma_desc(vt + kk * 16 * 64, BN * 128, 1024);
      if constexpr (DV == 128) wgmma_rs_n128<T>(af, pf[kk], db);
      else wgmma_rs_n64<T>(af, pf[kk], db);
    }
    wgmma_commit();
  };
  auto free_slot = [&](uint64_t* bar) {
    __syncwarp();
    if (lane == 0) mbar_arrive(bar);
  };
  // Block j's scores turned into p (left in s): masked, scaled, the running max and sum; f: the
  // factors the output rows take before block j's values go in (1 on the first block).
  auto softmax = [&](int j, float (&f)[2]) {
    const i64 n0 = static_cast<i64>(j) * BN;
    scale_and_mask<BN, CAUSAL>(s, p.scale_log2, n0 + BN > p.lk || (CAUSAL && n0 + BN - 1 > wrow), n0, p.lk, row0,
                               lane);
    online_softmax_factors<BN, exp2_approx>(s, row_max, row_sum, f, j == 0);
  };

  // Ping-pong: the warpgroups take turns issuing their products (named barriers 1 and 2, one a
  // warpgroup), so that one's softmax runs while the other's products occupy the tensor cores.
  // Warpgroup 0 goes first; each turn ends by handing the next to the other (warpgroup 1 not
  // after its last, which nobody waits for). BlockRows gives every block at least one key block.
  const int turns = n_blocks + 1;
  int turn = 0;
  auto turn_begin = [&]() {
    asm volatile("bar.sync %0, 256;\n" ::"r"(1 + wg) : "memory");
  };
  auto turn_end = [&]() {
    if (wg == 0 || turn + 1 < turns) asm volatile("bar.arrive %0, 256;\n" ::"r"(2 - wg) : "memory");
    ++turn;
  };
  if (wg == 1) asm volatile("bar.arrive 1, 256;\n" ::: "memory");

  mbar_wait(q_full, 0);
  mbar_wait(k_full, 0);
  turn_begin();
  issue_scores(0);
  turn_end();
  wgmma_wait<0>();
  fence_regs(sf);
  free_slot(k_free);
  float f[2];
  softmax(0, f);
  pack_p<T, BN>(s, pf);
  for (int j = 1; j < n_blocks; ++j) {
    const int st = j % ST, sp = (j - 1) % ST;
    mbar_wait(k_full + st, (j / ST) & 1);
    turn_begin();
    issue_scores(j);
    if (j > 1) rescale_output<DV>(acc, f);  // block j - 1's factors, before its values go in
    mbar_wait(v_full + sp, ((j - 1) / ST) & 1);
    issue_values(j - 1);
    turn_end();
    wgmma_wait<1>();  // the scores (committed first)
    fence_regs(sf);
    free_slot(k_free + st);
    softmax(j, f);    // while the tensor cores run P_{j-1} v_{j-1}
    wgmma_wait<0>();
    fence_regs(af);
    fence_regs(pf);
    free_slot(v_free + sp);
    pack_p<T, BN>(s, pf);
  }
  const int last = n_blocks - 1;
  if (last > 0) rescale_output<DV>(acc, f);
  mbar_wait(v_full + last % ST, (last / ST) & 1);
  turn_begin();
  issue_values(last);
  turn_end();
  wgmma_wait<0>();
  fence_regs(af);
  store_rows<T, DV, rcp_approx>(acc, row_sum, blk.o, row0, p.lq, lane);
#elif defined(__CUDA_ARCH__)
  __trap();  // built without sm_90a (no wgmma, TMA or setmaxnreg): fail loudly, never return nothing
#endif
}

// 0 ok, 2 misaligned tensors, 4 the shared-memory limit could not be raised, 5 no tensor maps (the
// driver lacks cuTensorMapEncodeTiled or refused the tensors).
template <class T, int D, int DV, bool CAUSAL>
int launch_attention_ws(const Params& p, cudaStream_t stream) {
  // before the maps: a misaligned tensor is code 2, not a refused map
  if (!aligned16(p.q) || !aligned16(p.k) || !aligned16(p.v) || !aligned16(p.o)) return 2;
  // The maps of this thread's last call: the same tensors again need no encoding (microseconds of
  // host time a call, which a small problem launched back to back would feel).
  thread_local struct {
    const void *q = nullptr, *k = nullptr, *v = nullptr;
    i64 lq = 0, lk = 0, batch = 0, heads = 0, kv_group = 0;
    TmaMaps maps{};
  } last;
  if (last.q != p.q || last.k != p.k || last.v != p.v || last.lq != p.lq || last.lk != p.lk || last.batch != p.batch ||
      last.heads != p.heads || last.kv_group != p.kv_group) {
    last.q = nullptr;  // invalid until every map is made
    const i64 kv_mats = (p.batch / p.heads) * (p.heads / p.kv_group);
    if (!make_map<T>(&last.maps.q, p.q, p.batch, p.lq, D) || !make_map<T>(&last.maps.k, p.k, kv_mats, p.lk, D) ||
        !make_map<T>(&last.maps.v, p.v, kv_mats, p.lk, DV))
      return 5;
    last.q = p.q;
    last.k = p.k;
    last.v = p.v;
    last.lq = p.lq;
    last.lk = p.lk;
    last.batch = p.batch;
    last.heads = p.heads;
    last.kv_group = p.kv_group;
  }
  return launch<attention_ws_kernel<T, D, DV, CAUSAL>>(p, kWsRows, kWsThreads, ws_smem_bytes<D, DV>(), stream,
                                                       last.maps);
}

}  // namespace ucut_attn
