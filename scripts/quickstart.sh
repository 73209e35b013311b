#!/usr/bin/env bash
# Installs what gemmlab needs and runs the main comparison on the best device found.
# An OpenCL ICD loader and PoCL are installed (apt-get) when no OpenCL platform is
# registered; clang-19 and libclc-19 (the clang-opencl and clang-cuda toolchains) when
# no clang with libclc's NVPTX library is there; NVRTC 11.8 and 13, their ptxas and
# CUDA's headers are fetched from NVIDIA's pip wheels (scripts/nvrtc/fetch.sh). Without
# an NVIDIA GPU it then answers the tutorial's Kepler questions offline (GEMMLAB_ARCH).
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

# The CUDA backend is always built: it loads libcuda at run time, and says why not
# where there is none. NVRTC 11.8 and 13 with their ptxas, and CUDA 12.4's headers
# (clang's CUDA mode), come from NVIDIA's pip wheels: they answer for any architecture
# without a GPU (11.8 is the last NVRTC that targets Kepler).
scripts/nvrtc/fetch.sh 11.8 13 --with-ptxas --with-cuda-headers \
    || echo "NVIDIA's wheels not fetched: the offline answers and the clang toolchains will say what is missing" >&2

cargo build --release --features cuda --bin gemmlab
G=./target/release/gemmlab
$G devices
status=0
$G compare "$@" || status=$?

# Without an NVIDIA GPU, the tutorial's questions are compiler questions: answered
# offline for the architecture GEMMLAB_ARCH names (default Kepler's sm_35, the
# tutorial's), nothing run or timed.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    ARCH=${GEMMLAB_ARCH:-sm_35}
    echo
    echo "== No NVIDIA GPU here: the tutorial's kernels compiled for $ARCH (NVRTC and both clang toolchains; offline, nothing run)"
    $G atlas --kernels 1,2,3,4,5,6,7,8,9,10,11 --archs "$ARCH" --clang --out gemmlab-results/quickstart/atlas || status=1
    echo
    echo "== Kernel 6 under register caps for $ARCH (what a cap costs in spills)"
    $G sweep registers --arch "$ARCH" --kernels 6 --caps none,128,96,64,48,32 --out gemmlab-results/quickstart/registers || status=1
    echo
    echo "== Kernel 11's register tile for $ARCH (the tutorial's 8x4 against 4x4 and the rest)"
    $G sweep tiling --arch "$ARCH" --out gemmlab-results/quickstart/tiling || status=1
    echo
    echo "Clang's registers and a report of all of it: $G report --from gemmlab-results/quickstart --out gemmlab-results/quickstart/report"
fi
exit $status
