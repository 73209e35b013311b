#!/usr/bin/env bash
# Issue 27, 2026-11-30 (twelfth session), call G: the in-place kernel with its edges clamped
# (CLAMP_EDGES). `compare` (the kernel alone, warm, next to cuBLAS) of simtdirect compiled for
# col NN's form at 1000^3 (K = 125 tiles of 8; M, N multiples of 4, not of the tiles), each
# configuration with and without, and packed simt at 1024^3 on the same tiles; then the default
# suite on CUDA with the routine clamping where a call takes it and without
# (GEMMLAB_CLAMP_EDGES=0), alternated; then the in-place kernel's CUDA test matrix.
set -u
M=/tmp/mg; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-g.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-g
FF="--define FIXED_FORM=1 --define ALONG_MN=0 --define KMAJOR_A=0 --define KMAJOR_B=1"
# The database's 1000^3 col NN choice on CUDA (results/tuned/nvidia-h200.json).
DB="--define BK=8 --define BM=128 --define BN=64 --define GROUP=8 --define SPLITK=2 --define STAGES=2 --define STREAMK=0 --define TM=8 --define TN=8 --define WM=32 --define WN=64 --define ASYNC_ALONG_K=1 --define ASYNC_COPY=1 --define CP_CA=1 --define KMAJOR_RUNS=0 --define RASTER=0 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define USE_RESTRICT=0 --max-registers 128"
# 64 x 64 tiles, BK 8, B kept along K, copied by cp.async.
KT="--define BK=8 --define BM=64 --define BN=64 --define GROUP=8 --define STAGES=4 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=1 --define KTILE_B=1 --define SMEM_PAD=1"
run() { # name kernel sizes backends defines...
  local name=$1 k=$2 s=$3 b=$4; shift 4
  timeout 60 stdbuf -oL /tmp/g compare --device h200 --backends $b --kernels $k --sizes $s --reps 20 "$@" \
    --out $M/rows-$name > $M/$name.txt 2>&1
  echo "== $name exit $?" >> $M/$name.txt
  grep -E "^== |x cuBLAS|registers" $M/$name.txt | cut -c1-170 | tail -8; snap
}
for round in 1 2; do
  run db-$round simtdirect 1000 cuda $FF $DB
  run db-clamp-$round simtdirect 1000 cuda $FF $DB --define CLAMP_EDGES=1
  run kt-s1-$round simtdirect 1000 cuda,opencl $FF $KT --define SPLITK=1
  run kt-s1-clamp-$round simtdirect 1000 cuda,opencl $FF $KT --define SPLITK=1 --define CLAMP_EDGES=1
  run kt-s2-$round simtdirect 1000 cuda,opencl $FF $KT --define SPLITK=2
  run kt-s2-clamp-$round simtdirect 1000 cuda,opencl $FF $KT --define SPLITK=2 --define CLAMP_EDGES=1
done
run simt-kt-s1 simt 1024 cuda,opencl $KT --define KMAJOR_A=0 --define KMAJOR_B=1 --define SPLITK=1
for run in 1a 0b 1c 0d; do
  GEMMLAB_CLAMP_EDGES=${run:0:1} timeout 100 stdbuf -oL /tmp/g gemm --device h200 --backends cuda --suite suites/routine.txt \
    --reps 10 -v --out $M/rows-clamp$run > $M/suite-clamp$run.txt 2>&1
  echo "== suite clamp=$run exit $?" >> $M/suite-clamp$run.txt; grep -hE "^== |geometric|1000x1000x1000 col NN|CLAMP" $M/suite-clamp$run.txt | cut -c1-400 | head -8; snap
done
export GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
xz -dc .gpu/tests/simt_direct.xz > /tmp/t-simt_direct && chmod +x /tmp/t-simt_direct
timeout 120 stdbuf -oL /tmp/t-simt_direct --nocapture > $M/t-simt_direct.txt 2>&1; echo "== exit $?" >> $M/t-simt_direct.txt
grep -hE "test result|checked|panicked|== exit" $M/t-*.txt | cut -c1-200; snap
