#!/usr/bin/env bash
# Issue 27, 2026-11-29 (sixth session), call F: held-out thin-M col NN calls (thin-m-nn.txt, no
# entry of their own: the routine re-tiles its nearest entries and times them on the first run),
# both toolchains next to cuBLAS, with the database before this change (fb73a24's results/tuned,
# carried as .gpu/db-before) and after it (results/tuned, with 128x4096x4096 NN's ASYNC_ALONG_K
# entries), same binary.
set -u
M=/tmp/mf; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-f.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-f
mkdir -p /tmp/db-before /tmp/db-after; cp .gpu/db-before/*.json /tmp/db-before/; cp results/tuned/*.json /tmp/db-after/
for db in before after; do
  timeout 95 stdbuf -oL /tmp/g gemm --device h200 --backends cuda,opencl --suite results/h200/routine/along-k/thin-m-nn.txt \
    --db /tmp/db-$db --reps 10 -v --out $M/rows-$db > $M/gemm-$db.txt 2>&1
  echo "== $db exit $?"; grep -E "geometric|^ +[0-9]+x" $M/gemm-$db.txt | cut -c1-100
  snap
done
