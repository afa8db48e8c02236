"""ls / glob / grep / delete / move on s3://: requests counted at the moto server."""

from __future__ import annotations

import threading
from typing import Any

from fsseam_s3.testing import moto_server

from fsseam import Workspace
from fsseam.backends import Backend


def methods(moto: Any, bucket: str) -> list[str]:
    out = [m for m, _ in moto.log.to_bucket(bucket)]
    moto.log.clear()
    return out


def fill(client: Any, bucket: str, n: int, prefix: str = "p/tree") -> None:
    for i in range(n):
        client.put_object(Bucket=bucket, Key=f"{prefix}/d{i % 7}/f{i:05d}.txt",
                          Body=f"line {i}\n{'needle' if i % 10 == 0 else 'hay'}\n".encode())


def test_glob_is_one_flat_listing_per_page(moto: Any, bucket: str, s3_direct: Any,
                                           s3_options: dict[str, Any]) -> None:
    fill(s3_direct, bucket, 2500)
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options))
    ctx = ws.context("a")
    moto.log.clear()
    res = ctx.tools.execute("glob", {"pattern": "tree/**/*.txt"})
    assert res.ok, res.text
    assert "(Showing 100 of 2500 matching files" in res.text
    assert methods(moto, bucket) == ["GET"] * 3  # ceil(2500 / 1000) ListObjectsV2 pages
    res = ctx.tools.execute("glob", {"pattern": "tree/d3/*.txt"})
    assert res.text.splitlines()[0] == "/tree/d3/f00003.txt"
    assert methods(moto, bucket) == ["GET"]  # the literal base narrows the listing


def test_grep_is_one_listing_and_one_get_per_object(moto: Any, bucket: str, s3: Any,
                                                    s3_options: dict[str, Any]) -> None:
    fill(s3, bucket, 120)
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options))
    ctx = ws.context("a")
    moto.log.clear()
    res = ctx.tools.execute("grep", {"pattern": "needle", "output_mode": "count"})
    assert res.ok, res.text
    assert res.text.endswith("Total: 12 matching lines in 12 files.")
    got = methods(moto, bucket)
    assert got.count("GET") == 1 + 120 and set(got) == {"GET"}


def test_grep_fetches_concurrently_with_a_bound(s3_options: dict[str, Any]) -> None:
    """A server that lets requests overlap: grep keeps several GETs in flight, never more
    than its bound."""
    with moto_server(serialize=False) as server:
        bucket = server.create_bucket()
        fill(server.client(), bucket, 200)
        ws = Workspace(f"s3://{bucket}/p", storage_options=server.storage_options())
        backend: Backend = ws.backend
        in_flight = peak = 0
        lock = threading.Lock()
        real_read = backend.read

        def counted(key: str) -> Any:
            nonlocal in_flight, peak
            with lock:
                in_flight += 1
                peak = max(peak, in_flight)
            try:
                return real_read(key)
            finally:
                with lock:
                    in_flight -= 1

        backend.read = counted  # type: ignore[method-assign]
        res = ws.context("a").tools.execute("grep", {"pattern": "needle"})
        assert res.ok, res.text
        assert len(res.text.splitlines()) == 20
        assert 1 < peak <= 16


def test_delete_of_an_observed_object_is_one_request(moto: Any, bucket: str,
                                                     s3_options: dict[str, Any]) -> None:
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options))
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/d.txt", "content": "x\n"}).ok
    moto.log.clear()
    assert ctx.tools.execute("delete", {"file_path": "/d.txt"}).ok
    assert methods(moto, bucket) == ["DELETE"]


def test_move_of_an_observed_object_is_at_most_three_requests(
    moto: Any, bucket: str, s3_options: dict[str, Any]
) -> None:
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options))
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/m.txt", "content": "x\n"}).ok
    moto.log.clear()
    res = ctx.tools.execute("move", {"source_path": "/m.txt", "destination_path": "/n.txt"})
    assert res.ok, res.text
    # Against moto, which ignores CopyObject's conditions, the copy is a GET of the observed
    # version and a create-only PUT (after the listing that keeps the new name from being a
    # directory too), then the guarded DELETE. Against AWS it is one guarded CopyObject, the
    # listing and the DELETE: three.
    assert methods(moto, bucket) == ["GET", "GET", "PUT", "DELETE"]
