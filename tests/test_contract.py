"""The optional half of the backend contract: what each backend overrides of ``Backend``'s
working defaults, that a backend overriding nothing works through every tool, and that
wrappers (kept history, mounts) answer as the backends under them do, a mount of local
disk keeping the local one-pass search."""

from __future__ import annotations

import builtins
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fsseam import History, Limits, ListEvent, Workspace, hookimpl
from fsseam.backends.base import (
    ANY_VERSION,
    Backend,
    Blob,
    Entry,
    ReadStream,
    Stat,
    VersionInfo,
    WriteMeta,
)
from fsseam.backends.generic import GenericBackend
from fsseam.backends.history import keep_history
from fsseam.backends.local import LocalBackend
from fsseam.backends.memory import MemoryBackend, isolated_memory_filesystem
from fsseam.backends.mounts import Mount, MountBackend
from fsseam.errors import ErrorCode, FsError
from fsseam.grep import compile_pattern
from fsseam.versions import Precondition, Version

OPTIONAL = ["native_key", "check_writable", "capabilities_for", "list_lazy",
            "read_many_unhashed", "read_tree_unhashed", "split_tree", "walk_versioned",
            "start_read", "read_version_id", "writer_of", "get_plain", "put_plain",
            "prune_directories", "walk_names"]
LOCAL = {"native_key", "list_lazy", "read_many_unhashed", "read_tree_unhashed", "split_tree",
         "prune_directories", "walk_names"}
FSSPEC = {"list_lazy"}
OBJECT_STORE = {"list_lazy", "read_version_id", "get_plain", "put_plain", "walk_versioned",
                "start_read", "writer_of"}
MOUNTS = {"native_key", "check_writable", "list_lazy", "capabilities_for",
          "read_many_unhashed", "read_tree_unhashed", "read_version_id", "prune_directories"}


def _memory() -> MemoryBackend:
    return MemoryBackend(isolated_memory_filesystem(), f"/c-{uuid.uuid4().hex}")


class _NotDigest(MemoryBackend):
    """A store whose versions are not digests of the bytes (as an ETag is not)."""

    capabilities = MemoryBackend.capabilities.model_copy(update={"version_kind": "etag"})


def _overrides(cls: type) -> set[str]:
    return {name for name in OPTIONAL if getattr(cls, name) is not getattr(Backend, name)}


def test_the_optional_operations_are_backends_own() -> None:
    defined = {n for n, v in vars(Backend).items()
               if callable(v) and not n.startswith("_")
               and not getattr(v, "__isabstractmethod__", False)}
    assert defined == {*OPTIONAL, "storage_id"}


def test_each_backend_overrides_what_the_table_says() -> None:
    assert _overrides(LocalBackend) == LOCAL
    assert _overrides(MemoryBackend) == FSSPEC
    assert _overrides(GenericBackend) == FSSPEC
    assert _overrides(MountBackend) == MOUNTS


@pytest.mark.parametrize(("module", "name"), [
    ("fsseam_s3", "S3Backend"), ("fsseam_gcs", "GCSBackend"), ("fsseam_azure", "AzureBackend"),
])
def test_object_stores_offer_listings_and_reads_by_version_id(module: str, name: str) -> None:
    assert _overrides(getattr(pytest.importorskip(module), name)) == OBJECT_STORE


class _Minimal(Backend):
    """A backend written from the contract: the required operations only (over a memory
    store), every optional one the base class's default."""

    def __init__(self, inner: MemoryBackend) -> None:
        self.inner = inner
        self.capabilities = inner.capabilities
        self.root = inner.root

    @classmethod
    def from_url(cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
                 ) -> Backend:
        raise NotImplementedError

    def resolve(self, key: str) -> str:
        return self.inner.resolve(key)

    def read(self, key: str) -> Blob:
        return self.inner.read(key)

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        return self.inner.read_many(entries)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        return self.inner.open_read(key, chunk_size)

    def stat(self, key: str) -> Stat:
        return self.inner.stat(key)

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        return self.inner.write(key, data, precondition)

    def list(self, key: str) -> builtins.list[Entry]:
        return self.inner.list(key)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        self.inner.delete(key, precondition)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        return self.inner.copy(src, dst, source)

    def walk(self, key: str) -> Iterator[Entry]:
        return self.inner.walk(key)

    def read_version(self, key: str, version: Version) -> Blob:
        return self.inner.read_version(key, version)

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        return self.inner.versions(key, limit)


def test_a_backend_overriding_nothing_optional_works_through_the_tools() -> None:
    assert _overrides(_Minimal) == set()
    ctx = Workspace("memory://minimal", backend=_Minimal(_memory()),
                    load_entry_points=False).context("a")
    run = ctx.tools.execute
    assert run("write", {"file_path": "/d/a.txt", "content": "needle\n"}).ok
    assert run("ls", {"path": "/d"}).ok
    assert "/d/a.txt" in run("grep", {"pattern": "needle"}).text
    assert run("read", {"file_path": "/d/a.txt"}).ok
    assert run("edit", {"file_path": "/d/a.txt", "old_string": "needle",
                        "new_string": "pin"}).ok
    assert run("read", {"file_path": "/d/a.txt"}).text.count("pin") == 1


def test_a_wrapper_answers_as_the_backend_inside(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one")
    local = LocalBackend(str(tmp_path))
    kept = keep_history(local, History(path=str(tmp_path.parent / "k")))
    assert kept.native_key(str(tmp_path / "a.txt")) == "a.txt"
    assert [e.key for e in kept.list_lazy("")] == ["a.txt"]
    assert kept.read_tree_unhashed("", lambda k: True, 100) is not None
    assert list(kept.walk_names("") or ()) == [("", ["a.txt"])]


def test_a_wrapper_over_a_backend_without_an_override_answers_the_default(
    tmp_path: Path,
) -> None:
    memory = _memory()
    memory.write("a.txt", b"one", ANY_VERSION)
    for wrapper in (keep_history(memory, History()), MountBackend([Mount("", memory)])):
        assert wrapper.native_key(str(tmp_path / "a.txt")) is None
        assert wrapper.read_tree_unhashed("", lambda k: True, 100) is None
        assert wrapper.walk_versioned("") is None
        assert wrapper.walk_names("") is None
        with pytest.raises(FsError) as unknown:
            wrapper.read_version_id("a.txt", "v1")
        assert unknown.value.code is ErrorCode.FS_NOT_FOUND


def test_a_mount_table_reads_a_tree_in_one_pass_only_over_digest_stores(
    tmp_path: Path,
) -> None:
    local = LocalBackend(str(tmp_path))
    mixed = MountBackend([Mount("", _memory()), Mount("repo", local)])
    assert mixed.read_tree_unhashed("", lambda k: True, 100) is not None
    etags = MountBackend([Mount("", _NotDigest(isolated_memory_filesystem(), "/e")),
                          Mount("repo", local)])
    assert etags.read_tree_unhashed("", lambda k: True, 100) is None


def test_kept_history_says_per_key_that_it_keeps_history(tmp_path: Path) -> None:
    router = MountBackend([Mount("", _memory()), Mount("repo", LocalBackend(str(tmp_path)))])
    kept = keep_history(router, History())
    caps = kept.capabilities_for("repo/a.txt")
    assert caps.history and caps.write_meta and caps.create_only_atomic
    with pytest.raises(FsError):  # the kept copies have no store ids
        kept.read_version_id("repo/a.txt", "v1")


# -- the local one-pass search under mounts ----------------------------------------------


class _Listings:
    """A plugin that receives listings: the search then takes the plain path."""

    @hookimpl
    def fs_list(self, event: ListEvent) -> None:
        pass


_FILES = {"a.txt": b"needle one\n", "d/b.txt": b"hay\nneedle two\n", "d/e/c.md": b"hay\n",
          "z.txt": b"\x00needle binary\n"}


def _fill(root: Path, files: dict[str, bytes]) -> None:
    for key, data in files.items():
        p = root / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def _count_fast(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"read_tree_unhashed": 0, "read_many_unhashed": 0}
    for name in calls:
        real = getattr(LocalBackend, name)

        def counting(self: LocalBackend, *args: Any, _real: Any = real, _name: str = name,
                     **kwargs: Any) -> Any:
            calls[_name] += 1
            return _real(self, *args, **kwargs)

        monkeypatch.setattr(LocalBackend, name, counting)
    return calls


@pytest.mark.parametrize("where", ["/repo", "/", "/repo/d"])
def test_a_mount_of_local_disk_keeps_the_one_pass_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    _fill(tmp_path / "repo", _FILES)
    calls = _count_fast(monkeypatch)
    scratch = f"memory://scratch-{uuid.uuid4().hex}"
    pattern = compile_pattern("needle")

    def grep(*plugins: Any) -> Any:
        ws = Workspace.mount({"/": scratch, "/repo": str(tmp_path / "repo")},
                             load_entry_points=False, plugins=plugins)
        ws.context("a").fs.write("/top.txt", "needle on top\n")
        return ws.context("a").fs.grep(pattern, path=where, mode="content")

    fast = grep()
    assert calls == {"read_tree_unhashed": 1, "read_many_unhashed": 0}
    plain = grep(_Listings())  # walks entries for the plugin, then reads them unhashed
    assert calls == {"read_tree_unhashed": 1, "read_many_unhashed": 1}
    assert fast == plain
    expected = {"/repo": ["/repo/a.txt", "/repo/d/b.txt"],
                "/": ["/repo/a.txt", "/repo/d/b.txt", "/top.txt"],
                "/repo/d": ["/repo/d/b.txt"]}[where]
    assert [f.path for f in fast.files] == expected
    assert fast.skipped == ({} if where == "/repo/d" else {"binary": 1})


def test_the_one_pass_search_under_a_mount_is_the_local_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(tmp_path / "root", _FILES)
    calls = _count_fast(monkeypatch)
    pattern = compile_pattern("needle")
    # One process: a search of the local store alone would otherwise go by parts
    # (split_tree), which a mount does not offer.
    alone = Workspace(str(tmp_path / "root"), load_entry_points=False,
                      limits=Limits(finder_processes=1))
    mounted = Workspace.mount({"/": str(tmp_path / "root")}, load_entry_points=False)
    for mode in ("content", "files_with_matches", "count"):
        assert (mounted.context("a").fs.grep(pattern, mode=mode)
                == alone.context("a").fs.grep(pattern, mode=mode))
    assert calls["read_tree_unhashed"] == 6


def test_a_mount_inside_a_local_mount_hides_what_the_local_store_holds_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fill(tmp_path / "root", {**_FILES, "d/hidden.txt": b"needle hidden\n"})
    calls = _count_fast(monkeypatch)
    deeper = f"memory://deeper-{uuid.uuid4().hex}"
    pattern = compile_pattern("needle")

    def grep(*plugins: Any) -> Any:
        ws = Workspace.mount({"/": str(tmp_path / "root"), "/d": deeper},
                             load_entry_points=False, plugins=plugins)
        ws.context("a").fs.write("/d/new.txt", "needle in memory\n")
        return ws.context("a").fs.grep(pattern, mode="content")

    fast, plain = grep(), grep(_Listings())
    assert calls["read_tree_unhashed"] == 1
    assert fast == plain
    assert [f.path for f in fast.files] == ["/a.txt", "/d/new.txt"]
