"""Lost answers at commit on GCS (fake-gcs-server behind the fault proxy): a move or patch
whose source DELETE lands but whose answer is lost never loses the file, and an upload
that lands while its answer and the metadata GET that would recover it are lost is never
reported as "nothing was applied". Each test asserts the exact bucket contents, the error
code and what the answer says of each file."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import gcsfs.retry
import pytest
from fsseam_gcs.client import GcsClient
from fsseam_gcs.testing import FaultProxy, GcsEndpoint

from fsseam import ErrorCode, Workspace
from fsseam.backends.base import ANY_VERSION
from fsseam.testing.faults import Fault, shorten_sleeps

PREFIX = "proj"
BEFORE = {"a.txt": b"a\n", "b.txt": b"b\n", "d.txt": b"d\n"}
PATCH = (
    "*** Begin Patch\n*** Add File: n.txt\n+new\n"
    "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n"
    "*** Delete File: d.txt\n*** End Patch"
)
# Commit order: n.txt (created), a.txt, b.txt (updated), d.txt (deleted).
AFTER = {"n.txt": b"new\n", "a.txt": b"A\n", "b.txt": b"B\n"}
MOVE_PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: m.txt\n@@\n-a\n+A\n"
    "*** End Patch"
)
UPLOAD = "/upload/storage/v1/b/"


@pytest.fixture(scope="module")
def proxy(gcs_server: GcsEndpoint) -> Iterator[FaultProxy]:
    with gcs_server.fault_proxy() as p:
        yield p


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    shorten_sleeps(monkeypatch, gcsfs.retry)


class Env:
    def __init__(self, proxy: FaultProxy, admin: Any, bucket: str) -> None:
        self.proxy = proxy
        self.bucket = bucket
        self.client = GcsClient(admin, bucket)
        self.generations = {
            name: str(self.client.upload_multipart(f"{PREFIX}/{name}", data, None)["generation"])
            for name, data in BEFORE.items()
        }
        self.ws = Workspace(f"gs://{bucket}/{PREFIX}", storage_options={
            "endpoint_url": proxy.url, "token": "anon", "project": "test"})

    def object(self, name: str) -> str:
        """The object's path in JSON API URLs (metadata, media GET, DELETE)."""
        return f"/b/{self.bucket}/o/{PREFIX}%2F{name}"

    def lose_upload(self, name: str) -> None:
        """The compare-and-swap upload of ``name`` lands; its answer is lost."""
        self.proxy.inject("POST", UPLOAD + self.bucket, "lost", 1,
                          query=f"ifGenerationMatch={self.generations[name]}")

    def stored(self) -> dict[str, bytes]:
        out = {}
        for name in ("n.txt", "m.txt", *BEFORE):
            with contextlib.suppress(FileNotFoundError):
                out[name] = self.client.get_media(f"{PREFIX}/{name}").data
        return out

    def observed(self) -> Any:
        ctx = self.ws.context("a")
        for name in BEFORE:
            assert ctx.tools.execute("read", {"file_path": name}).ok
        return ctx


class ArmAt:
    """The workspace's backend, arming faults at the store when the call first reaches
    ``at`` (``(method, key)``), and disarming them when it reaches ``until``: so the reads
    that prepared the call succeed and only the requests between meet the faults. Only
    the timing is the wrapper's; the failures are the store's answers."""

    def __init__(self, env: Env, at: tuple[str, str], *faults: tuple[str, str, str],
                 until: tuple[str, str] | None = None) -> None:
        self.inner = env.ws.backend
        self.plan = env.proxy.plan
        self.at, self.until = at, until
        self.faults = faults
        self.armed: list[Fault] = []

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def _reach(self, method: str, key: str) -> None:
        if (method, key) == self.at and not self.armed:
            for verb, path, kind in self.faults:
                self.plan.inject(verb, path, kind, 1000)
                self.armed.append(self.plan.faults[-1])
        if (method, key) == self.until:
            for fault in self.armed:
                fault.times = 0

    def write(self, key: str, data: bytes, pre: Any, **kw: Any) -> Any:
        self._reach("write", key)
        return self.inner.write(key, data, pre, **kw)

    def delete(self, key: str, pre: Any = ANY_VERSION) -> None:
        self._reach("delete", key)
        self.inner.delete(key, pre)

    def read(self, key: str) -> Any:
        self._reach("read", key)
        return self.inner.read(key)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> Any:
        self._reach("read", key)
        return self.inner.open_read(key, chunk_size)


@pytest.fixture
def env(proxy: FaultProxy, gcs_admin: Any, gcs_bucket: str) -> Iterator[Env]:
    proxy.clear()
    yield Env(proxy, gcs_admin, gcs_bucket)
    proxy.clear()


def test_a_move_whose_source_delete_answer_is_lost_is_done(env: Env) -> None:
    """The DELETE of the source lands, its answer is lost, the resend gets 404: the file
    is at its destination, and the answer says it moved."""
    ctx = env.observed()
    env.proxy.inject("DELETE", env.object("a.txt"), "lost", 1)
    res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
    assert res.ok, res.text
    assert res.text == "Moved /a.txt to /m.txt."
    assert env.proxy.seen("DELETE", env.object("a.txt"), forwarded=True) == 2
    assert env.stored() == {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"a\n"}


def test_a_patch_move_whose_source_delete_answer_is_lost_is_done(env: Env) -> None:
    ctx = env.observed()
    env.proxy.inject("DELETE", env.object("a.txt"), "lost", 1)
    res = ctx.tools.execute("apply_patch", {"patch": MOVE_PATCH})
    assert res.ok, res.text
    assert env.proxy.seen("DELETE", env.object("a.txt"), forwarded=True) == 2
    assert env.stored() == {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"A\n"}


def test_a_patch_delete_whose_answer_is_lost_is_done(env: Env) -> None:
    ctx = env.observed()
    env.proxy.inject("DELETE", env.object("d.txt"), "lost", 1)
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert env.proxy.seen("DELETE", env.object("d.txt"), forwarded=True) == 2
    assert env.stored() == AFTER


def test_a_lost_upload_whose_recovery_fails_is_read_back(env: Env) -> None:
    """b.txt's upload lands, its answer is lost, the resend gets 412 and the metadata GET
    that would read the write id back gets 503 every time: one media GET finds the
    patch's bytes, so the step is done and the change commits."""
    ctx = env.observed()
    env.lose_upload("b.txt")
    ctx.fs.backend = ArmAt(env, ("write", "b.txt"), ("GET", env.object("b.txt"), "503"),
                           until=("read", "b.txt"))
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert env.proxy.seen("GET", "/storage/v1" + env.object("b.txt"), "") >= 1
    assert env.stored() == AFTER


def test_a_lost_upload_that_cannot_be_read_back_is_unknown_and_kept(env: Env) -> None:
    """As above, and reading b.txt back fails too: b.txt holds the patch's text, which is
    left alone; the others are rolled back; the answer says which file is unknown."""
    ctx = env.observed()
    env.lose_upload("b.txt")
    ctx.fs.backend = ArmAt(env, ("write", "b.txt"), ("GET", env.object("b.txt"), "503"))
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    env.proxy.clear()
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert "Whether that step took effect is not known" in res.text, res.text
    assert (
        "/n.txt is as it was; /a.txt is as it was; whether /b.txt holds this change's new "
        "content is not known (reading it back failed): read it to see; /d.txt was not "
        "written. Read these files before going on"
    ) in res.text, res.text
    assert "Nothing was applied" not in res.text and "nothing was changed" not in res.text
    assert env.stored() == {**BEFORE, "b.txt": b"B\n"}


def test_a_lost_move_delete_that_cannot_be_read_back_keeps_the_copy(env: Env) -> None:
    ctx = env.observed()
    ctx.fs.backend = ArmAt(env, ("delete", "a.txt"), ("DELETE", env.object("a.txt"), "503"),
                           ("GET", env.object("a.txt"), "503"))
    res = ctx.tools.execute("apply_patch", {"patch": MOVE_PATCH})
    env.proxy.clear()
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert (
        "/m.txt still holds the content moved there from /a.txt, and was kept since /a.txt "
        "is not known to hold it again; whether /a.txt was deleted is not known (reading it "
        "back failed): read it to see."
    ) in res.text, res.text
    assert "Nothing was applied" not in res.text
    assert env.stored() == {**BEFORE, "m.txt": b"A\n"}


def test_a_move_whose_source_cannot_be_read_back_keeps_the_copy(env: Env) -> None:
    ctx = env.observed()
    ctx.fs.backend = ArmAt(env, ("delete", "a.txt"), ("DELETE", env.object("a.txt"), "503"),
                           ("GET", env.object("a.txt"), "503"))
    res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
    env.proxy.clear()
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert "Whether /a.txt was deleted is not known" in res.text, res.text
    assert "/m.txt, the copy made for the move, was kept" in res.text
    assert "nothing was changed" not in res.text
    assert env.stored() == {**BEFORE, "m.txt": b"a\n"}


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_single_write_whose_upload_and_recovery_are_lost(env: Env, tool: str) -> None:
    def args(name: str) -> dict[str, Any]:
        upper = name.upper().replace(".TXT", "")
        if tool == "write":
            return {"file_path": name, "content": f"{upper}\n"}
        return {"file_path": name, "old_string": name[0], "new_string": upper}

    ctx = env.observed()
    env.lose_upload("a.txt")
    ctx.fs.backend = ArmAt(env, ("write", "a.txt"), ("GET", env.object("a.txt"), "503"),
                           until=("read", "a.txt"))
    res = ctx.tools.execute(tool, args("a.txt"))
    assert res.ok, res.text
    assert env.stored() == {**BEFORE, "a.txt": b"A\n"}
    ctx = env.observed()
    env.lose_upload("b.txt")
    ctx.fs.backend = ArmAt(env, ("write", "b.txt"), ("GET", env.object("b.txt"), "503"))
    res = ctx.tools.execute(tool, args("b.txt"))
    env.proxy.clear()
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert "Whether it took effect is not known: reading /b.txt back failed too" in res.text
    assert "has changed since" not in res.text and "nothing was changed" not in res.text
    assert env.stored() == {**BEFORE, "a.txt": b"A\n", "b.txt": b"B\n"}


def test_a_single_delete_whose_answer_is_lost(env: Env) -> None:
    ctx = env.observed()
    env.proxy.inject("DELETE", env.object("a.txt"), "lost", 1)
    res = ctx.tools.execute("delete", {"file_path": "a.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND, res.text
    assert "someone else deleted it, or a resend of this very delete" in res.text
    assert env.stored() == {"b.txt": b"b\n", "d.txt": b"d\n"}
