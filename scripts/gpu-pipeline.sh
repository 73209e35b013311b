#!/usr/bin/env bash
# One device call for issue 77 (one pipeline): users' spec kernels through `sweep jit`
# (each toolchain's PTX through the CUDA driver beside the native builds), a `compare` of
# built-in GEMMs and a spec in one run, a spec's tuning and the report's Tuning section,
# then the CUDA test executables that cover the measuring core, failing instead of skipping.
# Staged here: .gpu/gemmlab (cargo build --release --features cuda --bins) and .gpu/t/*
# (cargo test --release --features cuda --no-run --test ..., stripped). Everything lands in
# $OUT/pipeline-PART/ as it is made (a call cut short keeps what was done). usage: scripts/gpu-pipeline.sh experiments|tests|protections
# (one call each; protections: local memory, [requires], a spec whose arguments do not fit
# its kernel, on both NVIDIA toolchains, then the spec and fault tests)
set -u
PART=${1:-experiments}
G=$PWD/.gpu/gemmlab
W=$OUT/pipeline-$PART; mkdir -p "$W"
D="--device nvidia"
# shellcheck source=scripts/gpu-run.sh
. "$(dirname "$0")/gpu-run.sh"
gpu_line
if [ "$PART" = experiments ]; then
run devices 60 $G devices
# The guard zones and the argument check on CUDA and NVIDIA OpenCL: MODE=1..4 of
# the wrong-on-purpose spec must each be their row's error, never ok.
for m in 0 1 2 3 4; do
  run "wrong-$m" 40 $G compare $D --backends cuda,opencl --spec tests/fixtures/specs/wrong/wrong.toml \
    --define MODE=$m --reps 3 --out "$W/wrong-$m"
done
for s in saxpy/saxpy gemm-tutorial/myGEMM6 reduction/reduction; do
  n=$(basename $s)
  run "jit-$n" 60 $G sweep jit $D --spec specs/$s.toml --reps 10 --out "$W/jit-$n"
done
run compare-mixed 120 $G compare $D --backends cuda,opencl --kernels 6,11,simt \
  --spec specs/saxpy/saxpy.toml --sizes 4096,n=16777216 --out "$W/compare-mixed"
run tune-spec 120 $G tune $D --backends cuda,opencl --spec specs/saxpy/saxpy.toml \
  --sizes n=16777216 --strategy exhaustive --top 3 --store "$W/store" --no-db --out "$W/tune-spec"
run report 40 $G report --from "$W/tune-spec" --from "$W/jit-saxpy" --from "$W/jit-myGEMM6" \
  --from "$W/jit-reduction" --from "$W/compare-mixed" --out "$W/report" --no-png
fi
if [ "$PART" = protections ]; then
run local 60 $G compare $D --backends cuda,opencl --spec tests/fixtures/specs/local/local.toml \
  --reps 5 --out "$W/local"
run requires 60 $G compare $D --backends cuda,opencl \
  --spec results/h200/tc/cp-ca/tile-stream-async/tile-stream-async.toml --reps 5 --out "$W/requires"
B=$W/badspec; mkdir -p "$B"; cp specs/saxpy/saxpy.cl specs/saxpy/saxpy.cu "$B/"
sed 's/^name = "x"$/name = "x"/; /^name = "x"$/{n;s/type = "f32"/type = "i32"/}' specs/saxpy/saxpy.toml > "$B/elem.toml"
awk '/^\[\[args\]\]$/ && !done {print "[[args]]\nname = \"extra\"\ntype = \"i32\"\nvalue = 3\n"; done=1} {print}' \
  specs/saxpy/saxpy.toml > "$B/extra.toml"
for b in elem extra; do
  run "bad-$b" 60 $G compare $D --backends cuda,opencl --spec "$B/$b.toml" --reps 3 --out "$W/bad-$b"
done
for t in spec_opencl tune_faults; do
  GEMMLAB_BIN=$G GEMMLAB_REQUIRE_CUDA=1 timeout 200 ".gpu/t/$t" --test-threads=1 > "$W/test-$t.txt" 2>&1
  echo "== exit $?" >> "$W/test-$t.txt"
  grep -E "^test result|FAILED|== exit" "$W/test-$t.txt"
done
fi
if [ "$PART" = tests ]; then
for t in .gpu/t/*; do
  n=$(basename "$t")
  echo "== $n"
  GEMMLAB_BIN=$G GEMMLAB_REQUIRE_CUDA=1 timeout 150 "$t" --test-threads=1 > "$W/test-$n.txt" 2>&1
  echo "== exit $?" >> "$W/test-$n.txt"
  grep -E "^test result|FAILED|== exit" "$W/test-$n.txt"
done
fi
find "$W" -name measurements.jsonl -size +200k -delete
