#!/usr/bin/env bash
# Builds the carried bundle for bench/heuristics/device_call.sh: dist/tuna.tar.gz = tools/bundle.sh --tar dist/tuna
# plus bin/heuristics_bench (opt build, with a launcher like bin/tuna's; its libraries are a subset
# of tuna's, already in dist/tuna/lib).
set -euo pipefail
cd "$(dirname "$0")/../.."
bazel build -c opt //bench/heuristics:heuristics_bench
cp -f "$(bazel info -c opt bazel-bin)/bench/heuristics/heuristics_bench" /tmp/heuristics_bench.opt
tools/bundle.sh --tar dist/tuna
install -m 755 /tmp/heuristics_bench.opt dist/tuna/libexec/heuristics_bench
strip --strip-unneeded dist/tuna/libexec/heuristics_bench
missing=$(ldd dist/tuna/libexec/heuristics_bench | awk '/=> \// {print $1}' | while read -r l; do
  [ -e "dist/tuna/lib/$l" ] || case "$l" in libc.so*|libm.so*|libstdc++*|libgcc_s*|ld-linux*|libdl*|libpthread*|librt*) ;; *) echo "$l";; esac; done)
[ -z "$missing" ] || { echo "libraries of heuristics_bench not in the bundle: $missing"; exit 1; }
sed 's/libexec\/tuna/libexec\/heuristics_bench/; s/bundled tuna/bundled heuristics_bench/' dist/tuna/bin/tuna >dist/tuna/bin/heuristics_bench
chmod 755 dist/tuna/bin/heuristics_bench
tar -C dist -czf dist/tuna.tar.gz tuna
ls -la dist/tuna.tar.gz
