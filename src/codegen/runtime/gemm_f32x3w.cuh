// f32x3w: 3xTF32 on Hopper's TF32 wgmma with the operand split done inside the GEMM's main loop
// (docs/language.md, precision f32x3w; measured in bench/proof/f32x3w). This header's Mainloop
// splits both operands in shared memory (K-major only); the library generates gemm_f32x3w_rs.cuh's
// register-sourced form (8% faster, any layout), which uses this header's split and stock types.
//
// Why: an fp32-faithful GEMM (one that meets atol = rtol = 1e-4 against PyTorch's fp32) runs today
// either as CUTLASS's SM80 3xTF32 kernel on mma.sync (~73 TFLOP/s on Hopper: three MMAs at the
// legacy rate) or as `f32x3s`/`f32x3k`, which split A and B into TF32 "big" and "small" parts in
// separate elementwise kernels and then run TF32 wgmma GEMMs over them. Those splits cost memory
// passes: on a 128 x 32768 x 32768 Linear the weight's split alone writes 8 GiB, and `f32x3s` ran
// it at 0.61x eager where `f32x3` ran 1.41x (docs/benchmarks.md, run DQ). Here the split happens
// in shared memory, after TMA has brought a k-tile in and before the wgmmas read it:
//   big   = x with its low 13 mantissa bits cleared (exactly TF32), which is what TF32 wgmma
//           reads from an fp32 word: it truncates (run DW, docs/benchmarks.md: assuming that and
//           leaving the stage as TMA wrote it gave the in-place split's errors bit for bit, and
//           assuming round-to-nearest missed by TF32's own error), so the stage is not rewritten;
//   small = x - big (exact in fp32; wgmma truncates it to TF32 too, 2^-21 |x| at most), the one
//           shared-memory write of the split,
// and per k-tile three wgmmas: big*big into one accumulator, big*small + small*big into a second.
// The big accumulator is "promoted" every `Promote` k-tiles: added in ordinary fp32 into the
// running sum and restarted, because the tensor core's own accumulation of a long K drifts past
// 1e-4 (docs/language.md, `f32x3s`); the small one is added at the same points.
//
// It plugs into CUTLASS's SM90 cooperative warp-specialized kernel as a collective main loop: the
// producer warp's TMA loads, the pipeline, the tile scheduler and the epilogue are CUTLASS's own.
// TMA copies raw 32-bit words (the element type is tfloat32_t, which CUTLASS's TMA treats as
// plain bits; with float it would round to TF32 on the way in and lose the small part).
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/cutlass.h"
#include "cutlass/gemm/collective/collective_builder.hpp"

namespace ucut_f32x3w {


using namespace cute;

// The stock TMA + GMMA main loop, over 32-bit words: its load() (the producer side), Params and
// pipeline are used unchanged; only the consumer side (mma) and the shared storage differ.
template <int Stages, class ClusterShape, class TileShape>
struct StockTypes {
  using StrideA = cutlass::gemm::TagToStrideA_t<cutlass::layout::RowMajor>;     // A [M, K]
  using StrideB = cutlass::gemm::TagToStrideB_t<cutlass::layout::ColumnMajor>;  // B as [N, K]
  using Element = cutlass::tfloat32_t;
  using TiledMma = decltype(make_tiled_mma(
      GMMA::ss_op_selector<Element, Element, float, TileShape, GMMA::Major::K, GMMA::Major::K>(),
      Layout<Shape<_2, _1, _1>>{}));  // cooperative: two consumer warpgroups along M
  using AtomA = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                         GMMA::Major::K, Element, decltype(get<0>(TileShape{})), decltype(get<2>(TileShape{}))>());
  using AtomB = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                         GMMA::Major::K, Element, decltype(get<1>(TileShape{})), decltype(get<2>(TileShape{}))>());
  using CopyA = decltype(cutlass::gemm::collective::detail::sm90_cluster_shape_to_tma_atom(get<1>(ClusterShape{})));
  using CopyB = decltype(cutlass::gemm::collective::detail::sm90_cluster_shape_to_tma_atom(get<0>(ClusterShape{})));
  using Mainloop = cutlass::gemm::collective::CollectiveMma<
      cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<Stages, ClusterShape,
                                                        cutlass::gemm::KernelTmaWarpSpecializedCooperative>,
      TileShape, Element, StrideA, Element, StrideB, TiledMma, CopyA, AtomA, void, cute::identity, CopyB, AtomB,
      void, cute::identity>;
};

// How a word's TF32 value is taken. kBigHwTrunc (what the library generates) leaves the stage as
// TMA wrote it and writes only the small part, the remainder of the word truncated to TF32, which
// is what TF32 wgmma reads (run DW). kBigInPlace also writes the truncated word back in place, so
// the tensor core reads a TF32 value whatever it does to an fp32 one (13-15% slower: one more
// shared-memory write a word); kBigHwRna assumes round-to-nearest, ties away (cvt.rna.tf32.f32),
// and misses by TF32's own error (run DW: its proof variant fails). bench/proof/f32x3w has all three.
enum BigMode { kBigInPlace = 0, kBigHwTrunc = 1, kBigHwRna = 2 };

// The split of one 32-bit word into its TF32 value (in x, for kBigInPlace) and the exact rest.
// Infinities and NaNs keep their value and get a zero small part.
template <int Mode>
CUTLASS_DEVICE void split_word(uint32_t& x, uint32_t& small) {
  const float v = __uint_as_float(x);
  uint32_t big = x & 0xffffe000u;
  if constexpr (Mode == kBigHwRna) asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(big) : "f"(v));
  small = isfinite(v) ? __float_as_uint(v - __uint_as_float(big)) : 0u;
  if constexpr (Mode == kBigInPlace) x = isfinite(v) ? big : x;
}

// Splits the `n` words of one stage's tile (`big`: rewritten in place where Mode is kBigInPlace,
// only read otherwise) into `small`, 16 bytes at a time, by `threads` threads. The two buffers have
// the same layout and the same alignment modulo the swizzle period, so a word at offset o holds the
// same (row, k) element in both.
template <int Mode>
CUTLASS_DEVICE void split_tile(uint32_t* big, uint32_t* small, int n, int tid, int threads) {
  uint4* b4 = reinterpret_cast<uint4*>(big);
  uint4* s4 = reinterpret_cast<uint4*>(small);
  for (int i = tid; i < n / 4; i += threads) {
    uint4 v = b4[i];
    uint4 s;
    split_word<Mode>(v.x, s.x);
    split_word<Mode>(v.y, s.y);
    split_word<Mode>(v.z, s.z);
    split_word<Mode>(v.w, s.w);
    if constexpr (Mode == kBigInPlace) b4[i] = v;
    s4[i] = s;
  }
}

// Shared-memory phases: TMA and wgmma swizzle by address bits modulo 1024 (the 128-byte swizzle's
// period), so a part buffer holds the same (row, k) element at the same offset as a stage only at
// the stage's phase; a buffer at phase 0 has a swizzled layout's offsets as its addresses.
template <class T>
CUTLASS_DEVICE uint32_t phase_of(T const* p) {
  return cute::cast_smem_ptr_to_uint(p) & 1023u;
}
// The first element of `slack` (1 KiB longer than the buffer it holds) at `phase`.
template <class T>
CUTLASS_DEVICE T* at_phase(T* slack, uint32_t phase) {
  return slack + ((phase - phase_of(slack)) & 1023u) / sizeof(T);
}

// The promotion: once this warpgroup's wgmmas are done, both tensor-core sums are added in
// ordinary fp32 into the running total and restarted.
template <class Acc, class Part>
CUTLASS_DEVICE void promote(Acc& accum, Part& acc_big, Part& acc_small) {
  warpgroup_wait<0>();
  warpgroup_fence_operand(acc_big);
  warpgroup_fence_operand(acc_small);
  CUTLASS_PRAGMA_UNROLL
  for (int i = 0; i < size(accum); ++i) {
    accum(i) += acc_big(i) + acc_small(i);
    acc_big(i) = 0.f;
    acc_small(i) = 0.f;
  }
  warpgroup_fence_operand(acc_big);
  warpgroup_fence_operand(acc_small);
}

template <int Stages, class ClusterShape, class TileShape, int Promote, int Big = kBigHwTrunc>
struct Mainloop : StockTypes<Stages, ClusterShape, TileShape>::Mainloop {
  using Base = typename StockTypes<Stages, ClusterShape, TileShape>::Mainloop;
  using Types = StockTypes<Stages, ClusterShape, TileShape>;
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TiledMma;
  using Element = typename Types::Element;

  static_assert(Promote >= 1, "promote the big accumulator every 1 or more k-tiles");
  static_assert(size(TiledMma{}) == 256, "two consumer warpgroups (the cooperative kernel)");

  // The small parts of the k-tile in flight: two buffers, so that the split of tile t+1 can run
  // while tile t's wgmmas read the other one.
  using SmemLayoutAs = decltype(tile_to_shape(typename Types::AtomA{},
                                              make_shape(get<0>(TileShape{}), get<2>(TileShape{}), _2{}),
                                              Step<_1, _2, _3>{}));
  using SmemLayoutBs = decltype(tile_to_shape(typename Types::AtomB{},
                                              make_shape(get<1>(TileShape{}), get<2>(TileShape{}), _2{}),
                                              Step<_1, _2, _3>{}));
  static constexpr int TileWordsA = size<0>(SmemLayoutA{}) * size<1>(SmemLayoutA{});
  static constexpr int TileWordsB = size<0>(SmemLayoutB{}) * size<1>(SmemLayoutB{});
  static_assert(cosize_v<SmemLayoutA> == TileWordsA * Stages && cosize_v<SmemLayoutB> == TileWordsB * Stages,
                "stages are contiguous, one tile each");
  static_assert(TileWordsA * 4 % 1024 == 0 && TileWordsB * 4 % 1024 == 0, "tiles are whole swizzle periods");

  // The small buffers carry 1 KiB of slack each: the split maps a word at offset o of a stage to
  // offset o of a small buffer, which holds the same (row, k) element only where both sit at the
  // same address modulo the 1024-byte swizzle period (TMA and wgmma swizzle by absolute address
  // bits), and CUTLASS places the stages 128-byte aligned, not 1024. at_phase() starts each
  // buffer at the stage's phase inside its slack.
  static constexpr int kSlackWords = 1024 / 4;
  struct TensorStorage : Base::TensorStorage {
    alignas(128) cute::array<Element, cosize_v<SmemLayoutAs> + kSlackWords> small_A;
    alignas(128) cute::array<Element, cosize_v<SmemLayoutBs> + kSlackWords> small_B;
  };
  using PipelineStorage = typename Base::PipelineStorage;
  struct SharedStorage {
    TensorStorage tensors;
    PipelineStorage pipeline;
  };

  // A named barrier of the two consumer warpgroups, above the ids CUTLASS reserves.
  static constexpr uint32_t kSplitBarrier = cutlass::arch::NamedBarrier::ReservedNamedBarrierCount;


  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx, TensorStorage& st, Params const&) {
    constexpr int Threads = size(TiledMma{});
    Element* small_a = at_phase(st.small_A.data(), phase_of(st.smem_A.data()));
    Element* small_b = at_phase(st.small_B.data(), phase_of(st.smem_B.data()));
    Tensor sA = make_tensor(make_smem_ptr(st.smem_A.data()), SmemLayoutA{});
    Tensor sB = make_tensor(make_smem_ptr(st.smem_B.data()), SmemLayoutB{});
    Tensor sAs = make_tensor(make_smem_ptr(small_a), SmemLayoutAs{});
    Tensor sBs = make_tensor(make_smem_ptr(small_b), SmemLayoutBs{});

    Layout wg_layout = make_layout(Int<Threads / cutlass::NumThreadsPerWarpGroup>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
    const int wg = __shfl_sync(0xffffffff, thread_idx / cutlass::NumThreadsPerWarpGroup, 0);
    TiledMma tiled_mma;
    auto thr = tiled_mma.get_slice(wg_layout(wg));
    Tensor tCrA = thr.make_fragment_A(thr.partition_A(sA));     // (MMA, MMA_M, MMA_K, PIPE)
    Tensor tCrB = thr.make_fragment_B(thr.partition_B(sB));     // (MMA, MMA_N, MMA_K, PIPE)
    Tensor tCrAs = thr.make_fragment_A(thr.partition_A(sAs));   // (MMA, MMA_M, MMA_K, 2)
    Tensor tCrBs = thr.make_fragment_B(thr.partition_B(sBs));   // (MMA, MMA_N, MMA_K, 2)

    Tensor acc_big = make_fragment_like(accum);
    Tensor acc_small = make_fragment_like(accum);
    clear(accum);
    clear(acc_big);
    clear(acc_small);
    tiled_mma.accumulate_ = GMMA::ScaleOut::One;

    const int tid = thread_idx % Threads;
    PipelineState smem_pipe_release = smem_pipe_read;
    CUTLASS_PRAGMA_NO_UNROLL
    for (int t = 0; t < k_tile_count; ++t) {
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
      const int s = smem_pipe_read.index();
      const int buf = t & 1;
      // Small buffer `buf` was last read by tile t-2's wgmmas (or by the previous output tile's):
      // each warpgroup has waited for its own (wait<1> below, or mma_tail), and this barrier makes
      // both have done so before either overwrites it.
      cutlass::arch::NamedBarrier::sync(Threads, kSplitBarrier);
      split_tile<Big>(reinterpret_cast<uint32_t*>(st.smem_A.data()) + s * TileWordsA,
                      reinterpret_cast<uint32_t*>(small_a) + buf * TileWordsA, TileWordsA, tid, Threads);
      split_tile<Big>(reinterpret_cast<uint32_t*>(st.smem_B.data()) + s * TileWordsB,
                      reinterpret_cast<uint32_t*>(small_b) + buf * TileWordsB, TileWordsB, tid, Threads);
      // The wgmmas read shared memory through the async proxy: make the generic-proxy writes
      // visible to it, then wait for every thread's share of the split.
      cutlass::arch::fence_view_async_shared();
      cutlass::arch::NamedBarrier::sync(Threads, kSplitBarrier);

      warpgroup_fence_operand(acc_big);
      warpgroup_fence_operand(acc_small);
      warpgroup_arrive();
      CUTLASS_PRAGMA_UNROLL
      for (int kb = 0; kb < size<2>(tCrA); ++kb) {
        cute::gemm(tiled_mma, tCrA(_, _, kb, s), tCrB(_, _, kb, s), acc_big);
        cute::gemm(tiled_mma, tCrA(_, _, kb, s), tCrBs(_, _, kb, buf), acc_small);
        cute::gemm(tiled_mma, tCrAs(_, _, kb, buf), tCrB(_, _, kb, s), acc_small);
      }
      warpgroup_commit_batch();
      // Tile t-1's wgmmas are done (this warpgroup's): its stage goes back to the producer.
      warpgroup_wait<1>();
      warpgroup_fence_operand(acc_big);
      warpgroup_fence_operand(acc_small);
      if (t >= 1) {
        pipeline.consumer_release(smem_pipe_release);
        ++smem_pipe_release;
      }
      ++smem_pipe_read;

      if ((t + 1) % Promote == 0 || t + 1 == k_tile_count) promote(accum, acc_big, acc_small);
    }
    warpgroup_fence_operand(accum);
  }
  // mma_tail (the base's): waits for every wgmma and releases the last stage, which mma() keeps.
};

// The stages that fit in sm_90's 227 KiB beside the epilogue's storage and the two small-part
// buffers (with their slack), counted as CUTLASS's StageCountAutoCarveout counts its own (a stage: the A and B tiles
// and 32 bytes of pipeline barriers); between 2 and 8.
template <class TileShape>
constexpr int auto_stages(int epilogue_bytes) {
  constexpr int tile = (size<0>(TileShape{}) + size<1>(TileShape{})) * size<2>(TileShape{}) * 4;
  const int st = (232448 - epilogue_bytes - 2 * tile - 2048) / (tile + 32);
  return st < 2 ? 2 : st > 8 ? 8 : st;
}

}  // namespace ucut_f32x3w
