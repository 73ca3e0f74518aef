// config: gemv16_f32_k132
// workspace: ucut_s0::workspace_bytes()
namespace ucut_s0 {
constexpr long long M = 8192, N = 1, K = 262144, L = 1;
constexpr size_t kAccBytes = 0;  // fp32 accumulators the epilogue pass reads
constexpr size_t kRedBytes = 0;  // fp64 partial sums of the sum reductions
constexpr size_t kEpiBytes = kAccBytes + kRedBytes;
constexpr int kSplits = 132;  // K chunks (split_k)
size_t workspace_bytes() { return kEpiBytes + ucut_gemv::workspace_bytes(M, kSplits); }

int run(const ucut_rt::StageArgs& a) {
  float* y = static_cast<float*>(a.tensors[6]);
  if (a.workspace_bytes < workspace_bytes()) {
    ucut_rt::set_error("gemv16_f32_k132: needs %zu workspace bytes, got %zu", workspace_bytes(), a.workspace_bytes);
    return 5;
  }
  cudaError_t e = ucut_gemv::run<16, 32>(static_cast<const float*>(a.tensors[0]),
      static_cast<const float*>(a.tensors[1]), y,
      reinterpret_cast<float*>(static_cast<char*>(a.workspace) + kEpiBytes), M, K, kSplits, a.stream);
  if (e != cudaSuccess) {
    ucut_rt::set_error("gemv16_f32_k132: launch failed: %s", cudaGetErrorString(e));
    return 4;
  }
  return 0;
}
}  // namespace ucut_s0
