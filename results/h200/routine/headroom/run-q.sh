#!/usr/bin/env bash
# Issue 27, 2026-11-30 (thirteenth session), call Q: call P's search with REDUCE=1 pinned on the
# default suite's other calls whose entries split K (1024^3 in four forms on CUDA, three on
# OpenCL), into a copy of the database with call P's entries (the committed one after P), the
# earlier choice kept unless the whole call beats it; then the default suite on both
# toolchains with it.
set -u
M=/tmp/mq; rm -rf $M; mkdir -p $M/db
snap() { tar cJf "$OUT/call-q.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-q
cp results/tuned/nvidia-h200.json $M/db/
H=results/h200/routine/headroom
T="--device h200 --kernels simt,simtdirect --define REDUCE=1 --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db"
timeout 160 stdbuf -oL /tmp/g tune $T --backends cuda --suite $H/split-cuda.txt --time-limit 12 --out $M/tune-cuda > $M/tune-cuda.txt 2>&1
echo "== tune cuda exit $?" >> $M/tune-cuda.txt; grep -hE "^== |routine on" $M/tune-cuda.txt | cut -c1-250; snap
timeout 150 stdbuf -oL /tmp/g tune $T --backends opencl --suite $H/split-opencl.txt --time-limit 12 --out $M/tune-opencl > $M/tune-opencl.txt 2>&1
echo "== tune opencl exit $?" >> $M/tune-opencl.txt; grep -hE "^== |routine on" $M/tune-opencl.txt | cut -c1-250; snap
timeout 240 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt \
  --reps 10 -v --db $M/db --out $M/rows > $M/suite-both.txt 2>&1
echo "== suite both exit $?" >> $M/suite-both.txt; grep -hE "^== |geometric" $M/suite-both.txt; snap
