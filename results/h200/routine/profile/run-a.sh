#!/usr/bin/env bash
# Issue 27, session of 2026-11-29, call A: what the weak calls' kernels do (ncu, CUDA side, routine
# and cuBLAS), the CUDA switch test, then CUDA's tune --suite over the K-major calls.
set -u
M=/tmp/ma; rm -rf $M; mkdir -p $M
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
NCU="gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,dram__bytes_read.sum,sm__cycles_elapsed.avg.per_second"
timeout 150 ncu --clock-control none --csv --page raw --metrics $NCU --log-file $M/ncu.csv \
  /tmp/g gemm --device h200 --backends cuda --suite .gpu/weak.txt --batch 1 --reps 2 -v > $M/ncu-gemm.txt 2>&1
echo "== ncu exit $?" >> $M/ncu-gemm.txt
tail -2 $M/ncu-gemm.txt; wc -l $M/ncu.csv
tar cJf "$OUT/call-a.tar.xz" -C $M .
xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/ck && chmod +x /tmp/ck
GEMMLAB_REQUIRE_CUDA=1 timeout 170 /tmp/ck --test-threads=1 cuda_each_switch_alone > $M/test-switches.txt 2>&1
echo "== exit $?" >> $M/test-switches.txt
grep -E "test |test result|checked|== exit" $M/test-switches.txt | tail -8
tar cJf "$OUT/call-a.tar.xz" -C $M .
rm -rf .gpu/db
SUITE=.gpu/kmajor.txt TL=2 TT=${TTC:-150} SKIP_GEMM=1 bash scripts/gpu-batch.sh routine-suite-cuda > $M/part-cuda.txt 2>&1
cp -r /tmp/gemmlab-routine-suite-cuda/db $M/db-cuda
cp /tmp/gemmlab-routine-suite-cuda/tune-suite-cuda.txt $M/
grep -E 'routine on' $M/tune-suite-cuda.txt | sed 's/candidates.*//' | cut -c1-300
tar cJf "$OUT/call-a.tar.xz" -C $M .
