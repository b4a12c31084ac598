#!/usr/bin/env python3
"""Do find jobs time the tuned params? From a pipeline log (`evaluated job N (KIND, config C,
solver S, attempt A) in T s: X ms [PARAMS]` lines of the worker): per (config, solver) with both
a perf and a find result, whether the find job's params are the perf job's.

  find_params.py PIPELINE_LOG
"""
import re
import sys

line = re.compile(r"evaluated job \d+ \((perf|find), config (\d+), solver (\w+), attempt \d+\) "
                  r"in [0-9.]+ s: [0-9.e+-]+ ms \[([^\]]*)\]")
seen = {}
for text in open(sys.argv[1]):
    m = line.search(text)
    if m:
        seen[(m.group(2), m.group(3), m.group(1))] = m.group(4)
pairs = [(k[0], k[1]) for k in seen if k[2] == "perf" and (k[0], k[1], "find") in seen]
same = [p for p in pairs if seen[p + ("perf",)] == seen[p + ("find",)]]
print(f"find jobs at the tuned params: {len(same)} of {len(pairs)} (config, solver) pairs with both")
for p in sorted(set(pairs) - set(same))[:10]:
    print(f"  differs: config {p[0]} {p[1]}: perf [{seen[p + ('perf',)]}] find [{seen[p + ('find',)]}]")
