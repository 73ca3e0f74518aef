// Stand-in for f32x3w.cuh, so that main.cu builds (and its error path can be exercised) before the
// real kernel exists. main.cu includes this file unless UCUT_F32X3W_REAL is defined; build.sh
// defines it when f32x3w.cuh is present. The interface is the one f32x3w.cuh provides.
#pragma once

#include <cuda_runtime.h>

namespace f32x3w {

struct Variant {
  const char* name;
  // A: M x K row-major, B: N x K row-major, C: M x N row-major (C = A * B^T)
  cudaError_t (*run)(int M, int N, int K, const float* A, const float* B, float* C, cudaStream_t s);
  int layout;  // bit 0: A given as [K, M]; bit 1: B given as [K, N]
};

// Reports "not supported" so that the harness prints an ERROR row for it rather than timing nothing.
inline cudaError_t stub_run(int, int, int, const float*, const float*, float*, cudaStream_t) {
  return cudaErrorNotSupported;
}

// The list of variants the header provides: here one, which always fails.
inline const Variant* variants(int* count) {
  static const Variant list[] = {{"f32x3w_stub", &stub_run, 0}};
  *count = 1;
  return list;
}

}  // namespace f32x3w
