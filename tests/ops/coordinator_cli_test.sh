#!/usr/bin/env bash
# `tuna coordinator` refuses unsafe setups before it touches a database: a non-loopback address
# without a token, a token file readable by others, half a TLS pair.
set -uo pipefail
tuna="$TEST_SRCDIR/$TEST_WORKSPACE/cli/tuna"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/cli.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
expect_refusal() {  # MESSAGE ARGS...: exit status 1 and MESSAGE on stderr
  local want=$1; shift
  local err rc=0
  err=$("$tuna" --data-dir "$work/never-started" coordinator "$@" 2>&1 >/dev/null) || rc=$?
  if [ "$rc" -eq 1 ] && [[ "$err" == *"$want"* ]]; then
    echo "ok: $* -> $want"
  else
    echo "FAIL: $* -> rc $rc: $err"; failed=1
  fi
}
expect_refusal "refusing to listen on non-loopback address 0.0.0.0:50051 without a token" \
  --listen 0.0.0.0:50051
echo secret > "$work/token"
chmod 644 "$work/token"
expect_refusal "accessible by group/others" --listen 0.0.0.0:50051 --token-file "$work/token"
chmod 600 "$work/token"
expect_refusal "--tls-cert and --tls-key go together" --listen 127.0.0.1:0 --tls-cert "$work/token"
expect_refusal "is not a PEM file" --listen 127.0.0.1:0 --tls-cert "$work/token" --tls-key "$work/token"
# None of these may have started the embedded database.
if [ -e "$work/never-started" ]; then echo "FAIL: a refused start created a data dir"; failed=1; fi
exit $failed
