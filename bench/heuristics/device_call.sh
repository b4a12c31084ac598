#!/usr/bin/env bash
# Issue #20 acceptance, one device call (H100, <= 600 s wall). From the repo root, $OUT set:
#   bash bench/heuristics/device_call.sh
# Carried: dist/tuna.tar.gz (bench/heuristics/bundle.sh: tools/bundle.sh --tar dist/tuna +
# bin/heuristics_bench, opt build). Unpacks the bundle, runs bench/heuristics/run_gpu.sh (mixed set, 237 configs,
# tune stopped at TUNE_TIMEOUT, every later step cut to DEADLINE) under `timeout 570`, tars the
# run's directory without the database dir into $OUT/h20.tgz and prints the summary last.
# BACKEND (cuda) and TUNE_FLAGS (none) are for a CPU rehearsal; run_gpu.sh's variables pass through.
set -uo pipefail
: "${OUT:?set OUT}"
repo=$(pwd)
work=/tmp/h20work
rm -rf "$work" && mkdir -p "$work"
tar -xzf "$repo/dist/tuna.tar.gz" -C "$work" || { echo "cannot unpack dist/tuna.tar.gz"; exit 1; }
run="$work/h20"
mkdir -p "$run"
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv; nproc; git -C "$repo" log -1 --oneline 2>/dev/null; } \
  >"$run/host.txt" 2>&1
cat "$run/host.txt"
"$work/tuna/bin/tuna" --version >>"$run/host.txt" 2>&1
ls -la "$work/tuna/bin" >>"$run/host.txt"
# run_gpu.sh must end by itself before the outer timeout: DEADLINE counts from its start and keeps
# ~45 s of the 600 s for the unpack above and the tar below.
used=$SECONDS
TUNE_TIMEOUT=${TUNE_TIMEOUT:-400} TUNE_GRACE=${TUNE_GRACE:-45} DEADLINE=$(( 555 - used )) \
  timeout -k 5 570 bash "$repo/bench/heuristics/run_gpu.sh" "$work/tuna/bin/tuna" "$run" "${BACKEND:-cuda}" ${TUNE_FLAGS:-} \
  >"$work/h20.log" 2>&1
echo "run_gpu.sh rc=$? after $(( SECONDS - used )) s (call at ${SECONDS} s)" | tee -a "$work/h20.log"
"$work/tuna/bin/tuna" --data-dir "$run/db" db stop >/dev/null 2>&1 || true
tar -C "$work" --exclude=h20/db -czf "$OUT/h20.tgz" h20 h20.log
ls -la "$OUT/h20.tgz"
sed -n '/^== summary/,$p' "$work/h20.log"
