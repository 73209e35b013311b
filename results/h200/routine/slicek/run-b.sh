#!/usr/bin/env bash
# Issue 27, 2026-11-30 (fourteenth session), call B: the routine on holdout-5 with slice-K
# timed beside the re-tilings (new: SLICEK=2 re-tilings added to the candidates, none taken
# away) and without (old, 25361c7), in the same call; first NVIDIA OpenCL's build log of a
# sliced configuration (call A's OpenCL builds printed "1 warning generated").
set -u
M=/tmp/mb; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-b.tar.xz" -C $M .; }
for b in gemmlab gemmlab-old; do xz -dc .gpu/$b.xz > /tmp/$b && chmod +x /tmp/$b; done
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-b
T="--define BM=64 --define BN=64 --define WM=32 --define WN=32 --define TM=4 --define TN=8 --define BK=16"
timeout 60 /tmp/gemmlab build --device h200 --backends opencl --kernel simtdirect $T --define SLICEK=2 \
  --define SPLITK=2 --define REDUCE=1 --out $M/build-sliced > $M/build-sliced.txt 2>&1
timeout 60 /tmp/gemmlab build --device h200 --backends opencl --kernel simtdirect $T \
  --define SPLITK=2 --define REDUCE=1 --out $M/build-plain > $M/build-plain.txt 2>&1
grep -iE -A3 "warning" $M/build-*.txt $M/build-*/*/*.log 2>/dev/null | head -20; snap
for v in new old; do
  b=/tmp/gemmlab; [ $v = old ] && b=/tmp/gemmlab-old
  s=$(date +%s)
  timeout 240 $b gemm --device h200 --backends cuda,opencl --suite suites/holdout-5.txt --db results/tuned \
    --reps 10 -v --out $M/rows-h5-$v > $M/gemm-h5-$v.txt 2>&1
  echo "== exit $? after $(( $(date +%s) - s )) s" >> $M/gemm-h5-$v.txt
  grep -hE "geometric|== exit" $M/gemm-h5-$v.txt; snap
done
