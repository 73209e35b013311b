#!/usr/bin/env bash
# Issue 27, call N: the `thin` kernel at 4097x33x2049 (both layouts) and nearby thin calls, kernel
# alone next to cuBLAS, fitted configuration and variants (tune --suite never times it).
set -u
M=/tmp/mn; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-n
i=0
while read -r lay sizes cfg; do
  i=$((i+1)); D=""; for x in $cfg; do D="$D --define $x"; done
  timeout 50 /tmp/g compare --device h200 --backends cuda,opencl --kernels thin --layout $lay --sizes $sizes $D --reps 10 \
    --out $M/cmp-$i > $M/cmp-$i.txt 2>&1; echo "== exit $?" >> $M/cmp-$i.txt
  echo "== $i $lay $sizes $cfg"; grep -E "^thin|error|== exit" $M/cmp-$i.txt | cut -c1-150 | head -6
  tar cJf "$OUT/call-n.tar.xz" -C $M .
done <<'LIST'
col 4097x33x2049,4097x48x2049 KV=16 SIDE=1 BT=40 TL=2 THREADS=128 SPLITK=16 XS=0
col 4097x33x2049 KV=16 SIDE=1 BT=40 TL=1 THREADS=128 SPLITK=8 XS=0
col 4097x33x2049 KV=16 SIDE=1 BT=40 TL=2 THREADS=64 SPLITK=16 XS=0
col 4097x33x2049 KV=8 SIDE=1 BT=40 TL=2 THREADS=128 SPLITK=8 XS=0
col 4097x33x2049 KV=16 SIDE=1 BT=40 TL=1 THREADS=128 SPLITK=16 XS=1
col 4097x33x2049 KV=16 SIDE=1 BT=48 TL=2 THREADS=128 SPLITK=16 XS=0
row 4097x33x2049 KV=16 SIDE=0 BT=40 TL=2 THREADS=128 SPLITK=16 XS=0
row 4097x33x2049 KV=16 SIDE=0 BT=40 TL=1 THREADS=128 SPLITK=16 XS=1
LIST
