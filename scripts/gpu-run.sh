# Sourced by the gpu-*.sh device scripts: `run NAME TIMEOUT COMMAND...` writes the
# command, its output and its exit status to $W/NAME.txt as it runs, and shows the tail.
# The nvidia-smi line of the GPU it ran on goes to $W/gpu.txt by `gpu_line`.
run() {
  local name=$1 t=$2; shift 2
  echo "\$ $*" > "$W/$name.txt"
  timeout "$t" "$@" >> "$W/$name.txt" 2>&1
  echo "== exit $?" >> "$W/$name.txt"
  tail -4 "$W/$name.txt"
}
gpu_line() {
  nvidia-smi --query-gpu=name,pci.bus_id,driver_version,clocks.sm,temperature.gpu --format=csv > "$W/gpu.txt" 2>&1
  cat "$W/gpu.txt"
}
