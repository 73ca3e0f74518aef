// f32x3w with A in registers (register-sourced wgmma): 3xTF32 on Hopper's TF32 wgmma for any
// operand layout, the main loop the library generates for `precision f32x3w` (docs/language.md;
// measured in bench/proof/f32x3w, docs/benchmarks.md run DX: 106 TFLOP/s on 4096^3 with A and B
// K-major, 8% faster than gemm_f32x3w.cuh's shared-memory form; 34 with B [K, N]).
//
// gemm_f32x3w.cuh splits both operands in shared memory and runs shared-memory-sourced wgmmas,
// which read 32-bit operands only K-major: a [K, N] B (most of KernelBench's matmuls) or a
// transposed A cannot use it. Here:
//   A  is copied from its stage into registers one k-block (8 of K) at a time, whatever its
//      layout (the copy gathers the fragment), and split there: big = the word with its low 13
//      mantissa bits cleared, small = word - big (exact). No shared-memory write for A.
//   B  K-major: the stage is B's big part as it is (TF32 wgmma truncates an fp32 word, run DW),
//      and only its small parts are written, as in gemm_f32x3w.cuh;
//      [K, N] (N-major): the split also transposes: it reads the stage and writes B's big and
//      small parts K-major into two double-buffered tiles the wgmmas read.
// Per k-block three register-sourced wgmmas: Abig*Bbig into one accumulator, Asmall*Bbig +
// Abig*Bsmall into a second; the first is promoted into the fp32 sum every `Promote` k-tiles.
//
// Registers: A's parts live in two k-block slices (8 words a thread), so a slice is reloaded
// only after the wgmmas two k-blocks back (which read it) are done: warpgroup_wait<1> with one
// commit group a k-block.
#pragma once

#include "gemm_f32x3w.cuh"

namespace ucut_f32x3w {

using namespace cute;

// CUTLASS's stock TMA main loop over 32-bit words of A [M, K] and B [N, K] in the given majors
// (its load() and pipeline serve as they are; its TiledMma only types the accumulators, which a
// register-sourced wgmma lays out the same way).
template <GMMA::Major MajorA, GMMA::Major MajorB, int Stages, class ClusterShape, class TileShape>
struct LayoutTypes {
  using StrideA = cute::conditional_t<MajorA == GMMA::Major::K, cutlass::gemm::TagToStrideA_t<cutlass::layout::RowMajor>,
                                      cutlass::gemm::TagToStrideA_t<cutlass::layout::ColumnMajor>>;
  using StrideB = cute::conditional_t<MajorB == GMMA::Major::K, cutlass::gemm::TagToStrideB_t<cutlass::layout::ColumnMajor>,
                                      cutlass::gemm::TagToStrideB_t<cutlass::layout::RowMajor>>;
  using Element = cutlass::tfloat32_t;
  using TiledMmaSS = decltype(make_tiled_mma(
      GMMA::ss_op_selector<Element, Element, float, TileShape, GMMA::Major::K, GMMA::Major::K>(), Layout<Shape<_2, _1, _1>>{}));
  using TiledMmaRS = decltype(make_tiled_mma(
      GMMA::rs_op_selector<Element, Element, float, TileShape, GMMA::Major::K, GMMA::Major::K>(), Layout<Shape<_2, _1, _1>>{}));
  using AtomA = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                         MajorA, Element, decltype(get<0>(TileShape{})), decltype(get<2>(TileShape{}))>());
  using AtomB = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                         MajorB, Element, decltype(get<1>(TileShape{})), decltype(get<2>(TileShape{}))>());
  using AtomBk = decltype(cutlass::gemm::collective::detail::ss_smem_selector<
                          GMMA::Major::K, Element, decltype(get<1>(TileShape{})), decltype(get<2>(TileShape{}))>());
  using CopyA = decltype(cutlass::gemm::collective::detail::sm90_cluster_shape_to_tma_atom(get<1>(ClusterShape{})));
  using CopyB = decltype(cutlass::gemm::collective::detail::sm90_cluster_shape_to_tma_atom(get<0>(ClusterShape{})));
  using Mainloop = cutlass::gemm::collective::CollectiveMma<
      cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<Stages, ClusterShape,
                                                        cutlass::gemm::KernelTmaWarpSpecializedCooperative>,
      TileShape, Element, StrideA, Element, StrideB, TiledMmaSS, CopyA, AtomA, void, cute::identity, CopyB, AtomB,
      void, cute::identity>;
};

template <GMMA::Major MajorA, GMMA::Major MajorB, int Stages, class ClusterShape, class TileShape, int Promote>
struct MainloopRs : LayoutTypes<MajorA, MajorB, Stages, ClusterShape, TileShape>::Mainloop {
  using Types = LayoutTypes<MajorA, MajorB, Stages, ClusterShape, TileShape>;
  using Base = typename Types::Mainloop;
  using typename Base::MainloopPipeline;
  using typename Base::Params;
  using typename Base::PipelineState;
  using typename Base::SmemLayoutA;
  using typename Base::SmemLayoutB;
  using typename Base::TiledMma;
  using Element = typename Types::Element;
  using Rs = typename Types::TiledMmaRS;

  static_assert(Promote >= 1, "promote the big accumulator every 1 or more k-tiles");
  static_assert(size(TiledMma{}) == 256 && size(Rs{}) == 256, "two consumer warpgroups (the cooperative kernel)");
  static constexpr bool kTransposeB = MajorB == GMMA::Major::MN;
  static constexpr int kN = size<1>(TileShape{});
  static constexpr int kK = size<2>(TileShape{});

  // B's parts K-major, two tiles each (the split of tile t+1 runs while tile t's wgmmas read the other).
  using SmemLayoutBk = decltype(tile_to_shape(typename Types::AtomBk{}, make_shape(get<1>(TileShape{}), get<2>(TileShape{}), _2{}),
                                              Step<_1, _2, _3>{}));
  static constexpr int TileWordsB = kN * kK;
  static_assert(cosize_v<SmemLayoutBk> == 2 * TileWordsB, "two contiguous tiles");
  static_assert(TileWordsB * 4 % 1024 == 0, "tiles are whole swizzle periods");
  static constexpr int kSlackWords = 1024 / 4;
  struct TensorStorage : Base::TensorStorage {
    alignas(128) cute::array<Element, cosize_v<SmemLayoutBk> + kSlackWords> small_B;
    alignas(128) cute::array<Element, kTransposeB ? cosize_v<SmemLayoutBk> + kSlackWords : 4> big_B;
  };
  using PipelineStorage = typename Base::PipelineStorage;
  struct SharedStorage {
    TensorStorage tensors;
    PipelineStorage pipeline;
  };

  static constexpr uint32_t kSplitBarrier = cutlass::arch::NamedBarrier::ReservedNamedBarrierCount;

  // A word's split in registers (split_word's, the big part truncated in place).
  CUTLASS_DEVICE static void split_reg(Element& big, Element& small, Element const& word) {
    uint32_t x = word.storage, s;
    split_word<kBigInPlace>(x, s);
    big = Element::bitcast(x);
    small = Element::bitcast(s);
  }

  template <class FrgTensorC>
  CUTLASS_DEVICE void mma(MainloopPipeline pipeline, PipelineState smem_pipe_read, FrgTensorC& accum,
                          int k_tile_count, int thread_idx, TensorStorage& st, Params const&) {
    constexpr int Threads = 256;
    const int tid = thread_idx % Threads;
    // A's stages, read by the register copies by absolute address (TMA swizzles by address, and a
    // stage need not sit on a 1024-byte boundary).
    Tensor sA = as_position_independent_swizzle_tensor(make_tensor(make_smem_ptr(st.smem_A.data()), SmemLayoutA{}));
    Tensor sB = make_tensor(make_smem_ptr(st.smem_B.data()), SmemLayoutB{});  // (N, K, PIPE)
    // B's K-major small parts at its stages' phase (split word for word), or, written through
    // layouts where B is transposed, at phase 0 like its big parts (gemm_f32x3w.cuh: at_phase)
    Element* small_b = at_phase(st.small_B.data(), kTransposeB ? 0u : phase_of(st.smem_B.data()));
    Element* big_b = kTransposeB ? at_phase(st.big_B.data(), 0u) : nullptr;
    Tensor sBs = make_tensor(make_smem_ptr(small_b), SmemLayoutBk{});  // (N, K, 2)
    Tensor sBb = make_tensor(make_smem_ptr(kTransposeB ? big_b : small_b), SmemLayoutBk{});  // (N, K, 2)

    Rs rs;
    Layout wg_layout = make_layout(Int<Threads / cutlass::NumThreadsPerWarpGroup>{}, Int<cutlass::NumThreadsPerWarpGroup>{});
    const int wg = __shfl_sync(0xffffffff, tid / cutlass::NumThreadsPerWarpGroup, 0);
    auto thr = rs.get_thread_slice(tid);
    auto thr_wg = rs.get_slice(wg_layout(wg));
    Tensor tCrA = thr.partition_fragment_A(sA(_, _, Int<0>{}));  // (MMA, MMA_M, MMA_K): slices 0, 1 used
    Tensor tCrAs = make_fragment_like(tCrA);
    // B's big part: the stage itself where B is K-major (MMA, MMA_N, MMA_K, PIPE), else the
    // transposed tiles (MMA, MMA_N, MMA_K, 2); its small part (MMA, MMA_N, MMA_K, 2).
    auto tCrBb = [&] {
      if constexpr (kTransposeB) return thr_wg.make_fragment_B(thr_wg.partition_B(sBb));
      else return thr_wg.make_fragment_B(thr_wg.partition_B(sB));
    }();
    Tensor tCrBs = thr_wg.make_fragment_B(thr_wg.partition_B(sBs));

    auto copy_a = make_tiled_copy_A(Copy_Atom<AutoVectorizingCopy, Element>{}, rs);
    auto thr_copy = copy_a.get_thread_slice(tid);
    Tensor tAsA = thr_copy.partition_S(sA);     // (CPY, CPY_M, CPY_K, PIPE)
    Tensor tArA = thr_copy.retile_D(tCrA);      // (CPY, CPY_M, CPY_K)
    constexpr int KBlocks = size<2>(tCrA);
    static_assert(KBlocks % 2 == 0, "an even number of k-blocks a tile (two register slices)");

    Tensor acc_big = make_fragment_like(accum);
    Tensor acc_small = make_fragment_like(accum);
    clear(accum);
    clear(acc_big);
    clear(acc_small);
    rs.accumulate_ = GMMA::ScaleOut::One;

    PipelineState smem_pipe_release = smem_pipe_read;
    CUTLASS_PRAGMA_NO_UNROLL
    for (int t = 0; t < k_tile_count; ++t) {
      auto token = pipeline.consumer_try_wait(smem_pipe_read);
      pipeline.consumer_wait(smem_pipe_read, token);
      const int s = smem_pipe_read.index();
      const int buf = t & 1;
      // Buffer `buf` was last read by tile t-2's wgmmas, which each warpgroup waited for during
      // tile t-1 (warpgroup_wait<1> before its second k-block): both have, past this barrier.
      cutlass::arch::NamedBarrier::sync(Threads, kSplitBarrier);
      if constexpr (kTransposeB) {
        // B [K, N]: read the stage N-major (by address), write big and small K-major. Four
        // consecutive n at one k a thread.
        Tensor sBmn = as_position_independent_swizzle_tensor(sB);
        for (int i = tid; i < TileWordsB / 4; i += Threads) {
          const int n = (i % (kN / 4)) * 4;
          const int k = i / (kN / 4);
          CUTLASS_PRAGMA_UNROLL
          for (int j = 0; j < 4; ++j) {
            Element big, small;
            split_reg(big, small, sBmn(n + j, k, s));
            sBb(n + j, k, buf) = big;
            sBs(n + j, k, buf) = small;
          }
        }
      } else {
        split_tile<kBigHwTrunc>(reinterpret_cast<uint32_t*>(st.smem_B.data()) + s * TileWordsB,
                                reinterpret_cast<uint32_t*>(small_b) + buf * TileWordsB, TileWordsB, tid, Threads);
      }
      cutlass::arch::fence_view_async_shared();
      cutlass::arch::NamedBarrier::sync(Threads, kSplitBarrier);

      CUTLASS_PRAGMA_UNROLL
      for (int kb = 0; kb < KBlocks; ++kb) {
        const int p = kb & 1;
        // Slice p was read by the wgmmas two k-blocks back: one commit group may stay in flight.
        warpgroup_wait<1>();
        warpgroup_fence_operand(tCrA);
        warpgroup_fence_operand(tCrAs);
        copy(copy_a, tAsA(_, _, kb, s), tArA(_, _, p));
        CUTLASS_PRAGMA_UNROLL
        for (int i = 0; i < size(tCrA(_, _, p)); ++i) split_reg(tCrA(_, _, p)(i), tCrAs(_, _, p)(i), tCrA(_, _, p)(i));
        warpgroup_fence_operand(tCrA);
        warpgroup_fence_operand(tCrAs);
        warpgroup_fence_operand(acc_big);
        warpgroup_fence_operand(acc_small);
        warpgroup_arrive();
        const int big = kTransposeB ? buf : s;
        cute::gemm(rs, tCrA(_, _, p), tCrBb(_, _, kb, big), acc_big);
        cute::gemm(rs, tCrAs(_, _, p), tCrBb(_, _, kb, big), acc_small);
        cute::gemm(rs, tCrA(_, _, p), tCrBs(_, _, kb, buf), acc_small);
        warpgroup_commit_batch();
        warpgroup_fence_operand(acc_big);
        warpgroup_fence_operand(acc_small);
      }
      // Tile t-1's wgmmas finished before this tile's second k-block: its stage goes back.
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

// The stages that fit beside the epilogue's storage and B's part tiles (small; big too where B is
// transposed), as auto_stages counts them; between 2 and 8.
template <class TileShape, bool TransposeB>
constexpr int auto_stages_rs(int epilogue_bytes) {
  constexpr int tile = (size<0>(TileShape{}) + size<1>(TileShape{})) * size<2>(TileShape{}) * 4;
  constexpr int parts = (TransposeB ? 2 : 1) * (2 * size<1>(TileShape{}) * size<2>(TileShape{}) * 4 + 1024);
  const int st = (232448 - epilogue_bytes - parts) / (tile + 32);
  return st < 2 ? 2 : st > 8 ? 8 : st;
}

}  // namespace ucut_f32x3w
