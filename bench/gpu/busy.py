#!/usr/bin/env python3
"""GPU busy fraction of a pipeline run, two ways (bench/gpu/pipeline.sh calls this).

  busy.py GPU_UTIL_CSV PIPELINE_LOG

1. nvidia-smi (outside view): samples of `index, timestamp, utilization.gpu` every 100 ms. Per
   GPU, over the window from its first to its last sample with a kernel running: the share of
   samples with utilisation > 0 and the mean utilisation (nvidia-smi's utilisation is the share
   of its own sample period in which some kernel ran).
2. The executors' own accounts (inside view): every eval job logs
   `job N (...): W s: ... device D ms (...), kernels K ms, ...`. Summed over jobs and divided by
   the eval window (first `evaluating job` to last job line) times the number of devices seen.
"""
import collections
import datetime
import re
import sys


def stamp(line):
    m = re.match(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\]", line)
    return datetime.datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f") if m else None


def smi(path):
    per_gpu = collections.defaultdict(list)
    for row in open(path):
        parts = [p.strip() for p in row.split(",")]
        if len(parts) != 3:
            continue
        try:
            per_gpu[int(parts[0])].append(float(parts[2]))
        except ValueError:
            continue
    for gpu, u in sorted(per_gpu.items()):
        active = [i for i, v in enumerate(u) if v > 0]
        if not active:
            print(f"nvidia-smi GPU {gpu}: no kernel seen in {len(u)} samples")
            continue
        w = u[active[0]:active[-1] + 1]
        busy = sum(1 for v in w if v > 0)
        print(f"nvidia-smi GPU {gpu}: {len(w)} samples ({len(w) / 10:.1f} s) from first to last "
              f"kernel: {100 * busy / len(w):.1f} % with a kernel running, mean utilisation "
              f"{sum(w) / len(w):.1f} %")


def executors(path):
    job = re.compile(r"job \d+ \(.*\): ([0-9.]+) s: setup (\d+) ms, reference (\d+) ms, "
                     r"load (\d+) ms, verify (\d+) ms, timing (\d+) ms; device (\d+) ms .*"
                     r"kernels (\d+) ms")
    devices = set(re.findall(r"evaluating job .* on \S+ device (\d+)", open(path).read()))
    first = last = None
    totals = collections.Counter()
    jobs = 0
    for line in open(path):
        t = stamp(line)
        if "evaluating job" in line and t and first is None:
            first = t
        m = job.search(line)
        if not m:
            continue
        jobs += 1
        last = t or last
        for key, value in zip(("wall", "setup", "reference", "load", "verify", "timing", "device",
                               "kernels"), m.groups()):
            totals[key] += float(value) * (1 if key == "wall" else 1e-3)
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
          f"{100 * totals['device'] / max(totals['wall'], 1e-9):.1f} %")


if __name__ == "__main__":
    smi(sys.argv[1])
    executors(sys.argv[2])
