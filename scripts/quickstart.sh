#!/usr/bin/env bash
# Installs what gemmlab needs and runs the main comparison on the best device found.
# An OpenCL ICD loader and PoCL are installed (apt-get) when no OpenCL platform is
# registered; the CUDA backend is built when an NVIDIA driver is present.
# Extra arguments go to `gemmlab compare` (e.g. --sizes 1024,2048 --kernels 6,11).
set -euo pipefail
cd "$(dirname "$0")/.."

command -v cargo >/dev/null || { echo "cargo not found: install Rust first (https://rustup.rs)" >&2; exit 1; }

have_opencl() {
    ls /etc/OpenCL/vendors/*.icd >/dev/null 2>&1 && ldconfig -p 2>/dev/null | grep -q 'libOpenCL\.so\.1'
}

if ! have_opencl; then
    echo "No OpenCL platform found: installing the ICD loader and PoCL (CPU OpenCL)."
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq ocl-icd-libopencl1 pocl-opencl-icd clinfo >/dev/null
fi

FEATURES=()
if ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1'; then
    FEATURES=(--features cuda)
fi

cargo build --release "${FEATURES[@]}" --bin gemmlab
./target/release/gemmlab devices
exec ./target/release/gemmlab compare "$@"
