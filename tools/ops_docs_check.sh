#!/usr/bin/env bash
# Runs every ```sh block of docs/OPERATIONS.md, in order, in one bash session, against a
# throwaway embedded MariaDB, with the doc's variables (TUNA_DB, TUNA_DB_OPTION_FILE, TUNA_ETC,
# TUNA_LISTEN, TUNA_METRICS) pointing at temporary paths and free ports. ```shell blocks (real
# hosts: systemd, Slurm, GPUs) are skipped. Exits non-zero at the first failing command and
# names the block.
# Usage: tools/ops_docs_check.sh [TUNA_BINARY]   (default bazel-bin/cli/tuna)
# Needs: mariadbd, mariadb, mysqldump, curl, openssl.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tuna_bin=$(realpath "${1:-$repo/bazel-bin/cli/tuna}")
doc=$repo/docs/OPERATIONS.md
[ -x "$tuna_bin" ] || { echo "ops_docs_check: no tuna binary at $tuna_bin (bazel build //cli:tuna)"; exit 2; }
for tool in mariadbd mariadb mysqldump curl openssl; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] ||
    { echo "ops_docs_check: $tool is missing (tools/install_deps.sh)"; exit 2; }
done

work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/ops_docs.XXXXXX")
data_dir=$work/db
cleanup() {
  local rc=$?
  jobs -p | xargs -r kill 2>/dev/null || true
  "$tuna_bin" --data-dir "$data_dir" db stop >/dev/null 2>&1 || true
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT

free_port() {  # a loopback port nobody listens on
  local p
  for _ in $(seq 200); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return; fi
  done
  return 1
}

# The environment the doc's commands run in.
mkdir -p "$work/bin" "$work/etc"
ln -s "$tuna_bin" "$work/bin/tuna"
ln -s "$repo/examples" "$work/examples"
ln -s "$repo/deploy" "$work/deploy"
"$tuna_bin" --log-level warn --data-dir "$data_dir" db start >/dev/null
cnf=$data_dir/tuna-client.cnf
port=$(sed -n 's/^port=//p' "$cnf")
export PATH="$work/bin:/usr/sbin:$PATH"
export TUNA_DB="mysql://tuna@127.0.0.1:$port/tuna"
export TUNA_DB_OPTION_FILE=$cnf
export TUNA_ETC=$work/etc
export TUNA_LISTEN="127.0.0.1:$(free_port)"
export TUNA_METRICS="127.0.0.1:$(free_port)"

# Extract the ```sh blocks into one script; each block announces itself.
script=$work/doc_commands.sh
awk -v doc="$doc" '
  /^```sh[[:space:]]*$/ { inblock = 1; n++; start = NR + 1
                          printf "echo \"== block %d (%s line %d)\"\nblock=%d; block_line=%d\n", n, doc, start, n, start; next }
  /^```/ && inblock     { inblock = 0; next }
  inblock               { print }
  END                   { if (n == 0) exit 1 }
' "$doc" > "$script" || { echo "ops_docs_check: no \`\`\`sh blocks in $doc"; exit 1; }
blocks=$(grep -c '^echo "== block' "$script")

cd "$work"
# ERR trap: say which block failed (set -e then stops the script).
# EXIT trap: background processes a failed block left (a coordinator) do not outlive it.
if bash -euo pipefail -c 'trap '\''echo "ops_docs_check: FAILED in block $block (docs line >= $block_line): $BASH_COMMAND" >&2'\'' ERR; trap '\''jobs -p | xargs -r kill 2>/dev/null'\'' EXIT; source "$0"' "$script"; then
  echo "ops_docs_check: all $blocks blocks of docs/OPERATIONS.md ran"
else
  echo "ops_docs_check: FAILED"
  exit 1
fi
