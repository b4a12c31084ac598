#!/usr/bin/env bash
# One call on a GPU host, from the bundle: issue #19's acceptance with default settings.
#   bench/gpu/search_acceptance.sh BUNDLE_DIR OUT_DIR
#   STEPS=tune,quality (default: one call of ~270-330 s on the H100) or STEPS=tables (its own call);
#   FILES="resnet50_n32 resnet50_n32_fwd_fp16_nhwc" (examples/<name>.txt, or paths, tuned in step 1),
#   TUNE_FLAGS="--executors-per-device 3" (extra flags of step 1, for experiments only),
#   BACKEND=cuda TARGET=sm_90 (search_bench's backend and the arch it plans for; BACKEND=cpu
#   TARGET=cpu-avx512 FILES=tiny.txt runs every step on the CPU backend, to test the script),
#   LIMIT=540 (the call's seconds: the quality and tables steps stop starting work in time),
#   LAYERS=12, TABLES_PAIRS=bench/gpu/search_tables.txt, MAX_POINTS=0 (no cap; a cap leaves
#   larger spaces out and says which), SEEDS=10 (seeds of the replay that follows the tables),
#   AGAIN=1 (the second run of step 1; AGAIN=0 skips it, for timelines and A/B calls),
#   COLD=1 (NVIDIA's cross-process compile cache removed before the first tune; see below),
#   QUALITY_MAX_POINTS=256 (the quality step's cap, part of its rule: the 754-point table of the
#   FP32 stem's TunaSmallCFwd, sizes compiled in and ~10 s per build, did not end in 388 s).
# 1. tune: `tuna tune -f` of the ResNet-50 FP32 file (69 configs, all directions), then the FP16
#    NHWC forward file, with no flags beyond -f and -o (default search: model-guided, budget 48,
#    patience 16), nvidia-smi sampling every 100 ms: wall time of each, GPU busy (busy.py); each
#    session's picks (`tuna report --json`) to OUT/report_<file>.json, the logs packed into
#    OUT/tune_logs.tar.xz (keep it with the results); then the FP32 file again
#    (the first of FILES) on the same data dir: a second run must recompile nothing (cache hits).
# 2. quality (after tune, same call; or later from the OUT of one): 12 layers of that run by a
#    fixed rule (bench/search/quality.h: the 3 largest winning-solver spaces per file and
#    direction), each winner's whole space timed exhaustively and the tune run's choice re-timed
#    against the best (search_bench --picks): OUT/quality.txt, quality.json.
# 3. tables: exhaustive tables of bench/gpu/search_tables.txt (25 problem x solver pairs, every
#    valid point; the plan and its time estimate printed first), replayed at once with tune's
#    default search, random and model: the fraction of the space timed until within 3 % of the
#    best. Commit OUT/tables.json under bench/search/tables/ after the call.
set -uo pipefail
bundle=$1 out=$2
tuna="$bundle/bin/tuna"
bench="$bundle/bin/search_bench"
here=$(cd "$(dirname "$0")" && pwd)
steps=${STEPS:-tune,quality}
backend=${BACKEND:-cuda} target=${TARGET:-sm_90} limit=${LIMIT:-540}
mkdir -p "$out"
work=$(mktemp -d)
call_start=$(date +%s.%N)
secs() { python3 -c "print(round($(date +%s.%N) - $1, 1))"; }
# Seconds left of the call, less a margin.
left() { python3 -c "print(max(10, int($limit - ($(date +%s.%N) - $call_start) - $1)))"; }
# examples/<name>.txt, or a path as given; its label is the file name without .txt.
file_of() { if [[ "$1" == */* || "$1" == *.txt ]]; then echo "$1"; else echo "examples/$1.txt"; fi; }
label_of() { basename "$1" .txt; }

if [[ ",$steps," == *,tune,* ]]; then

# COLD=1 (default): the first run of a fresh host, even after another run in the same call. The
# NVIDIA toolchain on the H200 hosts keeps a compile cache across processes (24 NVRTC builds: 14.4 s
# of CPU the first time, 0.4 s after, also with the page cache dropped; removing these folders made
# the next run cold again: bench/gpu/results/nvrtc_cross_process_cache_h200.txt), so a run after a
# run would otherwise compile almost for free and overstate the GPU busy figure. COLD=0 keeps it.
if [[ "${COLD:-1}" == 1 ]]; then
  for d in "$HOME/.nv" "$HOME/.cache/nvidia"; do
    [[ -e "$d" ]] && echo "cold run: removing $d ($(du -sh "$d" 2>/dev/null | cut -f1))" && rm -rf "$d"
  done
fi

nvidia-smi --query-gpu=index,timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
  >"$out/gpu_util.csv" 2>/dev/null &
smi=$!
# The host's cores, every second (busy.py: how busy the CPU was over the eval window).
while :; do echo "$(date '+%Y-%m-%d %H:%M:%S.%N') $(head -n 1 /proc/stat)"; sleep 1; done \
  >"$out/cpu_stat.txt" 2>/dev/null &
cpustat=$!
total=$(date +%s.%N)
for f in ${FILES:-resnet50_n32 resnet50_n32_fwd_fp16_nhwc}; do
  path=$(file_of "$f") name=$(label_of "$f")
  start=$(date +%s.%N)
  # shellcheck disable=SC2086  # TUNE_FLAGS: extra flags for experiments (the acceptance runs none)
  "$tuna" --data-dir "$work/db" tune -f "$path" -o "$out/db_$name" ${TUNE_FLAGS:-} \
    >"$out/tune_$name.txt" 2>"$out/tune_$name.err"
  echo "tune -f $path: rc=$? in $(secs "$start") s"
  # The session's picks (per config: winning solver, its params), for the quality step.
  session=$(grep -m 1 -oE '^session [0-9]+' "$out/tune_$name.txt" | awk '{print $2}')
  [[ -n "$session" ]] && "$tuna" --data-dir "$work/db" report --session_id "$session" --json \
    >"$out/report_$name.json" 2>>"$out/tune_$name.err"
done
"$tuna" --data-dir "$work/db" session list --json >"$out/sessions.json" 2>/dev/null
echo "both files: $(secs "$total") s (bar: <= 300 s)"
kill "$smi" "$cpustat" 2>/dev/null
cat "$out"/db_*/tune.log >"$out/tune_all.log" 2>/dev/null
python3 "$here/busy.py" "$out/gpu_util.csv" "$out/tune_all.log" "$out/cpu_stat.txt" | tee "$out/gpu_busy.txt"
# The step's logs in one file: a device call's transfer drops files past a count, and the
# timelines (where the lanes waited, for which builds) are what the next change is made from.
(cd "$out" && tar -cJf tune_logs.tar.xz tune_all.log gpu_util.csv cpu_stat.txt gpu_busy.txt tune_*.txt tune_*.err \
  2>/dev/null) || echo "tune logs: not packed"

if [[ "${AGAIN:-1}" == 1 ]]; then
start=$(date +%s.%N)
files=(${FILES:-resnet50_n32 resnet50_n32_fwd_fp16_nhwc})
"$tuna" --data-dir "$work/db" tune -f "$(file_of "${files[0]}")" -o "$out/db_again" --new-session \
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
fi
"$tuna" --data-dir "$work/db" db stop >/dev/null 2>&1
fi

if [[ ",$steps," == *,quality,* ]]; then
picks=()
for r in "$out"/report_*.json; do
  [[ -e "$r" ]] && picks+=(--picks "$r=$(basename "$r" .json | sed 's/^report_//')")
done
# The device's SM count as the tune sessions recorded it (the arch the planning uses is TARGET).
num_cu=$(python3 -c "import json,sys; s=json.load(open(sys.argv[1])); print(s[0]['num_cu'] if s else 0)" \
  "$out/sessions.json" 2>/dev/null || echo 0)
start=$(date +%s.%N)
timeout "$(left 10)" "$bench" --backend "$backend" --target "$target" --num-cu "$num_cu" "${picks[@]}" \
  --layers "${LAYERS:-12}" --max-points "${QUALITY_MAX_POINTS:-256}" --json "$out/quality.json" \
  >"$out/quality.txt" 2>"$out/quality.err"
echo "quality: rc=$? in $(secs "$start") s ($(( ${#picks[@]} / 2 )) report files)"
grep -E '^(quality|estimate|left out)' "$out/quality.txt"
fi

[[ ",$steps," == *,tables,* ]] || exit 0
start=$(date +%s.%N)
# Measuring stops starting problems 90 s before the call's end (one table of TunaIgemmBwd takes
# ~40 s); the replay of what was measured follows (host only: ~3 s for these 25 tables with 3
# seeds on build-2c, `search_bench --synthetic`), and runs again anywhere from OUT/tables.json.
timeout "$(left 10)" "$bench" --backend "$backend" --target "$target" \
  --pairs "${TABLES_PAIRS:-$here/search_tables.txt}" --max-points "${MAX_POINTS:-0}" \
  --deadline-s "$(left 90)" --save-tables "$out/tables.json" --json "$out/replay.json" \
  --seeds "${SEEDS:-10}" >"$out/search_bench.txt" 2>"$out/search_bench.err"
echo "search tables: rc=$? in $(secs "$start") s"
grep -E '^(estimate|measured|skipped|  |default)' "$out/search_bench.txt"
echo "replay again anywhere: search_bench --tables $out/tables.json --json replay.json"
