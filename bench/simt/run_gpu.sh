#!/bin/sh
# On the GPU machine, from the repository root: build every case of DIR (written on the CPU
# machine by `ucut_simt_benchgen DIR`) with nvcc and check/time it against PyTorch.
#   sh bench/simt/run_gpu.sh DIR [bench.py options]
set -e
dir=$1; shift
python3 bench/simt/bench.py "$dir" "$@"
