#!/usr/bin/env bash
# The learned-heuristics acceptance run (issue #20) in one call on a GPU host:
#   bench/heuristics/run_gpu.sh TUNA_BINARY OUT_DIR [BACKEND] [extra `tuna tune` flags...]
# 1. generates the config set (gen_configs.py $GEN_FLAGS, default `--set mixed`: 79 lines, 237
#    configs of ResNet-50, Inception-like and MobileNet-like shapes, FP16 NHWC, batches 1/8/32,
#    all directions, nets interleaved so that any prefix is balanced), or takes CONFIGS=FILE;
# 2. tunes it with the default search (`tuna tune -f`, every candidate's time kept in
#    eval_sample); after TUNE_TIMEOUT seconds it sends SIGTERM: tune stops its workers (the jobs in
#    flight finish) and exports what is done; TUNE_GRACE seconds later a second SIGTERM ends it at
#    once (the database keeps every finished job either way);
# 3. trains with HOLDOUT of the configs held out and evaluates them (`tuna heuristics eval`: the
#    side-by-side table for docs/BENCHMARKS.md); fewer than MIN_CONFIGS configs with timings is
#    flagged (train.txt, summary): not an acceptance run; with MEASURE=1 (the default) eval runs
#    with --measure: the predicted / default params the session never timed are built, verified
#    and timed on this GPU (the tuner's measure stage) and counted with that time, for at most
#    MEASURE_SECONDS, less when DEADLINE leaves less (MEASURE_RESERVE seconds are kept for the
#    steps after eval); picks left when the time is up stay misses (never timed);
# 4. exports the dbs with --heuristics (models trained on every config) and runs the load /
#    predict bench on them;
# 5. runs `tuna driver -S 0` on a problem missing from the find db ($DRIVER_ARGS): it must say
#    "solver from heuristics model" and "Verifies OK";
# 6. prints a summary table last (also OUT_DIR/summary.txt).
# Every step runs on what the session completed, even after a timeout or a failed step; with
# DEADLINE=S (seconds from this script's start) each step after the tune is cut to what is left
# (5 s kept for the summary). Everything lands in OUT_DIR (commit OUT_DIR/export, samples.jsonl
# (`tuna heuristics dump`: find times and every sample per config), configs.txt and the tables
# under bench/heuristics/data/); the database files are in OUT_DIR/db.
# The bench binary is looked for beside this script, else beside TUNA_BINARY (tools/bundle.sh puts
# bin/heuristics_bench beside bin/tuna).
# Environment: TUNE_TIMEOUT (420), TUNE_GRACE (60), DEADLINE (0 = none), MIN_CONFIGS (200),
# HOLDOUT (0.2), MEASURE (1), MEASURE_SECONDS (150), MEASURE_RESERVE (60), GEN_FLAGS (--set mixed), CONFIGS (a driver file instead of generating),
# DRIVER_ARGS (the driver's problem flags, one missing from the find db).
set -uo pipefail
tuna=$1 out=$2 backend=${3:-cuda}
shift $(( $# >= 3 ? 3 : $# ))
here=$(cd "$(dirname "$0")" && pwd)
TUNE_TIMEOUT=${TUNE_TIMEOUT:-420} TUNE_GRACE=${TUNE_GRACE:-60} DEADLINE=${DEADLINE:-0}
MIN_CONFIGS=${MIN_CONFIGS:-200} HOLDOUT=${HOLDOUT:-0.2}
MEASURE=${MEASURE:-1} MEASURE_SECONDS=${MEASURE_SECONDS:-150} MEASURE_RESERVE=${MEASURE_RESERVE:-60} GEN_FLAGS=${GEN_FLAGS:---set mixed} CONFIGS=${CONFIGS:-}
# Not in the mixed set (batch 16; c = k = 256 at 28 x 28 is ResNet's stride-2 3x3 input, here stride 1).
DRIVER_ARGS=${DRIVER_ARGS:-convfp16 -n 16 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1 --in_layout NHWC --fil_layout NHWC --out_layout NHWC}
mkdir -p "$out"
data="$out/db"
times=""
step() { echo; echo "== $* (at ${SECONDS} s)"; }
took() { times+="$1 $(( SECONDS - $2 )) s; "; }
# Seconds a step may take: CAP, less when DEADLINE leaves less (5 s kept for the summary).
limit() {
  local cap=$1
  if (( DEADLINE > 0 )); then
    local left=$(( DEADLINE - SECONDS - 5 ))
    (( left < cap )) && cap=$left
    (( cap < 1 )) && cap=1
  fi
  echo "$cap"
}
# limited CAP CMD...: runs CMD under `timeout`; rc 124 says it was cut.
limited() { local cap; cap=$(limit "$1"); shift; timeout -k 5 "$cap" "$@"; }
trap '"$tuna" --data-dir "$data" db stop >/dev/null 2>&1 || true' EXIT

step "generate"
if [ -n "$CONFIGS" ]; then
  cp "$CONFIGS" "$out/configs.txt" || exit 1
  echo "configs from $CONFIGS" >"$out/configs.err"
else
  # shellcheck disable=SC2086  # GEN_FLAGS is a list of flags
  python3 "$here/gen_configs.py" $GEN_FLAGS >"$out/configs.txt" 2>"$out/configs.err" || { cat "$out/configs.err"; exit 1; }
fi
cat "$out/configs.err"
lines=$(grep -c '^[^#]' "$out/configs.txt")

step "tune (backend $backend, default search, SIGTERM after ${TUNE_TIMEOUT} s)"
t0=$SECONDS
"$tuna" --data-dir "$data" tune -f "$out/configs.txt" -o "$out/tuned" --backend "$backend" "$@" \
  >"$out/tune.txt" 2>"$out/tune.err" &
tune_pid=$!
(
  for (( i = 0; i < TUNE_TIMEOUT; ++i )); do kill -0 "$tune_pid" 2>/dev/null || exit 0; sleep 1; done
  echo "TUNE_TIMEOUT ${TUNE_TIMEOUT} s: SIGTERM (stop the workers, export what is done)"
  kill -TERM "$tune_pid" 2>/dev/null
  for (( i = 0; i < TUNE_GRACE; ++i )); do kill -0 "$tune_pid" 2>/dev/null || exit 0; sleep 1; done
  echo "still running ${TUNE_GRACE} s later: second SIGTERM (quit at once)"
  kill -TERM "$tune_pid" 2>/dev/null
) >"$out/tune_watchdog.txt" 2>&1 &
watchdog_pid=$!
wait "$tune_pid"
tune_rc=$?
wait "$watchdog_pid"
took tune "$t0"
cat "$out/tune_watchdog.txt"
tune_state="completed"
grep -q "TUNE_TIMEOUT" "$out/tune_watchdog.txt" && tune_state="stopped by TUNE_TIMEOUT ${TUNE_TIMEOUT} s"
echo "rc=$tune_rc ($tune_state) in $(( SECONDS - t0 )) s"
grep -m 1 '^session ' "$out/tune.txt"
session=$(sed -n 's/^session \([0-9]*\) .*/\1/p' "$out/tune.txt" | head -n 1)
if [ -z "$session" ]; then  # ended before its summary: the newest session of the data dir
  session=$(limited 60 "$tuna" --data-dir "$data" session list --json 2>>"$out/tune.err" |
    python3 -c 'import json,sys; s=json.load(sys.stdin); print(max(x.get("id", x.get("session_id", 0)) for x in s) if s else "")' 2>/dev/null)
  echo "no summary in tune.txt; newest session of $data: ${session:-none}"
fi

train_rc=- eval_rc=- export_rc=- bench_rc=- driver_rc=- driver="not run" base=""
if [ -n "$session" ]; then
  step "train ($HOLDOUT of the configs held out) and evaluate"
  t0=$SECONDS
  limited 240 "$tuna" --data-dir "$data" heuristics train --session_id "$session" -o "$out/held_out_models" \
    --holdout "$HOLDOUT" >"$out/train.txt" 2>"$out/train.err"
  train_rc=$?
  read -r trained held <<<"$(sed -n 's/^trained .* on \([0-9]*\) configs (\([0-9]*\) held out).*/\1 \2/p' "$out/train.txt")"
  with_timings=$(( ${trained:-0} + ${held:-0} ))
  if (( with_timings < MIN_CONFIGS )); then
    echo "FLAG: session $session has $with_timings configs with timings (< MIN_CONFIGS $MIN_CONFIGS): not an acceptance run" |
      tee -a "$out/train.txt"
  fi
  cat "$out/train.txt" "$out/train.err"
  took train "$t0"
  t0=$SECONDS
  # --measure: its own limit (MEASURE_SECONDS, less what DEADLINE cannot spare: 5 s for the
  # summary, MEASURE_RESERVE for the later steps, 20 s for eval's own work and the pick in flight).
  measure_flags=() measure_s=0
  if (( MEASURE )); then
    measure_s=$MEASURE_SECONDS
    if (( DEADLINE > 0 )); then
      spare=$(( DEADLINE - SECONDS - 5 - MEASURE_RESERVE - 20 ))
      (( spare < measure_s )) && measure_s=$spare
    fi
    if (( measure_s >= 5 )); then
      measure_flags=(--measure --measure-seconds "$measure_s")
    else
      echo "eval without --measure: ${measure_s} s left for it (DEADLINE)"; measure_s=0
    fi
  fi
  limited $(( 180 + measure_s )) "$tuna" --data-dir "$data" heuristics eval --session_id "$session" \
    --model "$out/held_out_models" "${measure_flags[@]}" >"$out/eval.txt" 2>"$out/eval_notes.txt"
  eval_rc=$?
  cat "$out/eval.txt"
  echo "($(grep -c '^note:' "$out/eval_notes.txt") notes in eval_notes.txt)"
  took eval "$t0"

  step "export with the heuristics (trained on every config) and the samples"
  t0=$SECONDS
  limited 120 "$tuna" --data-dir "$data" heuristics dump --session_id "$session" -o "$out/samples.jsonl" 2>&1 |
    tee "$out/dump.txt"
  limited 240 "$tuna" --data-dir "$data" export --session_id "$session" -o "$out/export" --heuristics \
    >"$out/export.txt" 2>"$out/export.err"
  export_rc=$?
  cat "$out/export.txt" "$out/export.err"
  took export "$t0"
fi

step "bench: model load and predict times"
t0=$SECONDS
base=$(sed -n 's/.*-> \(.*\)$/\1/p' "$out/export.txt" 2>/dev/null | head -n 1)
if [ -x "$here/heuristics_bench" ]; then bench="$here/heuristics_bench"; else bench="$(dirname "$tuna")/heuristics_bench"; fi
if [ -n "$base" ] && [ -x "$bench" ]; then
  limited 60 "$bench" --model "$out/export" --basename "$base" --json "$out/bench.json" >"$out/bench.txt" 2>&1
  bench_rc=$?
  cat "$out/bench.txt"
else
  echo "skipped: basename '${base}', bench binary '$bench'" | tee "$out/bench.txt"
fi
took bench "$t0"

step "driver: immediate mode on a problem missing from the find db"
t0=$SECONDS
if [ -n "$base" ]; then
  # shellcheck disable=SC2086  # DRIVER_ARGS is a list of flags
  MIOPEN_SYSTEM_DB_PATH="$out/export" MIOPEN_USER_DB_PATH="$out/user" limited 120 "$tuna" driver --backend "$backend" \
    $DRIVER_ARGS -S 0 -V 1 -t 1 >"$out/driver.txt" 2>"$out/driver.err"
  driver_rc=$?
  cat "$out/driver.txt"
  grep -q "solver from heuristics model" "$out/driver.txt" && grep -q "Verifies OK" "$out/driver.txt" &&
    driver="OK (solver from heuristics model, Verifies OK)" || driver="FAILED (rc $driver_rc; driver.txt, driver.err)"
fi
echo "driver: $driver"
took driver "$t0"

# The summary: the eval rows as printed (heuristics model | analytic fallback; predicted | ranked | default).
row() { sed -n "s|^$1 *||p" "$out/eval.txt" 2>/dev/null | head -n 1; }
{
  echo
  echo "== summary (issue #20 acceptance; bars in brackets)"
  printf '%-30s %s\n' "configs in the file" "$(( lines * 3 )) ($lines lines x 3 directions)"
  printf '%-30s %s\n' "tune" "$tune_state, rc $tune_rc, $(grep -m 1 '^session ' "$out/tune.txt" 2>/dev/null | sed 's/^session [0-9]* ([^)]*): //')"
  printf '%-30s %s\n' "configs with timings" "${with_timings:-0} (trained ${trained:-?} + held out ${held:-?}) [>= $MIN_CONFIGS]$( (( ${with_timings:-0} < MIN_CONFIGS )) && echo "  FLAG: not an acceptance run")"
  printf '%-30s %s\n' "held-out configs evaluated" "$(sed -n 's/^[^ ]*: \([0-9]*\) held-out configs evaluated.*/\1/p' "$out/eval.txt" 2>/dev/null)"
  [ "$eval_rc" = 0 ] || printf '%-30s %s\n' "  eval failed" "rc $eval_rc: $(grep -v '^note:' "$out/eval_notes.txt" 2>/dev/null | head -n 1)"
  printf '%-30s %s\n' "solver choice" "heuristics model | analytic fallback"
  printf '%-30s %s\n' "  problems (>= 2 timed)" "$(row problems)"
  printf '%-30s %s\n' "  within 10 % of best [>= 90]" "$(row 'within 10 % of best')"
  printf '%-30s %s\n' "  mean slowdown [<= 5 %]" "$(row 'mean slowdown')"
  printf '%-30s %s\n' "perf params" "predicted (runtime pick) | ranked (timed) | default"
  printf '%-30s %s\n' "  (problem, solver)" "$(row '(problem, solver)')"
  printf '%-30s %s\n' "  within 15 % of tuned [>= 80]" "$(row 'within 15 % of tuned')"
  printf '%-30s %s\n' "  median time / tuned" "$(row 'median time / tuned')"
  printf '%-30s %s\n' "  never timed (counted miss)" "$(row 'never timed (miss)')"
  printf '%-30s %s\n' "  measured now (--measure)" "$(row 'measured now')"
  printf '%-30s %s\n' "  measure failed (miss)" "$(row 'measure failed (miss)')"
  printf '%-30s %s\n' "picks measured (--measure)" "$(if [ "${measure_s:-0}" -gt 0 ]; then sed -n 's/^measured: //p' "$out/eval.txt" 2>/dev/null | head -n 1; echo " [limit ${measure_s} s]"; else echo "off"; fi | tr -d '\n')"
  printf '%-30s %s\n' "model load [< 50 ms]" "$(sed -n 's/^load *\([0-9.]* ms\).*/\1/p' "$out/bench.txt" 2>/dev/null)"
  printf '%-30s %s\n' "predict (pick) [< 100 us]" "$(sed -n 's/^pick *\([0-9.]* us\).*/\1/p' "$out/bench.txt" 2>/dev/null) per problem; rank_space $(sed -n 's/^rank_space *\([0-9.]* us\).*/\1/p' "$out/bench.txt" 2>/dev/null)"
  printf '%-30s %s\n' "driver immediate mode" "$driver"
  printf '%-30s %s\n' "step rc" "train $train_rc, eval $eval_rc, export $export_rc, bench $bench_rc, driver $driver_rc (124 = cut by the time limit)"
  printf '%-30s %s\n' "step times" "$times total ${SECONDS} s"
} | tee "$out/summary.txt"
