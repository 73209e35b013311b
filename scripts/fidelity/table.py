#!/usr/bin/env python3
"""The fidelity table: the tutorial's published code, built as published, next to
gemmlab's defaults, kernel by kernel and toolchain by toolchain.

usage: table.py FIDELITY_DIR      (the folder scripts/fidelity/published.sh and
                                  `gemmlab compare --keep-ptx --out FIDELITY_DIR/gemmlab-4096`
                                  wrote; writes FIDELITY_DIR/fidelity.md and fidelity.csv)

Per kernel and toolchain it puts side by side:
  registers   published: ptxas -v of the published build (nvcc -cubin for CUDA,
              ptxas on the PTX NVIDIA OpenCL produced for OpenCL);
              gemmlab: what its compiler reported for the default configuration.
  GFLOP/s     published: what the published host program printed (wall clock
              around its kernel launches, as published) and, for CUDA, the kernel
              alone from Nsight Compute (gpu__time_duration); gemmlab: median of
              its event-timed runs.
  PTX         whether the entry's instruction stream is the same text once names,
              comments and debug lines are normalised, and how many lines differ.
"""
import csv
import difflib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile

N = 4096
FLOPS = 2.0 * N * N * N


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def ptxas_registers(log, entry):
    """Registers ptxas -v reported for `entry` (its mangled or plain name)."""
    if not log:
        return None
    current = None
    for line in log.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?(\S+?)'?(?: for|$)", line)
        if m:
            current = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and current and entry in current:
            return int(m.group(1))
    return None


def opencl_ptxas(d):
    """ptxas -v of the published OpenCL PTX. Runs ptxas (PTXAS or on PATH) on a copy without
    the NULs the published program writes after the text when the GPU-side log has no counts."""
    log = read(os.path.join(d, "opencl-ptxas.txt"))
    if log and "registers" in log:
        return log
    ptx = read(os.path.join(d, "opencl.ptx"))
    if not ptx:
        return log
    ptxas = os.environ.get("PTXAS") or shutil.which("ptxas")
    if not ptxas:
        return log
    clean = os.path.join(d, "opencl.ptx")
    with open(clean, "w") as f:
        f.write(ptx.replace("\0", ""))
    target = re.search(r"^\.target\s+(\w+)", ptx, re.M)
    arch = target.group(1) if target else "sm_90"
    out = subprocess.run([ptxas, f"-arch={arch}", "-v", clean, "-o", os.devnull],
                         capture_output=True, text=True)
    version = subprocess.run([ptxas, "--version"], capture_output=True, text=True).stdout
    log = out.stdout + out.stderr + "\n# " + " ".join(version.split("\n")[-2:]) + "\n"
    with open(os.path.join(d, "opencl-ptxas.txt"), "w") as f:
        f.write(log)
    return log


def entry_body(ptx, entry):
    """The instruction lines of one .entry, normalised for comparison."""
    if not ptx:
        return None
    m = re.search(r"\.entry\s+(\S*%s\S*)\s*\(" % re.escape(entry), ptx)
    if not m:
        return None
    name = m.group(1)
    start = m.start()
    depth, i, opened = 0, ptx.index("{", m.end()), False
    for j in range(i, len(ptx)):
        c = ptx[j]
        if c == "{":
            depth += 1
            opened = True
        elif c == "}":
            depth -= 1
            if opened and depth == 0:
                body = ptx[start:j + 1]
                break
    else:
        return None
    out = []
    for line in body.splitlines():
        line = re.sub(r"//.*", "", line).strip()
        if not line or line.startswith((".loc", ".file", ".pragma")):
            continue
        # Shared arrays are named after the (mangled or plain) entry: _ZZ<entry>E4Asub
        line = re.sub(r"_ZZ\w+?E(\d+)(\w+)", lambda m: "SHARED_" + m.group(2)[:int(m.group(1))], line)
        line = line.replace(name, "ENTRY")
        line = re.sub(r"\bENTRY_param_(\d+)", r"param_\1", line)
        line = re.sub(r"\s+", " ", line)
        out.append(line)
    return out


def ptx_compare(a, b):
    if a is None or b is None:
        return "n/a", None
    if a == b:
        return "identical", 0
    sm = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    changed = sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in sm.get_opcodes() if tag != "equal")
    return f"{changed} of {max(len(a), len(b))} lines differ", changed


def published_gflops(run_txt, lib):
    """The GFLOP/s the published main.cpp printed for `lib` at N (last such line)."""
    if not run_txt:
        return None
    best = None
    for line in run_txt.splitlines():
        if f"[{lib}]" in line and "GFLOPS" in line:
            m = re.search(r"([\d.]+)\s*GFLOPS", line)
            if m:
                best = float(m.group(1))
    return best


def ncu_kernel_ns(csv_text, entry):
    """Median gpu__time_duration (ns) of the launches of `entry` in an ncu --csv log."""
    if not csv_text:
        return None
    lines = [l for l in csv_text.splitlines() if l.startswith('"')]
    if not lines:
        return None
    times = []
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        if entry not in (row.get("Kernel Name") or ""):
            continue
        if row.get("Metric Name") != "gpu__time_duration.sum":
            continue
        v = float((row.get("Metric Value") or "nan").replace(",", ""))
        unit = row.get("Metric Unit") or "nsecond"
        scale = {"nsecond": 1, "ns": 1, "usecond": 1e3, "us": 1e3, "msecond": 1e6, "ms": 1e6}.get(unit, 1)
        times.append(v * scale)
    if not times:
        return None
    times.sort()
    return times[len(times) // 2]


def gemmlab_rows(run):
    rows = {}
    path = os.path.join(run, "measurements.jsonl")
    for line in open(path):
        if not line.strip():
            continue
        r = json.loads(line)
        if r.get("m") != N or r.get("status") != "ok":
            continue
        rows[(r["kernel"], r["toolchain"])] = r
    ptx = {}
    arch = os.path.join(run, "ptx.tar.gz")
    if os.path.exists(arch):
        with tarfile.open(arch) as t:
            for m in t.getmembers():
                if m.isfile():
                    ptx[os.path.basename(m.name)] = t.extractfile(m).read().decode(errors="replace")
    return rows, ptx


def pct(a, b):
    if a is None or b is None or b == 0:
        return None
    return 100.0 * (a - b) / b


def fmt(v, spec="{:.0f}"):
    return "-" if v is None else spec.format(v)


def main():
    fid = sys.argv[1]
    rows, kept = gemmlab_rows(os.path.join(fid, "gemmlab-4096"))
    cublas = rows.get(("cublas", "cuda"))
    table = []
    for n in range(1, 12):
        d = os.path.join(fid, "published", f"gemm{n}")
        entry = f"myGEMM{n}"
        run_txt = read(os.path.join(d, "run.txt"))
        for tc, lib, reglog, ptxfile in [
            ("cuda", "myGEMM.cu", "cuda-ptxas.txt", "cuda.ptx"),
            ("opencl", "myGEMM.cl", "opencl-ptxas.txt", "opencl.ptx"),
        ]:
            g = rows.get((f"gemm{n}", tc))
            log = opencl_ptxas(d) if tc == "opencl" else read(os.path.join(d, reglog))
            pub_regs = ptxas_registers(log, entry)
            pub_host = published_gflops(run_txt, lib)
            ns = ncu_kernel_ns(read(os.path.join(d, "ncu.csv")), entry) if tc == "cuda" else None
            pub_kernel = FLOPS / ns if ns else None
            g_regs = (g or {}).get("resources", {}) or {}
            g_regs = g_regs.get("registers")
            g_gf = (g or {}).get("gflops")
            g_ptx = kept.get(os.path.basename((g or {}).get("ptx_file") or ""))
            ptx_state, _ = ptx_compare(entry_body(read(os.path.join(d, ptxfile)), entry),
                                       entry_body(g_ptx, entry))
            ref = pub_kernel if pub_kernel else pub_host
            table.append({
                "kernel": f"gemm{n}", "toolchain": tc,
                "registers_published": pub_regs, "registers_gemmlab": g_regs,
                "gflops_published_host": pub_host, "gflops_published_kernel": pub_kernel,
                "gflops_gemmlab": g_gf, "speed_diff_pct": pct(g_gf, ref),
                "ptx": ptx_state,
            })
    with open(os.path.join(fid, "fidelity.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0].keys()))
        w.writeheader()
        w.writerows(table)
    out = [f"# Fidelity at {N}x{N}x{N}: the published code vs gemmlab's defaults\n",
           "GFLOP/s = 2*4096^3 / time. *published host*: the published main.cpp's own "
           "wall-clock figure; *published kernel*: the same run's kernel alone (Nsight Compute "
           "gpu__time_duration, CUDA only); *gemmlab*: event-timed median of `gemmlab compare`. "
           "Speed difference: gemmlab vs published kernel (CUDA) or published host (OpenCL).\n"]
    if cublas:
        out.append(f"cuBLAS in gemmlab's run: {cublas['gflops']:.0f} GFLOP/s.\n")
    out.append("| kernel | toolchain | registers published | registers gemmlab | GFLOP/s published host "
               "| GFLOP/s published kernel | GFLOP/s gemmlab | speed diff | PTX of the entry |")
    out.append("|---|---|---|---|---|---|---|---|---|")
    for r in table:
        out.append("| {kernel} | {toolchain} | {rp} | {rg} | {ph} | {pk} | {gg} | {d} | {ptx} |".format(
            rp=fmt(r["registers_published"]), rg=fmt(r["registers_gemmlab"]),
            ph=fmt(r["gflops_published_host"]), pk=fmt(r["gflops_published_kernel"]),
            gg=fmt(r["gflops_gemmlab"]), d=fmt(r["speed_diff_pct"], "{:+.1f}%"), **r))
    with open(os.path.join(fid, "fidelity.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
