#!/usr/bin/env bash
# The clang toolchains by hand, without gemmlab: one kernel's OpenCL C and CUDA C++
# sources compiled by clang to PTX and assembled by ptxas -v, with the flags written
# out here, so that gemmlab's recorded registers and PTX can be checked against them.
#
#   scripts/clang/by-hand.sh gemm06 sm_90 "-DTSM=128 -DTSN=128 ..." OUTDIR
# clang, libclc and the CUDA headers come from GEMMLAB_CLANG, GEMMLAB_LIBCLC and
# GEMMLAB_CUDA_PATH (or clang-19, Debian's libclc, the cache); ptxas from PTXAS or PATH.
set -euo pipefail
cd "$(dirname "$0")/../.."
stem=${1:?usage: by-hand.sh FILE-STEM ARCH DEFINES OUTDIR}
arch=${2:?arch}
defs=${3:?defines}
out=${4:?outdir}
mkdir -p "$out"
clang=${GEMMLAB_CLANG:-clang-19}
clc=${GEMMLAB_LIBCLC:-/usr/lib/clc/nvptx64--nvidiacl.bc}
cuda=${GEMMLAB_CUDA_PATH:-$(ls -d "${GEMMLAB_CACHE:-$HOME/.cache/gemmlab}"/cuda/*/ | sort -V | tail -1)}
ptxas=${PTXAS:-ptxas}
shim=$(mktemp -d); : > "$shim/curand_mtgp32_kernel.h"
# shellcheck disable=SC2086
cat kernels-cl/prelude.cl "kernels-cl/$stem.cl" | "$clang" -target nvptx64-nvidia-nvcl -march="$arch" \
    -cl-std=CL1.2 -Xclang -finclude-default-header -Xclang -mlink-builtin-bitcode -Xclang "$clc" \
    -Wno-linker-warnings -DGEMMLAB_NVIDIA_PTX=1 -O3 -S $defs -x cl -o "$out/$stem-clang-opencl.ptx" -
# shellcheck disable=SC2086
cat kernels-cu/prelude.cu "kernels-cu/$stem.cu" | "$clang" -x cuda --cuda-device-only --cuda-gpu-arch="$arch" \
    --cuda-path="$cuda" --no-cuda-version-check -Wno-unknown-cuda-version -I "$shim" -O3 -S $defs \
    -o "$out/$stem-clang-cuda.ptx" -
for tc in clang-opencl clang-cuda; do
    echo "== $stem $tc $arch by hand ($("$clang" --version | head -1); $("$ptxas" --version | tail -1))"
    "$ptxas" -v --gpu-name="$arch" -o /dev/null "$out/$stem-$tc.ptx" 2>&1 | grep -E 'Used|stack frame'
    echo "PTX sha256 (comments dropped): $(grep -v '^\s*//' "$out/$stem-$tc.ptx" | sha256sum | cut -c1-16)"
done
rm -rf "$shim"
