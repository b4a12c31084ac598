#!/usr/bin/env bash
# Runs the commands of docs/OPERATIONS.md (tools/ops_docs_check.sh) with the freshly built tuna.
# The doc, the script and the example files come in as runfiles (//:docs, //:tools, //:examples),
# laid out as in the source tree.
set -euo pipefail
root="$TEST_SRCDIR/$TEST_WORKSPACE"
exec bash "$root/tools/ops_docs_check.sh" "$root/cli/tuna"
