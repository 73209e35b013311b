#!/usr/bin/env bash
# One batch on the GPU machine (the device tool's `run`): binaries built here with
#   cargo build --release --features cuda --bins && cargo test --release --features cuda --no-run
# are copied into .gpu/ (git-ignored, carried). Everything lands in one archive under $OUT.
# usage: scripts/gpu-batch.sh [sizes]
set -u
SIZES=${1:-1024,2048,4096,8192}
W=/tmp/gemmlab-batch; rm -rf "$W"; mkdir -p "$W/fixtures" "$W/tests"
export CUDA_CACHE_DISABLE=1   # so the JIT and ptxas logs are printed, not served from a cache
G=.gpu/gemmlab
{ nvidia-smi; nvidia-smi -q -d CLOCK,TEMPERATURE,POWER; env | grep -E '^OCL_|^CUDA'; } > "$W/nvidia-smi.txt" 2>&1
$G devices > "$W/devices.txt" 2>&1
$G devices --json > "$W/devices.json" 2>&1
for cap in "" 24; do
  for k in 1 6 11; do
    $G build --kernel $k --device h200 ${cap:+--max-registers $cap} --out "$W/fixtures" >> "$W/fixtures/build.txt" 2>&1
  done
done
for t in .gpu/tests/*; do
  echo "== $t"
  GEMMLAB_REQUIRE_CUDA=1 timeout 240 "$t" --test-threads=1 2>&1
  echo "== exit $?"
done > "$W/tests/tests.txt"
grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
timeout 400 $G compare --device h200 --sizes "$SIZES" --out "$W/compare" > "$W/compare.txt" 2>&1
echo "compare exit $?" >> "$W/compare.txt"
tar czf "$OUT/batch.tgz" -C "$W" .
cp "$W/devices.txt" "$W/compare.txt" "$W/tests/summary.txt" "$OUT/"
cat "$W/tests/summary.txt"; tail -30 "$W/compare.txt"
