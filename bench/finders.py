"""Finder benchmark: glob and grep on local disk and object storage, side by side in one
run, next to GNU grep, ripgrep and raw fsspec, with requests counted at the server.

    python bench/finders.py --tree /var/tmp/fsseam-tree   # everything; the local tree of
                                       # 200,000 files is made there once and reused
    python bench/finders.py --only local          # only the local rows
    python bench/finders.py --only s3,gcs         # only the object stores
    python bench/finders.py --quick    # small sizes, for the smoke test

Rows (medians of a few runs; requests counted at the moto server or a proxy in front of
fake-gcs-server):

- local (``finders_local.py``): grep of a rare literal (files_with_matches and content),
  of a regex, and glob ``**/*.py`` over a generated tree of 200,000 files (about 1 GiB),
  through ``ctx.fs`` and through ``ctx.tools.execute``, next to GNU grep (or find) and
  ripgrep given the same exclusions; warm page cache; peak memory of each.
- glob over N keys: fsseam ``glob **/*.txt`` vs raw ``fs.glob`` and ``fs.find`` of the
  same filesystem class (a fresh instance, no listings cache, so each run lists again).
- grep of M objects: fsseam ``grep`` (files_with_matches) vs a raw sequential loop of
  ``fs.find`` + ``fs.cat_file`` + ``re.search``; peak memory of each (tracemalloc); once
  as the emulator answers and once with a 20 ms round trip added by the proxy.

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
    print(msg, file=sys.stderr, flush=True)


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
    """The counting proxy every request goes through (its ``latency`` can be set)."""


@contextmanager
def s3_store(stack: ExitStack) -> Iterator[Store]:
    from fsseam_s3.testing import CREDENTIALS, moto_server
    from s3fs import S3FileSystem

    from fsseam.testing.proxy import counting_proxy

    ep = stack.enter_context(moto_server(serialize=False))
    bucket = ep.create_bucket()
    client = ep.client()
    proxy = stack.enter_context(counting_proxy(ep.url))

    def count() -> int:
        return len(proxy.take())

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
    yield Store("s3 (moto)", f"s3://{bucket}/b", options, raw, f"{bucket}/b", count,
                put_many, proxy)


@contextmanager
def gcs_store(stack: ExitStack) -> Iterator[Store]:
    from fsseam_gcs.testing import fake_gcs_server
    from gcsfs.core import GCSFileSystem

    from fsseam.testing.proxy import counting_proxy

    gcs = stack.enter_context(fake_gcs_server())
    bucket = gcs.create_bucket()
    proxy = stack.enter_context(counting_proxy(gcs.url))
    options = {**gcs.storage_options(), "endpoint_url": proxy.url}
    admin = gcs.filesystem()

    def count() -> int:
        return len(proxy.take())

    def put_many(objects: dict[str, bytes]) -> None:
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda kv: admin.pipe_file(f"{bucket}/b/{kv[0]}", kv[1]),
                          objects.items()))

    def raw() -> Any:
        return GCSFileSystem(**options, skip_instance_cache=True, use_listings_cache=False)

    yield Store("gcs (fake-gcs-server)", f"gs://{bucket}/b", options, raw, f"{bucket}/b",
                count, put_many, proxy)


STORES = {"s3": s3_store, "gcs": gcs_store}
PARTS = ("local", *STORES)


def bench_store(kind: str, n_glob: int, n_grep: int, runs: int) -> list[Row]:
    from fsseam import Workspace

    rows: list[Row] = []
    with ExitStack() as stack, STORES[kind](stack) as store:
        log(f"{store.name}: writing {n_glob} objects")
        store.put_many({key_of(i): body(i) for i in range(n_glob)})
        ws = Workspace(store.url, storage_options=dict(store.options))
        ctx = ws.context("bench")

        def fsseam_glob() -> Any:
            res = ctx.tools.execute("glob", {"pattern": "**/*.txt"})
            assert res.ok, res.text
            return res.value.total

        store.count()
        t_ours, total = timed(fsseam_glob, runs)
        req_ours = store.count() // runs
        assert total == n_glob, total

        def raw_glob() -> Any:
            return len(store.raw().glob(f"{store.root}/**/*.txt"))

        t_glob, got = timed(raw_glob, runs)
        req_glob = store.count() // runs
        rows.append(Row(f"glob {n_glob} keys", t_ours, "fs.glob", t_glob, req_ours, req_glob,
                        note=f"raw found {got}"))

        def raw_find() -> Any:
            return len(store.raw().find(store.root))

        t_find, _ = timed(raw_find, runs)
        req_find = store.count() // runs
        rows.append(Row(f"glob {n_glob} keys", t_ours, "fs.find", t_find, req_ours, req_find))

        # grep over the first n_grep objects: a prefix of their own
        log(f"{store.name}: writing {n_grep} objects for grep")
        store.put_many({f"g/{key_of(i)}": body(i) for i in range(n_grep)})
        pattern = re.compile(NEEDLE)

        def fsseam_grep() -> Any:
            res = ctx.tools.execute("grep", {"pattern": NEEDLE, "path": "/g",
                                             "max_results": 10_000})
            assert res.ok, res.text
            return res.value.files_matched

        def raw_grep() -> Any:
            fs = store.raw()
            hits = 0
            for path in fs.find(f"{store.root}/g"):
                if pattern.search(fs.cat_file(path).decode()):
                    hits += 1
            return hits

        for latency in (0.0, RTT):
            store.proxy.latency = latency
            store.count()
            t_ours, hits = timed(fsseam_grep, runs)
            req_ours = store.count() // runs
            t_raw, raw_hits = timed(raw_grep, runs)
            req_raw = store.count() // runs
            assert hits == raw_hits, (hits, raw_hits)
            where = f", {latency * 1000:.0f} ms round trip" if latency else ""
            rows.append(Row(f"grep {n_grep} objects{where}", t_ours, "find + cat loop", t_raw,
                            req_ours, req_raw, peak_mib(fsseam_grep), peak_mib(raw_grep)))
        store.proxy.latency = 0.0
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
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (smoke test)")
    ap.add_argument("--only", default=",".join(PARTS),
                    help=f"the parts to run, comma-separated, of {','.join(PARTS)}")
    ap.add_argument("--tree", default=None,
                    help="where the local tree is kept between runs (made there once)")
    args = ap.parse_args(argv)
    parts = [p for p in args.only.split(",") if p]
    unknown = sorted(set(parts) - set(PARTS))
    if unknown:
        ap.error(f"unknown part(s) {','.join(unknown)}; known: {','.join(PARTS)}")
    n_glob, n_grep, runs = (300, 60, 1) if args.quick else (10_000, 1_000, 3)
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
