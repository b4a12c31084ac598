#!/usr/bin/env bash
# Learned heuristics end to end on the CPU backend (issue #20):
# 1. `tuna tune -f` on a small generated set of forward problems;
# 2. `tuna heuristics train --holdout` + `tuna heuristics eval` print the side-by-side table;
# 3. `tuna export --heuristics` writes the models beside the db files;
# 4. `tuna driver -S 0` (immediate mode) on a problem missing from the find db reports
#    "solver from heuristics model" with predicted params and verifies; with no model, or a
#    problem out of the model's range (a direction never trained), it says the analytic fallback
#    was used and why; a problem in the find db still comes from the system db.
set -euo pipefail
tuna="$TEST_SRCDIR/$TEST_WORKSPACE/cli/tuna"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/heur.XXXXXX")
data="$work/db"
trap '"$tuna" --data-dir "$data" db stop >/dev/null 2>&1 || true' EXIT
fail() { echo "FAIL: $*"; exit 1; }

line() { echo "./bin/MIOpenDriver conv -n $1 -c $2 -H $3 -W $3 -k 8 $4 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1"; }
{
  echo "# generated: forward problems of two filter shapes and several sizes"
  for c in 4 16; do for hw in 6 12; do line 1 "$c" "$hw" "-y 3 -x 3 -p 1 -q 1"; done; done
  line 2 8 8 "-y 1 -x 1 -p 0 -q 0"
  line 2 16 10 "-y 1 -x 1 -p 0 -q 0"
} >"$work/set.txt"

"$tuna" --data-dir "$data" tune -f "$work/set.txt" -o "$work/out" --budget 4 --backend cpu \
  >"$work/tune.txt" 2>"$work/tune.err" || { cat "$work/tune.txt" "$work/tune.err"; fail "tune"; }
session=$(sed -n 's/^session \([0-9]*\) .*/\1/p' "$work/tune.txt" | head -n 1)
[ -n "$session" ] || { cat "$work/tune.txt"; fail "no session id in the tune output"; }

"$tuna" --data-dir "$data" heuristics train --session_id "$session" -o "$work/held" --holdout 0.5 \
  >"$work/train.txt" || { cat "$work/train.txt"; fail "heuristics train"; }
cat "$work/train.txt"
grep -q "picker yes" "$work/train.txt" || fail "no picker trained"
evaluated=$("$tuna" --data-dir "$data" heuristics eval --session_id "$session" --model "$work/held" 2>/dev/null) ||
  fail "heuristics eval"
echo "$evaluated"
grep -Eq "^within 10 % of best +[0-9.]+ % +[0-9.]+ %" <<<"$evaluated" || fail "no side-by-side accuracy row"
grep -q "held-out configs evaluated" <<<"$evaluated" || fail "no held-out count"
# --measure: picks the session never timed are built, verified and timed here, and counted.
measured=$("$tuna" --data-dir "$data" heuristics eval --session_id "$session" --model "$work/held" --measure \
  --measure-seconds 120 2>"$work/eval_measure.err") || { cat "$work/eval_measure.err"; fail "heuristics eval --measure"; }
echo "$measured"
grep -Eq "^measured: [0-9]+ picks timed now on .* \([0-9]+ predicted, [0-9]+ default\), [0-9]+ failed" <<<"$measured" ||
  fail "no measured count"
grep -Eq "^never timed \(miss\) +0 +0 +0$" <<<"$measured" || fail "--measure left picks unmeasured"
grep -Eq "^measured now +[0-9]+ +0 +[0-9]+$" <<<"$measured" || fail "no 'measured now' row"
never=$(sed -n 's/^never timed (miss) *\([0-9]*\) .*/\1/p' <<<"$evaluated")
now=$(sed -n 's/^measured now *\([0-9]*\) .*/\1/p' <<<"$measured")
failed=$(sed -n 's/^measure failed (miss) *\([0-9]*\) .*/\1/p' <<<"$measured")
[ "$(( now + failed ))" -eq "$never" ] || fail "never timed without --measure ($never) != measured ($now) + failed ($failed)"
grep -q "measuring never-timed picks on" "$work/eval_measure.err" || fail "the device measured on is not said"
# The training data as JSON lines: one line per config, with find times and samples.
"$tuna" --data-dir "$data" heuristics dump --session_id "$session" -o "$work/samples.jsonl" >"$work/dump.txt" ||
  fail "heuristics dump"
grep -q "^dumped 6 configs (6 with a verified find result)" "$work/dump.txt" || { cat "$work/dump.txt"; fail "dump count"; }
[ "$(wc -l <"$work/samples.jsonl")" -eq 6 ] || fail "dump lines"
grep -q '"TunaCpuGemmConv": \[\["[0-9]' "$work/samples.jsonl" || { head -c 600 "$work/samples.jsonl"; fail "no samples in the dump"; }
# Models trained on everything leave nothing to evaluate: a clear error, exit 2.
"$tuna" --data-dir "$data" heuristics train --session_id "$session" -o "$work/all" --holdout 0 >/dev/null ||
  fail "train --holdout 0"
rc=0
"$tuna" --data-dir "$data" heuristics eval --session_id "$session" --model "$work/all" 2>"$work/eval.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "was trained on" "$work/eval.err" || fail "eval without held-out configs: rc $rc"

"$tuna" --data-dir "$data" export --session_id "$session" -o "$work/exp" --heuristics >"$work/export.txt" ||
  fail "export --heuristics"
for f in "$work"/exp/*.tn.model "$work"/exp/*_TunaCpuGemmConv.ktn.model "$work"/exp/*_metadata.tn.json \
  "$work"/exp/*.CPU.fdb.txt; do
  [ -s "$f" ] || fail "export did not write $f"
done

run_driver() {  # system-db-dir, then driver flags
  local sys=$1; shift
  MIOPEN_SYSTEM_DB_PATH="$sys" MIOPEN_USER_DB_PATH="$work/user" MIOPEN_CUSTOM_CACHE_DIR="$work/user/cache" \
    "$tuna" driver --backend cpu "$@" -S 0 -V 1 2>>"$work/driver.err"
}
missing=(conv -n 2 -c 12 -H 10 -W 10 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1)
key=$("$tuna" problem parse "${missing[@]}" | sed -n 's/^ *find-db key: *//p')
[ -n "$key" ] || fail "no find-db key of the missing problem"
grep -q "^$key=" "$work"/exp/*.fdb.txt && fail "the missing problem is in the find db"
got=$(run_driver "$work/exp" "${missing[@]}") || fail "driver on the missing problem"
echo "$got"
grep -q "find-db miss: solver from heuristics model" <<<"$got" || fail "solver not from the heuristics model"
grep -q "Verifies OK" <<<"$got" || fail "heuristics choice did not verify"
# The tunable solver named (-S NAME) on the same missing problem runs predicted params.
got=$(MIOPEN_SYSTEM_DB_PATH="$work/exp" MIOPEN_USER_DB_PATH="$work/user" "$tuna" driver --backend cpu \
  "${missing[@]}" -S TunaCpuGemmConv -V 1 2>>"$work/driver.err") || fail "driver -S TunaCpuGemmConv"
echo "$got"
grep -q "params '[0-9,]*' from heuristics model" <<<"$got" || fail "params not predicted"
grep -q "Verifies OK" <<<"$got" || fail "predicted params did not verify"

mkdir -p "$work/empty"
got=$(run_driver "$work/empty" "${missing[@]}") || fail "driver without models"
grep -q "solver from fallback (no heuristics model" <<<"$got" || fail "no-model fallback not reported: $got"
grep -q "Verifies OK" <<<"$got" || fail "fallback choice did not verify"

got=$(run_driver "$work/exp" conv -n 2 -c 12 -H 10 -W 10 -k 8 -y 3 -x 3 -p 1 -q 1 -F 2) || fail "driver backward"
grep -q "solver from fallback (heuristics model not used: direction" <<<"$got" || fail "out of range not reported: $got"

got=$(run_driver "$work/exp" conv -n 1 -c 4 -H 6 -W 6 -k 8 -y 3 -x 3 -p 1 -q 1 -F 1) || fail "driver tuned problem"
grep -q "solver from system db" <<<"$got" || fail "a tuned problem must come from the find db: $got"
# 5. The search warm-starts from the predictor. The missing problem, in process first:
ToLine() { echo "./bin/MIOpenDriver ${missing[*]} -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -t 1"; }
ToLine >"$work/warm.txt"
"$tuna" tune --no-db -f "$work/warm.txt" --backend cpu --budget 12 --heuristics-model "$work/exp" \
  --json "$work/warm.json" >"$work/warm.txt.out" 2>"$work/warm.err" || { cat "$work/warm.err"; fail "tune --no-db --heuristics-model"; }
cat "$work/warm.txt.out"
grep -q "TunaCpuGemmConv .*predicted-seeds 8" "$work/warm.txt.out" || fail "no predicted seeds in the tune output"
grep -q '"name": "TunaCpuGemmConv", .*"predicted_seeded": 8, "predictor_note": ""' "$work/warm.json" ||
  fail "no predicted_seeded in the JSON"
grep -q "search warm start from heuristics models .*predictors for TunaCpuGemmConv" "$work/warm.err" ||
  fail "the models loaded are not logged"
# Backward: outside the models' range; the search runs without them and says why.
"$tuna" tune --no-db --driver "conv -n 2 -c 12 -H 10 -W 10 -k 8 -y 3 -x 3 -p 1 -q 1 -F 2" --backend cpu --budget 4 --heuristics-model "$work/all" \
  >"$work/warm_bwd.out" 2>/dev/null || fail "tune backward with models"
grep -q "predictor not used: direction" "$work/warm_bwd.out" || { cat "$work/warm_bwd.out"; fail "out of range not said"; }
# Through the pipeline (a new session of the same database): the executor logs each perf job's seeds.
"$tuna" --data-dir "$data" tune -f "$work/warm.txt" -o "$work/warm_out" --budget 24 --backend cpu \
  --heuristics-model "$work/all" >"$work/warm_pipe.out" 2>"$work/warm_pipe.err" ||
  { cat "$work/warm_pipe.out" "$work/warm_pipe.err"; fail "tune -f --heuristics-model"; }
grep -Eq "perf, config [0-9]+, TunaCpuGemmConv\): [1-9][0-9]* predicted config\(s\) seeded from the heuristics model$" \
  "$work/warm_out/tune.log" || { grep -i "predict\|warm" "$work/warm_out/tune.log"; fail "the pipeline did not seed predicted configs"; }
rc=0
"$tuna" tune --no-db -f "$work/warm.txt" --backend cpu --heuristics-model "$work/empty" 2>"$work/warm_bad.err" || rc=$?
[ "$rc" -eq 2 ] && grep -q "holds no heuristics models" "$work/warm_bad.err" || { cat "$work/warm_bad.err"; fail "a dir without models: rc $rc"; }
echo "PASS"
