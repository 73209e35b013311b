#!/usr/bin/env bash
# Issue 27, call H: the routine's cost model given NVIDIA OpenCL's memory bandwidth through NVML
# (it had the 500 GB/s fallback whenever CUDA was not in the process). The CUDA backend tests,
# failing instead of skipping (the new one: NVML's bandwidth for NVIDIA OpenCL against the CUDA
# driver's); call G's three calls with the OpenCL routine alone, build before (3fc0874) and after;
# held-out thin suite 3 with the OpenCL routine alone, build after (call F ran it before).
set -u
M=/tmp/mh; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g-after && chmod +x /tmp/g-after
xz -dc .gpu/gemmlab-before.xz > /tmp/g-before && chmod +x /tmp/g-before
xz -dc .gpu/tests-cuda-backend.xz > /tmp/tcb && chmod +x /tmp/tcb
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-h
snap() { tar cJf "$OUT/call-h.tar.xz" -C $M .; }
GEMMLAB_REQUIRE_CUDA=1 timeout 60 /tmp/tcb --test-threads=1 > $M/tests-cuda-backend.txt 2>&1; echo "== exit $?" >> $M/tests-cuda-backend.txt
grep -E "^test |test result|panicked|== exit" $M/tests-cuda-backend.txt; snap
for b in after before; do
  timeout 90 /tmp/g-$b gemm --device h200 --backends opencl --suite results/h200/routine/near-ties/alone.txt --db results/tuned --reps 10 -v \
    --out $M/rows-alone-$b > $M/gemm-alone-$b.txt 2>&1
  echo "== alone $b exit $?"; grep -E "^  [0-9]" $M/gemm-alone-$b.txt | cut -c1-90
  snap
done
timeout 150 /tmp/g-after gemm --device h200 --backends opencl --suite suites/thin-3.txt --db results/tuned --reps 10 -v \
  --out $M/rows-thin-3-after > $M/gemm-thin-3-after.txt 2>&1
echo "== thin-3 after exit $?"; grep -E "^  [0-9]" $M/gemm-thin-3-after.txt | cut -c1-90
snap
