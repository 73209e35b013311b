#!/usr/bin/env bash
# On a machine that cannot install packages: unpacks what scripts/clang/pack.sh
# packed into DEST and prints the environment gemmlab's clang toolchains read.
# With a system CUDA (/usr/local/cuda), it also enters that CUDA's ptxas into a
# gemmlab cache under DEST, so that clang's PTX is assembled by the same ptxas
# release as NVRTC's own.
#
#   eval "$(scripts/clang/unpack.sh .gpu/clang.tar.xz /tmp/gl)"
set -euo pipefail
pack=${1:?usage: unpack.sh PACK DEST}
dest=${2:?usage: unpack.sh PACK DEST}
mkdir -p "$dest"
xz -dc "$pack" | tar -C "$dest" -xf -
headers=$(ls -d "$dest"/cuda/*/ | sort -V | tail -1)
echo "export GEMMLAB_CLANG=$dest/clang/bin/clang-19"
echo "export GEMMLAB_LIBCLC=$dest/clang/clc/nvptx64--nvidiacl.bc"
echo "export GEMMLAB_CUDA_PATH=${headers%/}"
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ -x "$cuda/bin/ptxas" ] && lib=$(ls "$cuda"/lib64/libnvrtc.so.[0-9]* 2>/dev/null | head -1); [ -n "$lib" ]; then
    v=$("$cuda/bin/ptxas" --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
    entry="$dest/cache/nvrtc/$v/nvidia/system"
    mkdir -p "$entry/lib" "$entry/bin"
    for f in "$lib" "$cuda"/lib64/libnvrtc-builtins.so*; do ln -sf "$f" "$entry/lib/$(basename "$f")"; done
    ln -sf "$cuda/bin/ptxas" "$entry/bin/ptxas"
    echo "export GEMMLAB_CACHE=$dest/cache"
fi
