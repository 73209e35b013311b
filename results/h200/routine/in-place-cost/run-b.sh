#!/usr/bin/env bash
# Issue 27, 2026-11-30 (eleventh session), call B: the in-place kernel with whole tiles copied
# without bounds (WHOLE_TILE) against the build before it (.gpu/gemmlab-old.xz), same calls:
# (1) call A's `compare` matrix, both binaries alternated; (2) the routine at 1000^3 with the
# committed database, both binaries alternated; (3) 1000^3 re-tuned in the call's form (new
# binary) into a copy of the database; (4) the default suite with it; (5) simt_direct's odd-size
# matrix on both toolchains, failing instead of skipping.
set -u
M=/tmp/mb; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-b.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g-new && chmod +x /tmp/g-new
xz -dc .gpu/gemmlab-old.xz > /tmp/g-old && chmod +x /tmp/g-old
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-b
T="--define BM=64 --define BN=64 --define BK=16 --define WM=64 --define WN=32 --define TM=8 --define TN=8 --define STAGES=3 --define GROUP=8 --define ASYNC_COPY=1 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define KMAJOR_A=0 --define KMAJOR_B=1"
FF="--define FIXED_FORM=1 --define ALONG_MN=0"
run() { # name binary kernel sizes defines...
  local name=$1 b=$2 k=$3 s=$4; shift 4
  timeout 60 stdbuf -oL /tmp/g-$b compare --device h200 --backends cuda,opencl --kernels $k --sizes $s --reps 20 $T "$@" \
    --out $M/rows-$name > $M/$name.txt 2>&1
  echo "== $name exit $?" >> $M/$name.txt; tail -1 $M/$name.txt; snap
}
run simt-kt-s1 new simt 1024,960 --define KTILE_B=1 --define SPLITK=1
for b in old new; do
  run direct-kt-s1-$b $b simtdirect 1024,960,1000 $FF --define KTILE_B=1 --define SPLITK=1
  run direct-kt-s2-$b $b simtdirect 1024,960,1000 $FF --define KTILE_B=1 --define SPLITK=2
  run direct-ak-s2-$b $b simtdirect 1024,960,1000 $FF --define ASYNC_ALONG_K=1 --define SPLITK=2
done
for round in 1 2; do
  for b in old new; do
    timeout 40 stdbuf -oL /tmp/g-$b gemm --device h200 --backends cuda,opencl --sizes 1000 --reps 20 -v \
      --out $M/rows-gemm-$b-$round > $M/gemm-$b-$round.txt 2>&1
    echo "== gemm $b $round exit $?" >> $M/gemm-$b-$round.txt; grep -hE "^== |^  1000x" $M/gemm-$b-$round.txt | cut -c1-100; snap
  done
done
printf '1000x1000x1000 col NN\n' > $M/suite.txt
mkdir -p $M/db; cp results/tuned/*.json $M/db/
for tc in cuda opencl; do
  timeout 80 stdbuf -oL /tmp/g-new tune --device h200 --backends $tc --suite $M/suite.txt --kernels simtdirect \
    --define FIXED_FORM=1 --define KMAJOR_A=0 --define KMAJOR_B=1 --define ALONG_MN=0 \
    --time-limit 35 --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db $M/db --store $M/store \
    --out $M/tune-suite-$tc > $M/tune-suite-$tc.txt 2>&1
  echo "== tune --suite $tc exit $?" >> $M/tune-suite-$tc.txt; grep -E "^== |routine on|tried" $M/tune-suite-$tc.txt | cut -c1-250; snap
done
timeout 110 stdbuf -oL /tmp/g-new gemm --device h200 --backends cuda,opencl --suite suites/routine.txt --db $M/db \
  --reps 10 -v --out $M/rows > $M/suite.txt.out 2>&1
echo "== suite exit $?" >> $M/suite.txt.out; grep -E "^== |geometric" $M/suite.txt.out; snap
xz -dc .gpu/tests/simt_direct.xz > /tmp/t-sd && chmod +x /tmp/t-sd
export GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1
timeout 170 stdbuf -oL /tmp/t-sd --exact every_blas_case_verifies_in_place_at_odd_sizes --nocapture > $M/tests-opencl.txt 2>&1 &
timeout 170 stdbuf -oL /tmp/t-sd --exact cuda_every_blas_case_verifies_in_place_at_odd_sizes --nocapture > $M/tests-cuda.txt 2>&1 &
wait
grep -hE "test result|checked runs|panicked|FAILED" $M/tests-opencl.txt $M/tests-cuda.txt; snap
