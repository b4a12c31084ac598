#!/usr/bin/env python3
"""Kernel lab: time prebuilt Hopper forward cubins against cuDNN (through PyTorch) on a driver file.

A development tool for comparing kernel variants inside one device call; the numbers that count
come from bench/kernels (tuna's own pipeline, cuDNN's backend API). Each variant is a cubin built
here by bench/kernels/lab/build.sh (nvcc, sm_90a) with its options in the manifest. Per problem
the lab verifies every variant against an FP32 (no TF32) PyTorch convolution, times it the way
bench/kernels does (L2 flushed before every timed launch, CUDA events, median of 25) and times
torch's cuDNN convolution (benchmark mode, channels-last) the same way.

usage: hopper_lab.py MANIFEST DRIVER_FILE [--dtype fp16|bf16] [--json OUT.json] [--sms N]
"""
import argparse
import ctypes
import json
import math
import os
import re
import statistics
import sys

import torch

REPS = 25
WARMUP = 3


def parse_line(line):
    toks = line.split()
    if len(toks) < 3 or not toks[1].startswith("conv"):
        return None
    val = {}
    i = 2
    while i < len(toks):
        t = toks[i]
        if t.startswith("-") and i + 1 < len(toks):
            val[t.lstrip("-")] = toks[i + 1]
            i += 2
        else:
            i += 1
    g = lambda k, d: int(val.get(k, d))
    p = dict(n=g("n", 1), c=g("c", 1), h=g("H", 1), w=g("W", 1), k=g("k", 1), r=g("y", 1), s=g("x", 1),
             ph=g("p", 0), pw=g("q", 0), sh=g("u", 1), sw=g("v", 1), dh=g("l", 1), dw=g("j", 1), groups=g("g", 1))
    p["ho"] = (p["h"] + 2 * p["ph"] - p["dh"] * (p["r"] - 1) - 1) // p["sh"] + 1
    p["wo"] = (p["w"] + 2 * p["pw"] - p["dw"] * (p["s"] - 1) - 1) // p["sw"] + 1
    p["label"] = "n%d c%d %dx%d k%d %dx%d u%d p%d g%d" % (p["n"], p["c"], p["h"], p["w"], p["k"], p["r"], p["s"],
                                                     p["sh"], p["ph"], p["groups"])
    return p


class Driver:
    def __init__(self):
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.modules = {}

    def check(self, rc, what):
        if rc != 0:
            msg = ctypes.c_char_p()
            self.lib.cuGetErrorString(rc, ctypes.byref(msg))
            raise RuntimeError("%s: %d %s" % (what, rc, msg.value))

    def function(self, path, name, smem):
        key = (path, name)
        if key not in self.modules:
            mod = ctypes.c_void_p()
            self.check(self.lib.cuModuleLoad(ctypes.byref(mod), path.encode()), "cuModuleLoad " + path)
            fn = ctypes.c_void_p()
            self.check(self.lib.cuModuleGetFunction(ctypes.byref(fn), mod, name.encode()), "cuModuleGetFunction")
            self.modules[key] = fn
        fn = self.modules[key]
        self.check(self.lib.cuFuncSetAttribute(fn, 8, ctypes.c_int(smem)), "max dynamic smem %d" % smem)
        return fn

    def tensor_map(self, kind, dtype, ptr, p, tb_m, tb_n):
        """A 64-byte-aligned CUtensorMap: 'x' im2col over NHWC x, 'w' tiled over w as (K, R*S*C/G)."""
        raw = (ctypes.c_uint8 * (128 + 64))()
        addr = (ctypes.addressof(raw) + 63) // 64 * 64
        u64 = lambda *v: (ctypes.c_uint64 * len(v))(*v)
        u32 = lambda *v: (ctypes.c_uint32 * len(v))(*v)
        dt = 6 if dtype == torch.float16 else 9
        if kind == "x":
            c, h, w = p["c"], p["h"], p["w"]
            lower = (ctypes.c_int * 2)(-p["pw"], -p["ph"])
            upper = (ctypes.c_int * 2)(p["pw"] - p["dw"] * (p["s"] - 1), p["ph"] - p["dh"] * (p["r"] - 1))
            rc = self.lib.cuTensorMapEncodeIm2col(ctypes.c_void_p(addr), dt, 4, ctypes.c_void_p(ptr),
                                                  u64(c, w, h, p["n"]), u64(c * 2, w * c * 2, h * w * c * 2), lower,
                                                  upper, 64, tb_m, u32(1, p["sw"], p["sh"], 1), 0, 3, 3, 0)
        else:
            kg = p["r"] * p["s"] * (p["c"] // p["groups"])
            rc = self.lib.cuTensorMapEncodeTiled(ctypes.c_void_p(addr), dt, 2, ctypes.c_void_p(ptr), u64(kg, p["k"]),
                                                 u64(kg * 2), u32(64, tb_n), u32(1, 1), 0, 3, 3, 0)
        self.check(rc, "cuTensorMapEncode " + kind)
        return raw, addr

    def launch(self, fn, grid, block, smem, args):
        holders = []
        for kind, v in args:
            if kind == "w":  # a struct of int32 fields, by value
                holders.append((ctypes.c_int32 * len(v))(*v))
            else:
                holders.append(ctypes.c_void_p(v) if kind in "pm" else ctypes.c_longlong(v) if kind == "q" else ctypes.c_int(v))
        arr = (ctypes.c_void_p * len(holders))(*[h if kind == "m" else ctypes.cast(ctypes.byref(h), ctypes.c_void_p)
                                                 for (kind, _), h in zip(args, holders)])
        stream = torch.cuda.current_stream().cuda_stream
        self.check(self.lib.cuLaunchKernel(fn, grid[0], grid[1], grid[2], block, 1, 1, smem, ctypes.c_void_p(stream),
                                           arr, None), "cuLaunchKernel")


def launch_shape(v, p, sms):
    tb_m, tb_n, wg_m, stages = v["TB_M"], v["TB_N"], v["WG_M"], v["STAGES"]
    m = p["n"] * p["ho"] * p["wo"]
    kpg = p["k"] // p["groups"]
    tiles = -(-m // tb_m) * -(-kpg // tb_n)
    ring = stages * (tb_m + tb_n) * 128
    if v["kernel"] in ("tuna_hopper_ws_fwd", "tuna_hopper_tma_fwd"):
        smem = 1024 + ring + wg_m * 4 * 16 * 72 * 2 + 16 * stages
        return (min(tiles * p["groups"], sms), 1, 1), 128 * (wg_m + 1), smem
    smem = 1024 + max(ring, tb_m * (tb_n + 8) * 2, tb_m * (tb_n + 8) * 4 if v.get("SPLIT_K", 1) > 1 else 0)
    return (tiles, p["groups"], v.get("SPLIT_K", 1)), 128 * wg_m, smem


def applicable(v, p):
    cg = p["c"] // p["groups"]
    if v["kernel"] == "tuna_hopper_tma_fwd":
        return cg % 64 == 0
    if v.get("CHUNK", 16) == 16:
        return cg % 8 == 0
    return cg == 4


def time_fn(fn, flush):
    start = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
    end = [torch.cuda.Event(enable_timing=True) for _ in range(REPS)]
    for _ in range(WARMUP):
        fn()
    for i in range(REPS):
        flush.zero_()
        start[i].record()
        fn()
        end[i].record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(start, end))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("manifest")
    ap.add_argument("driver")
    ap.add_argument("--dtype", default="fp16")
    ap.add_argument("--json")
    ap.add_argument("--sms", type=int, default=0)
    args = ap.parse_args()
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    sms = args.sms or torch.cuda.get_device_properties(0).multi_processor_count
    dtype = torch.float16 if args.dtype == "fp16" else torch.bfloat16
    base = os.path.dirname(os.path.abspath(args.manifest))
    variants = json.load(open(args.manifest))
    drv = Driver()
    flush = torch.empty(256 << 20, dtype=torch.uint8, device=dev)
    problems = [p for p in (parse_line(l) for l in open(args.driver) if not l.startswith("#")) if p]
    rows = []
    torch.manual_seed(1)
    for pi, p in enumerate(problems):
        cg = p["c"] // p["groups"]
        x = torch.randn(p["n"], p["h"], p["w"], p["c"], device=dev).to(dtype)
        w = (torch.randn(p["k"], p["r"], p["s"], cg, device=dev) / math.sqrt(p["r"] * p["s"] * cg)).to(dtype)
        y = torch.empty(p["n"], p["ho"], p["wo"], p["k"], device=dev, dtype=dtype)
        conv = lambda xx, ww: torch.nn.functional.conv2d(xx, ww, None, (p["sh"], p["sw"]), (p["ph"], p["pw"]),
                                                          (p["dh"], p["dw"]), p["groups"])
        ref = conv(x.permute(0, 3, 1, 2).float(), w.permute(0, 3, 1, 2).float())
        xc, wc = x.permute(0, 3, 1, 2), w.permute(0, 3, 1, 2)  # channels-last views
        cudnn_ms = time_fn(lambda: conv(xc, wc), flush)
        flops = 2.0 * p["n"] * p["ho"] * p["wo"] * p["k"] * cg * p["r"] * p["s"]
        row = {"problem": p["label"], "cudnn_ms": cudnn_ms, "variants": {}}
        for v in variants:
            if not applicable(v, p):
                continue
            grid, block, smem = launch_shape(v, p, sms)
            try:
                fn = drv.function(os.path.join(base, v["cubin"]), v["kernel"], smem)
            except RuntimeError as e:
                row["variants"][v["name"]] = {"error": str(e)}
                continue
            if v["kernel"] == "tuna_hopper_tma_fwd":
                mx, ax = drv.tensor_map("x", dtype, x.data_ptr(), p, v["TB_M"], v["TB_N"])
                mw, aw = drv.tensor_map("w", dtype, w.data_ptr(), p, v["TB_M"], v["TB_N"])
                # One forward phase (the kernel's TunaPhase, PHASED=0), then the sizes of y and w.
                phase = [p["ho"], p["wo"], p["r"], p["s"], 0, 0, 1, 1, 0, 0, p["dh"], p["dw"], -p["ph"], -p["pw"],
                         p["sh"], p["sw"], 0, 0, 1, 1, 1]
                kargs = [("m", ax), ("m", aw), ("w", phase), ("p", y.data_ptr())] + [
                    ("i", p[k]) for k in ("n", "c", "k", "ho", "wo", "r", "s", "groups")]
            else:
                kargs = [("p", x.data_ptr()), ("p", w.data_ptr()), ("p", y.data_ptr()), ("q", 0)] + [
                    ("i", p[k]) for k in ("n", "c", "h", "w", "k", "ho", "wo", "r", "s", "ph", "pw", "sh", "sw", "dh",
                                          "dw", "groups")]
            y.fill_(float("nan"))
            run = lambda: drv.launch(fn, grid, block, smem, kargs)
            run()
            torch.cuda.synchronize()
            out = y.permute(0, 3, 1, 2).float()
            err = ((out - ref).norm() / ref.norm()).item()
            ok = math.isfinite(err) and err < 1e-2
            ms = time_fn(run, flush) if ok else float("nan")
            row["variants"][v["name"]] = {"ms": ms, "err": err, "ok": ok, "tflops": flops / ms / 1e9 if ok else 0}
        good = {k: r for k, r in row["variants"].items() if r.get("ok")}
        best = min(good, key=lambda k: good[k]["ms"]) if good else None
        row["best"] = best
        row["ratio"] = cudnn_ms / good[best]["ms"] if best else 0.0
        rows.append(row)
        bad = [k for k, r in row["variants"].items() if not r.get("ok")]
        print("%2d %-40s cudnn %.4f best %-22s %.4f ratio %.3f %s" % (
            pi + 1, p["label"], cudnn_ms, best, good[best]["ms"] if best else 0, row["ratio"],
            ("FAIL " + ",".join(bad)) if bad else ""), flush=True)
    # Per-family geomeans: each family's best variant per problem.
    families = sorted({v["name"].split(":")[0] for v in variants})
    summary = {}
    for fam in families:
        ratios = []
        for row in rows:
            ms = [r["ms"] for k, r in row["variants"].items() if k.split(":")[0] == fam and r.get("ok")]
            if ms:
                ratios.append(row["cudnn_ms"] / min(ms))
        if ratios:
            summary[fam] = {"geomean": math.exp(sum(map(math.log, ratios)) / len(ratios)), "min": min(ratios),
                            "count": len(ratios)}
    allr = [r["ratio"] for r in rows if r["ratio"] > 0]
    summary["all"] = {"geomean": math.exp(sum(map(math.log, allr)) / len(allr)), "min": min(allr), "count": len(allr)}
    wins = {}
    for row in rows:
        if row["best"]:
            wins[row["best"]] = wins.get(row["best"], 0) + 1
    meta = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "cudnn": torch.backends.cudnn.version(),
            "sms": sms, "dtype": args.dtype, "driver": args.driver, "reps": REPS}
    if args.json:
        json.dump({"meta": meta, "rows": rows, "summary": summary, "wins": wins}, open(args.json, "w"), indent=1)
    print("wins:", json.dumps(wins))
    for k, s in summary.items():
        print("%-14s geomean %.3f min %.3f (%d)" % (k, s["geomean"], s["min"], s["count"]))
    failures = sum(1 for row in rows for r in row["variants"].values() if not r.get("ok"))
    print("failures:", failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
