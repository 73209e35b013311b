#!/usr/bin/env bash
# Issue 27, 2026-11-30 (twelfth session), call I: where two held-out calls' kernels spend their
# time (ncu, CUDA, the kernel alone as `compare` runs it): 49x512x4608 (`simt` 32 x 64, stream-K 1,
# as chosen and BK 32 / 3 stages) and 784x128x1152 (`simtdirect` 128 x 64, split 6), with
# cuBLAS's kernels in the same process.
set -u
M=/tmp/mi; rm -rf $M; mkdir -p $M
snap() { tar cJf "$OUT/call-i.tar.xz" -C $M .; }
xz -dc .gpu/gemmlab.xz > /tmp/g && chmod +x /tmp/g
NCU="gpu__time_duration.sum,launch__grid_size,launch__block_size,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,lts__t_bytes.sum,dram__bytes.sum,sm__cycles_elapsed.avg.per_second"
C="--define GROUP=8 --define KMAJOR_A=0 --define KMAJOR_B=1 --define ASYNC_ALONG_K=1 --define ASYNC_COPY=1 --define CP_CA=1 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define BM=32 --define BN=64 --define SPLITK=1 --define STREAMK=1 --define TM=4 --define TN=4 --define WM=16 --define WN=32"
SW="--define ASYNC_ALONG_K=1 --define ASYNC_COPY=1 --define CP_CA=1 --define KMAJOR_RUNS=0 --define RASTER=0 --define SMEM_PAD=1 --define USE_BOUNDS=0 --define USE_RESTRICT=0 --max-registers 128"
A="--define ALONG_MN=0 --define FIXED_FORM=1 --define KMAJOR_A=0 --define KMAJOR_B=1 --define GROUP=8 $SW --define BM=128 --define BN=64 --define SPLITK=6 --define STREAMK=0 --define TM=8 --define TN=8 --define WM=32 --define WN=64 --define BK=8 --define STAGES=2"
nc() { local name=$1 k=$2 s=$3; shift 3
  timeout 100 ncu --clock-control none --csv --page raw --metrics $NCU --log-file $M/ncu-$name.csv \
    /tmp/g compare --device h200 --backends cuda --kernels $k --sizes $s --batch 1 --reps 3 --warmup 1 "$@" \
    --out $M/rows-$name > $M/$name.txt 2>&1
  echo "== $name exit $?"; snap; }
nc c-chosen simt 49x512x4608 $C --define BK=16 --define STAGES=2
nc c-bk32 simt 49x512x4608 $C --define BK=32 --define STAGES=3
nc a-chosen simtdirect 784x128x1152 $A
python3 - <<'PY'
import csv,glob,collections
for f in sorted(glob.glob('/tmp/mi/ncu-*.csv')):
    rows=list(csv.reader(open(f)))
    hdr=rows[0]; data=[r for r in rows[2:] if len(r)==len(hdr)]
    seen=collections.OrderedDict()
    for r in data:
        d=dict(zip(hdr,r)); k=d.get('Kernel Name','')[:60]
        seen.setdefault(k,d)
    print('==',f)
    for k,d in seen.items():
        print(' ',k, {m.split('__')[1][:28]:d[m] for m in hdr if '__' in m})
PY
