"""Fault injection against S3 (issue 9): storage errors, cut connections and lost answers.

A moto server of this module's own sits behind a fault plan (``fsseam.testing.faults``, put
in front of moto by ``fsseam_s3.testing.moto_server(faults=...)``) that can be told to make
the next N matching requests (method, path, optional query substring) fail:

- ``500`` / ``503``: a proper S3 XML error (``InternalError`` / ``SlowDown``), the request
  body drained and never shown to moto;
- ``reset``: moto reads the first ``cut_after`` bytes of the body, then the connection is
  reset (SO_LINGER 0) with no answer; moto sees its body stream break;
- ``lost``: moto handles the request completely (the write lands), then the connection is
  reset instead of answering.

Counts are taken at the server. Retry *delays* are shortened for speed (botocore's
``AioEndpoint._sleep`` and s3fs's ``_error_wrapper`` sleep); retry *decisions* and counts
are untouched. Layers of retry measured here (botocore 1.43 "legacy" mode, s3fs 2026.9):

- botocore: 5 attempts for 500, 503 and connection errors;
- s3fs ``_error_wrapper``: 5 botocore calls when the final error is ``SlowDown`` or an
  ``HTTPClientError`` (a closed connection), none for ``InternalError``;
- aiohttp: one silent resend of an idempotent request (PUT, GET) whose connection broke.

So a persistent 500 costs 5 requests, a persistent 503 SlowDown 25, a cut connection
between 5 and 50 (which exception the client sees depends on timing).

The faults every store meets alike (a 5xx or a lost answer on an upload, faults on a read,
a change whose Nth request fails) are the shared suites' (``fsseam.testing.stores``), run
from ``test_s3_change_faults.py``; these are the ones this store's client shapes itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import aiobotocore.endpoint
import boto3
import pytest
import s3fs.core
from fsseam_s3.testing import CREDENTIALS, moto_server

from fsseam import Conflict, ErrorCode, FsError, Workspace
from fsseam.testing.faults import FaultPlan, PlannedFault, shorten_sleeps
from fsseam.versions import CreateOnly, IfMatch, Overwrite

KEY = "doc.txt"
PATH = "/doc.txt"
OLD = "old line 1\nold line 2\n"
NEW = "new line 1\nnew line 2\nnew line 3\n"


@dataclass
class FaultyS3:
    """The module's moto server and the fault plan in front of it."""

    url: str
    plan: FaultPlan

    def inject(self, method: str, key: str, kind: str, times: int, *, bucket: str,
               query: str = "", cut_after: int = 64 * 1024) -> None:
        self.plan.inject(method, f"/{bucket}/{key}", kind, times, query=query,
                         cut_after=cut_after)

    def reset(self) -> None:
        self.plan.clear()

    def seen(self, method: str, bucket: str, key: str, query: str = "") -> int:
        return self.plan.seen(method, f"/{bucket}/{key}", query)

    @property
    def requests(self) -> list[tuple[str, str, str]]:
        return self.plan.requests

    @property
    def faults(self) -> list[PlannedFault]:
        return self.plan.faults

    @property
    def cut_bodies(self) -> list[int]:
        return self.plan.cut_bodies


@pytest.fixture(scope="module")
def faulty() -> Iterator[FaultyS3]:
    plan = FaultPlan()
    with moto_server(faults=plan) as endpoint:
        werkzeug_log = logging.getLogger("werkzeug")
        level = werkzeug_log.level
        # A reset connection leaves body bytes in the handler's buffer, which werkzeug then
        # tries to parse as a next request (and logs a 414). Nothing a test looks at.
        werkzeug_log.setLevel(logging.CRITICAL)
        try:
            yield FaultyS3(endpoint.url, plan)
        finally:
            werkzeug_log.setLevel(level)


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    async def short_sleep(self: Any, amount: float) -> None:
        await asyncio.sleep(min(amount, 0.001))

    monkeypatch.setattr(aiobotocore.endpoint.AioEndpoint, "_sleep", short_sleep)
    shorten_sleeps(monkeypatch, s3fs.core)


@pytest.fixture
def env(faulty: FaultyS3) -> Iterator[Env]:
    client = boto3.client(
        "s3", endpoint_url=faulty.url, region_name="us-east-1",
        aws_access_key_id=CREDENTIALS["key"], aws_secret_access_key=CREDENTIALS["secret"],
    )
    bucket = f"faults-{uuid.uuid4().hex[:16]}"
    client.create_bucket(Bucket=bucket)
    client.put_bucket_versioning(
        Bucket=bucket, VersioningConfiguration={"Status": "Enabled"}
    )
    faulty.reset()
    yield Env(faulty, client, bucket)
    faulty.reset()
    client.close()


@dataclass
class Env:
    server: FaultyS3
    s3: Any
    bucket: str

    def workspace(self, **kw: Any) -> Workspace:
        options = {"endpoint_url": self.server.url, **CREDENTIALS}
        options.update(kw.pop("storage_options", {}))
        return Workspace(f"s3://{self.bucket}", storage_options=options, **kw)

    def seed(self, data: bytes, key: str = KEY) -> str:
        etag: str = self.s3.put_object(Bucket=self.bucket, Key=key, Body=data)["ETag"]
        self.server.reset()
        return etag

    def inject(self, method: str, kind: str, times: int, key: str = KEY, **kw: Any) -> None:
        self.server.inject(method, key, kind, times, bucket=self.bucket, **kw)

    def seen(self, method: str, key: str = KEY, query: str = "") -> int:
        return self.server.seen(method, self.bucket, key, query)

    def methods(self) -> list[str]:
        return [m for m, p, _ in self.server.requests if p.startswith(f"/{self.bucket}/")]

    def current(self, key: str = KEY) -> bytes | None:
        """The object's bytes now, straight from moto (faults off)."""
        self.server.faults.clear()
        try:
            body: bytes = self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read()
        except self.s3.exceptions.NoSuchKey:
            return None
        return body

    def versions(self, key: str = KEY) -> list[bytes]:
        """Every stored version of the key, oldest first (the bucket is versioned)."""
        self.server.faults.clear()
        listed = self.s3.list_object_versions(Bucket=self.bucket, Prefix=key)
        out = []
        # S3 lists a key's versions newest first.
        for v in reversed(listed.get("Versions", [])):
            if v["Key"] == key:
                obj = self.s3.get_object(Bucket=self.bucket, Key=key, VersionId=v["VersionId"])
                out.append(obj["Body"].read())
        return out

    def uploads(self) -> list[Any]:
        self.server.faults.clear()
        return list(self.s3.list_multipart_uploads(Bucket=self.bucket).get("Uploads", []))


def _ledger(ws: Workspace) -> dict[str, Any]:
    assert ws.policy is not None
    return ws.policy.ledger.model_dump()


def _code(res: Any) -> ErrorCode:
    assert not res.ok, res.text
    assert res.error is not None
    code: ErrorCode = res.error.code
    assert res.text.startswith(f"Error [{code.value}]: "), res.text
    return code


def _etag(data: bytes) -> str:
    return f'"{hashlib.md5(data).hexdigest()}"'


# -- 503 SlowDown ---------------------------------------------------------------------------


def test_put_503_slowdown_transient_outlasts_botocore_and_s3fs_retries(env: Env) -> None:
    env.seed(OLD.encode())
    ws = env.workspace()
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": PATH}).ok
    env.server.reset()
    env.inject("PUT", "503", 7)  # more than botocore's 5 attempts

    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})

    assert res.ok, res.text
    # botocore gives up after 5; s3fs retries "SlowDown" with a fresh botocore call,
    # whose third attempt lands.
    assert env.seen("PUT") == 8
    assert env.versions() == [OLD.encode(), NEW.encode()]


def test_put_503_slowdown_persistent_is_fs_backend(env: Env) -> None:
    env.seed(OLD.encode())
    ws = env.workspace()
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": PATH}).ok
    before = _ledger(ws)
    env.server.reset()
    env.inject("PUT", "503", 1000)

    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})

    assert _code(res) is ErrorCode.FS_BACKEND
    assert "SlowDown" in res.text
    assert env.seen("PUT") == 25  # 5 s3fs tries x 5 botocore attempts
    assert env.versions() == [OLD.encode()]
    assert _ledger(ws) == before


# -- the backend directly, each fault kind ---------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "low", "high"),
    [("500", 5, 5), ("reset", 5, 50)],  # 503: see the tool test above (25)
)
def test_backend_write_persistent_fault(env: Env, kind: str, low: int, high: int) -> None:
    old = OLD.encode()
    etag = env.seed(old)
    backend = env.workspace().backend
    version = backend.read(KEY).version
    assert version.value == etag
    env.server.reset()
    env.inject("PUT", kind, 1000)
    new = b"N" * (256 << 10 if kind == "reset" else 100)  # a cut lands mid-body

    with pytest.raises(FsError) as info:
        backend.write(KEY, new, IfMatch(version))

    assert info.value.code is ErrorCode.FS_BACKEND
    assert low <= env.seen("PUT") <= high
    assert env.versions() == [old]
    if kind == "reset":
        # moto got a broken body every time and stored none of it.
        assert env.server.cut_bodies and all(0 < n < len(new) for n in env.server.cut_bodies)
    # The version observed before the fault still works as a precondition.
    env.server.reset()
    assert backend.write(KEY, new, IfMatch(version)).value == _etag(new)
    assert env.versions() == [old, new]


@pytest.mark.parametrize("kind", ["500", "503", "reset"])
def test_backend_create_only_transient_fault_creates_once(env: Env, kind: str) -> None:
    backend = env.workspace().backend
    data = b"C" * (256 << 10)
    env.inject("PUT", kind, 1, cut_after=32 << 10)

    version = backend.write(KEY, data, CreateOnly())

    assert version.value == _etag(data)
    assert env.seen("PUT") == 2
    assert env.versions() == [data]


# -- a connection cut in the middle of the PUT -----------------------------------------------


def test_put_reset_mid_body_transient_tool_write_succeeds_once(env: Env) -> None:
    old = OLD.encode()
    env.seed(old)
    ws = env.workspace()
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": PATH}).ok
    env.server.reset()
    env.inject("PUT", "reset", 1, cut_after=100_000)
    content = "line\n" * 100_000  # 500 kB

    res = ctx.tools.execute("write", {"file_path": PATH, "content": content})

    assert res.ok, res.text
    assert env.seen("PUT") == 2
    assert env.server.cut_bodies == [100_000]
    assert env.versions() == [old, content.encode()]


def test_put_reset_mid_body_persistent_edit_is_fs_backend(env: Env) -> None:
    old = ("keep\n" * 50_000 + "target\n").encode()  # 250 kB: the PUT is cut mid-body
    env.seed(old)
    ws = env.workspace()
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": PATH, "limit": 1}).ok
    before = _ledger(ws)
    env.server.reset()
    env.inject("PUT", "reset", 1000, cut_after=30_000)

    res = ctx.tools.execute(
        "edit", {"file_path": PATH, "old_string": "target", "new_string": "changed"}
    )

    assert _code(res) is ErrorCode.FS_BACKEND
    assert "nothing was changed" in res.text
    assert env.seen("GET") == 2  # the edit's read, and one read back after the failure
    assert 5 <= env.seen("PUT") <= 50
    assert all(n == 30_000 for n in env.server.cut_bodies)
    assert env.versions() == [old]
    assert _ledger(ws) == before
    env.server.reset()
    res = ctx.tools.execute(
        "edit", {"file_path": PATH, "old_string": "target", "new_string": "changed"}
    )
    assert res.ok, res.text
    assert env.current() == old.replace(b"target", b"changed")


# -- the subtle case: the PUT landed, its answer was lost, the retry is refused -------------


def test_conflict_with_other_content_is_still_a_conflict(env: Env) -> None:
    """The HEAD finds someone else's bytes: the conflict stands and nothing is written."""
    env.seed(OLD.encode())
    ws = env.workspace()
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": PATH}).ok
    env.s3.put_object(Bucket=env.bucket, Key=KEY, Body=b"theirs\n")
    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})
    assert _code(res) is ErrorCode.FS_STALE
    assert env.current() == b"theirs\n"


def test_lost_answer_of_unconditional_put_writes_twice(env: Env) -> None:
    """policy=False: a bare overwrite; the resend lands again (same bytes, same ETag)."""
    env.seed(OLD.encode())
    backend = env.workspace(policy=False).backend
    env.inject("PUT", "lost", 1)

    version = backend.write(KEY, NEW.encode(), Overwrite())

    assert version.value == _etag(NEW.encode())
    assert env.seen("PUT") == 2
    assert env.versions() == [OLD.encode(), NEW.encode(), NEW.encode()]


def test_lost_answers_persistent_still_recognise_the_landed_write(env: Env) -> None:
    """Every PUT lands but no answer comes back: the client gives up, and the HEAD on the
    error path shows our bytes, so the call reports success rather than "nothing was
    changed" (which would be false)."""
    env.seed(OLD.encode())
    ws = env.workspace(policy=False)
    ctx = ws.context("a")
    env.inject("PUT", "lost", 1000)

    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})

    assert res.ok, res.text
    attempts = env.seen("PUT")
    assert 5 <= attempts <= 50
    assert env.seen("HEAD") == 1
    assert env.current() == NEW.encode()
    assert env.versions() == [OLD.encode()] + [NEW.encode()] * attempts


# -- multipart: the object changes only at CompleteMultipartUpload ---------------------------

_MP = {"multipart_threshold": 5 << 20, "multipart_part_size": 5 << 20}


@pytest.mark.parametrize(
    ("method", "query", "kind", "attempts"),
    [("PUT", "partNumber=2", "500", 5), ("POST", "uploadId=", "500", 5)],
    ids=["upload_part", "complete"],
)
def test_multipart_persistent_fault_aborts_and_keeps_old(
    env: Env, method: str, query: str, kind: str, attempts: int
) -> None:
    old = OLD.encode()
    env.seed(old)
    backend = env.workspace(storage_options=_MP).backend
    version = backend.read(KEY).version
    env.server.reset()
    env.inject(method, kind, 1000, query=query)
    data = b"M" * ((6 << 20) + 17)  # two parts

    with pytest.raises(FsError) as info:
        backend.write(KEY, data, IfMatch(version))

    assert info.value.code is ErrorCode.FS_BACKEND
    assert env.seen(method, query=query) == attempts
    assert env.seen("DELETE", query="uploadId=") == 1  # aborted
    assert env.uploads() == []
    assert env.versions() == [old]


def test_multipart_lost_answer_of_complete_is_resent_and_succeeds(env: Env) -> None:
    """moto 5.2.5 answers a resent CompleteMultipartUpload of an upload it already
    completed with 200 (and ignores If-Match on it): one version, success. Real S3 may
    instead answer 412 or NoSuchUpload to the resend (see the report)."""
    old = OLD.encode()
    env.seed(old)
    backend = env.workspace(storage_options=_MP).backend
    version = backend.read(KEY).version
    env.server.reset()
    env.inject("POST", "lost", 1, query="uploadId=")
    data = b"M" * ((6 << 20) + 17)

    new_version = backend.write(KEY, data, IfMatch(version))

    assert new_version.value.endswith('-2"')  # a two-part multipart ETag
    assert env.seen("POST", query="uploadId=") == 2
    assert env.seen("DELETE", query="uploadId=") == 0
    assert env.versions() == [old, data]


# -- what AWS S3 answers where moto does not: conditional copies -----------------------------


def test_server_side_copy_refused_by_s3_is_a_conflict_naming_the_right_side(env: Env) -> None:
    """moto ignores CopyObject's conditions; AWS S3 answers 412. Injected here, the 412
    is a conflict on the destination when it exists, else on the source's version, and
    nothing is written."""
    backend = env.workspace(storage_options={"server_side_copy": True}).backend
    v = backend.write("src.txt", b"source", CreateOnly())
    backend.write("taken.txt", b"theirs", CreateOnly())
    env.server.reset()
    env.inject("PUT", "412", 2, key="taken.txt")
    env.inject("PUT", "412", 1, key="new.txt")

    with pytest.raises(Conflict) as exists:
        backend.copy("src.txt", "taken.txt", IfMatch(v))
    with pytest.raises(Conflict) as stale:
        backend.copy("src.txt", "new.txt", IfMatch(v))

    # The path as the model sees it, never the storage key.
    assert (exists.value.reason, exists.value.path) == ("exists", "/taken.txt")
    assert (stale.value.reason, stale.value.path) == ("mismatch", "/src.txt")
    assert env.current("taken.txt") == b"theirs"
    assert env.current("new.txt") is None
    assert env.seen("PUT", "taken.txt") == 1 and env.seen("PUT", "new.txt") == 1
