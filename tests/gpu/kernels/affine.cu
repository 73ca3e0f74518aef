// y = x * w + b (row broadcast of w, b), the tests/gpu/problems/affine_*.py problems, in variants
// chosen by -DVARIANT, each one way a candidate can be wrong (see run_eval_gpu_tests.sh):
//   0 correct            1 wrong epilogue constant (+1e-3)    2 first tile never written
//   3 nondeterministic (every second call perturbs one element)
//   4 illegal address    5 hang (spins ~forever)              6 lazy: skips the work when called
//   again with the same output pointer (what a timing loop does), so it is "faster than light"
//   7 no-op (launches nothing)
#define UCUT_TEST_WORKSPACE 0
#define UCUT_TEST_NTENSORS 4
#include "abi.cuh"

static const char* test_describe() {
  static char buf[4096];
  std::snprintf(buf, sizeof buf,
                "{\"abi\":1,\"name\":\"affine_v%d\",\"program_hash\":\"test%d\",\"ucutlass\":\"test\","
                "\"cutlass\":\"none\",\"arch\":\"sm_90a\",\"tensors\":["
                "{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f32\",\"shape\":[%d,%d],\"index\":0},"
                "{\"name\":\"w\",\"role\":\"param\",\"dtype\":\"f32\",\"shape\":[%d],\"binding\":\"w\"},"
                "{\"name\":\"b\",\"role\":\"param\",\"dtype\":\"f32\",\"shape\":[%d],\"binding\":\"b\"},"
                "{\"name\":\"y\",\"role\":\"out\",\"dtype\":\"f32\",\"shape\":[%d,%d],\"index\":0}],"
                "\"scalars\":[],\"stages\":[{\"name\":\"s0\",\"kind\":\"elementwise\",\"config\":\"variant_%d\"}]}",
                VARIANT, VARIANT, ROWS, COLS, COLS, COLS, ROWS, COLS, VARIANT);
  return buf;
}

__global__ void affine_kernel(const float* __restrict__ x, const float* __restrict__ w, const float* __restrict__ b,
                              float* __restrict__ y, long long n, int cols, float extra, int skip_block0) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  if (skip_block0 && blockIdx.x == 0) return;
  int c = static_cast<int>(i % cols);
  y[i] = x[i] * w[c] + b[c] + extra;
}

__global__ void perturb(float* y) { y[17] += 0.5f; }

__global__ void bad_address(float* y) { reinterpret_cast<float*>(0xdead00000ull)[threadIdx.x] = y[threadIdx.x]; }

__global__ void spin() {
  long long start = clock64();
  while (clock64() - start < (1ll << 62)) {
  }
}

static int test_run(void* const* t, const double*, void*, cudaStream_t st) {
  const float* x = static_cast<const float*>(t[0]);
  const float* w = static_cast<const float*>(t[1]);
  const float* b = static_cast<const float*>(t[2]);
  float* y = static_cast<float*>(t[3]);
  long long n = static_cast<long long>(ROWS) * COLS;
  int threads = 256;
  int blocks = static_cast<int>((n + threads - 1) / threads);
  static unsigned calls = 0;
  static void* last_y = nullptr;
  ++calls;
  switch (VARIANT) {
    case 4:
      bad_address<<<1, 32, 0, st>>>(y);
      return 0;
    case 5:
      spin<<<1, 1, 0, st>>>();
      return 0;
    case 6:
      if (y == last_y) return 0;  // the timing loop: nothing launched
      last_y = y;
      break;
    case 7:
      return 0;
    default:
      break;
  }
  affine_kernel<<<blocks, threads, 0, st>>>(x, w, b, y, n, COLS, VARIANT == 1 ? 1e-3f : 0.0f, VARIANT == 2);
  if (VARIANT == 3 && calls % 2 == 0) perturb<<<1, 1, 0, st>>>(y);
  return 0;
}
