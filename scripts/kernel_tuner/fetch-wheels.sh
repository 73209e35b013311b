#!/usr/bin/env bash
# Downloads, on the development machine (it reaches PyPI; the GPU machine does not), the
# wheels that kernel_tuner needs on the GPU machine: CPython 3.12, manylinux x86_64.
# The list is requirements.txt beside this script, exact versions, fetched with --no-deps
# so that numpy, scipy and pandas (already there) are never downloaded.
#
# usage: scripts/kernel_tuner/fetch-wheels.sh [DIR]      (default DIR: .gpu/wheels)
#
# Idempotent: a wheel already in DIR is not fetched again, and when every pinned wheel is
# there pip is not even started (so a second run works offline). Prints the wheels and their
# total size. On the GPU machine scripts/kernel_tuner/install-wheels.sh installs them.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REQ="$HERE/requirements.txt"
DIR=${1:-.gpu/wheels}
mkdir -p "$DIR"

# The wheels requirements.txt pins that DIR lacks (names compared as PEP 503 normalises them).
missing() {
  python3 - "$REQ" "$DIR" <<'EOF'
import os, re, sys
req, d = sys.argv[1], sys.argv[2]
norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()
have = set()
for f in os.listdir(d):
    if f.endswith(".whl"):
        name, version = f[:-4].split("-")[:2]
        have.add((norm(name), version))
for line in open(req):
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split("==")
        if (norm(name), version.strip()) not in have:
            print(line)
EOF
}

todo=$(missing)
if [ -n "$todo" ]; then
  echo "fetching: $(echo $todo)"
  # --platform lists the glibc baselines the GPU machine (glibc 2.39) accepts and that these
  # wheels are tagged with; pip takes the first wheel that matches any of them.
  # PIP_FIND_LINKS is unset so that only PyPI (the index pip is configured with) is asked.
  PIP_FIND_LINKS= python3 -m pip download --no-deps --only-binary=:all: \
    --python-version 3.12 --implementation cp \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_5_x86_64 --platform manylinux1_x86_64 \
    --dest "$DIR" $todo
  todo=$(missing)
  if [ -n "$todo" ]; then
    echo "fetch-wheels: still missing after download: $todo" >&2
    exit 1
  fi
else
  echo "all pinned wheels already in $DIR"
fi

# The pinned wheels, their sizes and the total (the GPU batch carries them: keep it small).
python3 - "$REQ" "$DIR" <<'EOF'
import os, re, sys
req, d = sys.argv[1], sys.argv[2]
norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()
pins = {}
for line in open(req):
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split("==")
        pins[(norm(name), version.strip())] = line
total, extra = 0, []
for f in sorted(os.listdir(d)):
    if not f.endswith(".whl"):
        continue
    name, version = f[:-4].split("-")[:2]
    if (norm(name), version) in pins:
        size = os.path.getsize(os.path.join(d, f))
        total += size
        print(f"{size / 1e6:7.2f} MB  {f}")
    else:
        extra.append(f)
print(f"{total / 1e6:7.2f} MB  total, {len(pins)} wheels in {d}")
for f in extra:
    print(f"note: {f} is in {d} but not pinned in requirements.txt (install-wheels.sh ignores it)")
if total > 20e6:
    print("fetch-wheels: the wheels exceed 20 MB", file=sys.stderr)
    sys.exit(1)
EOF
