#!/usr/bin/env bash
# Regenerates every committed report from its committed data into OUT/<report dir with / as _>,
# with the command each report.md names; for comparing the report code before and after a change:
#   scripts/dev/regen-reports.sh /tmp/before; (change); scripts/dev/regen-reports.sh /tmp/after
#   diff -r /tmp/before /tmp/after
set -euo pipefail
out=${1:?usage: regen-reports.sh OUT [GEMMLAB]}
bin=${2:-target/release/gemmlab}
cd "$(dirname "$0")/../.."
mkdir -p "$out"
find results -name report.md | sort | while read -r md; do
  dir=$(dirname "$md")
  cmd=$(awk '/^```sh/{getline; print; exit}' "$md")
  dest="$out/${dir//\//_}"
  rm -rf "$dest"
  # shellcheck disable=SC2086
  args=$(echo "$cmd" | sed -e 's/^gemmlab report //' -e 's/--out [^ ]*//')
  # shellcheck disable=SC2086
  "$bin" report $args --out "$dest" >/dev/null
  echo "$dir -> $dest"
done
