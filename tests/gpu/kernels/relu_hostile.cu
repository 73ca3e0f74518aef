// y = relu(x), the tests/gpu/problems/relu_hostile.py problem, in hostile variants chosen by
// -DVARIANT: each one way a kernel can cheat the evaluator or break it
// (python/tests/test_hostile_gpu.py builds them and says what each must end as):
//   0 correct
//   1 writes nothing                      2 writes half (the first half of the elements)
//   3 works on a side stream: ordered after the caller's stream, never joined back into it, so
//     the caller's timing events see nothing of it
//   4 half the work after its first 12 calls (the correctness trials make 12)
//   5 half the work when its output already holds a result: reads the output's last element
//     first (a synchronous copy) and, when it is not NaN, skips the second half; each skip is a
//     line in the file $UCUT_HOSTILE_LOG names
//   6 hangs                               7 faults (illegal address)
//   8 crashes on the host (a segfault in ucut_run)
//   9 writes 1 MiB past its output        10 rounds its results to bf16
#define UCUT_TEST_WORKSPACE 0
#define UCUT_TEST_NTENSORS 2
#include "abi.cuh"

#include <cuda_bf16.h>

#include <cmath>
#include <cstdlib>

static const char* test_describe() {
  static char buf[2048];
  std::snprintf(buf, sizeof buf,
                "{\"abi\":1,\"name\":\"relu_hostile_v%d\",\"program_hash\":\"hostile%d\",\"ucutlass\":\"test\","
                "\"cutlass\":\"none\",\"arch\":\"sm_90\",\"tensors\":["
                "{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f32\",\"shape\":[%d,%d],\"index\":0},"
                "{\"name\":\"y\",\"role\":\"out\",\"dtype\":\"f32\",\"shape\":[%d,%d],\"index\":0}],"
                "\"scalars\":[],\"stages\":[{\"name\":\"s0\",\"kind\":\"elementwise\",\"config\":\"hostile_%d\"}]}",
                VARIANT, VARIANT, ROWS, COLS, ROWS, COLS, VARIANT);
  return buf;
}

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, long long n, int to_bf16) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  float v = fmaxf(x[i], 0.0f);
  if (to_bf16) v = __bfloat162float(__float2bfloat16(v));
  y[i] = v;
}

__global__ void fill(float* p, long long n, float v) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) p[i] = v;
}

__global__ void bad_address(const float* y) {
  reinterpret_cast<float*>(0xdead00000ull)[threadIdx.x] = y[threadIdx.x];
}

__global__ void spin() {
  long long start = clock64();
  while (clock64() - start < (1ll << 62)) {
  }
}

static void relu(const float* x, float* y, long long n, cudaStream_t st, int to_bf16 = 0) {
  if (n <= 0) return;
  const int threads = 256;
  relu_kernel<<<static_cast<unsigned>((n + threads - 1) / threads), threads, 0, st>>>(x, y, n, to_bf16);
}

static int test_run(void* const* t, const double*, void*, cudaStream_t st) {
  const float* x = static_cast<const float*>(t[0]);
  float* y = static_cast<float*>(t[1]);
  const long long n = static_cast<long long>(ROWS) * COLS;
  static unsigned calls = 0;
  ++calls;
  switch (VARIANT) {
    case 1:
      return 0;
    case 2:
      relu(x, y, n / 2, st);
      return 0;
    case 3: {
      static cudaStream_t side = nullptr;
      static cudaEvent_t ready = nullptr;
      if (!side) {
        cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
        cudaEventCreateWithFlags(&ready, cudaEventDisableTiming);
      }
      cudaEventRecord(ready, st);
      cudaStreamWaitEvent(side, ready, 0);
      relu(x, y, n, side);
      return 0;
    }
    case 4:
      relu(x, y, calls <= 12 ? n : n / 2, st);
      return 0;
    case 5: {
      float last = 0.0f;
      cudaMemcpyAsync(&last, y + n - 1, sizeof last, cudaMemcpyDeviceToHost, st);
      cudaStreamSynchronize(st);
      if (!std::isnan(last)) {
        if (const char* log = std::getenv("UCUT_HOSTILE_LOG")) {
          if (FILE* f = std::fopen(log, "a")) {
            std::fprintf(f, "call %u: the output already holds a result, half the work\n", calls);
            std::fclose(f);
          }
        }
        relu(x, y, n / 2, st);
        return 0;
      }
      relu(x, y, n, st);
      return 0;
    }
    case 6:
      spin<<<1, 1, 0, st>>>();
      return 0;
    case 7:
      bad_address<<<1, 32, 0, st>>>(y);
      return 0;
    case 8:
      *static_cast<volatile int*>(nullptr) = static_cast<int>(calls);  // a host crash
      return 0;
    case 9: {
      relu(x, y, n, st);
      const long long past = (1ll << 20) / sizeof(float);  // 1 MiB past its end
      fill<<<static_cast<unsigned>((past + 255) / 256), 256, 0, st>>>(y + n, past, 0.0f);
      return 0;
    }
    case 10:
      relu(x, y, n, st, 1);
      return 0;
    default:
      relu(x, y, n, st);
      return 0;
  }
}
