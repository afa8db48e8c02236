"""A multi-file change on S3 whose Nth storage call fails (issue 16): every file is left
byte-for-byte as it was, the parts already written being rolled back with their own
compare-and-swap; and a rollback that loses to another writer says what each file holds.

The failures are real S3 error answers from the moto server (``moto_server(faults=...)``),
aimed at one object's requests by its key; retries are sped up, not changed."""

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
from fsseam.testing.faults import FaultPlan, shorten_sleeps

PREFIX = "proj"
BEFORE = {"a.txt": b"a\r\n", "b.txt": b"b\n", "c.txt": b"\xef\xbb\xbfc\n", "d.txt": b"d\n"}
PATCH = (
    "*** Begin Patch\n*** Add File: n.txt\n+new\n"
    "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n"
    "*** Update File: c.txt\n@@\n-c\n+C\n*** Delete File: d.txt\n*** End Patch"
)
# Commit order: n.txt (created), a, b, c (updated), d (deleted).


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


@pytest.fixture
def env(plan: tuple[FaultPlan, str]) -> Iterator[tuple[FaultPlan, Any, Workspace, str]]:
    import boto3

    faults, url = plan
    faults.clear()
    s3 = boto3.client("s3", endpoint_url=url, region_name="us-east-1",
                      aws_access_key_id=CREDENTIALS["key"],
                      aws_secret_access_key=CREDENTIALS["secret"])
    bucket = f"change-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=bucket)
    for name, data in BEFORE.items():
        s3.put_object(Bucket=bucket, Key=f"{PREFIX}/{name}", Body=data)
    ws = Workspace(f"s3://{bucket}/{PREFIX}", storage_options={"endpoint_url": url,
                                                                 **CREDENTIALS})
    yield faults, s3, ws, bucket
    faults.clear()
    s3.close()


def stored(s3: Any, bucket: str) -> dict[str, bytes]:
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=f"{PREFIX}/").get("Contents", [])
    return {o["Key"][len(PREFIX) + 1:]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"]
            .read() for o in listed}


def observed(ws: Workspace) -> Any:
    ctx = ws.context("a")
    for name in BEFORE:
        assert ctx.tools.execute("read", {"file_path": name}).ok
    return ctx


@pytest.mark.parametrize(("method", "name", "nth"), [
    ("PUT", "n.txt", 1), ("PUT", "a.txt", 2), ("PUT", "c.txt", 4), ("DELETE", "d.txt", 5),
])
def test_a_failure_on_the_nth_write_leaves_every_file_as_it_was(
    env: tuple[FaultPlan, Any, Workspace, str], method: str, name: str, nth: int
) -> None:
    faults, s3, ws, bucket = env
    ctx = observed(ws)
    faults.inject(method, f"/{bucket}/{PREFIX}/{name}", "500", 1000)
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert res.text.endswith("Nothing was applied: every file is as it was."), res.text
    faults.clear()
    assert stored(s3, bucket) == BEFORE
    # the agent's observations still hold (ETags are content hashes): it may simply retry
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert stored(s3, bucket) == {"n.txt": b"new\n", "a.txt": b"A\r\n", "b.txt": b"B\n",
                                  "c.txt": b"\xef\xbb\xbfC\n"}


def test_a_rollback_that_loses_to_another_writer_says_so(
    env: tuple[FaultPlan, Any, Workspace, str]
) -> None:
    faults, s3, ws, bucket = env
    ctx = observed(ws)
    inner = ws.backend

    class Meanwhile:
        """Another writer changes a.txt (just written by the change) before c.txt's write
        is sent, which then fails at the store."""

        def __getattr__(self, attr: str) -> Any:
            return getattr(inner, attr)

        def write(self, key: str, data: bytes, pre: Any) -> Any:
            if key == "c.txt":
                s3.put_object(Bucket=bucket, Key=f"{PREFIX}/a.txt", Body=b"theirs\n")
            return inner.write(key, data, pre)

    ctx.fs.backend = Meanwhile()
    faults.inject("PUT", f"/{bucket}/{PREFIX}/c.txt", "500", 1000)
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    faults.clear()
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert (
        "/n.txt is as it was; /a.txt was changed by someone else after this change wrote it, "
        "and was left as they made it; /b.txt is as it was; /c.txt was not written; /d.txt "
        "was not written. Read these files before going on."
    ) in res.text, res.text
    assert stored(s3, bucket) == {**BEFORE, "a.txt": b"theirs\n"}
