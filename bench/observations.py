"""Requests an observation store in a bucket adds to each tool call, counted at the server.

Runs one scripted session per store (S3 on a moto server, GCS on fake-gcs-server behind a
counting proxy), with observations in a bucket of their own, and prints a markdown table
(the one in docs/performance.md): per call, the requests the file tools made and the
requests the observation store added, split into reads (GET) and writes (PUT / POST).

    python bench/observations.py            # both stores
    python bench/observations.py --store s3
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

from fsseam import Workspace
from fsseam.observations import ShardedObservations

Counter = Callable[[], tuple[list[str], list[str]]]
"""Requests since the last call: (to the workspace's bucket, to the observations' bucket)."""


def s3_rig(stack: ExitStack) -> tuple[str, str, dict[str, Any], Counter, Callable[..., None]]:
    from fsseam_s3.testing import moto_server

    ep = stack.enter_context(moto_server(serialize=True))
    files, obs = ep.create_bucket(), ep.create_bucket()
    client = ep.client()

    def taken() -> tuple[list[str], list[str]]:
        out = ([m for m, _ in ep.log.to_bucket(files)], [m for m, _ in ep.log.to_bucket(obs)])
        ep.log.clear()
        return out

    def outside(key: str, data: bytes) -> None:
        client.put_object(Bucket=files, Key=key, Body=data)

    return f"s3://{files}/p", f"s3://{obs}/o/", ep.storage_options(), taken, outside


def gcs_rig(stack: ExitStack) -> tuple[str, str, dict[str, Any], Counter, Callable[..., None]]:
    from fsseam_gcs.testing import fake_gcs_server

    from fsseam.testing.proxy import counting_proxy

    gcs = stack.enter_context(fake_gcs_server())
    files, obs = gcs.create_bucket(), gcs.create_bucket()
    proxy = stack.enter_context(counting_proxy(gcs.url))
    admin = gcs.filesystem()

    def taken() -> tuple[list[str], list[str]]:
        got = proxy.take()
        return ([m for m, p in got if f"/{files}/" in p or p.endswith(f"/{files}")],
                [m for m, p in got if f"/{obs}/" in p or p.endswith(f"/{obs}")])

    def outside(key: str, data: bytes) -> None:
        admin.pipe(f"{files}/{key}", data)

    options = {"endpoint_url": proxy.url, "token": "anon", "project": "test"}
    return f"gs://{files}/p", f"gs://{obs}/o/", options, taken, outside


def session(url: str, obs: str, options: dict[str, Any], outside: Callable[..., None]
            ) -> Iterator[tuple[str, Callable[[], Any]]]:
    """(what, the call) in order; each call's requests are counted after it."""
    def worker() -> Workspace:
        return Workspace(url, storage_options=dict(options), observations=obs)

    a, other = worker().context("a"), worker().context("b")
    ed = {"file_path": "/n.md", "old_string": "one", "new_string": "two"}
    yield "cold worker, first call of the owner: write a new file", lambda: a.tools.execute(
        "write", {"file_path": "/n.md", "content": "one\n"})
    yield "warm: read the version it holds", lambda: a.tools.execute(
        "read", {"file_path": "/n.md"})
    yield "warm: ls", lambda: a.tools.execute("ls", {"path": "/"})
    yield "warm: glob", lambda: a.tools.execute("glob", {"pattern": "**/*.md"})
    yield "warm: edit", lambda: a.tools.execute("edit", ed)
    other.tools.execute("read", {"file_path": "/n.md"})
    other.tools.execute("write", {"file_path": "/n.md", "content": "one\n"})
    yield "warm: read a new version (another owner wrote)", lambda: a.tools.execute(
        "read", {"file_path": "/n.md"})
    b = worker().context("a")
    yield "cold worker, same owner: edit", lambda: b.tools.execute("edit", ed | {
        "old_string": "one", "new_string": "three"})
    yield "warm worker whose cache is behind: edit", lambda: a.tools.execute("edit", ed | {
        "old_string": "three", "new_string": "four"})
    store = a.workspace.policy.store  # type: ignore[union-attr]
    assert isinstance(store, ShardedObservations)
    names: dict[int, str] = {}
    for i in range(200):
        names.setdefault(store.shard_of(f"k{i}.txt"), f"k{i}.txt")
    chosen = list(names.values())[:4]
    for name in chosen:
        store.get("a", name)
    patch = "*** Begin Patch\n" + "".join(f"*** Add File: {n}\n+x\n" for n in chosen) + \
        "*** End Patch\n"
    yield "warm: apply_patch creating 4 files in 4 shards", lambda: a.tools.execute(
        "apply_patch", {"patch": patch})
    outside(url.split("/", 3)[3] + "/n.md", b"outside\n")  # before the count starts
    yield "an edit refused after an outside change", lambda: a.tools.execute(
        "edit", ed | {"old_string": "out", "new_string": "x"})


def measure(rig: Callable[[ExitStack], Any]) -> list[tuple[str, list[str], list[str]]]:
    rows = []
    with ExitStack() as stack:
        url, obs, options, taken, outside = rig(stack)
        for what, call in session(url, obs, options, outside):
            taken()
            call()
            files, observed = taken()
            rows.append((what, files, observed))
    return rows


def _shown(methods: list[str]) -> str:
    reads = sum(m in ("GET", "HEAD") for m in methods)
    return f"{len(methods)} ({reads} read, {len(methods) - reads} write)" if methods else "0"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--store", choices=["s3", "gcs", "both"], default="both")
    args = p.parse_args(argv)
    stores = ["s3", "gcs"] if args.store == "both" else [args.store]
    results = {s: measure(s3_rig if s == "s3" else gcs_rig) for s in stores}
    header = "| call | " + " | ".join(
        f"{s.upper()} file requests | {s.upper()} observation requests" for s in stores) + " |"
    print(header)
    print("|" + " --- |" * (1 + 2 * len(stores)))
    for i, (what, _, _) in enumerate(results[stores[0]]):
        cells = []
        for s in stores:
            _, files, observed = results[s][i]
            cells += [_shown(files), _shown(observed)]
        print(f"| {what} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
