"""Backend conformance, changes and trees: paths, delete, copy, walk, history, and
writers racing on one object."""

from __future__ import annotations

import threading

import pytest

from ...backends.base import Backend
from ...errors import Conflict, ConflictKind, ErrorCode, FsError
from ...versions import CreateOnly, IfMatch
from .base import Settings, increment


class ChangeConformance(Settings):
    """Changes and trees (see :class:`~fsseam.testing.BackendConformance`)."""

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
