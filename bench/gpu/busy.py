#!/usr/bin/env python3
"""GPU busy fraction of a pipeline run, two ways (bench/gpu/pipeline.sh calls this).

  busy.py GPU_UTIL_CSV PIPELINE_LOG

1. nvidia-smi (outside view): samples of `index, timestamp, utilization.gpu` every 100 ms. Per
   GPU, over the window from its first to its last sample with a kernel running, and over the
   eval window (the worker's first `evaluating job` to its last `evaluated job` on that device):
   the share of samples with utilisation > 0 and the mean utilisation (nvidia-smi's utilisation
   is the share of its own sample period in which some kernel ran).
2. The executors' own accounts (inside view): every eval job logs
   `job N (...): W s: ... device D ms (...), kernels K ms, ...`. Summed over jobs and divided by
   the eval window (first `evaluating job` to last job line) times the number of devices seen.
3. The worker's lanes: per device, how much of the eval window had a job in an executor, and
   how the rest splits into short gaps (the hand-over between jobs: report, next job) and long
   ones (over 0.1 s: no eval job was ready, i.e. the compile steps were behind). With several
   executors per device (`evaluating job ... on ARCH device D (executor K of N)`) the jobs of a
   device overlap: the share is of the union of their intervals, and the gaps are those of the
   union.
4. With several executors per device, the executors' job lines also carry
   `device lock wait W ms`: the time jobs waited for another executor's device work.
"""
import collections
import datetime
import re
import sys


def stamp(line):
    m = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\]", line)
    return datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f") if m else None


def smi_samples(path):
    """{gpu: [(time or None, utilisation)]} in sample order."""
    per_gpu = collections.defaultdict(list)
    for row in open(path):
        parts = [p.strip() for p in row.split(",")]
        if len(parts) != 3:
            continue
        try:
            t = datetime.datetime.strptime(parts[1], "%Y/%m/%d %H:%M:%S.%f")
        except ValueError:
            t = None
        try:
            per_gpu[int(parts[0])].append((t, float(parts[2])))
        except ValueError:
            continue
    return per_gpu


def describe(label, u):
    busy = sum(1 for v in u if v > 0)
    print(f"nvidia-smi GPU {label}: {len(u)} samples ({len(u) / 10:.1f} s): "
          f"{100 * busy / len(u):.1f} % with a kernel running, mean utilisation {sum(u) / len(u):.1f} %")


def smi(path, windows):
    for gpu, samples in sorted(smi_samples(path).items()):
        u = [v for _, v in samples]
        active = [i for i, v in enumerate(u) if v > 0]
        if not active:
            print(f"nvidia-smi GPU {gpu}: no kernel seen in {len(u)} samples")
            continue
        describe(f"{gpu}, first to last kernel", u[active[0]:active[-1] + 1])
        if gpu in windows:
            lo, hi = windows[gpu]
            w = [v for t, v in samples if t and lo <= t <= hi]
            if w:
                describe(f"{gpu}, eval window", w)


def lanes(path):
    """Per device: the worker's eval jobs as (start, end) from its evaluating/evaluated lines."""
    start = re.compile(r"evaluating job (\d+) .* device (\d+)(?: \(executor \d+ of \d+\))?$")
    end = re.compile(r"(?:evaluated job (\d+) .* in [0-9.]+ s|job (\d+) .* failed after)")
    running = {}
    per_device = collections.defaultdict(list)
    for line in open(path):
        t = stamp(line)
        if not t:
            continue
        m = start.search(line.rstrip())
        if m:
            running[m.group(1)] = (int(m.group(2)), t)
            continue
        m = end.search(line)
        if m:
            job = m.group(1) or m.group(2)
            if job in running:
                device, t0 = running.pop(job)
                per_device[device].append((t0, t))
    windows = {}
    for device, jobs in sorted(per_device.items()):
        jobs.sort()
        lo, hi = jobs[0][0], max(e for _, e in jobs)
        windows[device] = (lo, hi)
        window = (hi - lo).total_seconds()
        union = []  # the jobs' intervals merged: several executors of a device overlap
        for s, e in jobs:
            if union and s <= union[-1][1]:
                union[-1] = (union[-1][0], max(union[-1][1], e))
            else:
                union.append((s, e))
        in_jobs = sum((e - s).total_seconds() for s, e in union)
        gaps = [(b[0] - a[1]).total_seconds() for a, b in zip(union, union[1:])]
        short = [g for g in gaps if 0 <= g <= 0.1]
        long = [g for g in gaps if g > 0.1]
        print(f"lane device {device}: {len(jobs)} jobs in a {window:.1f} s eval window: in an "
              f"executor {100 * in_jobs / max(window, 1e-9):.1f} %; hand-overs {len(short)} x "
              f"{1e3 * sum(short) / max(1, len(short)):.1f} ms = {sum(short):.2f} s; waiting for "
              f"ready jobs {len(long)} x = {sum(long):.2f} s")
    return windows


def executors(path):
    job = re.compile(r"job \d+ \(.*\): ([0-9.]+) s: setup (\d+) ms, reference (\d+) ms, "
                     r"load (\d+) ms, verify (\d+) ms, timing (\d+) ms; device (\d+) ms .*"
                     r"kernels (\d+) ms")
    devices = set(re.findall(r"evaluating job .* on \S+ device (\d+)", open(path).read()))
    first = last = None
    totals = collections.Counter()
    jobs = 0
    lock_wait = re.compile(r"device lock wait (\d+) ms")
    for line in open(path):
        t = stamp(line)
        if "evaluating job" in line and t and (first is None or t < first):
            first = t  # the earliest: logs of several runs may be concatenated out of order
        m = job.search(line)
        if not m:
            continue
        jobs += 1
        if t and (last is None or t > last):
            last = t
        for key, value in zip(("wall", "setup", "reference", "load", "verify", "timing", "device",
                               "kernels"), m.groups()):
            totals[key] += float(value) * (1 if key == "wall" else 1e-3)
        w = lock_wait.search(line)
        if w:
            totals["lock wait"] += float(w.group(1)) * 1e-3
    if not jobs or first is None or last is None:
        print("executors: no eval job lines found")
        return
    window = (last - first).total_seconds()
    n = max(1, len(devices))
    print(f"executors: {jobs} eval jobs on {n} device(s) in a {window:.1f} s eval window; "
          f"job wall {totals['wall']:.1f} s = setup {totals['setup']:.1f} + reference "
          f"{totals['reference']:.1f} + load {totals['load']:.1f} + verify {totals['verify']:.1f} + "
          f"timing {totals['timing']:.1f} s (+ the rest)")
    print(f"executors: device work {totals['device']:.1f} s = {100 * totals['device'] / (n * window):.1f} % "
          f"of the window per device; timed kernels {totals['kernels']:.1f} s = "
          f"{100 * totals['kernels'] / (n * window):.1f} %; device work / job wall "
          f"{100 * totals['device'] / max(totals['wall'], 1e-9):.1f} %; waiting for the device "
          f"lock {totals['lock wait']:.1f} s")


if __name__ == "__main__":
    windows = lanes(sys.argv[2])
    smi(sys.argv[1], windows)
    executors(sys.argv[2])
