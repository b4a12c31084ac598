#!/usr/bin/env python3
"""cuDNN at its best on 3-D convolutions, through PyTorch's benchmark mode: the cross-check of
kernels_bench's "cuDNN best" column for 3-D driver files, which ../shared/tools/cudnn_best_torch.py
(2-D only) cannot parse. The same method as that tool: benchmark mode (cuDNN tries its engines and
keeps the fastest), FP32 without TF32, an L2 flush before every timed call, CUDA events, median of
30; the same JSON (meta, rows of line / direction / ms / tflops), so crosscheck.py merges it.

Usage: python3 cudnn_best_torch3d.py DRIVER_FILE out.json   (on the GPU machine)
Lines: MIOpenDriver conv / convfp16 / convbfp16 with --spatial_dim 3 (or -_ 3); layouts NCDHW
(default) or NDHWC (--in_layout NDHWC); -F 0 (all), 1, 2 or 4.
"""
import json
import shlex
import statistics
import sys

import torch

torch.backends.cudnn.benchmark = True
torch.backends.cuda.matmul.allow_tf32 = False
torch.backends.cudnn.allow_tf32 = False
ITERS = 30
FLAGS = {  # field: (short flag, long flag, default)
    'n': ('-n', '--batchsize', None), 'c': ('-c', '--in_channels', None), 'k': ('-k', '--out_channels', None),
    'd': ('-!', '--in_d', '1'), 'h': ('-H', '--in_h', None), 'w': ('-W', '--in_w', None),
    'z': ('-@', '--fil_d', '1'), 'y': ('-y', '--fil_h', None), 'x': ('-x', '--fil_w', None),
    'pd': ('-$', '--pad_d', '0'), 'ph': ('-p', '--pad_h', '0'), 'pw': ('-q', '--pad_w', '0'),
    'sd': ('-#', '--conv_stride_d', '1'), 'sh': ('-u', '--conv_stride_h', '1'), 'sw': ('-v', '--conv_stride_w', '1'),
    'dd': ('-^', '--dilation_d', '1'), 'dh': ('-l', '--dilation_h', '1'), 'dw': ('-j', '--dilation_w', '1'),
    'groups': ('-g', '--group_count', '1'), 'F': ('-F', '--forw', '0'),
}


def parse(line):
    tokens = shlex.split(line)
    op, args, i = tokens[1], {}, 2
    while i < len(tokens):
        flag = tokens[i]
        has_value = i + 1 < len(tokens) and not (tokens[i + 1].startswith('-') and not tokens[i + 1][1:].isdigit())
        args[flag] = tokens[i + 1] if has_value else '1'
        i += 2 if has_value else 1
    p = {}
    for field, (short, long, default) in FLAGS.items():
        value = args.get(short, args.get(long, default))
        if value is None:
            raise SystemExit(f'{line}: missing {long}')
        p[field] = int(value)
    p['dtype'] = {'conv': torch.float32, 'convfp16': torch.float16, 'convbfp16': torch.bfloat16}[op]
    p['cl'] = args.get('--in_layout', args.get('-I', 'NCDHW')) == 'NDHWC'
    return p


def timeit(f, flush):
    for _ in range(5):
        f()
    torch.cuda.synchronize()
    times = []
    for _ in range(ITERS):
        flush.zero_()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        f()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def main(argv):
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.float32, device='cuda')
    rows = []
    for raw in open(argv[1]):
        raw = raw.strip()
        if not raw or raw.startswith('#'):
            continue
        p = parse(raw)
        x = torch.randn(p['n'], p['c'], p['d'], p['h'], p['w'], device='cuda', dtype=p['dtype'])
        w = torch.randn(p['k'], p['c'] // p['groups'], p['z'], p['y'], p['x'], device='cuda', dtype=p['dtype'])
        if p['cl']:
            x = x.to(memory_format=torch.channels_last_3d)
            w = w.to(memory_format=torch.channels_last_3d)
        st, pd, dl = [p['sd'], p['sh'], p['sw']], [p['pd'], p['ph'], p['pw']], [p['dd'], p['dh'], p['dw']]
        conv = lambda: torch.nn.functional.conv3d(x, w, stride=st, padding=pd, dilation=dl, groups=p['groups'])
        y = conv()
        dy = torch.randn_like(y)
        flops = 2.0 * p['n'] * p['k'] * (p['c'] // p['groups']) * p['z'] * p['y'] * p['x'] * y[0, 0].numel()
        backward = lambda m: torch.ops.aten.convolution_backward(dy, x, w, None, st, pd, dl, False, [0, 0, 0],
                                                                 p['groups'], m)
        calls = {'F': conv, 'B': lambda: backward([True, False, False]), 'W': lambda: backward([False, True, False])}
        for d in {0: 'FBW', 1: 'F', 2: 'B', 4: 'W'}.get(p['F'], 'F'):
            ms = timeit(calls[d], flush)
            rows.append(dict(line=raw, direction=d, ms=round(ms, 5), tflops=round(flops / ms / 1e9, 3)))
            print(json.dumps(rows[-1]), flush=True)
    meta = dict(gpu=torch.cuda.get_device_name(), cudnn=torch.backends.cudnn.version(), torch=torch.__version__,
                iters=ITERS, l2_flush=True, file=argv[1], method='cudnn_best_torch3d.py (3-D; same method as '
                '../shared/tools/cudnn_best_torch.py)')
    json.dump(dict(meta=meta, rows=rows), open(argv[2], 'w'), indent=1)


if __name__ == '__main__':
    main(sys.argv)
