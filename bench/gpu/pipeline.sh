#!/usr/bin/env bash
# One call on a GPU host, from the bundle: the distributed pipeline and the runtime on a real GPU.
#   bench/gpu/pipeline.sh BUNDLE_DIR OUT_DIR [BUDGET]
# 1. `tuna tune -f` on the ResNet-50 forward FP32 configs (embedded MariaDB, coordinator, a
#    worker whose compile pool builds on the CPU while its executor evaluates on the GPU, export),
#    with nvidia-smi sampling GPU utilisation every 100 ms: the busy fraction while jobs run;
# 2. `tuna driver` on three layers with MIOPEN_SYSTEM_DB_PATH at the export vs an empty db.
set -uo pipefail
bundle=$1 out=$2 budget=${3:-8}
tuna="$bundle/bin/tuna"
mkdir -p "$out"
work=$(mktemp -d)

nvidia-smi --query-gpu=timestamp,utilization.gpu --format=csv,noheader,nounits -lms 100 \
  >"$out/gpu_util.csv" 2>/dev/null &
smi=$!
start=$(date +%s.%N)
"$tuna" --data-dir "$work/db" tune -f examples/resnet50_n32_fwd.txt -o "$out/db" --backend cuda \
  --strategy random --budget "$budget" --workers 1 --max-minutes 6 >"$out/pipeline.txt" 2>"$out/pipeline.err"
rc=$?; echo "pipeline rc=$rc in $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s"
kill "$smi" 2>/dev/null
tail -n 30 "$out/pipeline.txt"
"$tuna" --data-dir "$work/db" status --json >"$out/status.json" 2>/dev/null
"$tuna" --data-dir "$work/db" db stop >/dev/null 2>&1
# Busy fraction over the window between the first and the last sample with a kernel running.
awk -F', ' '{u[NR]=$2} END {f=0; l=0; for (i=1;i<=NR;i++) if (u[i]>0) {if(!f)f=i; l=i}
  n=0; s=0; busy=0; for (i=f;i<=l;i++) {n++; s+=u[i]; if (u[i]>0) busy++}
  if (n) printf "GPU utilisation over %d samples (%.1f s): mean %.1f %%, samples with a kernel running %.1f %%\n", n, n/10, s/n, 100*busy/n}' \
  "$out/gpu_util.csv" | tee "$out/gpu_busy.txt"

mkdir -p "$work/empty"
for layer in "-n 32 -c 64 -H 56 -W 56 -k 64 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1" \
             "-n 32 -c 256 -H 56 -W 56 -k 64 -y 1 -x 1 -p 0 -q 0 -u 1 -v 1" \
             "-n 32 -c 256 -H 14 -W 14 -k 256 -y 3 -x 3 -p 1 -q 1 -u 1 -v 1"; do
  for db in "$out/db" "$work/empty"; do
    echo "== driver conv $layer -F 1, system db $(basename "$db")"
    MIOPEN_SYSTEM_DB_PATH="$db" MIOPEN_USER_DB_PATH="$work/user-$(basename "$db")" \
      "$tuna" driver conv $layer -l 1 -j 1 -m conv -g 1 -F 1 -V 1 -t 1 -i 20 2>&1 |
      grep -E '^(solver|Kernel time|Verifies|kernels)'
  done
done
