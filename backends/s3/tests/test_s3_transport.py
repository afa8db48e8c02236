"""GetObject, HeadObject and PutObject sent from the calling thread (``fsseam_s3.transport``):
the same requests, answers and errors as through s3fs's ``_call_s3``, none of them made by
aiobotocore; its retries; a kept connection the server closed; and moto's in-process
``mock_aws``, under which every request keeps to the loop."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from fsseam_s3._filesystem import make_filesystem
from fsseam_s3.client import S3Client
from fsseam_s3.testing import CREDENTIALS, MotoEndpoint, Request, moto_server
from moto import mock_aws

from fsseam import CreateOnly, ErrorCode, FsError, IfMatch, Workspace
from fsseam.backends import open_backend
from fsseam.backends.objectstore import OWNER_KEY, WRITE_ID_KEY
from fsseam.testing.faults import FaultPlan
from fsseam.testing.stub_server import StubHandler, serving
from fsseam.versions import Version

MARK = "md/fsseam#direct"
"""What the transport adds to botocore's User-Agent."""
OWNER = "Zoë 名前"
SAME_HEADERS = ("if-match", "if-none-match", "range", "x-amz-checksum-crc32",
                "x-amz-sdk-checksum-algorithm", "x-amz-checksum-mode", "x-amz-content-sha256",
                f"x-amz-meta-{WRITE_ID_KEY}", f"x-amz-meta-{OWNER_KEY}")


def _client(url: str, bucket: str, *, direct: bool = True, **options: Any) -> S3Client:
    fs = make_filesystem({"endpoint_url": url, **CREDENTIALS, **options})
    return S3Client(fs, bucket, direct_requests=direct)


def _outcome(call: Callable[[], Any]) -> Any:
    """What a call returned, or what it raised: the exception's type and the S3 error
    under it (code, status, the failed condition)."""
    try:
        return call()
    except Exception as e:
        cause = e.__cause__
        assert isinstance(cause, ClientError), repr(e)
        error, meta = cause.response["Error"], cause.response["ResponseMetadata"]
        return (type(e).__name__, type(cause).__name__, error.get("Code"),
                meta["HTTPStatusCode"], error.get("Condition"))


def _every_request(client: S3Client, prefix: str) -> list[Any]:
    """Each request the transport sends, and each of its errors, once; what each gave."""
    name = f"{prefix}/ü x+y=z.txt"
    first = client.put(name, b"hello world", if_match=None, if_absent=True, write_id="w1",
                       owner=OWNER)
    second = client.put(name, b"hello again", if_match=first, if_absent=False,
                        write_id="w2", owner=OWNER)
    stale = Version(kind="etag", value=first.value)
    return [
        first.value, second.value,
        client.get(name),
        client.get(name, start=6, end=11),
        client.get(name, start=0, end=5, pin=second),
        client.head(name),
        client.get(name, version=first).data,
        client.head(name, version=first),
        _outcome(lambda: client.get(name, pin=stale)),
        _outcome(lambda: client.get(f"{prefix}/missing")),
        _outcome(lambda: client.head(f"{prefix}/missing")),
        _outcome(lambda: client.put(name, b"x", if_match=None, if_absent=True, write_id="w3")),
        _outcome(lambda: client.put(name, b"x", if_match=stale, if_absent=False,
                                    write_id="w4")),
        _outcome(lambda: client.get(name, version=Version(kind="etag", value="",
                                                          detail="no-such-version"))),
    ]


def _same(record: Request, prefix: str) -> tuple[Any, ...]:
    query = re.sub(r"versionId=[^&]+", "versionId=V", record.query)
    return (record.method, record.path.replace(prefix, "P"), query, record.status,
            record.request_bytes, {h: record.headers.get(h) for h in SAME_HEADERS})


def test_the_same_requests_answers_and_errors_as_through_call_s3(moto: MotoEndpoint) -> None:
    bucket = moto.create_bucket(versioned=True)
    loop = _client(moto.url, bucket, direct=False)
    direct = _client(moto.url, bucket)
    moto.log.clear()
    via_loop = _every_request(loop, "loop")
    loop_records = moto.log.records_to(bucket)
    moto.log.clear()
    via_thread = _every_request(direct, "thread")
    thread_records = moto.log.records_to(bucket)

    assert via_thread == via_loop
    assert via_thread[2].data == b"hello again"
    assert (via_thread[3].data, via_thread[3].size) == (b"again", 11)
    assert via_thread[5].owner == OWNER and via_thread[5].write_id == "w2"
    assert via_thread[6] == b"hello world"
    assert via_thread[7].write_id == "w1"
    assert via_thread[8] == ("OSError", "ClientError", "PreconditionFailed", 412, "If-Match")
    assert via_thread[9] == ("FileNotFoundError", "NoSuchKey", "NoSuchKey", 404, None)
    assert via_thread[10] == ("FileNotFoundError", "ClientError", "404", 404, None)
    assert via_thread[11] == ("FileExistsError", "ClientError", "PreconditionFailed", 412,
                              "If-None-Match")
    # The same requests: method, path, query, status, body size and the headers that
    # carry the conditions, the range, the metadata and the checksums.
    assert [_same(r, "/thread/") for r in thread_records] == [
        _same(r, "/loop/") for r in loop_records]
    assert [r.method for r in thread_records] == [
        "PUT", "PUT", "GET", "GET", "GET", "HEAD", "GET", "HEAD", "GET", "GET", "HEAD", "PUT",
        "PUT", "GET"]
    # None of the transport's requests went through aiobotocore; none of the loop's
    # through the transport.
    assert all(r.headers["user-agent"].endswith(MARK) for r in thread_records)
    assert not any(MARK in r.headers["user-agent"] for r in loop_records)


def test_an_object_of_size_zero_and_a_key_of_every_kind(moto: MotoEndpoint) -> None:
    bucket = moto.create_bucket()
    client = _client(moto.url, bucket)
    for name in ("a/b/c", "sp ace/%25/+&=?#", "ünï/日本", "~tilde/./..dots"):
        version = client.put(name, b"", if_match=None, if_absent=True, write_id="w")
        got = client.get(name)
        assert (got.data, got.size, got.version.value) == (b"", 0, version.value)
    assert sorted(o["Key"] for o in moto.client().list_objects_v2(Bucket=bucket)["Contents"]
                  ) == sorted(["a/b/c", "sp ace/%25/+&=?#", "ünï/日本", "~tilde/./..dots"])


def test_a_missing_bucket_is_no_such_bucket(moto: MotoEndpoint) -> None:
    client = _client(moto.url, f"fsseam-gone-{uuid.uuid4().hex[:8]}")
    code = _outcome(lambda: client.get("k"))
    assert code == ("FileNotFoundError", "NoSuchBucket", "NoSuchBucket", 404, None)


# -- faults: botocore's and s3fs's retries, the client's 409 loop ---------------------
@pytest.fixture(scope="module")
def faulty() -> Iterator[tuple[MotoEndpoint, FaultPlan]]:
    plan = FaultPlan()
    with moto_server(faults=plan) as endpoint:
        yield endpoint, plan


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    import aiobotocore.endpoint
    import s3fs.core

    from fsseam.testing.faults import shorten_sleeps

    async def short_sleep(self: Any, amount: float) -> None:
        pass

    monkeypatch.setattr(aiobotocore.endpoint.AioEndpoint, "_sleep", short_sleep)
    shorten_sleeps(monkeypatch, s3fs.core)


def test_a_conditional_conflict_is_retried_by_the_client(
    faulty: tuple[MotoEndpoint, FaultPlan],
) -> None:
    moto, plan = faulty
    bucket = moto.create_bucket()
    client = _client(moto.url, bucket)
    old = client.put("f", b"1", if_match=None, if_absent=True, write_id="w1")
    plan.inject("PUT", f"/{bucket}/f", "409", 2)
    new = client.put("f", b"2", if_match=old, if_absent=False, write_id="w2")
    assert plan.seen("PUT", f"/{bucket}/f") == 4  # the first write, two 409s, the write
    assert client.get("f").version == new
    # botocore retries no 409 itself: each 409 came back to the client's loop at once.
    sent = [r.headers["amz-sdk-request"] for r in moto.log.records_to(bucket)
            if r.method == "PUT" and r.path.endswith("/f")]
    assert sent == ["attempt=1"] * 4
    plan.clear()


def test_server_errors_are_retried_as_botocore_retries_them(
    faulty: tuple[MotoEndpoint, FaultPlan],
) -> None:
    moto, plan = faulty
    bucket = moto.create_bucket()
    client = _client(moto.url, bucket)
    client.put("f", b"data", if_match=None, if_absent=True, write_id="w")
    moto.log.clear()
    plan.inject("GET", f"/{bucket}/f", "500", 2)
    assert client.get("f").data == b"data"
    assert [r.headers["amz-sdk-request"] for r in moto.log.records_to(bucket)] == [
        "attempt=1", "attempt=2", "attempt=3"]
    # legacy mode: 5 attempts, then the InternalError as s3fs raises it (no retry of its
    # own for that code).
    plan.inject("GET", f"/{bucket}/f", "500", 100)
    moto.log.clear()
    assert _outcome(lambda: client.get("f")) == ("OSError", "ClientError", "InternalError",
                                                 500, None)
    assert len(moto.log.records_to(bucket)) == 5
    plan.clear()


def test_access_denied_is_not_retried_and_maps_to_permission_denied(
    faulty: tuple[MotoEndpoint, FaultPlan],
) -> None:
    moto, plan = faulty
    bucket = moto.create_bucket()
    backend = open_backend(f"s3://{bucket}/ws", {"endpoint_url": moto.url, **CREDENTIALS})
    backend.write("f", b"1", CreateOnly())
    plan.inject("GET", f"/{bucket}/ws/f", "403", 1)
    with pytest.raises(FsError) as info:
        backend.read("f")
    assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
    assert "AccessDenied" in info.value.message
    assert plan.seen("GET", f"/{bucket}/ws/f") == 1
    plan.clear()


# -- a kept connection the server closed ------------------------------------------------
class _Handler(StubHandler):
    """Answers as S3 does, over HTTP/1.1 kept alive; with the server's ``close_after``,
    closes the connection after answering without saying so: an idle timeout."""

    def _answer(self) -> None:
        self.send_response(200)
        self.send_header("ETag", f'"{len(self.server.seen)}"')
        self.send_header("Content-Length", "0" if self.command != "GET" else "4")
        self.end_headers()
        if self.command == "GET":
            self.wfile.write(b"body")
        self.close_connection = self.server.close_after

    def do_PUT(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append((self.command, self.headers["amz-sdk-request"]))
        self._answer()

    def do_GET(self) -> None:
        self.server.seen.append((self.command, self.headers["amz-sdk-request"]))
        self._answer()

def test_a_put_after_the_server_closed_the_kept_connection_goes_on_a_new_one() -> None:
    with serving(_Handler, close_after=True) as server:
        client = _client(server.url, "bkt")
        client.put("a", b"one", if_match=None, if_absent=False, write_id="w1")
        assert server.closed.wait(10)
        client.put("a", b"two", if_match=None, if_absent=False, write_id="w2")
    # Each sent once: the closed connection was seen before the second put was sent.
    assert server.seen == [("PUT", "attempt=1"), ("PUT", "attempt=1")]
    assert server.connections == 2


def test_requests_share_one_kept_connection() -> None:
    with serving(_Handler, close_after=False) as server:
        client = _client(server.url, "bkt")
        for _ in range(5):
            assert client.get("a").data == b"body"
    assert server.connections == 1


# -- where the transport is not used ------------------------------------------------------
def test_under_mock_aws_every_request_keeps_to_the_loop() -> None:
    with mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="mocked")
        # Requests sent from the thread would go to AWS itself, not to the mock: a write
        # answered, a 412 for a stale version and a read of the bytes are the mock's.
        backend = Workspace("s3://mocked/p").backend
        first = backend.write("f.txt", b"one\n", CreateOnly())
        backend.write("f.txt", b"two\n", IfMatch(first))
        with pytest.raises(FsError) as info:
            backend.write("f.txt", b"three\n", IfMatch(first))
        assert info.value.code is ErrorCode.FS_STALE
        assert backend.read("f.txt").data == b"two\n"
        stored = boto3.client("s3", region_name="us-east-1").get_object(
            Bucket="mocked", Key="p/f.txt")
        assert stored["Body"].read() == b"two\n"


def test_a_client_with_a_hook_of_its_own_or_extra_kwargs_keeps_to_the_loop(
    moto: MotoEndpoint,
) -> None:
    bucket = moto.create_bucket()
    hooked = _client(moto.url, bucket)
    seen: list[str] = []

    async def hook(request: Any, **kwargs: Any) -> None:
        seen.append(request.method)

    hooked.fs.connect()
    hooked.fs.s3.meta.events.register("before-send.s3", hook)
    hooked.put("f", b"x", if_match=None, if_absent=False, write_id="w")
    assert hooked.get("f").data == b"x"
    assert seen == ["PUT", "GET"]
    extra = _client(moto.url, bucket, s3_additional_kwargs={"ServerSideEncryption": "AES256"})
    moto.log.clear()
    extra.put("g", b"y", if_match=None, if_absent=False, write_id="w")
    (put,) = moto.log.records_to(bucket)
    assert put.headers["x-amz-server-side-encryption"] == "AES256"
    assert MARK not in put.headers["user-agent"]


def test_refreshable_credentials_are_refreshed_when_due(moto: MotoEndpoint) -> None:
    import datetime

    from aiobotocore.credentials import AioRefreshableCredentials

    bucket = moto.create_bucket()
    client = _client(moto.url, bucket)
    fetched: list[int] = []

    async def fetch() -> dict[str, str]:
        fetched.append(1)
        # The first expires in a second (inside botocore's refresh window: due at once),
        # the next in an hour.
        seconds = 1 if len(fetched) == 1 else 3600
        expiry = datetime.datetime.now(datetime.UTC) + datetime.timedelta(
            seconds=seconds)
        return {"access_key": CREDENTIALS["key"], "secret_key": CREDENTIALS["secret"],
                "token": f"token-{len(fetched)}", "expiry_time": expiry.isoformat()}

    client.fs.connect()
    client.fs.s3._request_signer._credentials = AioRefreshableCredentials.create_from_metadata(
        metadata={"access_key": "old", "secret_key": "old", "token": "token-0",
                  "expiry_time": "2000-01-01T00:00:00+00:00"},
        refresh_using=fetch, method="test")
    moto.log.clear()
    client.put("f", b"x", if_match=None, if_absent=False, write_id="w")
    assert client.get("f").data == b"x"
    assert client.head("f").size == 1
    tokens = [r.headers.get("x-amz-security-token") for r in moto.log.records_to(bucket)]
    # Refreshed before the first request (expired), again before the second (due), then
    # kept; every request sent from the thread with the token of the moment.
    assert tokens == ["token-1", "token-2", "token-2"]
    assert all(MARK in r.headers["user-agent"] for r in moto.log.records_to(bucket))
