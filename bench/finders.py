"""Finder benchmark: glob and grep on local disk and object storage, side by side in one
run, next to GNU grep, ripgrep and raw fsspec, with requests counted at the server.

    python bench/finders.py --tree /var/tmp/fsseam-tree   # everything (most of an hour on
                                       # 2 cores); the local tree of 200,000 files is
                                       # made there once and reused
    python bench/finders.py --only local          # only the local rows
    python bench/finders.py --only s3,gcs,azure   # only the object stores
    python bench/finders.py --quick    # small sizes, for the smoke test

Rows (medians of a few runs; requests counted at a proxy in front of each emulator):

- local (``finders_local.py``): grep of a rare literal (files_with_matches and content),
  of a regex, and glob ``**/*.py`` over a generated tree of 200,000 files (about 1 GiB),
  through ``ctx.fs`` and through ``ctx.tools.execute``, next to GNU grep (or find) and
  ripgrep given the same exclusions; warm page cache; peak memory of each.
- object stores (S3 on moto, GCS on fake-gcs-server, Azure on Azurite when it is
  installed), what the client spends: requests per call and the client's CPU per call and
  per request, for grep of M objects (10,000; an identifier in 1% of them) cold (content
  index on, none stored), warm (index fresh, then 1% of the files rewritten by an outside
  writer) and with ``content_index=False``, next to a raw sequential loop of ``fs.find`` +
  ``fs.cat_file`` + ``re.search``; and for glob ``**/*.txt`` over N keys (100,000) next to
  raw ``fs.find`` (a filesystem of the same class with no listings cache); peak memory
  (tracemalloc). The client's CPU is this process's (``time.process_time``: every thread,
  fsspec's event loop included); the emulators and the counting proxies run in processes
  of their own (``servers.py``), so it is fsseam's and the fsspec client's alone, and it
  does not depend on where the emulator runs. The emulators' CPU per request is shown
  beside it.
- the same greps with a 20 ms round trip added by the proxy: wall time, which is what
  fetching concurrently buys (emulators answer in microseconds and hide it).

Prints markdown tables on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import statistics
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Any

NEEDLE = "needle_here"
RTT = 0.02
"""A round trip to a cloud store from a machine near it, added by the proxy in front of the
emulator: emulators answer in microseconds, so they hide what fetching concurrently buys."""
GOAL_OBJECTS = 10_000
"""The size the grep goals are stated for."""
WARM_GOAL_S = 1.0
"""The warm grep of 10,000 objects at a 20 ms round trip: under a second."""
COLD_GOAL_X = 25.0
"""The cold grep of 10,000 objects at a 20 ms round trip: 25x faster than the sequential
loop."""
KEYS_PER_REQUEST_GOAL = 1000
"""glob: a listing request per 1,000 keys (the page every store answers at most)."""


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def body(i: int) -> bytes:
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
    lines = [" ".join(words[(i + j + k) % len(words)] for k in range(8)) for j in range(30)]
    if i % 13 == 0:
        lines[5] += f" {NEEDLE}"
    return ("\n".join(lines) + "\n").encode()


def key_of(i: int) -> str:
    return f"m{i % 50}/s{i % 7}/f{i:05d}.txt"


@dataclass(frozen=True)
class Spent:
    """What one call cost: wall seconds, the client's CPU seconds (this process, every
    thread), the requests the server received, and the emulator's CPU seconds (None where
    its process is not known)."""

    seconds: float
    cpu: float
    requests: int
    server_cpu: float | None = None

    @staticmethod
    def median(spent: Sequence[Spent]) -> Spent:
        servers = [s.server_cpu for s in spent if s.server_cpu is not None]
        return Spent(statistics.median(s.seconds for s in spent),
                     statistics.median(s.cpu for s in spent),
                     round(statistics.median(s.requests for s in spent)),
                     statistics.median(servers) if servers else None)

    def per_request(self, seconds: float | None) -> float | None:
        return None if seconds is None or not self.requests else seconds / self.requests


@dataclass
class Row:
    what: str
    ours: Spent
    peer: str
    theirs: Spent
    latency: float = 0.0
    fsseam_peak_mib: float | None = None
    peer_peak_mib: float | None = None
    goal: str = ""
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.ours.seconds / self.theirs.seconds if self.theirs.seconds else float("nan")


def peak_mib(fn: Callable[[], Any]) -> float:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1] / (1 << 20)
    finally:
        tracemalloc.stop()


# -- stores ------------------------------------------------------------------------------

@dataclass
class Store:
    name: str
    url: str
    options: dict[str, Any]
    raw: Callable[[], Any]
    """A fresh raw fsspec filesystem over the same store (no listings cache)."""
    root: str
    count: Callable[[], int]
    """Requests since the last call."""
    put_many: Callable[[dict[str, bytes]], None]
    proxy: Any
    """The counting proxy every request goes through, in a process of its own (its
    ``latency`` can be set: ``servers.RemoteProxy``)."""
    server_cpu: Callable[[], float] | None = None
    """CPU seconds the emulator's processes have used so far."""
    notes: list[str] = field(default_factory=list)

    def primed_raw(self) -> Any:
        """A fresh raw filesystem whose client is made (its first request answered), so a
        measured call holds no one-time setup (botocore's service model, the session): the
        steady cost per request is what is compared. Listings are not cached."""
        fs = self.raw()
        fs.ls(self.root)
        return fs

    def spend(self, fn: Callable[[], Any]) -> tuple[Spent, Any]:
        """Run ``fn`` once: what it cost. The request count and the emulator's CPU are read
        outside the client's CPU window (reading them is the benchmark's work)."""
        self.count()
        server0 = self.server_cpu() if self.server_cpu else None
        t, cpu = time.perf_counter(), time.process_time()
        out = fn()
        cpu, t = time.process_time() - cpu, time.perf_counter() - t
        server = (self.server_cpu() - server0
                  if self.server_cpu and server0 is not None else None)
        return Spent(t, cpu, self.count(), server), out


def threaded_puts(put: Callable[[str, bytes], Any]) -> Callable[[dict[str, bytes]], None]:
    def put_many(objects: dict[str, bytes]) -> None:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda kv: put(*kv), objects.items()))
    return put_many


@contextmanager
def s3_store(stack: ExitStack) -> Iterator[Store]:
    from fsseam_s3.testing import CREDENTIALS, MotoEndpoint, RequestLog
    from s3fs import S3FileSystem
    from servers import moto_process, proxy_process

    moto = stack.enter_context(moto_process())
    # Requests are counted at the proxy (moto runs in its own process, its log is not
    # here); the endpoint only arranges the bucket and the objects, straight to moto.
    ep = MotoEndpoint(url=moto.hello["url"], log=RequestLog())
    client = ep.client()
    bucket = ep.create_bucket(client=client)
    proxy = stack.enter_context(proxy_process(ep.url))

    def raw() -> Any:
        return S3FileSystem(
            key=CREDENTIALS["key"], secret=CREDENTIALS["secret"],
            client_kwargs={"endpoint_url": proxy.url, "region_name": "us-east-1"},
            skip_instance_cache=True, use_listings_cache=False,
        )

    options = {**ep.storage_options(), "endpoint_url": proxy.url}
    put = threaded_puts(lambda k, v: client.put_object(Bucket=bucket, Key=f"b/{k}", Body=v))
    yield Store("s3 (moto)", f"s3://{bucket}/b", options, raw, f"{bucket}/b", proxy.take,
                put, proxy, moto.cpu_seconds, ["moto: a Python server (werkzeug, threaded)"])


@contextmanager
def gcs_store(stack: ExitStack) -> Iterator[Store]:
    from fsseam_gcs.testing import fake_gcs_server
    from gcsfs.core import GCSFileSystem
    from servers import StartedElsewhere, children, proxy_process

    before = children()
    gcs = stack.enter_context(fake_gcs_server())
    server = StartedElsewhere.since(before)
    bucket = gcs.create_bucket()
    proxy = stack.enter_context(proxy_process(gcs.url))
    # GCS answers at most 1,000 objects a page; fake-gcs-server, asked for no page size,
    # answers every object in one page, which no real listing does.
    options = {**gcs.storage_options(), "endpoint_url": proxy.url, "list_page_size": 1000}
    admin = gcs.filesystem()

    def raw() -> Any:
        plain = {k: v for k, v in options.items() if k != "list_page_size"}  # fsseam's
        return GCSFileSystem(**plain, skip_instance_cache=True, use_listings_cache=False)

    put = threaded_puts(lambda k, v: admin.pipe_file(f"{bucket}/b/{k}", v))
    yield Store("gcs (fake-gcs-server)", f"gs://{bucket}/b", options, raw, f"{bucket}/b",
                proxy.take, put, proxy, server.cpu_seconds,
                ["fake-gcs-server: a Go server (memory backend)"])


@contextmanager
def azure_store(stack: ExitStack) -> Iterator[Store]:
    from adlfs import AzureBlobFileSystem
    from servers import StartedElsewhere, children, proxy_process

    from fsseam.testing.azurite import ACCOUNT_NAME, azurite_server, connection_string

    before = children()
    az = stack.enter_context(azurite_server(counted=False))
    server = StartedElsewhere.since(before)
    container = az.create_container()
    proxy = stack.enter_context(proxy_process(az.server_url))
    options = {"connection_string": connection_string(f"{proxy.url}/{ACCOUNT_NAME}")}
    admin = AzureBlobFileSystem(connection_string=az.connection_string,
                                skip_instance_cache=True)

    def raw() -> Any:
        return AzureBlobFileSystem(**options, skip_instance_cache=True,
                                   use_listings_cache=False)

    put = threaded_puts(lambda k, v: admin.pipe_file(f"{container}/b/{k}", v))
    yield Store("azure (Azurite)", f"az://{container}/b", options, raw, f"{container}/b",
                proxy.take, put, proxy, server.cpu_seconds,
                ["Azurite: a Node.js server (in memory)"])


STORES = {"s3": s3_store, "gcs": gcs_store, "azure": azure_store}
PARTS = ("local", *STORES)


def azurite_missing() -> str | None:
    """Why the Azure rows cannot run here (None when they can)."""
    from fsseam.testing.azurite import AzuriteNotFound, find_azurite

    try:
        find_azurite()
        import adlfs  # noqa: F401
    except (AzuriteNotFound, ImportError) as e:
        return str(e)
    return None


RARE = "rare_ident_7c1f"
"""The warm grep's needle: an identifier in 1% of the files, as a symbol an agent looks up
is; every other file holds common words only."""


def grep_key(i: int) -> str:
    # 25 packages of 4 modules: 100 directories of 100 files; the index keeps a shard per
    # first two directory segments, so 25 shards (g/p0 ... g/p24) of 400 files each.
    return f"g/p{i % 25}/m{i % 4}/f{i:05d}.txt"


def grep_body(i: int, edition: int = 0) -> bytes:
    text = body(i)
    if i % 100 == 0:
        text += f"def {RARE}_{edition}(): pass\n".encode()
    return text + f"# edition {edition}\n".encode()


def primed_context(ws: Any) -> Any:
    """An agent's context of ``ws`` whose store client is made (one ``ls`` of the root
    answered), as ``Store.primed_raw``: nothing of the searches is read or cached by it."""
    ctx = ws.context("bench")
    res = ctx.tools.execute("ls", {"path": "/"})
    assert res.ok, res.text
    return ctx


def bench_glob(store: Store, n_glob: int, runs: int) -> list[Row]:
    """glob of ``n_glob`` keys next to raw ``fs.find``, in turns: requests per call (goal:
    one per 1,000 keys) and the client's CPU."""
    from fsseam import Workspace

    log(f"{store.name}: writing {n_glob} objects")
    store.put_many({f"k/{key_of(i)}": body(i) for i in range(n_glob)})
    ctx = primed_context(Workspace(store.url, storage_options=dict(store.options)))

    def fsseam_glob() -> Any:
        res = ctx.tools.execute("glob", {"pattern": "**/*.txt", "path": "/k"})
        assert res.ok, res.text
        return res.value.total

    ours: list[Spent] = []
    theirs: list[Spent] = []
    got = 0
    for _ in range(runs):
        spent, total = store.spend(fsseam_glob)
        ours.append(spent)
        assert total == n_glob, total
        fs = store.primed_raw()  # a fresh one each run: nothing listed before
        spent, got = store.spend(lambda fs=fs: len(fs.find(f"{store.root}/k")))
        theirs.append(spent)
    mine = Spent.median(ours)
    # And one listing of the root above /k, for the ignore files that apply below it.
    pages = math.ceil(n_glob / KEYS_PER_REQUEST_GOAL) + 1
    goal = (f"{KEYS_PER_REQUEST_GOAL:,} keys per request: "
            f"{'met' if mine.requests <= pages else 'not met'}")
    note = (f"{n_glob / max(mine.requests - 1, 1):.0f} keys per listing request of /k "
            f"(and one of the root's ignore files); raw found {got}")
    log(f"{store.name}: glob {note}")
    raw_find = store.primed_raw()
    return [Row(f"glob {n_glob} keys", mine, "fs.find", Spent.median(theirs),
                fsseam_peak_mib=peak_mib(fsseam_glob),
                peer_peak_mib=peak_mib(lambda: raw_find.find(f"{store.root}/k")),
                goal=goal, note=note)]


class GrepBench:
    """grep of ``n`` objects: cold (content index on, none stored yet), warm (index fresh,
    then 1% of the files rewritten by an outside writer), without an index
    (``content_index=False``), next to a sequential raw loop."""

    def __init__(self, store: Store, n: int, runs: int) -> None:
        self.store, self.n, self.runs = store, n, runs
        self.changed = max(1, n // 100)
        self.edition = 0
        self.pattern = re.compile(RARE)
        log(f"{store.name}: writing {n} objects for grep")
        store.put_many({grep_key(i): grep_body(i) for i in range(n)})

    def workspace(self, **kw: Any) -> Any:
        from fsseam import Limits, Workspace

        # The whole search is what is measured: Limits.finder_seconds (20 s) would cut a
        # cold grep of 10,000 objects on a slow emulator short, and a partial answer is
        # checked against nothing.
        return Workspace(self.store.url, storage_options=dict(self.store.options),
                         limits=Limits(finder_seconds=3600), **kw)

    @staticmethod
    def grep_with(ws: Any) -> Callable[[], Any]:
        ctx = primed_context(ws)

        def run() -> Any:
            res = ctx.tools.execute("grep", {"pattern": RARE, "path": "/g",
                                             "max_results": 10_000})
            assert res.ok and not res.value.partial, res.text
            return res.value.files_matched
        return run

    def forget_index(self) -> None:
        fs = self.store.raw()
        index = f"{self.store.root}/.fsseam-index"
        if fs.exists(index):
            fs.rm(index, recursive=True)

    def outside_writer(self) -> None:
        self.edition += 1
        # Spread over the tree: every 100th file from a moving start, matches included.
        start = self.edition % 100
        self.store.put_many({grep_key(i): grep_body(i, self.edition)
                             for i in range(start, self.n, 100)[:self.changed]})

    def raw_loop(self) -> Callable[[], Any]:
        fs = self.store.primed_raw()  # made before the call is measured, as fsseam's is

        def run() -> Any:
            return sum(1 for path in fs.find(f"{self.store.root}/g")
                       if self.pattern.search(fs.cat_file(path).decode()))
        return run

    def repeat(self, times: int, before: Callable[[], Any],
               call: Callable[[], Callable[[], Any]], hits: int) -> list[Spent]:
        spent: list[Spent] = []
        for _ in range(times):
            before()
            fn = call()
            s, got = self.store.spend(fn)
            assert got == hits, (got, hits)
            spent.append(s)
        return spent

    def rows(self, latency: float) -> list[Row]:
        store, runs = self.store, self.runs
        store.proxy.latency = latency
        where = f", {latency * 1000:.0f} ms round trip" if latency else ""
        # 10,000 sequential round trips take minutes: the loop runs once at 20 ms.
        log(f"{store.name}: raw loop{where}")
        raw_hits = len(range(0, self.n, 100))  # the files i % 100 == 0
        loop = Spent.median(self.repeat(1 if latency else runs, lambda: None, self.raw_loop,
                                        raw_hits))
        raw_peak = None if latency else peak_mib(self.raw_loop())
        log(f"{store.name}: cold grep{where}")
        cold = Spent.median(self.repeat(runs, self.forget_index,
                                        lambda: self.grep_with(self.workspace()), raw_hits))
        log(f"{store.name}: warm grep{where}")
        warm_grep = self.grep_with(self.workspace())
        warm_grep()  # the index is fresh
        warm_runs = self.repeat(runs, self.outside_writer, lambda: warm_grep, raw_hits)
        warm = Spent.median(warm_runs)
        log(f"{store.name}: grep without an index{where}")
        plain = Spent.median(self.repeat(
            1 if latency else runs, lambda: None,
            lambda: self.grep_with(self.workspace(content_index=False)), raw_hits))
        store.proxy.latency = 0.0
        peaks: list[float | None] = [None, None, None]
        if not latency:
            self.forget_index()
            peaks[0] = peak_mib(self.grep_with(self.workspace()))
            self.outside_writer()
            peaks[1] = peak_mib(warm_grep)
            peaks[2] = peak_mib(self.grep_with(self.workspace(content_index=False)))
        requests = [s.requests for s in warm_runs]
        log(f"{store.name}: warm grep{where}: requests {requests} = the listing's pages "
            f"(its ranges at once where the store allows) + the shards + {self.n // 100} "
            f"matches + {self.changed} changed + the shards rewritten")
        faster = loop.seconds / cold.seconds

        def judged(goal: str, met: bool) -> str:
            # The goals are stated for 10,000 objects: a smaller run says so, not "met".
            if not latency:
                return ""
            if self.n < GOAL_OBJECTS:
                return f"{goal} at {GOAL_OBJECTS:,} objects, not judged at {self.n:,}"
            return f"{goal}: {'met' if met else 'not met'}"
        return [
            Row(f"grep {self.n} objects cold (index on, none stored){where}", cold,
                "find + cat loop", loop, latency, peaks[0], raw_peak,
                goal=judged(f"{COLD_GOAL_X:.0f}x faster than the loop", faster >= COLD_GOAL_X),
                note=f"{faster:.1f}x faster than the loop"),
            Row(f"grep {self.n} objects warm (needle in 1%, {self.changed} changed outside)"
                f"{where}", warm, "find + cat loop", loop, latency, peaks[1], raw_peak,
                goal=judged(f"under {WARM_GOAL_S:.0f} s", warm.seconds < WARM_GOAL_S),
                note=f"requests {requests}"),
            Row(f"grep {self.n} objects, content_index=False{where}", plain,
                "find + cat loop", loop, latency, peaks[2], raw_peak),
        ]


def bench_store(kind: str, n_glob: int, n_grep: int, runs: int) -> tuple[list[Row], list[str]]:
    with ExitStack() as stack, STORES[kind](stack) as store:
        grep = GrepBench(store, n_grep, runs)
        rows = grep.rows(0.0) + bench_glob(store, n_glob, runs) + grep.rows(RTT)
    for r in rows:
        r.what = f"{store.name}: {r.what}"
    return rows, [f"{store.name}: {n}" for n in store.notes]


def ms(seconds: float | None) -> str:
    if seconds is None or math.isnan(seconds):
        return ""
    v = seconds * 1000
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}" if v >= 1 else f"{v:.2f}"


def render_client(rows: list[Row]) -> str:
    """What the client spends, as the emulator answers (no latency added): the table that
    compares across machines."""
    out = [
        "| what | requests per call (fsseam / raw) | client CPU ms per call (fsseam / raw) "
        "| client CPU ms per request (fsseam / raw) | client CPU fsseam / raw "
        "| emulator CPU ms per request (fsseam / raw) | peak MiB (fsseam / raw) "
        "| wall ms here (fsseam / raw) | goal |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        a, b = r.ours, r.theirs
        server = ("" if a.server_cpu is None else
                  f"{ms(a.per_request(a.server_cpu))} / {ms(b.per_request(b.server_cpu))}")
        mem = ("" if r.fsseam_peak_mib is None
               else f"{r.fsseam_peak_mib:.1f} / {r.peer_peak_mib or 0:.1f}")
        out.append(
            f"| {r.what} ({r.peer}) | {a.requests} / {b.requests} | {ms(a.cpu)} / {ms(b.cpu)} "
            f"| {ms(a.per_request(a.cpu))} / {ms(b.per_request(b.cpu))} "
            f"| {a.cpu / b.cpu if b.cpu else float('nan'):.2f}x | {server} | {mem} "
            f"| {ms(a.seconds)} / {ms(b.seconds)} | {r.goal} |")
    return "\n".join(out)


def render_latency(rows: list[Row]) -> str:
    out = [
        "| what | fsseam | peer | peer time | ratio | requests (fsseam / peer) | peak MiB "
        "(fsseam / peer) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        mem = ("" if r.fsseam_peak_mib is None
               else f"{r.fsseam_peak_mib:.1f} / {r.peer_peak_mib or 0:.1f}")
        out.append(f"| {r.what} | {r.ours.seconds * 1000:.0f} ms | {r.peer} | "
                   f"{r.theirs.seconds * 1000:.0f} ms | {r.ratio:.2f}x | "
                   f"{r.ours.requests} / {r.theirs.requests} | {mem} |")
    notes = [f"- {r.what}: {r.note}" + (f" (goal: {r.goal})" if r.goal else "")
             for r in rows if r.note]
    return "\n".join(out + (["", *notes] if notes else []))


def render(rows: list[Row], notes: list[str]) -> str:
    client = [r for r in rows if not r.latency]
    delayed = [r for r in rows if r.latency]
    parts = [render_client(client)]
    if notes:
        parts.append("\n".join(f"- {n}" for n in notes))
    if delayed:
        parts.append(render_latency(delayed))
    return "\n\n".join(parts)


def commit() -> str:
    try:
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True, cwd=os.path.dirname(__file__) or ".")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--only", default=",".join(PARTS),
                    help=f"the parts to run, comma-separated, of {','.join(PARTS)} (azure "
                         "is left out, saying why, where Azurite is not installed)")
    ap.add_argument("--tree", default=None,
                    help="where the local tree is kept between runs (made there once)")
    ap.add_argument("--grep-objects", type=int, default=None,
                    help="objects of the object-store grep rows (default 10,000)")
    ap.add_argument("--runs", type=int, default=None, help="runs per row (default 3)")
    ap.add_argument("--glob-keys", type=int, default=None,
                    help="keys of the object-store glob rows (default 100,000)")
    args = ap.parse_args(argv)
    parts = [p for p in args.only.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        ap.error(f"unknown part(s) {','.join(unknown)}; known: {','.join(PARTS)}")
    n_glob, n_grep, runs = (200, 40, 1) if args.quick else (100_000, 10_000, 3)
    runs = args.runs or runs
    n_glob = args.glob_keys or n_glob
    n_grep = args.grep_objects or n_grep
    # Its own date, commit and load, kept by bench/report.py: the finders' part of the
    # report page can be run again alone.
    print(f"fsseam finders benchmark, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} at "
          f"commit `{commit()}`, {os.cpu_count()} cores, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    if "local" in parts:
        import finders_local

        spec = finders_local.QUICK if args.quick else finders_local.FULL
        local, about = finders_local.rows(spec, args.tree, runs)
        print(f"Local tree: {about}\n")
        print(finders_local.render(local) + "\n")
    rows: list[Row] = []
    notes: list[str] = []
    for kind in (p for p in parts if p in STORES):
        missing = azurite_missing() if kind == "azure" else None
        if missing:
            notes.append(f"azure: left out ({missing})")
            log(f"azure: left out ({missing})")
            continue
        got, about = bench_store(kind, n_glob, n_grep, runs)
        rows.extend(got)
        notes.extend(about)
    if rows or notes:
        print(render(rows, notes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
