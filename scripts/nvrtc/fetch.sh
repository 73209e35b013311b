#!/usr/bin/env bash
# Fetches NVIDIA's official NVRTC pip wheels into gemmlab's cache, so that
# `gemmlab ... --nvrtc 11.8|12|13` can compile for any architecture on any
# machine, without a GPU, a driver or a CUDA toolkit.
#
#   scripts/nvrtc/fetch.sh                  # 11.8, 12 and 13
#   scripts/nvrtc/fetch.sh 11.8 13          # only these
#   scripts/nvrtc/fetch.sh --with-ptxas     # also ptxas from the nvcc wheels (11.8 and 13)
#   scripts/nvrtc/fetch.sh --with-cuda-headers  # also CUDA 12.4's headers and libdevice,
#                                           # for clang's CUDA mode (the clang-cuda toolchain)
#
# Cache: ${GEMMLAB_CACHE:-$HOME/.cache/gemmlab}/nvrtc/<wheel version>/, holding the
# wheel's files as they are in the wheel:
#   11.8.89/nvidia/cuda_nvrtc/lib/libnvrtc.so.11.2 (+ libnvrtc-builtins.so.11.8)
#   12.9.86/nvidia/cuda_nvrtc/lib/libnvrtc.so.12   (+ libnvrtc-builtins.so.12.9)
#   13.5.37/nvidia/cu13/lib/libnvrtc.so.13         (+ libnvrtc-builtins.so.13.5)
# and with --with-ptxas nvidia/cuda_nvcc/bin/ptxas (11.8) or nvidia/cu13/bin/ptxas (13).
# --with-cuda-headers lays out ${GEMMLAB_CACHE:-$HOME/.cache/gemmlab}/cuda/12.4.131/ as a
# CUDA installation clang accepts as --cuda-path: include/ (the runtime and nvcc wheels'
# headers), nvvm/libdevice/libdevice.10.bc, and an empty bin/ (clang only looks for it).
# Each libnvrtc finds its builtins beside itself (its run path is $ORIGIN), so
# gemmlab opens it by full path; nothing is installed into Python.
#
# Idempotent: a version already in the cache is skipped; an interrupted fetch
# leaves no half-written entry (it unpacks beside the entry, then renames).
# Needs python3 with pip and access to PyPI (pip download --no-deps).
set -euo pipefail

# The versions: 11.8 is the last NVRTC for Kepler (sm_35, sm_37); 12.9 the newest
# 12.x (sm_50 to sm_121); 13.5 the newest 13.x (sm_75 and later). Pinned so that
# every machine compiles with the same compilers; bump them here.
declare -A NVRTC=(
    [11.8]="nvidia-cuda-nvrtc-cu11==11.8.89"
    [12]="nvidia-cuda-nvrtc-cu12==12.9.86"
    [13]="nvidia-cuda-nvrtc==13.5.37"
)
declare -A NVCC=(
    [11.8]="nvidia-cuda-nvcc-cu11==11.8.89"
    [13]="nvidia-cuda-nvcc==13.5.37"
)
ORDER=(11.8 12 13)
# clang's CUDA mode: the newest CUDA whose headers clang 19 reads (it knows CUDA up to 12.5).
CUDA_HEADERS_VERSION=12.4.131
CUDA_HEADERS=("nvidia-cuda-runtime-cu12==12.4.127" "nvidia-cuda-nvcc-cu12==12.4.131")

usage() {
    sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
    echo "versions: ${ORDER[*]}"
}

with_ptxas=0
with_headers=0
wanted=()
for a in "$@"; do
    case "$a" in
        --with-ptxas) with_ptxas=1 ;;
        --with-cuda-headers) with_headers=1 ;;
        -h|--help) usage; exit 0 ;;
        11.8|12|13) wanted+=("$a") ;;
        *) echo "fetch.sh: unknown argument '$a'" >&2; usage >&2; exit 2 ;;
    esac
done
[ ${#wanted[@]} -gt 0 ] || wanted=("${ORDER[@]}")

if [ -n "${GEMMLAB_CACHE:-}" ]; then
    root="$GEMMLAB_CACHE"
elif [ -n "${HOME:-}" ]; then
    root="$HOME/.cache/gemmlab"
else
    echo "fetch.sh: set GEMMLAB_CACHE or HOME: the cache needs a place" >&2
    exit 2
fi
cache="$root/nvrtc"
mkdir -p "$cache"

python=${PYTHON:-python3}
if ! "$python" -m pip --version >/dev/null 2>&1; then
    echo "fetch.sh: '$python -m pip' does not work: install Python 3 with pip (or set PYTHON)" >&2
    exit 1
fi

# Unpacks the members of a wheel whose names match a pattern, keeping their
# paths and their executable bits (zipfile's own extraction drops the bits).
unpack() { # wheel dest regex
    "$python" - "$1" "$2" "$3" <<'EOF'
import os, re, sys, zipfile
wheel, dest, pattern = sys.argv[1], sys.argv[2], re.compile(sys.argv[3])
n = 0
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        if info.is_dir() or not pattern.search(info.filename):
            continue
        path = z.extract(info, dest)
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(path, mode or 0o644)
        n += 1
if n == 0:
    sys.exit(f"{wheel}: nothing matches {pattern.pattern}")
EOF
}

download() { # requirement dir -> prints the wheel's path
    "$python" -m pip download --quiet --no-deps --only-binary=:all: --dest "$2" "$1" >&2
    ls "$2"/*.whl
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for v in "${wanted[@]}"; do
    req=${NVRTC[$v]}
    full=${req##*==}
    entry="$cache/$full"
    if compgen -G "$entry/nvidia/*/lib/libnvrtc.so*" >/dev/null; then
        echo "NVRTC $v: cached in $entry"
    else
        echo "NVRTC $v: fetching $req"
        rm -rf "$work/dl" "$entry.partial"
        mkdir -p "$work/dl"
        whl=$(download "$req" "$work/dl")
        # The libraries only; the headers and Python shims are not needed. 12.x also
        # ships libnvrtc.alt.*, an alternative build gemmlab does not use.
        unpack "$whl" "$entry.partial" '^nvidia/[^/]+/lib/libnvrtc[^/]*\.so[^/]*$'
        find "$entry.partial" -name '*.alt.*' -delete
        basename "$whl" > "$entry.partial/wheel.txt"
        mv "$entry.partial" "$entry"
        echo "NVRTC $v: $(cd "$entry" && ls nvidia/*/lib/libnvrtc.so*)"
    fi
    if [ "$with_ptxas" = 1 ]; then
        nvcc=${NVCC[$v]:-}
        if [ -z "$nvcc" ]; then
            echo "ptxas $v: not fetched (gemmlab's fetch knows the nvcc wheels of 11.8 and 13)"
        elif compgen -G "$entry/nvidia/*/bin/ptxas" >/dev/null; then
            echo "ptxas $v: cached in $entry"
        else
            echo "ptxas $v: fetching $nvcc"
            rm -rf "$work/dl" "$work/ptxas"
            mkdir -p "$work/dl"
            whl=$(download "$nvcc" "$work/dl")
            unpack "$whl" "$work/ptxas" '^nvidia/[^/]+/bin/ptxas$'
            for p in "$work"/ptxas/nvidia/*/bin/ptxas; do
                rel=${p#"$work/ptxas/"}
                mkdir -p "$entry/$(dirname "$rel")"
                mv "$p" "$entry/$rel.partial" && mv "$entry/$rel.partial" "$entry/$rel"
                echo "ptxas $v: $entry/$rel ($("$entry/$rel" --version | tail -1))"
            done
        fi
    fi
done
if [ "$with_headers" = 1 ]; then
    entry="$root/cuda/$CUDA_HEADERS_VERSION"
    if [ -f "$entry/include/cuda.h" ] && [ -f "$entry/nvvm/libdevice/libdevice.10.bc" ]; then
        echo "CUDA headers: cached in $entry"
    else
        echo "CUDA headers: fetching ${CUDA_HEADERS[*]}"
        rm -rf "$work/dl" "$work/hdr" "$entry.partial"
        mkdir -p "$work/dl" "$entry.partial/bin" "$entry.partial/include" "$entry.partial/nvvm"
        for req in "${CUDA_HEADERS[@]}"; do
            whl=$(download "$req" "$work/dl/${req%%==*}")
            unpack "$whl" "$work/hdr" '^nvidia/[^/]+/(include/.*\.(h|hpp)|nvvm/libdevice/libdevice\.10\.bc)$'
        done
        cp -r "$work"/hdr/nvidia/*/include/. "$entry.partial/include/"
        cp -r "$work"/hdr/nvidia/cuda_nvcc/nvvm/libdevice "$entry.partial/nvvm/"
        mkdir -p "$root/cuda"
        mv "$entry.partial" "$entry"
        echo "CUDA headers: $entry ($(du -sh "$entry" | cut -f1))"
    fi
fi
echo "cache: $cache (gemmlab nvrtc lists it)"
