#!/usr/bin/env bash
# Installs what gemmlab needs and runs the main comparison on the best device found.
# An OpenCL ICD loader and PoCL are installed (apt-get) when no OpenCL platform is
# registered; clang-19 and libclc-19 (the clang-opencl and clang-cuda toolchains) when
# no clang with libclc's NVPTX library is there; the CUDA backend is built when an
# NVIDIA driver is present, and then the ptxas and CUDA headers the clang toolchains
# use are fetched from NVIDIA's pip wheels (scripts/nvrtc/fetch.sh).
# Extra arguments go to `gemmlab compare` (e.g. --sizes 1024,2048 --kernels 6,11).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "cargo not found: install Rust first (https://rustup.rs)" >&2; exit 1; }

have_opencl() {
    ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1'
}

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
updated=0
apt_install() {
    [ "$updated" = 1 ] || { $SUDO apt-get update -qq; updated=1; }
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}

if ! have_opencl; then
    echo "No OpenCL platform found: installing the ICD loader and PoCL (CPU OpenCL)."
    apt_install ocl-icd-libopencl1 pocl-opencl-icd clinfo
fi

if ! { compgen -G '/usr/bin/clang-1[5-9]' >/dev/null || compgen -G '/usr/bin/clang-[2-9][0-9]' >/dev/null; } \
    || ! compgen -G '/usr/lib/clc/nvptx64--nvidiacl.bc' >/dev/null; then
    echo "No clang with libclc's NVPTX library: installing clang-19 and libclc-19 (the clang toolchains)."
    apt_install clang-19 libclc-19 || echo "clang-19/libclc-19 not installed: the clang toolchains will say they are unavailable" >&2
fi

FEATURES=()
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    FEATURES=(--features cuda)
    # ptxas 13 (the clang toolchains' assembler) and CUDA 12.4's headers (clang's CUDA mode).
    scripts/nvrtc/fetch.sh 13 --with-ptxas --with-cuda-headers || echo "NVIDIA's wheels not fetched: the clang toolchains will say what is missing" >&2
fi

cargo build --release "${FEATURES[@]}" --bin gemmlab
./target/release/gemmlab devices
exec ./target/release/gemmlab compare "$@"
