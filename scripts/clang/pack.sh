#!/usr/bin/env bash
# Packs this machine's clang (its binary, the shared libraries it loads but the C
# runtime, its resource headers), libclc's NVPTX bitcode and the cached CUDA headers
# into DIR/clang.tar.xz, for a GPU machine that cannot install packages (../shared/GPU.md).
# There, scripts/clang/unpack.sh DIR/clang.tar.xz DEST sets it up; gemmlab then finds it
# through GEMMLAB_CLANG, GEMMLAB_CUDA_PATH and GEMMLAB_CACHE.
#
#   scripts/clang/pack.sh .gpu        # after apt-get install clang-19 libclc-19 and
#                                     # scripts/nvrtc/fetch.sh --with-cuda-headers
set -euo pipefail
dir=${1:?usage: scripts/clang/pack.sh DIR}
clang=${GEMMLAB_CLANG:-$(command -v clang-19 || true)}
[ -n "$clang" ] || { echo "pack.sh: no clang-19 (apt-get install clang-19 libclc-19)" >&2; exit 1; }
real=$(readlink -f "$clang")
clc=/usr/lib/clc/nvptx64--nvidiacl.bc
[ -f "$clc" ] || { echo "pack.sh: $clc missing (apt-get install libclc-19)" >&2; exit 1; }
root=${GEMMLAB_CACHE:-$HOME/.cache/gemmlab}
headers=$(ls -d "$root"/cuda/*/ 2>/dev/null | sort -V | tail -1)
[ -n "$headers" ] || { echo "pack.sh: no CUDA headers in $root/cuda (scripts/nvrtc/fetch.sh --with-cuda-headers)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/clang/bin" "$work/clang/lib" "$work/clang/clc" "$work/cuda"
cp "$real" "$work/clang/bin/clang.real"
# Every library clang loads, but the C runtime the GPU machine has of its own.
ldd "$real" | awk '/=> \//{print $3}' | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*)\.so' |
    while read -r lib; do cp -L "$lib" "$work/clang/lib/"; done
# The resource headers (opencl-c.h, the CUDA wrappers) are found beside the binary;
# the sanitizer runtimes in the resource folder's lib/ are not needed to emit PTX.
resource=$("$real" -print-resource-dir)
mkdir -p "$work/clang/lib/clang/$(basename "$resource")"
cp -r "$resource/include" "$work/clang/lib/clang/$(basename "$resource")/"
cp "$clc" "$work/clang/clc/"
cp -r "$headers" "$work/cuda/"
# The wrapper gemmlab runs: clang.real with its own libraries, nothing else changed.
cat > "$work/clang/bin/clang-19" <<'SH'
#!/bin/sh
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/../lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/clang.real" "$@"
SH
chmod +x "$work/clang/bin/clang-19"
mkdir -p "$dir"
tar -C "$work" -cf - clang cuda | xz -T0 -9 > "$dir/clang.tar.xz"
echo "packed $("$real" --version | head -1) with $(basename "$headers") headers: $dir/clang.tar.xz ($(du -h "$dir/clang.tar.xz" | cut -f1))"
