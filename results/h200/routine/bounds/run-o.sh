#!/usr/bin/env bash
# Issue 27, call O: the packed SIMT kernel and the in-place one with the same tiles at 1024^3
# (B transposed first for both; A and C in place), kernel alone next to cuBLAS, then both under
# Nsight Compute, and their SASS from the same PTX (ptxas, cuobjdump).
set -u
export PATH=$PATH:/usr/local/cuda/bin
M=/tmp/mo; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-o
T="--define BK=16 --define BM=64 --define BN=64 --define GROUP=16 --define SPLITK=2 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32 --define ASYNC_COPY=1 --define USE_BOUNDS=0"
snap() { tar cJf "$OUT/call-o.tar.xz" -C $M .; }
for s in 1024 1000; do
timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simt --sizes $s $T --define KMAJOR_A=0 --define KMAJOR_B=0 --reps 20 --out $M/simt-$s > $M/simt-$s.txt 2>&1
timeout 60 /tmp/g compare --device h200 --backends cuda,opencl --kernels simtdirect --sizes $s $T --define ALONG_MN=1 --reps 20 --out $M/direct-$s > $M/direct-$s.txt 2>&1
grep -E "^simt|prep|pack" $M/simt-$s.txt $M/direct-$s.txt | cut -c1-170
done
snap
NCU="gpu__time_duration.sum,launch__grid_size,launch__registers_per_thread,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,lts__t_sectors_srcunit_tex_op_read.sum,dram__bytes_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ldgsts.sum,sm__cycles_elapsed.avg.per_second"
for k in simt direct; do
  A="--define KMAJOR_A=0 --define KMAJOR_B=0"; K=simt; [ $k = direct ] && { A="--define ALONG_MN=1"; K=simtdirect; }
  timeout 120 ncu --clock-control none --csv --page raw --metrics $NCU -k regex:simt_gemm -c 6 --log-file $M/ncu-$k.csv \
    /tmp/g compare --device h200 --backends cuda --kernels $K --sizes 1024 $T $A --reps 2 --warmup 1 --batch 1 > $M/ncu-$k.txt 2>&1
  echo "== ncu $k exit $?"; wc -l $M/ncu-$k.csv
done
snap
for k in simt direct; do
  timeout 60 ptxas -arch=sm_90 -v .gpu/ptx/$k.ptx -o $M/$k.cubin > $M/ptxas-$k.txt 2>&1
  timeout 60 cuobjdump -sass $M/$k.cubin > $M/$k.sass 2>&1; wc -l $M/$k.sass
done
snap
