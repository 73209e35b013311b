#!/usr/bin/env bash
# Issue 27, 2026-11-29 (ninth session), call D: the default suite (suites/routine.txt) on both
# toolchains next to cuBLAS, with call C's database (.gpu/db-new: the committed one with its
# re-tuned entries) and with the committed one, same binary, same call.
set -u
M=/tmp/ud; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-d.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-d
for db in new old; do
  mkdir -p $M/db-$db
  if [ $db = new ]; then cp .gpu/db-new/*.json $M/db-$db/; else cp results/tuned/*.json $M/db-$db/; fi
  timeout 210 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db $M/db-$db \
    --reps 10 -v --out $M/rows-$db > $M/gemm-$db.txt 2>&1
  echo "== $db exit $?" >> $M/gemm-$db.txt; grep -E "^== |geometric|^ +[0-9]+x" $M/gemm-$db.txt | cut -c1-100; snap
done
