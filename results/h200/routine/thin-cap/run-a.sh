#!/usr/bin/env bash
# Issue 27, call A: thin's pipelined fit under a register cap. NVIDIA's OpenCL built the
# PIPE=1 fit at 4097x33x2049 with 159 registers where NVRTC took 128, and ran 64% of cuBLAS
# against 90%. Kernel alone next to cuBLAS, both toolchains: the fit as it compiles, without
# launch bounds (NVIDIA's OpenCL drops a cap beside reqd_work_group_size), and capped at 128
# and 96; the row-major call's fits likewise; the 1000^3 in-place kernel on OpenCL at its own
# and CUDA's entries, with .ca copies and a cap. Then held-out thin suite 3, build before
# (746f484) and after (the capped fit among the choices a call without an entry times).
set -u
M=/tmp/ma; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-a
snap() { tar cJf "$OUT/call-a.tar.xz" -C $M .; }
i=0
while read -r lay sizes kern cap cfg; do
  i=$((i+1)); D=""; for x in $cfg; do D="$D --define $x"; done
  C=""; [ "$cap" != none ] && C="--max-registers $cap"
  timeout 45 /tmp/g-after compare --device h200 --backends cuda,opencl --kernels $kern --layout $lay --sizes $sizes $D $C --reps 10 \
    --out $M/cmp-$i > $M/cmp-$i.txt 2>&1; echo "== exit $?" >> $M/cmp-$i.txt
  echo "== $i $lay $sizes $kern cap=$cap $cfg"; grep -E "^ *($kern|cublas)|rror|== exit" $M/cmp-$i.txt | cut -c1-160 | head -6
  snap
done <<'LIST'
col 4097x33x2049 thin none SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1
col 4097x33x2049 thin none SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1 USE_BOUNDS=0
col 4097x33x2049 thin 128 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1 USE_BOUNDS=0
col 4097x33x2049 thin 96 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1 USE_BOUNDS=0
col 4097x33x2049 thin 128 SIDE=1 BT=36 TL=1 THREADS=128 KV=16 KC=64 SPLITK=16 PIPE=1 USE_BOUNDS=0
row 4097x33x2049 thin none SIDE=0 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1 USE_BOUNDS=0
row 4097x33x2049 thin 128 SIDE=0 BT=36 TL=1 THREADS=128 KV=16 KC=32 SPLITK=16 PIPE=1 USE_BOUNDS=0
row 4097x33x2049 thin 168 SIDE=0 BT=36 TL=1 THREADS=128 KV=16 SPLITK=8 XS=1 USE_BOUNDS=0
row 4097x33x2049 thin 128 SIDE=0 BT=36 TL=1 THREADS=128 KV=16 SPLITK=8 XS=1 USE_BOUNDS=0
col 1000x1000x1000 simtdirect none ALONG_MN=0 BK=16 BM=128 BN=64 GROUP=8 SPLITK=3 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 SMEM_PAD=1
col 1000x1000x1000 simtdirect none ALONG_MN=1 BK=16 BM=64 BN=64 GROUP=8 SPLITK=2 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 USE_BOUNDS=1
col 1000x1000x1000 simtdirect none ALONG_MN=1 BK=16 BM=64 BN=64 GROUP=8 SPLITK=2 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 CP_CA=1 USE_BOUNDS=1
col 1000x1000x1000 simtdirect 128 ALONG_MN=1 BK=16 BM=64 BN=64 GROUP=8 SPLITK=2 STAGES=3 STREAMK=0 TM=8 TN=8 WM=64 WN=32 ASYNC_COPY=1 CP_CA=1 USE_BOUNDS=0
LIST
for step in "thin-3 after" "thin-3 before"; do
  set -- $step
  timeout 110 /tmp/g-$2 gemm --device h200 --backends cuda,opencl --suite suites/$1.txt --db results/tuned --reps 10 -v \
    --out $M/rows-$1-$2 > $M/gemm-$1-$2.txt 2>&1
  echo "== $1 $2 exit $?"; grep -E "geometric" $M/gemm-$1-$2.txt
  snap
done
