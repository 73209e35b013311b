#!/usr/bin/env bash
# Builds everything a GPU batch needs on this machine and stages it in .gpu/
# (git-ignored; name it in the device tool's `carry`): the gemmlab binary, the
# test executables, the criterion bench executable. See scripts/gpu-batch.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --features cuda --bins
mkdir -p .gpu/tests
rm -f .gpu/tests/*
cargo test --release --features cuda --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    try: m = json.loads(l)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["executable"])' |
  while read -r exe; do cp "$exe" .gpu/tests/; done
cargo bench --features cuda --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    try: m = json.loads(l)
    except ValueError: continue
    if m.get("reason") == "compiler-artifact" and "bench" in m.get("target", {}).get("kind", []) and m.get("executable"):
        print(m["executable"])' |
  while read -r exe; do cp "$exe" .gpu/bench-toolchains; done
cp target/release/gemmlab .gpu/gemmlab
strip .gpu/gemmlab .gpu/tests/* 2>/dev/null || true
du -sh .gpu
