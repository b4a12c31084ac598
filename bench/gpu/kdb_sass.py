#!/usr/bin/env python3
"""The instructions of the kernels a tuning run ships: every code object of a kernel db (.kdb).

  kdb_sass.py FILE.kdb [--cuobjdump PATH] [--json OUT]

Reads MIOpen's kern_db table (kernel_name, kernel_args, kernel_blob, kernel_hash,
uncompressed_size; a blob is bzip2-compressed when uncompressed_size is not 0), checks each
blob's md5 against kernel_hash, disassembles the CUDA ones (ELF cubins) with `cuobjdump -sass`
and counts the tensor-core and copy-engine instructions per kernel: HGMMA (Hopper warpgroup
MMA), HMMA (the older warp MMA), UTMALDG (TMA loads), SYNCS (mbarrier operations), and FFMA.
Prints a line per kernel and a summary per kernel name; exits 1 when a blob is corrupt or the
disassembler fails on one. Issue #17's SASS check: the FP16/BF16 tensor-core kernels must show
HGMMA, never HMMA alone.
"""
import argparse
import bz2
import collections
import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile

COUNTED = ("HGMMA", "HMMA", "UTMALDG", "SYNCS", "FFMA")


def blobs(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT kernel_name, kernel_args, kernel_blob, kernel_hash, uncompressed_size FROM kern_db")
    for name, args, blob, digest, size in rows:
        data = bz2.decompress(blob) if size else bytes(blob)
        if size and len(data) != size:
            raise ValueError(f"{name}: {len(data)} bytes decompressed, expected {size}")
        if hashlib.md5(data).hexdigest() != digest:
            raise ValueError(f"{name} [{args[:80]}]: md5 does not match kernel_hash")
        yield name, args, data


def count_sass(cuobjdump, data):
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(data)
        f.flush()
        out = subprocess.run([cuobjdump, "-sass", f.name], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip()[:300])
    counts = collections.Counter()
    for line in out.stdout.splitlines():
        m = re.match(r"\s*/\*[0-9a-f]+\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
        if m and m.group(1) in COUNTED:
            counts[m.group(1)] += 1
    arch = re.search(r"code for (sm_\w+)", out.stdout) or re.search(r"arch = (sm_\w+)", out.stdout)
    return counts, arch.group(1) if arch else "?"


def find_cuobjdump(given):
    """The disassembler: as given, on PATH, or in a CUDA toolkit's usual places."""
    for c in [given, "/usr/local/cuda/bin/cuobjdump", *sorted(
            f"/usr/local/{d}/bin/cuobjdump" for d in os.listdir("/usr/local") if d.startswith("cuda-"))]:
        found = shutil.which(c)
        if found:
            return found
    sys.exit(f"kdb_sass: no cuobjdump (tried {given!r}, /usr/local/cuda*/bin); pass --cuobjdump PATH")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kdb")
    ap.add_argument("--cuobjdump", default="cuobjdump")
    ap.add_argument("--json")
    a = ap.parse_args()
    a.cuobjdump = find_cuobjdump(a.cuobjdump)
    rows, bad = [], 0
    for name, args, data in blobs(a.kdb):
        if not data.startswith(b"\x7fELF"):
            rows.append({"kernel": name, "args": args, "format": "not ELF", "counts": {}})
            continue
        try:
            counts, arch = count_sass(a.cuobjdump, data)
        except RuntimeError as e:
            bad += 1
            print(f"FAIL {name}: {e}")
            continue
        rows.append({"kernel": name, "args": args, "arch": arch, "counts": dict(counts)})
    per = collections.defaultdict(lambda: collections.Counter())
    for r in rows:
        c = r["counts"]
        kind = ("HGMMA" if c.get("HGMMA") else "HMMA" if c.get("HMMA") else
                "FFMA" if c.get("FFMA") else "other")
        per[r["kernel"]][kind] += 1
        print(f"{r['kernel']:<44} {r.get('arch', '?'):<8} " +
              " ".join(f"{k}={c.get(k, 0)}" for k in COUNTED))
    print(f"\n{len(rows)} code objects in {a.kdb}, {bad} failed to disassemble")
    print(f"{'kernel name':<44} builds by their tensor-core instruction")
    for name in sorted(per):
        print(f"{name:<44} " + ", ".join(f"{k} {n}" for k, n in sorted(per[name].items())))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"kdb": os.path.basename(a.kdb), "rows": rows}, f, indent=1)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
