#!/usr/bin/env bash
# Issue 27, 2026-11-30 (thirteenth session), call O: how far the routine's first-run choice on
# held-out calls is from the best its kernels reach at the call. `tune --suite` searches each
# family at the call (seeded by the database's neighbours) and times the routine with each
# best; the database is a copy (`db/`), so nothing committed changes. Then 1000^3 col NN with
# a longer search of the SIMT kernels.
set -u
M=/tmp/mo; rm -rf $M; mkdir -p $M/db $M/db2
snap() { tar cJf "$OUT/call-o.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-o
cp results/tuned/nvidia-h200.json $M/db/
cp results/tuned/nvidia-h200.json $M/db2/
timeout 300 stdbuf -oL /tmp/g tune --device h200 --backends cuda --kernels xgemmdirect,xgemm,simt,simtdirect,thin \
  --suite results/h200/routine/headroom/lows.txt --time-limit 7 --max-configs 100000 --top 1 --warmup 1 --reps 5 \
  --search-reps 2 --db $M/db --out $M/tune > $M/tune-lows.txt 2>&1
echo "== tune lows exit $?" >> $M/tune-lows.txt
grep -hE "^== |routine on" $M/tune-lows.txt | cut -c1-400; snap
echo "1000x1000x1000" > $M/square.txt
timeout 200 stdbuf -oL /tmp/g tune --device h200 --backends cuda --kernels simt,simtdirect \
  --suite $M/square.txt --time-limit 60 --max-configs 100000 --top 1 --warmup 1 --reps 5 \
  --search-reps 2 --db $M/db2 --out $M/tune2 > $M/tune-square.txt 2>&1
echo "== tune square exit $?" >> $M/tune-square.txt
grep -hE "^== |routine on" $M/tune-square.txt | cut -c1-400; snap
