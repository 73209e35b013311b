#!/usr/bin/env bash
# Installs, on the GPU machine (no network), the wheels fetch-wheels.sh brought, into a
# folder of their own that PYTHONPATH then points at. Nothing goes into the system Python.
#
# usage: scripts/kernel_tuner/install-wheels.sh [WHEELS] [TARGET]
#        (defaults: .gpu/wheels and /tmp/kt-site); then
#        export PYTHONPATH=TARGET${PYTHONPATH:+:$PYTHONPATH}
#
# Exactly the versions in requirements.txt, with --no-deps: kernel_tuner declares numpy,
# scipy, pandas and scikit-learn, and pip --target ignores what the system Python already
# has, so a plain `pip install --find-links WHEELS --target DIR kernel_tuner` would look for
# numpy among the wheels and fail. The machine's own numpy, scipy, pandas and cupy are used.
# Where the system Python has no pip, the wheels are unpacked directly (a wheel is a zip whose
# top level is what site-packages gets).
# Ends with an import check that prints the versions kernel_tuner will run with.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WHEELS=${1:-.gpu/wheels}
TARGET=${2:-/tmp/kt-site}
PY=${PYTHON:-python3}
rm -rf "$TARGET"; mkdir -p "$TARGET"

if "$PY" -m pip --version > /dev/null 2>&1; then
  PIP_FIND_LINKS= "$PY" -m pip install --quiet --no-index --no-deps --no-compile \
    --find-links "$WHEELS" --target "$TARGET" -r "$HERE/requirements.txt"
else
  echo "install-wheels: no pip for $PY, unpacking the wheels"
  "$PY" - "$HERE/requirements.txt" "$WHEELS" "$TARGET" <<'EOF'
import os, re, sys, zipfile
req, wheels, target = sys.argv[1:4]
norm = lambda s: re.sub(r"[-_.]+", "-", s).lower()
pins = set()
for line in open(req):
    line = line.split("#")[0].strip()
    if line:
        name, version = line.split("==")
        pins.add((norm(name), version.strip()))
done = set()
for f in sorted(os.listdir(wheels)):
    if f.endswith(".whl"):
        name, version = f[:-4].split("-")[:2]
        if (norm(name), version) in pins and (norm(name), version) not in done:
            zipfile.ZipFile(os.path.join(wheels, f)).extractall(target)
            done.add((norm(name), version))
missing = pins - done
if missing:
    sys.exit(f"install-wheels: no wheel for {sorted(missing)} in {wheels}")
EOF
fi

PYTHONPATH="$TARGET${PYTHONPATH:+:$PYTHONPATH}" "$PY" - <<'EOF'
import sys
import numpy, scipy, constraint, jsonschema
import kernel_tuner
print(f"install-wheels: kernel_tuner {kernel_tuner.__version__} from {kernel_tuner.__file__}")
print(f"  python {sys.version.split()[0]}, numpy {numpy.__version__}, scipy {scipy.__version__}")
try:
    import cupy
    print(f"  cupy {cupy.__version__}")
except ImportError as e:
    print(f"  cupy not importable: {e}")
EOF
