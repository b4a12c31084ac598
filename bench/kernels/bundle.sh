#!/bin/bash
# Packs //bench/kernels:kernels_bench into a relocatable folder (default out/kernels_bench):
# bin/ (stripped), lib/ (its shared libraries, minus libc/libm/libstdc++/libgcc_s/ld-linux, which
# the GPU host has newer), data/ and run.sh, which finds cuDNN in the python package
# nvidia.cudnn (or $TUNA_CUDNN_PATH) and runs the bench with the given arguments, and
# device_run.sh + crosscheck.py (+ cudnn_best_torch.py) for the PyTorch cross-check.
set -euo pipefail
dest=${1:-out/kernels_bench}
cd "$(dirname "$0")/../.."
bazel build //bench/kernels:kernels_bench >/dev/null
rm -rf "$dest" && mkdir -p "$dest/bin" "$dest/lib" "$dest/data"
cp bazel-bin/bench/kernels/kernels_bench "$dest/bin/" && chmod u+w "$dest/bin/kernels_bench" && strip "$dest/bin/kernels_bench"
ldd bazel-bin/bench/kernels/kernels_bench | awk '/=>/ {print $3}' |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux)[.-]' |
  while read -r lib; do cp -L "$lib" "$dest/lib/"; done
cp bench/kernels/data/*.txt "$dest/data/"
# The cross-check: crosscheck.py, device_run.sh, and PyTorch's cuDNN-best script from the shared
# tools folder beside the checkout (../shared/tools, or $TUNA_SHARED_TOOLS) when present.
cp bench/kernels/crosscheck.py bench/kernels/device_run.sh bench/kernels/cudnn_best_torch3d.py "$dest/"
tools=${TUNA_SHARED_TOOLS:-../shared/tools}
[ -f "$tools/cudnn_best_torch.py" ] && cp "$tools/cudnn_best_torch.py" "$dest/"
cat > "$dest/run.sh" <<'RUN'
#!/bin/bash
# run.sh [kernels_bench args...]: sets LD_LIBRARY_PATH (bundle libs, cuDNN and its python-package
# neighbours: cublas, nvrtc) and runs the bench from this folder.
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${TUNA_CUDNN_PATH:-}" ]; then
  # nvidia.cudnn is a namespace package (its __file__ is None): take its __path__. Without this
  # the loader found the system's /lib/x86_64-linux-gnu/libcudnn.so.9 (9.14) on the H100 host
  # while torch used its venv's cuDNN (9.19).
  TUNA_CUDNN_PATH=$(python3 -c "import nvidia.cudnn as m, os; print(os.path.join(list(m.__path__)[0], 'lib'))" 2>/dev/null || true)
fi
export TUNA_CUDNN_PATH
nv=$(dirname "$TUNA_CUDNN_PATH" 2>/dev/null)/..
extra=""
for d in "$nv"/*/lib; do [ -d "$d" ] && extra="$extra:$d"; done
export LD_LIBRARY_PATH="$here/lib:$TUNA_CUDNN_PATH$extra:${LD_LIBRARY_PATH:-}"
cd "$here"
exec "$here/bin/kernels_bench" "$@"
RUN
chmod +x "$dest/run.sh"
du -sh "$dest"
