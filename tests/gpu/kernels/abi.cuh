// The kernel library C ABI v1 (docs/kernel-abi.md) for hand-written test kernels: each test .cu
// defines UCUT_TEST_WORKSPACE and UCUT_TEST_NTENSORS, then includes this header and defines
// `static const char* test_describe()` and
// `static int test_run(void* const* t, const double* s, void* ws, cudaStream_t st)`; this header
// exports the five C symbols around them. Built by tests/gpu/run_eval_gpu_tests.sh.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#ifndef ROWS
#define ROWS 1024
#endif
#ifndef COLS
#define COLS 1024
#endif
#ifndef VARIANT
#define VARIANT 0
#endif

#define UCUT_EXPORT extern "C" __attribute__((visibility("default")))

static char g_last_error[512] = "";

static int test_fail(int code, const char* what, cudaError_t e) {
  std::snprintf(g_last_error, sizeof g_last_error, "%s: %s", what, cudaGetErrorString(e));
  return code;
}

static int test_run(void* const* t, const double* s, void* ws, cudaStream_t st);
static bool workspace_fits(size_t have, size_t need) { return have >= need; }
static const char* test_describe();

UCUT_EXPORT int ucut_abi_version(void) { return 1; }

UCUT_EXPORT const char* ucut_describe(void) { return test_describe(); }

UCUT_EXPORT const char* ucut_last_error(void) { return g_last_error; }

UCUT_EXPORT int ucut_workspace_size(size_t* bytes) {
  if (!bytes) return 1;
  *bytes = UCUT_TEST_WORKSPACE;
  return 0;
}

UCUT_EXPORT int ucut_run(void* const* tensors, int n_tensors, const double* scalars, int n_scalars, void* workspace,
                         size_t workspace_bytes, void* stream) {
  (void)n_scalars;
  g_last_error[0] = 0;
  if (!tensors || n_tensors != UCUT_TEST_NTENSORS) {
    std::snprintf(g_last_error, sizeof g_last_error, "expected %d tensors, got %d", UCUT_TEST_NTENSORS, n_tensors);
    return 1;
  }
  if (!workspace_fits(workspace_bytes, UCUT_TEST_WORKSPACE)) return 5;
  int rc = test_run(tensors, scalars, workspace, static_cast<cudaStream_t>(stream));
  if (rc) return rc;
  cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? 0 : test_fail(4, "launch", e);
}
