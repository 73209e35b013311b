#!/usr/bin/env bash
# One device call for this session's GPU shows when only one call may come, each part
# time-boxed and written to $OUT as it is made: issue 77 (a spec kernel through
# `sweep jit`, a spec's tuning and the report's Tuning section), issue 78 (five spec
# kernels with one that faults in the middle, on CUDA and NVIDIA OpenCL), issue 80 (each
# front end's PTX through both runtimes, and a carveout preference on the CUDA lanes).
# Staged: .gpu/gemmlab. The full versions: gpu-pipeline.sh, gpu-isolation.sh, gpu-runtime.sh.
set -u
G=$PWD/.gpu/gemmlab
W=$OUT/session; mkdir -p "$W"
D="--device nvidia"
# shellcheck source=scripts/gpu-run.sh
. "$(dirname "$0")/gpu-run.sh"
gpu_line
# 80 first: the new runtime lanes (the other parts have run before in some form).
run runtime-jit 110 $G sweep jit $D --kernels 2,7,10,tcwg --sizes 4096 \
  --carveout 100 --reps 10 --out "$W/runtime-jit"
# 77
for s in saxpy/saxpy; do
  n=$(basename $s)
  run "jit-$n" 35 $G sweep jit $D --spec specs/$s.toml --reps 10 --out "$W/jit-$n"
done
run tune-spec 55 $G tune $D --backends cuda,opencl --spec specs/saxpy/saxpy.toml \
  --sizes n=16777216 --strategy exhaustive --top 3 --store "$W/store" --no-db --out "$W/tune-spec"
# (the report is made from these files off the device)
# 78
F=tests/fixtures/specs
FIVE="--spec specs/saxpy/saxpy.toml --spec specs/misbehave/misbehave.toml --spec $F/faults/crash.toml --spec $F/wrong/wrong.toml --spec specs/reduction/reduction.toml"
for b in cuda opencl; do
  # shellcheck disable=SC2086 # the spec flags split on purpose
  run "five-$b" 45 $G compare $D --backends $b $FIVE --reps 5 --out "$W/five-$b"
done
find "$W" -name measurements.jsonl -size +300k -delete
