"""ls / glob / grep / delete / move on s3://: requests counted at the moto server (the
shared finder suite, fsseam.testing.stores, with S3's own page size), and grep's bound on
GETs in flight."""

from __future__ import annotations

import threading
from typing import Any

from fsseam_s3.testing import moto_server

from fsseam import Workspace
from fsseam.backends.objectstore.parallel import READ_MANY_CONCURRENCY
from fsseam.testing.stores import FinderSuite


def fill(client: Any, bucket: str, n: int, prefix: str = "p/tree") -> None:
    for i in range(n):
        client.put_object(Bucket=bucket, Key=f"{prefix}/d{i % 7}/f{i:05d}.txt",
                          Body=f"line {i}\n{'needle' if i % 10 == 0 else 'hay'}\n".encode())


class TestFinders(FinderSuite):
    # S3's own page (1,000 keys): 2,500 objects are three ListObjectsV2 pages.
    glob_objects = 2500
    list_page_size = None
    grep_objects = 120


def test_grep_fetches_concurrently_with_a_bound() -> None:
    """A server that lets requests overlap: grep keeps several GETs in flight, never more
    than its bound (without the content index, whose cold reads of a literal search have a
    bound of their own, ``fsseam.index.source.READ_CONCURRENCY``)."""
    with moto_server(serialize=False) as server:
        bucket = server.create_bucket()
        fill(server.client(), bucket, 200)
        ws = Workspace(f"s3://{bucket}/p", storage_options=server.storage_options(),
                       content_index=False)
        client = ws.backend._client  # type: ignore[attr-defined]
        in_flight = peak = 0
        lock = threading.Lock()
        real_start = client.start_get

        def done(_: Any) -> None:
            nonlocal in_flight
            with lock:
                in_flight -= 1

        def counted(name: str) -> Any:
            nonlocal in_flight, peak
            with lock:
                in_flight += 1
                peak = max(peak, in_flight)
            answer = real_start(name)
            answer.add_done_callback(done)
            return answer

        client.start_get = counted
        res = ws.context("a").tools.execute("grep", {"pattern": "needle"})
        assert res.ok, res.text
        assert len(res.text.splitlines()) == 20
        assert 1 < peak <= READ_MANY_CONCURRENCY
