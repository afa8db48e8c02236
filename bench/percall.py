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
from dataclasses import dataclass
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


def texts(size: int = 0) -> list[str]:
    """The two contents a write alternates: the benchmark's 80 KB file, or with ``size``
    that file followed by filler lines up to ``size`` bytes (``tok-alpha`` still once)."""
    if not size:
        return [make_text("a"), make_text("b")]
    filler = make_text("z").replace("tok-alpha", "tok-filler")
    more = filler * (size // len(filler) + 1)
    return [(make_text(v) + more)[:size] for v in ("a", "b")]


def _raw_call(fs: Any, path: str, call: str, backend: str,
              size: int = 0) -> Callable[[int], Any]:
    """The raw fsspec call of bench/run.py on ``path`` (already written)."""
    datas = [t.encode() for t in texts(size)]
    if call == "read":
        kwargs = {"max_concurrency": 1} if backend == "s3" else {}
        return lambda i: fs.cat_file(path, **kwargs)
    if call == "write":
        return lambda i: fs.pipe_file(path, datas[i % 2])

    def raw_edit(i: int) -> None:
        old, new = _swap(i)
        fs.pipe_file(path, fs.cat_file(path).replace(old.encode(), new.encode(), 1))

    return raw_edit


def _store_call(ws: Any, call: str) -> Callable[[int], Any]:
    """The workspace's backend alone, no tool (``store-read``: ``read`` of the whole object
    and its version; ``store-write``: an unconditional ``write``): the store client's part
    of a call. The write names the version it replaces (as a tool's write after a read
    does: one request), so no listing looks for a directory of that name first."""
    from fsseam.versions import IfMatch, Overwrite

    datas = [make_text("a").encode(), make_text("b").encode()]
    backend = ws.backend
    version = [backend.write("s.txt", datas[0], Overwrite())]
    if call == "store-read":
        return lambda i: backend.read("s.txt")

    def write(i: int) -> None:
        version[0] = backend.write("s.txt", datas[i % 2], IfMatch(version=version[0]))

    return write


def _tool_call(ws: Any, call: str, size: int = 0) -> Callable[[int], Any]:
    """fsseam's tool call through ``ws`` on /f.txt (written here first)."""
    contents = texts(size)
    tools = ws.context("percall").tools
    assert tools.execute("write", {"file_path": "/f.txt", "content": contents[0]}).ok

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
            "write", {"file_path": "/f.txt", "content": contents[i % 2]}))

    def edit(i: int) -> None:
        old, new = _swap(i)
        check(tools.execute("edit", {"file_path": "/f.txt", "old_string": old,
                                     "new_string": new}))

    return edit


def _setup(op: str, tmp: str, stack: ExitStack, size: int = 0) -> Callable[[int], Any]:
    if op == "cat-n":
        from fsspec.implementations.memory import MemoryFileSystem

        mfs = MemoryFileSystem(global_store=False, skip_instance_cache=True)
        mfs.pipe_file("/percall/raw.txt", make_text("a").encode())
        return lambda i: cat_n(mfs.cat_file("/percall/raw.txt").decode())
    if op.startswith(("durable-", "editor-")):
        return _local_floor(op, tmp, [make_text("a"), make_text("b")])
    if op.startswith("raw-"):
        _, backend, call = op.split("-")
        _, _, fs, raw_dir = _store(backend, tmp, stack)
        fs.pipe_file(f"{raw_dir}/raw.txt", texts(size)[0].encode())
        return _raw_call(fs, f"{raw_dir}/raw.txt", call, backend, size)
    from fsseam import Workspace

    backend, call = op.rsplit("-", 1)
    if backend == "memory":
        from fsseam.backends.memory import isolated_memory_filesystem

        ws = Workspace("memory://percall", fs=isolated_memory_filesystem())
    else:
        url, options, _, _ = _store(backend, tmp, stack)
        ws = Workspace(url, storage_options=options)
    return _tool_call(ws, call, size)


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


# -- client CPU per request: every server in a process of its own -------------------------
CPU_STORES = ("memory", "local", "s3", "gcs", "azure")


@dataclass
class CpuStore:
    """One store for the CPU table: fsseam's workspace and raw fsspec on the same storage,
    every request through a counting proxy in a process of its own (None: no requests)."""

    name: str
    workspace: Any
    raw: Any
    raw_path: str
    peer: str
    take: Callable[[], int] | None
    note: str
    replay: Callable[[bool], None] | None = None
    """The proxy's replaying switch (None: no proxy): the store rows are measured again
    with the answers replayed, no emulator working beside the client."""


def _cpu_store(name: str, tmp: str, stack: ExitStack) -> CpuStore:
    from servers import moto_process, proxy_process

    from fsseam import Workspace

    if name in ("memory", "local"):
        from fsspec.implementations.local import LocalFileSystem

        from fsseam.backends.memory import isolated_memory_filesystem

        if name == "memory":
            mfs = isolated_memory_filesystem()
            return CpuStore(name, Workspace("memory://percall/ws", fs=mfs), mfs,
                            "/percall/raw.txt", "fsspec memory", None, "no requests")
        os.makedirs(os.path.join(tmp, "ws"))
        return CpuStore(name, Workspace(os.path.join(tmp, "ws")), LocalFileSystem(),
                        os.path.join(tmp, "raw.txt"), "fsspec local", None,
                        "no requests; files under FSSEAM_BENCH_DIR or the system's "
                        "temporary directory")
    if name == "s3":
        import s3fs
        from fsseam_s3.testing import CREDENTIALS, MotoEndpoint, RequestLog

        moto = stack.enter_context(moto_process())
        ep = MotoEndpoint(url=moto.hello["url"], log=RequestLog())
        bucket = ep.create_bucket(client=ep.client())
        proxy = stack.enter_context(proxy_process(ep.url))
        raw = s3fs.S3FileSystem(
            key=CREDENTIALS["key"], secret=CREDENTIALS["secret"], skip_instance_cache=True,
            client_kwargs={"endpoint_url": proxy.url, "region_name": "us-east-1"})
        ws = Workspace(f"s3://{bucket}/ws",
                       storage_options={**ep.storage_options(), "endpoint_url": proxy.url})
        return CpuStore(name, ws, raw, f"{bucket}/raw.txt", "s3fs", proxy.take,
                        "moto server and counting proxy in processes of their own",
                        proxy.replay)
    if name == "gcs":
        from fsseam_gcs.testing import fake_gcs_server
        from gcsfs.core import GCSFileSystem

        gcs = stack.enter_context(fake_gcs_server())
        bucket = gcs.create_bucket()
        proxy = stack.enter_context(proxy_process(gcs.url))
        options = {**gcs.storage_options(), "endpoint_url": proxy.url}
        return CpuStore(name, Workspace(f"gs://{bucket}/ws", storage_options=options),
                        GCSFileSystem(**options, skip_instance_cache=True),
                        f"{bucket}/raw.txt", "gcsfs", proxy.take,
                        "fake-gcs-server (Go) and counting proxy in processes of their own",
                        proxy.replay)
    if name == "azure":
        import adlfs

        from fsseam.testing.azurite import ACCOUNT_NAME, azurite_server, connection_string

        az = stack.enter_context(azurite_server(counted=False))
        container = az.create_container()
        proxy = stack.enter_context(proxy_process(az.server_url))
        options = {"connection_string": connection_string(f"{proxy.url}/{ACCOUNT_NAME}")}
        return CpuStore(name, Workspace(f"az://{container}/ws", storage_options=options),
                        adlfs.AzureBlobFileSystem(**options, skip_instance_cache=True),
                        f"{container}/raw.txt", "adlfs", proxy.take,
                        "Azurite (node) and counting proxy in processes of their own",
                        proxy.replay)
    raise SystemExit(f"no store {name!r}")


@dataclass
class CpuRow:
    store: str
    call: str
    peer: str
    cpu_ms: float
    """Client CPU per call (process time: every thread, the store library's loop too; the
    median of the rounds)."""
    requests: float | None
    raw_cpu_ms: float
    raw_requests: float | None
    replayed: tuple[float, float] | None = None
    """The store rows' client CPU per call (fsseam, raw) with the proxy replaying the
    answers: the same requests and bytes, no emulator at work on the client's cores."""

    @staticmethod
    def per_request(cpu_ms: float, requests: float | None) -> str:
        return "n/a" if not requests else f"{cpu_ms / requests:.3f}"

    def replayed_per_request(self) -> str:
        if self.replayed is None:
            return "n/a"
        return (f"{self.per_request(self.replayed[0], self.requests)} / "
                f"{self.per_request(self.replayed[1], self.raw_requests)}")


def _rounds(sides: tuple[Callable[[int], Any], ...], n: int, rounds: int,
            take: Callable[[], int] | None) -> tuple[list[list[float]], list[int]]:
    """Each side's CPU seconds per call in each round, the sides interleaved round by round
    (one round that meets another process's burst does not move it), and the requests
    each sent in all; a side's first 5 calls warm it (connections, caches, versions)."""
    for side in sides:
        for i in range(5):
            side(i)
    cpu: list[list[float]] = [[] for _ in sides]
    requests = [0 for _ in sides]
    for r in range(rounds):
        for k, side in enumerate(sides):
            if take is not None:
                take()
            start = time.process_time()
            for i in range(5 + r * n, 5 + (r + 1) * n):
                side(i)
            cpu[k].append((time.process_time() - start) / n)
            if take is not None:
                requests[k] += take()
    return cpu, requests


def cpu_rows(store: CpuStore, n: int, rounds: int) -> list[CpuRow]:
    """fsseam's and the raw peer's client CPU per call (the median over ``rounds`` rounds
    of ``n`` calls, the two sides interleaved) and requests per call (all rounds); the
    store rows again with the answers replayed, where the store has a proxy."""
    store.raw.pipe_file(store.raw_path, make_text("a").encode())
    rows = []
    for call in ("read", "write", "edit", "store-read", "store-write"):
        fsseam = (_store_call(store.workspace, call) if call.startswith("store-")
                  else _tool_call(store.workspace, call))
        sides = (fsseam, _raw_call(store.raw, store.raw_path, call.removeprefix("store-"),
                                   store.name))
        cpu, requests = _rounds(sides, n, rounds, store.take)
        calls = n * rounds
        counted = store.take is not None
        row = CpuRow(
            store.name, call, store.peer, statistics.median(cpu[0]) * 1e3,
            requests[0] / calls if counted else None, statistics.median(cpu[1]) * 1e3,
            requests[1] / calls if counted else None)
        if call.startswith("store-") and store.replay is not None:
            # Replayed answers are right for these two calls: a read of an object nobody
            # changes, a write whose condition names the version the last answer gave.
            store.replay(True)
            try:
                cpu, _ = _rounds(sides, n, rounds, store.take)
            finally:
                store.replay(False)
            row.replayed = (statistics.median(cpu[0]) * 1e3, statistics.median(cpu[1]) * 1e3)
        rows.append(row)
    return rows


def cpu_table(names: list[str], n: int, rounds: int) -> str:
    """The table: the tool calls (read, write, edit) and the store alone (store-read,
    store-write: the workspace's backend, no tool), each beside raw fsspec's same I/O."""
    out = [
        "| store | call | fsseam CPU ms/call | requests/call | fsseam CPU ms/request | "
        "raw peer | raw CPU ms/call | requests/call | raw CPU ms/request | "
        "ms/request replayed, fsseam / raw |",
        "|---|---|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    notes = []
    for name in names:
        with ExitStack() as stack:
            tmp = stack.enter_context(tempfile.TemporaryDirectory(
                prefix="fsseam-percall-", dir=os.environ.get("FSSEAM_BENCH_DIR")))
            if name == "azure" and not _azurite_found():
                notes.append("azure: skipped (Azurite not found: .ci/node or npm)")
                continue
            store = _cpu_store(name, tmp, stack)
            notes.append(f"{name}: {store.note}")
            for row in cpu_rows(store, n, rounds):
                req = "n/a" if row.requests is None else f"{row.requests:g}"
                raw_req = "n/a" if row.raw_requests is None else f"{row.raw_requests:g}"
                out.append(
                    f"| {row.store} | {row.call} | {row.cpu_ms:.3f} | {req} | "
                    f"{CpuRow.per_request(row.cpu_ms, row.requests)} | {row.peer} | "
                    f"{row.raw_cpu_ms:.3f} | {raw_req} | "
                    f"{CpuRow.per_request(row.raw_cpu_ms, row.raw_requests)} | "
                    f"{row.replayed_per_request()} |")
    return "\n".join(out + [""] + [f"- {x}" for x in notes])


def _azurite_found() -> bool:
    from fsseam.testing.azurite import AzuriteNotFound, find_azurite

    try:
        find_azurite()
    except AzuriteNotFound:
        return False
    return True


def _callgrind_total(op: str, n: int, warmup: int, mib: float = 0) -> int:
    with tempfile.TemporaryDirectory(prefix="fsseam-callgrind-") as d:
        out = os.path.join(d, "cg.out")
        subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, os.path.abspath(__file__), "--op", op, "-n", str(n),
             "--warmup", str(warmup), "--mib", str(mib)],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        with open(out) as f:
            for line in f:
                if line.startswith(("totals:", "summary:")):
                    return int(line.split()[1])
    raise RuntimeError("callgrind wrote no totals")


def instructions(op: str, n: int, warmup: int, mib: float = 0) -> float:
    """Instructions per call: (setup + warm-up + n calls) - (setup + warm-up), over n (the
    file of ``mib`` MiB, as ``--mib`` makes it)."""
    return (_callgrind_total(op, n, warmup, mib) - _callgrind_total(op, 0, warmup, mib)) / n


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


def versus(op: str, other: str, n: int, warmup: int, size: int) -> str:
    """``op`` and ``other`` timed in turn, call by call, in this process (so load and drift
    hit both alike): medians, their ratio, and each one's client CPU per call."""
    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(
            prefix="fsseam-percall-", dir=os.environ.get("FSSEAM_BENCH_DIR")))
        calls = (_setup(op, tmp, stack, size), _setup(other, tmp, stack, size))
        for i in range(warmup):
            for call in calls:
                call(i)
        walls: tuple[list[float], list[float]] = ([], [])
        cpus = [0.0, 0.0]
        for i in range(warmup, warmup + n):
            for k, call in enumerate(calls):
                c0, t0 = time.process_time(), time.perf_counter()
                call(i)
                walls[k].append(time.perf_counter() - t0)
                cpus[k] += time.process_time() - c0
    a, b = (statistics.median(w) * 1e3 for w in walls)
    return (f"{op}: median {a:.3f} ms, CPU {cpus[0] / n * 1e3:.3f} ms/call; {other}: "
            f"median {b:.3f} ms, CPU {cpus[1] / n * 1e3:.3f} ms/call; ratio {a / b:.2f} "
            f"({n} calls each, interleaved{f', {size:,}-byte file' if size else ''})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--op", choices=OPS)
    ap.add_argument("--cpu", metavar="STORES",
                    help="client CPU per call and per request of read, write and edit, "
                         "fsseam beside raw fsspec, on these stores (comma-separated "
                         f"subset of {','.join(CPU_STORES)}); -n calls per round")
    ap.add_argument("--rounds", type=int, default=5, help="with --cpu: interleaved rounds")
    ap.add_argument("--versus", metavar="OP", choices=OPS,
                    help="time --op and this op in turn, call by call: medians and ratio")
    ap.add_argument("--mib", type=float, default=0,
                    help="the file is this many MiB (the 80 KB file and filler lines)")
    ap.add_argument("--numpy", action="store_true",
                    help="load numpy first, as a process doing data work has it loaded "
                         "(fsseam then counts a large read's newlines with it)")
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
    if args.numpy:
        import numpy  # noqa: F401  (loaded: fsseam.text uses it, never imports it)
    if args.cpu:
        names = [x.strip() for x in args.cpu.split(",") if x.strip()]
        for x in names:
            if x not in CPU_STORES:
                ap.error(f"unknown store {x!r} for --cpu")
        print(cpu_table(names, args.n, args.rounds))
        return 0
    if args.op is None:
        ap.error("--op or --cpu is required")
    size = int(args.mib * (1 << 20))
    if args.versus:
        print(versus(args.op, args.versus, args.n, args.warmup, size))
        return 0
    if args.instructions:
        per_call = instructions(args.op, args.n, args.warmup, args.mib)
        print(f"{args.op}: {per_call / 1e6:.3f} M instructions per call "
              f"(callgrind, {args.n} calls)")
        return 0
    with ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(
            prefix="fsseam-percall-", dir=os.environ.get("FSSEAM_BENCH_DIR")))
        call = _setup(args.op, tmp, stack, size)
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
