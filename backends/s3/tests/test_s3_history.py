"""History, restore, undo and conflicts on a versioned S3 bucket (moto), with the requests
each call costs counted at the server."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import fsseam_s3.client
import pytest

from fsseam import ErrorCode, Workspace
from fsseam.testing import HistoryConformance

ED = "str_replace_editor"


class TestS3History(HistoryConformance):
    @pytest.fixture
    def history_workspace(self, versioned_bucket: str, s3_options: dict[str, Any]) -> Workspace:
        return Workspace(f"s3://{versioned_bucket}/p", storage_options=dict(s3_options),
                         load_entry_points=False)


def _requests(moto: Any, bucket: str) -> list[tuple[str, str, set[str], int]]:
    """(method, path, query keys, status) of each request to ``bucket``; the log cleared."""
    out = [(r.method, r.path, set(parse_qs(r.query, keep_blank_values=True)), r.status)
           for r in moto.log.records_to(bucket)]
    moto.log.clear()
    return out


def test_requests_per_call(versioned_bucket: str, s3_options: dict[str, Any], moto: Any) -> None:
    bucket = versioned_bucket
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options), load_entry_points=False)
    a, b = ws.context("a"), ws.context("b")
    key = f"/{bucket}/p/n.md"
    assert a.tools.execute("write", {"file_path": "/n.md", "content": "one\ntwo\n"}).ok
    assert a.tools.execute("edit", {"file_path": "/n.md", "old_string": "two",
                                    "new_string": "TWO"}).ok
    moto.log.clear()

    # history: one ListObjectVersions page (its VersionIds prove the bucket keeps versions).
    res = a.tools.execute("history", {"file_path": "/n.md"})
    assert res.ok, res.text
    assert _requests(moto, bucket) == [
        ("GET", f"/{bucket}", {"versions", "prefix", "max-keys", "encoding-type"}, 200)]

    # undo: GET of the old version by its VersionId, then one conditional PUT.
    res = a.tools.execute(ED, {"command": "undo_edit", "path": "/n.md"})
    assert res.ok, res.text
    assert _requests(moto, bucket) == [("GET", key, {"versionId"}, 200),
                                       ("PUT", key, set(), 200)]
    assert ws.backend.read("n.md").data == b"one\ntwo\n"

    # restore of a full version id: its GET by VersionId (no listing), one conditional PUT.
    version = a.tools.execute("history", {"file_path": "/n.md"}).value.entries[1].id
    moto.log.clear()
    res = a.tools.execute("restore", {"file_path": "/n.md", "version": version})
    assert res.ok, res.text
    assert [(m, "versions" in q, "versionId" in q) for m, _, q, _ in _requests(moto, bucket)] == [
        ("GET", False, True), ("PUT", False, False)]

    # A refused edit costs its one GET: the diff comes from what the agent read.
    assert b.tools.execute("read", {"file_path": "/n.md"}).ok
    assert b.tools.execute("edit", {"file_path": "/n.md", "old_string": "one",
                                    "new_string": "ONE"}).ok
    moto.log.clear()
    res = a.tools.execute("edit", {"file_path": "/n.md", "old_string": "TWO",
                                   "new_string": "2"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert "\n-one\n+ONE\n" in res.text
    assert [(m, p) for m, p, _, _ in _requests(moto, bucket)] == [("GET", key)]
    # and the retry, without a read: GET + PUT, as any edit.
    res = a.tools.execute("edit", {"file_path": "/n.md", "old_string": "TWO",
                                   "new_string": "2"})
    assert res.ok, res.text
    assert [m for m, *_ in _requests(moto, bucket)] == ["GET", "PUT"]

    # Writing back what was read: one 1-byte ranged GET instead of a PUT.
    assert a.tools.execute("read", {"file_path": "/n.md"}).ok
    moto.log.clear()
    res = a.tools.execute("write", {"file_path": "/n.md", "content": "ONE\n2\n"})
    assert res.ok and res.value.unchanged, res.text
    records = moto.log.records_to(bucket)
    assert [(r.method, r.response_bytes) for r in records] == [("GET", 1)]


def test_undo_refused_costs_a_look_and_changes_nothing(
    versioned_bucket: str, s3_options: dict[str, Any], moto: Any
) -> None:
    bucket = versioned_bucket
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options), load_entry_points=False)
    a, b = ws.context("a"), ws.context("b")
    assert a.tools.execute("write", {"file_path": "/r.md", "content": "x\n"}).ok
    assert a.tools.execute("write", {"file_path": "/r.md", "content": "y\n"}).ok
    assert b.tools.execute("read", {"file_path": "/r.md"}).ok
    assert b.tools.execute("write", {"file_path": "/r.md", "content": "z\n"}).ok
    moto.log.clear()
    res = a.tools.execute(ED, {"command": "undo_edit", "path": "/r.md"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    key = f"/{bucket}/p/r.md"
    # GET of the old version, the PUT S3 refuses (412), the template's HEAD (was it our
    # write?), and one GET of the current version for the diff.
    assert [(m, p, s) for m, p, _, s in _requests(moto, bucket)] == [
        ("GET", key, 200), ("PUT", key, 412), ("HEAD", key, 200), ("GET", key, 206)]
    assert ws.backend.read("r.md").data == b"z\n"


def test_owners_are_in_the_objects_metadata(
    versioned_bucket: str, s3_options: dict[str, Any], s3: Any, moto: Any
) -> None:
    bucket = versioned_bucket
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options), load_entry_points=False)
    assert ws.backend.capabilities.write_meta
    assert ws.context("agent-a").tools.execute("write", {"file_path": "/o.md",
                                                          "content": "1\n"}).ok
    b = ws.context("Agent B ü")  # S3 metadata is ASCII: the owner is stored percent-encoded
    assert b.tools.execute("read", {"file_path": "/o.md"}).ok
    assert b.tools.execute("write", {"file_path": "/o.md", "content": "2\n"}).ok
    head = s3.head_object(Bucket=bucket, Key="p/o.md")
    assert head["Metadata"]["fsseam-owner"] == "Agent%20B%20%C3%BC"
    # A fresh workspace (another process, say) knows no owner from one listing...
    fresh = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options),
                      load_entry_points=False)
    moto.log.clear()
    assert [e.owner for e in fresh.context("c").fs.history("/o.md").entries] == [None, None]
    assert len(moto.log.records_to(bucket)) == 1
    # ...unless asked to: one HEAD per version shown.
    asking = Workspace(f"s3://{bucket}/p",
                       storage_options={**s3_options, "history_owners": True},
                       load_entry_points=False)
    moto.log.clear()
    owners = [e.owner for e in asking.context("c").fs.history("/o.md").entries]
    assert owners == ["Agent B ü", "agent-a"]
    assert sorted(r.method for r in moto.log.records_to(bucket)) == ["GET", "HEAD", "HEAD"]


def test_an_unversioned_bucket_says_how_to_keep_versions(
    bucket: str, s3_options: dict[str, Any]
) -> None:
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options), load_entry_points=False)
    a = ws.context("a")
    assert a.tools.execute("write", {"file_path": "/f.md", "content": "1\n"}).ok
    assert a.tools.execute("write", {"file_path": "/f.md", "content": "2\n"}).ok
    for tool, args in (("history", {"file_path": "/f.md"}),
                       (ED, {"command": "undo_edit", "path": "/f.md"})):
        res = a.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_UNSUPPORTED, res.text
        assert f"enable versioning on bucket {bucket}" in res.text
    assert ws.backend.read("f.md").data == b"2\n"


def _listings(moto: Any, bucket: str) -> list[dict[str, list[str]]]:
    """The query of each ListObjectVersions request to ``bucket``; the log cleared."""
    out = [parse_qs(r.query, keep_blank_values=True) for r in moto.log.records_to(bucket)
           if "versions" in parse_qs(r.query, keep_blank_values=True)]
    moto.log.clear()
    return out


def test_versions_past_the_first_listing_page_are_reachable_and_listing_is_bounded(
    versioned_bucket: str, s3_options: dict[str, Any], s3: Any, moto: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """150 versions in pages of 100 (S3's pages are 1,000: the page is made smaller so the
    suite need not put 1,500): the oldest used to be "no kept version", since only the
    first ListObjectVersions page was read. A full id is now read directly, a prefix
    through a listing that follows pages up to ``max_versions_listed``."""
    monkeypatch.setattr(fsseam_s3.client, "PAGE", 100)
    bucket = versioned_bucket
    ids = [s3.put_object(Bucket=bucket, Key="p/many.txt", Body=f"v{i}\n".encode())["VersionId"]
           for i in range(150)]
    # Keys that share the name as a prefix are listed after it: never paged through.
    for i in range(3):
        s3.put_object(Bucket=bucket, Key="p/many.txt.bak", Body=f"b{i}\n".encode())
    ws = Workspace(f"s3://{bucket}/p",
                   storage_options={**s3_options, "max_versions_listed": 120},
                   load_entry_points=False)
    a = ws.context("a")
    assert a.tools.execute("read", {"file_path": "/many.txt"}).ok
    moto.log.clear()

    # The oldest, by its full id: one GET by VersionId, one conditional PUT, no listing.
    res = a.tools.execute("restore", {"file_path": "/many.txt", "version": ids[0]})
    assert res.ok, res.text
    assert [(m, "versions" in q, "versionId" in q) for m, _, q, _ in _requests(moto, bucket)] == [
        ("GET", False, True), ("PUT", False, False)]
    assert s3.get_object(Bucket=bucket, Key="p/many.txt")["Body"].read() == b"v0\n"

    # The 111th newest by a prefix of its id: found on the listing's second page; the
    # listing stops at the cap (120 versions: 2 requests), whatever is kept beyond it.
    target = ids[150 - 110]
    prefix = target[:12]
    assert sum(i.startswith(prefix) for i in ids) == 1
    res = a.tools.execute("restore", {"file_path": "/many.txt", "version": prefix})
    assert res.ok, res.text
    assert res.value.restored == target
    listings = _listings(moto, bucket)
    assert [q["max-keys"] for q in listings] == [["100"], ["20"]]
    assert "version-id-marker" in listings[1] and listings[1]["key-marker"] == ["p/many.txt"]
    assert s3.get_object(Bucket=bucket, Key="p/many.txt")["Body"].read() == b"v40\n"

    # Past the cap a prefix is not listed (the full id above still works).
    res = a.tools.execute("restore", {"file_path": "/many.txt", "version": ids[1][:12]})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND, res.text
    assert [q["max-keys"] for q in _listings(moto, bucket)] == [["100"], ["20"]]
    assert s3.get_object(Bucket=bucket, Key="p/many.txt")["Body"].read() == b"v40\n"

    # Without a cap of its own the backend lists all 152 (two pages), newest first,
    # and none of the .bak key's versions.
    full = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options),
                     load_entry_points=False)
    moto.log.clear()
    kept = full.backend.versions("many.txt")
    assert len(kept) == 152
    assert [k.version.detail for k in kept[2:]] == ids[::-1]
    assert kept[0].latest and not any(k.latest for k in kept[1:])
    assert len(_listings(moto, bucket)) == 2
    # history shows the newest few: one page of just that many.
    moto.log.clear()
    entries = full.context("b").fs.history("/many.txt", 5).entries
    assert [e.id for e in entries[2:]] == ids[::-1][:3]
    assert [q["max-keys"] for q in _listings(moto, bucket)] == [["5"]]
