#!/usr/bin/env bash
# `systemd-analyze verify` over deploy/systemd/*.service (the worker template as instances @0
# and @all). ExecStart's /opt/tuna/bin/tuna is replaced by a stub, since verify checks that the
# binary exists. A deliberately broken copy must be rejected (so this test can fail).
# Skips with a message when systemd-analyze is not installed (package `systemd`).
set -euo pipefail
if ! command -v systemd-analyze >/dev/null; then
  echo "SKIP: systemd-analyze is not installed (apt-get install systemd; tools/install_deps.sh)"
  exit 0
fi
root="${TEST_SRCDIR:-$(dirname "$0")/../..}/${TEST_WORKSPACE:-}"
[ -d "$root/deploy/systemd" ] || root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/units.XXXXXX")
trap 'rm -rf "$work"' EXIT
printf '#!/bin/sh\nexit 0\n' > "$work/tuna-stub"
chmod +x "$work/tuna-stub"
for u in "$root"/deploy/systemd/*.service; do
  sed "s#/opt/tuna/bin/tuna#$work/tuna-stub#g" "$u" > "$work/$(basename "$u")"
done
cp "$work/tuna-worker@.service" "$work/tuna-worker@0.service"
cp "$work/tuna-worker@.service" "$work/tuna-worker@all.service"

verify() {  # prints what verify says about our units; returns its status
  local out rc=0
  out=$(cd "$work" && systemd-analyze verify "$@" 2>&1) || rc=$?
  # Only lines about our units count (the host's own units may have their own warnings).
  echo "$out" | grep -E 'tuna-' || true
  return $rc
}

failed=0
for unit in tuna-coordinator.service tuna-worker@0.service tuna-worker@all.service; do
  if msgs=$(verify "./$unit") && [ -z "$msgs" ]; then
    echo "ok: $unit"
  else
    echo "FAIL: $unit"; echo "$msgs"; failed=1
  fi
done

# Negative control: a unit with an invalid setting must be reported.
sed -e 's/^Type=exec/Type=bogus/' -e 's#^ExecStart=.*#ExecStart=relative/tuna#' \
  "$work/tuna-coordinator.service" > "$work/tuna-broken.service"
if msgs=$(verify ./tuna-broken.service) && [ -z "$msgs" ]; then
  echo "FAIL: a broken unit passed verification"; failed=1
else
  echo "ok: a broken unit is rejected"
fi
exit $failed
