#!/usr/bin/env bash
# Issue 27, call D: `sweep jit` (NVIDIA OpenCL's PTX through the CUDA driver's JIT next to both
# native builds) for the in-place kernel at CUDA's 1000^3 entry (operands read along M and N,
# cp.async copies, with and without launch bounds), where OpenCL ran 10% behind CUDA in call A,
# and for the packed kernel at OpenCL's 1024^3 entry.
set -u
M=/tmp/md; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-a
snap() { tar cJf "$OUT/call-d.tar.xz" -C $M .; }
i=0
while read -r kern sizes cfg; do
  i=$((i+1)); D=""; for x in $cfg; do D="$D --define $x"; done
  timeout 60 /tmp/g sweep jit --device h200 --kernels $kern --sizes $sizes $D --reps 10 --out $M/run-$i > $M/run-$i.txt 2>&1
  echo "== exit $?" >> $M/run-$i.txt
  echo "== $i $kern $sizes $cfg"; grep -E "^$kern|cuBLAS:|rror|== exit" $M/run-$i.txt | cut -c1-330 | head -4
  snap
done <<'LIST'
simtdirect 1000x1000x1000 ALONG_MN=1 BK=16 BM=64 BN=64 GROUP=8 SPLITK=2 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 USE_BOUNDS=1
simtdirect 1000x1000x1000 ALONG_MN=1 BK=16 BM=64 BN=64 GROUP=8 SPLITK=2 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 USE_BOUNDS=0
simt 1024x1024x1024 BK=16 BM=64 BN=64 GROUP=8 KMAJOR_A=0 KMAJOR_B=0 SPLITK=1 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1
LIST
