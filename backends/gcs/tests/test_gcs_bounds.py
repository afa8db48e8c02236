"""Frequent old_string and capped listings on gs://, against fake-gcs-server: the refusal
is bounded and writes nothing; a capped listing keeps what its output can show and
counts the rest of every page."""

from __future__ import annotations

import tracemalloc
from typing import Any

from fsseam import Overwrite, Workspace

MiB = 1 << 20


def _ws(counting_proxy: Any, bucket: str, **options: Any) -> Workspace:
    return Workspace(
        f"gs://{bucket}/p",
        storage_options={"endpoint_url": counting_proxy.url, "token": "anon", "project": "test",
                         **options},
    )


def test_an_edit_of_a_in_16_mib_of_a_is_refused_in_bounded_memory(
    counting_proxy: Any, gcs_bucket: str
) -> None:
    ws = _ws(counting_proxy, gcs_bucket)
    ws.backend.write("big.txt", b"a" * (16 * MiB), Overwrite())
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": "/big.txt", "limit": 1}).ok
    counting_proxy.take()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        res = ctx.tools.execute("edit", {"file_path": "/big.txt", "old_string": "a",
                                         "new_string": "b"})
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert res.text.startswith(
        "Error [FS_MULTIPLE_MATCHES]: old_string occurs more than 1000 times in /big.txt, at "
        "line 1. "
    )
    assert all(m == "GET" for m, _ in counting_proxy.take())  # nothing written
    assert peak < 4 * 16 * MiB, peak
    assert ws.backend.read("big.txt").data == b"a" * (16 * MiB)


def test_a_capped_listing_counts_every_page(counting_proxy: Any, gcs_bucket: str) -> None:
    ws = _ws(counting_proxy, gcs_bucket, list_page_size=10)
    for i in range(30):
        ws.backend.write(f"big/f{i:05d}.txt", b"x", Overwrite())
    ws.backend.write("big/sub/x.txt", b"x", Overwrite())
    counting_proxy.take()
    listing = ws.context("a").fs.list("/big", max_chars=160)
    # Rows of 16 characters (/big/f00000.txt and a newline): 10 fill 160.
    assert [e.path for e in listing.entries] == [f"/big/f{i:05d}.txt" for i in range(10)]
    assert listing.more == 31 - 10  # the files and /big/sub, listed once
    assert [m for m, _ in counting_proxy.take()] == ["GET"] * 3  # pages of 10 objects
