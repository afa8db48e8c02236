"""The backend conformance suite: every backend runs these same tests."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

import pytest

from ..backends.base import Backend
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
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
    keeps_history: bool | None = None
    """Whether the storage under the ``backend`` fixture keeps older versions; None: as
    ``capabilities.history`` says. Object stores keep them only in a versioned bucket, so
    their suites say which kind of bucket the fixture makes."""
    mount_points: tuple[str, ...] = ()
    """Directories the fixture's root shows before any test writes (the other mount points
    of a mounted workspace, empty stores): listings of the root are compared without them,
    and ``test_mount_points_are_listed`` checks that they are there."""

    def root_entries(self, backend: Backend) -> list[tuple[str, str]]:
        """(name, kind) of the root's entries, the fixture's mount points left out."""
        return [
            (e.name, e.kind)
            for e in backend.list("")
            if not (e.kind == "directory" and e.name in self.mount_points)
        ]

    def test_mount_points_are_listed(self, backend: Backend) -> None:
        listed = {(e.name, e.kind, e.key) for e in backend.list("")}
        assert {(m, "directory", m) for m in self.mount_points} <= listed
        for m in self.mount_points:
            assert backend.stat(m).kind == "directory"
            assert backend.list(m) == []

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
        assert info.value.reason == ConflictKind.exists
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
        assert info.value.reason == ConflictKind.mismatch
        assert info.value.code is ErrorCode.FS_STALE
        assert backend.read("a.txt").data == b"two"

    def test_if_match_on_missing_object_fails_clearly(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"one", CreateOnly())
        backend.delete("a.txt")
        with pytest.raises(Conflict) as info:
            backend.write("a.txt", b"two", IfMatch(v1))
        assert info.value.reason == ConflictKind.missing
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
        assert self.root_entries(backend) == [("d", "directory")]

    def test_empty_root_is_an_empty_directory(self, backend: Backend) -> None:
        assert self.root_entries(backend) == []
        assert backend.stat("").kind == "directory"
        for read in (backend.read, backend.open_read):
            with pytest.raises(FsError) as info:
                read("")
            assert info.value.code is ErrorCode.FS_IS_DIRECTORY

    def test_list_missing_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(FsError) as info:
            backend.list("nope")
        assert info.value.code is ErrorCode.FS_NOT_FOUND

    # -- a path is a file or a directory, never both --------------------------
    @pytest.mark.parametrize("precondition", [CreateOnly(), Overwrite()], ids=["create", "over"])
    def test_write_where_a_directory_is_is_directory_error(
        self, backend: Backend, precondition: CreateOnly | Overwrite
    ) -> None:
        backend.write("d/x.txt", b"x", CreateOnly())
        with pytest.raises(FsError) as info:
            backend.write("d", b"file", precondition)
        assert info.value.code is ErrorCode.FS_IS_DIRECTORY
        assert not isinstance(info.value, Conflict)
        assert backend.stat("d").kind == "directory"
        assert self.root_entries(backend) == [("d", "directory")]
        assert backend.read("d/x.txt").data == b"x"

    @pytest.mark.parametrize("precondition", [CreateOnly(), Overwrite()], ids=["create", "over"])
    def test_write_below_a_file_is_invalid_argument(
        self, backend: Backend, precondition: CreateOnly | Overwrite
    ) -> None:
        backend.write("f.txt", b"file", CreateOnly())
        for key in ("f.txt/child", "f.txt/deeper/child.txt"):
            with pytest.raises(FsError) as info:
                backend.write(key, b"x", precondition)
            assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT, key
            assert "a parent of this path is a file" in info.value.message
        assert backend.read("f.txt").data == b"file"
        # Nothing below it either: "f.txt" would also be listed as a directory.
        assert self.root_entries(backend) == [("f.txt", "file")]

    def test_copy_follows_the_file_or_directory_rule(self, backend: Backend) -> None:
        backend.write("s.txt", b"source", CreateOnly())
        backend.write("d/x.txt", b"x", CreateOnly())
        with pytest.raises(FsError) as over_dir:
            backend.copy("s.txt", "d")
        assert over_dir.value.code is ErrorCode.FS_IS_DIRECTORY
        with pytest.raises(FsError) as below_file:
            backend.copy("s.txt", "s.txt/copy")
        assert below_file.value.code is ErrorCode.FS_INVALID_ARGUMENT
        assert self.root_entries(backend) == [
            ("d", "directory"),
            ("s.txt", "file"),
        ]
        assert [e.name for e in backend.list("d")] == ["x.txt"]

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

    def test_stream_pinned_when_replaced_mid_read(self, backend: Backend) -> None:
        """A stream never splices two versions: it yields the old bytes whole under the old
        version, or fails with FS_STALE."""
        old = b"o" * (256 * 1024)
        v1 = backend.write("pin.txt", old, CreateOnly())
        stream = backend.open_read("pin.txt", chunk_size=64 * 1024)
        got: list[bytes] = []
        try:
            chunks = stream.chunks()
            got.append(next(chunks))
            backend.write("pin.txt", b"n" * len(old), Overwrite())
            try:
                got.extend(chunks)
            except FsError as e:
                assert e.code is ErrorCode.FS_STALE, e
                return
            assert b"".join(got) == old
            assert stream.version == v1
        finally:
            stream.close()

    def test_read_many_in_order_with_errors_in_place(self, backend: Backend) -> None:
        from ..backends.base import Entry

        files = {f"m/{i:03d}.txt": f"body {i}\n".encode() * (i + 1) for i in range(40)}
        for key, data in files.items():
            backend.write(key, data, CreateOnly())
        keys = [*files, "m/missing.txt", "m"]
        entries = [Entry(key=k, name=k.rsplit("/", 1)[-1], kind="file") for k in keys]
        got = list(backend.read_many(iter(entries)))
        assert [e.key for e, _ in got] == keys
        for (_, blob), key in zip(got[:40], files, strict=True):
            assert not isinstance(blob, FsError), blob
            assert blob.data == files[key]
            assert blob.version == backend.read(key).version
        missing, directory = got[40][1], got[41][1]
        assert isinstance(missing, FsError) and missing.code is ErrorCode.FS_NOT_FOUND
        assert isinstance(directory, FsError)
        assert directory.code in (ErrorCode.FS_IS_DIRECTORY, ErrorCode.FS_NOT_FOUND)

    # -- paths -----------------------------------------------------------
    def test_resolve_is_identity_on_canonical_keys(self, backend: Backend) -> None:
        backend.write("d/f.txt", b"x", CreateOnly())
        assert backend.resolve("d/f.txt") == "d/f.txt"
        assert backend.resolve("d/missing.txt") == "d/missing.txt"
        assert backend.resolve("new/dir/file.txt") == "new/dir/file.txt"
        assert backend.resolve("") == ""

    def test_list_file_is_invalid_argument(self, backend: Backend) -> None:
        backend.write("f.txt", b"x", CreateOnly())
        with pytest.raises(FsError) as info:
            backend.list("f.txt")
        assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
        assert backend.read("f.txt").data == b"x"

    def test_list_empty_root_is_empty(self, backend: Backend) -> None:
        assert self.root_entries(backend) == []

    # -- delete ----------------------------------------------------------
    def test_delete_removes_file(self, backend: Backend) -> None:
        backend.write("d/a.txt", b"a", CreateOnly())
        backend.write("d/b.txt", b"b", CreateOnly())
        backend.delete("d/a.txt")
        with pytest.raises(FsError) as info:
            backend.read("d/a.txt")
        assert info.value.code is ErrorCode.FS_NOT_FOUND
        assert backend.read("d/b.txt").data == b"b"

    def test_delete_directory_is_directory_error(self, backend: Backend) -> None:
        backend.write("d/f.txt", b"x", CreateOnly())
        with pytest.raises(FsError) as info:
            backend.delete("d")
        assert info.value.code is ErrorCode.FS_IS_DIRECTORY
        assert backend.read("d/f.txt").data == b"x"

    def test_delete_if_match_current_deletes(self, backend: Backend) -> None:
        v = backend.write("a.txt", b"one", CreateOnly())
        backend.delete("a.txt", IfMatch(v))
        with pytest.raises(FsError) as info:
            backend.read("a.txt")
        assert info.value.code is ErrorCode.FS_NOT_FOUND

    def test_delete_if_match_stale_conflicts(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"one", CreateOnly())
        backend.write("a.txt", b"two", IfMatch(v1))
        with pytest.raises(Conflict) as info:
            backend.delete("a.txt", IfMatch(v1))
        assert info.value.reason == ConflictKind.mismatch
        assert info.value.code is ErrorCode.FS_STALE
        assert backend.read("a.txt").data == b"two"

    def test_delete_if_match_missing_conflicts(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"one", CreateOnly())
        backend.delete("a.txt")
        with pytest.raises(Conflict) as info:
            backend.delete("a.txt", IfMatch(v1))
        assert info.value.reason == ConflictKind.missing

    def test_delete_create_only_is_invalid(self, backend: Backend) -> None:
        backend.write("a.txt", b"one", CreateOnly())
        with pytest.raises(FsError) as info:
            backend.delete("a.txt", CreateOnly())
        assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
        assert backend.read("a.txt").data == b"one"

    # -- copy ------------------------------------------------------------
    def test_copy_creates_destination(self, backend: Backend) -> None:
        data = b"\xef\xbb\xbfline\r\n" * 1000
        v = backend.write("src/a.txt", data, CreateOnly())
        v2 = backend.copy("src/a.txt", "dst/deep/b.txt", IfMatch(v))
        copied = backend.read("dst/deep/b.txt")
        assert copied.data == data
        assert copied.version == v2
        src = backend.read("src/a.txt")
        assert (src.data, src.version) == (data, v)

    def test_copy_any_source_version(self, backend: Backend) -> None:
        backend.write("a.txt", b"one", CreateOnly())
        backend.copy("a.txt", "b.txt")
        assert backend.read("b.txt").data == b"one"

    def test_copy_onto_existing_conflicts(self, backend: Backend) -> None:
        v = backend.write("a.txt", b"source", CreateOnly())
        backend.write("b.txt", b"dest", CreateOnly())
        with pytest.raises(Conflict) as info:
            backend.copy("a.txt", "b.txt", IfMatch(v))
        assert info.value.reason == ConflictKind.exists
        assert info.value.code is ErrorCode.FS_ALREADY_EXISTS
        assert backend.read("a.txt").data == b"source"
        assert backend.read("b.txt").data == b"dest"

    def test_copy_stale_source_conflicts(self, backend: Backend) -> None:
        v1 = backend.write("a.txt", b"one", CreateOnly())
        backend.write("a.txt", b"two", IfMatch(v1))
        with pytest.raises(Conflict) as info:
            backend.copy("a.txt", "b.txt", IfMatch(v1))
        assert info.value.reason == ConflictKind.mismatch
        with pytest.raises(FsError) as missing:
            backend.read("b.txt")
        assert missing.value.code is ErrorCode.FS_NOT_FOUND

    def test_copy_missing_source_is_not_found(self, backend: Backend) -> None:
        with pytest.raises(FsError) as info:
            backend.copy("nope.txt", "b.txt")
        assert info.value.code is ErrorCode.FS_NOT_FOUND
        with pytest.raises(FsError) as missing:
            backend.read("b.txt")
        assert missing.value.code is ErrorCode.FS_NOT_FOUND

    # -- walk ------------------------------------------------------------
    def test_walk_yields_every_file_in_key_order(self, backend: Backend) -> None:
        files = {
            "a.txt": b"1",
            "a/x.txt": b"22",
            "a/b/c/deep.txt": b"333",
            "a-b.txt": b"4444",
            "z/y.md": b"",
            "B.txt": b"55555",
        }
        for key, data in files.items():
            backend.write(key, data, CreateOnly())
        entries = list(backend.walk(""))
        assert [e.key for e in entries] == sorted(files)
        assert all(e.kind == "file" for e in entries)
        assert {e.key: e.size for e in entries} == {k: len(v) for k, v in files.items()}
        assert [e.name for e in entries][:2] == ["B.txt", "a-b.txt"]
        assert [e.key for e in backend.walk("a")] == ["a/b/c/deep.txt", "a/x.txt"]

    def test_walk_empty_root_yields_nothing(self, backend: Backend) -> None:
        assert list(backend.walk("")) == []

    def test_walk_missing_directory_is_not_found(self, backend: Backend) -> None:
        backend.write("d/f.txt", b"x", CreateOnly())
        with pytest.raises(FsError) as info:
            list(backend.walk("nope"))
        assert info.value.code is ErrorCode.FS_NOT_FOUND

    def test_walk_file_is_invalid_argument(self, backend: Backend) -> None:
        backend.write("d/f.txt", b"x", CreateOnly())
        with pytest.raises(FsError) as info:
            list(backend.walk("d/f.txt"))
        assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT

    # -- history ---------------------------------------------------------
    def test_history_kept_or_unsupported(self, backend: Backend) -> None:
        v1 = backend.write("h.txt", b"one", CreateOnly())
        v2 = backend.write("h.txt", b"two", IfMatch(v1))
        v3 = backend.write("h.txt", b"three", IfMatch(v2))
        keeps = self.keeps_history
        if keeps is None:
            keeps = backend.capabilities.history
        if not keeps:
            for call in (lambda: backend.versions("h.txt"),
                         lambda: backend.read_version("h.txt", v1)):
                with pytest.raises(FsError) as info:
                    call()
                assert info.value.code is ErrorCode.FS_UNSUPPORTED
            return
        kept = backend.versions("h.txt")
        assert [k.version for k in kept][:3] == [v3, v2, v1]
        assert [k.latest for k in kept][:2] == [True, False]
        assert [k.size for k in kept][:3] == [5, 3, 3]
        assert [k.version for k in backend.versions("h.txt", limit=2)] == [v3, v2]
        old = backend.read_version("h.txt", kept[2].version)
        assert (old.data, old.version) == (b"one", v1)
        assert backend.read("h.txt").data == b"three"

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
