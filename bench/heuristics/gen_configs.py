#!/usr/bin/env python3
"""Writes the MIOpenDriver lines of the learned-heuristics training set (issue #20).

ResNet-50 (every distinct conv layer), Inception-like (1x1, 3x3, 5x5, 1x7 / 7x1 factorised and
strided reduction branches) and MobileNet-like (depthwise 3x3 with groups = channels, pointwise
1x1, strided) shapes at several batch sizes, all directions (-F 0: forward, backward data,
backward weights each become one config when imported). Deterministic: the same flags give the
same file.

  bench/heuristics/gen_configs.py > configs.txt                 # FP16 NHWC, batches 1,8,32,64
  bench/heuristics/gen_configs.py --dtype fp32 --layout NCHW --batches 1,16
  bench/heuristics/gen_configs.py --set mixed > configs.txt     # 79 lines, 237 configs

--set full (default): every shape of every net at every batch (52 shapes x 4 batches = 208 lines,
624 configs; about 25 minutes of default search on an H100, ~0.4 configs/s).
--set mixed: the one-call GPU set (run_gpu.sh): shape i of a net at batch B[i % 3] and, for even
i, also at B[(i + 1) % 3], B = --batches (default 1,8,32): 35 ResNet-50 + 21 Inception-like + 23
MobileNet-like lines = 79 lines, 237 configs, every shape at least once, each batch on about a third
of the lines. The nets' lines are interleaved one by one, so any prefix of the file is balanced
across nets, batches and shapes: `tuna tune -f` leases jobs in config order, so a tune stopped at
a time limit (run_gpu.sh TUNE_TIMEOUT) leaves a balanced subset. --limit N keeps the first N lines.

Prints the number of lines and of configs (lines x 3 directions) to stderr.
"""
import argparse
import sys

COMMANDS = {"fp32": "conv", "fp16": "convfp16", "bf16": "convbfp16"}

# (C, H=W, K, filter (R, S), pad (P, Q), stride, groups)
RESNET50 = [
    (3, 224, 64, (7, 7), (3, 3), 2, 1),
    (64, 56, 64, (1, 1), (0, 0), 1, 1), (64, 56, 64, (3, 3), (1, 1), 1, 1),
    (64, 56, 256, (1, 1), (0, 0), 1, 1), (256, 56, 64, (1, 1), (0, 0), 1, 1),
    (256, 56, 128, (1, 1), (0, 0), 1, 1), (128, 56, 128, (3, 3), (1, 1), 2, 1),
    (128, 28, 128, (3, 3), (1, 1), 1, 1), (128, 28, 512, (1, 1), (0, 0), 1, 1),
    (256, 56, 512, (1, 1), (0, 0), 2, 1), (512, 28, 128, (1, 1), (0, 0), 1, 1),
    (512, 28, 256, (1, 1), (0, 0), 1, 1), (256, 28, 256, (3, 3), (1, 1), 2, 1),
    (256, 14, 256, (3, 3), (1, 1), 1, 1), (256, 14, 1024, (1, 1), (0, 0), 1, 1),
    (512, 28, 1024, (1, 1), (0, 0), 2, 1), (1024, 14, 256, (1, 1), (0, 0), 1, 1),
    (1024, 14, 512, (1, 1), (0, 0), 1, 1), (512, 14, 512, (3, 3), (1, 1), 2, 1),
    (512, 7, 512, (3, 3), (1, 1), 1, 1), (512, 7, 2048, (1, 1), (0, 0), 1, 1),
    (1024, 14, 2048, (1, 1), (0, 0), 2, 1), (2048, 7, 512, (1, 1), (0, 0), 1, 1),
]

INCEPTION = [
    (192, 35, 64, (1, 1), (0, 0), 1, 1), (192, 35, 48, (1, 1), (0, 0), 1, 1),
    (48, 35, 64, (5, 5), (2, 2), 1, 1), (64, 35, 96, (3, 3), (1, 1), 1, 1),
    (96, 35, 96, (3, 3), (1, 1), 1, 1), (288, 35, 384, (3, 3), (0, 0), 2, 1),
    (768, 17, 192, (1, 1), (0, 0), 1, 1), (128, 17, 128, (1, 7), (0, 3), 1, 1),
    (128, 17, 192, (7, 1), (3, 0), 1, 1), (160, 17, 160, (7, 1), (3, 0), 1, 1),
    (192, 17, 320, (3, 3), (0, 0), 2, 1), (1280, 8, 384, (1, 1), (0, 0), 1, 1),
    (384, 8, 384, (1, 3), (0, 1), 1, 1), (448, 8, 384, (3, 3), (1, 1), 1, 1),
]

MOBILENET = [
    (3, 224, 32, (3, 3), (1, 1), 2, 1),
    (32, 112, 32, (3, 3), (1, 1), 1, 32), (32, 112, 64, (1, 1), (0, 0), 1, 1),
    (64, 112, 64, (3, 3), (1, 1), 2, 64), (64, 56, 128, (1, 1), (0, 0), 1, 1),
    (128, 56, 128, (3, 3), (1, 1), 1, 128), (128, 56, 128, (1, 1), (0, 0), 1, 1),
    (128, 56, 128, (3, 3), (1, 1), 2, 128), (128, 28, 256, (1, 1), (0, 0), 1, 1),
    (256, 28, 256, (3, 3), (1, 1), 1, 256), (256, 14, 512, (1, 1), (0, 0), 1, 1),
    (512, 14, 512, (3, 3), (1, 1), 1, 512), (512, 14, 512, (1, 1), (0, 0), 1, 1),
    (512, 7, 1024, (1, 1), (0, 0), 1, 1), (1024, 7, 1024, (3, 3), (1, 1), 1, 1024),
]


def line(cmd, n, shape, layout):
    c, hw, k, (r, s), (p, q), u, g = shape
    text = (f"./bin/MIOpenDriver {cmd} -n {n} -c {c} -H {hw} -W {hw} -k {k} -y {r} -x {s} "
            f"-p {p} -q {q} -u {u} -v {u} -l 1 -j 1 -m conv -g {g} -F 0 -t 1")
    if layout != "NCHW":
        text += f" --in_layout {layout} --fil_layout {layout} --out_layout {layout}"
    return text


NETS = {"resnet50": RESNET50, "inception": INCEPTION, "mobilenet": MOBILENET}


def full_set(chosen, batches):
    """Every shape at every batch, net by net: (net, batch, shape) in file order."""
    return [(name, b, shape) for name in chosen for b in batches for shape in NETS[name]]


def mixed_set(chosen, batches):
    """Shape i at batches[i % len] (+ batches[(i + 1) % len] for even i); nets interleaved."""
    per_net = []
    for name in chosen:
        rows = []
        for i, shape in enumerate(NETS[name]):
            rows.append((name, batches[i % len(batches)], shape))
            if i % 2 == 0 and len(batches) > 1:
                rows.append((name, batches[(i + 1) % len(batches)], shape))
        per_net.append(rows)
    out = []
    for k in range(max(len(r) for r in per_net)):
        out.extend(rows[k] for rows in per_net if k < len(rows))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtype", choices=sorted(COMMANDS), default="fp16")
    ap.add_argument("--layout", choices=["NCHW", "NHWC"], default="NHWC")
    ap.add_argument("--set", choices=["full", "mixed"], default="full",
                    help="full: every shape at every batch; mixed: the one-call GPU set")
    ap.add_argument("--batches", default=None,
                    help="comma-separated batch sizes (default: full 1,8,32,64; mixed 1,8,32)")
    ap.add_argument("--nets", default="resnet50,inception,mobilenet",
                    help="comma-separated subset of resnet50, inception, mobilenet")
    ap.add_argument("--limit", type=int, default=0, help="keep the first N lines (0 = all)")
    args = ap.parse_args()
    default_batches = "1,8,32,64" if args.set == "full" else "1,8,32"
    try:
        batches = [int(b) for b in (args.batches or default_batches).split(",") if b]
    except ValueError:
        batches = []
    if not batches or any(b < 1 for b in batches):
        ap.error("--batches: positive integers expected")
    if args.limit < 0:
        ap.error("--limit: a count >= 0 expected")
    chosen = [n for n in args.nets.split(",") if n]
    for n in chosen:
        if n not in NETS:
            ap.error(f"--nets: unknown net '{n}'")
    if not chosen:
        ap.error("--nets: no net chosen")
    rows = full_set(chosen, batches) if args.set == "full" else mixed_set(chosen, batches)
    if args.limit:
        rows = rows[:args.limit]
    lines = [f"# gen_configs.py --set {args.set} --dtype {args.dtype} --layout {args.layout} "
             f"--batches {','.join(map(str, batches))} --nets {','.join(chosen)}"
             + (f" --limit {args.limit}" if args.limit else "")]
    last = None
    for name, b, shape in rows:
        if args.set == "full" and name != last:
            lines.append(f"# {name}")
        last = name
        lines.append(line(COMMANDS[args.dtype], b, shape, args.layout))
    sys.stdout.write("\n".join(lines) + "\n")
    count = len(rows)
    per = {n: sum(1 for r in rows if r[0] == n) for n in chosen}
    per_b = {b: sum(1 for r in rows if r[1] == b) for b in batches}
    print(f"gen_configs: {count} lines, {3 * count} configs (3 directions each); lines per net "
          + ", ".join(f"{n} {c}" for n, c in per.items()) + "; per batch "
          + ", ".join(f"{b}: {c}" for b, c in per_b.items()), file=sys.stderr)


if __name__ == "__main__":
    main()
