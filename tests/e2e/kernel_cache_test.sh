#!/usr/bin/env bash
# The disk kernel cache across `tuna tune -f` runs on the CPU backend (docs/OPERATIONS.md,
# "Kernel cache"), with the embedded MariaDB of one --data-dir:
# 1. the first run builds its kernels and leaves them in DATA_DIR/kernel-cache (mode 700);
# 2. a second run of the same file (--new-session) builds nothing: every kernel of the compile
#    steps comes from the disk cache, and the executor makes no local build;
# 3. with --no-kernel-cache the same run builds again (so 2 is the disk cache's doing), and its
#    executors take --no-specialize;
# 4. a cache directory that group or others can write is refused, naming it.
# The random strategy with a fixed seed proposes the same candidates in every run.
set -euo pipefail
tuna="$TEST_SRCDIR/$TEST_WORKSPACE/cli/tuna"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/kcache.XXXXXX")
data="$work/db"
trap '"$tuna" --data-dir "$data" db stop >/dev/null 2>&1 || true' EXIT
fail() { echo "FAIL: $*"; exit 1; }

fwd="./bin/MIOpenDriver conv -n 2 -c 16 -H 12 -W 12 -k 16 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 1 -t 1"
bwd="./bin/MIOpenDriver conv -n 2 -c 8 -H 10 -W 10 -k 16 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1 -l 1 -j 1 -m conv -g 1 -F 2 -t 1"
printf '# two small problems\n%s\n%s\n' "$fwd" "$bwd" >"$work/small.txt"

tune() {  # output dir, then extra flags
  local out=$1; shift
  "$tuna" --data-dir "$data" tune -f "$work/small.txt" -o "$out" --backend cpu \
    --strategy random --budget 3 --seed 7 "$@" >"$out.txt" 2>"$out.err" ||
    { cat "$out.txt" "$out.err"; fail "tune -o $out $*"; }
}
# Sums of "(B built, D from the disk cache)" over the compile steps of a log: "B D".
compile_counts() {
  sed -n 's/.*compiled job .* kernels (\([0-9]*\) built, \([0-9]*\) from the disk cache).*/\1 \2/p' "$1" |
    awk '{b += $1; d += $2; n++} END {if (n == 0) print "none"; else print b, d}'
}
# The largest "N local builds" of the executors' job lines (their counts are cumulative).
executor_builds() {
  sed -n 's/.*executor: job .* done: .*(kernel cache: [0-9]* hits, [0-9]* from disk, \([0-9]*\) local builds).*/\1/p' "$1" |
    awk 'BEGIN {m = -1} {if ($1 > m) m = $1} END {print m}'
}

tune "$work/out1"
cache="$data/kernel-cache"
[ -d "$cache" ] || fail "no kernel cache at $cache"
[ "$(stat -c %a "$cache")" = 700 ] || fail "the kernel cache is not private: $(stat -c %a "$cache")"
files=$(find "$cache" -type f | wc -l)
[ "$files" -gt 0 ] || fail "nothing stored in the kernel cache"
grep -q "executor pid .*, disk kernel cache $cache" "$work/out1/tune.log" ||
  fail "the executor was not given the kernel cache"
read -r built1 disk1 <<<"$(compile_counts "$work/out1/tune.log")"
echo "first run: $built1 kernels built, $disk1 from the disk cache, $files files cached"
[ "$built1" != none ] || fail "no compile step logged in the first run"
[ "$built1" -gt 0 ] || fail "the first run found a warm cache"

tune "$work/out2" --new-session
read -r built2 disk2 <<<"$(compile_counts "$work/out2/tune.log")"
ex2=$(executor_builds "$work/out2/tune.log")
echo "second run: $built2 built, $disk2 from the disk cache; executor local builds: $ex2"
[ "$built2" = 0 ] || fail "the second run compiled $built2 kernels"
[ "$disk2" -gt 0 ] || fail "the second run reported no disk cache hits"
[ "$ex2" = 0 ] || fail "the second run's executor made $ex2 local builds"
grep -q "resumed\|from the earlier run" "$work/out2.txt" && fail "--new-session resumed a session"
[ "$(find "$cache" -type f | wc -l)" -eq "$files" ] || fail "the second run stored new kernels"

# (--no-specialize rides along: the executor children must accept what the supervisor passes.)
tune "$work/out3" --new-session --no-kernel-cache --no-specialize
read -r built3 disk3 <<<"$(compile_counts "$work/out3/tune.log")"
echo "without the cache: $built3 built, $disk3 from the disk cache"
[ "$built3" -gt 0 ] || fail "--no-kernel-cache still found cached kernels"
[ "$disk3" = 0 ] || fail "--no-kernel-cache read the disk cache"
grep -q "disk kernel cache" "$work/out3/tune.log" && fail "--no-kernel-cache gave the executor a cache"
grep -q "executor crashed" "$work/out3/tune.log" && fail "an executor child refused its arguments (--no-specialize)"
grep -q "evaluated job" "$work/out3/tune.log" || fail "no job was evaluated with --no-specialize"
# A cache directory others can write is refused before anything runs, naming it.
shared="$work/shared-cache"
mkdir -p "$shared" && chmod 777 "$shared"
if "$tuna" --data-dir "$data" tune -f "$work/small.txt" -o "$work/out4" --backend cpu \
    --strategy random --budget 3 --kernel-cache "$shared" >"$work/out4.txt" 2>"$work/out4.err"; then
  fail "a group/world-writable kernel cache was accepted"
fi
grep -q "kernel cache: .*$shared.* must be owned by this user and not writable by group or others" \
  "$work/out4.err" || { cat "$work/out4.err"; fail "the refusal does not name the directory"; }
[ -z "$(ls -A "$shared")" ] || fail "something was written to the refused directory"
echo "PASS"
