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
#   fp16cudnn[:SECS]       FP16 file, cuDNN only (heuristics A/B/FALLBACK), torch, cross-check
#   hopper16[:SECS]        FP16 NHWC forward file, tuna's TunaHopperFwd, TunaHopperTmaFwd and TunaHopperHaloFwd over their valid spaces
#                          (wgmma, sm_90), TunaSmallCTcFwd (the stem) + cuDNN best (heuristics A/B/FALLBACK), torch, cross-check
#   hopperbf16[:SECS]      the same file as BF16 (convbfp16)
#   bwd16[:SECS]           FP16 NHWC backward-data file: TunaHopperTmaBwd and TunaIgemmBwd (strided layers)
#                          + cuDNN best (heuristics A/B/FALLBACK), torch, cross-check
#   fwd32[:SECS]           FP32 NCHW forward file: TunaFastSimtFwd, TunaWinogradF2x3, TunaWinogradF4x3 (their spaces),
#                          TunaIgemmFwd + cuDNN best (every engine), torch, cross-check
#   bwd32[:SECS]           FP32 NCHW backward-data file: TunaFastSimtBwd, TunaWinogradF2x3, TunaWinogradF4x3 (their
#                          spaces), TunaIgemmBwd, TunaThinBwd + cuDNN best (every engine), torch, cross-check
#   wrw32[:SECS]           FP32 NCHW backward-weights file: TunaFastSimtWrw, TunaWinogradWrw (48 configs each), TunaIgemmWrw
#                          + cuDNN best (every engine), torch, cross-check
#   wrw16[:SECS]           FP16 NHWC backward-weights file: TunaHopperTmaWrw, TunaHopperHaloWrw, TunaHopperWrw (CONFIGS each, 128) and TunaIgemmWrw
#                          + cuDNN best (heuristics A/B/FALLBACK), torch, cross-check
#   wrwbf16[:SECS]         the same file as BF16 (convbfp16)
#   x_NAME_{fwd,bwd,wrw}[:SECS]  data/NAME_{fwd,bwd,wrw}.txt (one direction) on the Hopper solvers of that (fwd: also TunaSmallCFwd)
#                          direction (CONFIGS each, default 64; SOLVERS=a,b overrides; fwd: also TunaSmallCTcFwd; mobilenet_dw* files: the
#                          depthwise solver; x_halo*_wrw: TunaHopperTmaWrw against TunaHopperHaloWrw; x_nchw16_*: FP16 NCHW, TunaHopperTma{Fwd,Bwd,Wrw} (1x1 layers as per-image GEMMs) and the *Nchw channels-last adapters against the solvers
#                          that read NCHW natively) + cuDNN best, torch, cross-check
#   x_r3d18_n8_fp16_{fwd,bwd,wrw}[:SECS] 3-D ResNet-18 FP16 NDHWC (data/r3d18_n8_fp16_*.txt): the 3-D candidates
#   x_r2plus1d18_n8_fp16_{fwd,bwd,wrw}[:SECS] R(2+1)D-18 FP16 NDHWC (data/r2plus1d18_n8_fp16_*.txt): its (2+1)D layers on the
#                          2-D solvers (flattened), the projections on the 3-D candidates and TunaIgemm
#   x_r2plus1d18_n8_fp32_{fwd,bwd,wrw}[:SECS] the same network in FP32 NCDHW: the FP32 SIMT / Winograd solvers
#                          flattened or through the *Ncdhw depth-as-batch solvers, the stride-2 1x1x1 projections through
#                          the *Strided candidates, against TunaIgemm (x_r2plus1d18_proj_n8_*: those projections alone)
#                          TunaHopperTma{Fwd,Bwd}3d against TunaIgemm{Fwd,Bwd} + cuDNN best (TunaHopperTmaBwd3d: stride-1 rows), cross-checked by this folder's
#                          cudnn_best_torch3d.py (the shared tool is 2-D only; the same method)
#   x_resnet50_n32_fp32_nhwc_{fwd,bwd,wrw}[:SECS] ResNet-50 FP32 NHWC: the *Nhwc candidates (SIMT / Winograd on NCHW
#                          copies) against TunaIgemm (and TunaDirectTiledFwd), the solvers FP32 NHWC had
#   torchcudnn             use the libcudnn.so.9 that torch maps for the steps after it
#   fixsizes[:SECS]        FP16 NHWC forward file on TunaHopperTmaFwd (CONFIGS, 16) (VARIANT=-D..: a third build): each
#                          winner also rebuilt with its sizes compiled in (the finishing step every step runs), both
#                          timed, the geomean cost of run-time sizes printed (issue #17's "< 3 %")
#   fromdb[:SECS]          --from-db data/fromdb (a perf db placed there), tuna rows + cuDNN best, torch on the rows' lines, cross-check
# PACK=1: the step files packed into OUT/w.tgz at the end (one file to bring back).
# BENCH_ARGS="...": more kernels_bench options for the x_* and wrw16/wrwbf16 steps (e.g. --print-screened,
# --candidates with SOLVERS naming a candidate).
# DATA=FILE (a driver file in the bundle) replaces the file of the fwd32, bwd32 and wrw32 steps;
# CONFIGS=N their configs per fast solver (36/36/48); SOLVERS=a,b their solvers. The Winograd
# layers alone: DATA=data/resnet50_n32_3x3s1_{fwd,bwd}_fp32.txt (the four 3x3 stride-1 layers).
# Writes OUT/w/<name>.log, <name>.json (merged with torch_ms) and torch_<name>.{json,log}; the
# bench rewrites its JSON after every row, so a step cut short keeps what it timed. A kernel that
# never finishes makes the bench print "HUNG: <solver> <params> ..." and exit with 4 after
# --hang-seconds (60; BENCH_ARGS can change it); the next steps run in processes of their own.
set -u
top=$1; shift
out=$top/w; mkdir -p "$out"
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,utilization.gpu --format=csv | tee "$out/gpu.txt"
torch_for() {  # name driver secs (3-D files: this folder's cudnn_best_torch3d.py, the same method)
  local script=cudnn_best_torch.py
  grep -q -- "--spatial_dim 3" "$2" && script=cudnn_best_torch3d.py
  timeout "$3" python3 "$script" "$2" "$out/torch_$1.json" > "$out/torch_$1.log" 2>&1 || echo "torch $1: exit $?"
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
    hopper16|hopperbf16)
      f=data/resnet50_n32_fwd_fp16_nhwc.txt; [ "$name" = hopperbf16 ] && f=data/resnet50_n32_fwd_bf16_nhwc.txt
      timeout "$secs" ./run.sh --driver "$f" --solvers TunaHopperFwd,TunaHopperTmaFwd,TunaHopperHaloFwd,TunaSmallCTcFwd --configs 128 --cpu-check-max 1 --cudnn-heuristics-only --json "$out/$name.raw.json" > "$out/$name.log" 2>&1 || echo "bench $name: exit $?"
      tail -6 "$out/$name.log"; torch_for "$name" "$f" 90 ;;
    bwd16)
      f=data/resnet50_n32_bwd_fp16_nhwc.txt
      timeout "$secs" ./run.sh --driver "$f" --solvers TunaHopperTmaBwd,TunaIgemmBwd --configs 128 --other-configs 4 --cpu-check-max 1 --cudnn-heuristics-only --json "$out/$name.raw.json" > "$out/$name.log" 2>&1 || echo "bench $name: exit $?"
      tail -6 "$out/$name.log"; torch_for "$name" "$f" 90 ;;
    x_*_fwd|x_*_bwd|x_*_wrw)  # data/<name without x_>.txt, a 16-bit file of one direction (NHWC; x_nchw*: NCHW)
      f=data/${name#x_}.txt
      extra=""
      case $name in
        x_halo*_wrw) sv=TunaHopperTmaWrw,TunaHopperHaloWrw ;;
        x_nchw*_fwd) sv=TunaHopperTmaFwd,TunaHopperTmaFwdNchw,TunaHopperHaloFwdNchw,TunaHopperFwdNchw,TunaFastTcFwdNchw,TunaSmallCTcFwd,TunaIgemmFwd,TunaDirectTiledFwd ;;
        x_nchw*_bwd) sv=TunaHopperTmaBwd,TunaHopperTmaBwdNchw,TunaIgemmBwd ;;
        x_nchw*_wrw) sv=TunaHopperTmaWrw,TunaHopperTmaWrwNchw,TunaHopperHaloWrwNchw,TunaHopperWrwNchw,TunaIgemmWrw ;;
        # FP32 NHWC: the SIMT / Winograd solvers through the channels-first adapter (*Nhwc candidates)
        x_*fp32_nhwc_fwd) sv=TunaFastSimtFwdNhwc,TunaWinogradF4x3Nhwc,TunaWinogradF2x3Nhwc,TunaSmallCFwd,TunaIgemmFwd,TunaDirectTiledFwd; extra="--candidates --no-legacy" ;;
        x_*fp32_nhwc_bwd) sv=TunaFastSimtBwdNhwc,TunaWinogradF4x3Nhwc,TunaWinogradF2x3Nhwc,TunaThinBwd,TunaIgemmBwd; extra="--candidates --no-legacy" ;;
        x_*fp32_nhwc_wrw) sv=TunaFastSimtWrwNhwc,TunaWinogradWrwNhwc,TunaIgemmWrw; extra="--candidates --no-legacy" ;;
        x_r3d*_fwd) sv=TunaHopperTmaFwd3d,TunaIgemmFwd; extra="--candidates --no-legacy" ;;  # 3-D (NDHWC)
        x_r3d*_bwd) sv=TunaHopperTmaBwd3d,TunaHopperTmaBwdStrided,TunaIgemmBwd; extra="--candidates --no-legacy" ;;
        x_r3d*_wrw) sv=TunaHopperTmaWrw3d,TunaIgemmWrw; extra="--candidates --no-legacy" ;;
        # R(2+1)D FP32 NCDHW: 3x1x1 / 1x1x1 flattened, 1x3x3 on the *Ncdhw depth-as-batch candidates, TunaIgemm the baseline
        x_r2plus1d*fp32*_fwd) sv=TunaFastSimtFwd,TunaWinogradF4x3,TunaWinogradF2x3,TunaFastSimtFwdNcdhw,TunaWinogradF4x3Ncdhw,TunaWinogradF2x3Ncdhw,TunaFastSimtFwdStrided,TunaIgemmFwd; extra="--candidates --no-legacy" ;;
        x_r2plus1d*fp32*_bwd) sv=TunaFastSimtBwd,TunaWinogradF4x3,TunaWinogradF2x3,TunaFastSimtBwdNcdhw,TunaWinogradF4x3Ncdhw,TunaWinogradF2x3Ncdhw,TunaFastSimtBwdStrided,TunaIgemmBwd; extra="--candidates --no-legacy" ;;
        x_r2plus1d*fp32*_wrw) sv=TunaFastSimtWrw,TunaWinogradWrw,TunaFastSimtWrwNcdhw,TunaWinogradWrwNcdhw,TunaFastSimtWrwStrided,TunaIgemmWrw; extra="--candidates --no-legacy" ;;
        # R(2+1)D: 1x3x3 / 3x1x1 layers flattened to 2-D problems (problem/flatten.h), the 1x1x1 stride-2 projections 3-D
        x_r2plus1d*_fwd) sv=TunaHopperTmaFwd,TunaHopperHaloFwd,TunaHopperFwd,TunaFastTcFwd,TunaSmallCTcFwd,TunaSmallCFwd,TunaHopperTmaFwd3d,TunaHopperTmaFwdPad,TunaIgemmFwd; extra="--candidates --no-legacy" ;;
        x_r2plus1d*_bwd) sv=TunaHopperTmaBwd,TunaHopperTmaBwd3d,TunaHopperTmaBwdPad,TunaHopperTmaBwdStrided,TunaIgemmBwd; extra="--candidates --no-legacy" ;;
        x_r2plus1d*_wrw) sv=TunaHopperTmaWrw,TunaHopperHaloWrw,TunaHopperWrw,TunaHopperTmaWrw3d,TunaHopperTmaWrwPad,TunaIgemmWrw; extra="--candidates --no-legacy" ;;
        x_mobilenet_dw*_fwd) sv=TunaDepthwiseFwd ;;
        x_mobilenet_dw*_bwd) sv=TunaDepthwiseBwd ;;
        x_mobilenet_dw*_wrw) sv=TunaDepthwiseWrw ;;
        *_fwd) sv=TunaHopperFwd,TunaHopperTmaFwd,TunaHopperHaloFwd,TunaSmallCFwd,TunaSmallCTcFwd ;;
        *_bwd) sv=TunaHopperTmaBwd,TunaIgemmBwd ;;
        *) sv=TunaHopperTmaWrw,TunaHopperHaloWrw,TunaHopperWrw,TunaIgemmWrw ;;
      esac
      sv=${SOLVERS:-$sv}
      timeout "$secs" ./run.sh --driver "$f" --solvers "$sv" --configs ${CONFIGS:-64} --other-configs 4 --cpu-check-max 1 --cudnn-heuristics-only $extra ${BENCH_ARGS:-} --json "$out/$name.raw.json" > "$out/$name.log" 2>&1 || echo "bench $name: exit $?"
      tail -6 "$out/$name.log"; torch_for "$name" "$f" 90 ;;
    wrw16|wrwbf16)
      f=data/resnet50_n32_wrw_fp16_nhwc.txt
      if [ "$name" = wrwbf16 ]; then sed 's/convfp16/convbfp16/' "$f" > "$out/wrw_bf16.txt"; f="$out/wrw_bf16.txt"; fi
      timeout "$secs" ./run.sh --driver "$f" --solvers ${SOLVERS:-TunaHopperTmaWrw,TunaHopperHaloWrw,TunaHopperWrw,TunaIgemmWrw} --configs ${CONFIGS:-128} --other-configs 4 --cpu-check-max 1 --cudnn-heuristics-only ${BENCH_ARGS:-} --json "$out/$name.raw.json" > "$out/$name.log" 2>&1 || echo "bench $name: exit $?"
      tail -6 "$out/$name.log"; torch_for "$name" "$f" 90 ;;
    fwd32|bwd32|wrw32)
      if [ "$name" = fwd32 ]; then f=data/resnet50_n32_fwd_fp32.txt sv=TunaFastSimtFwd,TunaWinogradF2x3,TunaWinogradF4x3,TunaIgemmFwd n=36
      elif [ "$name" = bwd32 ]; then f=data/resnet50_n32_bwd_fp32.txt sv=TunaFastSimtBwd,TunaWinogradF2x3,TunaWinogradF4x3,TunaIgemmBwd,TunaThinBwd n=36
      else f=data/resnet50_n32_wrw_fp32.txt sv=TunaFastSimtWrw,TunaWinogradWrw,TunaIgemmWrw n=48; fi
      f=${DATA:-$f}; n=${CONFIGS:-$n}; sv=${SOLVERS:-$sv}
      timeout "$secs" ./run.sh --driver "$f" --solvers "$sv" --configs "$n" --other-configs 4 --cpu-check-max 1 --no-legacy --json "$out/$name.raw.json" > "$out/$name.log" 2>&1 || echo "bench $name: exit $?"
      tail -6 "$out/$name.log"; torch_for "$name" "$f" 120 ;;
    fp32cudnn)
      timeout "$secs" ./run.sh --driver data/resnet50_n32.txt --no-tuna --json "$out/fp32_cudnn.raw.json" > "$out/fp32_cudnn.log" 2>&1 || echo "bench fp32cudnn: exit $?"
      tail -6 "$out/fp32_cudnn.log"; torch_for fp32_cudnn data/resnet50_n32.txt 120 ;;
    fp16cudnn)
      timeout "$secs" ./run.sh --driver data/resnet50_n32_fwd_fp16_nhwc.txt --no-tuna --cudnn-heuristics-only --json "$out/fp16_cudnn.raw.json" > "$out/fp16_cudnn.log" 2>&1 || echo "bench fp16cudnn: exit $?"
      tail -4 "$out/fp16_cudnn.log"; torch_for fp16_cudnn data/resnet50_n32_fwd_fp16_nhwc.txt 90 ;;
    torchcudnn)
      lib=$(python3 -c "import torch; torch.backends.cudnn.version(); print(next((l.split()[-1] for l in open('/proc/self/maps') if 'libcudnn.so' in l), ''))")
      echo "torch maps $lib (cuDNN $(python3 -c 'import torch; print(torch.backends.cudnn.version())'))"
      if [ -n "$lib" ]; then export TUNA_CUDNN_PATH=$(dirname "$lib"); fi ;;
    fixsizes)
      f=data/resnet50_n32_fwd_fp16_nhwc.txt
      timeout "$secs" ./run.sh --driver "$f" --solvers TunaHopperTmaFwd --configs ${CONFIGS:-16} --other-configs 0 --cpu-check-max 1 --cudnn-heuristics-only --no-legacy ${VARIANT:+--variant-option "$VARIANT"} --json "$out/$name.json" > "$out/$name.log" 2>&1 || echo "bench $name: exit $?"
      grep -E "arguments cost|geomean|^variant" "$out/$name.log" | tail -4 ;;
    fromdb)
      timeout "$secs" ./run.sh --from-db data/fromdb --no-legacy --cudnn-heuristics-only --json "$out/fromdb.raw.json" > "$out/fromdb.log" 2>&1 || echo "bench fromdb: exit $?"
      grep -E "skipped db row|ERROR" "$out/fromdb.log" | head -5; tail -4 "$out/fromdb.log"
      # The cross-check runs on the driver lines of the db's own rows (one per problem and direction).
      python3 -c "import json,sys; rows=json.load(open(sys.argv[1]))['rows']; print('\n'.join(dict.fromkeys(r['line'] for r in rows)))" \
        "$out/fromdb.raw.json" > "$out/fromdb_lines.txt" && torch_for fromdb "$out/fromdb_lines.txt" ${TORCH_SECS:-150} ;;
    fp32)
      timeout "$secs" ./run.sh --driver data/resnet50_n32.txt --configs 6 --other-configs 1 --cpu-check-max 1 --json "$out/fp32_all.raw.json" > "$out/fp32_all.log" 2>&1 || echo "bench fp32: exit $?"
      tail -6 "$out/fp32_all.log"; torch_for fp32_all data/resnet50_n32.txt 120 ;;
  esac
done
for f in "$out"/*.raw.json; do [ -f "${f%.raw.json}.json" ] && rm -f "$f"; done
# PACK=1: OUT/w as one OUT/w.tgz (the device transfer drops files past a count: a call of many
# steps otherwise loses some of its JSON and logs).
if [ "${PACK:-0}" = 1 ]; then tar czf "$top/w.tgz" -C "$top" w && rm -rf "$out" && echo "packed: $top/w.tgz"; fi
echo "=== done $(date -u +%T)"
