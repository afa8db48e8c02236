"""Lost answers at commit on S3 (moto behind a FaultPlan): a move or patch whose source
DELETE lands but whose answer is lost never loses the file, and a PUT that lands while its
answer and the HEAD that would recover it are lost is never reported as "nothing was
applied". Each test asserts the exact bucket contents, the error code and reason, and
what the answer says of each file."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import aiobotocore.endpoint
import pytest
import s3fs.core
from fsseam_s3.testing import CREDENTIALS, moto_server

from fsseam import ErrorCode, Workspace
from fsseam.backends.base import ANY_VERSION
from fsseam.testing.faults import FaultPlan, shorten_sleeps

PREFIX = "proj"
BEFORE = {"a.txt": b"a\n", "b.txt": b"b\n", "d.txt": b"d\n"}


@pytest.fixture(scope="module")
def plan() -> Iterator[tuple[FaultPlan, str]]:
    faults = FaultPlan()
    with moto_server(faults=faults) as endpoint:
        logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
        yield faults, endpoint.url


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    async def short_sleep(self: Any, amount: float) -> None:
        await asyncio.sleep(min(amount, 0.001))

    monkeypatch.setattr(aiobotocore.endpoint.AioEndpoint, "_sleep", short_sleep)
    shorten_sleeps(monkeypatch, s3fs.core)


class Env:
    def __init__(self, faults: FaultPlan, url: str) -> None:
        import boto3

        self.faults = faults
        self.s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                               aws_access_key_id=CREDENTIALS["key"],
                               aws_secret_access_key=CREDENTIALS["secret"])
        self.bucket = f"lost-{uuid.uuid4().hex[:16]}"
        self.s3.create_bucket(Bucket=self.bucket)
        for name, data in BEFORE.items():
            self.s3.put_object(Bucket=self.bucket, Key=f"{PREFIX}/{name}", Body=data)
        self.ws = Workspace(f"s3://{self.bucket}/{PREFIX}",
                            storage_options={"endpoint_url": url, **CREDENTIALS})

    def path(self, name: str) -> str:
        return f"/{self.bucket}/{PREFIX}/{name}"

    def stored(self) -> dict[str, bytes]:
        listed = self.s3.list_objects_v2(Bucket=self.bucket, Prefix=f"{PREFIX}/")
        return {o["Key"][len(PREFIX) + 1:]: self.s3.get_object(
            Bucket=self.bucket, Key=o["Key"])["Body"].read()
            for o in listed.get("Contents", [])}

    def observed(self) -> Any:
        ctx = self.ws.context("a")
        for name in BEFORE:
            assert ctx.tools.execute("read", {"file_path": name}).ok
        return ctx


class ArmAt:
    """The workspace's backend, arming more faults at the store when the call reaches
    ``method`` on ``key``: the reads that prepared the call succeed, the reads after it
    meet the faults. Only the timing is the wrapper's; the faults are the store's."""

    def __init__(self, env: Env, method: str, key: str, *faults: tuple[str, str, str]
                 ) -> None:
        self.inner = env.ws.backend
        self.plan = env.faults
        self.at = (method, key)
        self.faults = faults

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def _arm(self, method: str, key: str) -> None:
        if (method, key) == self.at:
            for verb, path, kind in self.faults:
                self.plan.inject(verb, path, kind, 1000)

    def write(self, key: str, data: bytes, pre: Any, **kw: Any) -> Any:
        self._arm("write", key)
        return self.inner.write(key, data, pre, **kw)

    def delete(self, key: str, pre: Any = ANY_VERSION) -> None:
        self._arm("delete", key)
        self.inner.delete(key, pre)


@pytest.fixture
def env(plan: tuple[FaultPlan, str]) -> Iterator[Env]:
    faults, url = plan
    faults.clear()
    e = Env(faults, url)
    yield e
    faults.clear()
    e.s3.close()


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


def test_a_move_whose_source_delete_answer_is_lost_is_done(env: Env) -> None:
    """The DELETE of the source lands, its answer is lost, the resend gets 404: the file
    is at its destination, and the answer says it moved."""
    ctx = env.observed()
    env.faults.inject("DELETE", env.path("a.txt"), "lost", 1)
    res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
    assert res.ok, res.text
    assert res.text == "Moved /a.txt to /m.txt."
    assert env.faults.seen("DELETE", env.path("a.txt"), forwarded=True) == 2
    assert env.stored() == {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"a\n"}
    # the agent may go on editing the moved file
    assert ctx.tools.execute("edit", {"file_path": "m.txt", "old_string": "a",
                                      "new_string": "z"}).ok


def test_a_patch_move_whose_source_delete_answer_is_lost_is_done(env: Env) -> None:
    ctx = env.observed()
    env.faults.inject("DELETE", env.path("a.txt"), "lost", 1)
    res = ctx.tools.execute("apply_patch", {"patch": MOVE_PATCH})
    assert res.ok, res.text
    assert env.faults.seen("DELETE", env.path("a.txt"), forwarded=True) == 2
    assert env.stored() == {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"A\n"}


def test_a_patch_delete_whose_answer_is_lost_is_done(env: Env) -> None:
    ctx = env.observed()
    env.faults.inject("DELETE", env.path("d.txt"), "lost", 1)
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert env.faults.seen("DELETE", env.path("d.txt"), forwarded=True) == 2
    assert env.stored() == AFTER


def test_a_lost_put_whose_recovery_head_fails_is_read_back(env: Env) -> None:
    """b.txt's PUT lands, its answer is lost, the resend gets 412 and the HEAD that would
    read the write id back gets 503: one GET finds the patch's bytes, so the step is done
    and the change commits."""
    ctx = env.observed()
    env.faults.inject("PUT", env.path("b.txt"), "lost", 1)
    env.faults.inject("HEAD", env.path("b.txt"), "503", 1000)
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert env.faults.seen("HEAD", env.path("b.txt")) >= 1
    assert env.stored() == AFTER


def test_a_lost_put_that_cannot_be_read_back_is_unknown_and_kept(env: Env) -> None:
    """As above, and the GET that would read it back fails too: b.txt holds the patch's
    text, which is left alone; the others are rolled back; the answer says which file is
    unknown, never "Nothing was applied"."""
    ctx = env.observed()
    env.faults.inject("PUT", env.path("b.txt"), "lost", 1)
    env.faults.inject("HEAD", env.path("b.txt"), "503", 1000)
    ctx.fs.backend = ArmAt(env, "write", "b.txt", ("GET", env.path("b.txt"), "503"))
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    env.faults.clear()
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
    """The source DELETE of a patch's move fails with 503 every time, and so does reading
    the source back: the source may be gone, so its copy at the destination is kept."""
    ctx = env.observed()
    ctx.fs.backend = ArmAt(env, "delete", "a.txt", ("DELETE", env.path("a.txt"), "503"),
                           ("GET", env.path("a.txt"), "503"))
    res = ctx.tools.execute("apply_patch", {"patch": MOVE_PATCH})
    env.faults.clear()
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
    ctx.fs.backend = ArmAt(env, "delete", "a.txt", ("DELETE", env.path("a.txt"), "503"),
                           ("GET", env.path("a.txt"), "503"))
    res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
    env.faults.clear()
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert "Whether /a.txt was deleted is not known" in res.text, res.text
    assert "/m.txt, the copy made for the move, was kept" in res.text
    assert "nothing was changed" not in res.text
    assert env.stored() == {**BEFORE, "m.txt": b"a\n"}


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_single_write_whose_put_and_recovery_are_lost(env: Env, tool: str) -> None:
    """One file: the recovery HEAD fails, the GET finds our bytes (a success); when the
    GET fails too, the answer says the outcome is unknown, not that the file changed."""
    args: dict[str, Any] = (
        {"file_path": "a.txt", "content": "A\n"} if tool == "write"
        else {"file_path": "a.txt", "old_string": "a", "new_string": "A"})
    ctx = env.observed()
    env.faults.inject("PUT", env.path("a.txt"), "lost", 1)
    env.faults.inject("HEAD", env.path("a.txt"), "503", 1000)
    res = ctx.tools.execute(tool, args)
    assert res.ok, res.text
    assert env.stored() == {**BEFORE, "a.txt": b"A\n"}
    ctx = env.observed()
    args = ({"file_path": "b.txt", "content": "B\n"} if tool == "write"
            else {"file_path": "b.txt", "old_string": "b", "new_string": "B"})
    env.faults.inject("PUT", env.path("b.txt"), "lost", 1)
    env.faults.inject("HEAD", env.path("b.txt"), "503", 1000)
    ctx.fs.backend = ArmAt(env, "write", "b.txt", ("GET", env.path("b.txt"), "503"))
    res = ctx.tools.execute(tool, args)
    env.faults.clear()
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert "Whether it took effect is not known: reading /b.txt back failed too" in res.text
    assert "has changed since" not in res.text and "nothing was changed" not in res.text
    assert env.stored() == {**BEFORE, "a.txt": b"A\n", "b.txt": b"B\n"}


def test_a_single_delete_whose_answer_is_lost(env: Env) -> None:
    ctx = env.observed()
    env.faults.inject("DELETE", env.path("a.txt"), "lost", 1)
    res = ctx.tools.execute("delete", {"file_path": "a.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND, res.text
    assert "someone else deleted it, or a resend of this very delete" in res.text
    assert env.stored() == {"b.txt": b"b\n", "d.txt": b"d\n"}
