"""Per-call CPU of the three file tools, for profiles and instruction counts.

Runs one call (``--op``) N times on the benchmark's 2,000-line, 80,000-byte file, after
setup and warm-up, and can wrap only the timed loop in cProfile. Under callgrind, run it
twice (``-n 0`` and ``-n N``) and divide the difference of the instruction counts by N: the
per-call count, repeatable on a loaded machine where wall-clock times are not.

    python bench/percall.py --op local-edit -n 200            # median wall time
    python bench/percall.py --op memory-read -n 500 --profile # cProfile of the loop
    valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python bench/percall.py --op local-edit -n 100        # instructions (see --help)

Ops: {memory,local,local-rename,s3,gcs}-{read,write,edit} (local-rename: the local
backend with ``durability="rename"``, no fsync), and the floors: raw-{local,s3,gcs}-{read,
write,edit} (the raw fsspec calls of bench/run.py; raw-s3-read is one GET), cat-n (a plain
Python ``cat -n`` of the file), durable-{write,edit} (the kernel work of a crash-safe
publish in plain Python, and the reference editor's str_replace publishing that way: the
floors of local-write and local-edit) and editor-{write,edit} (the reference editor's
create and str_replace, no fsync: the floors of local-rename-write and -edit). S3 runs on
moto in this process (its server's CPU is then in the profile too), GCS on
fake-gcs-server.
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
from contextlib import ExitStack
from typing import Any

# gcsfs >= 2026.3 probes every bucket over gRPC unless told not to (see bench/run.py).
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from run import LINES, cat_n, durable_publish, editor_create, editor_str_replace, make_text

OPS = (
    *(f"{b}-{c}" for b in ("memory", "local", "local-rename", "s3", "gcs")
      for c in ("read", "write", "edit")),
    *(f"raw-{b}-{c}" for b in ("local", "s3", "gcs") for c in ("read", "write", "edit")),
    "cat-n", "durable-write", "durable-edit", "editor-write", "editor-edit",
)


def _store(backend: str, tmp: str, stack: ExitStack) -> tuple[str, dict[str, Any] | None,
                                                             Any, str]:
    """(workspace url, storage options, raw filesystem, raw directory) of one backend."""
    if backend in ("local", "local-rename"):
        from fsspec.implementations.local import LocalFileSystem

        os.makedirs(os.path.join(tmp, "ws"))
        os.makedirs(os.path.join(tmp, "raw"))
        options = {"durability": "rename"} if backend == "local-rename" else None
        return os.path.join(tmp, "ws"), options, LocalFileSystem(), os.path.join(tmp, "raw")
    if backend == "s3":
        import s3fs
        from fsseam_s3.testing import moto_server

        ep = stack.enter_context(moto_server(serialize=True))
        bucket = ep.create_bucket()
        raw = s3fs.S3FileSystem(**ep.s3fs_options())
        return f"s3://{bucket}/ws", ep.storage_options(), raw, f"{bucket}/raw"
    if backend == "gcs":
        from fsseam_gcs.testing import fake_gcs_server
        from gcsfs import GCSFileSystem

        gcs = stack.enter_context(fake_gcs_server())
        bucket = gcs.create_bucket()
        raw = GCSFileSystem(**gcs.storage_options(), skip_instance_cache=True)
        return f"gs://{bucket}/ws", gcs.storage_options(), raw, f"{bucket}/raw"
    raise SystemExit(f"no store {backend!r}")


def _swap(i: int) -> tuple[str, str]:
    return ("tok-alpha", "tok-omega") if i % 2 == 0 else ("tok-omega", "tok-alpha")


def _setup(op: str, tmp: str, stack: ExitStack) -> Callable[[int], Any]:
    texts = [make_text("a"), make_text("b")]
    datas = [t.encode() for t in texts]
    if op == "cat-n":
        from fsspec.implementations.memory import MemoryFileSystem

        mfs = MemoryFileSystem(global_store=False, skip_instance_cache=True)
        mfs.pipe_file("/percall/raw.txt", datas[0])
        return lambda i: cat_n(mfs.cat_file("/percall/raw.txt").decode())
    if op.startswith(("durable-", "editor-")):
        return _local_floor(op, tmp, texts)
    if op.startswith("raw-"):
        _, backend, call = op.split("-")
        _, _, fs, raw_dir = _store(backend, tmp, stack)
        path = f"{raw_dir}/raw.txt"
        fs.pipe_file(path, datas[0])
        if call == "read":
            kwargs = {"max_concurrency": 1} if backend == "s3" else {}
            return lambda i: fs.cat_file(path, **kwargs)
        if call == "write":
            return lambda i: fs.pipe_file(path, datas[i % 2])

        def raw_edit(i: int) -> None:
            old, new = _swap(i)
            fs.pipe_file(path, fs.cat_file(path).replace(old.encode(), new.encode(), 1))

        return raw_edit
    from fsseam import Workspace

    backend, call = op.rsplit("-", 1)
    if backend == "memory":
        from fsseam.backends.memory import isolated_memory_filesystem

        ws = Workspace("memory://percall", fs=isolated_memory_filesystem())
    else:
        url, options, _, _ = _store(backend, tmp, stack)
        ws = Workspace(url, storage_options=options)
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
        old, new = _swap(i)
        check(tools.execute("edit", {"file_path": "/f.txt", "old_string": old,
                                     "new_string": new}))

    return edit


def _local_floor(op: str, tmp: str, texts: list[str]) -> Callable[[int], Any]:
    """The floors of a local write and edit (see bench/run.py): with the default
    durability, the crash-safe publish in plain Python; with "rename", the editor."""
    path = os.path.join(tmp, "floor.txt")
    durable_publish(path, texts[0].encode())
    if op == "durable-write":
        return lambda i: durable_publish(path, texts[i % 2].encode())
    if op == "editor-write":
        return lambda i: editor_create(path, texts[i % 2])
    publish = durable_publish if op == "durable-edit" else None
    return lambda i: editor_str_replace(path, *_swap(i), publish=publish)


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


PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hashing (sha256)", ("sha256", "digests.py:digest_version", "digests.py:hasher",
                          "digests.py:version", "digests.py:keeps", "digests.py:remember",
                          "digests.py:forget", "digests.py:check_precondition")),
    ("fsync", ("posix.fsync",)),
    ("lock, rename, temp file", ("flock", "posix.replace", "posix.rename", "posix.unlink",
                                 "posix.link", "fchmod", "posix.open", "posix.close")),
    ("storage I/O and client", ("fsspec", "gcsfs", "s3fs", "aiobotocore", "botocore",
                                "aiohttp", "asyncio", "socket", "_thread.lock", "threading",
                                "posix.read", "posix.write", "posix.fstat", "posix.stat",
                                "posix.lstat", "fsseam_gcs", "fsseam_s3", "objectstore",
                                "backends/", "moto", "werkzeug", "_io.")),
    ("decoding and validation", ("decode", "check_text", "check_sniff", "isascii",
                                 "encode")),
    ("line splitting and counting", ("'split' of", "'splitlines' of", "'count' of",
                                     "text.py")),
    ("rendering", ("render", "'join' of 'str'", "'rfind' of 'str'")),
    ("edit search and splice", ("edits.py", "'find' of 'str'")),
    ("pydantic validation", ("pydantic",)),
    ("event dispatch (pluggy, policy)", ("pluggy", "gate.py", "policy/", "events.py",
                                         "history.py")),
)
"""Where a call's profiled time goes: each function's own time counts for the first phase
one of whose markers is in its name (file and function), the rest is "other Python"."""


def phases(stats: pstats.Stats, calls: int) -> list[tuple[str, float]]:
    """Microseconds per call of each phase (cProfile's self time, so its overhead on
    Python-heavy phases is included)."""
    totals: dict[str, float] = {}
    for (file, _, func), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        name = f"{file}:{func}"
        phase = next((p for p, marks in PHASES if any(m in name for m in marks)),
                     "other Python (tools, seam, outcomes)")
        totals[phase] = totals.get(phase, 0.0) + tottime
    return sorted(((p, t / calls * 1e6) for p, t in totals.items()), key=lambda x: -x[1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", choices=OPS, required=True)
    ap.add_argument("-n", type=int, default=200, help="timed calls (0: setup only)")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--profile", action="store_true", help="cProfile the timed calls")
    ap.add_argument("--phases", action="store_true",
                    help="with --profile: profiled time per call by phase instead of functions")
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
    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(
            prefix="fsseam-percall-", dir=os.environ.get("FSSEAM_BENCH_DIR")))
        call = _setup(args.op, tmp, stack)
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
            if args.phases:
                rows = phases(stats, args.n)
                total = sum(t for _, t in rows)
                for phase, t in rows:
                    print(f"  {phase:40} {t:8.1f} us  {t / total:6.1%}")
                print(f"  {'total (profiled)':40} {total:8.1f} us")
            else:
                stats.sort_stats(args.sort).print_stats(args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
