"""History, restore, undo and conflicts on local and memory storage, with the history
fsseam keeps itself (``Workspace(url, history=History())``), and how that history is kept:
outside the tree, crash-safe, bounded."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from fsseam import (
    Backend,
    CreateOnly,
    ErrorCode,
    FsError,
    History,
    IfMatch,
    Limits,
    Workspace,
    open_backend,
)
from fsseam.backends.history import KeptHistoryBackend, default_directory, keep_history
from fsseam.backends.history.directory import MARKER
from fsseam.testing import BackendConformance, HistoryConformance, ToolsConformance

from .helpers import call, fails, ok, raw

ED = "str_replace_editor"


@pytest.fixture(params=["memory", "local"])
def history_workspace(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    if request.param == "memory":
        return Workspace(f"memory://h-{uuid.uuid4().hex[:8]}", {"global_store": False},
                         history=History(), load_entry_points=False)
    root = tmp_path / "root"
    root.mkdir()
    return Workspace(str(root), history=History(path=str(tmp_path / "kept")),
                     load_entry_points=False)


class TestKeptHistory(HistoryConformance):
    pass


# The wrapper is a backend like any other: the whole conformance suite (preconditions,
# directories, streams, copies, concurrent increments that lose nothing, history).


class TestKeptLocalConformance(BackendConformance):
    keeps_history = True

    @pytest.fixture
    def backend(self, tmp_path: Path) -> Backend:
        root = tmp_path / "root"
        root.mkdir()
        return keep_history(open_backend(str(root)), History(path=str(tmp_path / "kept")))


class TestKeptMemoryConformance(BackendConformance):
    keeps_history = True

    @pytest.fixture
    def backend(self) -> Backend:
        b = open_backend(f"memory://kc-{uuid.uuid4().hex[:8]}", {"global_store": False})
        return keep_history(b, History())


class TestKeptGenericTools(ToolsConformance, HistoryConformance):
    """History kept for the generic backend (here over a DirFileSystem on memory)."""

    @pytest.fixture
    def workspace(self) -> Workspace:
        from fsspec.implementations.dirfs import DirFileSystem
        from fsspec.implementations.memory import MemoryFileSystem

        mem = MemoryFileSystem(global_store=False, skip_instance_cache=True)
        mem.mkdir("/base")
        return Workspace("dir://data", fs=DirFileSystem(path="/base", fs=mem),
                         history=History(), load_entry_points=False)

    @pytest.fixture
    def history_workspace(self, workspace: Workspace) -> Workspace:
        return workspace


def test_the_refusals_word_for_word() -> None:
    """The exact texts of a refused edit and a refused undo (the shipped conformance checks
    their facts on every store; the sentences live once, in the catalogue)."""
    ws = Workspace(f"memory://w-{uuid.uuid4().hex[:8]}", {"global_store": False},
                   history=History(), load_entry_points=False)
    a, b = ws.context("a"), ws.context("b")
    ok(a.tools.execute("write", {"file_path": "/c.py", "content": "x = 1\ny = 2\n"}))
    ok(b.tools.execute("read", {"file_path": "/c.py"}))
    ok(b.tools.execute("edit", {"file_path": "/c.py", "old_string": "x = 1",
                                "new_string": "x = 10"}))
    res = fails(a.tools.execute("edit", {"file_path": "/c.py", "old_string": "y = 2",
                                         "new_string": "y = 20"}), ErrorCode.FS_STALE)
    assert res.text == (
        "Error [FS_STALE]: /c.py has changed since you last read it, so your edit was not "
        "applied. What changed, from the version you read to the current one:\n"
        "@@ -1,2 +1,2 @@\n-x = 1\n+x = 10\n y = 2\n"
        "Your old_string still occurs exactly once in it. Retry the edit as it is; this "
        "refusal counts as your read of the current version."
    )
    ok(a.tools.execute("write", {"file_path": "/r.txt", "content": "one\ntwo\n"}))
    ok(a.tools.execute("edit", {"file_path": "/r.txt", "old_string": "two",
                                "new_string": "TWO"}))
    ok(b.tools.execute("read", {"file_path": "/r.txt"}))
    ok(b.tools.execute("edit", {"file_path": "/r.txt", "old_string": "one",
                                "new_string": "ONE"}))
    res = fails(a.tools.execute(ED, {"command": "undo_edit", "path": "/r.txt"}),
                ErrorCode.FS_STALE)
    assert res.text == (
        "Error [FS_STALE]: /r.txt was changed by someone else after your last change to "
        "it, so your change was not undone: undoing it would throw their change away. "
        "What changed, from the version your change made to the current one:\n"
        "@@ -1,2 +1,2 @@\n-one\n+ONE\n TWO\n"
        "You have now seen the current version: to take your change back, edit it by "
        "hand against this version (undo would be refused again)."
    )


# -- without history --------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_stores_without_history_say_what_would_enable_it(kind: str, tmp_path: Path) -> None:
    url = f"memory://nh-{uuid.uuid4().hex[:8]}" if kind == "memory" else str(tmp_path)
    ws = Workspace(url, load_entry_points=False)
    assert ws.backend.capabilities.history is False
    a = ws.context("a")
    ok(a.tools.execute("write", {"file_path": "/f.txt", "content": "one\n"}))
    ok(a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "one", "new_string": "1"}))
    expected = (
        "Error [FS_UNSUPPORTED]: this workspace keeps no older versions of /f.txt, which "
        "{tool} needs. Open the workspace with history=History() to have fsseam keep them "
        "(S3 and GCS keep them where the bucket has versioning enabled)."
    )
    res = fails(a.tools.execute("history", {"file_path": "/f.txt"}), ErrorCode.FS_UNSUPPORTED)
    assert res.text == expected.format(tool="history")
    res = fails(a.tools.execute(ED, {"command": "undo_edit", "path": "/f.txt"}),
                ErrorCode.FS_UNSUPPORTED)
    assert res.text == expected.format(tool="undo")
    res = fails(a.tools.execute("restore", {"file_path": "/f.txt", "version": "abcdef"}),
                ErrorCode.FS_UNSUPPORTED)
    assert res.text == expected.format(tool="restore")
    assert raw(ws, "/f.txt") == b"1\n"


@pytest.mark.parametrize("kind", ["memory", "local"])
@pytest.mark.parametrize("route", ["apply_patch", "apply_patch_call"])
def test_undo_after_a_patch_without_history_is_refused_not_a_delete(
    kind: str, route: str, tmp_path: Path
) -> None:
    """A patched file that existed needs its old version back, which only kept history
    has: the undo is FS_UNSUPPORTED and the file stays exactly as the patch left it."""
    url = f"memory://np-{uuid.uuid4().hex[:8]}" if kind == "memory" else str(tmp_path)
    ws = Workspace(url, load_entry_points=False)
    a = ws.context("a")
    ok(a.tools.execute("write", {"file_path": "/p.cfg", "content": "a=1\nb=2\n"}))
    ok(a.tools.execute("read", {"file_path": "/p.cfg"}))
    if route == "apply_patch":
        ok(a.tools.execute("apply_patch", {"patch": (
            "*** Begin Patch\n*** Update File: p.cfg\n@@\n-a=1\n+a=9\n*** End Patch")}))
    else:
        out = a.tools.handle({"type": "apply_patch_call", "call_id": "c1", "operation": {
            "type": "update_file", "path": "/p.cfg", "diff": "@@\n-a=1\n+a=9\n"}})
        assert out["status"] == "completed", out
    res = fails(a.tools.execute(ED, {"command": "undo_edit", "path": "/p.cfg"}),
                ErrorCode.FS_UNSUPPORTED)
    assert "keeps no older versions of /p.cfg, which undo needs" in res.text
    assert raw(ws, "/p.cfg") == b"a=9\nb=2\n"


def test_undo_needs_the_policy_that_records_changes(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path), policy=False, history=History(path=str(tmp_path.parent / "k")),
                   load_entry_points=False)
    a = ws.context("a")
    ok(a.tools.execute("write", {"file_path": "/f.txt", "content": "one\n"}))
    res = fails(a.tools.execute(ED, {"command": "undo_edit", "path": "/f.txt"}),
                ErrorCode.FS_UNSUPPORTED)
    assert "undo needs the observation policy" in res.text


def test_a_create_is_undone_without_history(tmp_path: Path) -> None:
    """Taking back a create deletes the file: no older version is needed."""
    ws = Workspace(str(tmp_path), load_entry_points=False)
    a = ws.context("a")
    ok(a.tools.execute(ED, {"command": "create", "path": "/new.txt", "file_text": "x\n"}))
    ok(a.tools.execute(ED, {"command": "undo_edit", "path": "/new.txt"}))
    assert not (tmp_path / "new.txt").exists()


def test_native_history_refuses_a_second_one() -> None:
    from fsseam.backends.history import keep_history

    class Versioned:
        capabilities = Workspace("memory://x-native").backend.capabilities.model_copy(
            update={"history": True})
        root = "/"

    with pytest.raises(FsError) as info:
        keep_history(Versioned(), History())  # type: ignore[arg-type]
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "enable versioning on the bucket instead" in info.value.message


@pytest.mark.parametrize("given", ["/var/lib/fsseam/history", True, {"path": "/h"}])
def test_history_takes_a_history_value_and_says_so(given: object, tmp_path: Path) -> None:
    with pytest.raises(FsError) as info:
        Workspace(str(tmp_path), history=given)  # type: ignore[arg-type]
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert info.value.message == (
        'history= takes a History value, such as History() or History(path="/var/lib/fsseam/'
        f'history"), not {given!r}.'
    )
    assert list(tmp_path.iterdir()) == []


# -- where the history lives -----------------------------------------------------------


@pytest.fixture
def local(tmp_path: Path) -> Iterator[tuple[Workspace, Path, Path]]:
    root, kept = tmp_path / "root", tmp_path / "kept"
    root.mkdir()
    yield Workspace(str(root), history=History(path=str(kept)), load_entry_points=False), \
        root, kept


def test_history_lives_outside_the_tree_and_no_tool_sees_it(
    local: tuple[Workspace, Path, Path],
) -> None:
    ws, root, kept = local
    a = ws.context("a")
    ok(a.tools.execute("write", {"file_path": "/notes.md", "content": "secret v1\n"}))
    ok(a.tools.execute("write", {"file_path": "/notes.md", "content": "v2\n"}))
    assert sorted(p.name for p in root.iterdir()) == ["notes.md"]
    assert (kept / MARKER).is_file()
    assert ok(a.tools.execute("glob", {"pattern": "**/*"})).text == "/notes.md"
    assert ok(a.tools.execute("ls", {})).text == "/notes.md  (3 bytes)"
    grep = ok(a.tools.execute("grep", {"pattern": "secret"})).text
    assert grep.startswith("No matches for secret in / (1 files searched).")
    # the copies are there, under the history directory
    copies = [p for p in kept.rglob("*") if p.is_file() and len(p.name) == 64]
    assert sorted(p.read_bytes() for p in copies) == [b"secret v1\n", b"v2\n"]


def test_a_history_directory_inside_the_root_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FsError) as info:
        Workspace(str(tmp_path), history=History(path=str(tmp_path / ".history")))
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "lies inside the workspace" in info.value.message
    with pytest.raises(FsError):
        Workspace(str(tmp_path), history=History(path=str(tmp_path)))


def test_a_directory_holding_other_files_is_not_taken(tmp_path: Path) -> None:
    root, other = tmp_path / "root", tmp_path / "photos"
    root.mkdir()
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"meow")
    with pytest.raises(FsError) as info:
        Workspace(str(root), history=History(path=str(other)))
    assert "not fsseam's history" in info.value.message
    assert sorted(p.name for p in other.iterdir()) == ["cat.jpg"]


def test_the_default_directory_is_the_users_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "root"
    root.mkdir()
    ws = Workspace(str(root), history=History(), load_entry_points=False)
    ok(call(ws, "a", "write", file_path="/f.txt", content="x\n"))
    where = Path(default_directory(str(root)))
    assert where.parent == tmp_path / "cache" / "fsseam" / "history"
    assert (where / MARKER).is_file()
    assert str(where) in ws.backend.capabilities.note


def test_memory_history_is_shared_by_workspaces_on_one_store() -> None:
    name = f"memory://shared-h-{uuid.uuid4().hex[:8]}"
    first = Workspace(name, history=History(), load_entry_points=False)
    ok(call(first, "a", "write", file_path="/f.txt", content="one\n"))
    ok(call(first, "a", "write", file_path="/f.txt", content="two\n"))
    again = Workspace(name, history=History(), load_entry_points=False)
    assert [e.size for e in again.context("b").fs.history("/f.txt").entries] == [4, 4]


# -- crash safety --------------------------------------------------------------------------


class Crash(BaseException):
    """Stands in for the process dying (not an Exception: nothing may catch it)."""


def test_the_replaced_version_is_kept_before_the_new_one_is_published(
    local: tuple[Workspace, Path, Path], monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws, root, kept = local
    ok(call(ws, "a", "write", file_path="/f.txt", content="v1\n"))
    (root / "f.txt").write_bytes(b"by an editor\n")  # a version fsseam never wrote
    backend = ws.backend
    assert isinstance(backend, KeptHistoryBackend)
    seen: list[list[bytes]] = []

    def publish(key: str, data: bytes, pre: Any) -> Any:
        # At the moment of publishing, the version being replaced is on disk already.
        seen.append(sorted(p.read_bytes() for p in kept.rglob("*")
                           if p.is_file() and len(p.name) == 64))
        raise Crash()

    monkeypatch.setattr(backend.inner, "write", publish)
    with pytest.raises(Crash):
        backend.write("f.txt", b"v2\n", IfMatch(backend.read("f.txt").version))
    assert seen == [[b"by an editor\n", b"v1\n", b"v2\n"]]
    monkeypatch.undo()
    assert (root / "f.txt").read_bytes() == b"by an editor\n"
    # After the "crash" the editor's version is listed (found in place, no owner), and the
    # unpublished v2 is not; its copy goes at the next write of the file.
    infos = backend.versions("f.txt")
    assert [(i.latest, i.owner, i.size) for i in infos] == [(True, None, 13),
                                                            (False, "a", 3)]
    v = backend.write("f.txt", b"v3\n", IfMatch(infos[0].version))
    copies = sorted(p.read_bytes() for p in kept.rglob("*")
                    if p.is_file() and len(p.name) == 64)
    assert copies == [b"by an editor\n", b"v1\n", b"v3\n"]
    assert backend.read_version("f.txt", infos[1].version).data == b"v1\n"
    assert backend.read_version("f.txt", v).data == b"v3\n"


def test_temp_files_of_a_crashed_writer_are_swept(local: tuple[Workspace, Path, Path]) -> None:
    ws, _, kept = local
    ok(call(ws, "a", "write", file_path="/f.txt", content="v1\n"))
    (folder,) = [p for p in kept.iterdir() if p.is_dir()]
    (folder / ".tmp-deadbeefdeadbeef").write_bytes(b"half")
    ok(call(ws, "a", "write", file_path="/f.txt", content="v2\n"))
    assert not (folder / ".tmp-deadbeefdeadbeef").exists()
    index = json.loads((folder / "index.json").read_text())
    assert index["key"] == "f.txt" and index["format"] == 1
    assert [(e["size"], e["owner"]) for e in index["entries"]] == [(3, "a"), (3, "a")]


# -- a damaged index ------------------------------------------------------------------------

DAMAGE = {
    "list": b"[]",
    "entries-string": b'{"entries": "zzz"}',
    "entries-string-with-key": b'{"format": 1, "key": "f.txt", "entries": "zzz"}',
    "bad-field": (b'{"format": 1, "key": "f.txt", "entries": [{"kind": "sha256", '
                  b'"value": "ab", "size": "big"}]}'),
    "sha-outside": (b'{"format": 1, "key": "f.txt", "entries": [{"kind": "sha256", '
                    b'"value": "ab", "sha256": "../../../etc/passwd"}]}'),
    "not-json": b'{"format": 1, "key": "f.t',
}


@pytest.mark.parametrize("shape", list(DAMAGE))
@pytest.mark.parametrize("kind", ["local", "memory"])
def test_a_damaged_index_is_an_error_for_history_and_set_aside_by_the_next_change(
    kind: str, shape: str, tmp_path: Path,
) -> None:
    kept = tmp_path / "kept"
    if kind == "local":
        root = tmp_path / "root"
        root.mkdir()
        url = str(root)
    else:
        url = f"memory://dmg-{uuid.uuid4().hex[:8]}"
    ws = Workspace(url, {"global_store": False} if kind == "memory" else None,
                   history=History(path=str(kept)), load_entry_points=False)
    a = ws.context("a")
    ok(a.tools.execute("write", {"file_path": "/f.txt", "content": "one\n"}))
    ok(a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "one",
                                "new_string": "two"}))
    first = ok(a.tools.execute("history", {"file_path": "/f.txt"})).value.entries[-1].id
    (folder,) = [p for p in kept.iterdir() if p.is_dir()]
    index = folder / "index.json"
    index.write_bytes(DAMAGE[shape])
    copies = sorted(p.name for p in folder.iterdir() if len(p.name) == 64)
    assert len(copies) == 2

    for tool, args in [
        ("history", {"file_path": "/f.txt"}),
        ("restore", {"file_path": "/f.txt", "version": first}),
        (ED, {"command": "undo_edit", "path": "/f.txt"}),
    ]:
        res = fails(a.tools.execute(tool, args), ErrorCode.FS_BACKEND)
        assert res.text.startswith(
            f"Error [FS_BACKEND]: the history fsseam keeps of /f.txt cannot be used: its "
            f"index file {index} is damaged ("), (tool, res.text)
        assert "read, edit and write it as usual" in res.text
        assert raw(ws, "/f.txt") == b"two\n"
        assert index.read_bytes() == DAMAGE[shape]

    # The file itself is fine: an edit goes through, setting the damaged index aside
    # (kept for the user, under a new name) and starting one from the copies.
    ok(a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "two",
                                "new_string": "three"}))
    assert raw(ws, "/f.txt") == b"three\n"
    (aside,) = [p for p in folder.iterdir() if p.name.startswith("index.json.damaged-")]
    assert aside.read_bytes() == DAMAGE[shape]
    assert json.loads(index.read_bytes())["key"] == "f.txt"
    listed = ok(a.tools.execute("history", {"file_path": "/f.txt"})).value.entries
    assert [(e.latest, e.size) for e in listed] == [(True, 6), (False, 4), (False, 4)]
    assert first in [e.id for e in listed]
    # The edit's own record survived too: undo takes it back, restore reaches the first.
    ok(a.tools.execute(ED, {"command": "undo_edit", "path": "/f.txt"}))
    assert raw(ws, "/f.txt") == b"two\n"
    ok(a.tools.execute("restore", {"file_path": "/f.txt", "version": first}))
    assert raw(ws, "/f.txt") == b"one\n"
    # A workspace opened afterwards reads the new index and counts what it keeps.
    again = Workspace(url, {"global_store": False} if kind == "memory" else None,
                      history=History(path=str(kept)), load_entry_points=False)
    ok(again.context("b").tools.execute("history", {"file_path": "/f.txt"}))


def test_a_damaged_index_of_one_file_does_not_stop_eviction_for_the_others(
    local: tuple[Workspace, Path, Path],
) -> None:
    ws, _, kept = local
    ok(call(ws, "a", "write", file_path="/f.txt", content="f\n"))
    (folder,) = [p for p in kept.iterdir() if p.is_dir()]
    (folder / "index.json").write_bytes(DAMAGE["entries-string-with-key"])
    backend = ws.backend
    assert isinstance(backend, KeptHistoryBackend)
    backend.budget.evict()  # reads every file's index: the damaged one is passed over
    ok(call(ws, "a", "write", file_path="/g.txt", content="g\n"))
    assert backend.store.files() == ["f.txt", "g.txt"]


# -- bounds --------------------------------------------------------------------------------


def test_versions_per_file_are_bounded(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ws = Workspace(str(root), history=History(path=str(tmp_path / "k"), max_versions=3),
                   load_entry_points=False)
    a = ws.context("a")
    for i in range(6):
        ok(a.tools.execute("write", {"file_path": "/f.txt", "content": f"v{i}\n"}))
    entries = a.fs.history("/f.txt", 100).entries
    assert [e.size for e in entries] == [3, 3, 3]
    assert [a.fs.backend.read_version("f.txt", e.version).data for e in entries] == [
        b"v5\n", b"v4\n", b"v3\n"]
    copies = [p for p in (tmp_path / "k").rglob("*") if p.is_file() and len(p.name) == 64]
    assert len(copies) == 3


def test_bytes_in_all_are_bounded_oldest_first(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ws = Workspace(str(root), history=History(path=str(tmp_path / "k"), max_bytes=1000),
                   load_entry_points=False)
    a = ws.context("a")
    for name in ("a", "b", "c"):
        for i in range(4):  # 12 copies of 101 bytes: the 3 oldest must go
            ok(a.tools.execute("write", {"file_path": f"/{name}.txt",
                                         "content": f"{name}{i}" * 50 + "\n"}))
    copies = [p for p in (tmp_path / "k").rglob("*") if p.is_file() and len(p.name) == 64]
    assert sum(p.stat().st_size for p in copies) <= 1000
    # the newest copies stayed: c's versions, and the current one of every file is listed
    assert a.fs.history("/c.txt").entries[0].latest
    assert [e.latest for e in a.fs.history("/a.txt").entries] == [True]
    kept = sorted(p.read_bytes()[:2] for p in copies)
    assert kept == [b"a3", b"b0", b"b1", b"b2", b"b3", b"c0", b"c1", b"c2", b"c3"]


def test_a_version_larger_than_the_budget_is_not_kept(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    ws = Workspace(str(root), history=History(path=str(tmp_path / "k"), max_bytes=100),
                   load_entry_points=False)
    a = ws.context("a")
    ok(a.tools.execute("write", {"file_path": "/big.txt", "content": "x" * 500}))
    ok(a.tools.execute("write", {"file_path": "/big.txt", "content": "y" * 500}))
    assert [e.latest for e in a.fs.history("/big.txt").entries] == [True]
    assert (root / "big.txt").read_bytes() == b"y" * 500


# -- the backend protocol through the wrapper --------------------------------------------


def test_overwrite_keeps_what_it_replaces(local: tuple[Workspace, Path, Path]) -> None:
    from fsseam import Overwrite

    ws, root, _ = local
    b = ws.backend
    b.write("o.txt", b"first", CreateOnly())
    (root / "o.txt").write_bytes(b"outside")
    b.write("o.txt", b"last", Overwrite())
    assert [x.size for x in b.versions("o.txt")] == [4, 7, 5]
    assert b.read_version("o.txt", b.versions("o.txt")[1].version).data == b"outside"


def test_delete_keeps_the_file_and_records_the_deletion(local: tuple[Workspace, Path, Path]
                                                        ) -> None:
    ws, _, _ = local
    b = ws.backend
    v = b.write("d.txt", b"bye", CreateOnly())
    b.delete("d.txt", IfMatch(v))
    infos = b.versions("d.txt")
    assert [(i.deleted, i.latest) for i in infos] == [(True, False), (False, False)]
    assert b.read_version("d.txt", v).data == b"bye"
    with pytest.raises(FsError) as info:
        b.read_version("d.txt", infos[0].version)
    assert info.value.code is ErrorCode.FS_NOT_FOUND


def test_diffs_off_leave_the_old_refusal(tmp_path: Path) -> None:
    """Limits(conflict_diff_chars=0): FS_STALE as before issue 17 (no diff, no observation)."""
    ws = Workspace(str(tmp_path), limits=Limits(conflict_diff_chars=0), load_entry_points=False)
    a, b = ws.context("a"), ws.context("b")
    ok(a.tools.execute("write", {"file_path": "/f.txt", "content": "x\ny\n"}))
    ok(b.tools.execute("read", {"file_path": "/f.txt"}))
    ok(b.tools.execute("edit", {"file_path": "/f.txt", "old_string": "x", "new_string": "X"}))
    res = fails(a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "y",
                                         "new_string": "Y"}), ErrorCode.FS_STALE)
    assert res.text == ("Error [FS_STALE]: /f.txt has changed since you last read it. Read it "
                        "again, then retry the edit.")
    fails(a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "y",
                                   "new_string": "Y"}), ErrorCode.FS_STALE)
    assert os.path.getsize(tmp_path / "f.txt") == 4


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_patch_rows_name_the_patcher_and_deletion_rows_who_deleted(
    kind: str, tmp_path: Path
) -> None:
    if kind == "memory":
        ws = Workspace(f"memory://ad-{uuid.uuid4().hex[:8]}", {"global_store": False},
                       history=History(), load_entry_points=False)
    else:
        root = tmp_path / "root"
        root.mkdir()
        ws = Workspace(str(root), history=History(path=str(tmp_path / "kept")),
                       load_entry_points=False)
    a, b = ws.context("a"), ws.context("b")
    ok(a.tools.execute("write", {"file_path": "/p.cfg", "content": "a=1\n"}))
    ok(b.tools.execute("read", {"file_path": "/p.cfg"}))
    ok(b.tools.execute("apply_patch", {"patch": (
        "*** Begin Patch\n*** Update File: p.cfg\n@@\n-a=1\n+a=2\n*** End Patch")}))
    ok(b.tools.execute("delete", {"file_path": "/p.cfg"}))
    entries = ok(a.tools.execute("history", {"file_path": "/p.cfg"})).value.entries
    assert [(e.deleted, e.owner) for e in entries] == [(True, "b"), (False, "b"),
                                                       (False, "a")]
    assert a.tools.execute("history", {"file_path": "/p.cfg"}).text.splitlines()[1].endswith(
        "  by b")
    # a deletion through a patch names its author too
    ok(a.tools.execute("write", {"file_path": "/q.cfg", "content": "q\n"}))
    ok(b.tools.execute("read", {"file_path": "/q.cfg"}))
    ok(b.tools.execute("apply_patch", {"patch": (
        "*** Begin Patch\n*** Delete File: q.cfg\n*** End Patch")}))
    entries = ok(a.tools.execute("history", {"file_path": "/q.cfg"})).value.entries
    assert [(e.deleted, e.owner) for e in entries] == [(True, "b"), (False, "a")]


# -- on mounts ----------------------------------------------------------------------------


def _mounted(tmp_path: Path, history: Any) -> Workspace:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    return Workspace.mount({"/": f"memory://mh-{uuid.uuid4().hex[:8]}", "/repo": str(repo)},
                           storage_options={"/": {"global_store": False}},
                           history=history, load_entry_points=False)


@pytest.mark.parametrize("path", ["/notes.md", "/repo/notes.md"])
@pytest.mark.parametrize("spelling", ["one for all", "per mount"])
def test_history_undo_and_restore_on_a_local_and_a_memory_mount(
    path: str, spelling: str, tmp_path: Path
) -> None:
    """Workspace.mount takes history= as Workspace does: one History for every mount whose
    store keeps no versions, or one per mount point."""
    kept = tmp_path / "kept"
    history: Any = (History(path=str(kept)) if spelling == "one for all" else
                    {"/": History(), "/repo": History(path=str(kept))})
    ws = _mounted(tmp_path, history)
    assert ws.backend.capabilities.history
    a, b = ws.context("a"), ws.context("b")
    ok(a.tools.execute("write", {"file_path": path, "content": "one\n"}))
    ok(a.tools.execute("edit", {"file_path": path, "old_string": "one", "new_string": "two"}))
    ok(b.tools.execute("read", {"file_path": path}))
    ok(b.tools.execute("edit", {"file_path": path, "old_string": "two", "new_string": "3"}))
    entries = ok(a.tools.execute("history", {"file_path": path})).value.entries
    assert [(e.owner, e.size) for e in entries] == [("b", 2), ("a", 4), ("a", 4)]
    # b takes its change back; a restores the first version over a's own read of b's undo
    ok(b.tools.execute(ED, {"command": "undo_edit", "path": path}))
    assert raw(ws, path) == b"two\n"
    ok(a.tools.execute("read", {"file_path": path}))
    ok(a.tools.execute("restore", {"file_path": path, "version": entries[-1].id}))
    assert raw(ws, path) == b"one\n"
    ok(a.tools.execute(ED, {"command": "undo_edit", "path": path}))
    assert raw(ws, path) == b"two\n"
    if spelling == "one for all":
        # one directory given for two mounts: each keeps its copies apart below it
        assert len(os.listdir(kept)) == 2


def test_one_history_skips_mounts_that_keep_their_own_and_a_table_names_mounts(
    tmp_path: Path,
) -> None:
    native = Workspace(f"memory://nat-{uuid.uuid4().hex[:8]}", {"global_store": False},
                       history=History(), load_entry_points=False).backend
    ws = Workspace.mount({"/": f"memory://mp-{uuid.uuid4().hex[:8]}", "/kept": native},
                         storage_options={"/": {"global_store": False}},
                         history=History(), load_entry_points=False)
    assert ws.backend.capabilities.history
    with pytest.raises(FsError) as info:
        _mounted(tmp_path, {"/nope": History()})
    assert info.value.reason == "mount_unknown" and "history" in info.value.message
    # only the mount named keeps history
    ws = _mounted(tmp_path, {"/repo": History(path=str(tmp_path / "k2"))})
    assert ws.backend.capabilities_for("repo/x").history
    assert not ws.backend.capabilities_for("x").history


def test_a_mounts_history_directory_inside_another_local_mount_is_refused(
    tmp_path: Path,
) -> None:
    with pytest.raises(FsError) as info:
        _mounted(tmp_path, {"/": History(path=str(tmp_path / "repo" / ".kept"))})
    assert info.value.reason == "history_inside_root"
    assert not (tmp_path / "repo" / ".kept").exists()
