#!/usr/bin/env bash
# Renders an HTML file (e.g. `tuna report -o report.html`) in Debian's headless Chromium and
# writes a PNG screenshot of it.
#
#   tools/report_screenshot.sh REPORT.html OUT.png [WIDTH HEIGHT]   (default 1100 x 2200)
#
# Chromium runs offline and without a profile: a fresh --user-data-dir under a temp dir that is
# removed afterwards, no network, no sync, no component updates, no GPU. The page must render
# without anything from the network (tuna's reports are self-contained).
# Exit codes: 0 written; 1 Chromium failed or wrote nothing; 2 usage; 3 no Chromium installed
# (`apt-get install chromium`; CHROMIUM=/path overrides the binary).
set -euo pipefail

if [[ $# -lt 2 || $# -gt 4 ]]; then
  echo "usage: $0 REPORT.html OUT.png [WIDTH HEIGHT]" >&2
  exit 2
fi
html=$1
png=$2
width=${3:-1100}
height=${4:-2200}
if [[ ! -f "$html" ]]; then
  echo "$0: no file $html" >&2
  exit 2
fi
browser=${CHROMIUM:-}
if [[ -n "$browser" && ! -x "$browser" ]]; then
  echo "$0: CHROMIUM=$browser is not an executable" >&2
  exit 3
fi
if [[ -z "$browser" ]]; then
  for b in chromium chromium-browser; do
    if command -v "$b" > /dev/null 2>&1; then
      browser=$(command -v "$b")
      break
    fi
  done
fi
if [[ -z "$browser" ]]; then
  echo "$0: chromium is not installed (apt-get install chromium)" >&2
  exit 3
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tuna-screenshot.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
abs_html=$(cd "$(dirname "$html")" && pwd)/$(basename "$html")
out_dir=$(cd "$(dirname "$png")" && pwd)
abs_png=$out_dir/$(basename "$png")
rm -f "$abs_png"

# HOME inside the temp dir too: Chromium writes crash and font caches there.
HOME="$tmp" timeout 120 "$browser" --headless --no-sandbox --disable-gpu \
  --disable-background-networking --disable-component-update --disable-sync --no-first-run \
  --disable-dev-shm-usage --hide-scrollbars --user-data-dir="$tmp/profile" \
  --screenshot="$abs_png" --window-size="$width,$height" "file://$abs_html" \
  > "$tmp/chromium.log" 2>&1 || {
  echo "$0: chromium failed:" >&2
  tail -20 "$tmp/chromium.log" >&2
  exit 1
}
if [[ ! -s "$abs_png" ]]; then
  echo "$0: chromium wrote no screenshot:" >&2
  tail -20 "$tmp/chromium.log" >&2
  exit 1
fi
echo "$abs_png"
