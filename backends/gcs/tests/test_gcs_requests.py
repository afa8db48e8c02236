"""Request budget, counted at the server side by a proxy in front of the emulator.

A version must come from the same round trip as the bytes (never HEAD then GET), and a
conditional write must be one request decided by the storage (never read-check-write).
"""

from __future__ import annotations

from typing import Any

import pytest
from fsseam_gcs import GCSBackend

from fsseam.errors import Conflict
from fsseam.versions import CreateOnly, IfMatch, Overwrite

UPLOAD = ("POST", "/upload/storage/v1/b/{bucket}/o")
MEDIA = ("GET", "/download/storage/v1/b/{bucket}/o/{name}")
META = ("GET", "/storage/v1/b/{bucket}/o/{name}")


@pytest.fixture
def counted(counting_proxy: Any, gcs_bucket: str) -> tuple[GCSBackend, Any]:
    backend = GCSBackend.from_url(
        f"gs://{gcs_bucket}/p",
        {"endpoint_url": counting_proxy.url, "token": "anon", "project": "test"},
    )
    counting_proxy.take()
    return backend, counting_proxy


def _req(template: tuple[str, str], bucket: str, name: str = "") -> tuple[str, str]:
    method, path = template
    return method, path.format(bucket=bucket, name=name.replace("/", "%2F"))


def test_create_only_write_is_one_upload(counted: tuple[GCSBackend, Any]) -> None:
    backend, proxy = counted
    backend.write("a.txt", b"hello", CreateOnly())
    assert proxy.take() == [_req(UPLOAD, backend.bucket)]


def test_read_is_one_get(counted: tuple[GCSBackend, Any]) -> None:
    backend, proxy = counted
    v = backend.write("a.txt", b"hello", CreateOnly())
    proxy.take()
    blob = backend.read("a.txt")
    assert (blob.data, blob.version) == (b"hello", v)
    assert proxy.take() == [_req(MEDIA, backend.bucket, "p/a.txt")]


def test_read_then_if_match_write_is_one_get_and_one_upload(
    counted: tuple[GCSBackend, Any],
) -> None:
    backend, proxy = counted
    backend.write("a.txt", b"1", CreateOnly())
    proxy.take()
    blob = backend.read("a.txt")
    v2 = backend.write("a.txt", b"2", IfMatch(blob.version))
    assert proxy.take() == [_req(MEDIA, backend.bucket, "p/a.txt"), _req(UPLOAD, backend.bucket)]
    assert v2 != blob.version


def test_overwrite_and_stat_are_one_request_each(counted: tuple[GCSBackend, Any]) -> None:
    backend, proxy = counted
    backend.write("a.txt", b"hello", Overwrite())
    assert proxy.take() == [_req(UPLOAD, backend.bucket)]
    assert backend.stat("a.txt").size == 5
    assert proxy.take() == [_req(META, backend.bucket, "p/a.txt")]


def test_small_stream_is_one_ranged_get(counted: tuple[GCSBackend, Any]) -> None:
    backend, proxy = counted
    v = backend.write("a.txt", b"x" * 1000, CreateOnly())
    proxy.take()
    stream = backend.open_read("a.txt", chunk_size=4096)
    assert stream.version == v
    assert b"".join(stream.chunks()) == b"x" * 1000
    stream.close()
    assert proxy.take() == [_req(MEDIA, backend.bucket, "p/a.txt")]


def test_failed_if_match_costs_one_extra_probe_only(counted: tuple[GCSBackend, Any]) -> None:
    backend, proxy = counted
    v1 = backend.write("a.txt", b"1", CreateOnly())
    backend.write("a.txt", b"2", IfMatch(v1))
    proxy.take()
    with pytest.raises(Conflict) as info:
        backend.write("a.txt", b"3", IfMatch(v1))
    assert info.value.reason == "mismatch"
    # the rejected upload, then one metadata GET to tell "changed" from "deleted"
    assert proxy.take() == [_req(UPLOAD, backend.bucket), _req(META, backend.bucket, "p/a.txt")]


def test_same_bytes_from_a_losing_writer_is_still_a_conflict(
    counted: tuple[GCSBackend, Any],
) -> None:
    """Two agents incrementing "5" both write "6": the loser must hear it lost, although
    the object holds exactly its bytes (equal content is not our write)."""
    backend, _ = counted
    v = backend.write("n", b"5", CreateOnly())
    backend.write("n", b"6", IfMatch(v))
    with pytest.raises(Conflict):
        backend.write("n", b"6", IfMatch(v))
