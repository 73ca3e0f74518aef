// config: gemv32_f32_k7
// workspace: ucut_s1::workspace_bytes()
namespace ucut_s1 {
constexpr long long M = 1000, N = 1, K = 4099, L = 1;
constexpr size_t kAccBytes = ucut_rt::round_up(1000ull * 4, 256);  // fp32 accumulators the epilogue pass reads
constexpr size_t kRedBytes = 256;  // fp64 partial sums of the sum reductions
constexpr size_t kEpiBytes = kAccBytes + kRedBytes;
constexpr int kSplits = 7;  // K chunks (split_k)
size_t workspace_bytes() { return kEpiBytes + ucut_gemv::workspace_bytes(M, kSplits); }


struct EpiParams {
  const float* acc;
  __nv_bfloat16* out;
  const float* vr_bias;
  float s_s;
  const float* r_r;
  float* red0;
  double* part0;
};

__global__ void to_float(float* out, const double* part, long long n) {
  long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
  if (i < n) out[i] = static_cast<float>(part[i]);
}

// One thread per output element (grid-stride): the epilogue of the program, in fp32.
__global__ void __launch_bounds__(256) epilogue(EpiParams P) {
  for (long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x; idx < M * N * L;
       idx += (long long)gridDim.x * blockDim.x) {
    const long long n = idx % N, m = (idx / N) % M, l = idx / (M * N);
    (void)n; (void)m; (void)l;
    const float acc = P.acc[idx];
    const float vr_bias = static_cast<float>(P.vr_bias[m]);
    const float s_s = P.s_s;
    const float r_r = static_cast<float>(P.r_r[idx]);
    const float l_z = ((ucut_fn_relu((acc + vr_bias)) * s_s) + r_r);
    P.out[idx] = static_cast<__nv_bfloat16>(l_z);
    atomicAdd(&P.part0[l * N + n], static_cast<double>(l_z));
  }
}

int run_epilogue(const ucut_rt::StageArgs& a) {
  EpiParams P{};
  P.acc = static_cast<const float*>(a.workspace);
  P.out = static_cast<__nv_bfloat16*>(a.tensors[7]);
  P.vr_bias = static_cast<const float*>(a.tensors[4]);
  P.s_s = static_cast<float>(a.scalars[0]);
  P.r_r = static_cast<const float*>(a.tensors[5]);
  P.red0 = static_cast<float*>(a.tensors[8]);
  P.part0 = reinterpret_cast<double*>(static_cast<char*>(a.workspace) + kAccBytes + 0);
  cudaMemsetAsync(P.part0, 0, 1ull * 8, a.stream);
  long long blocks = (1000 + 255) / 256;
  if (blocks > 16 * 132) blocks = 16 * 132;
  epilogue<<<int(blocks), 256, 0, a.stream>>>(P);
  to_float<<<1, 256, 0, a.stream>>>(P.red0, P.part0, 1);
  return 0;
}

int run(const ucut_rt::StageArgs& a) {
  float* y = static_cast<float*>(a.workspace);
  if (a.workspace_bytes < workspace_bytes()) {
    ucut_rt::set_error("gemv32_f32_k7: needs %zu workspace bytes, got %zu", workspace_bytes(), a.workspace_bytes);
    return 5;
  }
  cudaError_t e = ucut_gemv::run<32, 16>(static_cast<const float*>(a.tensors[2]),
      static_cast<const float*>(a.tensors[3]), y,
      reinterpret_cast<float*>(static_cast<char*>(a.workspace) + kEpiBytes), M, K, kSplits, a.stream);
  if (e == cudaSuccess) { run_epilogue(a); e = cudaGetLastError(); }
  if (e != cudaSuccess) {
    ucut_rt::set_error("gemv32_f32_k7: launch failed: %s", cudaGetErrorString(e));
    return 4;
  }
  return 0;
}
}  // namespace ucut_s1
