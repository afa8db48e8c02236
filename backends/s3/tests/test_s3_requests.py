"""Request counts measured at the moto server: the round trips docs/backends.md promises."""

from __future__ import annotations

from typing import Any

import pytest
from fsseam_s3 import S3Backend

from fsseam import CreateOnly, IfMatch, Overwrite, open_backend


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


def test_create_only_write_is_one_put(backend: S3Backend, moto: Any, bucket: str) -> None:
    moto.log.clear()
    backend.write("new.txt", b"x", CreateOnly())
    assert measure(moto, bucket) == [("PUT", f"/{bucket}/p/new.txt")]


def test_overwrite_is_one_put(backend: S3Backend, moto: Any, bucket: str) -> None:
    moto.log.clear()
    backend.write("o.txt", b"x", Overwrite())
    assert measure(moto, bucket) == [("PUT", f"/{bucket}/p/o.txt")]


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
