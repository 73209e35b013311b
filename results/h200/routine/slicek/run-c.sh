#!/usr/bin/env bash
# Issue 27, 2026-11-30 (fourteenth session), call C: NVIDIA OpenCL's build logs of sliced
# configurations under the switch sets the routine times (call B's OpenCL builds printed
# "1 warning generated"); then the routine with the sliced re-tilings ordered after every
# other choice (new) on holdout-4 against the build before slice-K (old, 25361c7), and on
# holdout-5 (against call B's old run).
set -u
M=/tmp/mc; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-c.tar.xz" -C $M .; }
for b in gemmlab gemmlab-old; do xz -dc .gpu/$b.xz > /tmp/$b && chmod +x /tmp/$b; done
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-c
S="--define BM=32 --define BN=32 --define WM=16 --define WN=32 --define TM=4 --define TN=4 --define BK=32 --define STAGES=3 --define SLICEK=2"
i=0
for k in simt simtdirect; do
  for h in "" "--define ASYNC_COPY=1" "--define ASYNC_COPY=1 --define SMEM_PAD=1" "--define USE_BOUNDS=0 --define RASTER=0" "--define KMAJOR_B=1 --define FIXED_FORM=1" "--define SPLITK=2 --define REDUCE=1"; do
    i=$((i+1))
    [ $k = simt ] && [[ "$h" == *FIXED_FORM* ]] && h="--define KMAJOR_B=1"
    timeout 60 /tmp/gemmlab build --device h200 --backends opencl --kernel $k $S $h --out $M/build-$i > $M/build-$i.txt 2>&1
    echo "== $k $h: exit $? warnings $(grep -ric warning $M/build-$i.txt $M/build-$i | awk -F: '{s+=$NF} END {print s}')" | tee -a $M/builds.txt
  done
done
grep -rih -B1 -A2 "warning" $M/build-* 2>/dev/null | head -12; snap
for v in old new; do
  b=/tmp/gemmlab; [ $v = old ] && b=/tmp/gemmlab-old
  s=$(date +%s)
  timeout 190 $b gemm --device h200 --backends cuda,opencl --suite suites/holdout-4.txt --db results/tuned \
    --reps 10 -v --out $M/rows-h4-$v > $M/gemm-h4-$v.txt 2>&1
  echo "== exit $? after $(( $(date +%s) - s )) s" >> $M/gemm-h4-$v.txt
  grep -hE "geometric|== exit" $M/gemm-h4-$v.txt; snap
done
s=$(date +%s)
timeout 190 /tmp/gemmlab gemm --device h200 --backends cuda,opencl --suite suites/holdout-5.txt --db results/tuned \
  --reps 10 -v --out $M/rows-h5-new > $M/gemm-h5-new.txt 2>&1
echo "== exit $? after $(( $(date +%s) - s )) s" >> $M/gemm-h5-new.txt
grep -hE "geometric|== exit" $M/gemm-h5-new.txt; snap
