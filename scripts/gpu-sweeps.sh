#!/usr/bin/env bash
# The compiler-behaviour batch on the GPU machine (binaries in .gpu/, see gpu-batch.sh).
# usage: scripts/gpu-sweeps.sh part1|part2|part3   (each part fits one 10-minute call)
set -u
W=/tmp/gemmlab-sweeps; mkdir -p "$W"
export CUDA_CACHE_DISABLE=1
G=.gpu/gemmlab
case "${1:-part1}" in
part1)
  mkdir -p "$W/fixtures" "$W/ptx" "$W/tests"
  # Build logs of a spilling kernel: launch bounds off so the cap applies in CUDA too.
  for cap in 32 24; do
    $G build --kernel 6 --device h200 --define USE_BOUNDS=0 --max-registers $cap --out "$W/fixtures" >> "$W/fixtures/build.txt" 2>&1
  done
  for k in 1 2 3 4 5 6 7 8 9 10 11; do
    $G ptx --kernel $k --device h200 --diff --out "$W/ptx" > "$W/ptx/gemm$k-diff.txt" 2>&1
  done
  for t in .gpu/tests/*; do
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 200 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  timeout 60 $G sweep tiling --device h200 --out "$W/tiling" > "$W/tiling.txt" 2>&1
  timeout 90 $G sweep jit --device h200 --out "$W/jit" > "$W/jit.txt" 2>&1
  timeout 150 $G sweep hints --device h200 --out "$W/hints" > "$W/hints.txt" 2>&1
  ;;
part2)
  timeout 330 $G sweep registers --device h200 --out "$W/registers" > "$W/registers.txt" 2>&1
  timeout 120 $G sweep registers --device h200 --kernels 3,6,7,11 --define USE_BOUNDS=0 --out "$W/registers-nobounds" > "$W/registers-nobounds.txt" 2>&1
  ;;
part3)
  # PTX of every configuration measured, and a second compare run at 4096 (run-to-run check).
  timeout 120 $G compare --device h200 --sizes 4096 --keep-ptx --out "$W/compare-4096-ptx" > "$W/compare-4096-ptx.txt" 2>&1
  timeout 150 $G sweep hints --device h200 --keep-ptx --out "$W/hints-ptx" > "$W/hints-ptx.txt" 2>&1
  timeout 60 $G sweep tiling --device h200 --keep-ptx --out "$W/tiling-ptx" > "$W/tiling-ptx.txt" 2>&1
  ;;
esac
tar czf "$OUT/sweeps-${1:-part1}.tgz" -C "$W" .
cat "$W"/tests/summary.txt 2>/dev/null; tail -n 25 "$W"/*.txt
