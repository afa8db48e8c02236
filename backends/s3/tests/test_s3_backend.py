"""S3Backend behaviour beyond the conformance suite: options, versioned buckets, streams,
listings, multipart uploads and the error mapping."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from fsseam_s3 import S3Backend, map_s3_error
from s3fs.errors import translate_boto_error

from fsseam import Conflict, CreateOnly, ErrorCode, FsError, IfMatch, Overwrite, Version
from fsseam.backends import open_backend

MiB = 1 << 20


def s3_backend(url: str, options: dict[str, Any]) -> S3Backend:
    b = open_backend(url, options)
    assert isinstance(b, S3Backend)
    return b


LOOP_ONLY = {"direct_requests": False}


@pytest.fixture
def backend(bucket: str, s3_options: dict[str, Any]) -> S3Backend:
    return s3_backend(f"s3://{bucket}/ws", s3_options)


@pytest.fixture
def loop_backend(bucket: str, s3_options: dict[str, Any]) -> S3Backend:
    """Every request through ``fs._call_s3``, for errors injected there."""
    return s3_backend(f"s3://{bucket}/ws", {**s3_options, **LOOP_ONLY})


def client_error(code: str, status: int, op: str = "PutObject", **extra: str) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": code, "Message": f"{code} happened", **extra},
            "ResponseMetadata": {"HTTPStatusCode": status},
        },
        op,
    )


def inject(backend: S3Backend, method: str, errors: list[BaseException]) -> list[str]:
    """Make the next calls of ``method`` fail with ``errors`` (wrapped the way s3fs wraps
    them), then pass through. Returns the log of calls of ``method``. The backend must
    send every request through ``_call_s3`` (``direct_requests=False``); the direct path's
    answers to the same errors, from a server, are in test_s3_transport.py."""
    real = backend.fs._call_s3
    calls: list[str] = []

    async def fake(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == method:
            calls.append(name)
            if errors:
                raise translate_boto_error(errors.pop(0))
        return await real(name, *args, **kwargs)

    backend.fs._call_s3 = fake
    return calls


# -- construction ------------------------------------------------------------------
def test_from_url_builds_its_own_uncached_filesystem(
    bucket: str, s3_options: dict[str, Any]
) -> None:
    a = s3_backend(f"s3://{bucket}/a/b/", s3_options)
    b = s3_backend(f"s3://{bucket}/a/b", s3_options)
    assert a.root == f"{bucket}/a/b"
    assert (a.bucket, a.prefix) == (bucket, "a/b")
    assert a.fs is not b.fs
    assert a.fs.client_kwargs == {
        "endpoint_url": s3_options["endpoint_url"],
        "region_name": "us-east-1",
    }
    assert a.fs.dircache.use_listings_cache is False
    assert a.capabilities.create_only_atomic and a.capabilities.if_match_atomic
    assert (a.capabilities.version_kind, a.capabilities.ranged_reads) == ("etag", True)


def test_server_side_copy_only_against_aws_unless_told(
    s3_options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other endpoints (MinIO, moto, ...) may ignore CopyObject's conditions: a copy there
    reads and writes create-only, and Capabilities say so. No request is made here."""
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_ENDPOINT_URL_S3", raising=False)
    aws = s3_backend("s3://b/p", {"key": "k", "secret": "s"})
    other = s3_backend("s3://b/p", s3_options)
    forced = s3_backend("s3://b/p", {**s3_options, "server_side_copy": True})
    assert [b.server_side_copy for b in (aws, other, forced)] == [True, False, True]
    assert [b.capabilities.copy_create_only_atomic for b in (aws, other, forced)] == [
        True, False, True,
    ]
    assert S3Backend.capabilities.copy_create_only_atomic is True
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    assert s3_backend("s3://b/p", {"key": "k", "secret": "s"}).server_side_copy is False


def test_explicit_region_and_client_kwargs_are_kept(
    bucket: str, s3_options: dict[str, Any]
) -> None:
    opts = {**s3_options, "region_name": "eu-west-1", "client_kwargs": {"use_ssl": False}}
    b = s3_backend(f"s3://{bucket}", opts)
    assert b.fs.client_kwargs == {
        "use_ssl": False,
        "endpoint_url": s3_options["endpoint_url"],
        "region_name": "eu-west-1",
    }


def test_given_filesystem_is_used(bucket: str, s3_options: dict[str, Any]) -> None:
    first = s3_backend(f"s3://{bucket}/x", s3_options)
    second = open_backend(f"s3://{bucket}/x", {}, fs=first.fs)
    assert isinstance(second, S3Backend)
    assert second.fs is first.fs
    v = first.write("f", b"shared", CreateOnly())
    assert second.read("f").version == v


def test_url_without_bucket_is_invalid(s3_options: dict[str, Any]) -> None:
    with pytest.raises(FsError) as info:
        s3_backend("s3://", s3_options)
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT


def test_resolve_normalizes(backend: S3Backend) -> None:
    assert backend.resolve("a//b/./c/") == "a/b/c"
    assert backend.resolve("a/../b") == "b"
    assert backend.resolve("") == ""
    with pytest.raises(FsError) as info:
        backend.resolve("../x")
    assert info.value.code is ErrorCode.FS_OUTSIDE_ROOT


def test_keys_land_under_the_prefix(backend: S3Backend, s3: Any, bucket: str) -> None:
    backend.write("d/f.txt", b"abc", CreateOnly())
    got = s3.get_object(Bucket=bucket, Key="ws/d/f.txt")
    assert got["Body"].read() == b"abc"


# -- versions ------------------------------------------------------------------
def test_version_is_the_quoted_etag(backend: S3Backend, s3: Any, bucket: str) -> None:
    v = backend.write("a", b"hello", CreateOnly())
    head = s3.head_object(Bucket=bucket, Key="ws/a")
    assert v == Version(kind="etag", value=head["ETag"])
    assert v.value == '"5d41402abc4b2a76b9719d911017c592"'  # md5("hello"), quotes kept
    assert v.detail is None


def test_identical_bytes_keep_the_etag(backend: S3Backend) -> None:
    """A->B->A passes IfMatch(A): no content is lost, the bytes are what was read."""
    va = backend.write("a", b"A", CreateOnly())
    backend.write("a", b"B", IfMatch(va))
    assert backend.write("a", b"A", Overwrite()) == va
    backend.write("a", b"C", IfMatch(va))
    assert backend.read("a").data == b"C"


def test_versioned_bucket_keeps_version_id(
    versioned_bucket: str, s3_options: dict[str, Any], s3: Any
) -> None:
    b = s3_backend(f"s3://{versioned_bucket}/v", s3_options)
    v1 = b.write("a", b"same", CreateOnly())
    v2 = b.write("a", b"same", IfMatch(v1))
    v3 = b.write("a", b"other", IfMatch(v2))
    ids = [v.detail for v in (v1, v2, v3)]
    assert all(ids) and len(set(ids)) == 3
    listed = s3.list_object_versions(Bucket=versioned_bucket, Prefix="v/a")["Versions"]
    assert sorted(x["VersionId"] for x in listed) == sorted(ids)  # type: ignore[type-var]
    blob = b.read("a")
    assert (blob.data, blob.version, blob.version.detail) == (b"other", v3, v3.detail)
    # CAS still works: ETag equality, VersionId only carried along.
    with pytest.raises(Conflict) as info:
        b.write("a", b"stale", IfMatch(v1))
    assert info.value.reason == "mismatch"
    assert b.read("a").data == b"other"


def test_history_in_a_versioned_bucket(versioned_bucket: str, s3_options: dict[str, Any]) -> None:
    b = s3_backend(f"s3://{versioned_bucket}/h", s3_options)
    v1 = b.write("f", b"one", CreateOnly())
    v2 = b.write("f", b"two", IfMatch(v1))
    b.delete("f", IfMatch(v2))  # a delete marker
    v3 = b.write("f", b"three", CreateOnly())
    kept = b.versions("f")
    assert (kept[0].version, kept[0].latest, kept[0].deleted, kept[0].size) == (v3, True, False, 5)
    assert [k.version for k in kept if not k.deleted] == [v3, v2, v1]
    assert [(k.size, k.latest) for k in kept if k.deleted] == [(None, False)]
    assert all(k.version.detail for k in kept) and all(k.modified for k in kept)
    # A version known only by its ETag is found by one look at the listing.
    assert b.read_version("f", Version(kind="etag", value=v1.value)).data == b"one"
    marker = next(k.version for k in kept if k.deleted)
    for missing in (marker, Version(kind="etag", value='"0"', detail="no-such-version"),
                    Version(kind="generation", value="1")):
        with pytest.raises(FsError) as info:
            b.read_version("f", missing)
        assert info.value.code is ErrorCode.FS_NOT_FOUND, missing
    with pytest.raises(FsError) as none:
        b.versions("never")
    assert none.value.code is ErrorCode.FS_NOT_FOUND


def test_history_off_says_how_to_turn_it_on(backend: S3Backend, bucket: str) -> None:
    v = backend.write("f", b"x", CreateOnly())
    for call in (lambda: backend.versions("f"), lambda: backend.read_version("f", v)):
        with pytest.raises(FsError) as info:
            call()
        assert info.value.code is ErrorCode.FS_UNSUPPORTED
        assert f"enable versioning on bucket {bucket}" in info.value.message


def test_stale_if_match_keeps_other_writers_bytes(
    backend: S3Backend, bucket: str, s3_options: dict[str, Any]
) -> None:
    other = s3_backend(f"s3://{bucket}/ws", s3_options)
    seen = backend.read("f") if False else None
    assert seen is None
    v = backend.write("f", b"base\r\n", CreateOnly())
    theirs = bytes(range(256)) + b"\xef\xbb\xbf their edit \r\n"
    other.write("f", theirs, IfMatch(v))
    with pytest.raises(Conflict) as info:
        backend.write("f", b"mine", IfMatch(v))
    assert (info.value.reason, info.value.code) == ("mismatch", ErrorCode.FS_STALE)
    assert backend.read("f").data == theirs


# -- errors ------------------------------------------------------------------------
def test_create_only_on_existing_is_exists(backend: S3Backend) -> None:
    backend.write("f", b"1", CreateOnly())
    with pytest.raises(Conflict) as info:
        backend.write("f", b"2", CreateOnly())
    assert (info.value.reason, info.value.code) == ("exists", ErrorCode.FS_ALREADY_EXISTS)


def test_if_match_on_never_existing_key_is_missing(backend: S3Backend) -> None:
    ghost = Version(kind="etag", value='"0123456789abcdef0123456789abcdef"')
    with pytest.raises(Conflict) as info:
        backend.write("nope", b"x", IfMatch(ghost))
    assert (info.value.reason, info.value.code) == ("missing", ErrorCode.FS_NOT_FOUND)
    with pytest.raises(FsError) as gone:
        backend.read("nope")
    assert gone.value.code is ErrorCode.FS_NOT_FOUND


def test_if_match_with_foreign_version_kind_conflicts_without_writing(backend: S3Backend) -> None:
    backend.write("f", b"1", CreateOnly())
    with pytest.raises(Conflict) as info:
        backend.write("f", b"2", IfMatch(Version(kind="sha256", value="abc")))
    assert info.value.reason == "mismatch"
    assert backend.read("f").data == b"1"


def test_conditional_request_conflict_is_retried(bucket: str, s3_options: dict[str, Any]) -> None:
    b = s3_backend(f"s3://{bucket}/r", {**s3_options, "conflict_retries": 3, **LOOP_ONLY})
    v = b.write("f", b"1", CreateOnly())
    calls = inject(b, "put_object", [client_error("ConditionalRequestConflict", 409)] * 2)
    v2 = b.write("f", b"2", IfMatch(v))
    assert len(calls) == 3
    assert b.read("f").version == v2


def test_conditional_request_conflict_gives_up_and_changes_nothing(
    bucket: str, s3_options: dict[str, Any]
) -> None:
    b = s3_backend(f"s3://{bucket}/r", {**s3_options, "conflict_retries": 2, **LOOP_ONLY})
    v = b.write("f", b"1", CreateOnly())
    calls = inject(b, "put_object", [client_error("ConditionalRequestConflict", 409)] * 5)
    with pytest.raises(FsError) as info:
        b.write("f", b"2", IfMatch(v))
    assert len(calls) == 3
    assert info.value.code is ErrorCode.FS_BACKEND
    assert "ConditionalRequestConflict" in info.value.message
    assert "nothing was changed" in info.value.message
    assert b.read("f").data == b"1"


def test_conditional_delete_conflict_is_retried(bucket: str, s3_options: dict[str, Any]) -> None:
    b = s3_backend(f"s3://{bucket}/r", {**s3_options, "conflict_retries": 3, **LOOP_ONLY})
    v = b.write("f", b"1", CreateOnly())
    calls = inject(b, "delete_object", [client_error("ConditionalRequestConflict", 409)] * 2)
    b.delete("f", IfMatch(v))
    assert len(calls) == 3
    with pytest.raises(FsError) as info:
        b.read("f")
    assert info.value.code is ErrorCode.FS_NOT_FOUND


def test_other_409_is_not_retried(loop_backend: S3Backend) -> None:
    calls = inject(loop_backend, "put_object", [client_error("OperationAborted", 409)])
    with pytest.raises(FsError) as info:
        loop_backend.write("f", b"x", Overwrite())
    assert len(calls) == 1
    assert info.value.code is ErrorCode.FS_BACKEND


def test_access_denied_is_permission_denied(loop_backend: S3Backend) -> None:
    loop_backend.write("f", b"1", CreateOnly())
    inject(loop_backend, "get_object", [client_error("AccessDenied", 403, "GetObject")])
    with pytest.raises(FsError) as info:
        loop_backend.read("f")
    assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
    assert "AccessDenied" in info.value.message


def test_unknown_error_is_backend_nothing_changed(loop_backend: S3Backend) -> None:
    inject(loop_backend, "put_object", [client_error("ServiceUnavailableX", 418)])
    with pytest.raises(FsError) as info:
        loop_backend.write("f", b"x", CreateOnly())
    assert info.value.code is ErrorCode.FS_BACKEND
    assert "ServiceUnavailableX" in info.value.message
    assert "nothing was changed" in info.value.message


@pytest.mark.parametrize(
    ("error", "precondition", "expected"),
    [
        (client_error("PreconditionFailed", 412, Condition="If-Match"), "if_match", "mismatch"),
        (client_error("PreconditionFailed", 412, Condition="If-None-Match"), "create", "exists"),
        (client_error("NoSuchKey", 404), "if_match", "missing"),
        (client_error("NoSuchKey", 404), None, ErrorCode.FS_NOT_FOUND),
        (client_error("404", 404, "HeadObject"), None, ErrorCode.FS_NOT_FOUND),
        (client_error("NoSuchBucket", 404), "if_match", ErrorCode.FS_NOT_FOUND),
        (client_error("NoSuchUpload", 404), "if_match", ErrorCode.FS_BACKEND),
        (client_error("InvalidAccessKeyId", 403), None, ErrorCode.FS_PERMISSION_DENIED),
        (client_error("EntityTooLarge", 400), None, ErrorCode.FS_TOO_LARGE),
        (client_error("PreconditionFailed", 412, "GetObject"), None, ErrorCode.FS_STALE),
        (ConnectionResetError("reset"), None, ErrorCode.FS_BACKEND),
        (FileNotFoundError("gone"), None, ErrorCode.FS_NOT_FOUND),
    ],
)
@pytest.mark.parametrize("wrapped", [False, True], ids=["raw", "s3fs"])
def test_error_mapping_reads_the_client_error_code(
    error: BaseException, precondition: str | None, expected: Any, wrapped: bool
) -> None:
    pre = {
        "if_match": IfMatch(Version(kind="etag", value='"x"')),
        "create": CreateOnly(),
        None: None,
    }[precondition]
    exc = translate_boto_error(error) if wrapped else error
    mapped = map_s3_error(exc, "k", "write" if pre else "read", pre, bucket="b")
    if isinstance(expected, str) and not isinstance(expected, ErrorCode):
        assert isinstance(mapped, Conflict)
        assert mapped.reason == expected
    else:
        assert type(mapped) is FsError
        assert mapped.code is expected


# -- directories and listings ---------------------------------------------------------
def test_root_is_a_directory(backend: S3Backend) -> None:
    assert backend.stat("").kind == "directory"
    assert backend.list("") == []
    for call in (lambda: backend.read(""), lambda: backend.write("", b"x", Overwrite())):
        with pytest.raises(FsError) as info:
            call()
        assert info.value.code is ErrorCode.FS_IS_DIRECTORY


def test_list_is_never_stale(backend: S3Backend, s3: Any, bucket: str) -> None:
    backend.write("d/a", b"1", CreateOnly())
    assert [(e.name, e.size) for e in backend.list("d")] == [("a", 1)]
    backend.write("d/a", b"1234", Overwrite())
    backend.write("d/b", b"", CreateOnly())
    assert [(e.name, e.size) for e in backend.list("d")] == [("a", 4), ("b", 0)]
    s3.put_object(Bucket=bucket, Key="ws/d/b", Body=b"behind its back")
    assert [(e.name, e.size) for e in backend.list("d")] == [("a", 4), ("b", 15)]
    backend.delete("d/a")
    assert [e.name for e in backend.list("d")] == ["b"]
    assert backend.stat("d/b").size == 15


def test_list_a_file_is_invalid(backend: S3Backend) -> None:
    backend.write("f", b"1", CreateOnly())
    with pytest.raises(FsError) as info:
        backend.list("f")
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT


def test_directory_marker_objects(backend: S3Backend, s3: Any, bucket: str) -> None:
    s3.put_object(Bucket=bucket, Key="ws/empty/", Body=b"")
    assert backend.list("empty") == []
    assert backend.stat("empty").kind == "directory"
    assert [(e.name, e.kind) for e in backend.list("")] == [("empty", "directory")]
    with pytest.raises(FsError) as info:
        backend.read("empty")
    assert info.value.code is ErrorCode.FS_IS_DIRECTORY


def test_list_paginates(backend: S3Backend, s3: Any, bucket: str, moto: Any) -> None:
    """Pages of 2 (S3 pages at 1000; forcing small pages keeps the test fast)."""
    for i in range(5):
        s3.put_object(Bucket=bucket, Key=f"ws/many/{i}", Body=b"")
    s3.put_object(Bucket=bucket, Key="ws/many/sub/x", Body=b"")
    real = backend.fs._call_s3

    async def small_pages(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "list_objects_v2":
            kwargs.setdefault("MaxKeys", 2)
        return await real(name, *args, **kwargs)

    backend.fs._call_s3 = small_pages
    moto.log.clear()
    entries = backend.list("many")
    assert [(e.name, e.kind) for e in entries] == [
        *[(str(i), "file") for i in range(5)],
        ("sub", "directory"),
    ]
    assert moto.log.to_bucket(bucket) == [("GET", f"/{bucket}")] * 3


def test_delete_directory_is_refused(backend: S3Backend) -> None:
    backend.write("d/f", b"x", CreateOnly())
    with pytest.raises(FsError) as info:
        backend.delete("d")
    assert info.value.code is ErrorCode.FS_IS_DIRECTORY
    assert backend.read("d/f").data == b"x"


# -- streams ---------------------------------------------------------------------
def test_stream_of_empty_object(backend: S3Backend) -> None:
    v = backend.write("e", b"", CreateOnly())
    stream = backend.open_read("e", chunk_size=8)
    assert (stream.version, stream.size) == (v, 0)
    assert list(stream.chunks()) == []


def test_stream_chunks_and_size(backend: S3Backend) -> None:
    data = b"0123456789" * 3
    v = backend.write("s", data, CreateOnly())
    stream = backend.open_read("s", chunk_size=7)
    assert (stream.version, stream.size) == (v, 30)
    assert [len(c) for c in stream.chunks()] == [7, 7, 7, 7, 2]


def test_stream_fails_when_object_changes_mid_stream(
    backend: S3Backend, s3: Any, bucket: str
) -> None:
    backend.write("s", b"A" * 20, CreateOnly())
    stream = backend.open_read("s", chunk_size=8)
    chunks = stream.chunks()
    assert next(chunks) == b"A" * 8
    s3.put_object(Bucket=bucket, Key="ws/s", Body=b"B" * 20)
    with pytest.raises(FsError) as info:
        next(chunks)
    assert info.value.code is ErrorCode.FS_STALE
    assert "changed while it was being read" in info.value.message


def test_stream_of_directory_is_directory(backend: S3Backend) -> None:
    backend.write("d/f", b"x", CreateOnly())
    with pytest.raises(FsError) as info:
        backend.open_read("d")
    assert info.value.code is ErrorCode.FS_IS_DIRECTORY


# -- multipart -----------------------------------------------------------------------
@pytest.fixture
def mp(bucket: str, s3_options: dict[str, Any]) -> S3Backend:
    """Multipart above 5 MiB in 5 MiB parts (S3's minimum part size)."""
    opts = {**s3_options, "multipart_threshold": 5 * MiB, "multipart_part_size": 5 * MiB}
    return s3_backend(f"s3://{bucket}/mp", opts)


BIG = bytes(range(256)) * (11 * MiB // 256) + b"end"  # 3 parts


def test_multipart_create_and_if_match(mp: S3Backend, s3: Any, bucket: str) -> None:
    v1 = mp.write("big", BIG, CreateOnly())
    assert v1.value.endswith('-3"')
    blob = mp.read("big")
    assert (blob.data, blob.version) == (BIG, v1)
    v2 = mp.write("big", b"x" + BIG[1:], IfMatch(v1))
    assert mp.read("big").version == v2
    with pytest.raises(Conflict) as info:
        mp.write("big", BIG, CreateOnly())
    assert info.value.reason == "exists"
    assert mp.read("big").data[:1] == b"x"
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_multipart_small_writes_stay_single_put(mp: S3Backend, moto: Any, bucket: str) -> None:
    moto.log.clear()
    mp.write("small", b"s" * (5 * MiB), CreateOnly())
    # The create's look at "small/" (a path is a file or a directory), then one PUT.
    assert moto.log.to_bucket(bucket) == [("GET", f"/{bucket}"), ("PUT", f"/{bucket}/mp/small")]


@pytest.mark.xfail(
    strict=True,
    reason="moto 5.2.5 ignores If-Match on CompleteMultipartUpload (real S3 enforces it)",
)
def test_multipart_stale_if_match_conflicts(mp: S3Backend) -> None:
    v1 = mp.write("big", BIG, CreateOnly())
    mp.write("big", b"y" + BIG[1:], IfMatch(v1))
    with pytest.raises(Conflict):
        mp.write("big", b"z" + BIG[1:], IfMatch(v1))


@pytest.mark.xfail(
    strict=True,
    reason="moto 5.2.5 ignores If-Match on CompleteMultipartUpload (real S3 answers 404)",
)
def test_multipart_if_match_on_missing_key_conflicts(mp: S3Backend) -> None:
    with pytest.raises(Conflict):
        mp.write("never", BIG, IfMatch(Version(kind="etag", value='"abc-3"')))


def test_failed_multipart_is_aborted(mp: S3Backend, s3: Any, bucket: str) -> None:
    inject(mp, "complete_multipart_upload", [client_error("InternalError", 500)])
    with pytest.raises(FsError) as info:
        mp.write("big", BIG, CreateOnly())
    assert info.value.code is ErrorCode.FS_BACKEND
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    with pytest.raises(FsError) as gone:
        mp.read("big")
    assert gone.value.code is ErrorCode.FS_NOT_FOUND
