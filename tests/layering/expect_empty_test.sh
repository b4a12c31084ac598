#!/usr/bin/env bash
# Passes when the query output named by $1 is empty; otherwise prints it (the offending path).
set -euo pipefail
if [ -s "$1" ]; then
  echo "expected no targets, the query found:" >&2
  cat "$1" >&2
  exit 1
fi
echo "ok: $1 is empty"
