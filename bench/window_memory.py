"""Peak memory of a window read (lines 1-2000) of a large local file.

    python bench/window_memory.py [--size-mib 1024]

Prints one table row: file size, time, lines returned, peak RSS above the baseline taken
after imports and workspace setup (target: under 64 MiB for 1 GiB).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time

from fsseam import Workspace


def make_file(path: str, size: int) -> None:
    line = b"".join(b"%07d the quick brown fox jumps over the lazy dog\n" % i for i in range(20000))
    with open(path, "wb") as f:
        written = 0
        while written < size:
            f.write(line)
            written += len(line)


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mib", type=int, default=1024)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=os.environ.get("FSSEAM_BENCH_DIR")) as d:
        make_file(os.path.join(d, "big.log"), args.size_mib << 20)
        ctx = Workspace(d).context("bench")
        base = peak_rss_mib()
        t0 = time.perf_counter()
        res = ctx.tools.execute("read", {"file_path": "/big.log", "offset": 1, "limit": 2000})
        took = time.perf_counter() - t0
        assert res.ok, res.text
        peak = peak_rss_mib() - base
        print(
            "| backend | file | window | returned | total lines | seconds "
            "| peak RSS above baseline |"
        )
        print("|---|---|---|---|---|---|---|")
        print(
            f"| local | {args.size_mib} MiB | 1-2000 | {res.value.returned} | {res.value.total} "
            f"| {took:.2f} | {peak:.1f} MiB |"
        )


if __name__ == "__main__":
    main()
