"""Fault injection against GCS (issue 9), through a fault-injecting proxy in front of
fake-gcs-server (``fsseam_gcs.testing.fault_proxy``, built on ``fsseam.testing.faults``).

The proxy forwards every request and can be told to make the next N matching requests
(method, path, optional query substring) fail:

- ``500`` / ``503``: a GCS JSON error answer; the request never reaches the server;
- ``reset``: the server gets the headers and the first ``cut_after`` body bytes, then both
  connections are reset (the client's with SO_LINGER 0): no answer, a broken body upstream;
- ``lost``: the request is forwarded whole (the write lands), then the client's connection
  is reset instead of answering.

Counts are taken at the proxy. gcsfs's retry (``retry_request``: 6 attempts for 5xx, 408,
429 and aiohttp client errors) sleeps 1 s, 2 s, 4 s, 8 s, 16 s (+ jitter) between tries; the
sleeps are shortened here, the decisions and counts are not. Uploads are POSTs, so aiohttp
never resends them on its own; a media GET may be resent once by aiohttp when its
connection breaks.

The faults every store meets alike (a 5xx or a lost answer on an upload, faults on a read,
a change whose Nth request fails) are the shared suites' (``fsseam.testing.stores``), run
from ``test_gcs_change_faults.py``; these are the ones this store's client shapes itself.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import gcsfs.retry
import pytest
from fsseam_gcs.client import GcsClient
from fsseam_gcs.testing import GcsEndpoint, GcsFaultProxy

from fsseam import Conflict, ErrorCode, FsError, Workspace
from fsseam.testing.faults import shorten_sleeps
from fsseam.versions import CreateOnly, IfMatch, Overwrite

NAME = "doc.txt"
PATH = "/doc.txt"
OLD = "old line 1\nold line 2\n"
NEW = "new line 1\nnew line 2\nnew line 3\n"
UPLOAD = "/upload/storage/v1/b/"
MEDIA = "/download/storage/v1/b/"


@pytest.fixture(scope="module")
def fault_proxy(gcs_server: GcsEndpoint) -> Iterator[GcsFaultProxy]:
    with gcs_server.fault_proxy() as proxy:
        yield proxy


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    shorten_sleeps(monkeypatch, gcsfs.retry)


@dataclass
class Env:
    proxy: GcsFaultProxy
    admin: GcsClient
    bucket: str

    def workspace(self, **kw: Any) -> Workspace:
        options = {"endpoint_url": self.proxy.url, "token": "anon", "project": "test"}
        options.update(kw.pop("storage_options", {}))
        return Workspace(f"gs://{self.bucket}", storage_options=options, **kw)

    def seed(self, data: bytes) -> str:
        generation = str(self.admin.upload_multipart(NAME, data, None)["generation"])
        return generation

    def state(self) -> tuple[bytes, str | None] | None:
        """(bytes, generation) of the object now, straight from the emulator."""
        try:
            media = self.admin.get_media(NAME)
        except FileNotFoundError:
            return None
        return media.data, media.generation

    def inject(self, method: str, kind: str, times: int, **kw: Any) -> None:
        path = UPLOAD + self.bucket if method == "POST" else f"{MEDIA}{self.bucket}/o/{NAME}"
        self.proxy.inject(method, path, kind, times, **kw)

    def uploads(self, *, forwarded: bool = False) -> int:
        return self.proxy.seen("POST", UPLOAD + self.bucket, forwarded=forwarded)

    def media_gets(self) -> int:
        return self.proxy.seen("GET", f"{MEDIA}{self.bucket}/o/{NAME}")


@pytest.fixture
def env(fault_proxy: GcsFaultProxy, gcs_admin: Any, gcs_bucket: str) -> Iterator[Env]:
    fault_proxy.clear()
    yield Env(fault_proxy, GcsClient(gcs_admin, gcs_bucket), gcs_bucket)
    fault_proxy.clear()


def _ledger(ws: Workspace) -> dict[str, Any]:
    assert ws.policy is not None
    return ws.policy.ledger.model_dump()


def _code(res: Any) -> ErrorCode:
    assert not res.ok, res.text
    assert res.error is not None
    code: ErrorCode = res.error.code
    assert res.text.startswith(f"Error [{code.value}]: "), res.text
    return code


def _observe(env: Env, ws: Workspace) -> Any:
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": PATH}).ok
    env.proxy.clear()
    return ctx


# -- a connection reset mid-upload -----------------------------------------------------------


def test_upload_reset_mid_body_transient_succeeds_once(env: Env) -> None:
    old_gen = env.seed(OLD.encode())
    ws = env.workspace()
    ctx = _observe(env, ws)
    env.inject("POST", "reset", 1, cut_after=20_000)
    content = "line\n" * 50_000  # 250 kB

    res = ctx.tools.execute("write", {"file_path": PATH, "content": content})

    assert res.ok, res.text
    assert env.uploads() == 2
    assert env.proxy.cut_bodies == [20_000]
    assert env.uploads(forwarded=True) == 1
    state = env.state()
    assert state is not None and state[0] == content.encode() and state[1] != old_gen


def test_upload_reset_mid_body_persistent_is_fs_backend(env: Env) -> None:
    old = ("keep\n" * 50_000 + "target\n").encode()
    old_gen = env.seed(old)
    ws = env.workspace()
    ctx = _observe(env, ws)
    before = _ledger(ws)
    env.inject("POST", "reset", 1000, cut_after=20_000)

    res = ctx.tools.execute(
        "edit", {"file_path": PATH, "old_string": "target", "new_string": "changed"}
    )

    assert _code(res) is ErrorCode.FS_BACKEND
    assert "nothing was changed" in res.text
    assert env.uploads() == 6
    assert env.proxy.cut_bodies == [20_000] * 6
    # fake-gcs-server got six truncated bodies and stored none of them.
    assert env.state() == (old, old_gen)
    assert _ledger(ws) == before


def test_backend_reset_before_any_body_byte(env: Env) -> None:
    old_gen = env.seed(OLD.encode())
    backend = env.workspace().backend
    version = backend.read(NAME).version
    env.proxy.clear()
    env.inject("POST", "reset", 1000, cut_after=0)

    with pytest.raises(FsError) as info:
        backend.write(NAME, NEW.encode(), IfMatch(version))

    assert info.value.code is ErrorCode.FS_BACKEND
    assert env.uploads() == 6
    assert env.state() == (OLD.encode(), old_gen)


# -- the upload landed, its answer was lost --------------------------------------------------


def test_conflict_with_other_content_is_still_a_conflict(env: Env) -> None:
    """The md5Hash of the object is not ours: the 412 stands and nothing is written."""
    env.seed(OLD.encode())
    backend = env.workspace().backend
    version = backend.read(NAME).version
    env.seed(b"theirs\n")

    with pytest.raises(FsError) as info:
        backend.write(NAME, NEW.encode(), IfMatch(version))

    assert info.value.code is ErrorCode.FS_STALE
    state = env.state()
    assert state is not None and state[0] == b"theirs\n"
    meta = env.admin.get_metadata(NAME)
    assert meta["md5Hash"] == base64.b64encode(hashlib.md5(b"theirs\n").digest()).decode()


# -- what GCS answers where fake-gcs-server does not: conditional deletes and copies -------


def test_delete_refused_by_gcs_is_a_conflict_and_keeps_the_object(env: Env) -> None:
    """fake-gcs-server ignores ifGenerationMatch on DELETE; GCS answers 412. Injected
    here, the 412 (after one look at the object) is a stale conflict."""
    env.seed(OLD.encode())
    backend = env.workspace().backend
    version = backend.read(NAME).version
    env.proxy.clear()
    env.proxy.inject("DELETE", f"/b/{env.bucket}/o/{NAME}", "412", 1)

    with pytest.raises(Conflict) as info:
        backend.delete(NAME, IfMatch(version))

    assert info.value.reason == "mismatch"
    assert env.proxy.seen("DELETE", f"/b/{env.bucket}/o/{NAME}") == 1
    state = env.state()
    assert state is not None and state[0] == OLD.encode()


def test_rewrite_refused_by_gcs_is_a_conflict_naming_the_right_side(env: Env) -> None:
    """fake-gcs-server ignores rewriteTo's preconditions; GCS answers 412. Injected here,
    the 412 is a conflict on the destination when it exists, else on the source's
    version."""
    backend = env.workspace(storage_options={"server_side_copy": True}).backend
    v = backend.write("src.txt", b"source", CreateOnly())
    backend.write("taken.txt", b"theirs", Overwrite())
    env.proxy.clear()
    env.proxy.inject("POST", "/rewriteTo/", "412", 2)

    with pytest.raises(Conflict) as exists:
        backend.copy("src.txt", "taken.txt", IfMatch(v))
    with pytest.raises(Conflict) as stale:
        backend.copy("src.txt", "new.txt", IfMatch(v))

    # The path as the model sees it, never the storage key.
    assert (exists.value.reason, exists.value.path) == ("exists", "/taken.txt")
    assert (stale.value.reason, stale.value.path) == ("mismatch", "/src.txt")
    assert env.proxy.seen("POST", "/rewriteTo/", forwarded=True) == 0
    assert backend.read("taken.txt").data == b"theirs"
    with pytest.raises(FsError) as missing:
        backend.read("new.txt")
    assert missing.value.code is ErrorCode.FS_NOT_FOUND
