#!/usr/bin/env bash
# Builds a relocatable bundle of tuna for hosts with nothing installed (GPU workers):
#   dist/tuna/bin/tuna            launcher: sets LD_LIBRARY_PATH, runs libexec/tuna
#   dist/tuna/bin/search_bench    the same for bench/search (search tables on a GPU host)
#   dist/tuna/libexec/{tuna,mariadbd,search_bench}
#   dist/tuna/lib/                the shared libraries they link (not glibc's, not libstdc++/libgcc_s:
#                                 the target's own are as new or newer)
#   dist/tuna/share/mariadb/      what `mariadbd --bootstrap` and the server need
# Usage: tools/bundle.sh [--tar] [OUT_DIR]   (default dist/tuna)
#   --tar  also writes OUT_DIR.tar.gz, one file to copy to hosts (tar -xzf it anywhere)
set -euo pipefail
cd "$(dirname "$0")/.."
tarball=0
if [ "${1:-}" = "--tar" ]; then tarball=1; shift; fi
out=${1:-dist/tuna}

bazel build //cli:tuna //bench/search:search_bench >/dev/null
rm -rf "$out"
mkdir -p "$out/bin" "$out/libexec" "$out/lib" "$out/share/mariadb/english"

install -m 755 bazel-bin/cli/tuna "$out/libexec/tuna"
install -m 755 bazel-bin/bench/search/search_bench "$out/libexec/search_bench"
install -m 755 "$(command -v mariadbd || echo /usr/sbin/mariadbd)" "$out/libexec/mariadbd"
strip --strip-unneeded "$out/libexec/tuna" "$out/libexec/mariadbd" "$out/libexec/search_bench"

share=/usr/share/mysql
cp "$share/english/errmsg.sys" "$out/share/mariadb/english/"
cp -r "$share/charsets" "$out/share/mariadb/"
cp "$share/mysql_system_tables.sql" "$share/mysql_system_tables_data.sql" "$out/share/mariadb/"

# Libraries: everything ldd resolves except the C runtime the target provides itself.
skip='^(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libgcc_s|libstdc\+\+|libresolv|libutil)\.so'
ldd "$out/libexec/tuna" "$out/libexec/mariadbd" "$out/libexec/search_bench" | awk '/=> \// {print $3}' | sort -u |
  while read -r lib; do
    name=$(basename "$lib")
    if [[ "$name" =~ $skip ]]; then continue; fi
    cp -L "$lib" "$out/lib/$name"
  done
strip --strip-unneeded "$out"/lib/*.so* 2>/dev/null || true

for prog in tuna search_bench; do
  cat >"$out/bin/$prog" <<LAUNCH
#!/bin/sh
# Runs the bundled $prog with its own libraries; mariadbd inherits the same path.
here=\$(cd "\$(dirname "\$0")/.." && pwd)
LD_LIBRARY_PATH="\$here/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}" exec "\$here/libexec/$prog" "\$@"
LAUNCH
  chmod 755 "$out/bin/$prog"
done

echo "bundle: $out ($(du -sh "$out" | cut -f1), $(ls "$out/lib" | wc -l) libraries)"
if [ "$tarball" -eq 1 ]; then
  tar -C "$(dirname "$out")" -czf "$out.tar.gz" "$(basename "$out")"
  echo "bundle: $out.tar.gz ($(du -sh "$out.tar.gz" | cut -f1))"
fi
