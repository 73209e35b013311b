#!/usr/bin/env bash
# Issue 27, call B: held-out thin suite 3 with the build after (call A's ran past its 110 s: a
# thin call's first run now times one configuration more on each toolchain); then the default
# suite's two 4097x33x2049 calls tuned again on OpenCL into a copy of the committed database (2 s
# per family search: `tune --suite` times thin's fits, the capped one among them), and the
# default suite with that database next to cuBLAS, both toolchains.
set -u
M=/tmp/mb; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-a
snap() { tar cJf "$OUT/call-b.tar.xz" -C $M .; }
( while sleep 30; do snap; done ) & SNAP=$!
timeout 200 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/thin-3.txt --db results/tuned --reps 10 -v \
  --out $M/rows-thin-3-after > $M/gemm-thin-3-after.txt 2>&1
echo "== thin-3 after exit $?"; grep -E "geometric" $M/gemm-thin-3-after.txt
snap
mkdir -p $M/db; cp results/tuned/*.json $M/db/
timeout 140 /tmp/g tune --device h200 --backends opencl --suite results/h200/routine/thin-pipe/thin33.txt --kernels simt,simtdirect --time-limit 2 \
  --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db --store $M/store --out $M/tune \
  > $M/tune-suite.txt 2>&1
echo "== tune exit $?" | tee -a $M/tune-suite.txt
grep -E "^== suite|routine on|chose|thin" $M/tune-suite.txt | cut -c1-220 | tail -12
snap
timeout 190 /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db $M/db --reps 10 -v \
  --out $M/rows-routine > $M/gemm-routine.txt 2>&1
echo "== routine exit $?"; grep -E "geometric|4097x33" $M/gemm-routine.txt
kill $SNAP; snap
