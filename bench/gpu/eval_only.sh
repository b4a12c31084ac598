#!/usr/bin/env bash
# The deployment of DESIGN §2 on one host, in separate processes: private MariaDB, a coordinator
# on loopback, a compile-only worker on the CPU cores and an eval-only worker on the GPU(s):
#   bench/gpu/eval_only.sh BUNDLE_DIR OUT_DIR [BUDGET] [BACKEND] [DRIVER_FILE]
# The eval worker starts once every compile step has ended: as on a fleet whose CPU workers
# compile faster than the GPUs evaluate, the GPU never waits for a compiler, and the busy
# fraction measures the eval lane alone (the worker, its executor, the coordinator's leases and
# reports). bench/gpu/pipeline.sh measures the one-machine `tune -f`, where both share the cores.
set -uo pipefail
bundle=$1 out=$2 budget=${3:-8} backend=${4:-cuda} file=${5:-examples/resnet50_n32_fwd.txt}
tuna="$bundle/bin/tuna"
mkdir -p "$out"
work=$(mktemp -d)
db=(--data-dir "$work/db")
cleanup() { kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; "$tuna" "${db[@]}" db stop >/dev/null 2>&1; }
pids=()
trap cleanup EXIT

"$tuna" "${db[@]}" db start >/dev/null || exit 1
"$tuna" "${db[@]}" --progress off import -t bench -f "$file" | tail -n 1
"$tuna" "${db[@]}" solvers update >/dev/null
session=$("$tuna" "${db[@]}" session init -l "eval-only bench" --detect --json |
  sed -n 's/.*"session_id": *\([0-9]*\).*/\1/p')
"$tuna" "${db[@]}" --progress off applicability update --session_id "$session" | tail -n 1
"$tuna" "${db[@]}" --progress off jobs load --session_id "$session" -t bench \
  --only_applicable --fin_steps miopen_perf_compile,miopen_perf_eval,miopen_find_compile,miopen_find_eval | tail -n 1

port=$((20000 + RANDOM % 20000))
"$tuna" "${db[@]}" --log-file "$out/coordinator.log" coordinator --listen "127.0.0.1:$port" \
  --lease-seconds 600 &
pids+=($!)
tuning=(--backend "$backend" --strategy random --budget "$budget")
start=$(date +%s.%N)
"$tuna" --log-file "$out/compile.log" worker --coordinator "127.0.0.1:$port" --steps compile \
  --compile-jobs "$(nproc)" "${tuning[@]}" &
pids+=($!)
state() { "$tuna" "${db[@]}" status --session_id "$session" --json; }
count() { sed -n "s/.*\"$1\": *\([0-9]*\).*/\1/p"; }
# Every compile step that may run has run when no compile is in progress and none was reported
# for 2 s (find steps wait for their perf job's eval: those compile while the GPU evaluates).
last=-1 still=0
while [ "$still" -lt 4 ]; do
  sleep 0.5
  n=$(grep -c "compiled job" "$out/compile.log" 2>/dev/null)
  if [ "$n" -gt 0 ] && [ "$n" = "$last" ] && [ "$(state | count compile_start)" = 0 ]; then
    still=$((still + 1))
  else
    still=0
  fi
  last=$n
done
echo "compile: $n steps in $(python3 -c "print(round($(date +%s.%N) - $start - 2, 1))") s; the find steps of tuned solvers compile after their perf job"

if [ "$backend" != cpu ]; then
  nvidia-smi --query-gpu=index,timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
    >"$out/gpu_util.csv" 2>/dev/null &
  pids+=($!)
fi
start=$(date +%s.%N)
"$tuna" --log-file "$out/eval.log" worker --coordinator "127.0.0.1:$port" --steps eval \
  --lease-batch 3 "${tuning[@]}" &
pids+=($!)
while :; do
  s=$(state)
  done_jobs=$(echo "$s" | count finished) total=$(echo "$s" | count total)
  [ "$done_jobs" = "$total" ] && break
  sleep 0.5
done
echo "eval: $total jobs in $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
state | tee "$out/status.json" | grep -o '"by_state": {[^}]*}'
[ -f "$out/gpu_util.csv" ] || : >"$out/gpu_util.csv"
python3 "$(dirname "$0")/busy.py" "$out/gpu_util.csv" "$out/eval.log" | tee "$out/gpu_busy.txt"
