#!/usr/bin/env bash
# The H200 batches behind results/h200/, one call of the device tool each.
# Binaries are built on the development machine by scripts/gpu-stage.sh into .gpu/ (git-ignored):
#   cargo build --release --features cuda --bins
#   cargo test --release --features cuda --no-run      (test executables -> .gpu/tests/)
#   cargo bench --features cuda --no-run               (bench executable -> .gpu/bench-toolchains)
# and the tutorial's published code (see scripts/fidelity/README.md) in .gpu/published/myGEMM.
# usage: scripts/gpu-batch.sh fidelity|fidelity-ncu|sweeps|registers|measure|criterion|tune-4096|tune-rest|kt|tune-diag|tune-both-4096|tune-8192|nvrtc-h200|blas-f32|blas-f64|blas-compare|blas-tune-f32|lecture|lecture-strides|simt-tune-4096|simt-tune-rest|simt-measure|simt-profile|simt-check|simt-jit|simt-square|specs|specs-2|clang|clang-tune|clang-jit|tune-rate-diag|tune-anchors-a|tune-anchors-bc|tune-anchors-kt|nvrtc-procs|depth-check|build-processes-a|build-processes-b|routine-suite-cuda|routine-suite-opencl|routine-gemm|routine-tests|tc-check|tc-tune|tc-cuda|tc-tune-final|tc-measure|tc-final|tc-profile|tc-dgemm|nvrtc-threads|pinned-c|pinned-tests-dgemm|pinned-f64|tc-dgemm-wide|screen|screen-long|screen-anchors|routine-direct-cuda|routine-direct-opencl|routine-check|streamk-probe|streamk-squares|tc-launch-local|tc-opencl-f64|tc-next|tc-why|tc-jit|tc-tests|async-ab|async-cap|tc-frag|tc-order|tc-ids|tc-cpca|tc-cpca-tune|tcwg-first|tcwg-gate|tcwg-check|routine-tcwg|tc-dgemm-8192|tc-tailk|tc-tailk-why|tc-tailk-tune|tc-tailk-check|routine-tc-cuda|routine-tc-opencl|routine-tc-gemm|routine-tc-splitk|routine-holdout|routine-grid-eval|routine-thin|paired-compare|paired-routine|batched-routine|batched-tests|regression
#   (each fits one 10-minute call; the tune parts also need .gpu/wheels from scripts/kernel_tuner/fetch-wheels.sh)
# Everything a part writes lands in one archive under $OUT.
set -u
PART=${1:-fidelity}
W=/tmp/gemmlab-$PART; rm -rf "$W"; mkdir -p "$W"
export CUDA_CACHE_DISABLE=1   # so the JIT and ptxas logs are printed, not served from a cache
G=.gpu/gemmlab
# A batch that carries more than the binary may carry it compressed.
# One copy per part: a part stopped by its time limit can leave the binary running (its
# compile workers), and overwriting it then fails with "Text file busy".
if [ ! -x "$G" ] && [ -f .gpu/gemmlab.xz ]; then G=/tmp/gemmlab-bin-$PART; xz -dc .gpu/gemmlab.xz > "$G" && chmod +x "$G"; fi
D="--device h200"
# The Nsight Compute metrics of the SIMT profiles (simt-profile, simt-check): time, registers,
# occupancy, issue slots, FMA pipe, FFMA and instruction counts, bank conflicts, stall reasons,
# DRAM and L2, clock.
NCU_METRICS="--metrics gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,dram__bytes_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_elapsed.avg.per_second"
run() { # name timeout command...: output to $W/name.txt, exit status appended
  local name=$1 t=$2; shift 2
  timeout "$t" "$@" > "$W/$name.txt" 2>&1
  echo "== exit $?" >> "$W/$name.txt"
}
tc_switch_ab() { # SWITCH TAG: (issue 28) the CUDA tests of the tc family, then SWITCH=0 and 1 at
  # both toolchains' tuned tc configurations next to cuBLAS ($W/TAG-N), and SWITCH=1 with
  # split-K checked at odd sizes on both toolchains ($W/odd-fP). Used by tc-order and tc-ids.
  local sw=$1 tag=$2 i=0 p prec sizes v
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tc
  xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
  GEMMLAB_REQUIRE_CUDA=1 run tests-tc 120 /tmp/cuda_kernels --test-threads=1 cuda_tc_
  grep -E "test |test result|checked runs" "$W/tests-tc.txt"
  local F64C="--define BK=8 --define BM=64 --define BN=64 --define GROUP=8 --define MMA=1688 --define STAGES=4 --define WM=32 --define WN=32"
  local F64O="--define BK=4 --define BM=128 --define BN=64 --define GROUP=8 --define MMA=1684 --define STAGES=4 --define WM=64 --define WN=32"
  local F32C="--define BK=8 --define BM=128 --define BN=128 --define GROUP=8 --define STAGES=5 --define WM=64 --define WN=64"
  for p in "64 2048,4096,8192 $F64C" "64 4096,8192 $F64O" "32 4096,8192 $F32C"; do
    set -- $p; prec=$1; sizes=$2; shift 2
    for v in 0 1; do
      i=$((i+1))
      run "$tag-$i" 150 $G compare $D --backends cuda,opencl --kernels tc --precision f$prec --sizes $sizes "$@" \
        --define $sw=$v --reps 10 --out "$W/$tag-$i"
      echo "== $tag-$i f$prec $sw=$v $*"; grep -E "^[0-9x]+ |^ *(cublas|tc) " "$W/$tag-$i.txt" | sed 's/ on NVIDIA.*//'
    done
  done
  for prec in 64 32; do
    run "odd-f$prec" 120 $G compare $D --backends cuda,opencl --kernels tc --precision f$prec --define $sw=1 \
      --define SPLITK=3 --sizes 17,1000x999x1001,4097x33x2049 --reps 3 --out "$W/odd-f$prec"
    echo "== odd f$prec $sw=1 SPLITK=3"; grep -E "^[0-9x]+ |^ *tc " "$W/odd-f$prec.txt" | sed 's/ on NVIDIA.*//'
  done
}
direct_tests() { # the test executables carried in .gpu/tests-direct/*.xz, failing instead of
  # skipping, each under a 240 s limit: output to $W/tests.txt, the summary lines printed
  local t x
  for t in .gpu/tests-direct/*.xz; do
    [ -f "$t" ] || continue
    # ONLY="a b": just those executables (a batch that continues one stopped by its limit).
    [ -z "${ONLY:-}" ] || [[ " $ONLY " == *" $(basename "$t" .xz) "* ]] || continue
    x=/tmp/$(basename "$t" .xz); xz -dc "$t" > "$x"; chmod +x "$x"
    echo "== $x"; GEMMLAB_REQUIRE_CUDA=1 timeout 240 "$x" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests.txt"
  grep -E "^== |test result|FAILED|panicked|checked runs" "$W/tests.txt"
}
clang_replay() { # DIR: clang's PTX made on the staging machine, replayed here (GEMMLAB_CLANG=none:
  # a clang there without libclc or CUDA headers is not used). The system CUDA's ptxas (the release
  # of NVRTC's own) assembles it, found through a cache laid out as scripts/nvrtc/fetch.sh's.
  local ptx=$PWD/$1
  if [ ! -d "$ptx" ] && [ -f "$ptx.tar.xz" ]; then  # carried compressed
    ptx=/tmp/$(basename "$1"); mkdir -p "$ptx"; tar xJf "$PWD/$1.tar.xz" -C "$ptx"
  fi
  export GEMMLAB_CLANG_PTX=$ptx GEMMLAB_CLANG=none
  local C=/tmp/gl-cache V
  V=$(/usr/local/cuda/bin/ptxas --version | sed -n 's/.*release \([0-9.]*\),.*/\1/p')
  mkdir -p "$C/nvrtc/$V/nvidia/system/lib" "$C/nvrtc/$V/nvidia/system/bin"
  for f in /usr/local/cuda/lib64/libnvrtc.so.[0-9]* /usr/local/cuda/lib64/libnvrtc-builtins.so*; do
    ln -sf "$f" "$C/nvrtc/$V/nvidia/system/lib/"; done
  ln -sf /usr/local/cuda/bin/ptxas "$C/nvrtc/$V/nvidia/system/bin/ptxas"
  export GEMMLAB_CACHE=$C
  env | grep '^GEMMLAB_' > "$W/clang-env.txt"
}
{ date -u; nvidia-smi; nvidia-smi -q -d CLOCK,TEMPERATURE,POWER,PERFORMANCE; env | grep -E '^OCL_|^CUDA'; } > "$W/nvidia-smi-before.txt" 2>&1
case "$PART" in
tc-tests)
  # The CUDA tests of the tensor-core family's launch-time memory and SPLIT, failing instead of skipping.
  xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
  GEMMLAB_REQUIRE_CUDA=1 run tests-tc 200 /tmp/cuda_kernels --test-threads=1 cuda_tc_
  grep -h -E "^test |test result|panicked" "$W/tests-tc.txt"
  ;;
tc-jit)
  # Issue 28: tc-why's jit lane again after the fix (a module whose PTX declares its tiles is
  # launched without launch-time shared memory): NVIDIA OpenCL's DGEMM PTX through the CUDA JIT
  # next to both native builds, CUDA's best configuration.
  C64="--define BK=8 --define BM=64 --define BN=64 --define GROUP=8 --define MMA=1688 --define STAGES=4 --define WM=32 --define WN=32"
  run jit-f64 150 $G sweep jit $D --kernels tc --precision f64 $C64 --sizes 4096,8192 --reps 10 --keep-ptx --out "$W/jit-f64"
  run jit-gemm2 60 $G sweep jit $D --kernels 2,xgemm --sizes 1024 --reps 5 --out "$W/jit-gemm2"
  run attribute 120 $G attribute $D --kernels 2,6,tc --out "$W/attribute"
  grep -h -E "^(tc|gemm2|xgemm) |cuBLAS|why|launch|n/a|envreg" "$W/jit-f64.txt" "$W/jit-gemm2.txt"
  grep -h -E "jit|JIT|n/a|envreg|== exit" "$W/attribute.txt" | head -20
  ;;
tc-why)
  # Issue 28, third call: why NVIDIA OpenCL's DGEMM runs at 0.65x of CUDA's on the same source
  # and configuration (CUDA's best, 126 registers in both): its PTX through the CUDA JIT next to
  # both native builds (front end or back end), the PTX side by side; and the accuracy gate for
  # the new 3xTF32 best (tc-next's database, committed in results/tuned).
  C64="--define BK=8 --define BM=64 --define BN=64 --define GROUP=8 --define MMA=1688 --define STAGES=4 --define WM=32 --define WN=32"
  run jit-f64 150 $G sweep jit $D --kernels tc --precision f64 $C64 --sizes 4096,8192 --reps 10 --keep-ptx --out "$W/jit-f64"
  run ptx-f64 60 $G ptx $D --kernel tc --define PRECISION=64 $C64 --out "$W/ptx-f64"
  run ptx-f64-diff 60 $G ptx $D --kernel tc --define PRECISION=64 $C64 --diff
  run accuracy 300 $G accuracy $D --kernels tc,simt --tuned --sizes 256,1024,4096,1024x1024x32768 \
    --inputs uniform,mantissa,mixed --out "$W/accuracy"
  grep -h -E "^ *(tc|cublas)|jit|GFLOP" "$W/jit-f64.txt" | head -20
  head -60 "$W/ptx-f64.txt"
  grep -h -E "gate|FP32-accurate|tc " "$W/accuracy.txt" | head -40
  ;;
tc-next)
  # Issue 28, second call: 3xTF32 with SPLIT (operands split once per tile in local memory)
  # searched beside the register split over tiles the launch-time memory allows, its accuracy
  # against the gate, the new tests, and the OpenCL DGEMM searched exhaustively in its 48 KiB.
  DB="$W/db"; mkdir -p "$DB"; cp "${DBIN:-results/tuned/nvidia-h200.json}" "$DB/nvidia-h200.json"
  xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
  GEMMLAB_REQUIRE_CUDA=1 run tests-tc 200 /tmp/cuda_kernels --test-threads=1 cuda_tc_
  grep -h -E "test result|panicked" "$W/tests-tc.txt"
  run tune-f32-cuda 120 $G tune $D --backends cuda --kernels tc --precision f32 --sizes 4096 --strategy exhaustive \
    --time-limit 90 --max-configs 5000 --caps none --switches none --values GROUP=8 --values BM=128,256 \
    --values BN=64,128 --values WM=64 --values WN=32,64 --values STAGES=3,4,5 --values BK=8,16 \
    --values PROMOTE_STAGE=0,1 --values SPLIT=0,1 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f32-cuda"
  run tune-f64-opencl 250 $G tune $D --backends opencl --kernels tc --precision f64 --sizes 4096 --strategy exhaustive \
    --time-limit 210 --max-configs 5000 --caps none --switches none --values PROMOTE_STAGE=0 --values GROUP=8 \
    --values BM=64,128 --values BN=64,128 --values WM=32,64 --values WN=16,32,64 --values STAGES=2,3,4,5,6 \
    --values BK=4,8,16 --values MMA=1684,1688,16816 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f64-opencl"
  run tuned-f32 100 $G compare $D --kernels tc --precision f32 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --out "$W/tuned-f32"
  run tuned-f64 100 $G compare $D --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --out "$W/tuned-f64"
  grep -h -E " tried|device busy|best while" "$W"/tune-f*.txt
  grep -h -E "^ *(tc|cublas) |tuned at|throttled" "$W/tuned-f32.txt" "$W/tuned-f64.txt"
  ;;
tc-opencl-f64)
  # Issue 28: the OpenCL DGEMM searched exhaustively inside its 48 KiB (the 80 s anneal of
  # tc-final stopped at 0.74x cuBLAS with another tile than CUDA's best), then both toolchains
  # next to cuBLAS DGEMM. DBIN: the database to start from (default: the committed one).
  DB="$W/db"; mkdir -p "$DB"; cp "${DBIN:-results/tuned/nvidia-h200.json}" "$DB/nvidia-h200.json"
  run tune-f64-opencl 330 $G tune $D --backends opencl --kernels tc --precision f64 --sizes 4096 --strategy exhaustive \
    --time-limit 290 --max-configs 5000 --caps none --switches none --values PROMOTE_STAGE=0 --values GROUP=8 \
    --values BM=64,128 --values BN=64,128 --values WM=32,64 --values WN=16,32,64 --values STAGES=2,3,4,5,6 \
    --values BK=4,8,16 --values MMA=1684,1688,16816 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f64-opencl"
  run tuned-f64 120 $G compare $D --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 \
    --reps 20 --out "$W/tuned-f64"
  grep -h -E " tried|device busy|best while" "$W"/tune-f*.txt
  grep -h -E "^ *(tc|cublas) |tuned at|throttled" "$W/tuned-f64.txt"
  ;;
tc-launch-local)
  # Issue 28: the CUDA twin takes its tiles at launch (past the static 48 KiB), so the DGEMM
  # search reaches cuBLAS-sized tiles and deeper pipelines; 3xTF32 likewise. Then both next to
  # cuBLAS, a >48 KiB point checked at odd sizes under compute-sanitizer, and the OpenCL twin
  # (tiles declared in one array now) checked at odd sizes.
  DB="$W/db"; mkdir -p "$DB"; cp results/tuned/nvidia-h200.json "$DB/"
  run tune-f64-4096 150 $G tune $D --backends cuda --kernels tc --precision f64 --sizes 4096 --strategy exhaustive \
    --time-limit 110 --max-configs 5000 --caps none --switches none --values PROMOTE_STAGE=0 --values GROUP=8 \
    --values BM=64,128,256 --values BN=64,128,256 --values WM=32,64 --values WN=16,32,64 --values STAGES=3,4,5,6 \
    --values BK=8,16 --values MMA=1688,16816 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f64-4096"
  run tune-f32-4096 120 $G tune $D --backends cuda --kernels tc --precision f32 --sizes 4096 --strategy exhaustive \
    --time-limit 80 --max-configs 5000 --caps none --switches none --values GROUP=8 --values BM=128,256 \
    --values BN=64,128 --values WM=64 --values WN=32,64 --values STAGES=3,4,5,6 --values BK=8,16 \
    --values PROMOTE_STAGE=0,1 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f32-4096"
  run tuned-f64 120 $G compare $D --backends cuda --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 \
    --reps 20 --out "$W/tuned-f64"
  run tuned-f32 120 $G compare $D --backends cuda --kernels tc --precision f32 --tuned --db "$DB" --sizes 4096,8192 \
    --reps 20 --out "$W/tuned-f32"
  BIG="--define BM=128 --define BN=128 --define WM=64 --define WN=32 --define STAGES=4 --define BK=8"
  run memcheck-big-f64 120 compute-sanitizer --tool memcheck $G compare $D --backends cuda --kernels tc --precision f64 \
    $BIG --sizes 1000x999x1001,17 --reps 2 --warmup 1 --out "$W/memcheck-big-f64"
  for p in f64 f32; do
    run odd-$p 90 $G compare $D --kernels tc --precision $p --sizes 1000x999x1001,4097x33x2049,17 --reps 3 --out "$W/odd-$p"
  done
  xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
  GEMMLAB_REQUIRE_CUDA=1 run test-launch-local 200 /tmp/cuda_kernels --test-threads=1 cuda_tc_takes_local_memory
  grep -h -E "test result|panicked" "$W/test-launch-local.txt"
  grep -h -E " tried|device busy|best while" "$W"/tune-f*.txt
  grep -h -E "^ *(tc|cublas) |tuned at|throttled" "$W/tuned-f64.txt" "$W/tuned-f32.txt"
  grep -h -E "ERROR SUMMARY|== exit" "$W/memcheck-big-f64.txt" "$W"/odd-f*.txt
  grep -h -E "^tc " "$W"/odd-f*.txt
  ;;
tc-dgemm-wide)
  # Issue 28: with C downloaded into page-locked memory a DGEMM search runs ~29 configurations/s
  # (was 3.7), so the CUDA DGEMM's whole space at 4096 (no switches or caps; PROMOTE_STAGE is
  # f32's) fits one call; then 8192 from 4096's bests, and both next to cuBLAS DGEMM.
  DB="$W/db"; mkdir -p "$DB"; cp results/tuned/nvidia-h200.json "$DB/"
  run tune-f64-4096 170 $G tune $D --backends cuda --kernels tc --precision f64 --sizes 4096 --strategy exhaustive \
    --time-limit 130 --max-configs 5000 --caps none --switches none --values PROMOTE_STAGE=0 --top 3 \
    --store "$W/store" --db "$DB" --out "$W/tune-f64-4096"
  run tune-f64-8192 130 $G tune $D --backends cuda --kernels tc --precision f64 --sizes 8192 --strategy random \
    --time-limit 70 --max-configs 5000 --caps none --switches none --values PROMOTE_STAGE=0 --top 3 \
    --start-at "$DB/nvidia-h200.json" --store "$W/store" --db "$DB" --out "$W/tune-f64-8192"
  run tuned-f64 120 $G compare $D --backends cuda --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 \
    --reps 20 --out "$W/tuned-f64"
  grep -h -E " tried|device busy|per configuration|best while" "$W"/tune-f64-*.txt
  grep -h -E "^ *(tc|cublas) |tuned at|throttled" "$W"/tune-f64-*.txt "$W/tuned-f64.txt"
  ;;
pinned-f64)
  # Issue 26 (and 28's DGEMM searches): an f64 C downloaded into page-locked memory and checked
  # where it lands, as f32's is. The tests (.gpu/tests), the same 40 s exhaustive CUDA DGEMM
  # search with the binary before (.gpu/gemmlab-before.xz) and after, and checks at odd sizes.
  mkdir -p "$W/tests"
  for t in .gpu/tests/*.xz; do xz -dc "$t" > "/tmp/$(basename "$t" .xz)"; chmod +x "/tmp/$(basename "$t" .xz)"
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 200 "/tmp/$(basename "$t" .xz)" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  xz -dc .gpu/gemmlab-before.xz > /tmp/gemmlab-before && chmod +x /tmp/gemmlab-before
  for b in before after; do
    B=$G; [ $b = before ] && B=/tmp/gemmlab-before
    run search-f64-$b 90 $B tune $D --backends cuda --kernels tc --precision f64 --sizes 4096 --strategy exhaustive \
      --time-limit 40 --max-configs 3000 --caps none --switches none --values GROUP=4,8 --values BM=64,128 --values BN=64,128 \
      --values WM=32,64 --values WN=32,64 --values MMA=1684,1688,16816 --top 1 --no-db --store "$W/store-$b" --out "$W/search-f64-$b"
  done
  for p in f32 f64; do
    run compare-odd-$p 100 $G compare $D --backends cuda --kernels simt,xgemm,xgemmdirect,tc --precision $p \
      --sizes 1000x999x1001,4097x33x2049,2048 --reps 3 --out "$W/compare-odd-$p"
  done
  cat "$W/tests/summary.txt"
  for f in "$W"/search-*.txt; do echo "== $(basename $f)"; grep -h -E " tried|device busy|per configuration" "$f"; done
  grep -h -E "^(1000|4097|2048)|^(simt|xgemm|tc|cublas) " "$W"/compare-odd-*.txt | head -40
  ;;
pinned-tests-dgemm)
  # Issue 26: the page-locked download's tests on the GPU (.gpu/tests: tune_check, cuda_backend).
  # Issue 28: the CUDA DGEMM tuned at 8192 itself (the database held only 4096's best, which
  # 8192 borrowed): the same neighbourhood as tc-dgemm, exhaustive, then next to cuBLAS DGEMM at
  # 4096 and 8192 from that database.
  mkdir -p "$W/tests"
  for t in .gpu/tests/*.xz; do xz -dc "$t" > "/tmp/$(basename "$t" .xz)"; chmod +x "/tmp/$(basename "$t" .xz)"
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 200 "/tmp/$(basename "$t" .xz)" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  DB="$W/db"; mkdir -p "$DB"; cp results/tuned/nvidia-h200.json "$DB/"
  run tune-f64-8192 200 $G tune $D --backends cuda --kernels tc --precision f64 --sizes 8192 --strategy exhaustive \
    --time-limit 150 --max-configs 3000 --caps none --switches none --values GROUP=4,8 --values BM=64,128 --values BN=64,128 \
    --values WM=32,64 --values WN=32,64 --values MMA=1684,1688,16816 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f64-8192"
  run tuned-f64 150 $G compare $D --backends cuda --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --out "$W/tuned-f64"
  grep -h -E " tried|device busy|best while" "$W/tune-f64-8192.txt"
  grep -E "^ *(tc|cublas|dgemm)|x cuBLAS|tuned" "$W/tuned-f64.txt" | head -20
  ;;
screen)
  # Issue 26: the screen (each configuration first at K/8, pruned there when 4x slower than the
  # best), build threads at a lower priority and a measuring thread that sleeps through its
  # launches. The same 40 s random searches with the binary before (.gpu/gemmlab-before.xz),
  # after with --screen 0, and after; NVIDIA OpenCL's xgemm before and after; the tests.
  xz -dc .gpu/gemmlab-before.xz > /tmp/gemmlab-before && chmod +x /tmp/gemmlab-before
  for k in xgemm simt; do
    for b in before noscreen after; do
      B=$G; X=""; [ $b = before ] && B=/tmp/gemmlab-before; [ $b = noscreen ] && X="--screen 0"
      run search-$k-$b 90 $B tune $D --backends cuda --kernels $k --sizes 4096 --strategy random \
        --search-seed 1 --time-limit 40 --max-configs 100000 --top 1 --no-db $X \
        --store "$W/store-$k-$b" --out "$W/search-$k-$b"
    done
  done
  for b in before after; do
    B=$G; [ $b = before ] && B=/tmp/gemmlab-before
    run search-ocl-xgemm-$b 90 $B tune $D --backends opencl --kernels xgemm --sizes 4096 --strategy random \
      --search-seed 1 --time-limit 40 --max-configs 100000 --top 1 --no-db \
      --store "$W/store-ocl-$b" --out "$W/search-ocl-xgemm-$b"
  done
  mkdir -p "$W/tests"
  for t in .gpu/tests/*.xz; do xz -dc "$t" > "/tmp/$(basename "$t" .xz)"; chmod +x "/tmp/$(basename "$t" .xz)"
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 120 "/tmp/$(basename "$t" .xz)" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  for f in "$W"/search-*.txt; do echo "== $(basename $f)"; grep -h -E " tried|device busy|per configuration|best while" "$f"; done
  ;;
screen-anchors)
  # Issue 26: the anchors' OpenCL comparison again after the screen, the device check and the
  # build queue: CLBlast 1.5.3's tuner and gemmlab's, 150 s each in one call, the compute cache
  # on as a user has it (a fresh folder), both bests re-measured next to cuBLAS. Carries .gpu/clblast.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-anchors
  mkdir -p /tmp/clblast && for d in .gpu/clblast/*.deb; do dpkg -x "$d" /tmp/clblast; done
  CLBLAST=/tmp/clblast GEMMLAB=$G bash scripts/tune-anchors/run.sh opencl "$W/anchors" 150 > "$W/anchors-opencl.txt" 2>&1
  tar cJf "$OUT/$PART.tar.xz" -C "$W" .
  GEMMLAB=$G timeout 150 bash scripts/tune-anchors/run.sh remeasure "$W/anchors" > "$W/anchors-remeasure.txt" 2>&1
  cat "$W/anchors/table.md"
  grep -E " tried|device busy|per configuration" "$W/anchors/gemmlab-opencl.log"
  ;;
screen-long)
  # Issue 26: the rate over the issue's 150 s budget with the screen, CUDA SIMT and xgemm
  # (random, seed 1, as screen's 40 s searches), and NVIDIA OpenCL's xgemm as the anchors ran
  # it (anneal, no switches or caps, the compute cache on in a fresh folder: the build pool).
  # BEFORE="simt": those searches first with .gpu/gemmlab-before.xz too, in the same call.
  [ -n "${BEFORE:-}" ] && xz -dc .gpu/gemmlab-before.xz > /tmp/gemmlab-before && chmod +x /tmp/gemmlab-before
  for k in ${KERNELS:-xgemm simt}; do  # KERNELS=simt: the SIMT search only
    for b in before after; do
      B=$G; tag=long-$k
      if [ $b = before ]; then
        case " ${BEFORE:-} " in *" $k "*) B=/tmp/gemmlab-before; tag=long-$k-before ;; *) continue ;; esac
      fi
      run $tag 185 $B tune $D --backends cuda --kernels $k --sizes 4096 --strategy random --search-seed 1 \
        --time-limit 150 --max-configs 100000 --top 1 --no-db --store "$W/store-$tag" --out "$W/$tag"
    done
  done
  [ -n "${SKIP_OCL:-}" ] || CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-$$ run long-ocl-xgemm 185 $G tune $D --backends opencl \
    --kernels xgemm --sizes 4096 --strategy anneal --switches none --caps none --time-limit 150 \
    --max-configs 100000 --top 1 --no-db --store "$W/store-ocl" --out "$W/long-ocl-xgemm"
  for f in "$W"/long-*.txt; do echo "== $(basename $f)"; grep -h -E " tried|device busy|per configuration|best while" "$f"; done
  ;;
pinned-c)
  # Issue 26: C downloaded into page-locked memory (CUDA) instead of a pageable vector: the
  # same 40 s random searches with the binary before the change (.gpu/gemmlab-before.xz) and
  # after, alternating, then the routine's and compare's checks at odd sizes with the new one.
  xz -dc .gpu/gemmlab-before.xz > /tmp/gemmlab-before && chmod +x /tmp/gemmlab-before
  for round in 1; do
    for b in before after; do
      B=$G; [ $b = before ] && B=/tmp/gemmlab-before
      for k in simt xgemm; do
        run search-$k-$b-$round 90 $B tune $D --backends cuda --kernels $k --sizes 4096 --strategy random \
          --search-seed $round --time-limit 40 --max-configs 100000 --top 1 --no-db \
          --store "$W/store-$k-$b-$round" --out "$W/search-$k-$b-$round"
      done
    done
  done
  run compare-odd 120 $G compare $D --backends cuda --kernels simt,xgemm,xgemm_direct,gemm6 \
    --sizes 1000x999x1001,4097x33x2049,2048 --reps 5 --out "$W/compare-odd"
  for f in "$W"/search-*.txt; do echo "== $(basename $f)"; grep -h -E " tried|device busy|per configuration" "$f"; done
  grep -E "^ *(simt|xgemm|gemm6|cublas)|checked|WRONG|error" "$W/compare-odd.txt" | head -40
  ;;
nvrtc-threads)
  # Issue 26: are NVRTC builds slower from 16 threads of one process than from 16 processes?
  # The first 160 points of each random search, built both ways (scripts/tune-anchors/nvrtc_par.py);
  # gemmlab's own 16 compile threads on SIMT's (tune --arch); then the searches as they run now.
  for k in simt xgemm; do
    run export-$k 60 $G tune $D --backends cuda --kernels $k --sizes 4096 --strategy random --search-seed 1 \
      --max-configs 320 --export-space "$W/space-$k.json"
    run par-$k 300 python3 scripts/tune-anchors/nvrtc_par.py "$W/space-$k.json" 160 16
  done
  t0=$(date +%s.%N)
  run offline-simt 150 $G tune --arch sm_90 --backends cuda --kernels simt --strategy random --search-seed 1 \
    --max-configs 160 --workers 16 --out "$W/offline-simt"
  echo "wall $(python3 -c "import time; print(round(time.time() - $t0, 2))") s" >> "$W/offline-simt.txt"
  for k in simt xgemm; do
    run search-$k 90 $G tune $D --backends cuda --kernels $k --sizes 4096 --strategy random --search-seed 1 \
      --time-limit 40 --max-configs 100000 --top 1 --no-db --store "$W/store-$k" --out "$W/search-$k"
  done
  cat "$W"/par-*.txt; tail -3 "$W/offline-simt.txt"; grep -h -E " tried|device busy|per configuration" "$W"/search-*.txt
  ;;
tc-dgemm)
  # Issue 28: the CUDA DGEMM search again, exhaustive over the neighbourhood of tc-final's best
  # (tiles 64/128, warp tiles 32/64, every BK, stage count and m16n8 shape), then next to cuBLAS.
  DB="$W/db"; mkdir -p "$DB"; cp .gpu/db-tc/*.json "$DB/"
  run tune-f64-cuda 140 $G tune $D --backends cuda --kernels tc --precision f64 --sizes 4096 --strategy exhaustive \
    --time-limit 100 --max-configs 3000 --caps none --switches none --values GROUP=4,8 --values BM=64,128 --values BN=64,128 \
    --values WM=32,64 --values WN=32,64 --values MMA=1684,1688,16816 --top 5 --store "$W/store" --db "$DB" --out "$W/tune-f64-cuda"
  run tuned-f64 100 $G compare $D --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --out "$W/tuned-f64"
  ;;
tc-profile)
  # Issue 28: where the tensor-core kernel's time goes (Nsight Compute sections at each CUDA best,
  # 3xTF32 promoted and not, DGEMM, cuBLAS beside), compute-sanitizer at an odd size, and each
  # switch one at a time at the f32 best (sweep hints). .gpu/db-tc holds tc-final's database.
  DB=.gpu/db-tc
  C32=$(python3 scripts/simt/defines.py $DB nvidia-h200 tc cuda 4096 4096 4096 f32)
  C64=$(python3 scripts/simt/defines.py $DB nvidia-h200 tc cuda 4096 4096 4096 f64)
  echo "f32: $C32" > "$W/bests.txt"; echo "f64: $C64" >> "$W/bests.txt"
  SECTIONS="--section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats"
  for v in "f32 promoted:$C32" "f32 tensor-acc:$C32 --define PROMOTE_ACC=0" "f64 dgemm:$C64"; do
    name=${v%%:*}; defs=${v#*:}; p=${name%% *}; tag=${name#* }
    timeout 120 ncu --clock-control none --csv $SECTIONS -k regex:'tc_gemm|gemm|sgemm|dgemm' -c 3 \
      $G compare $D --backends cuda --kernels tc --precision $p --sizes 4096 --reps 1 --warmup 0 --batch 1 $defs \
      --out "$W/ncu-run-$p-$tag" > "$W/ncu-$p-$tag.csv" 2>&1
    echo "== exit $?" >> "$W/ncu-$p-$tag.csv"
  done
  for p in f32 f64; do
    run memcheck-$p 120 compute-sanitizer --tool memcheck $G compare $D --backends cuda --kernels tc --precision $p \
      --sizes 1000x999x1001,17 --reps 2 --warmup 1 --out "$W/memcheck-$p"
  done
  run hints-f32 90 $G sweep hints $D --backends cuda --kernels tc --sizes 4096 $C32 --out "$W/hints-f32"
  ;;
tc-final)
  # Issue 28, last round: the f32 searches again with PROMOTE_STAGE (70 s each), into .gpu/db-tc
  # (tc-tune-final's database), then tc-measure's runs on that database.
  DB="$W/db"; mkdir -p "$DB"; cp .gpu/db-tc/*.json "$DB/"
  for b in cuda opencl; do
    run tune-f32-$b 110 $G tune $D --backends $b --kernels tc --precision f32 --sizes 4096 --time-limit 70 --max-configs 3000 --caps none --switches none --values GROUP=4,8 --top 5 --store "$W/store" --db "$DB" --out "$W/tune-f32-$b"
  done
  run tuned-f64 120 $G compare $D --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --keep-ptx --out "$W/tuned-f64"
  run tuned-f32 120 $G compare $D --kernels tc,simt --precision f32 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --keep-ptx --out "$W/tuned-f32"
  run accuracy 180 $G accuracy $D --kernels tc,simt --tuned --db "$DB" --sizes 256,1024,4096,1024x1024x32768 --inputs uniform,mantissa,mixed --out "$W/accuracy"
  ;;
tc-tune-final)
  # Issue 28, final searches: 80 s per toolchain and precision (up to 3000 configurations, no caps,
  # switches at their published state: 3xTF32 promoted), into .gpu/db-tc (the committed database).
  DB="$W/db"; mkdir -p "$DB"; cp .gpu/db-tc/*.json "$DB/"
  for p in f32 f64; do
    for b in cuda opencl; do
      run tune-$p-$b 120 $G tune $D --backends $b --kernels tc --precision $p --sizes 4096 --time-limit 80 --max-configs 3000 --caps none --switches none --values GROUP=4,8 --top 5 --store "$W/store" --db "$DB" --out "$W/tune-$p-$b"
    done
  done
  ;;
tc-measure)
  # Issue 28: the tuned tc (and simt, f32) next to cuBLAS at 4096 and 8192 on both toolchains,
  # the accuracy runs, and the switches one at a time (hints sweep) at 4096; .gpu/db-tc holds
  # tc-tune-final's database.
  DB=.gpu/db-tc
  run tuned-f64 150 $G compare $D --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --keep-ptx --out "$W/tuned-f64"
  run tuned-f32 150 $G compare $D --kernels tc,simt --precision f32 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --keep-ptx --out "$W/tuned-f32"
  run accuracy 200 $G accuracy $D --kernels tc,simt --tuned --db "$DB" --sizes 256,1024,4096,1024x1024x32768 --inputs uniform,mantissa,mixed --out "$W/accuracy"
  ;;
tc-cuda)
  # Issue 28, second round: the CUDA searches (70 s each, as tc-tune's OpenCL ones), written into
  # .gpu/db-tc (the committed database plus tc-tune's OpenCL bests); then every tuned tc and simt
  # next to cuBLAS at 4096 and 8192, both toolchains; then the accuracy runs (tuned configurations).
  DB="$W/db"; mkdir -p "$DB"; cp .gpu/db-tc/*.json "$DB/"
  for p in f64 f32; do
    run tune-$p-cuda 110 $G tune $D --backends cuda --kernels tc --precision $p --sizes 4096 --time-limit 70 --caps none --switches none --values GROUP=4,8 --top 5 --store "$W/store" --db "$DB" --out "$W/tune-$p-cuda"
  done
  run tuned-f64 150 $G compare $D --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --out "$W/tuned-f64"
  run tuned-f32 150 $G compare $D --kernels tc,simt --precision f32 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --out "$W/tuned-f32"
  run accuracy 200 $G accuracy $D --kernels tc,simt --tuned --db "$DB" --sizes 256,1024,4096,1024x1024x32768 --inputs uniform,mantissa,mixed --out "$W/accuracy"
  ;;
tc-tune)
  # Issue 28: the tensor-core family tuned per toolchain and precision at 4096 (70 s each, no caps
  # or switches: 3xTF32 stays 3xTF32), then its bests next to cuBLAS at 4096 and 8192; the OpenCL
  # f32 twin checked again at the odd sizes first.
  run cmp-f32-odd 120 $G compare $D --kernels tc --precision f32 --sizes 17,1000x999x1001,4097x33x2049 --reps 5 --out "$W/cmp-f32-odd"
  for p in f64 f32; do
    for b in cuda opencl; do
      run tune-$p-$b 110 $G tune $D --backends $b --kernels tc --precision $p --sizes 4096 --time-limit 70 --caps none --switches none --values GROUP=4,8 --top 5 --store "$W/store" --db "$W/db" --out "$W/tune-$p-$b"
    done
    run tuned-$p 120 $G compare $D --kernels tc --precision $p --tuned --db "$W/db" --sizes 4096,8192 --reps 20 --out "$W/tuned-$p"
  done
  ;;
tc-check)
  # Issue 28: the tensor-core family checked at odd sizes and timed next to cuBLAS, both
  # toolchains; 3xTF32 and DGEMM at their defaults, 1xTF32 (TF32_SINGLE=1) beside them.
  for p in f64 f32; do
    run cmp-$p 220 $G compare $D --kernels tc --precision $p --sizes 17,1000x999x1001,4097x33x2049,4096,8192 --reps 10 --out "$W/cmp-$p"
  done
  run cmp-f32-1x 120 $G compare $D --kernels tc --precision f32 --define TF32_SINGLE=1 --sizes 1000x999x1001,4096,8192 --reps 10 --out "$W/cmp-f32-1x"
  ;;
fidelity)
  $G devices > "$W/devices.txt" 2>&1
  $G devices --json > "$W/devices.json" 2>&1
  # The published code built as published and gemmlab's compare at 4096, in the same call.
  timeout 420 bash scripts/fidelity/published.sh .gpu/published/myGEMM "$W/fidelity" > "$W/fidelity-published.txt" 2>&1
  echo "== exit $?" >> "$W/fidelity-published.txt"
  run fidelity-compare 150 $G compare $D --sizes 4096 --keep-ptx --out "$W/fidelity/gemmlab-4096"
  python3 scripts/fidelity/table.py "$W/fidelity" > "$W/fidelity-table.txt" 2>&1
  mkdir -p "$W/tests"
  # report-* reads its fixture from the source tree (CI runs it; it needs no GPU)
  for t in $(ls .gpu/tests/* | grep -v /report-); do
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 150 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  ;;
fidelity-ncu)
  # Kernels 9 and 10 again, both programs under Nsight Compute with the same settings, caches
  # flushed before each launch (ncu's default) and not: the kernel's own time, same method.
  ONLY="9 10" timeout 200 bash scripts/fidelity/published.sh .gpu/published/myGEMM "$W/fidelity" > "$W/fidelity-published.txt" 2>&1
  for cc in all none; do
    for n in 9 10; do
      (cd /tmp/myGEMM-builds/gemm$n && OCL_ICD_FILENAMES=libnvidia-opencl.so.1 CUDA_MODULE_LOADING=EAGER \
        timeout 90 ncu --clock-control none --cache-control $cc --csv --metrics gpu__time_duration.sum,launch__registers_per_thread \
        -k regex:myGEMM ./bin/myGEMM) > "$W/published-gemm$n-cache-$cc.csv" 2>&1
    done
    timeout 150 ncu --clock-control none --cache-control $cc --csv --metrics gpu__time_duration.sum,launch__registers_per_thread \
      -k regex:myGEMM $G compare $D --backends cuda --kernels 9,10 --sizes 4096 --out "$W/gemmlab-ncu-$cc" > "$W/gemmlab-cache-$cc.csv" 2>&1
  done
  ;;
sweeps)
  run compare 330 $G compare $D --sizes 1024,2048,4096,8192 --keep-ptx --out "$W/compare"
  mkdir -p "$W/ptx"
  for k in 1 2 3 4 5 6 7 8 9 10 11; do
    timeout 30 $G ptx --kernel $k $D --diff > "$W/ptx/gemm$k-diff.txt" 2>&1
  done
  run tiling 60 $G sweep tiling $D --keep-ptx --out "$W/tiling"
  run jit 90 $G sweep jit $D --out "$W/jit"
  ;;
registers)
  run hints 240 $G sweep hints $D --keep-ptx --out "$W/hints"
  run registers 240 $G sweep registers $D --out "$W/registers"
  # With launch bounds the compilers may override a cap: that series separately.
  run registers-bounds 90 $G sweep registers $D --kernels 3,6,7,11 --define USE_BOUNDS=1 --out "$W/registers-bounds"
  ;;
measure)
  # Issue 9: the 32768 target end to end, batched vs one-launch timing on short kernels,
  # the sampled check next to the DGEMM one, an ignored register cap, NVML in every row.
  $G devices > "$W/devices.txt" 2>&1
  t0=$(date +%s%N)
  run big-32768 300 $G compare $D --sizes 32768 --kernels 10 --out "$W/big-32768"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/big-32768.txt"
  run short-batched 150 $G compare $D --sizes 1000x300x77,128 --out "$W/short-batched"
  run short-single 150 $G compare $D --sizes 1000x300x77,128 --batch 1 --out "$W/short-single"
  run check-sampled 120 $G compare $D --sizes 16384 --kernels 10 --check sampled --out "$W/check-sampled"
  run check-dgemm 120 $G compare $D --sizes 16384 --kernels 10 --check dgemm --out "$W/check-dgemm"
  run cap-ignored 60 $G compare $D --sizes 4096 --kernels 6 --define USE_BOUNDS=1 --max-registers 64 --out "$W/cap-ignored"
  run refused 60 $G compare $D --sizes 65536 --kernels 10 --out "$W/refused"
  mkdir -p "$W/tests"
  # report-* reads fixtures and cli_exit runs the binary by its build-machine path: CI runs both.
  for t in $(ls .gpu/tests/* | grep -v -e /report- -e /cli_exit-); do
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 120 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  ;;
tune-4096)
  # Issue 10, first call: kernels 6-11 tuned per toolchain at 4096 (annealing over parameters,
  # switches and caps), then the exhaustive parameter space of kernel 6. This call ran out of
  # its 10 minutes during kernel 10's final round (the step timeouts summed past the call):
  # tune-rest finished the work.
  S="$W/store"
  t0=$(date +%s%N)
  run tune-4096 420 $G tune $D --kernels 6,7,8,9,10,11 --sizes 4096 --strategy anneal --max-configs 150 \
    --store "$S" --db "$W/tuned" --out "$W/tune-4096"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/tune-4096.txt"
  run exhaustive-6 200 $G tune $D --kernels 6 --sizes 4096 --strategy exhaustive --max-configs 100000 \
    --switches none --caps none --top 5 --store "$S" --no-db --out "$W/exhaustive-6"
  ;;
tune-rest)
  # Issue 10, second call: the JIT sweep again (until this commit its opencl-ptx lane compiled
  # the CUDA source instead of loading OpenCL's PTX); 8192 with a time limit per search;
  # kernels 10 and 11 at 4096 (from tune-4096's store when the machine still holds it).
  mkdir -p "$W/kt"
  run kt-export 30 $G tune $D --backends cuda --kernels 6 --sizes 4096 --strategy random --max-configs 200 \
    --switches none --caps none --export-space "$W/kt/space.json"
  t0=$(date +%s%N)
  run rate-gemmlab 60 $G tune $D --backends cuda --kernels 6 --sizes 4096 --strategy random --max-configs 200 \
    --switches none --caps none --prune 1000000 --top 1 --store "$W/rate-store" --no-db --out "$W/rate-gemmlab"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/rate-gemmlab.txt"
  bash scripts/kernel_tuner/install-wheels.sh .gpu/wheels /tmp/kt-site > "$W/kt/install.txt" 2>&1
  export PYTHONPATH=/tmp/kt-site
  run kt-rate 100 python3 scripts/kernel_tuner/tune_rate.py "$W/kt/space.json" "$W/kt/kernel_tuner.json"
  unset PYTHONPATH
  run jit 90 $G sweep jit $D --out "$W/jit"
  run tune-8192 170 $G tune $D --kernels 6,7,8,9,10,11 --sizes 8192 --check dgemm --strategy anneal --max-configs 150 \
    --time-limit 8 --top 3 --reps 5 --store "$W/store-8192" --db "$W/tuned" --out "$W/tune-8192"
  S=/tmp/gemmlab-tune-4096/store; [ -d "$S" ] || S="$W/store"
  cp -r /tmp/gemmlab-tune-4096/tuned "$W/" 2>/dev/null
  run tune-4096-rest 110 $G tune $D --kernels 10,11 --sizes 4096 --strategy anneal --max-configs 150 \
    --store "$S" --db "$W/tuned" --out "$W/tune-4096-rest"
  cp -r "$S" "$W/store-4096"
  ;;
kt)
  # kernel_tuner and gemmlab on the same 200 points of kernel 6 at 4096, in one call
  # (tune-rest gave kernel_tuner 100 s, too few for its slow configurations).
  mkdir -p "$W/kt"
  run kt-export 30 $G tune $D --backends cuda --kernels 6 --sizes 4096 --strategy random --max-configs 200 \
    --switches none --caps none --export-space "$W/kt/space.json"
  t0=$(date +%s%N)
  run rate-gemmlab 70 $G tune $D --backends cuda --kernels 6 --sizes 4096 --strategy random --max-configs 200 \
    --switches none --caps none --prune 1000000 --top 1 --store "$W/rate-store" --no-db --out "$W/rate-gemmlab"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/rate-gemmlab.txt"
  bash scripts/kernel_tuner/install-wheels.sh .gpu/wheels /tmp/kt-site > "$W/kt/install.txt" 2>&1
  export PYTHONPATH=/tmp/kt-site
  t0=$(date +%s%N)
  run kt-rate 300 python3 scripts/kernel_tuner/tune_rate.py "$W/kt/space.json" "$W/kt/kernel_tuner.json"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/kt-rate.txt"
  ;;
tune-diag)
  # Issue 10, session 3, first call. Why are OpenCL searches compile-bound? The same kind of
  # sample (24 random points of kernel 7 at 4096) built by 1 and by 16 threads of one process,
  # then by 4 processes of 4 threads at once: if NVIDIA's OpenCL compiler serializes builds
  # inside a process, per-build times grow with threads but not with processes.
  S="$W/stores"
  O="--backends opencl --kernels 7 --sizes 4096 --strategy random --max-configs 24 --top 1 --no-db"
  run ocl-w1 90 $G tune $D $O --workers 1 --search-seed 1 --store "$S/w1" --out "$W/ocl-w1"
  run ocl-w16 60 $G tune $D $O --workers 16 --search-seed 2 --store "$S/w16" --out "$W/ocl-w16"
  for i in 1 2 3 4; do
    timeout 90 $G tune $D $O --workers 4 --search-seed $((10 + i)) --store "$S/p$i" --out "$W/ocl-p$i" > "$W/ocl-p$i.txt" 2>&1 &
  done
  wait
  # The rate benchmark of tune-rest again (same 200 random points of kernel 6, pruning off):
  # the checked run is now the warm-up and the result is downloaded into reused host memory.
  t0=$(date +%s%N)
  run rate-gemmlab 70 $G tune $D --backends cuda --kernels 6 --sizes 4096 --strategy random --max-configs 200 \
    --switches none --caps none --prune 1000000 --top 1 --store "$W/rate-store" --no-db --out "$W/rate-gemmlab"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/rate-gemmlab.txt"
  # CUDA's half of kernels 6-11 at 4096, now seeded with the published configuration; the
  # store comes back so that the next call replays it and adds OpenCL (interleaved final round).
  cp -r results/tuned "$W/tuned"
  t0=$(date +%s%N)
  run tune-cuda-4096 230 $G tune $D --backends cuda --kernels 6,7,8,9,10,11 --sizes 4096 --strategy anneal \
    --max-configs 150 --store "$W/store-4096" --db "$W/tuned" --out "$W/tune-cuda-4096"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/tune-cuda-4096.txt"
  ;;
tune-both-4096)
  # Issue 10, session 3, second call: kernels 6-11 at 4096 on both toolchains. CUDA's searches
  # are answered from tune-diag's store (.gpu/prev/store-4096: the same seeded walks replay
  # exactly), OpenCL's are searched (its compiler builds about 2.4 programs/s at most, so
  # each search gets 50 s), and the final round interleaves both toolchains and cuBLAS.
  cp -r .gpu/prev/store-4096 "$W/store-4096"
  cp -r .gpu/prev/tuned "$W/tuned"
  t0=$(date +%s%N)
  run tune-4096 470 $G tune $D --kernels 6,7,8,9,10,11 --sizes 4096 --strategy anneal --max-configs 150 \
    --time-limit 50 --store "$W/store-4096" --db "$W/tuned" --out "$W/tune-4096"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/tune-4096.txt"
  ;;
tune-8192)
  # Issue 10, session 3, third call: kernels 6-11 at 8192, both toolchains, seeded annealing
  # with 25 s per search, checked against cuBLAS DGEMM, top 5 per toolchain interleaved.
  cp -r .gpu/prev/tuned "$W/tuned"
  [ -d /tmp/gemmlab-tune-both-4096/tuned ] && cp -r /tmp/gemmlab-tune-both-4096/tuned/. "$W/tuned/"
  t0=$(date +%s%N)
  run tune-8192 480 $G tune $D --kernels 6,7,8,9,10,11 --sizes 8192 --check dgemm --strategy anneal \
    --max-configs 100 --time-limit 25 --top 5 --store "$W/store-8192" --db "$W/tuned" --out "$W/tune-8192"
  echo "end to end: $(( ($(date +%s%N) - t0) / 1000000 )) ms" >> "$W/tune-8192.txt"
  ;;
nvrtc-h200)
  # Issue 11: the CUDA backend on its own NVRTC loader (tests with GEMMLAB_REQUIRE_CUDA=1), and
  # the same kernels through NVRTC 11.8 from NVIDIA's wheel (.gpu/nvrtc-11.8.tar.xz, made by
  # scripts/nvrtc/fetch.sh 11.8) next to the machine's NVRTC 13.0, on the same GPU in one call.
  export GEMMLAB_CACHE=/tmp/gemmlab-cache
  mkdir -p "$GEMMLAB_CACHE/nvrtc" && tar xJf .gpu/nvrtc-11.8.tar.xz -C "$GEMMLAB_CACHE/nvrtc"
  $G nvrtc > "$W/nvrtc.txt" 2>&1
  $G devices > "$W/devices.txt" 2>&1
  mkdir -p "$W/tests"
  timeout 200 bash -c 'for t in $(ls .gpu/tests/* | grep -v -e /report- -e /cli_exit- -e /tune_opencl- -e /offline_nvrtc-); do
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 90 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done' > "$W/tests/tests.txt" 2>&1
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  run compare-nvrtc-11.8 140 $G compare $D --backends cuda --nvrtc 11.8 --sizes 1024,2048,4096 --keep-ptx --out "$W/compare-nvrtc-11.8"
  run compare-nvrtc-13.0 140 $G compare $D --backends cuda --sizes 1024,2048,4096 --keep-ptx --out "$W/compare-nvrtc-13.0"
  ;;
blas-f32)
  # Issue 12, first call: the CLBlast kernels and the GEMM routine on the GPU (tests with
  # GEMMLAB_REQUIRE_CUDA=1: the routine's test client, the twins), then both kernels tuned
  # in f32 per toolchain: xgemm at 4096, xgemmdirect at 512, interleaved with cuBLAS.
  $G devices > "$W/devices.txt" 2>&1
  mkdir -p "$W/tests" "$W/tuned"
  timeout 170 bash -c 'for t in $(ls .gpu/tests/* | grep -e /routine_client- -e /cuda_kernels- -e /twins- -e /cuda_backend-); do
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 GEMMLAB_TEST_DEVICE=h200 timeout 100 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done' > "$W/tests/tests.txt" 2>&1
  grep -E "^== |test result|FAILED|panicked|routine calls" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  run tune-xgemm-f32 200 $G tune $D --kernels xgemm --sizes 4096 --strategy anneal --max-configs 400 --switches none --caps none \
    --time-limit 70 --top 5 --store "$W/store" --db "$W/tuned" --out "$W/tune-xgemm-f32"
  run tune-direct-f32 150 $G tune $D --kernels xgemmdirect --sizes 512 --strategy anneal --max-configs 300 --switches none --caps none \
    --time-limit 50 --top 5 --store "$W/store" --db "$W/tuned" --out "$W/tune-direct-f32"
  ;;
blas-f64)
  # Issue 12, second call: the same in f64 (against cuBLAS DGEMM), then the routine's
  # crossover per toolchain and precision from the tuned configurations of both calls.
  mkdir -p "$W/tuned"
  cp -r /tmp/gemmlab-blas-f32/tuned/. "$W/tuned/" 2>/dev/null || cp -r .gpu/prev/tuned/. "$W/tuned/"
  run tune-xgemm-f64 200 $G tune $D --kernels xgemm --sizes 4096 --precision f64 --strategy anneal --switches none --caps none \
    --max-configs 400 --time-limit 70 --top 5 --store "$W/store" --db "$W/tuned" --out "$W/tune-xgemm-f64"
  run tune-direct-f64 130 $G tune $D --kernels xgemmdirect --sizes 512 --precision f64 --strategy anneal --switches none --caps none \
    --max-configs 300 --time-limit 40 --top 5 --store "$W/store" --db "$W/tuned" --out "$W/tune-direct-f64"
  run crossover 150 $G crossover $D --precision f32,f64 --reps 10 --db "$W/tuned" --out "$W/crossover"
  ;;
blas-compare)
  # Issue 12, third call: the tuned kernels against cuBLAS at 1024-8192 and on non-square
  # shapes, f32 and f64; BLAS calls other than C = A B (row-major, transposes, alpha/beta,
  # ld); the routine end to end (gemmlab gemm) next to cuBLAS.
  mkdir -p "$W/tuned"
  cp -r /tmp/gemmlab-blas-f64/tuned/. "$W/tuned/" 2>/dev/null || cp -r .gpu/prev/tuned/. "$W/tuned/"
  # blas-f64's f64 crossover ran on published defaults (its tuned entries were filed under
  # a call tag the routine did not look up); measured again on the tuned configurations.
  run crossover-f64 100 $G crossover $D --precision f64 --reps 10 --db "$W/tuned" --out "$W/crossover-f64"
  run compare-f32 130 $G compare $D --tuned --db "$W/tuned" --kernels xgemm,xgemmdirect,10 \
    --sizes 1024,2048,4096,8192,8192x1024x4096,1024x8192x4096,4096x4096x256 --out "$W/compare-f32"
  run compare-f64 120 $G compare $D --tuned --db "$W/tuned" --kernels xgemm,xgemmdirect --precision f64 \
    --sizes 1024,2048,4096,8192,8192x1024x4096,4096x4096x256 --out "$W/compare-f64"
  run compare-calls 80 bash -c "$G compare $D --tuned --db $W/tuned --kernels xgemm,xgemmdirect --sizes 4096 \
    --layout row --trans-a t --alpha 1.5 --beta 0.5 --out $W/compare-row-tn && \
    $G compare $D --tuned --db $W/tuned --kernels xgemm,xgemmdirect --sizes 4096 --precision f64 \
    --trans-b t --beta 1 --lda 4100 --ldc 4160 --out $W/compare-f64-nt-ld"
  run gemm 80 bash -c "$G gemm $D --db $W/tuned --sizes 0x5x3,7x5x3,100x37x129,1000x300x77 --layout row --trans-a t \
    --alpha 2 --beta 0.5 --lda 1100 --offsets 1,0,3 --reps 10; \
    $G gemm $D --db $W/tuned --precision f64 --sizes 64,256,1024,4096 --reps 10"
  ;;
blas-tune-f32)
  # Issue 12, fourth call: xgemm f32 at 4096 again, both toolchains, in the region of CLBlast's
  # larger tiles that blas-f32's 70-second walk hardly reached (MWG/NWG 64-128, 8x8 to 16x16
  # work-groups, vector widths 2-8, both operands in local memory), resuming blas-f32's store.
  mkdir -p "$W/tuned"; cp -r .gpu/prev/store "$W/store"; cp -r .gpu/prev/tuned/. "$W/tuned/"
  run tune-xgemm-f32-wide 480 $G tune $D --kernels xgemm --sizes 4096 --strategy anneal --max-configs 700 \
    --time-limit 230 --top 6 --switches none --caps none --values MWG=64,128 --values NWG=64,128 \
    --values KWG=16,32 --values MDIMC=8,16 --values NDIMC=8,16 --values MDIMA=8,16,32 --values NDIMB=8,16,32 \
    --values KWI=2,8 --values VWM=2,4,8 --values VWN=2,4,8 --values SA=1 --values SB=1 \
    --store "$W/store" --db "$W/tuned" --out "$W/tune-xgemm-f32-wide"
  ;;
lecture)
  # Issue 13: the lecture's kernels on both toolchains in both precisions: the twins compared
  # element by element (cuda_kernels, GEMMLAB_REQUIRE_CUDA=1), every BLOCK_SIZE (and vector
  # width) of every variant at 2047 (a multiple of no block size), then each at its best at 1023
  # and 4095. Then issue 12's leftovers: the f32 crossover and the tuned xgemm at 1024-8192 again
  # with blas-tune-f32's bests, and the routine end to end on odd calls.
  mkdir -p "$W/tests" "$W/tuned"; cp -r .gpu/prev/tuned/. "$W/tuned/"
  L=lecture_naive,lecture_at,lecture_bt,lecture_bt_vec,lecture_tiled,lecture_prefetch,lecture_wide
  timeout 100 bash -c 'for t in $(ls .gpu/tests/* | grep -e /cuda_kernels- -e /twins-); do
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 90 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done' > "$W/tests/tests.txt" 2>&1
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  for p in f32 f64; do
    run lecture-tune-$p 115 $G tune $D --kernels $L --sizes 2047 --precision $p --strategy exhaustive \
      --switches none --caps none --top 12 --reps 10 --store "$W/store" --db "$W/tuned" --out "$W/lecture-tune-$p"
  done
  run lecture-compare 90 bash -c "$G compare $D --tuned --db $W/tuned --kernels $L --sizes 1023,4095 --reps 10 --out $W/lecture-compare-f32 && \
    $G compare $D --tuned --db $W/tuned --kernels $L --sizes 1023,4095 --precision f64 --reps 10 --out $W/lecture-compare-f64"
  run xgemm-compare 60 $G compare $D --tuned --db "$W/tuned" --kernels xgemm --sizes 1024,2048,4096,8192,4096x4096x256 --out "$W/xgemm-compare"
  run crossover-f32 45 $G crossover $D --precision f32 --reps 10 --db "$W/tuned" --out "$W/crossover-f32"
  run gemm 30 $G gemm $D --db "$W/tuned" --sizes 0x5x3,7x5x3,100x37x129,1000x300x77 --layout row --trans-a t \
    --alpha 2 --beta 0.5 --lda 1100 --offsets 1,0,3 --reps 10
  ;;
lecture-strides)
  # Issue 13: every lecture kernel, both toolchains, both precisions, on a row-major call with
  # odd sizes and strides above the widths (each run checked against the f64 reference), and
  # the column-major form of the same call (its operands reach the kernels through the swap).
  L=lecture_naive,lecture_at,lecture_bt,lecture_bt_vec,lecture_tiled,lecture_prefetch,lecture_wide
  for p in f32 f64; do
    run strides-row-$p 60 $G compare $D --kernels $L --sizes 1000x999x1001 --precision $p --layout row \
      --lda 1013 --ldb 1009 --ldc 1003 --reps 5 --out "$W/strides-row-$p"
    run strides-col-$p 60 $G compare $D --kernels $L --sizes 1000x999x1001 --precision $p --layout col \
      --lda 1013 --ldb 1009 --ldc 1003 --trans-b t --reps 5 --out "$W/strides-col-$p"
  done
  ;;
simt-tune-4096)
  # Issue 14, first call: the SIMT family's defaults next to CLBlast's xgemm and cuBLAS; its
  # tests on CUDA and NVIDIA OpenCL (cp.async included); then each toolchain tuned at 4096
  # (tiles, pipeline depth, cp.async, padding, rasterisation, register caps; no split-K).
  $G devices > "$W/devices.txt" 2>&1
  mkdir -p "$W/tuned" "$W/tests"; cp -r .gpu/prev/tuned/. "$W/tuned/"
  run smoke-default 60 $G compare $D --kernels simt,xgemm --sizes 4096 --reps 10 --out "$W/smoke-default"
  for t in .gpu/tests/simt_kernel-*; do
    echo "== $t (OpenCL: h200)"; GEMMLAB_REQUIRE_CUDA=1 GEMMLAB_TEST_DEVICE=h200 timeout 100 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/simt.txt"
  for t in .gpu/tests/cuda_kernels-*; do
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 80 "$t" --test-threads=1 twins 2>&1; echo "== exit $?"
  done > "$W/tests/twins.txt"
  cat "$W"/tests/*.txt | grep -E "^== |test result|FAILED|panicked|checked runs" > "$W/tests/summary.txt"
  run tune-4096 340 $G tune $D --kernels simt --sizes 4096 --strategy anneal --max-configs 500 --time-limit 140 \
    --top 5 --values SPLITK=1 --values BM=64,128,256 --values BN=64,128,256 --values WM=32,64,128 \
    --values WN=32,64,128 --switches ASYNC_COPY,SMEM_PAD,RASTER --caps 128,168 \
    --store "$W/store" --db "$W/tuned" --out "$W/tune-4096"
  ;;
simt-tune-rest)
  # Issue 14, second call: the SIMT family tuned per toolchain at 2048 and 8192 (same space),
  # and on a tall-skinny, a long-K and a small-K shape (split-K in the space), resuming
  # simt-tune-4096's store and database.
  mkdir -p "$W/tuned"; cp -r .gpu/prev/tuned/. "$W/tuned/"; cp -r .gpu/prev/store "$W/store" 2>/dev/null
  SPACE="--values BM=64,128,256 --values BN=64,128,256 --values WM=32,64,128 --values WN=32,64,128 --switches ASYNC_COPY,SMEM_PAD,RASTER --caps 128,168"
  run tune-2048 120 $G tune $D --kernels simt --sizes 2048 --strategy anneal --max-configs 200 --time-limit 45 \
    --top 3 --values SPLITK=1,2 $SPACE --store "$W/store" --db "$W/tuned" --out "$W/tune-2048"
  run tune-8192 130 $G tune $D --kernels simt --sizes 8192 --check dgemm --strategy anneal --max-configs 150 \
    --time-limit 45 --top 3 --reps 10 --values SPLITK=1 $SPACE --store "$W/store" --db "$W/tuned" --out "$W/tune-8192"
  run tune-thin 270 $G tune $D --kernels simt --sizes 16384x128x2048,1024x1024x32768,8192x8192x256 \
    --strategy anneal --max-configs 120 --time-limit 30 --top 3 --values SPLITK=1,2,4,8,16 --values BK=8,16,32 \
    $SPACE --store "$W/store" --db "$W/tuned" --out "$W/tune-thin"
  ;;
simt-measure)
  # Issue 14, third call: a longer search per toolchain at 4096 in the region the first one
  # found (large tiles, cp.async), resuming its store; then every toolchain at its own best
  # (the database of bests) next to cuBLAS and CLBlast's tuned xgemm at the tuned sizes.
  mkdir -p "$W/tuned"; cp -r .gpu/prev/tuned/. "$W/tuned/"; cp -r .gpu/prev/store "$W/store" 2>/dev/null
  run refine-cuda 130 $G tune $D --backends cuda --kernels simt --sizes 4096 --strategy anneal --max-configs 300 \
    --time-limit 100 --top 4 --values SPLITK=1 --values BM=128,256 --values BN=128,256 --values TM=8,16 \
    --values TN=8,16 --values WM=32,64,128 --values WN=32,64,128 --values STAGES=2,3,4 \
    --switches ASYNC_COPY,RASTER --caps none --search-seed 2 --store "$W/store" --db "$W/tuned" --out "$W/refine-cuda"
  run refine-opencl 90 $G tune $D --backends opencl --kernels simt --sizes 4096 --strategy anneal --max-configs 100 \
    --time-limit 60 --top 4 --values SPLITK=1 --values BM=64,128,256 --values BN=64,128,256 --values TM=8,16 \
    --values TN=8,16 --values STAGES=2,3,4 --switches ASYNC_COPY,RASTER --caps none --search-seed 2 \
    --store "$W/store" --db "$W/tuned" --out "$W/refine-opencl"
  run compare-tuned 230 $G compare $D --tuned --db "$W/tuned" --kernels simt,xgemm --check dgemm \
    --sizes 2048,4096,8192,16384x128x2048,1024x1024x32768,8192x8192x256 --reps 20 --keep-ptx --out "$W/compare-tuned"
  # The 4096 bests at the other square sizes (the 8192 searches tried few configurations).
  CU=$(python3 scripts/simt/defines.py "$W/tuned" nvidia-h200 simt cuda 4096 4096 4096)
  CL=$(python3 scripts/simt/defines.py "$W/tuned" nvidia-h200 simt opencl 4096 4096 4096)
  echo "cuda: $CU" > "$W/bests-4096.txt"; echo "opencl: $CL" >> "$W/bests-4096.txt"
  run cross-cuda 60 $G compare $D --backends cuda --kernels simt --sizes 2048,8192 --check dgemm $CU --out "$W/cross-cuda"
  run cross-opencl 60 $G compare $D --backends opencl --kernels simt --sizes 2048,8192 --check dgemm $CL --out "$W/cross-opencl"
  ;;
simt-profile)
  # Issue 14, fourth call: each feature switched off/on at each toolchain's best 4096
  # configuration (sweep hints); Nsight Compute on the best configurations (CUDA natively,
  # OpenCL's PTX through the CUDA JIT: ncu does not profile OpenCL; the jit sweep runs the
  # CUDA build first, two launches, skipped); SASS of both.
  # First the OpenCL search simt-measure could not run (its store was refused: gemmlab read
  # NVIDIA OpenCL's PCI slot wrongly, fixed since) and the OpenCL 4096 best at 2048 and 8192.
  mkdir -p "$W/tuned"; cp -r .gpu/prev/tuned/. "$W/tuned/"; cp -r .gpu/prev/store "$W/store" 2>/dev/null
  run refine-opencl 90 $G tune $D --backends opencl --kernels simt --sizes 4096 --strategy anneal --max-configs 100 \
    --time-limit 60 --top 4 --values SPLITK=1 --values BM=64,128,256 --values BN=64,128,256 --values TM=8,16 \
    --values TN=8,16 --values STAGES=2,3,4 --switches ASYNC_COPY,RASTER --caps none --search-seed 2 \
    --store "$W/store" --db "$W/tuned" --out "$W/refine-opencl"
  DB="$W/tuned"
  CU=$(python3 scripts/simt/defines.py $DB nvidia-h200 simt cuda 4096 4096 4096)
  CL=$(python3 scripts/simt/defines.py $DB nvidia-h200 simt opencl 4096 4096 4096)
  echo "cuda: $CU" > "$W/bests.txt"; echo "opencl: $CL" >> "$W/bests.txt"
  run cross-opencl 60 $G compare $D --backends opencl --kernels simt --sizes 2048,8192 --check sampled $CL --out "$W/cross-opencl"
  run hints-cuda 60 $G sweep hints $D --backends cuda --kernels simt --sizes 4096 $CU --out "$W/hints-cuda"
  run hints-opencl 60 $G sweep hints $D --backends opencl --kernels simt --sizes 4096 $CL --out "$W/hints-opencl"
  timeout 100 ncu --clock-control none --csv $NCU_METRICS -k regex:'simt_gemm|gemm|sgemm' -c 3 \
    $G compare $D --backends cuda --kernels simt --sizes 4096 --reps 1 --warmup 0 --batch 1 $CU --out "$W/ncu-run-cuda" > "$W/ncu-cuda.csv" 2>&1
  echo "== exit $?" >> "$W/ncu-cuda.csv"
  timeout 100 ncu --clock-control none --csv $NCU_METRICS -k regex:simt_gemm --launch-skip 2 -c 2 \
    $G sweep jit $D --kernels simt --sizes 4096 --reps 1 --warmup 0 --batch 1 $CL --out "$W/ncu-run-jit" > "$W/ncu-opencl-jit.csv" 2>&1
  echo "== exit $?" >> "$W/ncu-opencl-jit.csv"
  mkdir -p "$W/sass"
  timeout 30 $G ptx --kernel simt $D --backends cuda $CU --out "$W/sass/cuda" > "$W/sass/ptx-cuda.txt" 2>&1
  timeout 30 $G ptx --kernel simt $D --backends opencl $CL --out "$W/sass/opencl" > "$W/sass/ptx-opencl.txt" 2>&1
  for f in "$W"/sass/*/*.ptx; do
    ptxas -arch=sm_90 -v -o "${f%.ptx}.cubin" "$f" > "${f%.ptx}.ptxas.txt" 2>&1
    cuobjdump -sass "${f%.ptx}.cubin" > "${f%.ptx}.sass" 2>&1
  done
  ;;
simt-check)
  # Issue 14, fifth call: the CUDA build of OpenCL's best configuration (it faulted under ncu in
  # simt-profile) under compute-sanitizer and alone; both toolchains at their final bests next
  # to cuBLAS in one run; ncu on OpenCL's PTX (CUDA JIT) of CUDA's best configuration, so both
  # compilers' code for the same configuration is profiled.
  DB=.gpu/prev/tuned
  CU=$(python3 scripts/simt/defines.py $DB nvidia-h200 simt cuda 4096 4096 4096)
  CL=$(python3 scripts/simt/defines.py $DB nvidia-h200 simt opencl 4096 4096 4096)
  echo "cuda: $CU" > "$W/bests.txt"; echo "opencl: $CL" >> "$W/bests.txt"
  run memcheck-cuda-clbest 150 compute-sanitizer --tool memcheck $G compare $D --backends cuda --kernels simt \
    --sizes 1000x999x1001 --reps 2 --warmup 1 $CL --out "$W/memcheck-cuda-clbest"
  run cuda-clbest 60 $G compare $D --kernels simt --sizes 4096 --reps 10 $CL --out "$W/both-at-clbest"
  run compare-final 150 $G compare $D --tuned --db $DB --kernels simt --sizes 2048,4096,8192 --check dgemm \
    --reps 20 --out "$W/compare-final"
  timeout 100 ncu --clock-control none --csv $NCU_METRICS -k regex:simt_gemm --launch-skip 2 -c 2 \
    $G sweep jit $D --kernels simt --sizes 4096 --reps 1 --warmup 0 --batch 1 $CU --out "$W/ncu-run-jit" > "$W/ncu-opencl-jit.csv" 2>&1
  echo "== exit $?" >> "$W/ncu-opencl-jit.csv"
  ;;
simt-jit)
  # Issue 14, sixth call: the jit sweep of the SIMT kernel faulted under ncu (simt-profile,
  # simt-check) where compare under ncu did not: the same sweep without ncu, and under
  # compute-sanitizer at an odd size.
  DB=.gpu/prev/tuned
  CU=$(python3 scripts/simt/defines.py $DB nvidia-h200 simt cuda 4096 4096 4096)
  run jit-plain 60 $G sweep jit $D --kernels simt --sizes 4096 --reps 5 $CU --out "$W/jit-plain"
  run jit-memcheck 150 compute-sanitizer --tool memcheck $G sweep jit $D --kernels simt --sizes 1000x999x1001 \
    --reps 1 --warmup 0 --batch 1 $CU --out "$W/jit-memcheck"
  ;;
simt-square)
  # Issue 14, seventh call: each toolchain's 4096 best on both toolchains at 4096 and 8192,
  # next to cuBLAS in one run (the OpenCL-only runs had no cuBLAS beside them).
  DB=.gpu/prev/tuned
  CU=$(python3 scripts/simt/defines.py $DB nvidia-h200 simt cuda 4096 4096 4096)
  CL=$(python3 scripts/simt/defines.py $DB nvidia-h200 simt opencl 4096 4096 4096)
  echo "cuda: $CU" > "$W/bests.txt"; echo "opencl: $CL" >> "$W/bests.txt"
  run square-clbest 120 $G compare $D --kernels simt --sizes 4096,8192 --check dgemm --reps 20 $CL --out "$W/square-clbest"
  run square-cubest 120 $G compare $D --kernels simt --sizes 4096,8192 --check dgemm --reps 20 $CU --out "$W/square-cubest"
  ;;
specs)
  # Issue 23: users' kernels from spec files (specs/) on both toolchains at sizes well past
  # the L2 (bandwidth-bound ones in GB/s, next to the driver's peak bandwidth), the GEMM specs
  # next to their built-in twins and cuBLAS in one run, every spec tuned per toolchain, and
  # the spec tests with CUDA required (twins on both toolchains, one-language specs n/a).
  $G devices > "$W/devices.txt" 2>&1
  $G devices --json > "$W/devices.json" 2>&1
  mkdir -p "$W/tests"
  for t in .gpu/tests/spec_opencl-*; do
    echo "== $t"; GEMMLAB_BIN=$PWD/$G GEMMLAB_REQUIRE_CUDA=1 timeout 150 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  BIG="n=134217728,nx=8192,ny=8192,p=8192,q=8192"
  run compare-bandwidth 150 $G compare $D --spec specs/saxpy/saxpy.toml --spec specs/stencil/stencil.toml \
    --spec specs/tutorial-transpose/transpose.toml --spec specs/reduction/reduction.toml --sizes $BIG \
    --reps 20 --seed 23 --keep-ptx --out "$W/compare-bandwidth"
  run compare-padding 60 $G compare $D --spec specs/tutorial-padding/padding.toml \
    --sizes p=8000,q=8000,p_xl=8192,q_xl=8192 --reps 20 --seed 23 --keep-ptx --out "$W/compare-padding"
  run compare-gemm 120 $G compare $D --kernels 1,6 --spec specs/gemm-tutorial/myGEMM1.toml \
    --spec specs/gemm-tutorial/myGEMM6.toml --sizes 4096,m=4096,n=4096,k=4096 --reps 20 --seed 23 \
    --keep-ptx --out "$W/compare-gemm"
  run tune-bandwidth 200 $G tune $D --spec specs/saxpy/saxpy.toml --spec specs/stencil/stencil.toml \
    --spec specs/tutorial-transpose/transpose.toml --spec specs/reduction/reduction.toml --sizes $BIG \
    --max-configs 40 --time-limit 15 --top 3 --seed 23 --store "$W/store" --db "$W/tuned" --out "$W/tune-bandwidth"
  run tune-gemm 100 $G tune $D --spec specs/gemm-tutorial/myGEMM6.toml --sizes m=4096,n=4096,k=4096 \
    --max-configs 60 --time-limit 30 --top 3 --seed 23 --store "$W/store" --db "$W/tuned" --out "$W/tune-gemm"
  ;;
specs-2)
  # Issue 23, second call: the spec tests again (the twin test now names the GPU), the
  # register-cap sweep of the GEMM spec on both toolchains, and compare --tuned: every spec
  # in each toolchain's best from the first call's database (results/h200/specs/tuned).
  mkdir -p "$W/tests"
  for t in .gpu/tests/spec_opencl-*; do
    echo "== $t"; GEMMLAB_BIN=$PWD/$G GEMMLAB_REQUIRE_CUDA=1 timeout 150 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  run sweep-registers-gemm 150 $G sweep registers $D --spec specs/gemm-tutorial/myGEMM6.toml \
    --sizes m=4096,n=4096,k=4096 --caps none,255,168,128,96,64 --reps 10 --seed 23 --out "$W/sweep-registers-gemm"
  BIG="n=134217728,nx=8192,ny=8192,p=8192,q=8192"
  # (one size point per command: saxpy's n and the GEMM's n are different dimensions that share a name)
  run compare-tuned 150 $G compare $D --tuned --db results/h200/specs/tuned --spec specs/saxpy/saxpy.toml \
    --spec specs/stencil/stencil.toml --spec specs/tutorial-transpose/transpose.toml --spec specs/reduction/reduction.toml \
    --sizes $BIG --reps 20 --seed 23 --out "$W/compare-tuned"
  run compare-tuned-gemm 100 $G compare $D --tuned --db results/h200/specs/tuned --spec specs/gemm-tutorial/myGEMM6.toml \
    --sizes m=4096,n=4096,k=4096 --reps 20 --seed 23 --out "$W/compare-tuned-gemm"
  ;;
clang)
  # Issue 25: the clang toolchains on the GPU. clang cannot be installed there, and its packages
  # (56 MB compressed) do not fit the 64 MiB a call carries beside the repository; so clang's PTX
  # is made here (GEMMLAB_CLANG_PTX=.gpu/clang-ptx cargo run --release --example clang_ptx --
  # sm_90) and replayed there (see clang_replay).
  clang_replay .gpu/clang-ptx
  ALL4="--backends cuda,opencl,clang-cuda,clang-opencl"
  $G devices > "$W/devices.txt" 2>&1
  $G devices --json > "$W/devices.json" 2>&1
  # gemmlab's records of kernels 3 and 6 on all four toolchains, and ptxas -v run by hand on the
  # clang PTX it wrote, to check the registers it recorded.
  for k in 3 6; do
    run build-gemm$k 60 $G build $D $ALL4 --kernel $k --out "$W/build"
  done
  for f in "$W"/build/*clang*.ptx; do
    echo "== $(basename "$f"): ptxas by hand ($(/usr/local/cuda/bin/ptxas --version | tail -1))"
    /usr/local/cuda/bin/ptxas -v --gpu-name=sm_90 -o /dev/null "$f" 2>&1 | grep -E 'Used|stack frame'
  done > "$W/build/by-hand.txt" 2>&1
  # Front end x assembler on the device: NVIDIA OpenCL compiled there, ptxas 13.0 and the driver JIT.
  run attribute 100 $G attribute $D --out "$W/attribute"
  # Every kernel, all four toolchains, cuBLAS in the same run.
  run compare 400 $G compare $D $ALL4 --sizes 1024,4096 --keep-ptx --out "$W/compare"
  ;;
clang-tune)
  # Issue 25: the four toolchains best against best. Every clang configuration is new source and
  # clang cannot run there, so on the staging machine `tune --arch sm_90` compiled the points these
  # random searches try (seed 1, 160 points, started at the committed database's bests) and kept
  # clang's PTX (scripts/clang/tune-ptx.sh); the searches replay it. CUDA and OpenCL walk their
  # own random points from the same start. The database starts as the committed one, which holds
  # CUDA's and OpenCL's long searches; a search offers its best, kept only where faster.
  # KS: the kernels of this call; the store and database carry over between calls (on a warm
  # machine in /tmp, else from .gpu/clang-store and .gpu/clang-db, copied from the last call's
  # archive). ASM=1: the assembler's share of speed; FINAL=1: every best next to cuBLAS.
  clang_replay .gpu/clang-ptx-tune
  DB=/tmp/gemmlab-clang-db; STORE=/tmp/gemmlab-clang-store
  [ -d "$DB" ] || { mkdir -p "$DB"; cp .gpu/clang-db/nvidia-h200.json "$DB/" 2>/dev/null || cp results/tuned/nvidia-h200.json "$DB/"; }
  [ -d "$STORE" ] || cp -r .gpu/clang-store "$STORE" 2>/dev/null || mkdir -p "$STORE"
  ALL4="--backends cuda,opencl,clang-cuda,clang-opencl"
  TUNE="--sizes 4096 --strategy random --search-seed 1 --max-configs 160 --time-limit 40 --top 5 --start-at results/tuned/nvidia-h200.json"
  for k in ${KS:-}; do
    run tune-$k 280 $G tune $D $ALL4 --kernels $k $TUNE --store "$STORE" --db "$DB" --out "$W/tune-$k"
  done
  cp "$DB/nvidia-h200.json" "$W/db-after.json"; cp -r "$STORE" "$W/store"
  if [ "${ASM:-0}" = 1 ]; then
    # The assembler's share of speed: the same clang PTX of each kernel at its published
    # defaults, assembled by the system ptxas and by the CUDA driver's JIT, each run next to
    # cuBLAS and CUDA's own build.
    CL3="--backends cuda,clang-cuda,clang-opencl --kernels 3,5,6,7,8,9,10,11,xgemm,simt --sizes 4096 --reps 10"
    run asm-ptxas 150 $G compare $D $CL3 --out "$W/asm-ptxas"
    GEMMLAB_ASSEMBLER=jit run asm-jit 150 $G compare $D $CL3 --out "$W/asm-jit"
  fi
  if [ "${FINAL:-0}" = 1 ]; then
    # Each toolchain's best of every kernel, next to cuBLAS, interleaved in one run.
    run tuned 200 $G compare $D $ALL4 --kernels 6,10,xgemm,simt --tuned --db "$DB" --sizes 4096 --reps 20 --out "$W/tuned"
  fi
  ;;
clang-jit)
  # The runtime's share: NVIDIA OpenCL's own PTX run through the CUDA driver's JIT on the CUDA
  # runtime, at 4096, next to CUDA in the same run (the kernels whose OpenCL build is slower).
  run jit 300 $G sweep jit $D --kernels 3,5,7,8,9,10,11,simt --sizes 4096 --out "$W/jit"
  ;;
tune-rate-diag)
  # Issue 26, first call: where a tuner's configuration goes. NVIDIA OpenCL's build rate by
  # threads, -cl-nv-verbose and a busy device (examples/opencl_builds.rs); then the same
  # searches with the binary before the changes (.gpu/gemmlab-before: the time split only)
  # and after, each with a fresh store.
  S="$W/stores"
  run opencl-builds 150 .gpu/opencl_builds NVIDIA xgemm 12
  OCL="--backends opencl --kernels xgemm --sizes 4096 --strategy anneal --switches none --caps none --top 1 --no-db"
  run ocl-before 75 .gpu/gemmlab-before tune $D $OCL --time-limit 40 --store "$S/ocl-before" --out "$W/ocl-before"
  run ocl-after 75 $G tune $D $OCL --time-limit 40 --store "$S/ocl-after" --out "$W/ocl-after"
  run ocl-after-w1 75 $G tune $D $OCL --time-limit 40 --workers 1 --store "$S/ocl-after-w1" --out "$W/ocl-after-w1"
  CU="--backends cuda --sizes 4096 --strategy random --top 1 --no-db --time-limit 30"
  run cuda-simt-before 60 .gpu/gemmlab-before tune $D $CU --kernels simt --store "$S/cs-before" --out "$W/cuda-simt-before"
  run cuda-simt-after 60 $G tune $D $CU --kernels simt --store "$S/cs-after" --out "$W/cuda-simt-after"
  run cuda-xgemm-after 60 $G tune $D $CU --kernels xgemm --store "$S/cx-after" --out "$W/cuda-xgemm-after"
  ;;
tune-anchors-a)
  # Issue 26, second call: NVIDIA OpenCL's build rate by threads and by processes; a search over
  # kernels that fault and hang on CUDA and on NVIDIA OpenCL; then CLBlast's tuner and gemmlab's
  # on OpenCL, 150 s each (scripts/tune-anchors). Carries .gpu/clblast (the two .deb files).
  run opencl-builds 120 .gpu/opencl_builds NVIDIA xgemm 8
  for tc in cuda opencl; do
    run faults-$tc 120 $G tune $D --backends $tc --spec specs/misbehave/misbehave.toml --strategy exhaustive \
      --launch-timeout 4 --top 1 --no-db --store "$W/faults-store-$tc" --out "$W/faults-$tc"
  done
  mkdir -p /tmp/clblast && for d in .gpu/clblast/*.deb; do dpkg -x "$d" /tmp/clblast; done
  CLBLAST=/tmp/clblast GEMMLAB=$G bash scripts/tune-anchors/run.sh opencl "$W/anchors" 150 > "$W/anchors-opencl.txt" 2>&1
  # The same OpenCL search compiling on the measuring thread, nothing overlapped (--workers 0).
  run ocl-w0 75 $G tune $D --backends opencl --kernels xgemm --sizes 4096 --strategy anneal --switches none \
    --caps none --time-limit 45 --max-configs 100000 --workers 0 --top 1 --no-db --store "$W/store-w0" --out "$W/ocl-w0"
  ;;
tune-anchors-bc)
  # Issue 26, the CUDA half and the re-measure in one call (each step's results archived as it
  # ends, so a call cut short keeps them): kernel_tuner and gemmlab on the same random xgemm
  # points (150 s each), gemmlab's SIMT search, NVIDIA OpenCL builds from 1-8 processes started
  # from the shell, then every tuner's best (the OpenCL ones from .gpu/anchors) next to cuBLAS.
  snap() { tar cJf "$OUT/$PART.tar.xz" -C "$W" .; }
  mkdir -p "$W/anchors"; cp -r .gpu/anchors/. "$W/anchors/"
  bash scripts/kernel_tuner/install-wheels.sh .gpu/wheels /tmp/kt-site > "$W/kt-install.txt" 2>&1
  PYTHONPATH=/tmp/kt-site GEMMLAB=$G SIMT_S=40 bash scripts/tune-anchors/run.sh cuda "$W/anchors" 150 > "$W/anchors-cuda.txt" 2>&1
  snap
  for p in 1 2 4 8; do
    t0=$(date +%s.%N)
    for i in $(seq $p); do
      GEMMLAB_BUILDS_CHILD=9$p$i timeout 60 .gpu/opencl_builds NVIDIA xgemm 8 > "$W/builds-p$p-$i.txt" 2>&1 &
    done
    wait
    echo "processes $p: wall $(python3 -c "import time; print(round(time.time() - $t0, 2))") s, each process's seconds for 8 builds: $(cat "$W"/builds-p$p-*.txt | tr '\n' ' ')" >> "$W/builds-processes.txt"
  done
  snap
  GEMMLAB=$G bash scripts/tune-anchors/run.sh remeasure "$W/anchors" > "$W/anchors-remeasure.txt" 2>&1
  ;;
tune-anchors-kt)
  # Issue 26, last call: kernel_tuner next to gemmlab on the same random points of the
  # tutorial's kernel 10 (scripts/kernel_tuner runs the tutorial's argument list), 150 s each,
  # and both bests re-measured next to cuBLAS (the earlier anchors carried in .gpu/anchors).
  mkdir -p "$W/anchors"; cp -r .gpu/anchors/. "$W/anchors/"
  bash scripts/kernel_tuner/install-wheels.sh .gpu/wheels /tmp/kt-site > "$W/kt-install.txt" 2>&1
  PYTHONPATH=/tmp/kt-site GEMMLAB=$G bash scripts/tune-anchors/run.sh cuda-kt "$W/anchors" 150 > "$W/anchors-kt.txt" 2>&1
  tar cJf "$OUT/$PART.tar.xz" -C "$W" .
  GEMMLAB=$G bash scripts/tune-anchors/run.sh remeasure "$W/anchors" > "$W/anchors-remeasure.txt" 2>&1
  ;;
nvrtc-procs)
  # Issue 26: does NVRTC build in parallel across processes? 1-16 `gemmlab build` processes
  # at once, each building the SIMT kernel at its defaults (its NVRTC compile time printed),
  # next to the 3.8-5.2 builds a search's 16 compile threads overlapped in one process.
  for p in 1 2 4 8 16; do
    t0=$(date +%s.%N)
    for i in $(seq $p); do
      timeout 120 $G build --device cuda --backends cuda --kernel simt --define BM=128 --define BN=$((64 + 64 * (i % 2))) \
        > "$W/build-p$p-$i.txt" 2>&1 &
    done
    wait
    echo "processes $p: wall $(python3 -c "import time; print(round(time.time() - $t0, 2))") s; compile ms: $(grep -h 'compile time' "$W"/build-p$p-*.txt | tr -s ' ' | cut -d' ' -f4 | tr '\n' ' ')" >> "$W/nvrtc-processes.txt"
  done
  cat "$W/nvrtc-processes.txt"
  ;;
depth-check)
  # Issue 26: the CUDA random search of xgemm with the queue 8 compile threads deep for
  # strategies that ignore outcomes (was 2): the same search as the anchors', 60 s.
  run cuda-xgemm-depth 120 $G tune $D --backends cuda --kernels xgemm --sizes 4096 --strategy random --search-seed 7 \
    --switches none --caps none --time-limit 60 --max-configs 100000 --top 1 --no-db --store "$W/store" --out "$W/cuda-xgemm-depth"
  grep -E " tried|device busy|per configuration" "$W/cuda-xgemm-depth.txt"
  ;;
build-processes-a)
  # Issue 26: NVIDIA OpenCL builds in a pool of build processes (gemmlab tune's default there
  # now). CLBlast's tuner and gemmlab's on OpenCL, 150 s each, with the CUDA compute cache on as
  # a user has it (a fresh folder; the other batches disable it), and both bests next to cuBLAS;
  # then the fault and hang search on OpenCL with the default pool. Carries .gpu/clblast.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-anchors
  mkdir -p /tmp/clblast && for d in .gpu/clblast/*.deb; do dpkg -x "$d" /tmp/clblast; done
  CLBLAST=/tmp/clblast GEMMLAB=$G bash scripts/tune-anchors/run.sh opencl "$W/anchors" 150 > "$W/anchors-opencl.txt" 2>&1
  tar cJf "$OUT/$PART.tar.xz" -C "$W" .
  GEMMLAB=$G timeout 150 bash scripts/tune-anchors/run.sh remeasure "$W/anchors" > "$W/anchors-remeasure.txt" 2>&1
  tar cJf "$OUT/$PART.tar.xz" -C "$W" .
  run faults-opencl 110 $G tune $D --backends opencl --spec specs/misbehave/misbehave.toml --strategy exhaustive \
    --launch-timeout 4 --top 1 --no-db --store "$W/faults-store" --out "$W/faults-opencl"
  for t in .gpu/tests/opencl_build_processes-*; do
    GEMMLAB_BIN=$G GEMMLAB_TEST_DEVICE=h200 run pool-tests 60 "$t" --test-threads=1
  done
  grep -E " tried|device busy|per configuration" "$W/anchors/gemmlab-opencl.log"
  ;;
build-processes-b)
  # Issue 26: the same OpenCL search without build processes, with them, and with them and the
  # CUDA compute cache on (fresh; the batches otherwise disable it), 60 s each with fresh
  # stores; the CUDA random searches of xgemm and SIMT after the queue fix (60 s each); the
  # pool's tests on NVIDIA OpenCL; the fault and hang search on OpenCL with build processes.
  snap() { tar cJf "$OUT/$PART.tar.xz" -C "$W" .; }
  OCL="--backends opencl --kernels xgemm --sizes 4096 --strategy anneal --switches none --caps none --top 1 --no-db --max-configs 100000 --time-limit 60"
  run ocl-pool-off 110 $G tune $D $OCL --build-processes 0 --store "$W/store-off" --out "$W/ocl-pool-off"
  run ocl-pool-on 110 $G tune $D $OCL --store "$W/store-on" --out "$W/ocl-pool-on"
  CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-$$ run ocl-pool-on-cache 110 $G tune $D $OCL --store "$W/store-on-cache" --out "$W/ocl-pool-on-cache"
  snap
  CU="--backends cuda --sizes 4096 --strategy random --search-seed 7 --top 1 --no-db --max-configs 100000 --time-limit 60"
  run cuda-xgemm 110 $G tune $D $CU --kernels xgemm --switches none --caps none --store "$W/store-cx" --out "$W/cuda-xgemm"
  run cuda-simt 110 $G tune $D $CU --kernels simt --store "$W/store-cs" --out "$W/cuda-simt"
  snap
  for t in .gpu/tests/opencl_build_processes-*; do
    GEMMLAB_BIN=$G GEMMLAB_TEST_DEVICE=h200 run pool-tests 90 "$t" --test-threads=1
  done
  run faults-opencl 100 $G tune $D --backends opencl --spec specs/misbehave/misbehave.toml --strategy exhaustive \
    --launch-timeout 4 --build-processes 4 --top 1 --no-db --store "$W/faults-store" --out "$W/faults-opencl"
  grep -E " tried|device busy|per configuration" "$W"/ocl-pool-*.txt "$W"/cuda-*.txt
  ;;
routine-suite-cuda|routine-suite-opencl)
  # Issue 27: the routine tuned over the default suite (suites/routine.txt) on one toolchain,
  # ${TL:-2} s per family search (seeded with routine::fit's picks for the shape), into a copy
  # of the committed database (results/tuned); the database after each call is kept (a call
  # cut short keeps what it tuned); .gpu/db, where present, holds an earlier call's database
  # (its choices seed and compete). Then gemm --suite on both toolchains, each next to cuBLAS
  # in the same run, its rows written for the report's section on the routine. The compute
  # cache on, as a user has it.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  TC=${PART#routine-suite-}
  mkdir -p "$W/db"; cp results/tuned/*.json "$W/db/" 2>/dev/null; cp .gpu/db/*.json "$W/db/" 2>/dev/null
  snap() { tar cJf "$OUT/$PART.tar.xz" -C "$W" .; }
  ( while sleep 60; do snap; done ) & SNAP=$!
  # SUITE (default suites/routine.txt) is the suite tuned, TT the tuning's limit in seconds.
  run tune-suite-$TC ${TT:-430} $G tune $D --backends $TC --suite ${SUITE:-suites/routine.txt} --time-limit ${TL:-2} --max-configs 100000 \
    --top 1 --warmup 1 --reps 5 --search-reps 2 --db "$W/db" --store "$W/store" --out "$W/tune-$TC"
  kill $SNAP
  # SKIP_GEMM=1: tuning only (a first call whose database the next call carries in .gpu/db).
  [ -z "${SKIP_GEMM:-}" ] && run gemm-suite 150 $G gemm $D --backends cuda,opencl --suite suites/routine.txt \
    --db "$W/db" --reps 10 -v --out "$W/gemm-suite-rows"
  # f64 over the same suite: the routine's f64 kernels (xgemm, xgemmdirect) next to DGEMM.
  [ "$TC" = opencl ] && [ -z "${SKIP_GEMM:-}" ] && run gemm-suite-f64 150 $G gemm $D --backends cuda,opencl --suite suites/routine.txt \
    --precision f64 --db "$W/db" --reps 5 --out "$W/gemm-suite-f64-rows"
  [ -z "${SKIP_GEMM:-}" ] && run report 60 $G report --from "$W/gemm-suite-rows" --out "$W/report"
  grep -E "^== suite|model seeds|routine on" "$W/tune-suite-$TC.txt" | tail -60
  cat "$W/gemm-suite.txt" 2>/dev/null | grep -v chosen
  ;;
routine-direct-cuda|routine-direct-opencl)
  # Issue 27: the in-place SIMT kernel (simtdirect) tuned for every call of the default suite
  # on one toolchain, ${TL:-2} s a call, against the choices the database (results/tuned, or
  # .gpu/db from an earlier call) already holds: the routine keeps whichever is faster for the
  # whole call. First the in-place kernel's tests on this GPU (.gpu/tests-direct/*.xz, failing
  # instead of skipping; SKIP_TESTS set: not). SKIP_GEMM unset: gemm --suite on both toolchains
  # next to cuBLAS.
  # The searches vary switches and register caps as tune's defaults do; TUNE_ARGS adds
  # options (e.g. "--switches none --caps none" for the published switches only).
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  TC=${PART#routine-direct-}
  mkdir -p "$W/db"; cp results/tuned/*.json "$W/db/" 2>/dev/null; cp .gpu/db/*.json "$W/db/" 2>/dev/null
  [ -z "${SKIP_TESTS:-}" ] && direct_tests
  snap() { tar cJf "$OUT/$PART.tar.xz" -C "$W" .; }
  ( while sleep 60; do snap; done ) & SNAP=$!
  run tune-suite-$TC ${TT:-330} $G tune $D --backends $TC --kernels ${KERNELS:-simtdirect} --suite ${SUITE:-suites/routine.txt} \
    --time-limit ${TL:-2} --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --db "$W/db" \
    --store "$W/store" --out "$W/tune-$TC" ${TUNE_ARGS:-}
  kill $SNAP
  [ -z "${SKIP_GEMM:-}" ] && run gemm-suite 150 $G gemm $D --backends cuda,opencl --suite suites/routine.txt \
    --db "$W/db" --reps 10 -v --out "$W/gemm-suite-rows"
  [ -z "${SKIP_GEMM:-}" ] && run report 60 $G report --from "$W/gemm-suite-rows" --out "$W/report"
  grep -E "^== suite|routine on|kept" "$W/tune-suite-$TC.txt" | tail -60
  grep -v chosen "$W/gemm-suite.txt" 2>/dev/null
  ;;
routine-tc-cuda|routine-tc-opencl)
  # Issues 27/28: the tensor-core family in the routine, on one toolchain, against the choices
  # the database (results/tuned, or .gpu/db from an earlier call) already holds. f64: tc (FP64
  # tensor cores) and the direct kernel searched per call of the default suite. f32: tc by FP32
  # emulation (3xTF32, --fp32-emulation), kept beside each call's FP32-arithmetic choice.
  # ${TL:-5} s a search, published switch states only where they lower precision (tune's rule).
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  TC=${PART#routine-tc-}
  mkdir -p "$W/db"; cp results/tuned/*.json "$W/db/" 2>/dev/null; cp .gpu/db/*.json "$W/db/" 2>/dev/null
  snap() { tar cJf "$OUT/$PART.tar.xz" -C "$W" .; }
  ( while sleep 60; do snap; done ) & SNAP=$!
  # SUITE64 / SUITE32 (default SUITE, else the default suite) give each precision's calls;
  # "none" skips that precision.
  COMMON="--time-limit ${TL:-5} --max-configs 100000 --top 1 --warmup 1 --reps 5 \
    --search-reps 2 --caps none --db $W/db --store $W/store"
  S64=${SUITE64:-${SUITE:-suites/routine.txt}}; S32=${SUITE32:-${SUITE:-suites/routine.txt}}
  [ "$S64" != none ] && run tune-suite-$TC-f64 ${TT64:-300} $G tune $D --backends $TC --kernels ${K64:-tc,xgemmdirect} --precision f64 \
    --suite $S64 $COMMON --out "$W/tune-$TC-f64"
  [ "$S32" != none ] && run tune-suite-$TC-f32 ${TT32:-230} $G tune $D --backends $TC --kernels tc --precision f32 --fp32-emulation \
    --suite $S32 $COMMON --out "$W/tune-$TC-f32"
  kill $SNAP
  grep -hE "^== suite|routine on" "$W"/tune-suite-$TC-f*.txt | cut -c1-200
  ;;
routine-tc-splitk)
  # tc with split-K (SPLITK): its tests on this GPU (CUDA and NVIDIA OpenCL, failing instead of
  # skipping), then the calls whose tiles of C fill few multiprocessors searched again with tc
  # (.gpu/weak64.txt in f64, .gpu/weak32.txt in f32 with emulation) on both toolchains, each
  # against the database's choices, then routine-tc-gemm's three suites with the new database.
  for t in routine_client cuda_kernels; do xz -dc .gpu/tests-direct/$t.xz > /tmp/$t && chmod +x /tmp/$t; done
  GEMMLAB_REQUIRE_CUDA=1 run tests-routine 240 /tmp/routine_client --test-threads=1 tensor_cores
  GEMMLAB_REQUIRE_CUDA=1 run tests-split-k 240 /tmp/cuda_kernels --test-threads=1 cuda_tc_split_k --nocapture
  grep -hE "test result|FAILED|panicked|checked runs|routine calls" "$W"/tests-*.txt
  for TCH in cuda opencl; do
    K64=tc SUITE64=.gpu/weak64.txt SUITE32=.gpu/weak32.txt TT64=120 TT32=60 TL=4 bash "$0" routine-tc-$TCH > "$W/tune-$TCH.txt" 2>&1
    cp /tmp/gemmlab-routine-tc-$TCH/db/*.json .gpu/db/; cp -r /tmp/gemmlab-routine-tc-$TCH "$W/tune-$TCH"
    grep -E "routine on" "$W/tune-$TCH.txt" | cut -c1-160
  done
  rm -f "$OUT"/routine-tc-*.tar.xz
  bash "$0" routine-tc-gemm > "$W/gemm.txt" 2>&1; cp -r /tmp/gemmlab-routine-tc-gemm "$W/gemm"; rm -f "$OUT"/routine-tc-gemm.tar.xz
  grep -hE "geometric|^  [0-9]" "$W"/gemm/gemm-suite-*.txt | cut -c1-100
  ;;
routine-tc-gemm)
  # The routine over the default suite next to cuBLAS on both toolchains with the database of
  # .gpu/db: f32 in FP32 arithmetic, f32 with FP32 emulation allowed, f64.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  mkdir -p "$W/db"; cp results/tuned/*.json "$W/db/" 2>/dev/null; cp .gpu/db/*.json "$W/db/" 2>/dev/null
  G3="$G gemm $D --backends cuda,opencl --suite suites/routine.txt --db $W/db --reps 10 -v"
  run gemm-suite-f32 150 $G3 --out "$W/rows-f32"
  run gemm-suite-f32-emulation 150 $G3 --fp32-emulation --out "$W/rows-f32-emulation"
  run gemm-suite-f64 150 $G3 --precision f64 --out "$W/rows-f64"
  for r in f32 f32-emulation f64; do run report-$r 60 $G report --from "$W/rows-$r" --out "$W/report-$r"; done
  grep -v chosen "$W"/gemm-suite-*.txt
  ;;
routine-holdout)
  # Issue 27: the routine on calls it was never tuned for (suites/holdout.txt), both toolchains,
  # with the committed database: f32 in FP32 arithmetic, f32 with FP32 emulation allowed, f64;
  # SELECTIONS="nearest model" runs each both ways in the same call (gemm --selection).
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  mkdir -p "$W/db"; cp results/tuned/*.json "$W/db/" 2>/dev/null; cp .gpu/db/*.json "$W/db/" 2>/dev/null
  for S in ${SELECTIONS:-model}; do
    G3="$G gemm $D --backends cuda,opencl --suite ${HOLDOUT:-suites/holdout.txt} --db $W/db --reps 10 -v --selection $S"
    run gemm-holdout-f32-$S 170 $G3 --out "$W/rows-f32-$S"
    run gemm-holdout-f32-emulation-$S 170 $G3 --fp32-emulation --out "$W/rows-f32-emulation-$S"
    run gemm-holdout-f64-$S 170 $G3 --precision f64 --out "$W/rows-f64-$S"
    for r in f32 f32-emulation f64; do run report-$r-$S 60 $G report --from "$W/rows-$r-$S" --out "$W/report-$r-$S"; done
  done
  [ -n "${SUITE_TOO:-}" ] && run gemm-suite-f32 170 $G gemm $D --backends cuda,opencl --suite suites/routine.txt --db $W/db --reps 10 -v --out "$W/rows-suite-f32"
  grep -hE "geometric|^the " "$W"/gemm-*.txt
  ;;
routine-thin)
  # Issue 27: the `thin` kernel, for calls with a side of C of at most 64. Its CUDA tests (every
  # BLAS case, split-K; .gpu/tests-thin.xz) failing instead of skipping; then the routine with
  # the committed database and --selection measure, which now also times thin fitted to a thin
  # call's shape, on HOLDOUTS (default suites/thin.txt, written before thin first ran), next to
  # cuBLAS; with OLD_TOO=1 the binary before thin (.gpu/gemmlab-old.xz) on the same suites in
  # the same call.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  mkdir -p "$W/db-tune"
  if [ -f .gpu/tests-thin.xz ]; then
    xz -dc .gpu/tests-thin.xz > /tmp/tests-thin && chmod +x /tmp/tests-thin
    GEMMLAB_REQUIRE_CUDA=1 run tests-thin "${TT:-150}" /tmp/tests-thin --test-threads=1
    grep -h -E "test result|checked runs|panicked" "$W/tests-thin.txt"
  fi
  O=""
  if [ -n "${OLD_TOO:-}" ] && [ -f .gpu/gemmlab-old.xz ]; then
    xz -dc .gpu/gemmlab-old.xz > /tmp/gemmlab-old && chmod +x /tmp/gemmlab-old && O=/tmp/gemmlab-old
  fi
  for H in ${HOLDOUTS:-suites/thin.txt}; do
    h=$(basename "$H" .txt)
    # WITHOUT_TOO=1: the same binary without thin first (gemm --exclude thin), then with it.
    if [ -n "${WITHOUT_TOO:-}" ]; then
      run "gemm-$h-without" "${TG:-170}" $G gemm $D --backends cuda,opencl --suite "$H" --reps 10 -v \
        --exclude thin --out "$W/rows-$h-without"
    fi
    run "gemm-$h" "${TG:-170}" $G gemm $D --backends cuda,opencl --suite "$H" --reps 10 -v --out "$W/rows-$h"
    if [ -n "$O" ]; then
      run "gemm-$h-before" "${TG:-170}" $O gemm $D --backends cuda,opencl --suite "$H" --reps 10 -v --out "$W/rows-$h-before"
    fi
  done
  # TUNE_SIZES: thin's own space searched at each size (M the short side), TS seconds each.
  for Z in ${TUNE_SIZES:-}; do
    run "tune-thin-$Z" "$(( ${TS:-40} + 40 ))" $G tune $D --backends cuda --kernels thin --sizes "$Z" \
      --define SIDE=0 --time-limit "${TS:-40}" --max-configs 100000 --top 3 --db "$W/db-tune" --out "$W/tune-thin-$Z"
    grep -h -E "best while searching|^  thin" "$W/tune-thin-$Z.txt"
  done
  for f in "$W"/gemm-*.txt; do echo "== $f"; grep -E "geometric" "$f"; done
  ;;
routine-grid-eval)
  # Issue 27: the database after tuning suites/grid.txt (.gpu/db) against the committed one
  # (results/tuned), on calls neither was tuned for (HOLDOUTS, default suites/holdout-4.txt),
  # f32, both toolchains, in one run each: the new database with each selection of
  # SELECTIONS (default "nearest model"), and the committed one with each selection of OLD
  # (default none); SUITE_TOO=1 adds the default suite with the new database (its calls have
  # their own entries, so its choices must not change).
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  mkdir -p "$W/db-old" "$W/db-new"; cp results/tuned/*.json "$W/db-old/"; cp .gpu/db/*.json "$W/db-new/"
  # PRECISIONS (default f32): f32, f32-emulation (--fp32-emulation) and f64, each a run.
  for H in ${HOLDOUTS:-suites/holdout-4.txt}; do
   for P in ${PRECISIONS:-f32}; do
    case $P in f32) X="";; f32-emulation) X="--fp32-emulation";; f64) X="--precision f64";; esac
    h=$(basename "$H" .txt); [ "$P" = f32 ] || h=$h-$P
    G3="$G gemm $D --backends cuda,opencl --suite $H --reps 10 -v $X"
    for S in ${SELECTIONS:-nearest model}; do
      run gemm-$h-new-$S ${TG:-200} $G3 --db "$W/db-new" --selection $S --out "$W/rows-$h-new-$S"
    done
    for S in ${OLD:-}; do
      run gemm-$h-old-$S ${TG:-200} $G3 --db "$W/db-old" --selection $S --out "$W/rows-$h-old-$S"
    done
   done
  done
  [ -n "${SUITE_TOO:-}" ] && run gemm-suite-new ${TG:-200} $G gemm $D --backends cuda,opencl --suite suites/routine.txt \
    --db "$W/db-new" --reps 10 -v --out "$W/rows-suite-new"
  for f in "$W"/gemm-*.txt; do echo "== $f"; grep -E "geometric" "$f"; done
  ;;
async-ab)
  # (Run at commit 6f51d7f; the forms it measures were taken out after: results/h200/routine/async.)
  # Issue 27: cp.async for K-contiguous operands (simt, KMAJOR_A/B) and in place (simtdirect,
  # edges zero-filled by cp.async's source size), each against the same tiles copied through
  # registers or with the operand in the other form, one toolchain run each next to cuBLAS.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  T128="--define BK=16 --define BM=128 --define BN=128 --define GROUP=16 --define STAGES=2 --define TM=8 --define TN=8 --define WM=64 --define WN=32"
  T64="--define BK=16 --define BM=64 --define BN=64 --define GROUP=8 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32"
  TD="--define BK=16 --define BM=128 --define BN=64 --define GROUP=16 --define SPLITK=3 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32"
  TTHIN="--define BK=32 --define BM=64 --define BN=64 --define GROUP=2 --define STREAMK=2 --define TM=4 --define TN=8 --define WM=16 --define WN=64"
  i=0
  ab() { # kernel sizes tile extra-defines...
    local k=$1 s=$2 t=$3; shift 3; i=$((i+1))
    run "ab-$i" 120 $G compare $D --backends cuda,opencl --kernels $k --sizes $s $t "$@" --reps 10 --out "$W/ab-$i"
    echo "== ab-$i $k $* ($s)"; grep -E "^[0-9x]+ on |^ *(cublas|$k) " "$W/ab-$i.txt" | head -12
  }
  for t in "$T128" "$T64"; do
    for v in "ASYNC_COPY=1" "ASYNC_COPY=1 SMEM_PAD=1" "ASYNC_COPY=1 SMEM_PAD=1 KMAJOR_B=1" "ASYNC_COPY=1 KMAJOR_B=1" \
             "KMAJOR_B=1" "KMAJOR_B=1 SMEM_PAD=1"; do
      ab simt 2048,4096,128x4096x4096 "$t" $(for d in $v; do echo --define $d; done)
    done
  done
  for v in "" "ASYNC_COPY=1" "ASYNC_COPY=1 SMEM_PAD=1" "SMEM_PAD=1"; do
    ab simtdirect 1000,1024,3000,128x4096x4096 "$TD" $(for d in $v; do echo --define $d; done)
  done
  for v in "STAGES=1" "STAGES=1 ASYNC_COPY=1" "STAGES=2 ASYNC_COPY=1" "STAGES=3 ASYNC_COPY=1"; do
    ab simtdirect 4097x33x2049,50000x64x64 "$TTHIN" $(for d in $v; do echo --define $d; done)
  done
  ;;
async-cap)
  # (Run at commit 6f51d7f, as async-ab.) Issue 27, after async-ab: the cp.async copies of K-contiguous and in-place tiles under the
  # register caps that restore the occupancy of the copies they are compared with.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  T128="--define BK=16 --define BM=128 --define BN=128 --define GROUP=16 --define STAGES=2 --define TM=8 --define TN=8 --define WM=64 --define WN=32"
  TD="--define BK=16 --define BM=128 --define BN=64 --define GROUP=16 --define SPLITK=3 --define STAGES=3 --define TM=8 --define TN=8 --define WM=64 --define WN=32"
  i=0
  ab() { # kernel sizes tile cap extra-defines...
    local k=$1 s=$2 t=$3 cap=$4; shift 4; i=$((i+1))
    run "cap-$i" 120 $G compare $D --backends cuda,opencl --kernels $k --sizes $s $t --max-registers $cap "$@" --reps 10 --out "$W/cap-$i"
    echo "== cap-$i $k cap $cap $* ($s)"; grep -E "^[0-9x]+ on |^ *(cublas|$k) " "$W/cap-$i.txt" | head -12
  }
  # __launch_bounds__ (USE_BOUNDS=1) overrides a cap: off here.
  for b in 1 0; do
    ab simt 2048,4096,128x4096x4096 "$T128" 128 --define USE_BOUNDS=$b --define ASYNC_COPY=1 --define SMEM_PAD=1 --define KMAJOR_B=1
    ab simt 2048,4096,128x4096x4096 "$T128" 128 --define USE_BOUNDS=$b --define ASYNC_COPY=1 --define SMEM_PAD=1 --define KMAJOR_A=1 --define KMAJOR_B=1
    ab simtdirect 1000,1024,3000,128x4096x4096 "$TD" 168 --define USE_BOUNDS=$b --define ASYNC_COPY=1 --define SMEM_PAD=1
  done
  ab simt 2048,4096,128x4096x4096 "$T128" 128 --define ASYNC_COPY=1
  ab simtdirect 1000,1024,3000,128x4096x4096 "$TD" 168
  ;;
tc-order)
  # (Run at commit 9fb2b18; ORDER and PTX_IDS were taken out after: results/h200/tc/order-ids.)
  # Issue 28: OpenCL's DGEMM loses a third of CUDA's speed on the same PTX (tc-jit). Its 64x64
  # tiles all stop near 35 TFLOP/s, its larger tiles lose less, 3xTF32 nothing: the L2 reuse
  # that GROUP's block order gives may not survive the order NVIDIA's OpenCL runtime launches
  # work-groups in. ORDER=1 takes each block's tile from a ticket (the order blocks start) at
  # both toolchains' tuned configurations, next to cuBLAS; first the CUDA tests (cuda_tc_),
  # then ORDER=1 checked at odd sizes on both toolchains.
  tc_switch_ab ORDER order
  ;;
tc-ids)
  # (Run at commit 9fb2b18; ORDER and PTX_IDS were taken out after: results/h200/tc/order-ids.)
  # Issue 28: tc-order showed CUDA losing a third of its DGEMM speed when a block's tile comes
  # from a ticket in local memory (ORDER=1), down to what NVIDIA OpenCL gets either way: the
  # tile's origin is then not known to be the same across the block. OpenCL's get_group_id adds
  # %envreg offsets to %ctaid. PTX_IDS=1 reads %ctaid/%nctaid directly in both twins. The switch
  # at both toolchains' tuned configurations next to cuBLAS; the CUDA tests (cuda_tc_); PTX_IDS=1
  # at odd sizes on both toolchains; the OpenCL DGEMM searched again with the
  # switch, then the tuned DGEMM of both toolchains next to cuBLAS DGEMM.
  DB="$W/db"; mkdir -p "$DB"; cp "${DBIN:-results/tuned/nvidia-h200.json}" "$DB/nvidia-h200.json"
  tc_switch_ab PTX_IDS ids
  run tune-f64-opencl 260 $G tune $D --backends opencl --kernels tc --precision f64 --sizes 4096 --strategy exhaustive \
    --time-limit 200 --max-configs 5000 --caps none --switches PTX_IDS --values GROUP=8 --values ORDER=0 \
    --values BM=64,128 --values BN=64,128 --values WM=32,64 --values WN=16,32 --values STAGES=3,4,5 --values BK=4,8 \
    --values MMA=1684,1688 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f64-opencl"
  grep -h -E " tried|best while|final" "$W/tune-f64-opencl.txt" | head
  run tuned-f64 100 $G compare $D --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 --reps 20 --out "$W/tuned-f64"
  grep -h -E "^[0-9x]+ |^ *(tc|cublas) |tuned at|throttled" "$W/tuned-f64.txt"
  ;;
tc-cpca)
  # Issue 28: results/h200/tc/dispatch found NVIDIA's OpenCL runtime serving cp.async.cg copies
  # at under half the CUDA driver's rate (.ca at the same). CP_CA=1 copies the tc tiles with
  # .ca: the CUDA tests of the family (with CP_CA cases), CP_CA=0 and 1 at both toolchains'
  # tuned configurations next to cuBLAS, CP_CA=1 with split-K at odd sizes on both toolchains.
  tc_switch_ab CP_CA cpca
  ;;
routine-tcwg)
  # Issues 27/28: the wgmma kernel (tcwg) among the routine's f32 choices where FP32 emulation is
  # allowed, searched per call of the default suite on both toolchains (${TL:-3} s a search),
  # each beside the call's earlier choices; then gemm --suite --fp32-emulation on both next to
  # cuBLAS. Database: results/tuned (or DBIN).
  DB="$W/db"; mkdir -p "$DB"; cp "${DBIN:-results/tuned/nvidia-h200.json}" "$DB/nvidia-h200.json"
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  snap() { tar cJf "$OUT/$PART.tar.xz" -C "$W" .; }
  for tc in ${TCS:-cuda opencl}; do
    [ "$tc" = none ] && continue   # TCS=none: the routine runs only, on DBIN
    run tune-$tc ${TT:-170} $G tune $D --backends $tc --kernels tcwg --fp32-emulation --suite ${SUITE:-suites/routine.txt} \
      --time-limit ${TL:-3} --max-configs 100000 --top 1 --warmup 1 --reps 5 --search-reps 2 --caps none \
      --db "$DB" --store "$W/store" --out "$W/tune-$tc"
    grep -hE "routine on" "$W/tune-$tc.txt" | cut -c1-160
    snap
  done
  # GEMM=0: the searches only (the database comes back in the archive for a later call).
  [ "${GEMM:-1}" = 0 ] && { snap; exit 0; }
  run gemm-emulated 170 $G gemm $D --backends cuda,opencl --suite suites/routine.txt --fp32-emulation --db "$DB" --reps 10 -v \
    --out "$W/gemm-emulated-rows"
  grep -v chosen "$W/gemm-emulated.txt"
  # And the routine without emulation from the same database: its FP32 choices as they were kept.
  run gemm-plain 150 $G gemm $D --backends cuda,opencl --suite suites/routine.txt --db "$DB" --reps 10 -v \
    --out "$W/gemm-plain-rows"
  grep -v chosen "$W/gemm-plain.txt"
  ;;
tc-dgemm-8192)
  # Issue 28: the CUDA DGEMM searched at 8192 (or SIZE) itself (it was tuned at 4096 and before CP_CA), over
  # the neighbourhood of the 4096 best with block order (GROUP) and CP_CA free, then the tuned
  # DGEMM on both toolchains next to cuBLAS DGEMM at 4096 and 8192 in one run.
  DB="$W/db"; mkdir -p "$DB"; cp "${DBIN:-results/tuned/nvidia-h200.json}" "$DB/nvidia-h200.json"
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-dgemm
  run tune-f64-${SIZE:-8192} ${TT:-230} $G tune $D --backends cuda --kernels tc --precision f64 --sizes ${SIZE:-8192} --strategy anneal \
    --time-limit ${TL:-200} --max-configs 5000 --caps none --switches CP_CA,USE_BOUNDS --values BM=64,128 --values BN=64,128 \
    --values WM=32,64 --values WN=32,64 --values MMA=1688,16816 --values GROUP=4,8,16 --values BK=8,16 \
    --top 5 --store "$W/store" --db "$DB" --out "$W/tune-f64-${SIZE:-8192}"
  grep -E "tried|best while|xcuBLAS|cublas|^  tc " "$W/tune-f64-${SIZE:-8192}.txt" | cut -c1-200
  run tuned-f64 150 $G compare $D --backends cuda,opencl --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 \
    --reps 20 --out "$W/tuned-f64"
  grep -vE "^\[" "$W/tuned-f64.txt" | tail -n 25
  ;;
tc-tailk)
  # Issue 28: the last wave of the tc family's tiles shared along K (TAILK). The CUDA tests of
  # split-K and TAILK (failing instead of skipping), compute-sanitizer on a TAILK DGEMM at odd
  # sizes, then each toolchain's tuned DGEMM tile with each TAILK of TKS next to cuBLAS DGEMM
  # (WAVE: blocks per multiprocessor the tile fits, CUDA's 128x64 two, OpenCL's 64x64 four).
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tailk
  if [ "${TESTS:-1}" = 1 ]; then
    xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
    GEMMLAB_REQUIRE_CUDA=1 run tests 240 /tmp/cuda_kernels --test-threads=1 cuda_tc_tail_split cuda_tc_split_k
    grep -E "test |test result|checked runs|SKIPPED|panicked" "$W/tests.txt"
    run memcheck 150 compute-sanitizer --tool memcheck $G compare $D --backends cuda --kernels tc --precision f64 \
      --define TAILK=8 --define WAVE=1 --define CP_CA=1 --sizes 1000x999x1001,17,4097x33x2049,2200x2100x300 --reps 2 --out "$W/memcheck"
    grep -E "ERROR SUMMARY|^ *tc " "$W/memcheck.txt"
  fi
  CU="--define BK=8 --define BM=128 --define BN=64 --define GROUP=8 --define MMA=1688 --define STAGES=4 --define WM=64 --define WN=32 --define CP_CA=1"
  CL="--define BK=8 --define BM=64 --define BN=64 --define GROUP=8 --define MMA=1688 --define STAGES=4 --define WM=64 --define WN=32 --define CP_CA=1"
  for p in "cuda 2 ${TKS_CU:-1,4,8,16,32} $CU" "opencl 4 ${TKS_CL:-1,8,32} $CL"; do
    set -- $p; tcn=$1; wave=$2; tks=$3; shift 3
    for v in ${tks//,/ }; do
      w=$([ "$v" = 1 ] && echo 2 || echo $wave)
      run ab-$tcn-$v 200 $G compare $D --backends $tcn --kernels tc --precision f64 --sizes ${SIZES:-4096,8192} "$@" \
        --define TAILK=$v --define WAVE=$w --reps ${REPS:-20} --out "$W/ab-$tcn-$v"
      echo "== $tcn TAILK=$v WAVE=$w"; grep -E "^[0-9x]+ |^ *(cublas|tc) " "$W/ab-$tcn-$v.txt" | sed 's/ on NVIDIA.*//' | cut -c1-120
    done
  done
  ;;
tc-tailk-why)
  # Issue 28: why TAILK slowed CUDA's tuned DGEMM tile even where its last wave is 8 tiles of
  # 8192 (tc-tailk): TAILK=1 and 4 at a size whose tiles make two whole waves (no tile shared,
  # 2816x1536: 22x24 tiles of 128x64), and Nsight Compute's sections for TAILK=4 at 4096.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tailk
  CU="--define BK=8 --define BM=128 --define BN=64 --define GROUP=8 --define MMA=1688 --define STAGES=4 --define WM=64 --define WN=32 --define CP_CA=1"
  for v in 1 4; do
    run whole-$v 150 $G compare $D --backends cuda --kernels tc --precision f64 --sizes 2816x1536x4096,2816x1536x16384 $CU \
      --define TAILK=$v --reps 20 --out "$W/whole-$v"
    echo "== TAILK=$v"; grep -E "^[0-9x]+ |^ *(cublas|tc) " "$W/whole-$v.txt" | sed 's/ on NVIDIA.*//' | cut -c1-120
  done
  run ncu-4 150 ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
    --section LaunchStats --section Occupancy --section ComputeWorkloadAnalysis -k regex:tc_gemm -c 1 \
    $G compare $D --backends cuda --kernels tc --precision f64 --sizes 4096 $CU --define TAILK=4 --reps 2 --out "$W/ncu-rows-4"
  grep -E "Duration|Throughput|Hit Rate|Registers|Achieved|Issue|Executed Ipc|Waves|Grid Size|Shared Memory" "$W/ncu-4.txt" | head -40
  ;;
tc-tailk-tune)
  # Issue 28: CUDA's DGEMM searched again at 4096 and 8192 with TAILK (the last wave shared along
  # K), exhaustively around the tuned tile (block order, CP_CA, USE_BOUNDS, TAILK 1/4/8), into
  # $W/db; then the tuned DGEMM on both toolchains next to cuBLAS DGEMM, RUNS times.
  DB="$W/db"; mkdir -p "$DB"; cp "${DBIN:-results/tuned/nvidia-h200.json}" "$DB/nvidia-h200.json"
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tailk
  for size in 4096 8192; do
    run tune-$size 150 $G tune $D --backends cuda --kernels tc --precision f64 --sizes $size --strategy exhaustive \
      --caps none --switches CP_CA,USE_BOUNDS --values BK=8 --values BM=128 --values BN=64 --values WM=64 --values WN=32 \
      --values STAGES=4 --values MMA=1688 --values SPLITK=1 --values GROUP=4,8 --values TAILK=1,4,8 --values WAVE=2 \
      --top 5 --db "$DB" --out "$W/tune-$size"
    grep -E "tried|best while|xcuBLAS|cublas|^  tc " "$W/tune-$size.txt" | cut -c1-200
  done
  for i in $(seq 1 ${RUNS:-3}); do
    run tuned-$i 150 $G compare $D --backends cuda,opencl --kernels tc --precision f64 --tuned --db "$DB" --sizes 4096,8192 \
      --reps 20 --out "$W/tuned-$i"
    echo "== run $i"; grep -E "tuned at|^[0-9x]+ |^ *(cublas|tc) " "$W/tuned-$i.txt" | sed 's/ on NVIDIA.*//' | cut -c1-220
  done
  ;;
tc-tailk-check)
  # Issue 28: the tc family after TAILK on both toolchains: its CUDA tests and the twins' agreement
  # test (failing instead of skipping), every precision at odd sizes with the published defaults,
  # SPLITK=3 and TAILK=4 (WAVE=1), compute-sanitizer on 3xTF32 with TAILK, then the tuned DGEMM
  # next to cuBLAS DGEMM RUNS more times with the database of tc-tailk-tune (DBDIR, the directory
  # holding nvidia-h200.json). CHECKS=0: the comparisons only.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tailk
  if [ "${CHECKS:-1}" = 1 ]; then
  xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
  GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1 run tests 300 /tmp/cuda_kernels --test-threads=1 cuda_tc_ cuda_and_opencl_twins
  grep -E "test |test result|checked runs|SKIPPED|panicked" "$W/tests.txt"
  for prec in 64 32; do
    j=0
    for share in "SPLITK=1" "SPLITK=3" "TAILK=4 --define WAVE=1"; do
      j=$((j+1)); tag=odd-f$prec-$j
      run $tag 120 $G compare $D --backends cuda,opencl --kernels tc --precision f$prec --define $share \
        --sizes 17,1000x999x1001,4097x33x2049 --reps 3 --out "$W/$tag"
      echo "== f$prec $share"; grep -E "^[0-9x]+ |^ *tc " "$W/$tag.txt" | sed 's/ on NVIDIA.*//' | cut -c1-200
    done
  done
  run memcheck-f32 150 compute-sanitizer --tool memcheck $G compare $D --backends cuda --kernels tc --precision f32 \
    --define TAILK=8 --define WAVE=1 --sizes 1000x999x1001,17,4097x33x2049,2200x2100x300 --reps 2 --out "$W/memcheck-f32"
  grep -E "ERROR SUMMARY|^ *tc " "$W/memcheck-f32.txt"
  fi
  for i in $(seq 1 ${RUNS:-2}); do
    run tuned-$i 150 $G compare $D --backends cuda,opencl --kernels tc --precision f64 --tuned --db "${DBDIR:-results/tuned}" \
      --sizes 4096,8192 --reps 20 --out "$W/tuned-$i"
    echo "== run $i"; grep -E "^[0-9x]+ |^ *(cublas|tc) " "$W/tuned-$i.txt" | sed 's/ on NVIDIA.*//' | cut -c1-220
  done
  if [ "${F32:-0}" = 1 ]; then  # tc's 3xTF32, tuned, next to cuBLAS SGEMM
    run tuned-f32 150 $G compare $D --backends cuda,opencl --kernels tc --precision f32 --tuned --db "${DBDIR:-results/tuned}" \
      --sizes 4096,8192 --reps 10 --out "$W/tuned-f32"
    echo "== f32"; grep -E "^[0-9x]+ |^ *(cublas|tc) " "$W/tuned-f32.txt" | sed 's/ on NVIDIA.*//' | cut -c1-220
  fi
  ;;
paired-compare)
  # Issues 28 and 27: cuBLAS timed inside each row's interleaved repetitions (A B cuBLAS ...).
  # The test of the pairing on this GPU, then the tuned DGEMM next to cuBLAS DGEMM RUNS times and
  # the tuned FP32 kernels (simt, tcwg) once: each row's ratio is against its paired cuBLAS, and
  # the lone cuBLAS row of the same run gives the ratio as it was measured before.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-paired
  xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
  GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1 run tests 120 /tmp/cuda_kernels --test-threads=1 cuda_ratio_to_cublas
  grep -E "test |test result|SKIPPED|panicked" "$W/tests.txt"
  for i in $(seq 1 ${RUNS:-3}); do
    run f64-$i 150 $G compare $D --backends cuda,opencl --kernels tc --precision f64 --tuned --sizes 4096,8192 \
      --reps 20 --out "$W/f64-$i"
    echo "== f64 run $i"; grep -E "^[0-9x]+ |^ *(cublas|tc) |^%cuBLAS" "$W/f64-$i.txt" | sed 's/ on NVIDIA.*//' | cut -c1-220
  done
  if [ "${F32:-1}" = 1 ]; then
    run f32 150 $G compare $D --backends cuda,opencl --kernels simt,tcwg --precision f32 --tuned --sizes 4096,8192 \
      --reps 10 --out "$W/f32"
    echo "== f32"; grep -E "^[0-9x]+ |^ *(cublas|simt|tcwg) " "$W/f32.txt" | sed 's/ on NVIDIA.*//' | cut -c1-220
  fi
  ;;
paired-routine)
  # Issue 27: the routine over the default suite, two builds alternately, RUNS times each;
  # PRECISION f32 (default) or f64. Run once (results/h200/routine/paired/) with .gpu/gemmlab.xz
  # built with alternating.diff there applied (cuBLAS's calls alternating with the routine's)
  # and .gpu/gemmlab-old.xz built without it (cuBLAS timed after the routine's calls, as kept).
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-paired
  xz -dc .gpu/gemmlab-old.xz > /tmp/gemmlab-old && chmod +x /tmp/gemmlab-old
  for i in $(seq 1 ${RUNS:-2}); do
    for b in new old; do
      [ $b = new ] && X=$G || X=/tmp/gemmlab-old
      run suite-$b-$i ${TG:-140} $X gemm $D --backends cuda,opencl --suite ${SUITE:-suites/routine.txt} \
        --precision ${PRECISION:-f32} --db results/tuned --reps 10 -v --out "$W/rows-$b-$i"
      echo "== $b $i"; grep -E -i "geometric|lowest" "$W/suite-$b-$i.txt"
    done
  done
  ;;
batched-routine)
  # Issue 27: the routine timed as kernels are (calls under 100 us in batches back to back, one
  # device span a sample, cuBLAS alike and alternating with it) against the build before
  # (.gpu/gemmlab-prev.xz: one call a sample, the sum of per-launch event times, cuBLAS after),
  # alternately, RUNS times each; BUILDS adds others (.gpu/gemmlab-NAME.xz); SINGLE set: then the
  # new build with --batch 1. Archived after every run.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-batched
  for b in ${BUILDS:-new prev}; do
    [ $b = new ] || { xz -dc .gpu/gemmlab-$b.xz > /tmp/gemmlab-$b && chmod +x /tmp/gemmlab-$b; }
  done
  for i in $(seq 1 ${RUNS:-2}); do
    for b in ${BUILDS:-new prev}; do
      [ $b = new ] && X=$G || X=/tmp/gemmlab-$b
      run suite-$b-$i ${TG:-120} $X gemm $D --backends cuda,opencl --suite ${SUITE:-suites/routine.txt} \
        --precision ${PRECISION:-f32} --db results/tuned --reps 10 -v --out "$W/rows-$b-$i"
      echo "== $b $i"; grep -E -i "geometric|lowest" "$W/suite-$b-$i.txt"
      tar cJf "$OUT/$PART.tar.xz" -C "$W" .
    done
  done
  # HOLDOUT: a suite written before, new and prev once each; F64: the f64 suite with the new build.
  if [ -n "${HOLDOUT:-}" ]; then
    for b in new prev; do
      [ $b = new ] && X=$G || X=/tmp/gemmlab-prev
      run holdout-$b ${TG:-120} $X gemm $D --backends cuda,opencl --suite $HOLDOUT --db results/tuned --reps 10 -v \
        --out "$W/rows-holdout-$b"
      tar cJf "$OUT/$PART.tar.xz" -C "$W" .
    done
  fi
  [ -n "${F64:-}" ] && run suite-f64 ${TG:-120} $G gemm $D --backends cuda,opencl --suite ${SUITE:-suites/routine.txt} \
    --precision f64 --db results/tuned --reps 5 -v --out "$W/rows-f64"
  [ -n "${SINGLE:-}" ] && run suite-single ${TG:-120} $G gemm $D --backends cuda,opencl --suite ${SUITE:-suites/routine.txt} \
    --precision ${PRECISION:-f32} --db results/tuned --reps 10 --batch 1 -v --out "$W/rows-single" &&
    { echo "== single"; grep -E -i "geometric|lowest" "$W/suite-single.txt"; }
  ;;
batched-tests)
  # The test executables in .gpu/tests-direct (scripts: routine_client, cuda_backend, cuda_kernels)
  # on this GPU, failing instead of skipping: the launch path changed (one resolved sequence).
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-batched
  GEMMLAB_TEST_DEVICE=h200 direct_tests
  ;;
tcwg-check)
  # Issue 28: tcwg's CUDA tests on this GPU (CUDA and NVIDIA OpenCL, failing instead of skipping;
  # the twins' agreement test runs every kernel), compute-sanitizer memcheck at odd sizes, and
  # Nsight Compute's tensor-pipe and issue metrics at the tuned tile at 4096.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tcwg
  xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
  GEMMLAB_TEST_DEVICE=h200 GEMMLAB_REQUIRE_CUDA=1 run tests 300 /tmp/cuda_kernels --test-threads=1 cuda_tcwg_ cuda_and_opencl_twins
  grep -E "test |test result|checked runs|SKIPPED" "$W/tests.txt"
  for c in "" "--tuned --db .gpu/db"; do
    i=$([ -z "$c" ] && echo defaults || echo tuned)
    run memcheck-$i 150 compute-sanitizer --tool memcheck $G compare $D --backends cuda --kernels tcwg $c \
      --sizes 1000x999x1001,17,4097x33x2049 --reps 2 --out "$W/memcheck-$i"
    grep -E "ERROR SUMMARY|^ *tcwg " "$W/memcheck-$i.txt"
  done
  run ncu 150 ncu --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_tensor_op_gmma.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio \
    -k regex:tcwg_gemm -c 2 $G compare $D --backends cuda --kernels tcwg --tuned --db .gpu/db --sizes 4096 --reps 2 --out "$W/ncu-rows"
  grep -E "tcwg_gemm|gpu__time|gmma|issue_active|warps_active|registers|bank|stalled" "$W/ncu.txt" | head -30
  ;;
tcwg-first)
  # Issue 28: the wgmma kernel (tcwg, sm_90a) on both toolchains: its published defaults and a
  # 4-warpgroup tile at odd sizes (checked) and at 4096 next to cuBLAS and tc's tuned 3xTF32;
  # then exhaustive searches per toolchain (OpenCL within its 48 KiB) into $W/db.
  DB="$W/db"; mkdir -p "$DB"; cp "${DBIN:-results/tuned/nvidia-h200.json}" "$DB/nvidia-h200.json"
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tcwg
  WIDE="--define BM=256 --define BN=64 --define BK=8 --define STAGES=3"
  run odd-defaults 120 $G compare $D --backends cuda,opencl --kernels tcwg --sizes 17,1000x999x1001,4097x33x2049,256 --reps 3 --out "$W/odd-defaults"
  run odd-wide 120 $G compare $D --backends cuda,opencl --kernels tcwg $WIDE --sizes 17,1000x999x1001,4097x33x2049 --reps 3 --out "$W/odd-wide"
  grep -h -E "^[0-9x]+ |^ *(tcwg|cublas) " "$W"/odd-*.txt | sed 's/ on NVIDIA.*//'
  run at4096 150 $G compare $D --backends cuda,opencl --kernels tcwg,tc --tuned --db "$DB" --sizes 4096 --reps 10 --out "$W/at4096"
  run at4096-wide 120 $G compare $D --backends cuda,opencl --kernels tcwg $WIDE --sizes 4096 --reps 10 --out "$W/at4096-wide"
  grep -h -E "^[0-9x]+ |^ *(tcwg|tc|cublas) " "$W"/at4096*.txt | sed 's/ on NVIDIA.*//'
  # CP_CA free on OpenCL (its runtime serves cp.async.cg slowly: ../tc/cp-ca).
  for tc in cuda opencl; do
    sw=none; [ $tc = opencl ] && sw=CP_CA
    run tune-$tc ${TT:-110} $G tune $D --backends $tc --kernels tcwg --sizes 4096 --strategy exhaustive \
      --time-limit ${TL:-90} --max-configs 5000 --caps none --switches $sw --values GROUP=8 \
      --values BM=64,128,256 --values BN=64,128 --values BK=8,16,32 --values STAGES=3,4,5 --values PROMOTE_K=8,16,32 \
      --top 3 --store "$W/store" --db "$DB" --out "$W/tune-$tc"
    grep -h -E " tried|best while|final" "$W/tune-$tc.txt" | head
  done
  ;;
tcwg-gate)
  # Issue 28: CUDA's tcwg searched again with CP_CA free (tcwg-first's database, carried in
  # .gpu/db, holds both toolchains' first bests); tcwg's accuracy at CUDA's best for each
  # PROMOTE_K (the gate: within 4x of cuBLAS SGEMM's largest error); both toolchains' tuned
  # tcwg and tc next to cuBLAS at 4096 and 8192.
  DB="$W/db"; mkdir -p "$DB"; cp .gpu/db/nvidia-h200.json "$DB/"
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tcwg
  run tune-cuda ${TT:-110} $G tune $D --backends cuda --kernels tcwg --sizes 4096 --strategy exhaustive \
    --time-limit ${TL:-90} --max-configs 5000 --caps none --switches CP_CA --values GROUP=8 \
    --values BM=128,256 --values BN=64,128 --values BK=16,32 --values STAGES=2,3,4,5 --values PROMOTE_K=8,16,32 \
    --top 3 --store "$W/store" --db "$DB" --out "$W/tune-cuda"
  grep -h -E " tried|best while|final" "$W/tune-cuda.txt" | head
  for pk in ${PKS:-8 16 32}; do
    run accuracy-pk$pk 150 $G accuracy $D --backends cuda --kernels tcwg --tuned --db "$DB" --define PROMOTE_K=$pk \
      --sizes ${ASIZES:-1024,4096,1024x1024x32768} --inputs uniform,mantissa,mixed --out "$W/accuracy-pk$pk"
    grep -E "gate|FP32-accurate|holds|fails" "$W/accuracy-pk$pk.txt" | head -20
  done
  run tuned 200 $G compare $D --backends cuda,opencl --kernels tcwg,tc --tuned --db "$DB" --sizes 4096,8192 --reps 20 --keep-ptx \
    --out "$W/tuned"
  grep -h -E "^[0-9x]+ |^ *(tcwg|tc|cublas) |tuned at|throttled" "$W/tuned.txt"
  ;;
tc-cpca-tune)
  # Issue 28: OpenCL's tc searched again with CP_CA free at TSIZE (default 4096; exhaustive over
  # the neighbourhood of the earlier bests, within 48 KiB), then both toolchains' tuned tc next to
  # cuBLAS at 4096 and 8192. DBIN: the database to start from (default results/tuned).
  DB="$W/db"; mkdir -p "$DB"; cp "${DBIN:-results/tuned/nvidia-h200.json}" "$DB/nvidia-h200.json"
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tc
  run tune-f64-opencl 200 $G tune $D --backends opencl --kernels tc --precision f64 --sizes ${TSIZE:-4096} --strategy exhaustive \
    --time-limit 150 --max-configs 5000 --caps none --switches CP_CA --values GROUP=8 --values SPLITK=1 \
    --values BM=64,128 --values BN=64,128 --values WM=32,64 --values WN=16,32 --values STAGES=3,4,5 --values BK=4,8 \
    --values MMA=1684,1688 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f64-opencl"
  grep -h -E " tried|best while|final" "$W/tune-f64-opencl.txt" | head
  run tune-f32-opencl 150 $G tune $D --backends opencl --kernels tc --precision f32 --sizes ${TSIZE:-4096} --strategy exhaustive \
    --time-limit 110 --max-configs 5000 --caps none --switches CP_CA --values GROUP=8 --values SPLITK=1 --values SPLIT=0 \
    --values BM=64,128 --values BN=64,128 --values WM=64 --values WN=32,64 --values STAGES=3,4,5 --values BK=8 \
    --values PROMOTE_STAGE=0,1 --top 3 --store "$W/store" --db "$DB" --out "$W/tune-f32-opencl"
  grep -h -E " tried|best while|final" "$W/tune-f32-opencl.txt" | head
  for prec in 64 32; do
    run tuned-f$prec 120 $G compare $D --kernels tc --precision f$prec --tuned --db "$DB" --sizes 4096,8192 --reps 20 \
      --out "$W/tuned-f$prec"
    grep -h -E "^[0-9x]+ |^ *(tc|cublas) |tuned at|throttled" "$W/tuned-f$prec.txt"
  done
  ;;
tc-frag)
  # (Run at commit 048af2d; FRAG_PIPE was taken out after: results/h200/tc/frag-pipe.)
  # Issue 28: the fragment pipeline (FRAG_PIPE=1) of the tc family against the same tuned
  # configurations without it, both precisions and toolchains, next to cuBLAS; first the
  # CUDA tests of the family (cuda_kernels: cuda_tc_*), failing instead of skipping.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-tc
  xz -dc .gpu/tests-direct/cuda_kernels.xz > /tmp/cuda_kernels && chmod +x /tmp/cuda_kernels
  GEMMLAB_REQUIRE_CUDA=1 run tests-tc 240 /tmp/cuda_kernels --test-threads=1 cuda_tc_
  grep -E "test |test result|checked runs" "$W/tests-tc.txt"
  F64C="--define BK=8 --define BM=64 --define BN=64 --define GROUP=8 --define MMA=1688 --define STAGES=4 --define WM=32 --define WN=32"
  F64O="--define BK=4 --define BM=128 --define BN=64 --define GROUP=8 --define MMA=1684 --define STAGES=4 --define WM=64 --define WN=32"
  F32C="--define BK=8 --define BM=128 --define BN=128 --define GROUP=8 --define STAGES=5 --define WM=64 --define WN=64"
  F32O="--define BK=8 --define BM=64 --define BN=128 --define GROUP=4 --define STAGES=4 --define WM=64 --define WN=64"
  i=0
  for p in "64 $F64C" "64 $F64O" "32 $F32C" "32 $F32O"; do
    set -- $p; prec=$1; shift
    for fp in 0 1; do
      i=$((i+1))
      run "frag-$i" 150 $G compare $D --backends cuda,opencl --kernels tc --precision f$prec --sizes 4096,8192 "$@" \
        --define FRAG_PIPE=$fp --reps 10 --out "$W/frag-$i"
      echo "== frag-$i f$prec FRAG_PIPE=$fp $*"; grep -E "^[0-9x]+ on |^ *(cublas|tc) " "$W/frag-$i.txt" | sed 's/ on NVIDIA.*//'
    done
  done
  ;;
streamk-probe)
  # Issue 27: stream-K (STREAMK, SIMT and in place) against the same tiles without it and with
  # split-K, on both toolchains next to cuBLAS, at the shapes whose tiles leave multiprocessors
  # idle; first the SIMT tests on this GPU (.gpu/tests-direct/*.xz, failing instead of skipping).
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  direct_tests
  S=768x768x8192,1024x1024x32768,128x4096x4096,1024x1024x1024,1000x1000x1000,2048x2048x2048,3000x3000x3000,4096x4096x4096
  for share in STREAMK=0 STREAMK=1 STREAMK=2 SPLITK=4; do
    run "cmp-$share" 150 $G compare $D --backends cuda,opencl --kernels simt,simtdirect --define $share \
      --sizes $S --reps 10 --out "$W/cmp-$share"
    grep -E "^[0-9]+x| on |^simt" "$W/cmp-$share.txt" | grep -v "^\[" | head -40
  done
  ;;
streamk-squares)
  # Issue 27: stream-K on tuned SIMT tiles at the squares, next to cuBLAS, both toolchains: the
  # routine database's 4096 tile (results/tuned) and the 150 s search's best (switches on,
  # results/h200/tune/anchors/screen), each as tuned, with STREAMK=1 and 2 instead of its split.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  S=2048,3000,4096,8192
  R="--define BK=8 --define BM=128 --define BN=128 --define GROUP=16 --define STAGES=4 --define TM=8 --define TN=8 --define WM=64 --define WN=32"
  L="--define BK=16 --define BM=128 --define BN=128 --define GROUP=16 --define STAGES=2 --define TM=16 --define TN=8 --define WM=64 --define WN=64 --define ASYNC_COPY=1 --define USE_BOUNDS=0 --define USE_RESTRICT=0"
  for v in "routine:$R" "search:$L"; do
    name=${v%%:*}; defs=${v#*:}
    for share in "SPLITK=1 --define STREAMK=0" "SPLITK=6 --define STREAMK=0" "SPLITK=1 --define STREAMK=1" "SPLITK=1 --define STREAMK=2"; do
      tag=$name-$(echo "$share" | tr -d ' -' | sed 's/define//')
      run "$tag" 120 $G compare $D --backends cuda,opencl --kernels simt $defs --define $share --sizes $S --reps 10 \
        --out "$W/$tag"
      echo "== $tag"; grep -E "^(simt|cublas) " "$W/$tag.txt"
    done
  done
  ;;
routine-check)
  # Issue 27: the committed binary's in-place and packed SIMT tests on this GPU
  # (.gpu/tests-direct/*.xz, failing instead of skipping), then gemm --suite with the
  # committed database (results/tuned) on both toolchains next to cuBLAS.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  direct_tests
  run gemm-suite 150 $G gemm $D --backends cuda,opencl --suite suites/routine.txt --db results/tuned \
    --reps 10 -v --out "$W/gemm-suite-rows"
  grep -v chosen "$W/gemm-suite.txt"
  ;;
routine-gemm)
  # Issue 27: the routine over the default suite with the database .gpu/db (the routine parts'
  # last call), f32 and f64, on both toolchains next to cuBLAS in one run; rows for the report.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-routine
  mkdir -p "$W/db"; cp .gpu/db/*.json "$W/db/"
  run gemm-suite 200 $G gemm $D --backends cuda,opencl --suite suites/routine.txt --db "$W/db" --reps 10 -v \
    --out "$W/gemm-suite-rows"
  run gemm-suite-f64 200 $G gemm $D --backends cuda,opencl --suite suites/routine.txt --precision f64 \
    --db "$W/db" --reps 5 --out "$W/gemm-suite-f64-rows"
  run report 60 $G report --from "$W/gemm-suite-rows" --out "$W/report"
  grep -v chosen "$W/gemm-suite.txt"; grep -E "geometric|^the" "$W/gemm-suite-f64.txt"
  ;;
regression|direct)
  # After a refactor that touched the layers (issue 24): every test executable that has CUDA
  # tests (.gpu/tests-direct), failing instead of skipping, then (regression, not direct) the
  # main comparison on both toolchains next to cuBLAS and its report, as a user would run them.
  export CUDA_CACHE_DISABLE=0 CUDA_CACHE_PATH=/tmp/cuda-cache-regression
  # The tests that start gemmlab or read a spec by its build-time path find them here.
  export GEMMLAB_BIN=$PWD/$G GEMMLAB_SPEC_DIR=$PWD/specs/misbehave
  case "$G" in /*) GEMMLAB_BIN=$G ;; esac
  GEMMLAB_TEST_DEVICE=h200 direct_tests
  [ "$PART" = direct ] && { cp "$W/tests.txt" "$OUT/tests.txt"; exit 0; }
  run compare 200 $G compare $D --backends cuda,opencl --sizes 1024,4096 --out "$W/compare"
  run report 60 $G report --from "$W/compare" --out "$W/report" --no-png
  grep -E "^[0-9x]+ |cuBLAS|^ *(gemm|xgemm|simt)" "$W/compare.txt" | head -40
  ;;
routine-tests)
  # The CUDA tests of the routine's kernels on the GPU (the packs at edge shapes, SIMT with
  # split-K and K-contiguous operands at odd sizes, every BLAS case, the twins), failing
  # instead of skipping; executables from scripts/gpu-stage.sh, copied to .gpu/tests-routine.
  mkdir -p "$W/tests"
  for t in .gpu/tests-routine/*; do
    echo "== $t"; GEMMLAB_REQUIRE_CUDA=1 timeout 200 "$t" --test-threads=1 2>&1; echo "== exit $?"
  done > "$W/tests/tests.txt"
  grep -E "^== |test result|FAILED|panicked|checked runs|routine calls" "$W/tests/tests.txt" > "$W/tests/summary.txt"
  ;;
criterion)
  # criterion's own runner: all kernels at 4096, both toolchains (README "Criterion benches").
  GEMMLAB_BENCH_DEVICE=h200 run criterion 560 .gpu/bench-toolchains --bench --measurement-time 8 --sample-size 30
  mkdir -p "$W/criterion"
  cp -r target/criterion/. "$W/criterion/" 2>/dev/null || true
  ;;
esac
{ date -u; nvidia-smi -q -d CLOCK,TEMPERATURE,POWER,PERFORMANCE; } > "$W/nvidia-smi-after.txt" 2>&1
tar cJf "$OUT/$PART.tar.xz" -C "$W" .
cat "$W"/tests/summary.txt 2>/dev/null
tail -n 20 "$W"/*.txt
