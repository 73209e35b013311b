#!/usr/bin/env bash
# Issue 27, 2026-11-29 (ninth session), call C: `tune --suite` with the fixed screen over the
# default suite's calls whose searches the old screen cut most (a lone launch's fixed cost against
# short kernels): 4097x33x2049 row and col NN, 128x4096x4096 col NN; families thin, simtdirect and
# simt, into a copy of the committed database; CUDA then OpenCL. The database is call D's input.
set -u
M=/tmp/uc; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-c.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-c
printf '4097x33x2049 row NN\n4097x33x2049 col NN\n128x4096x4096 col NN\n' > $M/suite.txt
mkdir -p $M/db; cp results/tuned/*.json $M/db/
for tc in cuda opencl; do
  timeout 270 stdbuf -oL /tmp/g tune --device h200 --backends $tc --suite $M/suite.txt --kernels thin,simtdirect,simt \
    --time-limit 10 --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db --store $M/store-suite \
    --out $M/tune-suite-$tc > $M/tune-suite-$tc.txt 2>&1
  echo "== tune --suite $tc exit $?" >> $M/tune-suite-$tc.txt; grep -E "^== |routine on|tried" $M/tune-suite-$tc.txt | cut -c1-300; snap
done
