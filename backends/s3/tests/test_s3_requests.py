"""Request counts measured at the moto server: the round trips docs/backends.md promises."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs

import pytest
from fsseam_s3 import S3Backend

from fsseam import Conflict, CreateOnly, ErrorCode, FsError, IfMatch, Overwrite, open_backend


@pytest.fixture
def backend(bucket: str, s3_options: dict[str, Any]) -> S3Backend:
    b = open_backend(f"s3://{bucket}/p", s3_options)
    assert isinstance(b, S3Backend)
    return b


def measure(moto: Any, bucket: str) -> list[tuple[str, str]]:
    return moto.log.to_bucket(bucket)


def test_read_is_one_get(backend: S3Backend, moto: Any, bucket: str) -> None:
    backend.write("a.txt", b"hello", CreateOnly())
    moto.log.clear()
    blob = backend.read("a.txt")
    assert blob.data == b"hello"
    assert measure(moto, bucket) == [("GET", f"/{bucket}/p/a.txt")]


def listing_query(moto: Any, bucket: str, index: int = 0) -> dict[str, list[str]]:
    """The query of the ``index``-th request to ``bucket`` (a ListObjectsV2)."""
    return parse_qs(moto.log.records_to(bucket)[index].query)


def test_create_only_write_is_one_listing_and_one_put(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    """A new file looks at "new.txt/" once (a path is a file or a directory), then PUTs."""
    moto.log.clear()
    backend.write("new.txt", b"x", CreateOnly())
    assert measure(moto, bucket) == [("GET", f"/{bucket}"), ("PUT", f"/{bucket}/p/new.txt")]
    query = listing_query(moto, bucket)
    assert (query["prefix"], query["max-keys"]) == (["p/new.txt/"], ["1"])


def test_overwrite_is_one_listing_and_one_put(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    backend.write("o.txt", b"x", CreateOnly())
    moto.log.clear()
    backend.write("o.txt", b"y", Overwrite())
    assert measure(moto, bucket) == [("GET", f"/{bucket}"), ("PUT", f"/{bucket}/p/o.txt")]


def test_create_below_the_root_also_heads_each_parent_at_once(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    moto.log.clear()
    backend.write("a/b/new.txt", b"x", CreateOnly())
    got = measure(moto, bucket)
    assert sorted(got[:-1]) == [
        ("GET", f"/{bucket}"),
        ("HEAD", f"/{bucket}/p/a"),
        ("HEAD", f"/{bucket}/p/a/b"),
    ]
    assert got[-1] == ("PUT", f"/{bucket}/p/a/b/new.txt")


def test_if_match_write_after_write_is_one_put(backend: S3Backend, moto: Any, bucket: str) -> None:
    v = backend.write("a.txt", b"one", CreateOnly())
    moto.log.clear()
    backend.write("a.txt", b"two", IfMatch(v))
    assert measure(moto, bucket) == [("PUT", f"/{bucket}/p/a.txt")]


def test_read_then_if_match_write_is_one_get_one_put(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    backend.write("a.txt", b"one", CreateOnly())
    moto.log.clear()
    blob = backend.read("a.txt")
    backend.write("a.txt", b"two", IfMatch(blob.version))
    assert measure(moto, bucket) == [("GET", f"/{bucket}/p/a.txt"), ("PUT", f"/{bucket}/p/a.txt")]


def test_lost_cas_is_one_put_and_one_head(backend: S3Backend, moto: Any, bucket: str) -> None:
    """The HEAD reads back the write id: a 412 may answer a resend of our own landed write."""
    v = backend.write("a.txt", b"one", CreateOnly())
    backend.write("a.txt", b"two", IfMatch(v))
    moto.log.clear()
    with pytest.raises(Exception, match="changed since it was read"):
        backend.write("a.txt", b"three", IfMatch(v))
    assert measure(moto, bucket) == [("PUT", f"/{bucket}/p/a.txt"), ("HEAD", f"/{bucket}/p/a.txt")]


def test_same_bytes_from_a_losing_writer_is_still_a_conflict(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    """Two agents incrementing "5" both write "6": the loser must hear it lost, although
    the object holds exactly its bytes (equal content is not our write)."""
    v = backend.write("n", b"5", CreateOnly())
    backend.write("n", b"6", IfMatch(v))
    with pytest.raises(Exception, match="changed since it was read"):
        backend.write("n", b"6", IfMatch(v))


def test_stream_is_one_get_per_chunk(backend: S3Backend, moto: Any, bucket: str) -> None:
    data = bytes(range(256)) * 40  # 10240 bytes
    backend.write("s.bin", data, CreateOnly())
    moto.log.clear()
    stream = backend.open_read("s.bin", chunk_size=4096)
    got = b"".join(stream.chunks())
    stream.close()
    assert got == data
    assert stream.size == len(data)
    assert measure(moto, bucket) == [("GET", f"/{bucket}/p/s.bin")] * 3


def test_s3fs_cat_file_costs_head_and_get(backend: S3Backend, moto: Any, bucket: str) -> None:
    """Regression guard for a storage fact (docs/decisions.md): why read() uses the raw
    GetObject call."""
    backend.write("a.txt", b"hello", CreateOnly())
    moto.log.clear()
    assert backend.fs.cat_file(f"{bucket}/p/a.txt") == b"hello"
    methods = [m for m, _ in measure(moto, bucket)]
    assert methods == ["HEAD", "GET"]


# -- delete, copy, walk, history ---------------------------------------------------------
def test_delete_of_an_observed_object_is_one_request(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    v = backend.write("a.txt", b"x", CreateOnly())
    moto.log.clear()
    backend.delete("a.txt", IfMatch(v))
    assert measure(moto, bucket) == [("DELETE", f"/{bucket}/p/a.txt")]


def test_stale_delete_is_one_delete_and_one_look(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    v1 = backend.write("a.txt", b"one", CreateOnly())
    backend.write("a.txt", b"two", IfMatch(v1))
    moto.log.clear()
    with pytest.raises(Conflict) as info:
        backend.delete("a.txt", IfMatch(v1))
    assert info.value.reason == "mismatch"
    assert measure(moto, bucket) == [
        ("DELETE", f"/{bucket}/p/a.txt"),
        ("HEAD", f"/{bucket}/p/a.txt"),
    ]
    assert backend.read("a.txt").data == b"two"


def test_delete_without_a_version_looks_first(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    """S3 deletes a missing key without a word: the HEAD is what reports FS_NOT_FOUND."""
    backend.write("a.txt", b"x", CreateOnly())
    moto.log.clear()
    backend.delete("a.txt")
    assert measure(moto, bucket) == [
        ("HEAD", f"/{bucket}/p/a.txt"),
        ("DELETE", f"/{bucket}/p/a.txt"),
    ]


def test_copy_reads_the_source_and_creates_the_target(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    """Against moto (a custom endpoint) a copy is GET + create-only PUT, both guarded."""
    assert backend.server_side_copy is False
    assert backend.capabilities.copy_create_only_atomic is False
    v = backend.write("a.txt", b"x" * 100, CreateOnly())
    moto.log.clear()
    backend.copy("a.txt", "b.txt", IfMatch(v))
    assert measure(moto, bucket) == [
        ("GET", f"/{bucket}"),
        ("GET", f"/{bucket}/p/a.txt"),
        ("PUT", f"/{bucket}/p/b.txt"),
    ]


def test_server_side_copy_is_one_listing_and_one_copy(
    bucket: str, s3_options: dict[str, Any], moto: Any
) -> None:
    b = open_backend(f"s3://{bucket}/p", {**s3_options, "server_side_copy": True})
    assert isinstance(b, S3Backend)
    assert b.capabilities.copy_create_only_atomic is True
    v = b.write("a.txt", b"x" * 100, CreateOnly())
    moto.log.clear()
    v2 = b.copy("a.txt", "b.txt", IfMatch(v))
    assert measure(moto, bucket) == [("GET", f"/{bucket}"), ("PUT", f"/{bucket}/p/b.txt")]
    assert moto.log.records_to(bucket)[-1].request_bytes == 0  # no bytes through the client
    blob = b.read("b.txt")
    assert (blob.data, blob.version) == (b"x" * 100, v2)


def test_walk_is_one_listing_per_thousand_keys(
    bucket: str, s3_options: dict[str, Any], moto: Any, s3_direct: Any
) -> None:
    """2,500 keys in 50 directories: 3 flat listings, never one per directory."""
    names = [f"w/d{i % 50:02d}/f{i:04d}" for i in range(2500)]
    for n in names:
        s3_direct.put_object(Bucket=bucket, Key=n, Body=b"xy")
    b = open_backend(f"s3://{bucket}/w", s3_options)
    moto.log.clear()
    entries = list(b.walk(""))
    assert [e.key for e in entries] == sorted(n.removeprefix("w/") for n in names)
    assert {e.size for e in entries} == {2}
    assert measure(moto, bucket) == [("GET", f"/{bucket}")] * 3


def test_walk_pages_at_the_configured_size(
    bucket: str, s3_options: dict[str, Any], moto: Any, s3: Any
) -> None:
    for i in range(25):
        s3.put_object(Bucket=bucket, Key=f"w/{i % 5}/{i:02d}", Body=b"")
    b = open_backend(f"s3://{bucket}/w", {**s3_options, "list_page_size": 10})
    moto.log.clear()
    assert len(list(b.walk(""))) == 25
    assert measure(moto, bucket) == [("GET", f"/{bucket}")] * 3
    assert all(parse_qs(r.query)["max-keys"] == ["10"] for r in moto.log.records_to(bucket))


def test_history_costs_one_listing_and_one_get(
    versioned_bucket: str, s3_options: dict[str, Any], moto: Any
) -> None:
    b = open_backend(f"s3://{versioned_bucket}/p", s3_options)
    v1 = b.write("h.txt", b"one", CreateOnly())
    b.write("h.txt", b"two", IfMatch(v1))
    moto.log.clear()
    kept = b.versions("h.txt")
    # One ListObjectVersions page: its VersionIds prove the bucket keeps versions, so
    # GetBucketVersioning is not asked, not even the first time.
    assert [parse_qs(r.query, keep_blank_values=True).keys() & {"versioning", "versions"}
            for r in moto.log.records_to(versioned_bucket)] == [{"versions"}]
    moto.log.clear()
    old = b.read_version("h.txt", kept[1].version)
    assert old.data == b"one"
    assert measure(moto, versioned_bucket) == [("GET", f"/{versioned_bucket}/p/h.txt")]
    assert "versionId" in parse_qs(moto.log.records_to(versioned_bucket)[0].query)


def test_reading_an_old_version_first_needs_no_bucket_look(
    versioned_bucket: str, s3_options: dict[str, Any], moto: Any
) -> None:
    """A version that carries its VersionId (every version a read or write of a versioned
    bucket returns) is read with one GET, even before anything asked the bucket."""
    writer = open_backend(f"s3://{versioned_bucket}/p", s3_options)
    v1 = writer.write("h.txt", b"one", CreateOnly())
    writer.write("h.txt", b"two", IfMatch(v1))
    fresh = open_backend(f"s3://{versioned_bucket}/p", s3_options)
    moto.log.clear()
    assert fresh.read_version("h.txt", v1).data == b"one"
    assert measure(moto, versioned_bucket) == [("GET", f"/{versioned_bucket}/p/h.txt")]


def test_unversioned_bucket_history_asks_the_bucket_once(
    backend: S3Backend, moto: Any, bucket: str
) -> None:
    backend.write("h.txt", b"one", CreateOnly())
    moto.log.clear()
    for _ in range(2):
        with pytest.raises(FsError) as info:
            backend.versions("h.txt")
        assert info.value.code is ErrorCode.FS_UNSUPPORTED
    asked = [parse_qs(r.query, keep_blank_values=True).keys() & {"versioning", "versions"}
             for r in moto.log.records_to(bucket)]
    # the second call is refused from what the first learnt, without a request
    assert asked == [{"versions"}, {"versioning"}]
