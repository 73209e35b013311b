#!/usr/bin/env bash
# Issue 27, 2026-11-29 (ninth session), call B: the tuner's screen and prune compare a point's single
# launch with the fastest single launch so far (no longer with timed medians, which pruned 397 of 400
# thin points in call A). (1) call A's thin search again with the fixed tuner; (2) `tune --suite`
# over the default suite's two 4097x33x2049 calls, families thin, simtdirect and simt, into a copy
# of the committed database, CUDA then OpenCL.
set -u
M=/tmp/ub; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-b.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-b
for tc in cuda opencl; do
  timeout 140 stdbuf -oL /tmp/g tune --device h200 --backends $tc --kernels thin --layout row --sizes 4097x33x2049 \
    --strategy random --max-configs 400 --time-limit 110 --define SIDE=0 --define THREADS=128 --define XS=0 \
    --values BT=36,40 --values KL=1,2,4,8 --values KV=4,8,16 --values TL=1,2 --values PIPE=0,1 \
    --values SPLITK=4,8,12,16 --values KC=32,64,128 --switches none --caps 128 --no-db \
    --store $M/store-$tc --out $M/tune-$tc --top 12 > $M/tune-$tc.txt 2>&1
  echo "== tune $tc exit $?" >> $M/tune-$tc.txt; grep -E "tried|best while" $M/tune-$tc.txt; grep -A8 "^final round" $M/tune-$tc.txt | cut -c1-160; snap
done
printf '4097x33x2049 row NN\n4097x33x2049 col NN\n' > $M/suite.txt
mkdir -p $M/db; cp results/tuned/*.json $M/db/
for tc in cuda opencl; do
  timeout 120 stdbuf -oL /tmp/g tune --device h200 --backends $tc --suite $M/suite.txt --kernels thin,simtdirect,simt \
    --time-limit 20 --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db --store $M/store-suite \
    --out $M/tune-suite-$tc > $M/tune-suite-$tc.txt 2>&1
  echo "== tune --suite $tc exit $?" >> $M/tune-suite-$tc.txt; grep -E "^== |routine on|tried" $M/tune-suite-$tc.txt | cut -c1-260; snap
done
