#!/usr/bin/env bash
# Issue 27, 2026-11-29 (sixth session), call C: why the routine's ASYNC_ALONG_K twins ran slower
# than a transposing pack (call B: 77.9 us against 60.4 at 1024^3 col NN). The kernel alone
# (compare, operands in the form each variant reads, cuBLAS in the same run), both toolchains, at
# the tuned 1024^3 tiles and at 128x4096x4096's, each operand read along K: through registers
# (KMAJOR_RUNS off/on), with 4-byte cp.async (pad off/on); and B read along N (what the pack feeds).
# Then Nsight Compute's shared-store bank conflicts and instruction counts for the cp.async forms.
set -u
M=/tmp/mc; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-c
snap() { tar cJf "$OUT/call-c.tar.xz" -C $M .; }
T1="--define BK=16 --define BM=64 --define BN=64 --define GROUP=16 --define SPLITK=2 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define USE_BOUNDS=0"
T2="--define BK=16 --define BM=128 --define BN=64 --define GROUP=8 --define SPLITK=6 --define STAGES=2 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define USE_BOUNDS=0"
i=0
for size_tiles in "1024 T1" "128x4096x4096 T2"; do
  set -- $size_tiles; S=$1; T=${!2}
  for v in "KMAJOR_B=0 ASYNC_COPY=1" "KMAJOR_B=1 ASYNC_COPY=0" "KMAJOR_B=1 ASYNC_COPY=0 KMAJOR_RUNS=1 SMEM_PAD=1" \
           "KMAJOR_B=1 ASYNC_COPY=1" "KMAJOR_B=1 ASYNC_COPY=1 ASYNC_ALONG_K=1" "KMAJOR_B=1 ASYNC_COPY=1 ASYNC_ALONG_K=1 SMEM_PAD=1"; do
    i=$((i+1)); D=""; for d in $v; do D="$D --define $d"; done
    timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes $S $T $D --reps 20 \
      --out $M/c-$i > $M/c-$i.txt 2>&1
    echo "== $i $S $v (exit $?)"; grep -E "^ *(simt|cublas) " $M/c-$i.txt | cut -c1-110
  done
  snap
done
for v in "KMAJOR_B=1 ASYNC_COPY=1 ASYNC_ALONG_K=1" "KMAJOR_B=1 ASYNC_COPY=1 ASYNC_ALONG_K=1 SMEM_PAD=1" "KMAJOR_B=0 ASYNC_COPY=1"; do
  i=$((i+1)); D=""; for d in $v; do D="$D --define $d"; done
  timeout 90 ncu --clock-control none --launch-skip 8 --launch-count 1 -k regex:simt_gemm \
    --metrics gpu__time_duration.sum,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__data_pipe_lsu_wavefronts.sum,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio \
    /tmp/g compare --device cuda --backends cuda --kernels simt --sizes 1024 $T1 $D --reps 3 --out $M/n-$i > $M/ncu-$i.txt 2>&1
  echo "== ncu $i $v (exit $?)"; grep -E "gpu__time|inst_executed|bank_conflicts|wavefronts|ldgsts|stalled" $M/ncu-$i.txt | head -12
  snap
done
