"""ls / glob / grep / delete / move on gs://: requests counted at a proxy in front of the
emulator."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

from fsseam import Overwrite, Workspace


def _ws(counting_proxy: Any, bucket: str, **options: Any) -> Workspace:
    return Workspace(
        f"gs://{bucket}/p",
        storage_options={"endpoint_url": counting_proxy.url, "token": "anon", "project": "test",
                         **options},
    )


def _fill(ws: Workspace, n: int) -> None:
    def put(i: int) -> None:
        body = f"line {i}\n{'needle' if i % 10 == 0 else 'hay'}\n".encode()
        ws.backend.write(f"tree/d{i % 7}/f{i:05d}.txt", body, Overwrite())

    # Several at a time: the emulator answers each upload in tens of milliseconds, and the
    # set-up is not what these tests measure.
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(put, range(n)))


def test_glob_is_one_flat_listing_per_page(counting_proxy: Any, gcs_bucket: str) -> None:
    # GCS pages at 1,000 names; the emulator answers everything at once unless asked, so
    # the page is made small here to see the paging.
    ws = _ws(counting_proxy, gcs_bucket, list_page_size=100)
    _fill(ws, 250)
    counting_proxy.take()
    res = ws.context("a").tools.execute("glob", {"pattern": "tree/**/*.txt"})
    assert res.ok, res.text
    assert "(Showing 100 of 250 matching files" in res.text
    assert [m for m, _ in counting_proxy.take()] == ["GET"] * 3  # ceil(250 / 100)


def test_grep_is_one_listing_and_one_get_per_object(counting_proxy: Any,
                                                    gcs_bucket: str) -> None:
    ws = _ws(counting_proxy, gcs_bucket)
    _fill(ws, 60)
    counting_proxy.take()
    res = ws.context("a").tools.execute("grep", {"pattern": "needle", "output_mode": "count"})
    assert res.ok, res.text
    assert res.text.endswith("Total: 6 matching lines in 6 files.")
    assert [m for m, _ in counting_proxy.take()] == ["GET"] * (1 + 60)


def test_delete_and_move_of_observed_objects(counting_proxy: Any, gcs_bucket: str) -> None:
    ws = _ws(counting_proxy, gcs_bucket)
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/d.txt", "content": "x\n"}).ok
    assert ctx.tools.execute("write", {"file_path": "/m.txt", "content": "y\n"}).ok
    counting_proxy.take()
    assert ctx.tools.execute("delete", {"file_path": "/d.txt"}).ok
    assert [m for m, _ in counting_proxy.take()] == ["DELETE"]
    res = ctx.tools.execute("move", {"source_path": "/m.txt", "destination_path": "/n.txt"})
    assert res.ok, res.text
    # The emulator ignores rewriteTo's conditions, so the copy is a GET of the observed
    # generation and a create-only upload (after the listing that keeps the new name from
    # being a directory too), then the guarded DELETE. Against GCS: rewriteTo, the listing
    # and the DELETE.
    assert [m for m, _ in counting_proxy.take()] == ["GET", "GET", "POST", "DELETE"]
    assert ws.backend.read("n.txt").data == b"y\n"
