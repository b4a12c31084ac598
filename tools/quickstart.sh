#!/usr/bin/env bash
# The main job on the embedded default, from a fresh Debian machine: installs the dependencies,
# builds tuna, then tunes a driver file end to end on this machine — a private MariaDB (state
# under ~/.local/state/tuna), an in-process coordinator, local workers on the best backend with a
# device (CUDA, HIP, else the CPU), every kernel verified — and writes the MIOpen db files.
# Usage: tools/quickstart.sh [DRIVER_FILE [OUTPUT_DIR]]
#   default examples/quickstart.txt (CPU-friendly); on a GPU host try examples/resnet50_n32.txt
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-examples/quickstart.txt}
out=${2:-tuna-out}

bash tools/install_deps.sh
echo "== build"
bazel build //cli:tuna 2>&1 | tail -n 1
tuna=bazel-bin/cli/tuna

echo "== devices"
"$tuna" devices --no-probe || true

echo "== tune $file (embedded MariaDB, coordinator, local workers, export to $out)"
"$tuna" tune -f "$file" -o "$out" --budget 6

echo "== session status"
"$tuna" status
echo "== done: MIOpen db files in $out/; stop the database with: $tuna db stop"
