#!/usr/bin/env bash
# One call on a GPU host, from the bundle: issue #19's acceptance with default settings.
#   bench/gpu/search_acceptance.sh BUNDLE_DIR OUT_DIR [TABLE_SOLVERS]
#   STEPS=tune,tables (default both; one device call may hold only one), MAX_POINTS=4096,
#   FILES="resnet50_n32 resnet50_n32_fwd_fp16_nhwc" (examples/<name>.txt tuned in step 1),
#   TUNE_FLAGS="--executors-per-device 3" (extra flags of step 1, for experiments only)
# 1. `tuna tune -f` of the ResNet-50 FP32 file (69 configs, all directions), then the FP16 NHWC
#    forward file, with no flags beyond -f and -o (default search: model-guided, budget 48,
#    patience 16), nvidia-smi sampling every 100 ms: wall time of each, GPU busy (busy.py);
# 2. the FP32 file again on the same data dir: a second run must recompile nothing (cache hits);
# 3. exhaustive search tables of >= 20 problems x solvers for bench/search (search_bench
#    --save-tables), replayed at once: the fraction of the space each strategy times to reach 3 %
#    of the best. Commit OUT_DIR/tables.json under bench/search/tables/ after the call.
set -uo pipefail
bundle=$1 out=$2
solvers=${3:-TunaIgemmFwd,TunaIgemmBwd,TunaIgemmWrw,TunaDirectTiledFwd,TunaHopperTmaFwd}
tuna="$bundle/bin/tuna"
here=$(cd "$(dirname "$0")" && pwd)
steps=${STEPS:-tune,tables}
mkdir -p "$out"
work=$(mktemp -d)
secs() { python3 -c "print(round($(date +%s.%N) - $1, 1))"; }

if [[ ",$steps," == *,tune,* ]]; then

nvidia-smi --query-gpu=index,timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
  >"$out/gpu_util.csv" 2>/dev/null &
smi=$!
# The host's cores, every second (busy.py: how busy the CPU was over the eval window).
while :; do echo "$(date '+%Y-%m-%d %H:%M:%S.%N') $(head -n 1 /proc/stat)"; sleep 1; done \
  >"$out/cpu_stat.txt" 2>/dev/null &
cpustat=$!
total=$(date +%s.%N)
for f in ${FILES:-resnet50_n32 resnet50_n32_fwd_fp16_nhwc}; do
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # TUNE_FLAGS: extra flags for experiments (the acceptance runs none)
  "$tuna" --data-dir "$work/db" tune -f "examples/$f.txt" -o "$out/db_$f" ${TUNE_FLAGS:-} \
    >"$out/tune_$f.txt" 2>"$out/tune_$f.err"
  echo "tune -f $f: rc=$? in $(secs "$start") s"
done
echo "both files: $(secs "$total") s (bar: <= 300 s)"
kill "$smi" "$cpustat" 2>/dev/null
cat "$out"/db_*/tune.log >"$out/tune_all.log" 2>/dev/null
python3 "$here/busy.py" "$out/gpu_util.csv" "$out/tune_all.log" "$out/cpu_stat.txt" | tee "$out/gpu_busy.txt"

start=$(date +%s.%N)
"$tuna" --data-dir "$work/db" tune -f examples/resnet50_n32.txt -o "$out/db_again" --new-session \
  >"$out/tune_again.txt" 2>"$out/tune_again.err"
echo "second run: rc=$? in $(secs "$start") s"
# The executors' counts are cumulative per process: the last line of each pid counts.
sed -nE 's/.*\[pid ([0-9]+)\] executor: job .*kernel cache: ([0-9]+) hits, ([0-9]+) from disk, ([0-9]+) local builds.*/\1 \2 \3 \4/p' \
  "$out/db_again/tune.log" 2>/dev/null |
  awk '{h[$1] = $2; d[$1] = $3; b[$1] = $4}
       END {for (p in h) {H += h[p]; D += d[p]; B += b[p]}
            print "second run executors: " H " kernel cache hits (" D " from disk), " B " local builds"}'
sed -nE 's/.*compiled job .* kernels \(([0-9]+) built, ([0-9]+) from the disk cache\).*/\1 \2/p' \
  "$out/db_again/tune.log" 2>/dev/null |
  awk '{b += $1; d += $2} END {print "second run compile steps: " b " built, " d " from the disk cache"}'
"$tuna" --data-dir "$work/db" db stop >/dev/null 2>&1
fi

[[ ",$steps," == *,tables,* ]] || exit 0
args=()
for s in ${solvers//,/ }; do args+=(--solver "$s"); done
start=$(date +%s.%N)
"$bundle/bin/search_bench" --backend cuda "${args[@]}" -f "$here/search_problems.txt" \
  --max-points "${MAX_POINTS:-4096}" --repetitions 5 --save-tables "$out/tables.json" --json "$out/replay.json" \
  >"$out/search_bench.txt" 2>"$out/search_bench.err"
echo "search tables: rc=$? in $(secs "$start") s"
tail -n 6 "$out/search_bench.txt"
