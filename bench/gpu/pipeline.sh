#!/usr/bin/env bash
# One call on a GPU host, from the bundle: the distributed pipeline and the runtime on a real GPU.
#   bench/gpu/pipeline.sh BUNDLE_DIR OUT_DIR [BUDGET]
# 1. `tuna tune -f` on the ResNet-50 forward FP32 configs (embedded MariaDB, coordinator, one
#    worker whose compile pool builds on the CPU while one executor per GPU evaluates, export),
#    with nvidia-smi sampling every GPU every 100 ms: the busy fraction while jobs run, from
#    outside (nvidia-smi) and inside (the executors' per-job accounts);
# 2. `tuna driver` on three layers with MIOPEN_SYSTEM_DB_PATH at the export vs an empty db.
set -uo pipefail
bundle=$1 out=$2 budget=${3:-8}
tuna="$bundle/bin/tuna"
mkdir -p "$out"
work=$(mktemp -d)

nvidia-smi --query-gpu=index,timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
  >"$out/gpu_util.csv" 2>/dev/null &
smi=$!
start=$(date +%s.%N)
"$tuna" --data-dir "$work/db" tune -f examples/resnet50_n32_fwd.txt -o "$out/db" --backend cuda \
  --strategy random --budget "$budget" --workers 1 --max-minutes 6 >"$out/pipeline.txt" 2>"$out/pipeline.err"
rc=$?; echo "pipeline rc=$rc in $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
kill "$smi" 2>/dev/null
tail -n 30 "$out/pipeline.txt"
"$tuna" --data-dir "$work/db" status --json >"$out/status.json" 2>/dev/null
"$tuna" --data-dir "$work/db" db stop >/dev/null 2>&1
# Busy fraction: nvidia-smi per GPU, and the executors' own accounts (bench/gpu/busy.py).
python3 "$(dirname "$0")/busy.py" "$out/gpu_util.csv" "$out/db/tune.log" | tee "$out/gpu_busy.txt"
grep -c "comparing on the host" "$out/db/tune.log" | sed 's/^/evaluators comparing on the host: /'

mkdir -p "$work/empty"
for layer in "-n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1" \
             "-n 32 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1" \
             "-n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1"; do
  for db in "$out/db" "$work/empty"; do
    echo "== driver conv $layer -F 1, system db $(basename "$db")"
    MIOPEN_SYSTEM_DB_PATH="$db" MIOPEN_USER_DB_PATH="$work/user-$(basename "$db")" \
      "$tuna" driver conv $layer -l 1 -j 1 -m conv -g 1 -F 1 -V 1 -t 1 -i 20 2>&1 |
      grep -E '^(solver|Kernel time|Verifies|kernels)'
  done
done
