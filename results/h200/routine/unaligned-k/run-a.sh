#!/usr/bin/env bash
# Issue 27, 2026-11-29 (ninth session), call A: why `thin` is slow where its large operand is
# K-contiguous with an odd leading dimension (the default suite's 4097x33x2049 row NN). (1) Nsight
# Compute on the routine's kernels and cuBLAS's at that call; (2) thin's space at that call searched
# on both toolchains (kernel alone, next to cuBLAS), around the fits' choices.
set -u
M=/tmp/ua; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-a.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-a
NCU="gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sector_hit_rate.pct,lts__t_sector_hit_rate.pct,dram__bytes_read.sum,smsp__inst_executed.sum,sm__cycles_elapsed.avg.per_second"
echo "4097x33x2049 row NN" > $M/call.txt
for ex in ${NCU_RUNS-none simtdirect}; do
  arg=""; [ $ex = simtdirect ] && arg="--exclude simtdirect"
  timeout 120 ncu --clock-control none --csv --page raw --metrics $NCU --log-file $M/ncu-$ex.csv \
    /tmp/g gemm --device h200 --backends cuda --suite $M/call.txt $arg --batch 1 --reps 2 -v > $M/ncu-gemm-$ex.txt 2>&1
  echo "== ncu $ex exit $?" >> $M/ncu-gemm-$ex.txt; tail -3 $M/ncu-gemm-$ex.txt; snap
done
for tc in cuda opencl; do
  timeout 150 stdbuf -oL /tmp/g tune --device h200 --backends $tc --kernels thin --layout row --sizes 4097x33x2049 \
    --strategy random --max-configs 400 --time-limit 120 --define SIDE=0 --define THREADS=128 --define XS=0 \
    --values BT=36,40 --values KL=1,2,4,8 --values KV=4,8,16 --values TL=1,2 --values PIPE=0,1 \
    --values SPLITK=4,8,12,16 --values KC=32,64,128 --switches none --caps 128 --no-db \
    --store $M/store-$tc --out $M/tune-$tc --top 12 > $M/tune-$tc.txt 2>&1
  echo "== tune $tc exit $?" >> $M/tune-$tc.txt; grep -A16 "^final round" $M/tune-$tc.txt | cut -c1-160; snap
done
