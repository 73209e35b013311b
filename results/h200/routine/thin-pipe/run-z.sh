#!/usr/bin/env bash
# Issue 27, call Z: the default suite's two 4097x33x2049 calls (results/h200/routine/thin-pipe/thin33.txt: col and row NN)
# tuned again on both toolchains into a copy of the committed database, 2 s per family search
# (simt, simtdirect), so that `tune --suite` times thin's fitted configurations (PIPE=1 among
# them) beside the earlier choice; then the default suite with that database next to cuBLAS, and
# held-out thin suite 3 with it (untuned calls: thin fitted, PIPE=1 among the choices timed).
set -u
M=/tmp/mz; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-y
snap() { tar cJf "$OUT/call-z.tar.xz" -C $M .; }
mkdir -p $M/db; cp results/tuned/*.json $M/db/
( while sleep 60; do snap; done ) & SNAP=$!
timeout 230 /tmp/g tune --device h200 --backends cuda,opencl --suite results/h200/routine/thin-pipe/thin33.txt --kernels simt,simtdirect --time-limit 2 \
  --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db --store $M/store --out $M/tune \
  > $M/tune-suite.txt 2>&1
echo "== tune exit $?" | tee -a $M/tune-suite.txt
kill $SNAP
grep -E "^== suite|routine on|thin" $M/tune-suite.txt | cut -c1-220 | tail -20
snap
timeout 190 /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db $M/db --reps 10 -v \
  --out $M/rows-routine > $M/gemm-routine.txt 2>&1
echo "== routine exit $?"; grep -E "geometric|4097x33" $M/gemm-routine.txt
snap
timeout 150 /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/thin-3.txt --db results/tuned --reps 10 -v \
  --out $M/rows-thin-3 > $M/gemm-thin-3.txt 2>&1
echo "== thin-3 exit $?"; grep -E "geometric" $M/gemm-thin-3.txt
snap
