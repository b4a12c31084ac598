#!/usr/bin/env bash
# One call on a GPU host: what the Foundation and Tuner issues require there, from the bundle.
#   bench/gpu/acceptance.sh BUNDLE_DIR OUT_DIR [BUDGET]
# 1. the bundle runs: --version, devices, db start/status (twice), kill -9 recovery, stop;
# 2. tuna tune over the ResNet-50 batch-32 problems (FP32 and FP16, all three directions):
#    every timed candidate of every solver is verified against the reference.
set -uo pipefail
bundle=$1 out=$2 budget=${3:-4}
tuna="$bundle/bin/tuna"
mkdir -p "$out"
step() { echo; echo "== $*"; }

step version;  "$tuna" --version
step devices;  "$tuna" devices
data=$(mktemp -d)/db
step "db start/status/stop twice"
for round in 1 2; do
  "$tuna" --data-dir "$data" db start && "$tuna" --data-dir "$data" db status && "$tuna" --data-dir "$data" db stop || echo "ROUND $round FAILED"
done
step "second start while running, then kill -9 and recover"
"$tuna" --data-dir "$data" db start
"$tuna" --data-dir "$data" db start
pid=$(cat "$data/mariadbd.pid"); kill -9 "$pid"; sleep 1
"$tuna" --data-dir "$data" db status
"$tuna" --data-dir "$data" db start && "$tuna" --data-dir "$data" db stop

for f in resnet50_n32 resnet50_n32_fp16; do
  step "tune $f (budget $budget per tunable solver, model-guided)"
  /usr/bin/time -v "$tuna" tune -f "examples/$f.txt" --backend cuda --strategy model \
    --budget "$budget" --json "$out/tune_$f.json" >"$out/tune_$f.txt" 2>"$out/tune_$f.err"
  echo "rc=$?"; tail -n 5 "$out/tune_$f.txt"; grep -E 'Elapsed|Maximum resident' "$out/tune_$f.err"
done
