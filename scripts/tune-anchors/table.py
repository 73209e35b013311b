#!/usr/bin/env python3
"""One table from the logs scripts/tune-anchors/run.sh wrote: for each tuner, the
configurations it tried, configurations per second, its best (by its own timing),
its best after 30, 60 and 150 s, and that best re-measured by gemmlab's full method
next to cuBLAS in one run.

usage: table.py OUT            (Markdown table on stdout)
       table.py OUT --defines  (one line per tuner best: toolchain label NAME=V ...,
                                for run.sh remeasure)

Time is the tuner's own process clock: every log line is stamped with the seconds
since the process started (run.sh), so setup (inputs, reference, building the
space) counts against every tuner alike.
"""

import glob
import json
import os
import re
import sys

M = N = K = int(os.environ.get("SIZE", "4096"))
FLOPS = 2.0 * M * N * K
ANSI = re.compile(r"\x1b\[[0-9;]*m")
# gemmlab's xgemm has CLBlast's GEMMK=0 kernel; KREG only applies to GEMMK=1.
CLBLAST_ONLY = {"GEMMK", "KREG"}
MARKS = (30, 60, 150)


def stamped(path):
    """(seconds, text) of every stamped line of a run.sh log."""
    out = []
    try:
        with open(path, errors="replace") as f:
            for line in f:
                if line.startswith("#"):
                    continue
                t, _, text = line.partition(" ")
                try:
                    out.append((float(t), ANSI.sub("", text.rstrip("\n"))))
                except ValueError:
                    continue
    except OSError:
        pass
    return out


class Run:
    """What one tuner did: (seconds, gflops or None, params) per configuration tried."""

    def __init__(self, name, toolchain, kernel="xgemm"):
        self.name, self.toolchain, self.kernel = name, toolchain, kernel
        self.tried = []
        self.wall = None
        self.note = ""

    def best(self, until=None):
        ok = [(g, p) for t, g, p in self.tried if g is not None and (until is None or t <= until)]
        return max(ok, key=lambda x: x[0]) if ok else (None, None)

    def rate(self):
        return len(self.tried) / self.wall if self.wall else None


def clblast(out):
    r = Run("CLBlast 1.5.3 clblast_tuner_xgemm", "opencl")
    lines = stamped(os.path.join(out, "clblast.log"))
    names = []
    for t, text in lines:
        m = re.search(r"Parameters explored: (.*)", text)
        if m:
            names = m.group(1).split()
            continue
        cells = [c.strip() for c in text.split("|")]
        if len(cells) < 10 or not cells[1].isdigit():
            continue
        values = cells[3].split()
        params = dict(zip(names, (int(v) for v in values))) if len(values) == len(names) else {}
        g = None
        if "results match" in cells[9]:
            try:
                g = float(cells[8])
            except ValueError:
                g = None
        r.tried.append((t, g, params))
    if lines:
        r.wall = lines[-1][0]
    return r


def gemmlab(out, part, toolchain):
    r = Run(f"gemmlab tune ({part})", toolchain)
    lines = stamped(os.path.join(out, f"gemmlab-{part}.log"))
    traces = glob.glob(os.path.join(out, f"gemmlab-{part}", "search-*.json"))
    if not traces:
        r.note = "no search trace"
        return r
    with open(traces[0]) as f:
        s = json.load(f)["search"]
    r.kernel = s["kernel"]
    # The search's start on the process clock: its summary line is printed as it ends
    # (without one, the search ended no later than the process).
    proc_end = lines[-1][0] if lines else None
    end = next((t for t, text in lines if " tried (" in text), proc_end)
    start = (end - s["wall_s"]) if end is not None else 0.0
    for x in s["tried"]:
        rec = x["record"]
        ok = rec["status"]["status"] == "ok" and not rec.get("pruned")
        r.tried.append((start + x["elapsed_s"], rec["gflops"] if ok else None, x["candidate"]["config"]))
    # One clock for every tuner: its whole process (setup, search, final round).
    r.wall = proc_end
    split = s.get("split") or {}
    if split and s["tried"]:
        n = sum(1 for x in s["tried"] if not x.get("cached"))
        r.note = "device thread per configuration: " + ", ".join(
            f"{k} {v / max(n, 1) * 1e3:.1f} ms" for k, v in split.items() if v > 0)
    return r


def kernel_tuner(out):
    kernel = "?"
    try:
        with open(os.path.join(out, "space-kt.json")) as f:
            kernel = json.load(f)["kernel"]
    except (OSError, ValueError, KeyError):
        pass
    r = Run(f"kernel_tuner 1.5 ({kernel}, brute force over gemmlab's random order)", "cuda", kernel)
    lines = stamped(os.path.join(out, "kernel_tuner.log"))
    pair = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=([-0-9.e]+)")
    for t, text in lines:
        pairs = dict(pair.findall(text))
        if len(pairs) < 3 or "time" not in pairs and "Failed" not in text:
            continue
        params = {k: int(float(v)) for k, v in pairs.items()
                  if k.isupper() and k not in ("MS",)}
        g = None
        m = re.search(r"time=([0-9.]+)\s*ms", text)
        if m and "Failed" not in text:
            g = FLOPS / (float(m.group(1)) * 1e-3) * 1e-9
        r.tried.append((t, g, params))
    if lines:
        r.wall = lines[-1][0]
    return r


def runs(out):
    found = []
    if os.path.exists(os.path.join(out, "clblast.log")):
        found.append(("clblast", clblast(out)))
    for part, tc in (("opencl", "opencl"), ("cuda", "cuda"), ("cuda-simt", "cuda"),
                     ("cuda-kt", "cuda")):
        if os.path.exists(os.path.join(out, f"gemmlab-{part}.log")):
            found.append((f"gemmlab-{part}", gemmlab(out, part, tc)))
    if os.path.exists(os.path.join(out, "kernel_tuner.log")):
        found.append(("kernel_tuner", kernel_tuner(out)))
    return found


def remeasured(out, label, toolchain, kernel):
    """(GFLOP/s, x cuBLAS) of the re-measured best, from gemmlab compare's results."""
    path = os.path.join(out, f"remeasure-{label}", "results.json")
    try:
        with open(path) as f:
            rows = json.load(f)
    except (OSError, ValueError):
        return None, None
    rows = rows.get("measurements", rows) if isinstance(rows, dict) else rows
    for m in rows:
        if m.get("kernel") == kernel and m.get("toolchain") == toolchain and m.get("gflops"):
            return m["gflops"], m.get("vs_vendor")
    return None, None


def fmt(v, digits=0):
    return "-" if v is None else f"{v:,.{digits}f}"


def main():
    out = sys.argv[1]
    found = runs(out)
    if "--defines" in sys.argv:
        for label, r in found:
            if label == "gemmlab-cuda-simt":
                continue
            _, params = r.best()
            if not params or params.get("GEMMK", 0) != 0:
                continue
            defs = " ".join(f"{k}={v}" for k, v in sorted(params.items())
                            if k not in CLBLAST_ONLY and k != "PRECISION")
            print(f"{r.toolchain} {label} {r.kernel} {defs}")
        return
    print("| tuner | toolchain, kernel | tried | seconds | configs/s | best (own timing) | "
          + " | ".join(f"best after {s} s" for s in MARKS)
          + " | re-measured by gemmlab | x cuBLAS |")
    print("|---|---|---:|---:|---:|---:|" + "---:|" * len(MARKS) + "---:|---:|")
    notes = []
    for label, r in found:
        g, params = r.best()
        after = [fmt(r.best(s)[0]) for s in MARKS]
        again, ratio = remeasured(out, label, r.toolchain, r.kernel)
        rate = r.rate()
        print(f"| {r.name} | {r.toolchain} {r.kernel} | {len(r.tried)} | {fmt(r.wall, 1)} | "
              f"{fmt(rate, 2)} | {fmt(g)} | " + " | ".join(after)
              + f" | {fmt(again)} | {fmt(ratio, 3)} |")
        if params:
            notes.append(f"- {r.name}: best {params}")
        if r.note:
            notes.append(f"- {r.name}: {r.note}")
    print(f"\nGFLOP/s = 2MNK / time at {M}^3 (f32). One clock for every tuner: seconds are its "
          "whole process on its own clock (setup, search and any final round included; the "
          "time of its last log line), configs/s = tried / seconds; the best-after columns "
          "are on the same clock. Re-measured: gemmlab compare, warm-up, 20 samples, median, "
          "checked, cuBLAS in the same run.\n")
    print("\n".join(notes))


if __name__ == "__main__":
    main()
