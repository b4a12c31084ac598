#!/usr/bin/env python3
"""Cross-check of bench/kernels' "cuDNN best" column against PyTorch's cuDNN benchmark mode.

Usage: crosscheck.py BENCH_JSON TORCH_JSON [--out MERGED_JSON]

BENCH_JSON is kernels_bench --json output, TORCH_JSON the output of cudnn_best_torch.py run on the
same driver file in the same device call. Fills each bench row's torch_ms (matched by driver line
and direction), records the per-direction geomeans in meta.torch_crosscheck and prints a table.
Passes when, per direction, the bench's cuDNN-best geomean (ms, over the rows both timed) is at
most 1.10x torch's; exits 1 otherwise (then the baseline is wrong: find out why before claiming).
"""
import json
import math
import sys


def norm(line):
    return ' '.join(line.split())


def geomean(v):
    return math.exp(sum(math.log(x) for x in v) / len(v)) if v else None


def main(argv):
    args = [a for a in argv[1:] if not a.startswith('--')]
    out = argv[argv.index('--out') + 1] if '--out' in argv else None
    if out in args:
        args.remove(out)
    bench = json.load(open(args[0]))
    torch = json.load(open(args[1]))
    tmap = {(norm(r['line']), r['direction']): r['ms'] for r in torch['rows']}
    for r in bench['rows']:
        r['torch_ms'] = tmap.get((norm(r['line']), r['direction']))
    dirs = {}
    ok = True
    print(f"{'direction':9} {'rows':>4} {'bench cuDNN best ms':>20} {'torch ms':>10} {'best/torch':>10} {'legacy ms':>10} {'tuna ms':>9}  verdict")
    for d in 'FBW':
        rows = [r for r in bench['rows'] if r['direction'] == d and r.get('cudnn_best_ms') and r.get('torch_ms')]
        if not rows:
            continue
        b = geomean([r['cudnn_best_ms'] for r in rows])
        t = geomean([r['torch_ms'] for r in rows])
        leg = [r['cudnn_legacy_ms'] for r in rows if r.get('cudnn_legacy_ms')]
        tun = [r['tuna_ms'] for r in rows if r.get('tuna_ms')]
        passed = b <= 1.10 * t
        ok &= passed
        slow = sorted(rows, key=lambda r: r['torch_ms'] / r['cudnn_best_ms'])[:3]
        dirs[d] = dict(rows=len(rows), bench_cudnn_best_geomean_ms=round(b, 5), torch_geomean_ms=round(t, 5),
                       ratio_best_over_torch=round(b / t, 4), passed=passed,
                       legacy_geomean_ms=round(geomean(leg), 5) if leg else None,
                       tuna_geomean_ms=round(geomean(tun), 5) if tun and len(tun) == len(rows) else None,
                       slowest_vs_torch=[dict(label=r['label'], best=r['cudnn_best_ms'], torch=r['torch_ms'],
                                              engine=r['cudnn_best_engine']) for r in slow])
        x = dirs[d]
        print(f"{d:9} {len(rows):4d} {b:20.5f} {t:10.5f} {b / t:10.3f} {x['legacy_geomean_ms'] or 0:10.5f} "
              f"{x['tuna_geomean_ms'] or 0:9.5f}  {'PASS' if passed else 'FAIL (bench slower than torch by >10%)'}")
        for s in x['slowest_vs_torch']:
            print(f"    {s['label']}: best {s['best']:.5f} torch {s['torch']:.5f} ({s['engine']})")
    missing = sum(1 for r in bench['rows'] if r.get('torch_ms') is None)
    if missing:
        print(f"{missing} bench rows without a torch figure")
    bench['meta']['torch_crosscheck'] = dict(torch_meta=torch.get('meta'), directions=dirs, passed=ok,
                                             rule='bench cuDNN-best geomean <= 1.10 x torch geomean, per direction')
    if out:
        json.dump(bench, open(out, 'w'), indent=1)
    return 0 if ok and dirs else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv))
