#!/usr/bin/env bash
# tools/report_screenshot.sh renders a real `tuna report` page (docs/report-example.html) in
# headless Chromium: a PNG of the requested size that is not blank. Skips (exit 0, says so) where
# Chromium is not installed: CI does not install it (about 100 MB of packages; see
# tools/install_deps.sh). Usage errors and a missing browser are checked everywhere.
set -uo pipefail
root="$TEST_SRCDIR/$TEST_WORKSPACE"
script="$root/tools/report_screenshot.sh"
html="$root/docs/report-example.html"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/screenshot.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
check() {  # WHAT COND...
  local what=$1; shift
  if "$@"; then echo "ok: $what"; else echo "FAIL: $what"; failed=1; fi
}

rc=0; bash "$script" > /dev/null 2>&1 || rc=$?
check "no arguments: exit 2" test "$rc" -eq 2
rc=0; bash "$script" "$work/missing.html" "$work/x.png" > /dev/null 2>&1 || rc=$?
check "missing page: exit 2" test "$rc" -eq 2
rc=0; CHROMIUM=/nonexistent/chromium bash "$script" "$html" "$work/x.png" > /dev/null 2>&1 || rc=$?
check "no browser: exit 3" test "$rc" -eq 3

if ! command -v chromium > /dev/null 2>&1 && ! command -v chromium-browser > /dev/null 2>&1; then
  echo "SKIPPED: chromium is not installed (apt-get install chromium); the rendering is not checked"
  exit "$failed"
fi

png="$work/report.png"
rc=0; bash "$script" "$html" "$png" 900 1300 > "$work/out.txt" 2>&1 || rc=$?
check "rendered: exit 0 ($(tail -3 "$work/out.txt"))" test "$rc" -eq 0
check "a PNG was written" test -s "$png"
if [ -s "$png" ]; then
  magic=$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')
  check "PNG signature ($magic)" test "$magic" = "89504e470d0a1a0a"
  # IHDR: width and height, big-endian, at bytes 16..23.
  width=$((16#$(od -An -tx1 -j16 -N4 "$png" | tr -d ' \n')))
  height=$((16#$(od -An -tx1 -j20 -N4 "$png" | tr -d ' \n')))
  check "size ${width}x${height} is the window's" test "$width" -eq 900 -a "$height" -eq 1300
  # A blank page compresses to a few KB; the report's charts, cards and table do not.
  bytes=$(stat -c %s "$png")
  check "not blank ($bytes bytes)" test "$bytes" -gt 40000
fi
exit "$failed"
