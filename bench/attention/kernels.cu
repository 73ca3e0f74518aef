// The 16-bit attention kernels of src/codegen/runtime as one shared library for compare.py:
// attn(kernel, case, ...) runs the mma.sync kernel (kernel 0, 64-row blocks: `threads 128`) or
// Hopper's warp-specialised kernel (kernel 1: `threads 384`) on one of the instantiations below.
#include "attention_sm90.cuh"

namespace {
template <class T, int D, int DV, bool CAUSAL>
int run(int kernel, const ucut_attn::Params& p) {
  if (kernel == 0) return ucut_attn::launch_attention<T, 64, 128, D, DV, CAUSAL>(p, nullptr);
  return ucut_attn::launch_attention_ws<T, D, DV, CAUSAL>(p, nullptr);
}
}  // namespace

// case: 0 bf16 D 128 Dv 128 causal, 1 the same non-causal, 2 f16 D 64 Dv 64 causal,
// 3 f16 D 128 Dv 64 non-causal, 4 bf16 D 64 Dv 128 causal. Returns 0, or the launcher's code
// (2 misaligned, 4 no shared memory or a launch error, 5 no TMA maps), or 9 for an unknown case.
extern "C" int attn(int kernel, int which, const void* q, const void* k, const void* v, void* o, long long lq,
                    long long lk, long long batch, long long heads, long long kv_group, float scale_log2) {
  ucut_attn::Params p{};
  p.q = q;
  p.k = k;
  p.v = v;
  p.o = o;
  p.lq = lq;
  p.lk = lk;
  p.batch = batch;
  p.heads = heads;
  p.kv_group = kv_group;
  p.scale_log2 = scale_log2;
  int rc = 9;
  switch (which) {
    case 0: rc = run<__nv_bfloat16, 128, 128, true>(kernel, p); break;
    case 1: rc = run<__nv_bfloat16, 128, 128, false>(kernel, p); break;
    case 2: rc = run<__half, 64, 64, true>(kernel, p); break;
    case 3: rc = run<__half, 128, 64, false>(kernel, p); break;
    case 4: rc = run<__nv_bfloat16, 64, 128, true>(kernel, p); break;
  }
  if (rc != 0) return rc;
  return cudaGetLastError() == cudaSuccess ? 0 : 4;
}
