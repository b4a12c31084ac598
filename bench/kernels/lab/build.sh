#!/usr/bin/env bash
# Builds the kernel lab's cubins (sm_90a, nvcc from /usr/local/cuda*) and their manifest.
# usage: bench/kernels/lab/build.sh OUT_DIR DTYPE(1 fp16|2 bf16) VARIANT...
#   VARIANT = family:TB_M,TB_N,WG_M,STAGES[,SPLIT_K]  with family hopper (hopper_fwd.cu) or tma
#             (hopper_tma_fwd.cu, forward, PHASED=0); e.g. tma:128,256,2,4
# Then on the GPU machine: python3 bench/kernels/lab/hopper_lab.py OUT_DIR/manifest.json FILE
set -euo pipefail
out=$1; dtype=$2; shift 2
nvcc=$(ls -d /usr/local/cuda*/bin/nvcc | sort | tail -1)
root=$(cd "$(dirname "$0")/../../.." && pwd)
mkdir -p "$out"
entries=()
build() {  # name source kernel defines...
  local name=$1 src=$2 kernel=$3; shift 3
  local file=${name//[:,]/_}.cubin
  "$nvcc" -std=c++17 -gencode=arch=compute_90a,code=sm_90a -cubin -o "$out/$file" -I"$root/kernels" \
    -DTUNA_BACKEND_CUDA -DTUNA_DTYPE="$dtype" "$@" "$root/kernels/conv/$src" 2>"$out/$file.log" || {
      cat "$out/$file.log"; exit 1; }
  echo "$file"
}
for v in "$@"; do
  fam=${v%%:*}; IFS=, read -r tbm tbn wgm st sk <<<"${v#*:}"; sk=${sk:-1}
  defs=(-DTB_M=$tbm -DTB_N=$tbn -DWG_M=$wgm -DSTAGES=$st)
  case $fam in
    hopper) src=hopper_fwd.cu; kernel=tuna_hopper_fwd; defs+=(-DSPLIT_K=$sk) ;;
    tma) src=hopper_tma_fwd.cu; kernel=tuna_hopper_tma_fwd; defs+=(-DPHASED=0) ;;
    *) echo "unknown family $fam" >&2; exit 2 ;;
  esac
  file=$(build "$v" $src $kernel "${defs[@]}") &
  entries+=("{\"name\": \"$v\", \"cubin\": \"${v//[:,]/_}.cubin\", \"kernel\": \"$kernel\", \"TB_M\": $tbm, \"TB_N\": $tbn, \"WG_M\": $wgm, \"STAGES\": $st, \"SPLIT_K\": $sk}")
  while (( $(jobs -r | wc -l) >= 2 )); do wait -n; done
done
wait
(IFS=,; echo "[${entries[*]}]") | python3 -m json.tool > "$out/manifest.json"
echo "built ${#entries[@]} variants into $out"
