#!/usr/bin/env bash
# The learned-heuristics acceptance run (issue #20) in one call on a GPU host:
#   bench/heuristics/run_gpu.sh TUNA_BINARY OUT_DIR [BACKEND] [extra `tuna tune` flags...]
# 1. generates the >= 200-config set (gen_configs.py: ResNet-50, Inception-like, MobileNet-like,
#    FP16 NHWC, batches 1/8/32/64, all directions);
# 2. tunes it with the default search (`tuna tune -f`, every candidate's time kept in eval_sample);
# 3. trains with 20 % of the configs held out and evaluates them (`tuna heuristics eval`: the
#    side-by-side table for docs/BENCHMARKS.md);
# 4. exports the dbs with --heuristics (models trained on every config) and runs the load /
#    predict bench on them;
# 5. runs `tuna driver -S 0` on a problem missing from the find db ("solver from heuristics model").
# Everything lands in OUT_DIR (commit OUT_DIR/export and the tables under bench/heuristics/data/).
# The bench binary is looked for beside this script, else beside TUNA_BINARY (bazel build -c opt
# //bench/heuristics:heuristics_bench, then copy it there).
set -uo pipefail
tuna=$1 out=$2 backend=${3:-cuda}
shift $(( $# >= 3 ? 3 : $# ))
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
data="$out/db"
step() { echo; echo "== $*"; }

step "generate"
python3 "$here/gen_configs.py" >"$out/configs.txt" || exit 1
step "tune (backend $backend, default search)"
"$tuna" --data-dir "$data" tune -f "$out/configs.txt" -o "$out/tuned" --backend "$backend" \
  --json "$out/tune.json" "$@" >"$out/tune.txt" 2>"$out/tune.err"
echo "rc=$?"; tail -n 3 "$out/tune.txt"
session=$(sed -n 's/^session \([0-9]*\) .*/\1/p' "$out/tune.txt" | head -n 1)
[ -n "$session" ] || { echo "no session id in $out/tune.txt"; exit 1; }
step "train (20 % of the configs held out) and evaluate"
"$tuna" --data-dir "$data" heuristics train --session_id "$session" -o "$out/held_out_models" --holdout 0.2 |
  tee "$out/train.txt"
"$tuna" --data-dir "$data" heuristics eval --session_id "$session" --model "$out/held_out_models" \
  2>"$out/eval_notes.txt" | tee "$out/eval.txt"
step "export with the heuristics (trained on every config)"
"$tuna" --data-dir "$data" export --session_id "$session" -o "$out/export" --heuristics | tee "$out/export.txt"
step "bench: model load and predict times"
base=$(sed -n 's/.*-> \(.*\)$/\1/p' "$out/export.txt" | head -n 1)
if [ -x "$here/heuristics_bench" ]; then bench="$here/heuristics_bench"; else bench="$(dirname "$tuna")/heuristics_bench"; fi
"$bench" --model "$out/export" --basename "$base" --json "$out/bench.json" | tee "$out/bench.txt"
step "driver: immediate mode on a problem missing from the find db"
MIOPEN_SYSTEM_DB_PATH="$out/export" MIOPEN_USER_DB_PATH="$out/user" "$tuna" driver --backend "$backend" \
  convfp16 -n 16 -c 256 -H 28 -W 28 -k 256 -y 3 -x 3 -p 1 -q 1 -F 1 -S 0 -V 1 -t 1 \
  --in_layout NHWC --fil_layout NHWC --out_layout NHWC | tee "$out/driver.txt"
grep -q "solver from heuristics model" "$out/driver.txt" && grep -q "Verifies OK" "$out/driver.txt" &&
  echo "driver: OK" || echo "driver: FAILED"
