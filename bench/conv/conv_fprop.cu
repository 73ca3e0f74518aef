// One CUTLASS 3.x SM90 implicit-GEMM convolution forward (fprop) kernel behind a C entry point,
// for bench/conv/measure.py: channels-last activations (NWC/NHWC/NDHWC), KRSC filters, output
// channels-last, y = conv(x, w) (alpha 1, beta 0, no source read). The problem shape is a runtime
// argument; the kernel's type is fixed at compile time by the macros below, so one compile (one
// .so) holds one kernel. build.sh's table names each variant it builds:
//
//   CONV_RANK     1, 2 or 3 spatial dimensions
//   CONV_IN       float (fp32 storage, TF32 MMA) or bf16
//   CONV_OUT      float or bf16
//   CONV_TILE_M, CONV_TILE_N   CTA tile in GEMM terms (M = N·P·Q output pixels, N = Cout)
//   CONV_TILE_K   channels per filter tap and k-block (default one 128-byte row: 32 fp32, 64
//                 bf16); each tap loads a whole tile K, so a small C (3, 16) wastes MMA work
//                 on zero-filled channels unless the tile K is small too
//   CONV_CLUSTER_M             cluster size along M (filter tiles multicast), 1 or 2
//
// The SM90 conv mainloop has one schedule (KernelImplicitTmaWarpSpecializedSm90: non-persistent,
// one MMA warpgroup); the epilogue is the plain TMA warp-specialized one it pairs with.
#include <cuda_runtime.h>

#include <cstdarg>
#include <cstdio>
#include <cstring>

// CUTLASS's conv headers are not self-contained: this order (the device adapter first) compiles.
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/kernel_hardware_info.hpp"
#include "cutlass/numeric_types.h"
#include "cutlass/conv/device/conv_universal_adapter.hpp"
#include "cutlass/conv/kernel/conv_universal.hpp"
#include "cutlass/conv/collective/collective_builder.hpp"
#include "cutlass/conv/convnd_problem_shape.hpp"
#include "cutlass/epilogue/collective/collective_builder.hpp"

#if !defined(CONV_RANK) || !defined(CONV_IN) || !defined(CONV_OUT) || !defined(CONV_TILE_M) || !defined(CONV_TILE_N)
#error "define CONV_RANK, CONV_IN, CONV_OUT, CONV_TILE_M and CONV_TILE_N (see bench/conv/build.sh)"
#endif
#ifndef CONV_CLUSTER_M
#define CONV_CLUSTER_M 1
#endif

#define UCUT_EXPORT extern "C" __attribute__((visibility("default")))
#define UCUT_STR2(x) #x
#define UCUT_STR(x) UCUT_STR2(x)

namespace {

using namespace cute;
using bf16 = cutlass::bfloat16_t;

constexpr int kRank = CONV_RANK;
using ElementIn = CONV_IN;
using ElementOut = CONV_OUT;
using ElementAcc = float;

template <int R> struct LayoutOfRank;
template <> struct LayoutOfRank<1> { using type = cutlass::layout::TensorNWC; };
template <> struct LayoutOfRank<2> { using type = cutlass::layout::TensorNHWC; };
template <> struct LayoutOfRank<3> { using type = cutlass::layout::TensorNDHWC; };
using Layout = typename LayoutOfRank<kRank>::type;

// TMA moves 16-byte rows: the channel counts (C of x and w, Cout of y) must be multiples of these.
constexpr int kAlignIn = 16 / int(sizeof(ElementIn));
constexpr int kAlignOut = 16 / int(sizeof(ElementOut));
#ifdef CONV_TILE_K
constexpr int kTileK = CONV_TILE_K;
#else
constexpr int kTileK = 128 / int(sizeof(ElementIn));  // one 128-byte row: the widest swizzle
#endif

using TileShape = Shape<Int<CONV_TILE_M>, Int<CONV_TILE_N>, Shape<Int<kTileK>>>;
using ClusterShape = Shape<Int<CONV_CLUSTER_M>, _1, _1>;

using Epilogue = typename cutlass::epilogue::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, TileShape, ClusterShape,
    cutlass::epilogue::collective::EpilogueTileAuto, ElementAcc, float,
    void, Layout, kAlignOut,  // no source tensor: beta is 0
    ElementOut, Layout, kAlignOut, cutlass::epilogue::TmaWarpSpecialized>::CollectiveOp;

using Mainloop = typename cutlass::conv::collective::CollectiveBuilder<
    cutlass::arch::Sm90, cutlass::arch::OpClassTensorOp, cutlass::conv::Operator::kFprop,
    ElementIn, Layout, kAlignIn, ElementIn, Layout, kAlignIn, ElementAcc, TileShape, ClusterShape,
    cutlass::conv::collective::StageCountAutoCarveout<int(sizeof(typename Epilogue::SharedStorage))>,
    cutlass::conv::collective::KernelScheduleAuto>::CollectiveOp;

using Problem = cutlass::conv::ConvProblemShape<cutlass::conv::Operator::kFprop, kRank>;
using Kernel = cutlass::conv::kernel::ConvUniversal<Problem, Mainloop, Epilogue>;
using Conv = cutlass::conv::device::ConvUniversalAdapter<Kernel>;
using StrideD = typename Kernel::StrideD;

// The set-up kernel that ucut_conv_run launches again (one problem at a time; not thread-safe).
Conv g_conv;
bool g_ready = false;
void* g_workspace = nullptr;
size_t g_workspace_bytes = 0;

int fail(char* err, int err_len, int code, const char* fmt, ...) __attribute__((format(printf, 4, 5)));
int fail(char* err, int err_len, int code, const char* fmt, ...) {
  if (err && err_len > 0) {
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(err, size_t(err_len), fmt, ap);
    va_end(ap);
  }
  return code;
}

// dims, outermost spatial dimension first (PyTorch's order):
//   [N, C, K, x spatial[R], filter spatial[R], pad_lo[R], pad_hi[R], stride[R], dilation[R]]
struct Dims {
  int n, c, k;
  int x[3], f[3], lo[3], hi[3], stride[3], dil[3], out[3];
};

Dims read_dims(const int* d) {
  Dims r{};
  r.n = d[0], r.c = d[1], r.k = d[2];
  const int* p = d + 3;
  for (int i = 0; i < kRank; ++i) {
    r.x[i] = p[i];
    r.f[i] = p[kRank + i];
    r.lo[i] = p[2 * kRank + i];
    r.hi[i] = p[3 * kRank + i];
    r.stride[i] = p[4 * kRank + i];
    r.dil[i] = p[5 * kRank + i];
    r.out[i] = (r.x[i] + r.lo[i] + r.hi[i] - r.dil[i] * (r.f[i] - 1) - 1) / r.stride[i] + 1;
  }
  return r;
}

// The reasons can_implement would refuse, in words (CUTLASS only traces them in debug builds).
// Mirrors CollectiveConv::can_implement (sm90_implicit_gemm_gmma_ss_warpspecialized.hpp) and the
// epilogue's output alignment; can_implement itself still has the last word.
int explain_refusal(Dims const& d, char* err, int err_len) {
  if (d.c % kAlignIn) return fail(err, err_len, 1, "C=%d is not a multiple of %d (16-byte TMA rows)", d.c, kAlignIn);
  if (d.k % kAlignIn)
    return fail(err, err_len, 1, "Cout=%d is not a multiple of %d (filter rows, 16-byte TMA)", d.k, kAlignIn);
  if (d.k % kAlignOut) return fail(err, err_len, 1, "Cout=%d is not a multiple of %d (output alignment)", d.k, kAlignOut);
  const int pad_limit = kRank == 1 ? 65536 : kRank == 2 ? 256 : 16;
  const int corner = 1 << (16 / kRank - 1);        // im2col corners are signed 16/rank-bit
  const int offset_limit = (1 << (16 / kRank)) - 1;  // filter offsets are unsigned 16/rank-bit
  for (int i = 0; i < kRank; ++i) {
    if (d.lo[i] < 0 || d.hi[i] < 0 || d.lo[i] > pad_limit || d.hi[i] > pad_limit)
      return fail(err, err_len, 1, "padding (%d,%d) in dim %d is outside [0, %d] (TMA im2col)", d.lo[i], d.hi[i], i,
                  pad_limit);
    const int reach = (d.f[i] - 1) * d.dil[i];
    if (reach >= offset_limit)
      return fail(err, err_len, 1, "(k-1)*dilation=%d in dim %d is not below %d (TMA im2col offsets)", reach, i,
                  offset_limit);
    const int lower = -d.lo[i], upper = d.hi[i] - reach;
    if (lower < -corner || lower > corner - 1 || upper < -corner || upper > corner - 1)
      return fail(err, err_len, 1, "im2col corners (%d,%d) in dim %d are outside [%d, %d]", lower, upper, i, -corner,
                  corner - 1);
    if (d.out[i] <= 0) return fail(err, err_len, 1, "empty output in dim %d", i);
  }
  return 0;
}

Problem make_problem(Dims const& d) {
  typename Problem::TensorExtent act{}, flt{};
  typename Problem::SpatialExtent lo{}, hi{}, stride{}, dil{};
  act[0] = d.n;
  flt[0] = d.k;
  for (int i = 0; i < kRank; ++i) {
    act[i + 1] = d.x[i];
    flt[i + 1] = d.f[i];
    lo[i] = d.lo[i];
    hi[i] = d.hi[i];
    stride[i] = d.stride[i];
    dil[i] = d.dil[i];
  }
  act[kRank + 1] = d.c;
  flt[kRank + 1] = d.c;
  return Problem(cutlass::conv::Mode::kCrossCorrelation, act, flt, lo, hi, stride, dil, /*groups=*/1);
}

}  // namespace

UCUT_EXPORT const char* ucut_conv_describe() {
  static char text[160];
  std::snprintf(text, sizeof text, "rank=%d in=%s out=%s tile=%dx%dx%d cluster=%dx1x1", kRank, UCUT_STR(CONV_IN),
                UCUT_STR(CONV_OUT), CONV_TILE_M, CONV_TILE_N, kTileK, CONV_CLUSTER_M);
  return text;
}

UCUT_EXPORT int ucut_conv_rank() { return kRank; }

// Checks and prepares y = conv(x, w) on the current device. Returns 0, or 1 when this kernel
// cannot run the problem (err says why), 2 when CUTLASS or CUDA failed. Pointers must be
// 16-byte aligned; x is [N, spatial..., C], w [K, filter spatial..., C], y [N, out spatial..., K].
UCUT_EXPORT int ucut_conv_setup(const int* dims, const void* x, const void* w, void* y, char* err, int err_len) {
  g_ready = false;
  if (err && err_len > 0) err[0] = '\0';
  Dims d = read_dims(dims);
  if (int rc = explain_refusal(d, err, err_len)) return rc;
  Problem problem = make_problem(d);

  // The epilogue's output strides ((q, p, n...), 1, 0), taken from the problem's packed NZPQK strides.
  StrideD stride_d{};
  cute::for_each(cute::make_seq<cute::rank<0>(StrideD{})>{},
                 [&](auto i) { cute::get<0, i>(stride_d) = problem.stride_C[Problem::RankT - 2 - i]; });

  cutlass::KernelHardwareInfo hw;
  cudaGetDevice(&hw.device_id);
  hw.sm_count = cutlass::KernelHardwareInfo::query_device_multiprocessor_count(hw.device_id);

  typename Conv::Arguments args(
      problem, {static_cast<ElementIn const*>(x), static_cast<ElementIn const*>(w)},
      {{}, nullptr, stride_d, static_cast<ElementOut*>(y), stride_d}, hw);
  args.epilogue.thread.alpha = 1.0f;
  args.epilogue.thread.beta = 0.0f;

  if (g_conv.can_implement(args) != cutlass::Status::kSuccess)
    return fail(err, err_len, 1, "CUTLASS can_implement refused the problem (no reason given)");
  size_t ws = Conv::get_workspace_size(args);
  if (ws > g_workspace_bytes) {
    if (g_workspace) cudaFree(g_workspace);
    g_workspace = nullptr;
    g_workspace_bytes = 0;
    if (cudaError_t e = cudaMalloc(&g_workspace, ws); e != cudaSuccess)
      return fail(err, err_len, 2, "workspace of %zu bytes: %s", ws, cudaGetErrorString(e));
    g_workspace_bytes = ws;
  }
  cutlass::Status s = g_conv.initialize(args, g_workspace);
  if (s != cutlass::Status::kSuccess)
    return fail(err, err_len, 2, "initialize failed: %s (%s)", cutlassGetStatusString(s),
                cudaGetErrorString(cudaGetLastError()));
  g_ready = true;
  return 0;
}

// Launches the kernel that ucut_conv_setup prepared on `stream` (a cudaStream_t, or null).
UCUT_EXPORT int ucut_conv_run(void* stream, char* err, int err_len) {
  if (!g_ready) return fail(err, err_len, 2, "ucut_conv_run before a successful ucut_conv_setup");
  cutlass::Status s = g_conv.run(static_cast<cudaStream_t>(stream));
  if (s != cutlass::Status::kSuccess)
    return fail(err, err_len, 2, "run failed: %s (%s)", cutlassGetStatusString(s),
                cudaGetErrorString(cudaGetLastError()));
  return 0;
}

// Setup and run in one call: the whole entry point, for one-off use.
UCUT_EXPORT int ucut_conv_fprop(const int* dims, const void* x, const void* w, void* y, void* stream, char* err,
                                int err_len) {
  if (int rc = ucut_conv_setup(dims, x, w, y, err, err_len)) return rc;
  return ucut_conv_run(stream, err, err_len);
}
