"""Backend conformance, one object at a time: versions, preconditions, what is missing,
files against directories, sizes and streams."""

from __future__ import annotations

import pytest

from ...backends.base import Backend
from ...errors import Conflict, ConflictKind, ErrorCode, FsError
from ...versions import CreateOnly, IfMatch, Overwrite, Version
from .base import Settings


class ObjectConformance(Settings):
    """One object at a time (see :class:`~fsseam.testing.BackendConformance`)."""

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
        from ...backends.base import Entry

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

