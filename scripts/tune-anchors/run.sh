#!/usr/bin/env bash
# gemmlab's tuner next to its peers, in one call on one GPU, each with the same wall-clock
# budget on the same problem (issue 26). Writes raw logs (every line time-stamped) under OUT;
# table.py turns them into one table.
#
# usage: scripts/tune-anchors/run.sh opencl|cuda|cuda-kt|remeasure OUT [BUDGET_S]
#   opencl     CLBlast's own clblast_tuner_xgemm, then `gemmlab tune --backends opencl` on
#              xgemm (the same parameters: no switches, no register caps), 4096^3, f32.
#   cuda       `gemmlab tune --backends cuda`, random search of xgemm, then of the SIMT family.
#   cuda-kt    kernel_tuner (scripts/kernel_tuner, which runs the tutorial's kernels: KT_KERNEL,
#              default 10) over the points gemmlab's random search tries, in the same order,
#              then that gemmlab search.
#   remeasure  every tuner's best, re-measured by gemmlab compare (warm-up, 20 samples, the
#              check) next to cuBLAS in one run (reads OUT/*/ written by the other parts).
# Environment: SIZE (default 4096, M=N=K), DEVICE (gemmlab's --device, default h200),
# SIMT_S (seconds of the SIMT search in the cuda part, default 60).
# Needs: GEMMLAB (default .gpu/gemmlab); CLBLAST (a folder holding libclblast1 and
# clblast-utils unpacked with dpkg -x) for opencl; PYTHONPATH with kernel_tuner for cuda.
set -u
PART=${1:?opencl, cuda or remeasure}
OUT=${2:?output folder}
BUDGET=${3:-150}
G=${GEMMLAB:-.gpu/gemmlab}
HERE=$(cd "$(dirname "$0")" && pwd)
SIZE=${SIZE:-4096}
DEVICE=${DEVICE:-h200}
export SIZE
mkdir -p "$OUT"

# Runs a command under a time limit, every output line prefixed with seconds since it started.
stamped() { # log limit command...
  local log=$1 limit=$2; shift 2
  { echo "# $*"; echo "# started $(date -u +%FT%TZ), limit ${limit} s"; } > "$log"
  timeout "$limit" "$@" 2>&1 | python3 -u -c '
import sys, time
t0 = time.time()
for line in sys.stdin:
    sys.stdout.write("%.3f %s" % (time.time() - t0, line))
    sys.stdout.flush()' >> "$log"
  echo "# exit ${PIPESTATUS[0]}" >> "$log"
}

case "$PART" in
opencl)
  : "${CLBLAST:?set CLBLAST to the unpacked CLBlast packages}"
  # Only NVIDIA's ICD, so that the H200 is platform 0 for CLBlast's tuner.
  OCL_ICD_FILENAMES=libnvidia-opencl.so.1 \
  LD_LIBRARY_PATH="$CLBLAST/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}" \
    stamped "$OUT/clblast.log" "$BUDGET" "$CLBLAST/usr/bin/clblast_tuner_xgemm" \
      -platform 0 -device 0 -precision 32 -m $SIZE -n $SIZE -k $SIZE
  stamped "$OUT/gemmlab-opencl.log" $((BUDGET + 120)) "$G" tune --device "$DEVICE" --backends opencl \
    --kernels xgemm --sizes $SIZE --strategy anneal --switches none --caps none \
    --time-limit "$BUDGET" --max-configs 100000 --top 1 --no-db \
    --store "$OUT/store-opencl" --out "$OUT/gemmlab-opencl"
  ;;
cuda-kt)
  # The points a random search tries, in its order, for kernel_tuner; then the same search
  # by gemmlab (same seed: the same points in the same order).
  KT="--kernels ${KT_KERNEL:-10} --sizes $SIZE --strategy random --search-seed 7 --switches none --caps none"
  "$G" tune --device "$DEVICE" --backends cuda $KT --max-configs 4000 \
    --export-space "$OUT/space-kt.json" > "$OUT/export.log" 2>&1
  stamped "$OUT/kernel_tuner.log" "$BUDGET" python3 -u "$HERE/../kernel_tuner/tune_rate.py" \
    "$OUT/space-kt.json" "$OUT/kernel_tuner.json"
  stamped "$OUT/gemmlab-cuda-kt.log" $((BUDGET + 120)) "$G" tune --device "$DEVICE" --backends cuda \
    $KT --time-limit "$BUDGET" --max-configs 100000 --top 1 --no-db \
    --store "$OUT/store-kt" --out "$OUT/gemmlab-cuda-kt"
  ;;
cuda)
  SEARCH="--kernels xgemm --sizes $SIZE --strategy random --search-seed 7 --switches none --caps none"
  stamped "$OUT/gemmlab-cuda.log" $((BUDGET + 120)) "$G" tune --device "$DEVICE" --backends cuda \
    $SEARCH --time-limit "$BUDGET" --max-configs 100000 --top 1 --no-db \
    --store "$OUT/store-cuda" --out "$OUT/gemmlab-cuda"
  stamped "$OUT/gemmlab-cuda-simt.log" $((${SIMT_S:-60} + 60)) "$G" tune --device "$DEVICE" --backends cuda \
    --kernels simt --sizes $SIZE --strategy random --search-seed 7 --time-limit "${SIMT_S:-60}" \
    --max-configs 100000 --top 1 --no-db --store "$OUT/store-simt" --out "$OUT/gemmlab-cuda-simt"
  ;;
remeasure)
  python3 "$HERE/table.py" "$OUT" --defines > "$OUT/bests.txt"
  while read -r tc label kernel defines; do
    [ -n "$tc" ] || continue
    args=()
    for d in $defines; do args+=(--define "$d"); done
    stamped "$OUT/remeasure-$label.log" 90 "$G" compare --device "$DEVICE" --backends "cuda,$tc" \
      --kernels "$kernel" --sizes $SIZE --warmup 3 --reps 20 "${args[@]}" --out "$OUT/remeasure-$label"
  done < "$OUT/bests.txt"
  python3 "$HERE/table.py" "$OUT" > "$OUT/table.md"
  cat "$OUT/table.md"
  ;;
*)
  echo "unknown part $PART (opencl, cuda, cuda-kt or remeasure)" >&2
  exit 2
  ;;
esac
