#!/usr/bin/env bash
# Issue 27, call Y: `thin` with its batches prefetched (PIPE=1) and thin tiles of every multiple of
# 4 (BT 36 for 33 columns). The CUDA and OpenCL tests of thin (every BLAS case, split-K, PIPE),
# failing instead of skipping; 4097x33x2049 kernel alone next to cuBLAS in both layouts, the
# fitted configurations and variants; then the held-out thin suites with the committed database,
# the build after and before (.gpu/gemmlab-before.xz) in the same call.
set -u
M=/tmp/my; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-y
snap() { tar cJf "$OUT/call-y.tar.xz" -C $M .; }
xz -dc .gpu/tests-thin.xz > /tmp/tt && chmod +x /tmp/tt
GEMMLAB_REQUIRE_CUDA=1 timeout 150 /tmp/tt --test-threads=1 > $M/tests-thin.txt 2>&1; echo "== exit $?" >> $M/tests-thin.txt
grep -h -E "test result|checked runs|panicked|== exit" $M/tests-thin.txt; snap
i=0
while read -r lay sizes cfg; do
  i=$((i+1)); D=""; for x in $cfg; do D="$D --define $x"; done
  timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels thin --layout $lay --sizes $sizes $D --reps 10 \
    --out $M/cmp-$i > $M/cmp-$i.txt 2>&1; echo "== exit $?" >> $M/cmp-$i.txt
  echo "== $i $lay $sizes $cfg"; grep -E "^ *(thin|cublas)|error|== exit" $M/cmp-$i.txt | cut -c1-150 | head -6
  snap
done <<'LIST'
col 4097x33x2049 SIDE=1 BT=40 TL=2 THREADS=128 KV=16 SPLITK=16
col 4097x33x2049 SIDE=1 BT=36 TL=2 THREADS=128 KV=16 SPLITK=16
col 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=0
col 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1
col 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=128 KV=8 KC=32 SPLITK=16 PIPE=1
col 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=8 PIPE=1
col 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=32 PIPE=1
col 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=64 SPLITK=16 PIPE=1
col 4097x33x2049 SIDE=1 BT=36 TL=1 THREADS=256 KV=16 KC=32 SPLITK=16 PIPE=1
row 4097x33x2049 SIDE=0 BT=36 TL=2 THREADS=128 KV=16 SPLITK=16
row 4097x33x2049 SIDE=0 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1
row 4097x33x2049 SIDE=0 BT=36 TL=1 THREADS=128 KV=16 SPLITK=8 XS=1
LIST
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
cp /tmp/g /tmp/g-after
for step in "thin-3 after" "thin-3 before" "thin after" "thin before"; do
  set -- $step
  timeout 100 /tmp/g-$2 gemm --device h200 --backends cuda,opencl --suite suites/$1.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$1-$2 > $M/gemm-$1-$2.txt 2>&1
  echo "== $1 $2 exit $?"; grep -E "geometric" $M/gemm-$1-$2.txt
  snap
done
