#!/usr/bin/env bash
# The main job on the embedded default, from a fresh Debian machine: installs the
# dependencies, builds tuna, starts a private MariaDB (state under ~/.local/state/tuna),
# applies the schema and runs the pipeline on the example ResNet-50 driver file.
# Usage: tools/quickstart.sh [DRIVER_FILE]
set -euo pipefail
cd "$(dirname "$0")/.."
file=${1:-examples/resnet50_n32.txt}

bash tools/install_deps.sh
echo "== build"
bazel build //cli:tuna 2>&1 | tail -n 2
tuna=bazel-bin/cli/tuna

echo "== embedded database"
"$tuna" db start
"$tuna" db migrate
"$tuna" db status

echo "== problems of $file"
"$tuna" problem parse -f "$file" | tail -n 8

echo "== tuning database: import under tag 'quickstart'"
"$tuna" import -t quickstart -f "$file" || echo "(import: not available in this build yet)"

echo "== done; stop the database with: $tuna db stop"
