// y = softmax(x, dim=1) for the tests/gpu/problems/softmax_rows.py problem. -DVARIANT=0 is
// correct (one block per row); -DVARIANT=1 writes zeros, which KernelBench's check accepts on
// problems with tiny outputs and ours must reject here (outputs ~1/COLS, far above atol).
#define UCUT_TEST_WORKSPACE 0
#define UCUT_TEST_NTENSORS 2
#include "abi.cuh"

static const char* test_describe() {
  static char buf[2048];
  std::snprintf(buf, sizeof buf,
                "{\"abi\":1,\"name\":\"softmax_v%d\",\"program_hash\":\"softmax%d\",\"cutlass\":\"none\","
                "\"arch\":\"sm_90a\",\"tensors\":["
                "{\"name\":\"x\",\"role\":\"in\",\"dtype\":\"f32\",\"shape\":[%d,%d],\"index\":0},"
                "{\"name\":\"y\",\"role\":\"out\",\"dtype\":\"f32\",\"shape\":[%d,%d],\"index\":0}],"
                "\"scalars\":[],\"stages\":[{\"name\":\"s0\",\"kind\":\"rowwise\",\"config\":\"variant_%d\"}]}",
                VARIANT, VARIANT, ROWS, COLS, ROWS, COLS, VARIANT);
  return buf;
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int cols) {
  __shared__ float red[32];
  const float* row = x + static_cast<long long>(blockIdx.x) * cols;
  float* out = y + static_cast<long long>(blockIdx.x) * cols;
  float m = -INFINITY;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) m = fmaxf(m, row[c]);
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = m;
  __syncthreads();
  m = red[0];
  for (int i = 1; i < blockDim.x / 32; ++i) m = fmaxf(m, red[i]);
  __syncthreads();
  float s = 0.f;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) s += expf(row[c] - m);
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
  if (threadIdx.x % 32 == 0) red[threadIdx.x / 32] = s;
  __syncthreads();
  s = 0.f;
  for (int i = 0; i < blockDim.x / 32; ++i) s += red[i];
  for (int c = threadIdx.x; c < cols; c += blockDim.x) out[c] = expf(row[c] - m) / s;
}

__global__ void zeros(float* y, long long n) {
  long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x;
  if (i < n) y[i] = 0.f;
}

static int test_run(void* const* t, const double*, void*, cudaStream_t st) {
  const float* x = static_cast<const float*>(t[0]);
  float* y = static_cast<float*>(t[1]);
  if (VARIANT == 1) {
    long long n = static_cast<long long>(ROWS) * COLS;
    zeros<<<static_cast<int>((n + 255) / 256), 256, 0, st>>>(y, n);
  } else {
    softmax_rows<<<ROWS, 256, 0, st>>>(x, y, COLS);
  }
  return 0;
}
