"""The optional half of the backend contract: what each backend offers beyond ``Backend``
(``extras_of``), and that wrappers (kept history, mounts) offer exactly what the backends
under them offer, a mount of local disk keeping the local one-pass search."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from fsseam import History, Limits, ListEvent, Workspace, hookimpl
from fsseam.backends.contract import Extras, extras_of, offered
from fsseam.backends.generic import GenericBackend
from fsseam.backends.kept import keep_history
from fsseam.backends.local import LocalBackend
from fsseam.backends.memory import MemoryBackend, isolated_memory_filesystem
from fsseam.backends.mounts import Mount, MountBackend
from fsseam.grep import compile_pattern

LOCAL = {"native_key", "list_lazy", "read_many_unhashed", "read_tree_unhashed"}
FSSPEC = {"list_lazy"}
OBJECT_STORE = {"list_lazy", "read_version_id", "get_plain", "put_plain", "walk_versioned",
                "start_read", "writer_of"}
MOUNTS = {"check_writable", "list_lazy", "capabilities_for"}
UNHASHED = {"read_many_unhashed", "read_tree_unhashed"}
SPLIT = {"split_tree"}
"""A local store's walk in parts for helper processes: keys are the store's own, so a
mount (whose keys are not) does not offer it."""


def _memory() -> MemoryBackend:
    return MemoryBackend(isolated_memory_filesystem(), f"/c-{uuid.uuid4().hex}")


class _NotDigest(MemoryBackend):
    """A store whose versions are not digests of the bytes (as an ETag is not)."""

    capabilities = MemoryBackend.capabilities.model_copy(update={"version_kind": "etag"})


class _Forwarder:
    """A wrapper that forwards every attribute it lacks: it must not pass for a backend
    that offers what the one inside it offers."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def _table(tmp_path: Path) -> list[tuple[str, Any, set[str]]]:
    local = LocalBackend(str(tmp_path))
    memory = _memory()
    history = History(path=str(tmp_path.parent / f"kept-{uuid.uuid4().hex}"))
    return [
        ("local", local, LOCAL | SPLIT),
        ("memory", memory, FSSPEC),
        ("generic", GenericBackend(isolated_memory_filesystem(), "/g"), FSSPEC),
        ("kept local", keep_history(local, history), LOCAL | SPLIT),
        ("kept memory", keep_history(memory, History()), FSSPEC),
        ("mount of memory", MountBackend([Mount("", memory)]), MOUNTS),
        ("mount of local", MountBackend([Mount("", local)]), MOUNTS | LOCAL),
        ("memory and local", MountBackend([Mount("", memory), Mount("repo", local)]),
         MOUNTS | LOCAL),
        ("local and an etag store", MountBackend([Mount("", _NotDigest(
            isolated_memory_filesystem(), "/e")), Mount("repo", local)]),
         MOUNTS | {"native_key"}),
        ("mount of kept local", MountBackend([Mount("", keep_history(local, history))]),
         MOUNTS | LOCAL),
        ("forwarder over local", _Forwarder(local), set()),
    ]


def test_each_backend_offers_what_the_table_says(tmp_path: Path) -> None:
    for name, backend, expected in _table(tmp_path):
        assert offered(extras_of(backend)) == expected, name


@pytest.mark.parametrize(("module", "name"), [
    ("fsseam_s3", "S3Backend"), ("fsseam_gcs", "GCSBackend"), ("fsseam_azure", "AzureBackend"),
])
def test_object_stores_offer_listings_and_reads_by_version_id(module: str, name: str) -> None:
    cls = getattr(pytest.importorskip(module), name)
    # Asked of the class, as extras_of asks it (an instance needs a server).
    backend = cls.__new__(cls)
    assert offered(extras_of(backend)) == OBJECT_STORE


def test_an_extra_offered_is_the_backends_own_operation(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"one")
    local = LocalBackend(str(tmp_path))
    assert extras_of(local).native_key == local.native_key
    kept = keep_history(local, History(path=str(tmp_path.parent / "k")))
    extras = extras_of(kept)
    assert extras.native_key is not None and extras.list_lazy is not None
    assert extras.native_key(str(tmp_path / "a.txt")) == "a.txt"
    assert [e.key for e in extras.list_lazy("")] == ["a.txt"]


def test_a_wrapper_over_a_backend_without_an_extra_does_not_claim_it(tmp_path: Path) -> None:
    memory = _memory()
    for wrapper in (keep_history(memory, History()), MountBackend([Mount("", memory)])):
        extras = extras_of(wrapper)
        assert extras.native_key is None and extras.read_version_id is None
        assert extras.read_many_unhashed is None and extras.read_tree_unhashed is None
        # Nor as an attribute, for code that holds the backend itself.
        assert not hasattr(wrapper, "read_tree_unhashed")


def test_kept_history_says_per_key_that_it_keeps_history(tmp_path: Path) -> None:
    router = MountBackend([Mount("", _memory()), Mount("repo", LocalBackend(str(tmp_path)))])
    kept = keep_history(router, History())
    for_key = extras_of(kept).capabilities_for
    assert for_key is not None
    assert for_key("repo/a.txt").history and for_key("repo/a.txt").write_meta
    assert for_key("repo/a.txt").create_only_atomic
    assert extras_of(kept).read_version_id is None  # the kept copies have no store ids


def test_extras_is_the_fixed_interface() -> None:
    assert [f for f in Extras.__dataclass_fields__] == [
        "native_key", "check_writable", "list_lazy", "read_tree_unhashed",
        "read_many_unhashed", "capabilities_for", "read_version_id", "get_plain", "put_plain",
        "walk_versioned", "split_tree", "start_read", "writer_of"]


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
