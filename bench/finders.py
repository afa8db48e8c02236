"""Finder benchmark: glob and grep on local disk and object storage, side by side in one
run, next to GNU grep, ripgrep and raw fsspec, with requests counted at the server.

    python bench/finders.py --tree /var/tmp/fsseam-tree   # everything (most of an hour on
                                       # 2 cores); the local tree of 200,000 files is
                                       # made there once and reused
    python bench/finders.py --only local          # only the local rows
    python bench/finders.py --only s3,gcs         # only the object stores
    python bench/finders.py --quick    # small sizes, for the smoke test

Rows (medians of a few runs; requests counted at the moto server or a proxy in front of
fake-gcs-server):

- local (``finders_local.py``): grep of a rare literal (files_with_matches and content),
  of a regex, and glob ``**/*.py`` over a generated tree of 200,000 files (about 1 GiB),
  through ``ctx.fs`` and through ``ctx.tools.execute``, next to GNU grep (or find) and
  ripgrep given the same exclusions; warm page cache; peak memory of each.
- glob over N keys (100,000): fsseam ``glob **/*.txt`` vs raw ``fs.find`` of the same
  filesystem class (a fresh instance, no listings cache, so each run lists again); keys
  per request (goal: 1,000).
- grep of M objects (10,000; an identifier in 1% of them): fsseam ``grep`` cold (content
  index on, none stored), warm (index fresh, then 1% of the files rewritten by an outside
  writer) and with ``content_index=False``, vs a raw sequential loop of ``fs.find`` +
  ``fs.cat_file`` + ``re.search``; peak memory (tracemalloc); once as the emulator answers
  and once with a 20 ms round trip added by the proxy.

Prints markdown tables on stdout; progress goes to stderr.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any

NEEDLE = "needle_here"
RTT = 0.02
"""A round trip to a cloud store from a machine near it, added by the proxy in front of the
emulator: emulators answer in microseconds, so they hide what fetching concurrently buys."""


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


@dataclass
class Row:
    what: str
    fsseam_s: float
    peer: str
    peer_s: float
    fsseam_requests: int | None = None
    peer_requests: int | None = None
    fsseam_peak_mib: float | None = None
    peer_peak_mib: float | None = None
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.fsseam_s / self.peer_s if self.peer_s else float("nan")


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, out = [], None
    for _ in range(runs):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times), out


def interleaved(
    a: Callable[[], Any], b: Callable[[], Any], runs: int
) -> tuple[tuple[float, Any], tuple[float, Any]]:
    """Medians of ``a`` and ``b`` timed in turns, so a slow spell of a shared machine falls
    on both and not on one side's whole series."""
    ta: list[float] = []
    tb: list[float] = []
    out_a = out_b = None
    for _ in range(runs):
        t = time.perf_counter()
        out_a = a()
        ta.append(time.perf_counter() - t)
        t = time.perf_counter()
        out_b = b()
        tb.append(time.perf_counter() - t)
    return (statistics.median(ta), out_a), (statistics.median(tb), out_b)


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
    """CPU seconds the emulator has used so far, where it is a Python process (moto)."""


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

    def put_many(objects: dict[str, bytes]) -> None:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda kv: client.put_object(Bucket=bucket, Key=f"b/{kv[0]}",
                                                       Body=kv[1]), objects.items()))

    def raw() -> Any:
        return S3FileSystem(
            key=CREDENTIALS["key"], secret=CREDENTIALS["secret"],
            client_kwargs={"endpoint_url": proxy.url, "region_name": "us-east-1"},
            skip_instance_cache=True, use_listings_cache=False,
        )

    options = {**ep.storage_options(), "endpoint_url": proxy.url}
    yield Store("s3 (moto)", f"s3://{bucket}/b", options, raw, f"{bucket}/b", proxy.take,
                put_many, proxy, moto.cpu_seconds)


@contextmanager
def gcs_store(stack: ExitStack) -> Iterator[Store]:
    from fsseam_gcs.testing import fake_gcs_server
    from gcsfs.core import GCSFileSystem
    from servers import proxy_process

    gcs = stack.enter_context(fake_gcs_server())
    bucket = gcs.create_bucket()
    proxy = stack.enter_context(proxy_process(gcs.url))
    # GCS answers at most 1,000 objects a page; fake-gcs-server, asked for no page size,
    # answers every object in one page, which no real listing does.
    options = {**gcs.storage_options(), "endpoint_url": proxy.url, "list_page_size": 1000}
    admin = gcs.filesystem()

    def put_many(objects: dict[str, bytes]) -> None:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda kv: admin.pipe_file(f"{bucket}/b/{kv[0]}", kv[1]),
                          objects.items()))

    def raw() -> Any:
        plain = {k: v for k, v in options.items() if k != "list_page_size"}  # fsseam's
        return GCSFileSystem(**plain, skip_instance_cache=True, use_listings_cache=False)

    yield Store("gcs (fake-gcs-server)", f"gs://{bucket}/b", options, raw, f"{bucket}/b",
                proxy.take, put_many, proxy, None)


STORES = {"s3": s3_store, "gcs": gcs_store}
PARTS = ("local", *STORES)


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


def bench_glob(store: Store, n_glob: int, runs: int) -> list[Row]:
    """glob of ``n_glob`` keys: requests per call (goal: one per 1,000 keys)."""
    from fsseam import Workspace

    log(f"{store.name}: writing {n_glob} objects")
    store.put_many({f"k/{key_of(i)}": body(i) for i in range(n_glob)})
    ctx = Workspace(store.url, storage_options=dict(store.options)).context("bench")

    def fsseam_glob() -> Any:
        res = ctx.tools.execute("glob", {"pattern": "**/*.txt", "path": "/k"})
        assert res.ok, res.text
        return res.value.total

    store.count()
    t_ours, total = timed(fsseam_glob, runs)
    req_ours = store.count() // runs
    assert total == n_glob, total

    def raw_find() -> Any:
        return len(store.raw().find(f"{store.root}/k"))

    t_find, got = timed(raw_find, runs)
    req_find = store.count() // runs
    note = f"{n_glob / max(req_ours, 1):.0f} keys per request (goal 1,000); raw found {got}"
    log(f"{store.name}: glob {note}")
    return [Row(f"glob {n_glob} keys", t_ours, "fs.find", t_find, req_ours, req_find,
                peak_mib(fsseam_glob), peak_mib(raw_find), note=note)]


def bench_grep(store: Store, n_grep: int, runs: int) -> list[Row]:
    """grep of ``n_grep`` objects, at 0 and 20 ms round trip: cold (content index on, none
    stored yet), warm (index fresh, then 1% of the files rewritten by an outside writer),
    without an index (``content_index=False``), against a sequential raw loop."""
    from fsseam import Limits, Workspace

    def workspace(**kw: Any) -> Any:
        # The whole search is what is timed: Limits.finder_seconds (20 s) would cut a cold
        # grep of 10,000 objects on a slow emulator short, and a partial answer is checked
        # against nothing.
        return Workspace(store.url, storage_options=dict(store.options),
                         limits=Limits(finder_seconds=3600), **kw)

    log(f"{store.name}: writing {n_grep} objects for grep")
    store.put_many({grep_key(i): grep_body(i) for i in range(n_grep)})
    pattern = re.compile(RARE)
    changed = max(1, n_grep // 100)
    edition = 0

    def grep_with(ws: Any) -> Callable[[], Any]:
        ctx = ws.context("bench")

        def run() -> Any:
            res = ctx.tools.execute("grep", {"pattern": RARE, "path": "/g",
                                             "max_results": 10_000})
            assert res.ok and not res.value.partial, res.text
            return res.value.files_matched
        return run

    def forget_index() -> None:
        fs = store.raw()
        index = f"{store.root}/.fsseam-index"
        if fs.exists(index):
            fs.rm(index, recursive=True)

    def outside_writer() -> None:
        nonlocal edition
        edition += 1
        # Spread over the tree: every 100th file from a moving start, matches included.
        start = edition % 100
        store.put_many({grep_key(i): grep_body(i, edition)
                        for i in range(start, n_grep, 100)[:changed]})

    def raw_grep() -> Any:
        fs = store.raw()
        return sum(1 for path in fs.find(f"{store.root}/g")
                   if pattern.search(fs.cat_file(path).decode()))

    def server_cpu() -> float:
        return store.server_cpu() if store.server_cpu is not None else 0.0

    def cpu_note(start: float, requests: int) -> str:
        """The emulator's CPU per request since ``start`` (moto: a Python server on the
        same cores, which bounds what concurrency buys)."""
        if store.server_cpu is None or not requests:
            return ""
        return f", server CPU {(server_cpu() - start) / requests * 1000:.1f} ms per request"

    rows: list[Row] = []
    raw_peak = 0.0
    for latency in (0.0, RTT):
        store.proxy.latency = latency
        where = f", {latency * 1000:.0f} ms round trip" if latency else ""
        raw_runs = 1 if latency else runs  # 10,000 sequential round trips take minutes
        log(f"{store.name}: raw loop{where}")
        cpu0 = server_cpu()
        t_raw, raw_hits = timed(raw_grep, raw_runs)
        req_raw = store.count() // raw_runs
        raw_cpu = cpu_note(cpu0, req_raw * raw_runs)
        if not latency:
            raw_peak = peak_mib(raw_grep)
            store.count()
        log(f"{store.name}: cold grep{where}")

        def cold() -> Any:
            forget_index()
            return grep_with(workspace())()

        cold_t: list[float] = []
        store.count()
        cpu0 = server_cpu()
        for _ in range(runs):
            forget_index()  # (its listing and deletes are counted, a few requests)
            t, hits = timed(cold, 1)
            cold_t.append(t)
            assert hits == raw_hits, (hits, raw_hits)
        req_cold = store.count() // runs
        cold_cpu = cpu_note(cpu0, req_cold * runs)
        t_cold = statistics.median(cold_t)
        log(f"{store.name}: cold grep{where}: {t_raw / t_cold:.0f}x faster than the loop "
            "(goal at 20 ms: 25x)")
        rows.append(Row(f"grep {n_grep} objects cold (index on, none stored){where}",
                        t_cold, "find + cat loop", t_raw, req_cold, req_raw,
                        None if latency else peak_mib(cold), None if latency else raw_peak,
                        note=f"{t_raw / t_cold:.1f}x faster than the loop{cold_cpu}; "
                             f"the loop{raw_cpu}" if cold_cpu else
                             f"{t_raw / t_cold:.1f}x faster than the loop"))
        log(f"{store.name}: warm grep{where}")
        warm = grep_with(workspace())
        warm()  # the index is fresh
        warm_t: list[float] = []
        requests: list[int] = []
        for _ in range(runs):
            outside_writer()
            store.count()
            t, hits = timed(warm, 1)
            warm_t.append(t)
            requests.append(store.count())
            assert hits == len(range(0, n_grep, 100)), hits  # the files i % 100 == 0
        peak = None
        if not latency:
            outside_writer()
            peak = peak_mib(warm)
            store.count()
        log(f"{store.name}: warm grep{where}: requests {requests} = the listing's pages "
            f"(its ranges at once where the store allows) + the shards + {n_grep // 100} "
            f"matches + {changed} changed + the shards rewritten (goal at 20 ms: under 1 s)")
        rows.append(Row(
            f"grep {n_grep} objects warm (needle in 1%, {changed} changed outside){where}",
            statistics.median(warm_t), "find + cat loop", t_raw,
            int(statistics.median(requests)), req_raw, peak, None if latency else raw_peak,
            note=f"requests {requests}" + (" (goal: under 1 s)" if latency else "")))
        log(f"{store.name}: grep without an index{where}")
        plain = grep_with(workspace(content_index=False))
        store.count()
        t_plain, hits = timed(plain, 1)
        rows.append(Row(f"grep {n_grep} objects, content_index=False{where}", t_plain,
                        "find + cat loop", t_raw, store.count(), req_raw,
                        None if latency else peak_mib(plain), None if latency else raw_peak))
    store.proxy.latency = 0.0
    return rows


def bench_store(kind: str, n_glob: int, n_grep: int, runs: int) -> list[Row]:
    with ExitStack() as stack, STORES[kind](stack) as store:
        rows = bench_grep(store, n_grep, runs) + bench_glob(store, n_glob, runs)
    for r in rows:
        r.what = f"{store.name}: {r.what}"
    return rows


def render(rows: list[Row]) -> str:
    out = [
        "| what | fsseam | peer | peer time | ratio | requests (fsseam / peer) | peak MiB "
        "(fsseam / peer) |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        req = ("" if r.fsseam_requests is None else f"{r.fsseam_requests} / {r.peer_requests}")
        mem = ("" if r.fsseam_peak_mib is None
               else f"{r.fsseam_peak_mib:.1f} / {r.peer_peak_mib:.1f}")
        out.append(f"| {r.what} | {r.fsseam_s * 1000:.0f} ms | {r.peer} | "
                   f"{r.peer_s * 1000:.0f} ms | {r.ratio:.2f}x | {req} | {mem} |")
    notes = [f"- {r.what}: {r.note}" for r in rows if r.note]
    return "\n".join(out + (["", *notes] if notes else []))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--only", default=",".join(PARTS),
                    help=f"the parts to run, comma-separated, of {','.join(PARTS)}")
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
    n_glob, n_grep, runs = (300, 60, 1) if args.quick else (100_000, 10_000, 3)
    runs = args.runs or runs
    n_glob = args.glob_keys or n_glob
    n_grep = args.grep_objects or n_grep
    print(f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {os.cpu_count()} cores,"
          f" load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
    if "local" in parts:
        import finders_local

        spec = finders_local.QUICK if args.quick else finders_local.FULL
        local, about = finders_local.rows(spec, args.tree, runs)
        print(f"Local tree: {about}\n")
        print(finders_local.render(local) + "\n")
    rows: list[Row] = []
    for kind in (p for p in parts if p in STORES):
        rows.extend(bench_store(kind, n_glob, n_grep, runs))
    if rows:
        print(render(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
