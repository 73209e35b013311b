#!/usr/bin/env bash
# One device call for issue 80 (where the CUDA-OpenCL gap comes from): `sweep jit` on
# the kernels of the main comparison whose CUDA and OpenCL rows differ at the same
# registers, with every front end's PTX through both runtimes (NVRTC's and NVIDIA
# OpenCL's PTX, each through the CUDA driver's JIT and through NVIDIA's OpenCL runtime
# as a program binary), and the CUDA driver's lanes again under carveout preferences of 0% and
# 100% (a runtime factor on the same binaries). Staged: .gpu/gemmlab. Lands in $OUT/runtime/
# as it is made. usage: scripts/gpu-runtime.sh [SIZE] [KERNELS]
set -u
G=$PWD/.gpu/gemmlab
SIZE=${1:-4096}
KERNELS=${2:-2,7,8,9,10,lecture_wide,xgemmdirect,tcwg}
W=$OUT/runtime; mkdir -p "$W"
# shellcheck source=scripts/gpu-run.sh
. "$(dirname "$0")/gpu-run.sh"
gpu_line
run "jit-$SIZE" 400 "$G" sweep jit --device nvidia --kernels "$KERNELS" --sizes "$SIZE" \
  --carveout 0,100 --reps 10 --out "$W/jit-$SIZE"
tail -40 "$W/jit-$SIZE.txt"
