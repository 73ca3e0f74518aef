// f32x3w_bench: accuracy and speed of fp32-faithful GEMMs on Hopper, as one standalone program.
//
// The problem is C = A * B^T with A (M x K) and B (N x K) both row-major fp32: the "TN" layout of
// nn.Linear (x @ W^T). For each shape and input kind the program computes a float64 reference on the
// GPU, then for each kernel variant checks its output against it and times it the way the proof
// tables do (L2 flushed before every repetition, CUDA events, median).
//
// Variants:
//   f32_simt_ref  our own fp32 SIMT GEMM, one FMA chain per output in K order: roughly what
//                 PyTorch's fp32 default (cuBLAS SGEMM) computes, so its row shows how far an
//                 "exact" fp32 GEMM itself is from float64 on these inputs;
//   tf32_sm80     CUTLASS 2.x SM80 TF32 GEMM (mma.sync on Hopper): fast, not fp32-faithful;
//   f32x3_sm80    CUTLASS 2.x SM80 3xTF32 GEMM (OpMultiplyAddFastF32): the fp32-faithful baseline;
//   and every variant that f32x3w.cuh lists (f32x3w_stub.cuh until the real header is built in).
//
// Metrics, all against the float64 reference R:
//   max abs err    max |C - R|;
//   margin@1e-4    max |C - R| / (1e-4 + 1e-4 |R|): <= 1 passes allclose(atol = rtol = 1e-4);
//   rel Frobenius  ||C - R||_F / ||R||_F.
// Output: a markdown table on stdout (progress and diagnostics on stderr), and the same rows as
// JSON lines with --json PATH (torch_rows.py writes PyTorch's rows in the same format).
//
// A variant that returns an error or writes NaN is reported as such and the others still run. A
// sticky CUDA error (an illegal address, say) or a call still running after --timeout seconds (a
// deadlock) leaves the context unusable: the program then reports that row and exits with status 3.
// run.sh runs each variant in its own process for that.
// Exit status: 0 when every row was printed (whatever the rows say), 1 on a fatal harness error,
// 2 on a bad command line, 3 when a variant broke the CUDA context.

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "cutlass/cutlass.h"
#include "cutlass/epilogue/thread/linear_combination.h"
#include "cutlass/gemm/device/gemm.h"

#ifdef UCUT_F32X3W_REAL
#include "f32x3w.cuh"
#else
#include "f32x3w_stub.cuh"
#endif

namespace {

using RunFn = cudaError_t (*)(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s);

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// Waits on variants' work have a deadline (--timeout): a new kernel that deadlocks (a pipeline
// barrier that never completes, say) would otherwise hang the whole run with nothing reported.
// cudaErrorTimeout then means the work is still running and the context cannot be used again.
double g_timeout_s = 60.0;

template <typename Query>
cudaError_t wait_until_done(Query query) {
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const cudaError_t e = query();
    if (e != cudaErrorNotReady) return e;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > g_timeout_s)
      return cudaErrorTimeout;
    std::this_thread::sleep_for(std::chrono::microseconds(20));  // host side only: events time the GPU
  }
}
cudaError_t wait_stream(cudaStream_t s) { return wait_until_done([s] { return cudaStreamQuery(s); }); }
cudaError_t wait_event(cudaEvent_t ev) { return wait_until_done([ev] { return cudaEventQuery(ev); }); }

// ------------------------------------------------------------------------------------------------
// Inputs: a counter-based hash, so that any element can be generated independently and the same
// inputs can be rebuilt elsewhere. torch_rows.py repeats this bit for bit, so PyTorch's rows are
// measured on exactly the same matrices (the rows' ref_fro fields agree when it does).

// Chris Wellons' "lowbias32" integer hash: cheap and well mixed.
__host__ __device__ inline uint32_t lowbias32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Element i of the stream keyed by `key` (key = lowbias32(seed)): uniform on [0, 1) with 24
// random bits, so that every value, and 2u - 1 and 4u - 2 below, is exact in fp32.
__host__ __device__ inline float hash_uniform(uint64_t i, uint32_t key) {
  const uint32_t h = lowbias32(static_cast<uint32_t>(i) ^ lowbias32(static_cast<uint32_t>(i >> 32) + key));
  return static_cast<float>(h >> 8) * 0x1p-24f;
}

enum class Dist : int {
  unit,       // U[0, 1)
  symmetric,  // U(-scale, scale): PyTorch's nn.Linear weight init with scale = 1/sqrt(fan_in)
  mixed,      // U[-2, 2): signs mixed, so sums cancel and relative errors grow
};

// out[c][r] = in[r][c] for an R x C row-major `in`: the [K, M] / [K, N] copies of the operands
// that variants reading A M-major or B N-major take (Variant::layout), made once per input.
__global__ void transpose_kernel(const float* in, float* out, int R, int C) {
  __shared__ float tile[32][33];
  const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int r = r0 + i, c = c0 + threadIdx.x;
    if (r < R && c < C) tile[i][threadIdx.x] = in[size_t(r) * C + c];
  }
  __syncthreads();
  for (int i = threadIdx.y; i < 32; i += blockDim.y) {
    const int c = c0 + i, r = r0 + threadIdx.x;
    if (r < R && c < C) out[size_t(c) * R + r] = tile[threadIdx.x][i];
  }
}

cudaError_t transpose(const float* in, float* out, int R, int C, cudaStream_t s) {
  transpose_kernel<<<dim3(ceil_div(C, 32), ceil_div(R, 32)), dim3(32, 8), 0, s>>>(in, out, R, C);
  return cudaGetLastError();
}

__global__ void fill_kernel(float* p, size_t n, uint32_t key, Dist dist, float scale) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float u = hash_uniform(i, key);
    // Only the multiply by `scale` rounds; torch_rows.py does the same float32 operations.
    p[i] = dist == Dist::unit ? u : dist == Dist::symmetric ? (2.0f * u - 1.0f) * scale : 4.0f * u - 2.0f;
  }
}

struct Kind {
  const char* name;
  Dist a, b;
};
// "linear": x ~ U[0,1) and W ~ U(-1/sqrt(K), 1/sqrt(K)), the research note's Linear problem whose
// outputs are O(1), where plain TF32 fails the 1e-4 check.
constexpr Kind kKinds[] = {
    {"unit", Dist::unit, Dist::unit}, {"linear", Dist::unit, Dist::symmetric}, {"mixed", Dist::mixed, Dist::mixed}};
// The same two streams feed every kind (the kinds transform them differently).
constexpr uint32_t kSeedA = 1, kSeedB = 2;

cudaError_t fill(float* p, size_t n, uint32_t seed, Dist dist, float scale, cudaStream_t s) {
  fill_kernel<<<2048, 256, 0, s>>>(p, n, lowbias32(seed), dist, scale);
  return cudaGetLastError();
}

// ------------------------------------------------------------------------------------------------
// Reference GEMMs: one shared-memory tiled kernel, instantiated in float64 (the reference every
// variant is checked against) and in fp32 (the f32_simt_ref variant). Each thread owns TM x TN
// outputs at a stride of the thread grid (so that shared-memory reads are broadcasts or
// consecutive) and accumulates each of them in one FMA chain in K order, from zero.

template <typename T>
__device__ inline T fma_rn(T a, T b, T c);
template <>
__device__ inline float fma_rn<float>(float a, float b, float c) { return __fmaf_rn(a, b, c); }
template <>
__device__ inline double fma_rn<double>(double a, double b, double c) { return __fma_rn(a, b, c); }

template <typename T, int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__((BM / TM) * (BN / TN))
    ref_gemm_tn(int M, int N, int K, const float* __restrict__ A, const float* __restrict__ B, T* __restrict__ C) {
  constexpr int TX = BN / TN, TY = BM / TM, NT = TX * TY;
  constexpr int PAD = 4;  // spreads the transposing stores below over the banks
  __shared__ T As[BK][BM + PAD];
  __shared__ T Bs[BK][BN + PAD];
  const int tid = threadIdx.x, tx = tid % TX, ty = tid / TX;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  T acc[TM][TN] = {};

  for (int k0 = 0; k0 < K; k0 += BK) {
    // Both tiles are K-contiguous in memory; store them K-major so the inner loop reads rows.
    // Out-of-range elements are zero: they only pad the end of each chain (acc + 0*0 = acc).
    for (int e = tid; e < BM * BK; e += NT) {
      const int r = e / BK, kk = e % BK, gm = m0 + r, gk = k0 + kk;
      As[kk][r] = (gm < M && gk < K) ? T(A[size_t(gm) * K + gk]) : T(0);
    }
    for (int e = tid; e < BN * BK; e += NT) {
      const int r = e / BK, kk = e % BK, gn = n0 + r, gk = k0 + kk;
      Bs[kk][r] = (gn < N && gk < K) ? T(B[size_t(gn) * K + gk]) : T(0);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      T a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[kk][ty + i * TY];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[kk][tx + j * TX];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fma_rn(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      const int m = m0 + ty + i * TY, n = n0 + tx + j * TX;
      if (m < M && n < N) C[size_t(m) * N + n] = acc[i][j];
    }
}

// float64: products of two fp32 values are exact in float64, so the only error is the float64
// accumulation (about K * 2^-53 relative), far below anything measured here.
cudaError_t run_f64_reference(int M, int N, int K, const float* A, const float* B, double* R, cudaStream_t s) {
  dim3 grid(ceil_div(N, 64), ceil_div(M, 64));
  ref_gemm_tn<double, 64, 64, 16, 4, 4><<<grid, 256, 0, s>>>(M, N, K, A, B, R);
  return cudaGetLastError();
}

cudaError_t run_f32_simt_ref(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  dim3 grid(ceil_div(N, 128), ceil_div(M, 128));
  ref_gemm_tn<float, 128, 128, 8, 8, 8><<<grid, 256, 0, s>>>(M, N, K, A, B, C);
  return cudaGetLastError();
}

// ------------------------------------------------------------------------------------------------
// CUTLASS 2.x SM80-API tensor-core GEMMs, which run on Hopper through mma.sync. The configuration
// is the tile the fp32-faithful ladder measured best for 3xTF32 on mma.sync (~73 TFLOP/s on Hopper):
// threadblock 128x128x32, warp 32x64x32 (8 warps; 64x64 warp tiles spill registers and run at half
// speed), mma 16x8x8, 3 stages. B stored N x K row-major is the K x N column-major operand CUTLASS
// expects, so the layouts are A row-major, B column-major, C row-major.
template <typename MathOperator>
using Sm80Gemm = cutlass::gemm::device::Gemm<
    float, cutlass::layout::RowMajor,     // A: M x K, K contiguous
    float, cutlass::layout::ColumnMajor,  // B: K x N column-major (= N x K row-major)
    float, cutlass::layout::RowMajor,     // C and D: M x N
    float,                                // accumulator
    cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<128, 128, 32>,  // threadblock tile
    cutlass::gemm::GemmShape<32, 64, 32>,    // warp tile
    cutlass::gemm::GemmShape<16, 8, 8>,      // TF32 mma.sync
    cutlass::epilogue::thread::LinearCombination<float, 4, float, float>,  // 128-bit stores of C
    cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<>,
    3,      // pipeline stages
    4, 4,   // A and B alignment in elements (16-byte cp.async): K % 4 == 0
    false,  // no serial split-K
    MathOperator>;
// OpMultiplyAdd on float operands: each operand rounded to TF32, one MMA.
using Tf32Sm80 = Sm80Gemm<cutlass::arch::OpMultiplyAdd>;
// OpMultiplyAddFastF32: each operand split into TF32 big + small parts, three MMAs
// (big*big + big*small + small*big) into the one fp32 accumulator.
using F32x3Sm80 = Sm80Gemm<cutlass::arch::OpMultiplyAddFastF32>;

template <typename Gemm>
cudaError_t run_cutlass_sm80(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s) {
  // beta = 0: the epilogue does not read C (it may hold the harness's NaN poison)
  typename Gemm::Arguments args({M, N, K}, {A, K}, {B, K}, {C, N}, {C, N}, {1.0f, 0.0f});
  cutlass::Status st = Gemm::can_implement(args);
  if (st != cutlass::Status::kSuccess) {
    std::fprintf(stderr, "  cutlass: can_implement(%d x %d x %d): %s\n", M, N, K, cutlassGetStatusString(st));
    return cudaErrorNotSupported;
  }
  Gemm gemm;
  st = gemm.initialize(args, nullptr, s);
  if (st == cutlass::Status::kSuccess) st = gemm.run(s);
  if (st != cutlass::Status::kSuccess) {
    std::fprintf(stderr, "  cutlass: %s\n", cutlassGetStatusString(st));
    // run() has already read (and so cleared) the launch error, if that is what failed
    return cudaErrorUnknown;
  }
  return cudaSuccess;
}

// ------------------------------------------------------------------------------------------------
// Error metrics: one pass over C and R; each block reduces its share into one partial, the host
// adds the partials in a fixed order (so the numbers are the same run to run).

struct ErrorStats {
  double max_abs, max_margin, sum_sq_err, sum_sq_ref;
  unsigned long long nonfinite;  // NaN or Inf in C: reported instead of the metrics
};

__host__ __device__ inline void clear(ErrorStats& s) {
  s.max_abs = s.max_margin = s.sum_sq_err = s.sum_sq_ref = 0.0;
  s.nonfinite = 0;
}

__host__ __device__ inline void merge(ErrorStats& s, const ErrorStats& o) {
  s.max_abs = fmax(s.max_abs, o.max_abs);
  s.max_margin = fmax(s.max_margin, o.max_margin);
  s.sum_sq_err += o.sum_sq_err;
  s.sum_sq_ref += o.sum_sq_ref;
  s.nonfinite += o.nonfinite;
}

constexpr int kErrThreads = 256, kErrBlocks = 1024;

__global__ void __launch_bounds__(kErrThreads)
    error_kernel(const float* __restrict__ C, const double* __restrict__ R, size_t n, ErrorStats* partial) {
  ErrorStats s;
  clear(s);
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const double c = C[i], r = R[i];
    s.sum_sq_ref += r * r;
    if (!isfinite(c)) {
      ++s.nonfinite;
      continue;
    }
    const double e = fabs(c - r);
    s.max_abs = fmax(s.max_abs, e);
    s.max_margin = fmax(s.max_margin, e / (1e-4 + 1e-4 * fabs(r)));
    s.sum_sq_err += e * e;
  }
  __shared__ ErrorStats sh[kErrThreads];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int w = kErrThreads / 2; w > 0; w /= 2) {
    if (int(threadIdx.x) < w) merge(sh[threadIdx.x], sh[threadIdx.x + w]);
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

cudaError_t measure_error(const float* C, const double* R, size_t n, ErrorStats* d_partial, cudaStream_t s,
                          ErrorStats* out) {
  error_kernel<<<kErrBlocks, kErrThreads, 0, s>>>(C, R, n, d_partial);
  cudaError_t e = cudaGetLastError();
  std::vector<ErrorStats> h(kErrBlocks);
  if (e == cudaSuccess)
    e = cudaMemcpyAsync(h.data(), d_partial, sizeof(ErrorStats) * kErrBlocks, cudaMemcpyDeviceToHost, s);
  if (e == cudaSuccess) e = wait_stream(s);
  if (e != cudaSuccess) return e;
  clear(*out);
  for (const ErrorStats& p : h) merge(*out, p);
  return cudaSuccess;
}

// ------------------------------------------------------------------------------------------------
// Timing: before every call (warm-up or measured) a 256 MiB memset evicts the L2 (50-60 MB on
// Hopper), so the inputs come from HBM as in a cold model step; only the GEMM is between the
// events.

struct Timing {
  cudaError_t err = cudaSuccess;
  double median_ms = NAN, min_ms = NAN, max_ms = NAN;
};

struct Problem {
  int M, N, K;
  const float *A, *B;
  float* C;
};

Timing time_variant(RunFn run, const Problem& p, void* flush, size_t flush_bytes, int warmup, int reps,
                    cudaStream_t s) {
  Timing t;
  cudaEvent_t start, stop;
  if ((t.err = cudaEventCreate(&start)) != cudaSuccess) return t;
  if ((t.err = cudaEventCreate(&stop)) != cudaSuccess) {
    cudaEventDestroy(start);
    return t;
  }
  std::vector<double> ms;
  for (int i = 0; i < warmup + reps && t.err == cudaSuccess; ++i) {
    t.err = cudaMemsetAsync(flush, i & 0xff, flush_bytes, s);
    if (t.err == cudaSuccess) t.err = cudaEventRecord(start, s);
    if (t.err == cudaSuccess) t.err = run(p.M, p.N, p.K, p.A, p.B, p.C, s);
    if (t.err == cudaSuccess) t.err = cudaEventRecord(stop, s);
    if (t.err == cudaSuccess) t.err = wait_event(stop);
    float e = 0.f;
    if (t.err == cudaSuccess) t.err = cudaEventElapsedTime(&e, start, stop);
    if (t.err == cudaSuccess && i >= warmup) ms.push_back(e);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (t.err == cudaSuccess && !ms.empty()) {
    std::sort(ms.begin(), ms.end());
    const size_t h = ms.size() / 2;
    t.median_ms = ms.size() % 2 ? ms[h] : 0.5 * (ms[h - 1] + ms[h]);
    t.min_ms = ms.front();
    t.max_ms = ms.back();
  }
  return t;
}

// ------------------------------------------------------------------------------------------------
// Rows: the markdown table and the JSON lines.

struct Row {
  std::string variant, shape, kind, status;
  int M = 0, N = 0, K = 0;
  bool pass = false;
  double ms = NAN, ms_min = NAN, ms_max = NAN, tflops = NAN;
  double max_abs = NAN, margin = NAN, rel_fro = NAN, ref_fro = NAN;
  unsigned long long nonfinite = 0;
};

const char* kTableHeader =
    "| variant | shape | kind | ms | TFLOP/s | max abs err | margin@1e-4 | rel Frobenius | status |\n"
    "|---|---|---|---:|---:|---:|---:|---:|---|\n";

std::string fmt(const char* f, double v) {
  if (!std::isfinite(v)) return "-";
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string json_number(double v) { return std::isfinite(v) ? fmt("%.9g", v) : "null"; }

std::string json_string(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) c = ' ';
    o += c;
  }
  return o + "\"";
}

void print_row(const Row& r, FILE* json, const std::string& device, int warmup, int reps) {
  std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", r.variant.c_str(), r.shape.c_str(), r.kind.c_str(),
              fmt("%.3f", r.ms).c_str(), fmt("%.1f", r.tflops).c_str(), fmt("%.2e", r.max_abs).c_str(),
              fmt("%.3f", r.margin).c_str(), fmt("%.2e", r.rel_fro).c_str(), r.status.c_str());
  std::fflush(stdout);  // rows printed so far survive a crash in a later variant
  if (!json) return;
  std::fprintf(json,
               "{\"variant\": %s, \"shape\": %s, \"M\": %d, \"N\": %d, \"K\": %d, \"kind\": %s, \"ms\": %s, "
               "\"ms_min\": %s, \"ms_max\": %s, \"tflops\": %s, \"max_abs_err\": %s, \"margin\": %s, \"rel_fro\": %s, "
               "\"ref_fro\": %s, \"nonfinite\": %llu, \"status\": %s, \"pass\": %s, \"device\": %s, "
               "\"warmup\": %d, \"reps\": %d, \"source\": \"f32x3w_bench\"}\n",
               json_string(r.variant).c_str(), json_string(r.shape).c_str(), r.M, r.N, r.K,
               json_string(r.kind).c_str(), json_number(r.ms).c_str(), json_number(r.ms_min).c_str(),
               json_number(r.ms_max).c_str(), json_number(r.tflops).c_str(), json_number(r.max_abs).c_str(),
               json_number(r.margin).c_str(), json_number(r.rel_fro).c_str(), json_number(r.ref_fro).c_str(),
               r.nonfinite, json_string(r.status).c_str(), r.pass ? "true" : "false", json_string(device).c_str(),
               warmup, reps);
  std::fflush(json);
}

// ------------------------------------------------------------------------------------------------
// Command line.

struct Shape {
  int M, N, K;
  std::string name() const { return std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K); }
};

struct Options {
  std::vector<Shape> shapes;
  std::vector<const Kind*> kinds;
  std::vector<std::string> variants;  // empty: all
  int reps = 20, warmup = 3;
  double timeout_s = 60.0;
  std::string json;
  bool list = false;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  while (b <= s.size()) {
    size_t e = s.find(sep, b);
    if (e == std::string::npos) e = s.size();
    if (e > b) out.push_back(s.substr(b, e - b));
    b = e + 1;
  }
  return out;
}

bool parse_shape(const std::string& s, Shape* out) {
  long v[3];
  const char* p = s.c_str();
  for (int i = 0; i < 3; ++i) {
    char* end = nullptr;
    v[i] = std::strtol(p, &end, 10);
    if (end == p || v[i] <= 0 || v[i] > (1L << 30)) return false;
    p = end;
    if (i < 2) {
      if (*p != 'x' && *p != 'X') return false;
      ++p;
    }
  }
  if (*p) return false;
  *out = {int(v[0]), int(v[1]), int(v[2])};
  return true;
}

[[noreturn]] void usage(int rc) {
  std::fprintf(rc ? stderr : stdout,
               "usage: f32x3w_bench [--shapes MxNxK,...] [--kinds unit,linear,mixed] [--variants NAME,...]\n"
               "                    [--reps N] [--warmup N] [--timeout SECONDS] [--json PATH] [--list]\n"
               "  C = A * B^T, A M x K and B N x K row-major fp32. Defaults: shapes\n"
               "  4096x4096x4096,1024x8192x8192,128x32768x32768,2048x4096x8192, all kinds, all variants,\n"
               "  20 repetitions after 3 warm-ups, 60 s before a variant's call counts as hung.\n"
               "  --list prints the (filtered) variant names and exits.\n");
  std::exit(rc);
}

Options parse(int argc, char** argv) {
  Options o;
  std::string shapes = "4096x4096x4096,1024x8192x8192,128x32768x32768,2048x4096x8192";
  std::string kinds = "unit,linear,mixed";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], v;
    const size_t eq = a.find('=');
    const bool has_eq = a.rfind("--", 0) == 0 && eq != std::string::npos;
    if (has_eq) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    auto value = [&]() -> std::string {
      if (has_eq) return v;
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        usage(2);
      }
      return argv[++i];
    };
    auto count = [&](const std::string& s, int lo) {
      char* end = nullptr;
      const long n = std::strtol(s.c_str(), &end, 10);
      if (end == s.c_str() || *end || n < lo || n > 100000) {
        std::fprintf(stderr, "%s: bad count '%s'\n", a.c_str(), s.c_str());
        usage(2);
      }
      return int(n);
    };
    if (a == "--shapes") shapes = value();
    else if (a == "--kinds") kinds = value();
    else if (a == "--variants") o.variants = split(value(), ',');
    else if (a == "--reps") o.reps = count(value(), 1);
    else if (a == "--warmup") o.warmup = count(value(), 0);
    else if (a == "--json") o.json = value();
    else if (a == "--timeout") o.timeout_s = count(value(), 1);
    else if (a == "--list") o.list = true;
    else if (a == "-h" || a == "--help") usage(0);
    else {
      std::fprintf(stderr, "unknown argument '%s'\n", argv[i]);
      usage(2);
    }
  }
  for (const std::string& s : split(shapes, ',')) {
    Shape sh;
    if (!parse_shape(s, &sh)) {
      std::fprintf(stderr, "bad shape '%s' (want MxNxK)\n", s.c_str());
      usage(2);
    }
    o.shapes.push_back(sh);
  }
  for (const std::string& k : split(kinds, ',')) {
    const Kind* found = nullptr;
    for (const Kind& kk : kKinds)
      if (k == kk.name) found = &kk;
    if (!found) {
      std::fprintf(stderr, "unknown kind '%s' (unit, linear, mixed)\n", k.c_str());
      usage(2);
    }
    o.kinds.push_back(found);
  }
  if (o.shapes.empty() || o.kinds.empty()) usage(2);
  return o;
}

// ------------------------------------------------------------------------------------------------

struct Variant {
  std::string name;
  RunFn run;
  int layout = 0;  // bit 0: A passed as [K, M]; bit 1: B passed as [K, N] (f32x3w::Variant)
};

std::vector<Variant> all_variants() {
  std::vector<Variant> v = {{"f32_simt_ref", &run_f32_simt_ref},
                            {"tf32_sm80", &run_cutlass_sm80<Tf32Sm80>},
                            {"f32x3_sm80", &run_cutlass_sm80<F32x3Sm80>}};
  int n = 0;
  const f32x3w::Variant* list = f32x3w::variants(&n);
  for (int i = 0; i < n; ++i) v.push_back({list[i].name, list[i].run, list[i].layout});
  return v;
}

// After a failure: is the context still usable? Not after a timeout (the work is still running);
// otherwise clear a launch error that does not poison the context and check that the device still
// works (a sticky error, such as an illegal address, keeps failing every call).
bool context_lost_after(cudaError_t e) {
  if (e == cudaErrorTimeout) return true;
  cudaGetLastError();
  return cudaDeviceSynchronize() != cudaSuccess || cudaGetLastError() != cudaSuccess;
}

std::string error_status(const char* what, cudaError_t e) {
  if (e == cudaErrorTimeout)
    return std::string(what) + "(timeout: still running after " + fmt("%g", g_timeout_s) + " s)";
  return std::string(what) + "(" + cudaGetErrorName(e) + ")";
}

// Everything one (shape, kind) needs on the device.
struct Buffers {
  float *A = nullptr, *B = nullptr, *C = nullptr;
  float *At = nullptr, *Bt = nullptr;  // A as [K, M], B as [K, N], where a variant's layout asks
  double* R = nullptr;
};

// Check one variant on the current inputs and time it. Sets *context_lost when the variant left a
// sticky error behind or did not finish in time (no more CUDA work is possible in this process).
Row evaluate(const Variant& v, const Shape& sh, const Kind& kind, const Buffers& b, ErrorStats* d_partial,
             void* flush, size_t flush_bytes, const Options& o, cudaStream_t s, bool* context_lost) {
  Row r;
  r.variant = v.name;
  r.shape = sh.name();
  r.kind = kind.name;
  r.M = sh.M;
  r.N = sh.N;
  r.K = sh.K;
  const size_t nc = size_t(sh.M) * sh.N;
  const Problem p{sh.M, sh.N, sh.K, (v.layout & 1) ? b.At : b.A, (v.layout & 2) ? b.Bt : b.B, b.C};
  cudaGetLastError();

  // Poison C with NaN (all-ones bytes): an output element the kernel never writes shows up.
  cudaError_t e = cudaMemsetAsync(b.C, 0xff, nc * sizeof(float), s);
  if (e == cudaSuccess) e = v.run(p.M, p.N, p.K, p.A, p.B, p.C, s);
  if (e == cudaSuccess) e = wait_stream(s);
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e != cudaSuccess) {
    r.status = error_status("ERROR", e);
    *context_lost = context_lost_after(e);
    return r;
  }
  ErrorStats st;
  if ((e = measure_error(b.C, b.R, nc, d_partial, s, &st)) != cudaSuccess) {
    r.status = error_status("ERROR in check", e);
    *context_lost = context_lost_after(e);
    return r;
  }
  r.ref_fro = std::sqrt(st.sum_sq_ref);
  r.nonfinite = st.nonfinite;
  if (st.nonfinite == 0) {
    r.max_abs = st.max_abs;
    r.margin = st.max_margin;
    r.rel_fro = st.sum_sq_ref > 0 ? std::sqrt(st.sum_sq_err / st.sum_sq_ref) : NAN;
    r.pass = r.margin <= 1.0;
    r.status = r.pass ? "PASS" : "FAIL";
  } else {
    r.status = "NaN(" + std::to_string(st.nonfinite) + " non-finite)";
  }

  // Timed even when wrong: a fast wrong kernel's time is still worth seeing.
  const Timing t = time_variant(v.run, p, flush, flush_bytes, o.warmup, o.reps, s);
  if (t.err != cudaSuccess) {
    r.status += " " + error_status("ERROR in timing", t.err);
    r.pass = false;
    *context_lost = context_lost_after(t.err);
    return r;
  }
  r.ms = t.median_ms;
  r.ms_min = t.min_ms;
  r.ms_max = t.max_ms;
  r.tflops = 2.0 * sh.M * double(sh.N) * sh.K / (t.median_ms * 1e-3) / 1e12;

  // The output of the last timed call must match the first: a data race or an uninitialized read
  // shows up here even when both happen to pass.
  ErrorStats again;
  if ((e = measure_error(b.C, b.R, nc, d_partial, s, &again)) != cudaSuccess) {
    r.status += " " + error_status("ERROR in re-check", e);
    r.pass = false;
    *context_lost = context_lost_after(e);
    return r;
  }
  if (again.nonfinite != st.nonfinite || again.max_abs != st.max_abs || again.sum_sq_err != st.sum_sq_err) {
    char buf[128];
    std::snprintf(buf, sizeof buf, " NONDETERMINISTIC(after timing: max abs err %.2e, %llu non-finite)",
                  again.max_abs, again.nonfinite);
    r.status += buf;
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  g_timeout_s = o.timeout_s;

  std::vector<Variant> variants;
  {
    const std::vector<Variant> all = all_variants();
    if (o.variants.empty()) variants = all;
    for (const std::string& name : o.variants) {
      auto it = std::find_if(all.begin(), all.end(), [&](const Variant& v) { return v.name == name; });
      if (it == all.end()) {
        std::fprintf(stderr, "unknown variant '%s'; available:", name.c_str());
        for (const Variant& v : all) std::fprintf(stderr, " %s", v.name.c_str());
        std::fprintf(stderr, "\n");
        return 2;
      }
      variants.push_back(*it);
    }
  }
  if (o.list) {
    for (const Variant& v : variants) std::printf("%s\n", v.name.c_str());
    return 0;
  }

  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      std::fprintf(stderr, "fatal: %s: %s\n", what, cudaGetErrorString(e));
      std::exit(1);
    }
  };
  int dev = 0;
  cudaDeviceProp prop;
  check(cudaGetDevice(&dev), "cudaGetDevice");
  check(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  const std::string device = prop.name;
  std::fprintf(stderr, "device: %s (sm_%d%d, %d SMs, %.0f GiB), %d warm-ups, median of %d\n", prop.name, prop.major,
               prop.minor, prop.multiProcessorCount, prop.totalGlobalMem / 1073741824.0, o.warmup, o.reps);

  FILE* json = nullptr;
  if (!o.json.empty() && !(json = std::fopen(o.json.c_str(), "w"))) {
    std::fprintf(stderr, "fatal: cannot write %s\n", o.json.c_str());
    return 1;
  }

  cudaStream_t s;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
  const size_t flush_bytes = size_t(256) << 20;
  void* flush = nullptr;
  check(cudaMalloc(&flush, flush_bytes), "cudaMalloc(L2 flush buffer)");
  ErrorStats* d_partial = nullptr;
  check(cudaMalloc(&d_partial, sizeof(ErrorStats) * kErrBlocks), "cudaMalloc(error partials)");

  std::printf("%s", kTableHeader);
  for (const Shape& sh : o.shapes) {
    const size_t na = size_t(sh.M) * sh.K, nb = size_t(sh.N) * sh.K, nc = size_t(sh.M) * sh.N;
    Buffers b;
    cudaError_t e = cudaMalloc(&b.A, na * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&b.B, nb * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&b.C, nc * sizeof(float));
    if (e == cudaSuccess) e = cudaMalloc(&b.R, nc * sizeof(double));
    int layouts = 0;
    for (const Variant& v : variants) layouts |= v.layout;
    if (e == cudaSuccess && (layouts & 1)) e = cudaMalloc(&b.At, na * sizeof(float));
    if (e == cudaSuccess && (layouts & 2)) e = cudaMalloc(&b.Bt, nb * sizeof(float));
    if (e != cudaSuccess) {
      // Too big for this GPU: say so for every row of the shape and go on with the next one.
      cudaGetLastError();
      for (const Kind* k : o.kinds)
        for (const Variant& v : variants) {
          Row r;
          r.variant = v.name;
          r.shape = sh.name();
          r.kind = k->name;
          r.M = sh.M;
          r.N = sh.N;
          r.K = sh.K;
          r.status = error_status("SKIPPED", e);
          print_row(r, json, device, o.warmup, o.reps);
        }
    } else {
      for (const Kind* k : o.kinds) {
        const float scale = float(1.0 / std::sqrt(double(sh.K)));  // nn.Linear's bound for fan_in K
        check(fill(b.A, na, kSeedA, k->a, scale, s), "fill A");
        check(fill(b.B, nb, kSeedB, k->b, scale, s), "fill B");
        if (b.At) check(transpose(b.A, b.At, sh.M, sh.K, s), "transpose A");
        if (b.Bt) check(transpose(b.B, b.Bt, sh.N, sh.K, s), "transpose B");
        cudaEvent_t t0, t1;
        check(cudaEventCreate(&t0), "cudaEventCreate");
        check(cudaEventCreate(&t1), "cudaEventCreate");
        check(cudaEventRecord(t0, s), "cudaEventRecord");
        check(run_f64_reference(sh.M, sh.N, sh.K, b.A, b.B, b.R, s), "float64 reference");
        check(cudaEventRecord(t1, s), "cudaEventRecord");
        check(cudaStreamSynchronize(s), "inputs and float64 reference");
        float ref_ms = 0.f;
        check(cudaEventElapsedTime(&ref_ms, t0, t1), "cudaEventElapsedTime");
        cudaEventDestroy(t0);
        cudaEventDestroy(t1);
        std::fprintf(stderr, "%s %s: float64 reference in %.1f ms\n", sh.name().c_str(), k->name, ref_ms);

        for (const Variant& v : variants) {
          bool lost = false;
          const Row r = evaluate(v, sh, *k, b, d_partial, flush, flush_bytes, o, s, &lost);
          print_row(r, json, device, o.warmup, o.reps);
          if (lost) {
            // _Exit: no atexit teardown of a context that may still be running the variant's kernel
            std::fprintf(stderr, "fatal: %s left the CUDA context unusable (sticky error or still running); stopping\n",
                         v.name.c_str());
            std::fflush(stdout);
            if (json) std::fclose(json);
            std::_Exit(3);
          }
        }
      }
    }
    cudaFree(b.A);
    cudaFree(b.B);
    cudaFree(b.C);
    cudaFree(b.R);
    cudaFree(b.At);
    cudaFree(b.Bt);
  }
  if (json) std::fclose(json);
  cudaFree(d_partial);
  cudaFree(flush);
  cudaStreamDestroy(s);
  return 0;
}
