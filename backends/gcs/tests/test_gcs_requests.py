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
LIST = ("GET", "/storage/v1/b/{bucket}/o")
DELETE = ("DELETE", "/storage/v1/b/{bucket}/o/{name}")
BUCKET = ("GET", "/storage/v1/b/{bucket}")


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


def test_create_only_write_is_one_listing_and_one_upload(
    counted: tuple[GCSBackend, Any],
) -> None:
    """A new file looks at "a.txt/" once (a path is a file or a directory), then uploads."""
    backend, proxy = counted
    backend.write("a.txt", b"hello", CreateOnly())
    assert proxy.take() == [_req(LIST, backend.bucket), _req(UPLOAD, backend.bucket)]


def test_create_below_the_root_also_looks_at_each_parent_at_once(
    counted: tuple[GCSBackend, Any],
) -> None:
    backend, proxy = counted
    backend.write("a/b/new.txt", b"x", CreateOnly())
    got = proxy.take()
    assert sorted(got[:-1]) == sorted(
        [
            _req(LIST, backend.bucket),
            _req(META, backend.bucket, "p/a"),
            _req(META, backend.bucket, "p/a/b"),
        ]
    )
    assert got[-1] == _req(UPLOAD, backend.bucket)


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
    assert proxy.take() == [_req(LIST, backend.bucket), _req(UPLOAD, backend.bucket)]
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


# -- delete, copy, walk, history ---------------------------------------------------------
def test_delete_is_one_request_with_or_without_a_version(
    counted: tuple[GCSBackend, Any],
) -> None:
    backend, proxy = counted
    v = backend.write("a.txt", b"x", CreateOnly())
    backend.write("b.txt", b"x", CreateOnly())
    proxy.take()
    backend.delete("a.txt", IfMatch(v))
    assert proxy.take() == [_req(DELETE, backend.bucket, "p/a.txt")]
    backend.delete("b.txt")  # GCS reports a missing object itself: no look first
    assert proxy.take() == [_req(DELETE, backend.bucket, "p/b.txt")]


def test_copy_reads_the_source_and_creates_the_target(counted: tuple[GCSBackend, Any]) -> None:
    """Against an emulator a copy is GET + create-only upload, both guarded."""
    backend, proxy = counted
    assert backend.server_side_copy is False
    v = backend.write("a.txt", b"x" * 100, CreateOnly())
    proxy.take()
    v2 = backend.copy("a.txt", "b.txt", IfMatch(v))
    assert proxy.take() == [
        _req(LIST, backend.bucket),
        _req(MEDIA, backend.bucket, "p/a.txt"),
        _req(UPLOAD, backend.bucket),
    ]
    assert backend.read("b.txt").version == v2


def test_server_side_copy_is_one_listing_and_one_rewrite(
    counting_proxy: Any, gcs_bucket: str
) -> None:
    backend = GCSBackend.from_url(
        f"gs://{gcs_bucket}/p",
        {"endpoint_url": counting_proxy.url, "token": "anon", "project": "test",
         "server_side_copy": True},
    )
    v = backend.write("a.txt", b"x" * 100, CreateOnly())
    counting_proxy.take()
    v2 = backend.copy("a.txt", "b.txt", IfMatch(v))
    rewrite = ("POST", f"/storage/v1/b/{gcs_bucket}/o/p%2Fa.txt/rewriteTo/b/{gcs_bucket}/o/"
                       "p%2Fb.txt")
    assert counting_proxy.take() == [_req(LIST, gcs_bucket), rewrite]
    blob = backend.read("b.txt")
    assert (blob.data, blob.version) == (b"x" * 100, v2)


def test_walk_is_one_listing_per_page_never_per_directory(
    counting_proxy: Any, gcs_bucket: str
) -> None:
    backend = GCSBackend.from_url(
        f"gs://{gcs_bucket}/p",
        {"endpoint_url": counting_proxy.url, "token": "anon", "project": "test",
         "list_page_size": 10},
    )
    keys = [f"d{i % 5}/sub/f{i:02d}" for i in range(25)]
    for key in keys:
        backend._client.upload_multipart(f"p/{key}", b"xyz", None)
    counting_proxy.take()
    entries = list(backend.walk(""))
    assert [e.key for e in entries] == sorted(keys)
    assert {e.size for e in entries} == {3}
    assert counting_proxy.take() == [_req(LIST, gcs_bucket)] * 3


def test_history_costs_one_listing_and_one_get(
    counting_proxy: Any, gcs_versioned_bucket: str
) -> None:
    bucket = gcs_versioned_bucket
    backend = GCSBackend.from_url(
        f"gs://{bucket}/p",
        {"endpoint_url": counting_proxy.url, "token": "anon", "project": "test"},
    )
    v1 = backend.write("h.txt", b"one", CreateOnly())
    backend.write("h.txt", b"two", IfMatch(v1))
    counting_proxy.take()
    kept = backend.versions("h.txt")
    # One listing: two generations of one name prove the bucket keeps versions.
    assert counting_proxy.take() == [_req(LIST, bucket)]
    assert [k.version for k in backend.versions("h.txt")] == [k.version for k in kept]
    old = backend.read_version("h.txt", kept[1].version)
    assert (old.data, old.version) == (b"one", v1)
    assert counting_proxy.take() == [_req(LIST, bucket), _req(MEDIA, bucket, "p/h.txt")]


def test_history_of_a_single_version_asks_the_bucket_once(
    counting_proxy: Any, gcs_versioned_bucket: str
) -> None:
    """One generation proves nothing (every bucket lists the live one): the bucket's
    versioning is asked, once per backend."""
    bucket = gcs_versioned_bucket
    backend = GCSBackend.from_url(
        f"gs://{bucket}/p",
        {"endpoint_url": counting_proxy.url, "token": "anon", "project": "test"},
    )
    backend.write("h.txt", b"one", CreateOnly())
    counting_proxy.take()
    assert len(backend.versions("h.txt")) == 1
    assert counting_proxy.take() == [_req(LIST, bucket), _req(BUCKET, bucket)]
    assert len(backend.versions("h.txt")) == 1
    assert counting_proxy.take() == [_req(LIST, bucket)]
