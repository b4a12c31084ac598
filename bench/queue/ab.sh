#!/bin/bash
# Interleaved A/B runs of queue_bench builds on this machine (each run starts its own MariaDB from
# the same server binaries): round 1 runs every binary once in the order given, then round 2, ...
# Prints one line per run (leases/s, CPU per lease, statements per lease); the full outputs stay
# in the printed folder. Compare ratios taken in one such session only (the machine's load moves).
#
#   bench/queue/ab.sh ROUNDS "BIN_A BIN_B ..." [queue_bench arguments]
#   e.g. bench/queue/ab.sh 8 "/tmp/base/queue_bench /tmp/new/queue_bench" 64 100000 10
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 ROUNDS \"BIN ...\" [queue_bench arguments]" >&2
  exit 2
fi
rounds=$1
read -r -a bins <<< "$2"
shift 2
out=$(mktemp -d /tmp/queue_ab.XXXXXX)
for i in $(seq 1 "$rounds"); do
  for k in "${!bins[@]}"; do
    f="$out/$k.$i.txt"
    "${bins[$k]}" "$@" > "$f" 2>&1 || echo "run $i of ${bins[$k]} exited $?" >&2
    echo "round $i bin $k ($(basename "$(dirname "${bins[$k]}")")): $(grep -E '^leases' "$f" | awk '{print $7}') leases/s;" \
         "$(grep '^cpu per' "$f" | sed 's/ (of which.*threads)//');" \
         "$(grep '^per lease' "$f" | awk '{print "executed", $4, "commit", $8, "select", $10}'); load $(cut -d' ' -f1 /proc/loadavg)"
  done
done
echo "outputs: $out"
