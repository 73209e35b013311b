#!/usr/bin/env bash
# One device call for issue 78's isolation: a compare of five spec kernels with one that
# faults (an illegal address) in the middle, on CUDA and on NVIDIA OpenCL (four rows ok,
# one failed, exit 1); one that never finishes (--kernel-timeout); compute-sanitizer's
# memcheck report in a row (--sanitize); then the spec tests on the CUDA device. Staged:
# .gpu/gemmlab and .gpu/t/* (release). Everything lands in $OUT/isolation/ as it is made.
set -u
G=$PWD/.gpu/gemmlab
W=$OUT/isolation; mkdir -p "$W"
# shellcheck source=scripts/gpu-run.sh
. "$(dirname "$0")/gpu-run.sh"
gpu_line
F=tests/fixtures/specs
FIVE="--spec specs/saxpy/saxpy.toml --spec specs/misbehave/misbehave.toml --spec $F/faults/crash.toml --spec $F/wrong/wrong.toml --spec specs/reduction/reduction.toml"
for b in cuda opencl; do
  # shellcheck disable=SC2086 # the spec flags split on purpose
  run "five-$b" 110 $G compare --device nvidia --backends $b $FIVE --reps 5 --out "$W/five-$b"
done
run hang-cuda 60 $G compare --device nvidia --backends cuda --spec $F/faults/hang.toml \
  --spec specs/saxpy/saxpy.toml --kernel-timeout 10 --reps 5 --out "$W/hang-cuda"
run sanitize-fault 90 $G compare --device nvidia --backends cuda --spec specs/misbehave/misbehave.toml \
  --define MODE=1 --sanitize --out "$W/sanitize-fault"
run sanitize-past-end 80 $G compare --device nvidia --backends cuda --spec $F/wrong/wrong.toml \
  --define MODE=1 --sanitize --out "$W/sanitize-past-end"
GEMMLAB_BIN=$G GEMMLAB_REQUIRE_CUDA=1 GEMMLAB_TEST_DEVICE=cuda timeout 100 .gpu/t/spec_opencl \
  --test-threads=1 a_kernel_that_crashes sanitize writes_outside > "$W/test-spec-cuda.txt" 2>&1
echo "== exit $?" >> "$W/test-spec-cuda.txt"
grep -E "^test |^test result|== exit" "$W/test-spec-cuda.txt"
find "$W" -name measurements.jsonl -size +200k -delete
