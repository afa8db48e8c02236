"""History, restore, undo and conflicts on a GCS bucket with object versioning
(fake-gcs-server keeps generations), requests counted at a proxy in front of it."""

from __future__ import annotations

from typing import Any

import pytest

from fsseam import ErrorCode, Workspace
from fsseam.testing import HistoryConformance

ED = "str_replace_editor"


class TestGcsHistory(HistoryConformance):
    @pytest.fixture
    def history_workspace(self, gcs_versioned_bucket: str, gcs_options: dict[str, Any]
                          ) -> Workspace:
        return Workspace(f"gs://{gcs_versioned_bucket}/p", storage_options=dict(gcs_options),
                         load_entry_points=False)


def _proxied(counting_proxy: Any, bucket: str) -> Workspace:
    options = {"endpoint_url": counting_proxy.url, "token": "anon", "project": "test"}
    return Workspace(f"gs://{bucket}/p", storage_options=options, load_entry_points=False)


def test_requests_per_call(counting_proxy: Any, gcs_versioned_bucket: str) -> None:
    bucket = gcs_versioned_bucket
    ws = _proxied(counting_proxy, bucket)
    a = ws.context("a")
    assert a.tools.execute("write", {"file_path": "/n.md", "content": "one\ntwo\n"}).ok
    assert a.tools.execute("edit", {"file_path": "/n.md", "old_string": "two",
                                    "new_string": "TWO"}).ok
    counting_proxy.take()
    obj = "p%2Fn.md"
    # undo: one GET of the generation, one upload with ifGenerationMatch; a generation
    # carries no proof that the bucket keeps versions, so the first call of a workspace
    # also asks the bucket, once.
    res = a.tools.execute(ED, {"command": "undo_edit", "path": "/n.md"})
    assert res.ok, res.text
    assert counting_proxy.take() == [
        ("GET", f"/storage/v1/b/{bucket}"),
        ("GET", f"/download/storage/v1/b/{bucket}/o/{obj}"),
        ("POST", f"/upload/storage/v1/b/{bucket}/o"),
    ]
    assert ws.backend.read("n.md").data == b"one\ntwo\n"
    counting_proxy.take()
    # history: one listing
    assert a.tools.execute("history", {"file_path": "/n.md"}).ok
    assert counting_proxy.take() == [("GET", f"/storage/v1/b/{bucket}/o")]
    assert a.tools.execute("read", {"file_path": "/n.md"}).ok
    assert a.tools.execute("edit", {"file_path": "/n.md", "old_string": "one",
                                    "new_string": "1"}).ok
    counting_proxy.take()
    assert a.tools.execute(ED, {"command": "undo_edit", "path": "/n.md"}).ok
    assert counting_proxy.take() == [
        ("GET", f"/download/storage/v1/b/{bucket}/o/{obj}"),
        ("POST", f"/upload/storage/v1/b/{bucket}/o"),
    ]


def test_owners_come_with_the_listing(counting_proxy: Any, gcs_versioned_bucket: str) -> None:
    ws = _proxied(counting_proxy, gcs_versioned_bucket)
    assert ws.context("agent-a").tools.execute("write", {"file_path": "/o.md",
                                                          "content": "1\n"}).ok
    b = ws.context("agent b ü")
    assert b.tools.execute("read", {"file_path": "/o.md"}).ok
    assert b.tools.execute("write", {"file_path": "/o.md", "content": "2\n"}).ok
    # A fresh workspace knows nothing of these writes: the owners are in the listing.
    fresh = _proxied(counting_proxy, gcs_versioned_bucket)
    counting_proxy.take()
    entries = fresh.context("c").fs.history("/o.md").entries
    assert [e.owner for e in entries] == ["agent b ü", "agent-a"]
    assert len(counting_proxy.take()) == 1


def test_a_rewrite_with_the_same_bytes_is_a_new_generation_but_no_change(
    gcs_bucket: str, gcs_options: dict[str, Any]
) -> None:
    ws = Workspace(f"gs://{gcs_bucket}/p", storage_options=dict(gcs_options),
                   load_entry_points=False)
    a = ws.context("a")
    assert a.tools.execute("write", {"file_path": "/g.md", "content": "x = 1\n"}).ok
    assert a.tools.execute("read", {"file_path": "/g.md"}).ok
    from fsseam import Overwrite

    ws.backend.write("g.md", b"x = 1\n", Overwrite())  # same bytes, new generation
    res = a.tools.execute("edit", {"file_path": "/g.md", "old_string": "1", "new_string": "2"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert "Its text is the same as the version you read" in res.text
    res = a.tools.execute("edit", {"file_path": "/g.md", "old_string": "1", "new_string": "2"})
    assert res.ok, res.text
    assert ws.backend.read("g.md").data == b"x = 2\n"


def test_a_bucket_without_versioning_says_how_to_keep_versions(
    gcs_bucket: str, gcs_options: dict[str, Any]
) -> None:
    ws = Workspace(f"gs://{gcs_bucket}/p", storage_options=dict(gcs_options),
                   load_entry_points=False)
    a = ws.context("a")
    assert a.tools.execute("write", {"file_path": "/f.md", "content": "1\n"}).ok
    assert a.tools.execute("write", {"file_path": "/f.md", "content": "2\n"}).ok
    for tool, args in (("history", {"file_path": "/f.md"}),
                       (ED, {"command": "undo_edit", "path": "/f.md"})):
        res = a.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_UNSUPPORTED, res.text
        assert f"enable versioning on bucket {gcs_bucket}" in res.text
    assert ws.backend.read("f.md").data == b"2\n"


def test_many_generations_restore_by_full_id_without_a_listing(
    counting_proxy: Any, gcs_versioned_bucket: str, gcs_server: Any
) -> None:
    """1,500 generations: a full id (a generation) is read directly, one GET and one
    upload, however long the listing would be. (fake-gcs-server answers a versioned
    listing in one page, so the page-following is shown on S3; here the listing of all
    1,500 costs that one request.)"""
    import json
    import urllib.request

    bucket = gcs_versioned_bucket
    generations = []
    for i in range(1500):
        req = urllib.request.Request(
            f"{gcs_server.url}/upload/storage/v1/b/{bucket}/o?uploadType=media&name=p/many.txt",
            data=f"v{i}\n".encode(), method="POST")
        with urllib.request.urlopen(req) as resp:
            generations.append(json.loads(resp.read())["generation"])
    ws = _proxied(counting_proxy, bucket)
    a = ws.context("a")
    assert a.tools.execute("read", {"file_path": "/many.txt"}).ok
    assert a.tools.execute("history", {"file_path": "/many.txt"}).ok  # the bucket look
    counting_proxy.take()
    res = a.tools.execute("restore", {"file_path": "/many.txt", "version": generations[0]})
    assert res.ok, res.text
    assert counting_proxy.take() == [
        ("GET", f"/download/storage/v1/b/{bucket}/o/p%2Fmany.txt"),
        ("POST", f"/upload/storage/v1/b/{bucket}/o"),
    ]
    assert ws.backend.read("many.txt").data == b"v0\n"
    counting_proxy.take()
    kept = ws.backend.versions("many.txt")
    assert [k.version.value for k in kept[1:]] == generations[::-1]
    assert len(counting_proxy.take()) == 1
