"""moto's in-process ``mock_aws`` with an S3 workspace: what a user's own test does.

No server and no endpoint: the bucket is made with boto3 under the mock, the workspace is
``Workspace("s3://bucket/prefix")``, and moto answers s3fs's requests in-process. The
compare-and-swap is moto's (If-Match / If-None-Match decided by its S3 model), so a stale
edit is refused and leaves the other writer's bytes.
"""

from __future__ import annotations

import importlib
import threading
from typing import Any

import pytest
from moto import mock_aws

from fsseam import Conflict, CreateOnly, ErrorCode, IfMatch, Workspace


def _client() -> Any:
    boto3: Any = importlib.import_module("boto3")
    return boto3.client("s3", region_name="us-east-1")


def _body(s3: Any, key: str) -> bytes:
    data: bytes = s3.get_object(Bucket="agents", Key=key)["Body"].read()
    return data


@mock_aws
def test_read_write_edit_and_a_stale_edit_under_the_decorator() -> None:
    s3 = _client()
    s3.create_bucket(Bucket="agents")
    ws = Workspace("s3://agents/project")
    assert ws.backend.capabilities.version_kind == "etag"
    a = ws.context("agent-a")
    b = ws.context("agent-b")

    res = a.tools.execute("write", {"file_path": "/notes.md", "content": "one\ntwo\n"})
    assert res.ok, res.text
    assert _body(s3, "project/notes.md") == b"one\ntwo\n"

    assert b.tools.execute("read", {"file_path": "/notes.md"}).text == "     1\tone\n     2\ttwo"
    a.tools.execute("read", {"file_path": "/notes.md"})
    edit = b.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "two", "new_string": "2"}
    )
    assert edit.ok, edit.text
    assert _body(s3, "project/notes.md") == b"one\n2\n"

    stale = a.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "one", "new_string": "1"}
    )
    assert stale.error is not None and stale.error.code is ErrorCode.FS_STALE, stale.text
    assert _body(s3, "project/notes.md") == b"one\n2\n"

    a.tools.execute("read", {"file_path": "/notes.md"})
    again = a.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "one", "new_string": "1"}
    )
    assert again.ok, again.text
    assert _body(s3, "project/notes.md") == b"1\n2\n"


def test_the_storage_decides_the_conditions_under_the_context_manager() -> None:
    with mock_aws():
        s3 = _client()
        s3.create_bucket(Bucket="agents")
        backend = Workspace("s3://agents").backend
        v1 = backend.write("k.txt", b"first", CreateOnly())
        with pytest.raises(Conflict) as exists:
            backend.write("k.txt", b"second", CreateOnly())
        assert exists.value.reason == "exists"

        # Someone else rewrites the object behind the workspace's back, with boto3.
        s3.put_object(Bucket="agents", Key="k.txt", Body=b"theirs")
        with pytest.raises(Conflict) as stale:
            backend.write("k.txt", b"mine", IfMatch(v1))
        assert stale.value.reason == "mismatch"
        assert _body(s3, "k.txt") == b"theirs"

        blob = backend.read("k.txt")
        assert blob.data == b"theirs"
        assert blob.version.value == s3.head_object(Bucket="agents", Key="k.txt")["ETag"]
        assert backend.write("k.txt", b"mine", IfMatch(blob.version)).value == (
            s3.head_object(Bucket="agents", Key="k.txt")["ETag"]
        )


@mock_aws
def test_listing_missing_files_and_an_empty_root() -> None:
    _client().create_bucket(Bucket="agents")
    ctx = Workspace("s3://agents/p").context()
    view = ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/"})
    assert view.text == (
        "Here's the files and directories up to 2 levels deep in /, excluding hidden items:\n"
    )
    missing = ctx.tools.execute("read", {"file_path": "/nope.md"})
    assert missing.error is not None and missing.error.code is ErrorCode.FS_NOT_FOUND
    created = ctx.tools.execute(
        "str_replace_editor", {"command": "create", "path": "/d/x.md", "file_text": "x\n"}
    )
    assert created.ok, created.text
    assert ctx.fs.list("/").entries[0].path == "/d"


@mock_aws
def test_concurrent_increments_lose_no_update() -> None:
    _client().create_bucket(Bucket="agents")
    backend = Workspace("s3://agents").backend
    backend.write("n", b"0", CreateOnly())
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            done = 0
            while done < 10:
                blob = backend.read("n")
                try:
                    backend.write("n", str(int(blob.data) + 1).encode(), IfMatch(blob.version))
                except Conflict:
                    continue
                done += 1
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert backend.read("n").data == b"30"


def test_outside_a_mock_the_hook_sends_requests_as_usual(moto: Any, bucket: str) -> None:
    """The in-process hook answers nothing when no mock is active: a workspace on a moto
    server (moto imported, no mock) reaches the server."""
    before = len(moto.log.to_bucket(bucket))
    ws = Workspace(f"s3://{bucket}/p", storage_options=moto.storage_options())
    assert ws.context().tools.execute("write", {"file_path": "/a", "content": "x"}).ok
    # the listing that keeps a new file from shadowing a directory, then the PUT
    assert moto.log.to_bucket(bucket)[before:] == [("GET", f"/{bucket}"),
                                                   ("PUT", f"/{bucket}/p/a")]
