"""Frequent old_string and capped listings on gs://, against fake-gcs-server: the refusal
is bounded and writes nothing; a capped listing keeps what its output can show and
counts the rest of every page."""

from __future__ import annotations

from typing import Any

from fsseam import Overwrite, Workspace
from fsseam.testing.stores import BoundsSuite

MiB = 1 << 20


def _ws(counting_proxy: Any, bucket: str, **options: Any) -> Workspace:
    return Workspace(
        f"gs://{bucket}/p",
        storage_options={"endpoint_url": counting_proxy.url, "token": "anon", "project": "test",
                         **options},
    )


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
    # Pages of 10 objects, and one listing of the root above for its ignore files.
    assert [m for m, _ in counting_proxy.take()] == ["GET"] * 4
    ws.context("b").fs.list("/big", max_chars=160, include_ignored=True)
    assert [m for m, _ in counting_proxy.take()] == ["GET"] * 3


class TestBounds(BoundsSuite):
    pass
