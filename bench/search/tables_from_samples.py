#!/usr/bin/env python3
"""Replay tables for bench/search (search_bench --tables) from a `tuna heuristics dump` file.

  tables_from_samples.py SAMPLES.jsonl OUT.json [--arch sm_90] [--min-points 24]

Each line of the dump holds, per config, every timed candidate of every solver (params, ms). For
every tunable solver with at least --min-points timed candidates on a config, one table: its
points are those candidates (all passed), its default the first one listed. These are not
exhaustive tables: the space a strategy replays over is restricted to the points the original
search timed (search_bench treats points outside a table as invalid), so the figure measures
the strategies on real device timings of small spaces. Until exhaustive tables are committed
(bench/gpu/search_acceptance.sh STEPS=tables), they are what bench/search can replay anywhere:
bench/heuristics/data/samples.jsonl (issue #20's H100 session) gives several hundred tables.
"""
import argparse
import json


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("samples")
    ap.add_argument("out")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--min-points", type=int, default=24)
    args = ap.parse_args()
    tables = []
    for line in open(args.samples):
        row = json.loads(line)
        driver = row["driver"].replace("./bin/MIOpenDriver ", "")
        for solver, samples in sorted(row.get("samples", {}).items()):
            points = {}
            for params, ms in samples:
                if not params or ms is None or ms <= 0:
                    continue
                points.setdefault(params, ms)
            if len(points) < args.min_points:
                continue
            first = samples[0][0]
            tables.append({
                "solver": solver, "driver": driver, "arch": args.arch,
                "default": [int(v) for v in first.split(",")],
                "points": [{"p": [int(v) for v in p.split(",")], "ok": True, "ms": ms}
                           for p, ms in points.items()],
            })
    with open(args.out, "w") as f:
        json.dump({"backend": "cuda", "source": args.samples, "tables": tables}, f)
    print(f"{len(tables)} tables written to {args.out}")


if __name__ == "__main__":
    main()
