"""A change whose audit entry cannot be written is never silently unaudited: the change
landed (its bytes are on disk), and the call says the trail misses it.

The trail is on a real store that fails every write: a bucket of moto S3 that does not
exist (the workspace is on local disk). The backend never raises after the change landed
while a call runs (the seam would read the file back and call the landed write a success);
it puts the sentence on the running call (``fsseam.calling.current().unaudited``), which
the call's answer (a tool) or a raised FsError (``ctx.fs``) reports.
"""

from __future__ import annotations

import hashlib
import uuid
from pathlib import Path
from typing import Any

import pytest

from fsseam import CreateOnly, ErrorCode, FsError, Version, Workspace, WriteMeta
from fsseam.backends import open_backend
from fsseam.backends.base import ANY_VERSION, Wrapper
from fsseam.calling import scope
from fsseam.messages import Reason
from fsseam.versions import Precondition


@pytest.fixture
def ws(moto_s3: Any, tmp_path: Path) -> Workspace:
    root = tmp_path / "root"
    root.mkdir()
    nowhere = f"s3://fsseam-missing-{uuid.uuid4().hex[:12]}/trail"
    return Workspace(str(root), load_entry_points=False,
                     audit=(nowhere, moto_s3.storage_options()))


def test_the_running_call_holds_the_unaudited_change(ws: Workspace, tmp_path: Path) -> None:
    ctx = ws.context("alice")
    with scope("c1", "write") as call:
        ctx.fs.write("/a.txt", "one\n")
    assert (tmp_path / "root" / "a.txt").read_bytes() == b"one\n"
    [said] = call.unaudited
    version = ws.backend.read("a.txt").version
    assert said.startswith(f"/a.txt ({version}): ")
    assert "fsseam-missing-" in said  # the cause: the trail's bucket does not exist


def test_a_change_outside_any_call_raises_after_it_landed(ws: Workspace,
                                                           tmp_path: Path) -> None:
    with pytest.raises(FsError) as caught:
        ws.backend.write("b.txt", b"two\n", CreateOnly())
    assert caught.value.code is ErrorCode.FS_BACKEND
    assert caught.value.reason == Reason.audit_unwritten
    assert "could not be written" in caught.value.message
    assert "do not make the change again" in caught.value.message
    assert (tmp_path / "root" / "b.txt").read_bytes() == b"two\n"


def test_a_tool_s_answer_says_its_change_is_unaudited(ws: Workspace, tmp_path: Path) -> None:
    """Needs the run path to turn a non-empty ``unaudited`` into the failed answer
    (tools/base.py)."""
    res = ws.context("alice").tools.execute(
        "write", {"file_path": "/c.txt", "content": "three\n"}, call_id="c3")
    assert (tmp_path / "root" / "c.txt").read_bytes() == b"three\n"  # landed, reported
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND
    assert "could not be written" in res.text and "/c.txt" in res.text


def test_ctx_fs_raises_when_its_entry_cannot_be_written(ws: Workspace,
                                                        tmp_path: Path) -> None:
    """Needs ``ctx.fs``'s change methods to run in a call and raise its unaudited
    changes at its end (the seam)."""
    with pytest.raises(FsError) as caught:
        ws.context("alice").fs.write("/d.txt", "four\n")
    assert (tmp_path / "root" / "d.txt").read_bytes() == b"four\n"
    assert caught.value.reason == Reason.audit_unwritten
    assert "/d.txt" in caught.value.message



class LostAnswers(Wrapper):
    """Changes land, then the answer is lost (FS_BACKEND), as over a dropped connection;
    the reserved folders' objects are left alone."""

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        self.inner.write(key, data, precondition, meta=meta)
        raise FsError(ErrorCode.FS_BACKEND, message="connection reset")

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        self.inner.delete(key, precondition, meta=meta)
        raise FsError(ErrorCode.FS_BACKEND, message="connection reset")


def test_a_change_whose_answer_was_lost_is_recorded(tmp_path: Path) -> None:
    """The seam reads back a write that failed and calls it done when it landed: the
    trail has its entry too (one read, on the failure path only)."""
    root = tmp_path / "root"
    root.mkdir()
    ws = Workspace("lossy", backend=LostAnswers(open_backend(str(root))),
                   load_entry_points=False, audit=(str(tmp_path), {}))
    ctx = ws.context("alice")
    res = ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}, call_id="c1")
    assert res.ok, res.text
    res = ctx.tools.execute("delete", {"file_path": "/a.txt"}, call_id="c2")
    assert res.ok, res.text
    assert ws.audit is not None
    made = [(e.call_id, e.action, e.path) for e in ws.audit.entries()]
    assert made == [("c1", "create", "/a.txt"), ("c2", "delete", "/a.txt")]
    assert ws.audit.entries()[0].sha256 == hashlib.sha256(b"one\n").hexdigest()
