#!/usr/bin/env bash
# Issue 27, 2026-11-30 (eleventh session), call A: where the in-place kernel loses against the
# packed one on the same tiles. `compare` (the kernel alone, warm, back to back, next to cuBLAS)
# of simt and simtdirect FIXED_FORM (col NN's form: B read along K) with one configuration,
# at 1024^3 (whole tiles), 960^3 (whole tiles, 15 x 15) and 1000^3 (edges, K tail); then ncu
# over the same kernels (CUDA) for instructions and stalls.
set -u
M=/tmp/ma; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-a.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-a
T="--define BM=64 --define BN=64 --define BK=16 --define WM=64 --define WN=32 --define TM=8 --define TN=8 --define STAGES=3 --define GROUP=8 --define ASYNC_COPY=1 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define KMAJOR_A=0 --define KMAJOR_B=1"
KT="--define KTILE_B=1"
AK="--define ASYNC_ALONG_K=1"
FF="--define FIXED_FORM=1 --define ALONG_MN=0"
run() { # name kernel sizes defines...
  local name=$1 k=$2 s=$3; shift 3
  timeout 60 stdbuf -oL /tmp/g compare --device h200 --backends cuda,opencl --kernels $k --sizes $s --reps 20 $T "$@" \
    --out $M/rows-$name > $M/$name.txt 2>&1
  echo "== $name exit $?" >> $M/$name.txt
  grep -E "^== |us|x cuBLAS|cuBLAS" $M/$name.txt | cut -c1-160 | tail -12; snap
}
for round in 1 2; do
  run simt-kt-s1-$round simt 1024,960 $KT --define SPLITK=1
  run direct-kt-s1-$round simtdirect 1024,960,1000 $FF $KT --define SPLITK=1
  run simt-kt-s2-$round simt 1024,960 $KT --define SPLITK=2
  run direct-kt-s2-$round simtdirect 1024,960,1000 $FF $KT --define SPLITK=2
  run direct-ak-s2-$round simtdirect 1024,960,1000 $FF $AK --define SPLITK=2
done
NCU="gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,smsp__inst_executed_op_shared_ld.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,sm__cycles_elapsed.avg.per_second"
nc() { # name kernel sizes defines...
  local name=$1 k=$2 s=$3; shift 3
  timeout 90 ncu --clock-control none --csv --page raw --metrics $NCU --log-file $M/ncu-$name.csv \
    /tmp/g compare --device h200 --backends cuda --kernels $k --sizes $s --batch 1 --reps 3 --warmup 1 $T "$@" \
    --out $M/ncu-rows-$name > $M/ncu-$name.txt 2>&1
  echo "== ncu $name exit $?" >> $M/ncu-$name.txt; tail -1 $M/ncu-$name.txt; snap
}
nc simt-kt-s1 simt 1024 $KT --define SPLITK=1
nc direct-kt-s1 simtdirect 1024,1000 $FF $KT --define SPLITK=1
nc direct-kt-s2 simtdirect 1024,1000 $FF $KT --define SPLITK=2
