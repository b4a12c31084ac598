#!/usr/bin/env bash
# tune -> export -> driver, end to end on the CPU backend:
# 1. `tuna tune -f` on two small problems writes the perf db, find db and kernel db;
# 2. `tuna driver` with MIOPEN_SYSTEM_DB_PATH at that export picks the tuned solution ("from system
#    db"), loads its kernel from the exported .kdb (0 compilations) and verifies;
# 3. with an empty system db the choice comes from elsewhere, and the output still verifies;
# 4. a transposed line (-m trans) is tuned, exported and run as the convolution MIOpen runs it as,
#    under MIOpen's key for it;
# 5. the MIOPEN_ENABLE_LOGGING_CMD lines re-import (`tuna import`) to the same configs.
set -euo pipefail
tuna="$TEST_SRCDIR/$TEST_WORKSPACE/cli/tuna"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/e2e.XXXXXX")
data="$work/db"
trap '"$tuna" --data-dir "$data" db stop >/dev/null 2>&1 || true' EXIT
fail() { echo "FAIL: $*"; exit 1; }

fwd="./bin/MIOpenDriver conv -n 2 -c 16 -H 12 -W 12 -k 16 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1"
bwd="./bin/MIOpenDriver conv -n 2 -c 8 -H 10 -W 10 -k 16 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 2 -t 1"
trans="./bin/MIOpenDriver conv -n 2 -c 16 -H 6 -W 6 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 1 -Y 1 -X 1 -t 1"
printf '# three small problems\n%s\n%s\n%s\n' "$fwd" "$bwd" "$trans" >"$work/small.txt"

"$tuna" --data-dir "$data" tune -f "$work/small.txt" -o "$work/out" --budget 3 --backend cpu \
  >"$work/tune.txt" 2>"$work/tune.err" || { cat "$work/tune.txt" "$work/tune.err"; fail "tune"; }
# The details go to OUTPUT_DIR/tune.log (the executor children's lines too), not to stderr.
grep -q "executor pid .*: cpu device 0" "$work/out/tune.log" || fail "no executor lines in tune.log"
grep -q "\] job [0-9]* (perf, config" "$work/out/tune.log" || fail "no per-job accounts in tune.log"
if grep -q "\[info\]" "$work/tune.err"; then cat "$work/tune.err"; fail "info logs on stderr"; fi
cat "$work/tune.txt"
fdb=$(ls "$work"/out/*.CPU.fdb.txt) || fail "no find db written"
ls "$work"/out/*.db "$work"/out/*.kdb >/dev/null || fail "no perf db / kernel db written"
cat "$work/tune.txt" "$work/tune.err" | grep -q "1 transposed problem(s) run as their convolutions" || fail "transposed line not reported"
[ "$(wc -l <"$fdb")" -eq 3 ] || fail "find db should have one line per problem: $(cat "$fdb")"
best=$(head -n 1 "$fdb" | sed 's/^[^=]*=\([^:]*\):.*/\1/')
echo "fastest solver of the first find-db line: $best"

run_driver() {  # system-db-dir user-db-dir log-file, then driver flags
  local sys=$1 user=$2 log=$3; shift 3
  MIOPEN_SYSTEM_DB_PATH="$sys" MIOPEN_USER_DB_PATH="$user" MIOPEN_CUSTOM_CACHE_DIR="$user/cache" \
    MIOPEN_ENABLE_LOGGING_CMD=1 "$tuna" driver "$@" -V 1 -t 1 -i 5 2>>"$log"
}
args=(conv -n 2 -c 16 -H 12 -W 12 -k 16 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1)

tuned=$(run_driver "$work/out" "$work/user1" "$work/log.txt" "${args[@]}") || fail "driver with the tuned db"
echo "$tuned"
grep -q "from system db" <<<"$tuned" || fail "the tuned solution did not come from the system db"
grep -q "^Forward Convolution Verifies OK on CPU reference (" <<<"$tuned" || fail "tuned run did not verify"
grep -q "kernels: 0 compiled" <<<"$tuned" || fail "the exported kernel db was not used"

mkdir -p "$work/empty"
plain=$(run_driver "$work/empty" "$work/user2" "$work/log.txt" "${args[@]}") || fail "driver with an empty db"
echo "$plain"
grep -q "from system db" <<<"$plain" && fail "an empty system db cannot be the source"
grep -q "^Forward Convolution Verifies OK on CPU reference (" <<<"$plain" || fail "untuned run did not verify"
# MIOpenDriver's line, as scripts written for MIOpenDriver read it.
t_tuned=$(sed -n 's/^GPU Kernel Time Forward Conv. Elapsed: \([0-9.]*\) ms (average)$/\1/p' <<<"$tuned")
t_plain=$(sed -n 's/^GPU Kernel Time Forward Conv. Elapsed: \([0-9.]*\) ms (average)$/\1/p' <<<"$plain")
[[ -n "$t_tuned" && -n "$t_plain" ]] || fail "no MIOpenDriver 'GPU Kernel Time ... Elapsed' line"
echo "kernel time with the tuned db ${t_tuned} ms, with an empty db ${t_plain} ms (recorded, not asserted)"

run_driver "$work/out" "$work/user3" "$work/log.txt" \
  conv -n 2 -c 8 -H 10 -W 10 -k 16 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 2 >/dev/null ||
  fail "driver backward data"
targs=(conv -n 2 -c 16 -H 6 -W 6 -k 8 -y 3 -x 3 -p 1 -q 1 -u 2 -v 2 -l 1 -j 1 -m trans -g 1 -F 1 -Y 1 -X 1)
tr=$(run_driver "$work/out" "$work/user4" "$work/log.txt" "${targs[@]}") || fail "driver transposed"
echo "$tr"
grep -q "^runs as: .* -F 2 " <<<"$tr" || fail "the transposed forward did not run as a backward data"
grep -q "from system db" <<<"$tr" || fail "the transposed problem's tuned solution did not come from the system db"
grep -q "kernels: 0 compiled" <<<"$tr" || fail "the transposed problem's kernel was not in the kernel db"
grep -q "Verifies OK on CPU reference" <<<"$tr" || fail "transposed run did not verify"
grep 'Command \[' "$work/log.txt" >"$work/logged.txt" || fail "no LOGGING_CMD lines"
imported=$("$tuna" --data-dir "$data" import -t logged -f "$work/logged.txt" --json) || fail "re-import"
echo "$imported"
grep -Eq '"configs_new": *0' <<<"$imported" || fail "logged commands are not the tuned configs"
echo "PASS"
