#!/usr/bin/env python3
"""GPU busy fraction of a pipeline run, two ways (bench/gpu/pipeline.sh calls this).

  busy.py GPU_UTIL_CSV PIPELINE_LOG [CPU_STAT]

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
5. The lanes' host side, from the same job lines: `evaluator ready in` (getting the job's
   evaluator: nothing when reused, else its setup and reference), `code` (waiting for the
   candidates' kernels: the in-search compiles), `plan`, and the rest (the search's own work,
   results); `evaluator new|reused` and `modules N loaded, M reused` where the lines have them.
   The long gaps (no job in any executor of the device) are listed with their start.
   Job lines from 2026-11-25 on also carry `split ms: ready R, plan wait P, plan P, code C,
   strategy S, candidates E, retime T, discard wait D (N dropped), other O`: the job's wall cut
   into the stretches of its thread (worker/job_runner.h), summed here over the jobs with the
   share of the wall they name (older logs have no such lines and print as before).
6. CPU_STAT (optional; search_acceptance.sh writes it): `DATE TIME cpu user nice system idle
   iowait irq softirq ...` lines (/proc/stat's first line, stamped) every second: how busy the
   host's cores were over the eval window (compiles are what the lanes wait for).
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
        waits = sorted(((b[0] - a[1]).total_seconds(), a[1]) for a, b in zip(union, union[1:]))
        waits = [(g, t) for g, t in reversed(waits) if g > 0.1][:12]
        if waits:
            print(f"lane device {device}: longest waits for ready jobs: " + ", ".join(
                f"{g:.1f} s at +{(t - lo).total_seconds():.1f} s" for g, t in waits))
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
    host = re.compile(r"evaluator ready in (\d+) ms, plan (\d+) ms, code (\d+) ms")
    extra = re.compile(r"evaluator (new|reused), modules (\d+) loaded, (\d+) reused")
    split = re.compile(r"split ms: ready (-?\d+), plan wait (-?\d+), plan (-?\d+), code (-?\d+), "
                       r"strategy (-?\d+), candidates (-?\d+), retime (-?\d+), discard wait (-?\d+) "
                       r"\((\d+) dropped\), other (-?\d+)")
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
        h = host.search(line)
        if h:
            for key, value in zip(("ready", "plan", "code"), h.groups()):
                totals[key] += float(value) * 1e-3
        sp = split.search(line)
        if sp:
            totals["split jobs"] += 1
            totals["split wall"] += float(m.group(1))
            for key, value in zip(SPLIT_KEYS, sp.groups()):
                totals["split " + key] += float(value) * (1 if key == "dropped" else 1e-3)
        x = extra.search(line)
        if x:
            totals["evaluators " + x.group(1)] += 1
            totals["modules loaded"] += int(x.group(2))
            totals["modules reused"] += int(x.group(3))
    if not jobs or first is None or last is None:
        print("executors: no eval job lines found")
        return None
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
    # Job wall = device work + lock waits + the host side below (evaluator ready holds the device
    # work of a new evaluator's set-up too, so the rest is a lower bound of the search's own work).
    rest = totals["wall"] - totals["device"] - totals["lock wait"] - totals["code"] - totals["plan"]
    print(f"executors: host side: evaluator ready {totals['ready']:.1f} s, waiting for code (in-search "
          f"compiles) {totals['code']:.1f} s, plan {totals['plan']:.1f} s, the rest {rest:.1f} s; "
          f"not in device work {totals['wall'] - totals['device']:.1f} s of {totals['wall']:.1f} s job wall")
    if totals["split jobs"]:
        print_split(totals)
    if totals["modules loaded"] + totals["modules reused"] > 0:
        print(f"executors: evaluators {int(totals['evaluators new'])} new, "
              f"{int(totals['evaluators reused'])} reused; candidate modules "
              f"{int(totals['modules loaded'])} loaded, {int(totals['modules reused'])} reused")
    return first, last


SPLIT_KEYS = ("ready", "plan wait", "plan", "code", "strategy", "candidates", "retime", "discard wait",
              "dropped", "other")


def print_split(totals):
    """The job lines' `split ms:` summed: every stretch of the executors' job wall by name."""
    wall = totals["split wall"]
    named = sum(totals["split " + k] for k in SPLIT_KEYS if k not in ("dropped", "other"))
    parts = ", ".join(f"{k} {totals['split ' + k]:.1f}" for k in SPLIT_KEYS if k not in ("dropped", "other"))
    print(f"executors: split of {int(totals['split jobs'])} jobs' wall {wall:.1f} s: {parts}, other "
          f"{totals['split other']:.1f} s; named {100 * named / max(wall, 1e-9):.1f} % of the wall; "
          f"{int(totals['split dropped'])} candidates compiled ahead were dropped by stopped searches")


def cpu(path, first, last):
    """Share of the host's CPU time busy (not idle or iowait) between first and last."""
    rows = []
    for line in open(path):
        parts = line.split()
        if len(parts) < 7 or parts[2] != "cpu":
            continue
        try:
            # date's %N has nine digits, strptime's %f takes six
            t = datetime.datetime.strptime(parts[0] + " " + parts[1][:15], "%Y-%m-%d %H:%M:%S.%f")
            values = [int(v) for v in parts[3:]]
        except ValueError:
            continue
        rows.append((t, values))
    inside = [(t, v) for t, v in rows if first <= t <= last]
    if len(inside) < 2:
        print("cpu: no samples in the eval window")
        return
    (_, a), (_, b) = inside[0], inside[-1]
    delta = [y - x for x, y in zip(a, b)]
    total = sum(delta)
    idle = delta[3] + (delta[4] if len(delta) > 4 else 0)
    # Per-sample busy shares: how often the host's cores were nearly all busy.
    shares = []
    for (_, x), (_, y) in zip(inside, inside[1:]):
        d = [q - p for p, q in zip(x, y)]
        if sum(d) > 0:
            shares.append(1 - (d[3] + (d[4] if len(d) > 4 else 0)) / sum(d))
    saturated = sum(1 for v in shares if v >= 0.9)
    print(f"cpu: {100 * (total - idle) / max(total, 1):.1f} % of the host's CPU time busy over the "
          f"eval window; {100 * saturated / max(1, len(shares)):.1f} % of the {len(shares)} one-second "
          f"samples >= 90 % busy (the compiles the lanes wait for compete for the cores)")


if __name__ == "__main__":
    windows = lanes(sys.argv[2])
    smi(sys.argv[1], windows)
    span = executors(sys.argv[2])
    if len(sys.argv) > 3 and span:
        cpu(sys.argv[3], *span)
