"""The backend conformance suite: every backend runs these same tests."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

import pytest

from ..backends.base import Backend
from ..errors import Conflict, ErrorCode, FsError
from ..versions import CreateOnly, IfMatch, Overwrite, Version

MiB = 1 << 20


def increment(backend: Backend, key: str, times: int) -> tuple[int, int]:
    """Read-modify-write ``times`` increments of the integer in ``key``, retrying every lost
    compare-and-swap. Returns (successes, conflicts)."""
    done = conflicts = 0
    while done < times:
        blob = backend.read(key)
        value = int(blob.data.decode())
        try:
            backend.write(key, str(value + 1).encode(), IfMatch(blob.version))
        except Conflict:
            conflicts += 1
            continue
        done += 1
    return done, conflicts


def increment_worker(spec: tuple[str, dict[str, Any]], key: str, times: int) -> tuple[int, int]:
    """Entry point of a child process: its own backend over the same storage."""
    from ..backends.registry import open_backend

    url, options = spec
    return increment(open_backend(url, options), key, times)


class BackendConformance:
    """Mixin: subclass with a ``backend`` fixture (fresh backend, empty root)."""

    threads: int = 4
    increments: int = 25
    large_size: int = 8 * MiB + 3

    # -- versions --------------------------------------------------------
    def test_write_then_read_returns_bytes_and_same_version(self, backend: Backend) -> None:
        v = backend.write("a.txt", b"hello\n", CreateOnly())
        assert isinstance(v, Version)
        blob = backend.read("a.txt")
        assert blob.data == b"hello\n"
        assert blob.version == v

    def test_version_stable_without_change(self, backend: Backend) -> None:
        backend.write("a.txt", b"same", Overwrite())
        assert backend.read("a.txt").version == backend.read("a.txt").version

    def test_version_changes_with_content(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"one", Overwrite())
        v2 = backend.write("a.txt", b"two", Overwrite())
        assert v1 != v2
        assert backend.read("a.txt").version == v2

    def test_same_size_rewrite_changes_version(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"aaaa", Overwrite())
        backend.write("a.txt", b"bbbb", Overwrite())
        assert backend.read("a.txt").version != v1

    # -- preconditions ---------------------------------------------------
    def test_create_only_on_missing_creates(self, backend: Backend) -> None:
        backend.write("new/deep/file.txt", b"x", CreateOnly())
        assert backend.read("new/deep/file.txt").data == b"x"

    def test_create_only_on_existing_conflicts(self, backend: Backend) -> None:
        backend.write("a.txt", b"first", CreateOnly())
        with pytest.raises(Conflict) as info:
            backend.write("a.txt", b"second", CreateOnly())
        assert info.value.reason == "exists"
        assert info.value.code is ErrorCode.FS_ALREADY_EXISTS
        assert backend.read("a.txt").data == b"first"

    def test_if_match_current_version_writes(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"one", CreateOnly())
        v2 = backend.write("a.txt", b"two", IfMatch(v1))
        blob = backend.read("a.txt")
        assert blob.data == b"two"
        assert blob.version == v2

    def test_if_match_stale_version_conflicts(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"one", CreateOnly())
        backend.write("a.txt", b"two", IfMatch(v1))
        with pytest.raises(Conflict) as info:
            backend.write("a.txt", b"three", IfMatch(v1))
        assert info.value.reason == "mismatch"
        assert info.value.code is ErrorCode.FS_STALE
        assert backend.read("a.txt").data == b"two"

    def test_if_match_on_missing_object_fails_clearly(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"one", CreateOnly())
        backend.delete("a.txt")
        with pytest.raises(Conflict) as info:
            backend.write("a.txt", b"two", IfMatch(v1))
        assert info.value.reason == "missing"
        assert info.value.code is ErrorCode.FS_NOT_FOUND
        with pytest.raises(FsError) as gone:
            backend.read("a.txt")
        assert gone.value.code is ErrorCode.FS_NOT_FOUND

    def test_overwrite_creates_and_replaces(self, backend: Backend) -> None:
        backend.write("a.txt", b"one", Overwrite())
        backend.write("a.txt", b"two", Overwrite())
        assert backend.read("a.txt").data == b"two"

    def test_empty_object(self, backend: Backend) -> None:
        v = backend.write("empty.txt", b"", CreateOnly())
        blob = backend.read("empty.txt")
        assert blob.data == b""
        assert blob.version == v
        backend.write("empty.txt", b"now", IfMatch(v))
        assert backend.read("empty.txt").data == b"now"

    # -- not found, directories -----------------------------------------
    def test_read_missing_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(FsError) as info:
            backend.read("missing.txt")
        assert info.value.code is ErrorCode.FS_NOT_FOUND

    def test_stat_missing_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(FsError) as info:
            backend.stat("missing.txt")
        assert info.value.code is ErrorCode.FS_NOT_FOUND

    def test_delete_missing_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(FsError) as info:
            backend.delete("missing.txt")
        assert info.value.code is ErrorCode.FS_NOT_FOUND

    def test_stat_file_and_directory(self, backend: Backend) -> None:
        backend.write("d/f.txt", b"12345", CreateOnly())
        st = backend.stat("d/f.txt")
        assert (st.kind, st.size) == ("file", 5)
        assert backend.stat("d").kind == "directory"

    def test_read_directory_is_directory_error(self, backend: Backend) -> None:
        backend.write("d/f.txt", b"x", CreateOnly())
        with pytest.raises(FsError) as info:
            backend.read("d")
        assert info.value.code is ErrorCode.FS_IS_DIRECTORY

    def test_list_directory(self, backend: Backend) -> None:
        backend.write("d/b.txt", b"bb", CreateOnly())
        backend.write("d/a.txt", b"a", CreateOnly())
        backend.write("d/sub/c.txt", b"c", CreateOnly())
        entries = backend.list("d")
        assert [(e.name, e.kind, e.key) for e in entries] == [
            ("a.txt", "file", "d/a.txt"),
            ("b.txt", "file", "d/b.txt"),
            ("sub", "directory", "d/sub"),
        ]
        assert [e.size for e in entries if e.kind == "file"] == [1, 2]
        assert [e.name for e in backend.list("")] == ["d"]

    def test_empty_root_is_an_empty_directory(self, backend: Backend) -> None:
        assert backend.list("") == []
        assert backend.stat("").kind == "directory"
        for read in (backend.read, backend.open_read):
            with pytest.raises(FsError) as info:
                read("")
            assert info.value.code is ErrorCode.FS_IS_DIRECTORY

    def test_list_missing_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(FsError) as info:
            backend.list("nope")
        assert info.value.code is ErrorCode.FS_NOT_FOUND

    # -- size ------------------------------------------------------------
    def test_large_object_roundtrip(self, backend: Backend) -> None:
        data = bytes(range(256)) * (self.large_size // 256) + b"tail"
        v1 = backend.write("big.bin", data, CreateOnly())
        blob = backend.read("big.bin")
        assert blob.data == data
        assert blob.version == v1
        data2 = b"X" + data[1:]
        v2 = backend.write("big.bin", data2, IfMatch(v1))
        with pytest.raises(Conflict):
            backend.write("big.bin", data, IfMatch(v1))
        blob2 = backend.read("big.bin")
        assert blob2.data == data2
        assert blob2.version == v2

    def test_stream_matches_read(self, backend: Backend) -> None:
        data = b"line\n" * 100_000
        v = backend.write("s.txt", data, CreateOnly())
        stream = backend.open_read("s.txt", chunk_size=64 * 1024)
        try:
            got = b"".join(stream.chunks())
            assert stream.version == v
        finally:
            stream.close()
        assert got == data

    def test_stream_missing_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(FsError) as info:
            backend.open_read("missing.txt")
        assert info.value.code is ErrorCode.FS_NOT_FOUND

    # -- concurrency -----------------------------------------------------
    def test_concurrent_thread_increments_lose_nothing(self, backend: Backend) -> None:
        backend.write("counter", b"0", CreateOnly())
        results: list[tuple[int, int]] = []
        errors: list[BaseException] = []

        def run() -> None:
            try:
                results.append(increment(backend, "counter", self.increments))
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        workers = [threading.Thread(target=run) for _ in range(self.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert not errors, errors
        assert sum(r[0] for r in results) == self.threads * self.increments
        assert int(backend.read("counter").data) == self.threads * self.increments

    def test_concurrent_create_only_one_wins(self, backend: Backend) -> None:
        outcomes: list[str] = []
        lock = threading.Lock()

        def run(i: int) -> None:
            try:
                backend.write("once.txt", f"writer {i}".encode(), CreateOnly())
                result = f"won {i}"
            except Conflict:
                result = "lost"
            with lock:
                outcomes.append(result)

        workers = [threading.Thread(target=run, args=(i,)) for i in range(self.threads)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        winners = [o for o in outcomes if o.startswith("won")]
        assert len(winners) == 1
        assert backend.read("once.txt").data == f"writer {winners[0][4:]}".encode()


class ProcessConformance:
    """Mixin for storage shared between processes: fixture ``backend_spec`` gives
    ``(url, storage_options)`` of an empty root, ``backend`` a backend over it."""

    processes: int = 4
    process_increments: int = 50

    def test_concurrent_process_increments_lose_nothing(
        self, backend: Backend, backend_spec: tuple[str, dict[str, Any]]
    ) -> None:
        backend.write("counter", b"0", CreateOnly())
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(self.processes) as pool:
            results = pool.starmap(
                increment_worker,
                [(backend_spec, "counter", self.process_increments)] * self.processes,
            )
        total = self.processes * self.process_increments
        assert sum(r[0] for r in results) == total
        assert int(backend.read("counter").data) == total
