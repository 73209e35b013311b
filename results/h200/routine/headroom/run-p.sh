#!/usr/bin/env bash
# Issue 27, 2026-11-30 (thirteenth session), call P: call O's search of 1000^3 found the packed
# kernel with split-K summed by REDUCE (64 x 128, split 2) at 37.8 TFLOP/s alone; no committed
# entry had REDUCE in its space (it came after the default suite was tuned). `tune --suite`
# with REDUCE=1 pinned (the part of the space the entries never saw; the earlier choice is
# kept unless the whole call beats it) on 1000^3 (CUDA) and 1000^3 and 1024^3 TT (OpenCL,
# its lowest), into a copy of the database; then the default suite on both toolchains with it.
set -u
M=/tmp/mp; rm -rf $M; mkdir -p $M/db
snap() { tar cJf "$OUT/call-p.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-p
cp results/tuned/nvidia-h200.json $M/db/
H=results/h200/routine/headroom
T="--device h200 --kernels simt,simtdirect --define REDUCE=1 --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db"
timeout 110 stdbuf -oL /tmp/g tune $T --backends cuda --suite $H/square-cuda.txt --time-limit 15 --out $M/tune-cuda > $M/tune-cuda.txt 2>&1
echo "== tune cuda exit $?" >> $M/tune-cuda.txt; grep -hE "^== |routine on" $M/tune-cuda.txt | cut -c1-300; snap
timeout 170 stdbuf -oL /tmp/g tune $T --backends opencl --suite $H/square-opencl.txt --time-limit 15 --out $M/tune-opencl > $M/tune-opencl.txt 2>&1
echo "== tune opencl exit $?" >> $M/tune-opencl.txt; grep -hE "^== |routine on" $M/tune-opencl.txt | cut -c1-300; snap
timeout 250 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt \
  --reps 10 -v --db $M/db --out $M/rows > $M/suite-both.txt 2>&1
echo "== suite both exit $?" >> $M/suite-both.txt; grep -hE "^== |geometric" $M/suite-both.txt; snap
