// The f32x3w proof's kernels: whole GEMMs over the main loop the library generates for precision
// f32x3w (src/codegen/runtime/gemm_f32x3w.cuh, where its design is explained), at a few tiles,
// clusters, stage counts and promotion intervals, beside plain TF32 wgmma on the same kernel for
// the speed 3xTF32 is measured against. bench/proof/f32x3w/README.md runs them.
#pragma once

#include "cute/tensor.hpp"
#include "cutlass/arch/barrier.h"
#include "cutlass/cutlass.h"
#include "cutlass/epilogue/collective/collective_builder.hpp"
#include "cutlass/gemm/collective/collective_builder.hpp"
#include "cutlass/gemm/device/gemm_universal_adapter.h"
#include "cutlass/gemm/kernel/gemm_universal.hpp"
#include "cutlass/util/packed_stride.hpp"
#include "gemm_f32x3w.cuh"  // src/codegen/runtime: the main loop the library generates
#include "gemm_f32x3w_rs.cuh"  // src/codegen/runtime: A in registers, any layout (proof stage)

#include <cuda_runtime.h>

namespace f32x3w {

using namespace cute;
using ucut_f32x3w::Mainloop;

// Runs one GEMM D[M, N] = A[M, K] * B[N, K]^T of a GemmUniversalAdapter over the cooperative
// kernel with the persistent scheduler, its operands read as `Element` (tfloat32_t: 32-bit words,
// copied as bits; float: rounded to TF32 by TMA on the way in), in the layouts the kernel's
// strides say (the harness passes A as [K, M] and B as [K, N] to a variant whose kLayout asks).
template <class Device, class Element>
cudaError_t run_gemm(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t stream) {
  using Kernel = typename Device::GemmKernel;
  using StrideA = typename Kernel::StrideA;
  using StrideB = typename Kernel::StrideB;
  using StrideD = typename Kernel::StrideD;
  typename Device::Arguments args{
      cutlass::gemm::GemmUniversalMode::kGemm,
      {M, N, K, 1},
      {reinterpret_cast<const Element*>(A), cutlass::make_cute_packed_stride(StrideA{}, {M, K, 1}),
       reinterpret_cast<const Element*>(B), cutlass::make_cute_packed_stride(StrideB{}, {N, K, 1})},
      {{1.f, 0.f}, nullptr, StrideD{}, C, cutlass::make_cute_packed_stride(StrideD{}, {M, N, 1})}};
  Device gemm;
  if (gemm.can_implement(args) != cutlass::Status::kSuccess) return cudaErrorNotSupported;
  if (Device::get_workspace_size(args) != 0) return cudaErrorNotSupported;  // the persistent scheduler needs none
  if (gemm.initialize(args, nullptr, stream) != cutlass::Status::kSuccess) return cudaErrorLaunchFailure;
  if (gemm.run(stream) != cutlass::Status::kSuccess) return cudaErrorLaunchFailure;
  return cudaGetLastError();
}

// The fp32 epilogue both kernels below store through: D = acc, no C read.
template <class TileShape, class ClusterShape>
using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, float, float, void, cutlass::layout::RowMajor, 4, float,
    cutlass::layout::RowMajor, 4, cutlass::epilogue::TmaWarpSpecializedCooperative>::CollectiveOp;

// A whole f32x3w GEMM: our main loop in CUTLASS's cooperative kernel with its TMA epilogue and
// persistent tile scheduler.
template <class TileShape, class ClusterShape, int Stages, int Promote, int Big = ucut_f32x3w::kBigHwTrunc>
struct Gemm {
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>,
                                                      Mainloop<Stages, ClusterShape, TileShape, Promote, Big>,
                                                      Epilogue<TileShape, ClusterShape>, cutlass::gemm::PersistentScheduler>;
  static cudaError_t run(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t stream) {
    return run_gemm<cutlass::gemm::device::GemmUniversalAdapter<Kernel>, cutlass::tfloat32_t>(M, N, K, A, B, C, stream);
  }
};

// f32x3w with A in registers (gemm_f32x3w_rs.cuh): A K-major ([M, K]) or M-major (given as
// [K, M]), B K-major ([N, K]) or N-major (given as [K, N]); kLayout tells the harness which.
template <GMMA::Major MajorA, GMMA::Major MajorB, class TileShape, class ClusterShape, int Stages, int Promote>
struct GemmRs {
  static constexpr int kLayout = (MajorA == GMMA::Major::MN ? 1 : 0) | (MajorB == GMMA::Major::MN ? 2 : 0);
  using Kernel = cutlass::gemm::kernel::GemmUniversal<
      Shape<int, int, int, int>, ucut_f32x3w::MainloopRs<MajorA, MajorB, Stages, ClusterShape, TileShape, Promote>,
      Epilogue<TileShape, ClusterShape>, cutlass::gemm::PersistentScheduler>;
  static cudaError_t run(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t stream) {
    return run_gemm<cutlass::gemm::device::GemmUniversalAdapter<Kernel>, cutlass::tfloat32_t>(M, N, K, A, B, C, stream);
  }
};

// Plain TF32 on the same kernel and tiles (CUTLASS's own main loop, TMA rounding fp32 to TF32):
// the speed 3xTF32 is measured against (a third of it is the split's ideal).
template <class TileShape, class ClusterShape, int Stages>
struct Tf32Gemm {
  using MainloopT = typename cutlass::gemm::collective::CollectiveBuilder<
      cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, float, cutlass::layout::RowMajor, 4, float,
      cutlass::layout::ColumnMajor, 4, float, TileShape, ClusterShape, cutlass::gemm::collective::StageCount<Stages>,
      cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp;
  using Kernel = cutlass::gemm::kernel::GemmUniversal<Shape<int, int, int, int>, MainloopT,
                                                      Epilogue<TileShape, ClusterShape>, cutlass::gemm::PersistentScheduler>;
  static cudaError_t run(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t stream) {
    return run_gemm<cutlass::gemm::device::GemmUniversalAdapter<Kernel>, float>(M, N, K, A, B, C, stream);
  }
};

struct Variant {
  const char* name;
  cudaError_t (*run)(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s);
  int layout;  // bit 0: A given as [K, M]; bit 1: B given as [K, N]
};

template <class T, class = void>
struct LayoutOf : std::integral_constant<int, 0> {};
template <class T>
struct LayoutOf<T, std::void_t<decltype(T::kLayout)>> : std::integral_constant<int, T::kLayout> {};

#ifndef F32X3W_VARIANTS
// name: tile MxN (K 32 a k-tile), cluster, stages, promotion interval in k-tiles.
#define F32X3W_VARIANTS                                                                              \
  X("f32x3w_t128x128_c1_s3_p4", Gemm<Shape<_128, _128, _32>, Shape<_1, _1, _1>, 3, 4>)               \
  X("f32x3w_t128x128_c1_s3_p4_inplace",                                                             \
    Gemm<Shape<_128, _128, _32>, Shape<_1, _1, _1>, 3, 4, ucut_f32x3w::kBigInPlace>)                 \
  X("f32x3w_t128x128_c1_s3_p4_hwrna",                                                               \
    Gemm<Shape<_128, _128, _32>, Shape<_1, _1, _1>, 3, 4, ucut_f32x3w::kBigHwRna>)                   \
  X("f32x3w_t128x128_c1_s3_p16", Gemm<Shape<_128, _128, _32>, Shape<_1, _1, _1>, 3, 16>)             \
  X("f32x3w_t128x128_c2x1_s3_p4", Gemm<Shape<_128, _128, _32>, Shape<_2, _1, _1>, 3, 4>)             \
  X("f32x3w_t128x64_c1_s4_p4", Gemm<Shape<_128, _64, _32>, Shape<_1, _1, _1>, 4, 4>)                 \
  X("tf32_sm90_t128x128_c1_s4", Tf32Gemm<Shape<_128, _128, _32>, Shape<_1, _1, _1>, 4>)               \
  X("f32x3w_rs_kk_t128x128_s3_p4", GemmRs<GMMA::Major::K, GMMA::Major::K, Shape<_128, _128, _32>, Shape<_1, _1, _1>, 3, 4>) \
  X("f32x3w_rs_kk_t128x128_s4_p4", GemmRs<GMMA::Major::K, GMMA::Major::K, Shape<_128, _128, _32>, Shape<_1, _1, _1>, 4, 4>) \
  X("f32x3w_rs_kn_t128x128_s3_p4", GemmRs<GMMA::Major::K, GMMA::Major::MN, Shape<_128, _128, _32>, Shape<_1, _1, _1>, 3, 4>) \
  X("f32x3w_rs_mk_t128x128_s3_p4", GemmRs<GMMA::Major::MN, GMMA::Major::K, Shape<_128, _128, _32>, Shape<_1, _1, _1>, 3, 4>) \
  X("f32x3w_rs_mn_t128x128_s3_p4", GemmRs<GMMA::Major::MN, GMMA::Major::MN, Shape<_128, _128, _32>, Shape<_1, _1, _1>, 3, 4>) \
  X("f32x3w_rs_kn_t128x64_s4_p4", GemmRs<GMMA::Major::K, GMMA::Major::MN, Shape<_128, _64, _32>, Shape<_1, _1, _1>, 4, 4>)
#endif

inline const Variant* variants(int* count) {
#define X(name, ...) Variant{name, &__VA_ARGS__::run, LayoutOf<__VA_ARGS__>::value},
  static const Variant list[] = {F32X3W_VARIANTS};
#undef X
  *count = static_cast<int>(sizeof(list) / sizeof(list[0]));
  return list;
}

}  // namespace f32x3w
