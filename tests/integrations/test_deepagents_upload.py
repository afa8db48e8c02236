"""deepagents' ``upload_files`` on fsseam is the seam's guarded whole-file write, as every
change is: the gate (reserved prefixes, a read-only workspace), the limits and the
observation policy all apply, on memory and S3 (moto). A refused upload writes nothing; the
bytes on the storage are checked behind fsseam's back."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import fsspec
import pytest

pytest.importorskip(
    "deepagents", reason="deepagents is not installed: pip install -e '.[deepagents]'"
)

from deepagents.backends.protocol import FileUploadResponse

from fsseam import Limits, Workspace
from fsseam.integrations.deepagents import FsseamBackend

from ..helpers import s3_reader

CAP = 10


@dataclass
class Store:
    """A workspace (edits capped at ``CAP`` bytes, observations kept under ``/.obs``) and
    the raw bytes of its files."""

    workspace: Callable[[], Workspace]
    raw: Callable[[str], bytes | None]
    reserved: tuple[str, ...]


def _memory() -> Store:
    mem = fsspec.filesystem("memory")
    name = f"upload-{uuid.uuid4().hex[:10]}"

    def raw(path: str) -> bytes | None:
        key = f"/{name}{path}"
        return bytes(mem.cat_file(key)) if mem.exists(key) else None

    return Store(lambda: Workspace(f"memory://{name}", observations=f"memory://{name}/.obs",
                                   limits=Limits(max_edit_bytes=CAP)), raw, ("/.obs/x",))


def _s3(moto_s3: Any) -> Store:
    s3 = moto_s3.client()
    bucket = moto_s3.create_bucket(client=s3)
    options = moto_s3.storage_options()

    raw = s3_reader(s3, bucket)

    def workspace() -> Workspace:
        return Workspace(f"s3://{bucket}", storage_options=options,
                         observations=(f"s3://{bucket}/.obs", options),
                         limits=Limits(max_edit_bytes=CAP))

    # The content index is on by default on S3: its folder is no file either.
    return Store(workspace, raw, ("/.obs/x", "/.fsseam-index/x"))


@pytest.fixture(params=["memory", "s3"])
def store(request: pytest.FixtureRequest) -> Store:
    if request.param == "memory":
        return _memory()
    return _s3(request.getfixturevalue("moto_s3"))


def test_an_upload_into_a_reserved_prefix_is_refused(store: Store) -> None:
    b = FsseamBackend(store.workspace())
    for path in store.reserved:
        assert b.upload_files([(path, b"forged")]) == [
            FileUploadResponse(path=path, error="permission_denied")]
        assert store.raw(path) is None


def test_an_upload_over_the_edit_limit_is_refused(store: Store) -> None:
    b = FsseamBackend(store.workspace())
    (refused,) = b.upload_files([("/big.bin", b"x" * 100)])
    assert refused.path == "/big.bin" and isinstance(refused.error, str)
    assert refused.error.startswith("Error [FS_TOO_LARGE]")
    assert str(CAP) in refused.error and "100" in refused.error
    assert store.raw("/big.bin") is None


def test_an_upload_creates_and_replaces_what_its_owner_saw(store: Store) -> None:
    ws = store.workspace()
    b = FsseamBackend(ws)
    assert b.upload_files([("/a/data.bin", b"\x00\x01"), ("/b.txt", b"0123456789")]) == [
        FileUploadResponse(path="/a/data.bin"), FileUploadResponse(path="/b.txt")]
    assert store.raw("/a/data.bin") == b"\x00\x01" and store.raw("/b.txt") == b"0123456789"
    # Its own upload is what it saw: the next one replaces it.
    assert b.upload_files([("/b.txt", b"new")]) == [FileUploadResponse(path="/b.txt")]
    assert store.raw("/b.txt") == b"new"
    # A file another writer changed since: refused with what changed, nothing written.
    other = ws.context("other")
    other.fs.read_bytes("/b.txt")
    other.fs.write_bytes("/b.txt", b"theirs\n")
    (stale,) = b.upload_files([("/b.txt", b"mine\n")])
    assert isinstance(stale.error, str) and stale.error.startswith("Error [FS_STALE]")
    assert "+theirs" in stale.error
    assert store.raw("/b.txt") == b"theirs\n"
    # A file it never read: refused, nothing written; downloaded (a read), it goes through.
    other.fs.write_bytes("/c.txt", b"c\n")
    (unread,) = b.upload_files([("/c.txt", b"mine\n")])
    assert isinstance(unread.error, str) and unread.error.startswith("Error [FS_NOT_OBSERVED]")
    assert store.raw("/c.txt") == b"c\n"
    assert b.download_files(["/c.txt"])[0].content == b"c\n"
    assert b.upload_files([("/c.txt", b"mine\n")]) == [FileUploadResponse(path="/c.txt")]
    assert store.raw("/c.txt") == b"mine\n"
