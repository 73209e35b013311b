#!/usr/bin/env bash
# Issue 27, 2026-11-30 (tenth session), call J: 1000^3 col NN searched in the call's own form only
# (`tune --suite --kernels simtdirect` with FIXED_FORM=1 KMAJOR_A=0 KMAJOR_B=1 pinned: the searches
# so far spent their time on forms that need a transposing launch first), 60 s (CUDA) and 50 s
# (OpenCL), into a copy of the committed database; then the routine at 1000^3 with it and with the
# committed one, alternated.
set -u
M=/tmp/uj; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-j.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-j
printf '1000x1000x1000 col NN\n' > $M/suite.txt
mkdir -p $M/db-new $M/db-old; cp results/tuned/*.json $M/db-new/; cp results/tuned/*.json $M/db-old/
for tc in cuda opencl; do
  if [ $tc = cuda ]; then t=60; else t=50; fi
  timeout $((t + 45)) stdbuf -oL /tmp/g tune --device h200 --backends $tc --suite $M/suite.txt --kernels simtdirect \
    --define FIXED_FORM=1 --define KMAJOR_A=0 --define KMAJOR_B=1 --define ALONG_MN=0 \
    --time-limit $t --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db-new --store $M/store \
    --out $M/tune-suite-$tc > $M/tune-suite-$tc.txt 2>&1
  echo "== tune --suite $tc exit $?" >> $M/tune-suite-$tc.txt; grep -E "^== |routine on|tried|built on|best while" $M/tune-suite-$tc.txt | cut -c1-330; snap
done
for round in 1 2; do
  for db in new old; do
    timeout 40 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --sizes 1000 --db $M/db-$db --reps 20 -v \
      --out $M/rows-$db-$round > $M/gemm-$db-$round.txt 2>&1
    echo "== $db $round exit $?" >> $M/gemm-$db-$round.txt; grep -E "^== " $M/gemm-$db-$round.txt
    grep -h "f32 col NN" $M/gemm-$db-$round.txt | cut -c1-260; snap
  done
done
