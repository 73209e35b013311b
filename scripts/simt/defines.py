#!/usr/bin/env python3
"""The best configuration the database of bests holds for one kernel, toolchain
and size, as gemmlab command-line options (--define NAME=V ... [--max-registers N]),
so that a sweep or a profile runs exactly what `tune` found.

usage: defines.py DB_DIR DEVICE_FILE_STEM KERNEL TOOLCHAIN M N K [PRECISION]
   e.g. defines.py results/tuned nvidia-h200 simt cuda 4096 4096 4096
        defines.py results/tuned nvidia-h200 tc cuda 4096 4096 4096 f64
Prints nothing (exit 1) when there is no such entry."""
import json, sys

db, stem, kernel, toolchain, m, n, k = sys.argv[1:8]
precision = sys.argv[8] if len(sys.argv) > 8 else "f32"
m, n, k = int(m), int(n), int(k)
with open(f"{db}/{stem}.json") as f:
    entries = json.load(f)["entries"]
best = [e for e in entries if e["kernel"] == kernel and e["toolchain"] == toolchain
        and (e["m"], e["n"], e["k"]) == (m, n, k) and e.get("precision", "f32") == precision]
if not best:
    sys.exit(1)
e = best[0]
out = [f"--define {name}={value}" for name, value in sorted(e["config"].items()) if name != "PRECISION"]
out += [f"--define {name}={int(on)}" for name, on in sorted(e["hints"]["switches"].items())]
if e["hints"].get("max_registers"):
    out.append(f"--max-registers {e['hints']['max_registers']}")
print(" ".join(out))
