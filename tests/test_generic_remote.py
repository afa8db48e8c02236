"""The generic backend on remote fsspec filesystems: s3fs on moto, gcsfs on fake-gcs-server
and adlfs on Azurite, each used through the generic path (not a dedicated adapter).

Requests are counted at the server: moto's WSGI log, and a counting proxy in front of
fake-gcs-server and of Azurite.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import fsspec
import pytest

from fsseam import ErrorCode, FsError, Workspace
from fsseam.backends import Backend, GenericBackend, open_backend
from fsseam.testing import BackendConformance, ToolsConformance
from fsseam.testing.conformance import increment
from fsseam.versions import CreateOnly, IfMatch, Overwrite

from .budget import size

STORES = ("s3", "gcs", "azure")

# gcsfs's simple upload and adlfs's upload_blob hand aiohttp a raw ``bytes`` body, and
# aiohttp advises (ResourceWarning) a BytesIO above 1 MiB; the advice is for those
# libraries, whose pipe_file is the only write the generic backend has.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Sending a large body directly with raw bytes:ResourceWarning"
)


@dataclass
class Store:
    """One emulated store, a fresh bucket or container on it, and a way to count the
    requests that reached it."""

    name: str
    url: str
    """The workspace root URL (``s3://bucket/ws``...)."""
    options: dict[str, Any]
    """storage_options for the generic backend's own filesystem (requests counted)."""
    root: str
    """The root as the filesystem names it (``bucket/ws``)."""
    _take: Callable[[], list[tuple[str, str]]]
    writer: Any
    """Another writer: an fsspec filesystem of its own on the same store."""

    def take(self) -> list[str]:
        """The methods of the requests to this bucket since the last take, in order."""
        return [method for method, _ in self._take()]


def _s3(request: pytest.FixtureRequest) -> Store:
    import s3fs

    moto = request.getfixturevalue("moto_s3")
    bucket = moto.create_bucket()
    seen = len(moto.log.to_bucket(bucket))

    def take() -> list[tuple[str, str]]:
        nonlocal seen
        requests = moto.log.to_bucket(bucket)
        out, seen = requests[seen:], len(requests)
        return out

    options = {k: v for k, v in moto.s3fs_options().items() if k != "skip_instance_cache"}
    writer = s3fs.S3FileSystem(**moto.s3fs_options())
    return Store("s3", f"s3://{bucket}/ws", options, f"{bucket}/ws", take, writer)


def _gcs(request: pytest.FixtureRequest) -> Store:
    import gcsfs

    server, proxy = request.getfixturevalue("fake_gcs")
    bucket = server.create_bucket()
    proxy.take()

    def take() -> list[tuple[str, str]]:
        return [r for r in proxy.take() if f"/b/{bucket}/" in r[1] or r[1].endswith(f"/b/{bucket}")]

    options = {"endpoint_url": proxy.url, "token": "anon", "project": "test"}
    writer = gcsfs.GCSFileSystem(**server.storage_options(), skip_instance_cache=True)
    return Store("gcs", f"gs://{bucket}/ws", options, f"{bucket}/ws", take, writer)


def _azure(request: pytest.FixtureRequest) -> Store:
    from fsseam.testing.azurite import ACCOUNT_NAME

    az = request.getfixturevalue("azurite")
    container = az.create_container()
    az.take()
    prefix = f"/{ACCOUNT_NAME}/{container}"

    def take() -> list[tuple[str, str]]:
        return [r for r in az.take() if r[1] == prefix or r[1].startswith(prefix + "/")]

    writer = az.filesystem()
    return Store(
        "azure", f"az://{container}/ws", az.storage_options(), f"{container}/ws", take, writer
    )


def make_store(request: pytest.FixtureRequest, name: str) -> Store:
    return {"s3": _s3, "gcs": _gcs, "azure": _azure}[name](request)


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest) -> Store:
    return make_store(request, request.param)


def generic_workspace(store: Store) -> Workspace:
    return Workspace(store.url, storage_options=store.options, backend="generic")


# -- the shared suites, on each store ----------------------------------------------------


class _OnStore:
    store_name: ClassVar[str]
    # A smaller lost-update smoke (4 threads x 10) than the suite's default (x 25), which
    # each store's own conformance module runs on the same emulator; the full profile
    # (tests/budget.py) runs this one at full size too.
    increments = size(25, 10)

    @pytest.fixture
    def store(self, request: pytest.FixtureRequest) -> Store:
        return make_store(request, self.store_name)

    @pytest.fixture
    def backend(self, store: Store) -> Backend:
        b = open_backend(store.url, store.options, backend="generic")
        assert isinstance(b, GenericBackend)
        return b

    @pytest.fixture
    def workspace(self, store: Store) -> Workspace:
        ws = generic_workspace(store)
        assert isinstance(ws.backend, GenericBackend)
        return ws


class TestGenericS3(_OnStore, BackendConformance):
    store_name = "s3"


class TestGenericGcs(_OnStore, BackendConformance):
    store_name = "gcs"


class TestGenericAzure(_OnStore, BackendConformance):
    store_name = "azure"


class TestGenericS3Tools(_OnStore, ToolsConformance):
    store_name = "s3"


class TestGenericGcsTools(_OnStore, ToolsConformance):
    store_name = "gcs"


class TestGenericAzureTools(_OnStore, ToolsConformance):
    store_name = "azure"


# -- issue 21: the read shows the stored bytes; requests counted at the server ----------

# Methods of the requests each call makes, in order (the read's whole-object GET; s3fs's
# cat_file asks for the size first). The dedicated adapters: read 1, write 1, edit 2.
EXPECTED: dict[str, dict[str, list[str]]] = {
    "s3": {
        "read": ["HEAD", "GET"],
        "write": ["HEAD", "GET", "PUT"],
        "edit": ["HEAD", "GET", "HEAD", "GET", "PUT"],
    },
    "gcs": {"read": ["GET"], "write": ["GET", "POST"], "edit": ["GET", "GET", "POST"]},
    "azure": {"read": ["GET"], "write": ["GET", "PUT"], "edit": ["GET", "GET", "PUT"]},
}


def test_read_write_edit_show_the_stored_bytes(store: Store) -> None:
    """The issue's table: the read returned "empty" (no GET at all), the write after it was
    FS_STALE and the edit FS_NO_MATCH."""
    ctx = generic_workspace(store).context("a")
    res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "a\nb\n"})
    assert res.ok, res.text
    assert store.writer.cat_file(f"{store.root}/f.txt") == b"a\nb\n"
    store.take()

    res = ctx.tools.execute("read", {"file_path": "/f.txt"})
    assert res.text == "     1\ta\n     2\tb"
    assert store.take() == EXPECTED[store.name]["read"]

    res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "a\nb\nc\n"})
    assert res.ok, res.text
    assert store.take() == EXPECTED[store.name]["write"]

    res = ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": "b", "new_string": "B"})
    assert res.ok, res.text
    assert store.take() == EXPECTED[store.name]["edit"]
    assert store.writer.cat_file(f"{store.root}/f.txt") == b"a\nB\nc\n"

    # Another writer changes the file: this agent's next edit is stale, and refused.
    store.writer.pipe_file(f"{store.root}/f.txt", b"a\nB\nc\nd\n")
    res = ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": "c", "new_string": "C"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert store.writer.cat_file(f"{store.root}/f.txt") == b"a\nB\nc\nd\n"
    res = ctx.tools.execute("read", {"file_path": "/f.txt"})
    assert res.text == "     1\ta\n     2\tB\n     3\tc\n     4\td"


def test_read_after_a_listing_and_another_writer_shows_the_new_bytes(store: Store) -> None:
    """A listing cached by the filesystem gave the old size: the read was cut short, and
    every write after it was stale (the agent could never catch up)."""
    ctx = generic_workspace(store).context("a")
    assert ctx.tools.execute("write", {"file_path": "/d/f.txt", "content": "one\n"}).ok
    res = ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/d"})
    assert res.ok and res.text.endswith("/d/f.txt"), res.text
    store.writer.pipe_file(f"{store.root}/d/f.txt", b"one\ntwo\nthree\n")
    res = ctx.tools.execute("read", {"file_path": "/d/f.txt"})
    assert res.text == "     1\tone\n     2\ttwo\n     3\tthree"
    res = ctx.tools.execute("write", {"file_path": "/d/f.txt", "content": "four\n"})
    assert res.ok, res.text
    assert store.writer.cat_file(f"{store.root}/d/f.txt") == b"four\n"


def test_filesystem_passed_in_with_its_caches_on(store: Store) -> None:
    """A filesystem the caller made (listings cache on, shared instance) is used as it is:
    what it cached is forgotten before every question and after every write."""
    fs, _ = fsspec.core.url_to_fs(store.url, **store.options)
    assert fs.dircache.use_listings_cache
    backend = GenericBackend.from_url(store.url, {}, fs=fs)
    backend.write("d/f.txt", b"12", CreateOnly())
    assert [(e.key, e.size) for e in backend.list("d")] == [("d/f.txt", 2)]
    store.writer.pipe_file(f"{store.root}/d/f.txt", b"12345")
    assert backend.read("d/f.txt").data == b"12345"
    assert backend.stat("d/f.txt").size == 5
    assert [(e.key, e.size) for e in backend.list("d")] == [("d/f.txt", 5)]
    assert [(e.key, e.size) for e in backend.walk("")] == [("d/f.txt", 5)]
    backend.write("d/f.txt", b"1234567", Overwrite())
    # The caller's own filesystem sees the write too.
    assert fs.info(f"{store.root}/d/f.txt")["size"] == 7


def test_own_filesystem_has_no_shared_instance_nor_listings(store: Store) -> None:
    a = open_backend(store.url, store.options, backend="generic")
    b = open_backend(store.url, store.options, backend="generic")
    assert isinstance(a, GenericBackend) and isinstance(b, GenericBackend)
    assert a.fs is not b.fs
    a.write("x.txt", b"x", CreateOnly())
    a.list("")
    assert len(a.fs.dircache) == 0


def test_two_backends_in_one_process_share_the_lock(store: Store) -> None:
    """Each backend has its own filesystem instance; the in-process compare-and-swap must
    still exclude writers of another backend (another Workspace) on the same bucket."""
    backends = [open_backend(store.url, store.options, backend="generic") for _ in range(2)]
    backends[0].write("counter", b"0", CreateOnly())
    results: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def run(b: Backend) -> None:
        try:
            results.append(increment(b, "counter", 10))
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(b,)) for b in backends for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert int(backends[1].read("counter").data) == 40


def test_capabilities_say_emulated(store: Store) -> None:
    caps = open_backend(store.url, store.options, backend="generic").capabilities
    assert (caps.create_only_atomic, caps.if_match_atomic) == (False, False)
    assert (caps.delete_if_match_atomic, caps.copy_create_only_atomic, caps.history) == (
        False, False, False,
    )
    assert "emulated" in caps.note and "this process" in caps.note


def test_delete_if_match_counts(store: Store) -> None:
    """delete(IfMatch) reads the object to check its digest, then deletes it."""
    backend = open_backend(store.url, store.options, backend="generic")
    v = backend.write("gone.txt", b"bye", CreateOnly())
    store.take()
    backend.delete("gone.txt", IfMatch(v))
    assert "DELETE" in store.take()
    with pytest.raises(FsError) as info:
        backend.read("gone.txt")
    assert info.value.code is ErrorCode.FS_NOT_FOUND


def test_issue_table_through_an_intermediary_whose_head_says_zero_bytes(
    request: pytest.FixtureRequest,
) -> None:
    """The issue's measurement, reproduced: az:// through adlfs on the generic path,
    requests counted by a proxy whose HEAD answers carried ``Content-Length: 0``. The read
    sized itself by that
    HEAD and showed an empty file; the write after it was FS_STALE, the edit FS_NO_MATCH.
    Reads now take the bytes (and their length) from the GET itself."""
    from fsseam.testing.azurite import ACCOUNT_NAME, connection_string
    from fsseam.testing.proxy import ForwardingProxy, forwarding_handler, serve_http

    az = request.getfixturevalue("azurite")
    container = az.create_container()
    proxy = ForwardingProxy(url="", upstream=az.server_url)

    class ZeroLengthHead(forwarding_handler(proxy)):  # type: ignore[misc]
        def send_header(self, keyword: str, value: str) -> None:
            if self.command == "HEAD" and keyword.lower() == "content-length":
                value = "0"
            super().send_header(keyword, value)

    with serve_http(ZeroLengthHead) as url:
        options = {"connection_string": connection_string(f"{url}/{ACCOUNT_NAME}")}
        # The generic path (az:// picks fsseam-azure where it is installed).
        ws = Workspace(f"az://{container}/rt", storage_options=options, backend="generic")
        assert isinstance(ws.backend, GenericBackend)
        ctx = ws.context("a")
        assert ctx.tools.execute("write", {"file_path": "/f.txt", "content": "a\nb\n"}).ok
        proxy.take()
        res = ctx.tools.execute("read", {"file_path": "/f.txt"})
        assert res.text == "     1\ta\n     2\tb"
        assert [m for m, _ in proxy.take()] == ["GET"]
        res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "a\nb\nc\n"})
        assert res.ok, res.text
        res = ctx.tools.execute(
            "edit", {"file_path": "/f.txt", "old_string": "b", "new_string": "B"}
        )
        assert res.ok, res.text
        assert [m for m, _ in proxy.take()] == ["GET", "PUT", "GET", "GET", "PUT"]
    assert az.filesystem().cat_file(f"{container}/rt/f.txt") == b"a\nB\nc\n"


def test_backend_is_chosen_by_name() -> None:
    from fsspec.implementations.memory import MemoryFileSystem

    from fsseam.backends import MemoryBackend

    mem = MemoryFileSystem(global_store=False, skip_instance_cache=True)
    assert isinstance(Workspace("memory://by-name", fs=mem).backend, MemoryBackend)
    generic = Workspace("memory://by-name", fs=mem, backend="generic").backend
    assert isinstance(generic, GenericBackend)
    generic.write("a.txt", b"x", CreateOnly())
    assert mem.cat_file("/by-name/a.txt") == b"x"
    with pytest.raises(FsError) as info:
        Workspace("memory://by-name", fs=mem, backend="no-such-backend")
    assert info.value.code is ErrorCode.FS_UNSUPPORTED


def test_a_caching_filesystem_is_refused(tmp_path: Any) -> None:
    """simplecache/filecache/blockcache serve a local copy: reads could show bytes the store
    no longer holds."""
    from fsspec.implementations.cached import SimpleCacheFileSystem
    from fsspec.implementations.memory import MemoryFileSystem

    mem = MemoryFileSystem(global_store=False, skip_instance_cache=True)
    cached = SimpleCacheFileSystem(fs=mem, cache_storage=str(tmp_path), skip_instance_cache=True)
    with pytest.raises(FsError) as info:
        open_backend("/data", fs=cached)
    assert info.value.code is ErrorCode.FS_UNSUPPORTED
    assert "without the cache layer" in info.value.message


def test_a_filesystem_that_refuses_the_listings_option_still_opens() -> None:
    """Some constructors hand their keyword arguments to a client that takes no others
    (SFTP's to paramiko): without the listings option the backend still gets its own
    instance, and forgets listings itself."""
    from fsspec.implementations.memory import MemoryFileSystem

    class StrictFileSystem(MemoryFileSystem):
        protocol = "fsseam-strict-test"

        def __init__(self, **kwargs: Any) -> None:
            unknown = set(kwargs) - {"global_store"}
            if unknown:
                raise TypeError(f"unexpected keyword arguments {sorted(unknown)}")
            super().__init__(global_store=False)

    fsspec.register_implementation("fsseam-strict-test", StrictFileSystem, clobber=True)
    a = open_backend("fsseam-strict-test://root")
    b = open_backend("fsseam-strict-test://root")
    assert isinstance(a, GenericBackend) and isinstance(a.fs, StrictFileSystem)
    assert a.fs is not b.fs
    a.write("k.txt", b"v", CreateOnly())
    assert a.read("k.txt").data == b"v"
