#!/usr/bin/env bash
# One device call for issue 83 on one GPU: a search split between two `gemmlab tune`
# processes on the same device through one SQLite store (--devices cuda,cuda), then the
# same search by one process on a store of its own: correctness only (the two share a
# device, so their timings are not independent). Staged: .gpu/gemmlab. Lands in $OUT/fleet/.
set -u
G=$PWD/.gpu/gemmlab
W=$OUT/fleet; mkdir -p "$W"
nvidia-smi --query-gpu=name,pci.bus_id,driver_version --format=csv > "$W/gpu.txt" 2>&1
S="--backends cuda --kernels 10 --sizes 2048 --strategy random --max-configs 24 --top 3 --no-db --caps none"
# shellcheck disable=SC2086 # the search's flags split on purpose
timeout 150 $G tune $S --devices cuda,cuda --store "$W/two.sqlite" --out "$W/two" > "$W/two.txt" 2>&1
echo "== exit $?" >> "$W/two.txt"
# shellcheck disable=SC2086
timeout 120 $G tune $S --device cuda --store "$W/one.sqlite" --out "$W/one" > "$W/one.txt" 2>&1
echo "== exit $?" >> "$W/one.txt"
tail -6 "$W/two.txt"; tail -3 "$W/one.txt"
