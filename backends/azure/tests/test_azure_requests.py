"""Request budget, counted at a proxy in front of Azurite: what the server received.

A version must come from the same round trip as the bytes (never HEAD then GET), and a
conditional write must be one request decided by the storage (never read-check-write).
Paths are below the container (``/p/a.txt``); a listing is a GET of the container (``/``).
"""

from __future__ import annotations

from typing import Any

import pytest
from fsseam_azure import AzureBackend
from fsseam_azure.testing import ContainerRequests as Requests

from fsseam.errors import Conflict, ErrorCode, FsError
from fsseam.versions import CreateOnly, IfMatch, Overwrite

LIST = ("GET", "/")


@pytest.fixture
def backend(container: str, az_options: dict[str, Any], requests: Requests) -> AzureBackend:
    b = AzureBackend.from_url(f"az://{container}/p", az_options)
    requests.take()
    return b


def test_create_only_write_is_one_listing_and_one_put(
    backend: AzureBackend, requests: Requests
) -> None:
    """A new file looks at "a.txt/" once (a path is a file or a directory), then puts."""
    backend.write("a.txt", b"hello", CreateOnly())
    assert requests.take() == [LIST, ("PUT", "/p/a.txt")]


def test_create_below_the_root_also_looks_at_each_parent_at_once(
    backend: AzureBackend, requests: Requests
) -> None:
    backend.write("a/b/new.txt", b"x", CreateOnly())
    got = requests.take()
    assert sorted(got[:-1]) == sorted([LIST, ("HEAD", "/p/a"), ("HEAD", "/p/a/b")])
    assert got[-1] == ("PUT", "/p/a/b/new.txt")


def test_read_is_one_get(backend: AzureBackend, requests: Requests) -> None:
    v = backend.write("a.txt", b"hello", CreateOnly())
    requests.take()
    blob = backend.read("a.txt")
    assert (blob.data, blob.version) == (b"hello", v)
    assert requests.take() == [("GET", "/p/a.txt")]


def test_read_then_if_match_write_is_one_get_and_one_put(
    backend: AzureBackend, requests: Requests
) -> None:
    backend.write("a.txt", b"1", CreateOnly())
    requests.take()
    blob = backend.read("a.txt")
    v2 = backend.write("a.txt", b"2", IfMatch(blob.version))
    assert requests.take() == [("GET", "/p/a.txt"), ("PUT", "/p/a.txt")]
    assert v2 != blob.version


def test_overwrite_and_stat_are_one_request_each(
    backend: AzureBackend, requests: Requests
) -> None:
    backend.write("a.txt", b"hello", Overwrite())
    assert requests.take() == [LIST, ("PUT", "/p/a.txt")]
    assert backend.stat("a.txt").size == 5
    assert requests.take() == [("HEAD", "/p/a.txt")]


def test_empty_blob_read_is_one_get(backend: AzureBackend, requests: Requests) -> None:
    """A whole read asks for no range (the SDK's downloader asks for one, which Azure
    refuses for an empty blob with 416, and then asks again without it)."""
    v = backend.write("e.txt", b"", CreateOnly())
    requests.take()
    blob = backend.read("e.txt")
    assert (blob.data, blob.version) == (b"", v)
    assert requests.take() == [("GET", "/p/e.txt")]


def test_small_stream_is_one_ranged_get(backend: AzureBackend, requests: Requests) -> None:
    v = backend.write("a.txt", b"x" * 1000, CreateOnly())
    requests.take()
    stream = backend.open_read("a.txt", chunk_size=4096)
    assert stream.version == v
    assert b"".join(stream.chunks()) == b"x" * 1000
    stream.close()
    assert requests.take() == [("GET", "/p/a.txt")]


def test_failed_if_match_costs_one_extra_probe_only(
    backend: AzureBackend, requests: Requests
) -> None:
    v1 = backend.write("a.txt", b"1", CreateOnly())
    backend.write("a.txt", b"2", IfMatch(v1))
    requests.take()
    with pytest.raises(Conflict) as info:
        backend.write("a.txt", b"3", IfMatch(v1))
    assert info.value.reason == "mismatch"
    # the refused Put Blob, then one HEAD that reads the write id back
    assert requests.take() == [("PUT", "/p/a.txt"), ("HEAD", "/p/a.txt")]
    assert backend.read("a.txt").data == b"2"


def test_same_bytes_from_a_losing_writer_is_still_a_conflict(backend: AzureBackend) -> None:
    """Two agents incrementing "5" both write "6": the loser must hear it lost, although
    the blob holds exactly its bytes (equal content is not our write)."""
    v = backend.write("n", b"5", CreateOnly())
    backend.write("n", b"6", IfMatch(v))
    with pytest.raises(Conflict):
        backend.write("n", b"6", IfMatch(v))


def test_create_only_on_an_existing_blob_is_one_refused_put(
    backend: AzureBackend, requests: Requests
) -> None:
    """Azure answers If-None-Match: * on an existing blob with 409 BlobAlreadyExists."""
    backend.write("a.txt", b"first", CreateOnly())
    requests.take()
    with pytest.raises(Conflict) as info:
        backend.write("a.txt", b"second", CreateOnly())
    assert (info.value.reason, info.value.code) == ("exists", ErrorCode.FS_ALREADY_EXISTS)
    records = [(m, p) for m, p in requests.take()]
    assert records == [LIST, ("PUT", "/p/a.txt"), ("HEAD", "/p/a.txt")]


# -- large blobs: staged blocks, the condition on the commit ------------------------------


def test_a_large_write_stages_blocks_and_commits_them_with_the_condition(
    container: str, az_options: dict[str, Any], azurite: Any
) -> None:
    backend = AzureBackend.from_url(
        f"az://{container}/p", {**az_options, "block_threshold": 1000, "block_size": 400}
    )
    v1 = backend.write("big.bin", b"a" * 999, CreateOnly())
    data = bytes(range(256)) * 4  # 1,024 bytes: blocks of 400, 400 and 224
    azurite.take_records()
    v2 = backend.write("big.bin", data, IfMatch(v1))
    records = azurite.take_records()
    assert [(r.method, r.query.split("&")[0]) for r in records] == [
        *[("PUT", "comp=block")] * 3,
        ("PUT", "comp=blocklist"),
    ]
    assert sorted(r.request_bytes for r in records[:3]) == [224, 400, 400]
    blob = backend.read("big.bin")
    assert (blob.data, blob.version) == (data, v2)

    # A stale commit stages its blocks, then the Put Block List is refused: old bytes stay.
    with pytest.raises(Conflict) as info:
        backend.write("big.bin", b"z" * 2000, IfMatch(v1))
    assert info.value.reason == "mismatch"
    assert backend.read("big.bin").data == data
    with pytest.raises(Conflict) as exists:
        backend.write("big.bin", b"z" * 2000, CreateOnly())
    assert exists.value.reason == "exists"
    assert backend.read("big.bin").data == data


# -- delete, copy, walk, history ---------------------------------------------------------


def test_delete_is_one_request_with_or_without_a_version(
    backend: AzureBackend, requests: Requests
) -> None:
    v = backend.write("a.txt", b"x", CreateOnly())
    backend.write("b.txt", b"x", CreateOnly())
    requests.take()
    backend.delete("a.txt", IfMatch(v))
    assert requests.take() == [("DELETE", "/p/a.txt")]
    backend.delete("b.txt")  # Azure reports a missing blob itself: no look first
    assert requests.take() == [("DELETE", "/p/b.txt")]
    with pytest.raises(FsError) as info:
        backend.delete("b.txt")
    assert info.value.code is ErrorCode.FS_NOT_FOUND


def test_copy_is_one_listing_and_one_copy_blob(
    backend: AzureBackend, requests: Requests, azurite: Any
) -> None:
    """Azure (and Azurite) decide both conditions of Copy Blob: the destination's absence
    and the source's ETag."""
    assert backend.server_side_copy is True
    v = backend.write("a.txt", b"x" * 100, CreateOnly())
    requests.take()
    v2 = backend.copy("a.txt", "b.txt", IfMatch(v))
    assert requests.take() == [LIST, ("PUT", "/p/b.txt")]
    blob = backend.read("b.txt")
    assert (blob.data, blob.version) == (b"x" * 100, v2)


def test_copy_by_reading_and_creating(
    container: str, az_options: dict[str, Any], requests: Requests
) -> None:
    backend = AzureBackend.from_url(
        f"az://{container}/p", {**az_options, "server_side_copy": False}
    )
    v = backend.write("a.txt", b"x" * 100, CreateOnly())
    requests.take()
    v2 = backend.copy("a.txt", "b.txt", IfMatch(v))
    assert requests.take() == [LIST, ("GET", "/p/a.txt"), ("PUT", "/p/b.txt")]
    assert backend.read("b.txt").version == v2


def test_walk_is_one_listing_per_page_never_per_directory(
    container: str, az_options: dict[str, Any], requests: Requests
) -> None:
    backend = AzureBackend.from_url(f"az://{container}/p", {**az_options, "list_page_size": 10})
    keys = [f"d{i % 5}/sub/f{i:02d}" for i in range(25)]
    for key in keys:
        backend.write(key, b"xyz", Overwrite())
    requests.take()
    entries = list(backend.walk(""))
    assert [e.key for e in entries] == sorted(keys)
    assert {e.size for e in entries} == {3}
    assert requests.take() == [LIST] * 3


def test_list_pages_and_directories(
    container: str, az_options: dict[str, Any], requests: Requests
) -> None:
    backend = AzureBackend.from_url(f"az://{container}/p", {**az_options, "list_page_size": 2})
    for key in ("a.txt", "b.txt", "c/x.txt", "d/y.txt", "e.txt"):
        backend.write(key, b"1", Overwrite())
    requests.take()
    assert [(e.name, e.kind) for e in backend.list("")] == [
        ("a.txt", "file"), ("b.txt", "file"), ("c", "directory"), ("d", "directory"),
        ("e.txt", "file"),
    ]
    assert requests.take() == [LIST] * 3


def test_history_on_an_account_without_versions(
    backend: AzureBackend, requests: Requests
) -> None:
    """The first history call lists the blob's versions (a listing that shows a kept
    version would answer the question by itself), then whether the account keeps versions
    is read off one listing of the container with versions, once per backend; Azurite keeps
    none, so history is FS_UNSUPPORTED, and later calls are refused without a request."""
    v1 = backend.write("h.txt", b"one", CreateOnly())
    requests.take()
    for _ in range(2):
        with pytest.raises(FsError) as info:
            backend.versions("h.txt")
        assert info.value.code is ErrorCode.FS_UNSUPPORTED
        assert "keeps no older versions" in info.value.message
    with pytest.raises(FsError):
        backend.read_version("h.txt", v1)
    assert requests.take() == [LIST, LIST]


def test_history_question_on_an_empty_container_is_asked_again(
    backend: AzureBackend, requests: Requests
) -> None:
    """An empty container cannot say whether the account keeps versions: the answer is not
    remembered, and the next history call asks again."""
    with pytest.raises(FsError) as info:
        backend.versions("h.txt")
    assert info.value.code is ErrorCode.FS_NOT_FOUND
    backend.write("h.txt", b"one", CreateOnly())
    requests.take()
    with pytest.raises(FsError) as off:
        backend.versions("h.txt")
    assert off.value.code is ErrorCode.FS_UNSUPPORTED
    assert requests.take() == [LIST, LIST]  # the blob's versions, then the container's
