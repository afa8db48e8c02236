"""Lost answers on local files and in memory: a backend wrapper makes chosen calls take
effect and then raise (as a store whose answer is lost), and, where asked, makes the file
unreadable afterwards. A move or patch never loses a file, a step that landed counts as
done, and an answer never says "nothing was applied" unless every file is as it was.
(S3 and GCS have the same tests against their servers: test_*_lost_answers.py.)"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, FsError, Workspace
from fsseam.backends.base import ANY_VERSION
from fsseam.versions import Precondition, Version

BEFORE = {"a.txt": b"a\n", "b.txt": b"b\n", "d.txt": b"d\n"}
PATCH = (
    "*** Begin Patch\n*** Add File: n.txt\n+new\n"
    "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n"
    "*** Delete File: d.txt\n*** End Patch"
)
# Commit order: n.txt (created), a.txt, b.txt (updated), d.txt (deleted).
AFTER = {"n.txt": b"new\n", "a.txt": b"A\n", "b.txt": b"B\n"}
MOVE_PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: m.txt\n@@\n-a\n+A\n"
    "*** Delete File: d.txt\n*** End Patch"
)
# Commit order: m.txt (created), a.txt, d.txt (deleted).


def _lost(action: str, key: str) -> FsError:
    return FsError(ErrorCode.FS_BACKEND, path=f"/{key}", reason="storage_failed",
                   details={"action": action, "detail": "connection reset, answer lost"})


class Lossy:
    """The workspace's backend. Calls in ``lands`` take effect and then raise; calls in
    ``refuses`` raise before doing anything; with ``blind``, a file whose call landed
    cannot be read afterwards (the read-back fails too)."""

    def __init__(self, inner: Any, *, lands: set[tuple[str, str]] | None = None,
                 refuses: set[tuple[str, str]] | None = None, blind: bool = False) -> None:
        self.inner = inner
        self.lands = lands or set()
        self.refuses = refuses or set()
        self.blind = blind
        self.unreadable: set[str] = set()
        self.calls: list[tuple[str, str]] = []

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)

    def _call(self, what: str, key: str, run: Callable[[], Any]) -> Any:
        self.calls.append((what, key))
        if (what, key) in self.refuses:
            raise _lost(what, key)
        result = run()
        if (what, key) in self.lands:
            self.lands.discard((what, key))
            if self.blind:
                self.unreadable.add(key)
            raise _lost(what, key)
        return result

    def write(self, key: str, data: bytes, pre: Precondition, **kw: Any) -> Version:
        version: Version = self._call("write", key,
                                      lambda: self.inner.write(key, data, pre, **kw))
        return version

    def delete(self, key: str, pre: Precondition = ANY_VERSION, **kw: Any) -> None:
        self._call("delete", key, lambda: self.inner.delete(key, pre))

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        version: Version = self._call("copy", dst, lambda: self.inner.copy(src, dst, source))
        return version

    def _readable(self, key: str) -> None:
        if key in self.unreadable:
            raise _lost("read", key)

    def read(self, key: str) -> Any:
        self._readable(key)
        return self.inner.read(key)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> Any:
        self._readable(key)
        return self.inner.open_read(key, chunk_size)


class Store:
    def __init__(self, kind: str, root: Path) -> None:
        if kind == "local":
            for name, data in BEFORE.items():
                (root / name).write_bytes(data)
            self.ws = Workspace(str(root))
        else:
            self.ws = Workspace(f"memory://lost-{uuid.uuid4().hex[:8]}",
                                {"global_store": False})
            for name, data in BEFORE.items():
                self.ws.backend.write(name, data, ANY_VERSION)

    def stored(self) -> dict[str, bytes]:
        backend = self.ws.backend
        return {e.key: backend.read(e.key).data for e in backend.walk("")}

    def agent(self, **faults: Any) -> tuple[Any, Lossy]:
        ctx = self.ws.context("a")
        for name in self.stored():
            assert ctx.tools.execute("read", {"file_path": name}).ok
        lossy = Lossy(self.ws.backend, **faults)
        ctx.fs.backend = lossy
        return ctx, lossy


@pytest.fixture(params=["local", "memory"])
def store(request: pytest.FixtureRequest, root: Path) -> Store:
    return Store(request.param, root)


def test_a_patch_move_whose_source_delete_lands_then_fails_is_done(store: Store) -> None:
    ctx, _ = store.agent(lands={("delete", "a.txt")})
    res = ctx.tools.execute("apply_patch", {"patch": MOVE_PATCH})
    assert res.ok, res.text
    assert store.stored() == {"b.txt": b"b\n", "m.txt": b"A\n"}


def test_a_patch_delete_that_lands_then_fails_is_done(store: Store) -> None:
    ctx, _ = store.agent(lands={("delete", "d.txt")})
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert store.stored() == AFTER


def test_a_patch_write_that_lands_then_fails_is_done(store: Store) -> None:
    ctx, lossy = store.agent(lands={("write", "b.txt")})
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert store.stored() == AFTER
    # nothing was written twice, and nothing undone
    assert lossy.calls == [("write", "n.txt"), ("write", "a.txt"), ("write", "b.txt"),
                           ("delete", "d.txt")]


def test_a_patch_write_that_lands_and_cannot_be_read_back_is_unknown(store: Store) -> None:
    ctx, _ = store.agent(lands={("write", "b.txt")}, blind=True)
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert res.text == (
        "Error [FS_BACKEND]: storage failed to write /b.txt (connection reset, answer lost). "
        "Whether that step took effect is not known, so the change stopped there and "
        "nothing that may depend on it was undone: /n.txt is as it was; /a.txt is as it "
        "was; whether /b.txt holds this change's new content is not known (reading it back "
        "failed): read it to see; /d.txt was not written. Read these files before going on, "
        "and redo only what they lack."
    ), res.text
    assert store.stored() == {**BEFORE, "b.txt": b"B\n"}


def test_a_patch_move_whose_source_delete_cannot_be_read_back_keeps_the_copy(
    store: Store,
) -> None:
    """The source is gone, but the answer was lost and the source cannot be read back:
    undoing the copy would leave the content nowhere, so it is kept."""
    ctx, _ = store.agent(lands={("delete", "a.txt")}, blind=True)
    res = ctx.tools.execute("apply_patch", {"patch": MOVE_PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert (
        "/m.txt still holds the content moved there from /a.txt, and was kept since /a.txt "
        "is not known to hold it again; whether /a.txt was deleted is not known (reading it "
        "back failed): read it to see; /d.txt was not written."
    ) in res.text, res.text
    assert "Nothing was applied" not in res.text
    assert store.stored() == {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"A\n"}


def test_a_rollback_never_removes_a_copy_whose_source_was_not_restored(store: Store) -> None:
    """d.txt's delete fails (nothing done), and putting a.txt back fails too: a.txt is
    still deleted, so m.txt, the only copy of its content, is kept."""
    ctx, _ = store.agent(refuses={("delete", "d.txt"), ("write", "a.txt")})
    res = ctx.tools.execute("apply_patch", {"patch": MOVE_PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert (
        "/m.txt still holds the content moved there from /a.txt, and was kept since /a.txt "
        "is not known to hold it again; /a.txt is still deleted (restoring it failed: "
        "storage failed to write /a.txt (connection reset, answer lost)); /d.txt was not "
        "written."
    ) in res.text, res.text
    assert store.stored() == {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"A\n"}


def test_a_move_whose_source_delete_lands_then_fails_is_done(store: Store) -> None:
    ctx, _ = store.agent(lands={("delete", "a.txt")})
    res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
    assert res.ok, res.text
    assert res.text == "Moved /a.txt to /m.txt."
    assert store.stored() == {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"a\n"}


def test_a_move_whose_source_cannot_be_read_back_keeps_the_copy(store: Store) -> None:
    ctx, _ = store.agent(lands={("delete", "a.txt")}, blind=True)
    res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert res.text == (
        "Error [FS_BACKEND]: storage failed to delete /a.txt (connection reset, answer "
        "lost). Whether /a.txt was deleted is not known (reading it back failed too), so "
        "/m.txt, the copy made for the move, was kept: it holds the content of /a.txt. "
        "Read both before going on; if /a.txt still exists, delete it to finish the move."
    ), res.text
    assert store.stored() == {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"a\n"}


def test_a_move_whose_delete_did_nothing_rolls_the_copy_back(store: Store) -> None:
    ctx, _ = store.agent(refuses={("delete", "a.txt")})
    res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert res.text.endswith("nothing was changed. Retry later."), res.text
    assert store.stored() == BEFORE


def test_a_move_whose_copy_cannot_be_removed_says_it_may_still_exist(store: Store) -> None:
    """The source's delete did nothing, and removing the copy fails as well: the answer
    says the copy may still be there, not that someone else changed it."""
    ctx, _ = store.agent(refuses={("delete", "a.txt"), ("delete", "m.txt")})
    res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert res.text == (
        "Error [FS_BACKEND]: storage failed to delete /a.txt (connection reset, answer "
        "lost). Removing /m.txt, the copy made for the move, failed too (storage failed to "
        "delete /m.txt (connection reset, answer lost)): it may still exist. Read both "
        "before going on."
    ), res.text
    assert store.stored() == {**BEFORE, "m.txt": b"a\n"}


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_a_single_write_that_lands_then_fails(store: Store, tool: str) -> None:
    def args(name: str) -> dict[str, Any]:
        if tool == "write":
            return {"file_path": name, "content": name[0].upper() + "\n"}
        return {"file_path": name, "old_string": name[0], "new_string": name[0].upper()}

    ctx, _ = store.agent(lands={("write", "a.txt")})
    res = ctx.tools.execute(tool, args("a.txt"))
    assert res.ok, res.text
    assert store.stored() == {**BEFORE, "a.txt": b"A\n"}
    ctx, _ = store.agent(lands={("write", "b.txt")}, blind=True)
    res = ctx.tools.execute(tool, args("b.txt"))
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert res.text == (
        "Error [FS_BACKEND]: storage failed to write /b.txt (connection reset, answer "
        "lost). Whether it took effect is not known: reading /b.txt back failed too, so it "
        "may or may not hold the change. Read /b.txt before retrying."
    ), res.text
    assert store.stored() == {**BEFORE, "a.txt": b"A\n", "b.txt": b"B\n"}


def test_a_single_delete_that_lands_then_fails(store: Store) -> None:
    ctx, _ = store.agent(lands={("delete", "a.txt")})
    res = ctx.tools.execute("delete", {"file_path": "a.txt"})
    assert res.ok, res.text
    assert store.stored() == {"b.txt": b"b\n", "d.txt": b"d\n"}
    ctx, _ = store.agent(lands={("delete", "b.txt")}, blind=True)
    res = ctx.tools.execute("delete", {"file_path": "b.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert "Whether it took effect is not known: reading /b.txt back failed too" in res.text
    assert store.stored() == {"d.txt": b"d\n"}


def _history_ws(kind: str, root: Path) -> Workspace:
    from fsseam import History

    if kind == "local":
        return Workspace(str(root), history=History())
    return Workspace(f"memory://lost-{uuid.uuid4().hex[:8]}", {"global_store": False},
                     history=History())


@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize("blind", [False, True], ids=["read-back", "blind"])
def test_an_undo_whose_write_back_lands_and_then_fails(kind: str, blind: bool,
                                                       root: Path) -> None:
    """The write back of an undo lands and its answer is lost: read back, it is an undo
    done; when reading back fails too, the answer says the outcome is unknown (never
    "nothing was changed"), and the file holds what the store holds."""
    ws = _history_ws(kind, root)
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/f.txt", "content": "1\n"}).ok
    assert ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": "1",
                                      "new_string": "2"}).ok
    lossy = Lossy(ws.backend, lands={("write", "f.txt")}, blind=blind)
    ctx.fs.backend = lossy
    res = ctx.tools.execute("str_replace_editor", {"command": "undo_edit", "path": "/f.txt"})
    assert ws.backend.read("f.txt").data == b"1\n"
    if blind:
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert "Whether it took effect is not known" in res.text
        assert "nothing was changed" not in res.text
    else:
        assert res.ok, res.text
        assert "undone successfully" in res.text
    assert ("write", "f.txt") in lossy.calls


@pytest.mark.parametrize("kind", ["local", "memory"])
@pytest.mark.parametrize("blind", [False, True], ids=["read-back", "blind"])
def test_an_undo_of_a_create_whose_delete_lands_and_then_fails(kind: str, blind: bool,
                                                               root: Path) -> None:
    ws = _history_ws(kind, root)
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/new.txt", "content": "x\n"}).ok
    lossy = Lossy(ws.backend, lands={("delete", "new.txt")}, blind=blind)
    ctx.fs.backend = lossy
    res = ctx.tools.execute("str_replace_editor", {"command": "undo_edit", "path": "/new.txt"})
    assert "new.txt" not in {e.key for e in ws.backend.walk("")}
    if blind:
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert "Whether it took effect is not known" in res.text
        assert "nothing was changed" not in res.text
    else:
        assert res.ok, res.text


@pytest.mark.parametrize("kind", ["local", "memory"])
def test_a_restore_whose_write_lands_and_then_fails_is_done(kind: str, root: Path) -> None:
    ws = _history_ws(kind, root)
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/f.txt", "content": "1\n"}).ok
    first = ctx.fs.history("/f.txt").entries[0].id
    assert ctx.tools.execute("write", {"file_path": "/f.txt", "content": "2\n"}).ok
    ctx.fs.backend = Lossy(ws.backend, lands={("write", "f.txt")})
    res = ctx.tools.execute("restore", {"file_path": "/f.txt", "version": first})
    assert res.ok, res.text
    assert ws.backend.read("f.txt").data == b"1\n"


class Twin(Lossy):
    """Another writer gets there first: right before the commit's call on ``key``, it
    writes exactly the bytes of that call (or, for a delete, deletes the file)."""

    def __init__(self, inner: Any, key: str, **faults: Any) -> None:
        super().__init__(inner, **faults)
        self.key = key

    def write(self, key: str, data: bytes, pre: Precondition, **kw: Any) -> Version:
        if key == self.key:
            self.key = ""
            self.inner.write(key, data, ANY_VERSION)
        return super().write(key, data, pre, **kw)

    def delete(self, key: str, pre: Precondition = ANY_VERSION, **kw: Any) -> None:
        if key == self.key:
            self.key = ""
            self.inner.delete(key, ANY_VERSION)
        super().delete(key, pre, **kw)


def test_a_rollback_leaves_a_file_another_writer_created_with_the_same_bytes(
    store: Store,
) -> None:
    """The commit's create of n.txt is refused: someone created it with exactly these
    bytes. It counts as done, but when a later step fails the rollback leaves n.txt to
    them instead of deleting it."""
    ctx, _ = store.agent()
    ctx.fs.backend = Twin(store.ws.backend, "n.txt", refuses={("write", "b.txt")})
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None, res.text
    assert store.stored() == {**BEFORE, "n.txt": b"new\n"}
    assert "/n.txt holds this change's new content, which someone else had written too" in (
        res.text)


def test_a_patch_move_whose_source_another_writer_deleted_is_refused(
    store: Store,
) -> None:
    """A patch moves a.txt to m.txt; someone deletes a.txt just before the commit does: the
    store's refusal of the source delete is definitive (a delete and a move at once, the
    delete won), so m.txt is taken back, the patch is refused and d.txt is left as it was."""
    ctx, _ = store.agent()
    ctx.fs.backend = Twin(store.ws.backend, "a.txt", refuses={("delete", "d.txt")})
    res = ctx.tools.execute("apply_patch", {"patch": MOVE_PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND, res.text
    assert store.stored() == {"b.txt": b"b\n", "d.txt": b"d\n"}
    assert res.error.message == (
        "/a.txt was moved or deleted by another writer since you last read it; nothing was "
        "moved. Nothing was applied: every file is as it was."), res.text
