#!/usr/bin/env bash
# Issue 27, call AA: the default suite on CUDA with the committed database and with call Z's
# (.gpu/db-z: 4097x33x2049 col NN now thin with PIPE=1), alternately in one call; then held-out
# thin suite 3 (calls nobody tuned for) with the build after and before (.gpu/gemmlab-before.xz).
set -u
M=/tmp/maa; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-y
snap() { tar cJf "$OUT/call-aa.tar.xz" -C $M .; }
for db in results/tuned .gpu/db-z; do
  n=$(basename $db)
  timeout 80 /tmp/g-after gemm --device h200 --backends cuda --suite suites/routine.txt --db $db --reps 10 -v \
    --out $M/rows-routine-$n > $M/gemm-routine-$n.txt 2>&1
  echo "== routine $n exit $?"; grep -E "geometric|4097x33" $M/gemm-routine-$n.txt
  snap
done
for b in after before; do
  timeout 150 /tmp/g-$b gemm --device h200 --backends cuda,opencl --suite suites/thin-3.txt --db results/tuned --reps 10 -v \
    --out $M/rows-thin-3-$b > $M/gemm-thin-3-$b.txt 2>&1
  echo "== thin-3 $b exit $?"; grep -E "geometric" $M/gemm-thin-3-$b.txt
  snap
done
