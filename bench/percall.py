"""Per-call CPU of the three file tools, for profiles and instruction counts.

Runs one call (``--op``) N times on the benchmark's 2,000-line, 80,000-byte file, after
setup and warm-up, and can wrap only the timed loop in cProfile. Under callgrind, run it
twice (``-n 0`` and ``-n N``) and divide the difference of the instruction counts by N: the
per-call count, repeatable on a loaded machine where wall-clock times are not.

    python bench/percall.py --op local-edit -n 200            # median wall time
    python bench/percall.py --op memory-read -n 500 --profile # cProfile of the loop
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python bench/percall.py --op local-edit -n 100        # instructions (see --help)

Ops: {memory,local}-{read,write,edit}, and the floors: raw-local-write (``pipe_file``),
raw-local-edit (cat + replace + pipe), cat-n (a plain Python ``cat -n`` of 2,000 lines).
S3 and GCS need servers: ``bench/run.py`` measures them.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from run import LINES, cat_n, make_text

OPS = (
    "memory-read", "memory-write", "memory-edit", "local-read", "local-write", "local-edit",
    "raw-local-write", "raw-local-edit", "cat-n",
)


def _setup(op: str, tmp: str) -> Callable[[int], Any]:
    texts = [make_text("a"), make_text("b")]
    if op == "cat-n":
        from fsspec.implementations.memory import MemoryFileSystem

        mfs = MemoryFileSystem(global_store=False, skip_instance_cache=True)
        mfs.pipe_file("/percall/raw.txt", texts[0].encode())
        return lambda i: cat_n(mfs.cat_file("/percall/raw.txt").decode())
    if op.startswith("raw-local"):
        from fsspec.implementations.local import LocalFileSystem

        fs = LocalFileSystem()
        path = os.path.join(tmp, "raw.txt")
        datas = [t.encode() for t in texts]
        fs.pipe_file(path, datas[0])
        if op == "raw-local-write":
            return lambda i: fs.pipe_file(path, datas[i % 2])

        def raw_edit(i: int) -> None:
            old, new = (b"tok-alpha", b"tok-omega") if i % 2 == 0 else (b"tok-omega",
                                                                          b"tok-alpha")
            fs.pipe_file(path, fs.cat_file(path).replace(old, new, 1))

        return raw_edit
    from fsseam import Workspace

    backend, call = op.split("-")
    if backend == "memory":
        from fsseam.backends.memory import isolated_memory_filesystem

        ws = Workspace("memory://percall", fs=isolated_memory_filesystem())
    else:
        os.makedirs(os.path.join(tmp, "ws"))
        ws = Workspace(os.path.join(tmp, "ws"))
    tools = ws.context("percall").tools
    assert tools.execute("write", {"file_path": "/f.txt", "content": texts[0]}).ok

    def check(res: Any) -> None:
        if not res.ok:
            raise RuntimeError(res.text)

    if call == "read":
        def read(i: int) -> None:
            res = tools.execute("read", {"file_path": "/f.txt"})
            check(res)
            assert res.value.returned == LINES

        return read
    if call == "write":
        return lambda i: check(tools.execute(
            "write", {"file_path": "/f.txt", "content": texts[i % 2]}))

    def edit(i: int) -> None:
        old, new = ("tok-alpha", "tok-omega") if i % 2 == 0 else ("tok-omega", "tok-alpha")
        check(tools.execute("edit", {"file_path": "/f.txt", "old_string": old,
                                     "new_string": new}))

    return edit


def _callgrind_total(op: str, n: int, warmup: int) -> int:
    with tempfile.TemporaryDirectory(prefix="fsseam-callgrind-") as d:
        out = os.path.join(d, "cg.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, os.path.abspath(__file__), "--op", op, "-n", str(n),
             "--warmup", str(warmup)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        with open(out) as f:
            for line in f:
                if line.startswith(("totals:", "summary:")):
                    return int(line.split()[1])
    raise RuntimeError("callgrind wrote no totals")


def instructions(op: str, n: int, warmup: int) -> float:
    """Instructions per call: (setup + warm-up + n calls) - (setup + warm-up), over n."""
    return (_callgrind_total(op, n, warmup) - _callgrind_total(op, 0, warmup)) / n


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", choices=OPS, required=True)
    ap.add_argument("-n", type=int, default=200, help="timed calls (0: setup only)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="cProfile the timed calls")
    ap.add_argument("--sort", default="tottime")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--instructions", action="store_true",
                    help="instructions per call under callgrind (two runs: -n 0 and -n N)")
    args = ap.parse_args(argv)
    if args.instructions:
        per_call = instructions(args.op, args.n, args.warmup)
        print(f"{args.op}: {per_call / 1e6:.3f} M instructions per call "
              f"(callgrind, {args.n} calls)")
        return 0
    with tempfile.TemporaryDirectory(prefix="fsseam-percall-",
                                     dir=os.environ.get("FSSEAM_BENCH_DIR")) as tmp:
        call = _setup(args.op, tmp)
        for i in range(args.warmup):
            call(i)
        if args.n == 0:
            return 0  # setup and warm-up only: the baseline of --instructions
        times = []
        prof = cProfile.Profile() if args.profile else None
        for i in range(args.warmup, args.warmup + args.n):
            if prof is not None:
                prof.enable()
            t0 = time.perf_counter()
            call(i)
            times.append(time.perf_counter() - t0)
            if prof is not None:
                prof.disable()
        print(f"{args.op}: median {statistics.median(times) * 1e3:.3f} ms over {args.n} calls")
        if prof is not None:
            stats = pstats.Stats(prof)
            stats.sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
