#!/bin/bash
# device_run.sh OUT STEP...: the kernels bench and its PyTorch cross-check in one device call,
# from a bundle made by bundle.sh (run from anywhere). Steps (each bounded by its own timeout,
# each independent of the others' failure):
#   sanity                 cuDNN best on the first problem only (stops the call if it fails)
#   fp16[:SECS]            FP16 NHWC forward file: tuna + cuDNN best (heuristics A/B/FALLBACK only: the
#                          all-engines sweep builds runtime-compiled FP16 plans for up to 37 s a layer)
#                          + legacy, then torch, cross-check
#   fp32cudnn[:SECS]       FP32 file, all directions, cuDNN only (best + legacy), torch, cross-check
#   fp32[:SECS]            FP32 file, all directions, tuna + cuDNN, torch, cross-check
# Writes OUT/w/<name>.log, <name>.json (merged with torch_ms) and torch_<name>.{json,log}; the
# bench rewrites its JSON after every row, so a step cut short keeps what it timed.
set -u
top=$1; shift
out=$top/w; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv | tee "$out/gpu.txt"
torch_for() {  # name driver secs
  timeout "$3" python3 cudnn_best_torch.py "$2" "$out/torch_$1.json" > "$out/torch_$1.log" 2>&1 || echo "torch $1: exit $?"
  python3 crosscheck.py "$out/$1.raw.json" "$out/torch_$1.json" --out "$out/$1.json" 2>&1 | tee -a "$out/$1.log"
}
for step in "$@"; do
  name=${step%%:*}; secs=${step#*:}; [ "$secs" = "$step" ] && secs=300
  echo "=== $name ($secs s) $(date -u +%T)"
  case $name in
    sanity)
      timeout 60 ./run.sh --driver data/resnet50_n32.txt --no-tuna --max-problems 3 --json "$out/sanity.json" > "$out/sanity.log" 2>&1
      rc=$?; tail -8 "$out/sanity.log"
      grep -q '"cudnn_best_verified": true' "$out/sanity.json" 2>/dev/null || { echo "sanity failed (rc $rc)"; cat "$out/sanity.log" | head -40; exit 1; } ;;
    fp16)
      timeout "$secs" ./run.sh --driver data/resnet50_n32_fwd_fp16_nhwc.txt --configs 12 --other-configs 1 --cudnn-heuristics-only --json "$out/fp16_fwd.raw.json" > "$out/fp16_fwd.log" 2>&1 || echo "bench fp16: exit $?"
      tail -6 "$out/fp16_fwd.log"; torch_for fp16_fwd data/resnet50_n32_fwd_fp16_nhwc.txt 90 ;;
    fp32cudnn)
      timeout "$secs" ./run.sh --driver data/resnet50_n32.txt --no-tuna --json "$out/fp32_cudnn.raw.json" > "$out/fp32_cudnn.log" 2>&1 || echo "bench fp32cudnn: exit $?"
      tail -6 "$out/fp32_cudnn.log"; torch_for fp32_cudnn data/resnet50_n32.txt 120 ;;
    fp32)
      timeout "$secs" ./run.sh --driver data/resnet50_n32.txt --configs 6 --other-configs 1 --cpu-check-max 1 --json "$out/fp32_all.raw.json" > "$out/fp32_all.log" 2>&1 || echo "bench fp32: exit $?"
      tail -6 "$out/fp32_all.log"; torch_for fp32_all data/resnet50_n32.txt 120 ;;
  esac
done
for f in "$out"/*.raw.json; do [ -f "${f%.raw.json}.json" ] && rm -f "$f"; done
echo "=== done $(date -u +%T)"
