#!/usr/bin/env bash
# How far ahead of their FMAs ptxas issues a SIMT kernel's fragment loads, offline: the kernel
# compiled for sm_90 by NVRTC 13 (gemmlab build), assembled by the cached ptxas 13, disassembled
# by nvdisasm 13, then for the main loop (the longest backward branch) the distance in
# instructions from each LDS.128 to the first instruction that reads its registers.
# A pipelined loop shows tens; one that loads right before use shows single digits
# (results/h200/routine/bounds/README.md).
#
#   scripts/simt/lds-distance.sh simtdirect BK=16 BM=64 BN=64 ... ASYNC_COPY=1 USE_BOUNDS=1
#
# Needs: target/release/gemmlab, scripts/nvrtc/fetch.sh 13 --with-ptxas, and python3 with pip
# (nvdisasm comes from NVIDIA's nvidia-cuda-nvdisasm wheel, fetched into the cache once).
set -euo pipefail
kernel=${1:?usage: lds-distance.sh KERNEL NAME=VALUE...}; shift
cache=${GEMMLAB_CACHE:-$HOME/.cache/gemmlab}
ptxas=$cache/nvrtc/13.5.37/nvidia/cu13/bin/ptxas
nvd=$cache/nvdisasm/13.5.37
[ -x "$ptxas" ] || { echo "no ptxas 13 in $cache: run scripts/nvrtc/fetch.sh 13 --with-ptxas" >&2; exit 1; }
if [ ! -x "$nvd/nvidia/cu13/bin/nvdisasm" ]; then
    tmp=$(mktemp -d)
    python3 -m pip download --quiet --no-deps --dest "$tmp" nvidia-cuda-nvdisasm==13.5.37
    mkdir -p "$nvd" && python3 -m zipfile -e "$tmp"/*.whl "$nvd" && chmod +x "$nvd/nvidia/cu13/bin/nvdisasm"
    rm -rf "$tmp"
fi
out=$(mktemp -d)
defines=(); for d in "$@"; do defines+=(--define "$d"); done
target/release/gemmlab build --backends cuda --nvrtc 13 --arch sm_90 --kernel "$kernel" "${defines[@]}" --out "$out" \
    | grep -E "registers|error" || true
"$ptxas" -arch=sm_90 "$out"/*.ptx -o "$out/k.cubin"
"$nvd/nvidia/cu13/bin/nvdisasm" -c "$out/k.cubin" > "$out/k.sass"
python3 - "$out/k.sass" <<'PY'
import re, statistics, sys
lines = open(sys.argv[1]).read().split('\n')
ins, label_at, pending = [], {}, None
for l in lines:
    m = re.match(r'^\s*\.(L_x_\d+):', l)
    if m:
        pending = m.group(1)
        continue
    m = re.match(r'\s+/\*([0-9a-f]{4})\*/\s+(.*?)\s*;', l)
    if m:
        ins.append(m.group(2))
        if pending:
            label_at[pending], pending = len(ins) - 1, None
loops = [(label_at[m.group(1)], i) for i, t in enumerate(ins)
         for m in [re.search(r'BRA\s+`\(\.(L_x_\d+)\)', t)] if m and label_at.get(m.group(1), i) < i]
if not loops:
    sys.exit("no loop found")
start, end = max(loops, key=lambda r: r[1] - r[0])
body = ins[start:end + 1]
dist = []
for n, t in enumerate(body):
    m = re.match(r'(?:@\S+\s+)?LDS\.128\s+R(\d+),', t)
    if not m:
        continue
    regs = {f'R{int(m.group(1)) + q}' for q in range(4)}
    for k in range(n + 1, len(body)):
        operands = body[k].split(' ', 1)[1] if ' ' in body[k] else ''
        if regs & set(re.findall(r'R\d+', operands)):
            dist.append(k - n)
            break
print(f"main loop: {len(body)} instructions, {len(dist)} LDS.128; distance to first use: "
      f"median {statistics.median(dist)}, min {min(dist)}, within 4: {sum(d <= 4 for d in dist)}")
PY
rm -rf "$out"
