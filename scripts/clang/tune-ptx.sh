#!/usr/bin/env bash
# Makes clang's PTX for the clang searches of scripts/gpu-batch.sh clang-tune-a/-b, on a
# machine with clang (a GPU machine without it replays the PTX): `gemmlab tune --arch sm_90`
# compiles exactly the points those random searches try (the same seed, budget and start), and
# examples/clang_ptx adds every kernel at its published defaults and the support kernels. The
# PTX lands in DIR, keyed by what determines it; nothing is measured here.
#
#   scripts/clang/tune-ptx.sh .gpu/clang-ptx-tune      (then xz it or carry it as it is)
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=$(realpath -m "${1:?usage: scripts/clang/tune-ptx.sh DIR}")
mkdir -p "$dir"
export GEMMLAB_CLANG_PTX=$dir
cargo build --release --bins --examples
for tc in clang-cuda clang-opencl; do
  target/release/gemmlab tune --arch sm_90 --backends "$tc" --kernels 6,10,xgemm,simt \
    --strategy random --search-seed 1 --max-configs 160 --start-at results/tuned/nvidia-h200.json \
    --out "$dir/../tune-ptx-$tc"
done
target/release/examples/clang_ptx sm_90
echo "$(ls "$dir" | wc -l) files, $(du -sh "$dir" | cut -f1) in $dir"
