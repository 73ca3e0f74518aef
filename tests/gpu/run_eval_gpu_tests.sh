#!/usr/bin/env bash
# GPU tests of the evaluation harness (CTest label `gpu`; the lead runs them on the GPU machine).
# Builds ucutlass (build-gpu/, or uses $UCUT_GPU_BIN), compiles the CUDA test kernels of
# tests/gpu/kernels with nvcc (sm_90a, static cudart), then runs python/tests/test_worker_gpu.py,
# python/tests/test_eval_memory_gpu.py (the memory plan on a 6 GiB problem; add -s to see its peaks),
# python/tests/test_hostile_gpu.py (hostile ReLU libraries it compiles itself),
# python/tests/test_export_gpu.py (KernelBench's protocol on real exports),
# python/tests/test_store_gpu.py (one stored kernel unit at three shapes) and
# python/tests/test_python_api_gpu.py (optimize() on an MLP, backend="ucutlass" on a GPT block) and
# python/tests/test_conv_gpu.py (one conv problem per category: a correct kernel with a conv stage) and
# python/tests/test_rounding_gpu.py (a bf16 MLP whose fused stages round as eager: a correct kernel) and
# python/tests/test_fused_checks_gpu.py (the fused comparison and fingerprints equal PyTorch's).
# Exits 77 (CTest: skipped) when there is no GPU.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
py="${UCUTLASS_PYTHON:-$root/.venv/bin/python}"
[ -x "$py" ] || py=python3
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1 \
   || ! "$py" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  echo "SKIP: no GPU visible (nvidia-smi / torch.cuda)"
  exit 77
fi
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
build="${UCUT_GPU_BUILD:-$root/build-gpu}"
if [ -z "${UCUT_GPU_BIN:-}" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j "$(nproc)" --target ucutlass
  export UCUT_GPU_BIN="$build/ucutlass"
fi
kdir="${UCUT_GPU_KERNELS:-$build/gpu-kernels}"
mkdir -p "$kdir"
export UCUT_GPU_KERNELS="$kdir"
flags=(-O2 -shared -Xcompiler -fPIC,-fvisibility=hidden -gencode arch=compute_90a,code=sm_90a -cudart static)
build_kernel() {  # name source variant rows cols
  local out="$kdir/$1.so"
  if [ ! -f "$out" ] || [ "$2" -nt "$out" ] || [ tests/gpu/kernels/abi.cuh -nt "$out" ]; then
    "$nvcc" "${flags[@]}" -DVARIANT="$3" -DROWS="$4" -DCOLS="$5" -o "$out" "$2" &
  fi
}
k=tests/gpu/kernels
for v in 0 1 2 3 4 5; do build_kernel "affine$v" $k/affine.cu $v 2048 1024; done
for v in 0 6 7; do build_kernel "big$v" $k/affine.cu $v 8192 8192; done
build_kernel softmax0 $k/softmax.cu 0 4096 512
build_kernel softmax1 $k/softmax.cu 1 4096 512
build_kernel softmax_wide1 $k/softmax.cu 1 64 65536
wait
export UCUTLASS_CACHE="${UCUTLASS_CACHE:-$kdir/cache}"
rm -f "$kdir/store.db"
# GPU_TESTS_ONLY: the test files or node ids to run instead of all of them (space-separated), e.g.
# a call that reruns the tests an earlier call's time limit cut.
tests=(python/tests/test_worker_gpu.py python/tests/test_eval_memory_gpu.py
  python/tests/test_hostile_gpu.py python/tests/test_export_gpu.py python/tests/test_store_gpu.py
  python/tests/test_python_api_gpu.py python/tests/test_conv_gpu.py python/tests/test_rounding_gpu.py
  python/tests/test_fused_checks_gpu.py)
[ -n "${GPU_TESTS_ONLY:-}" ] && read -r -a tests <<< "$GPU_TESTS_ONLY"
"$py" -m pytest -v -rs "${tests[@]}" "$@"
