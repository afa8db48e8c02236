"""The seam's shape: every change asks the gate before the store is touched and carries
the precondition the gate decided, every write and delete of a change (its rollback too)
made on the owner's behalf without wrapping the backend, and one function that changes the
store."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, FsError, Workspace
from fsseam.backends.base import ANY_VERSION, WriteMeta
from fsseam.backends.history import History
from fsseam.changes import Create, Delete, Update
from fsseam.errors import Conflict
from fsseam.events import DeleteIntent, EditIntent, UndoIntent, WriteIntent
from fsseam.gate import hookimpl
from fsseam.text import TextDoc, decode
from fsseam.versions import CreateOnly, IfMatch, Precondition, Version

SEAM = Path(__file__).resolve().parents[1] / "src" / "fsseam" / "seam"
INTENTS = {"WriteIntent", "EditIntent", "DeleteIntent", "UndoIntent"}


def _calls(path: Path) -> list[tuple[str, int]]:
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
            names.append((name, node.lineno))
    return names


def test_intents_are_built_in_one_place() -> None:
    """One module of the seam builds every intent; the operations ask it."""
    tree_of = {m: ast.parse(m.read_text()) for m in SEAM.glob("*.py")}
    builders = {
        (m, owner)
        for m, tree in tree_of.items()
        for node, owner in _enclosing(tree).items()
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
        and node.func.id in INTENTS
    }
    assert builders and len({m for m, _ in builders}) == 1


def test_the_seam_never_probes_the_backend_by_name() -> None:
    found = [
        (m.name, line) for m in [*SEAM.glob("*.py"), SEAM.parent / "changes.py"]
        for name, line in _calls(m) if name in ("getattr", "hasattr")
    ]
    assert found == []


class Recording:
    """A backend that keeps write metadata (as S3 and GCS do) and records on whose behalf
    each write and delete is made; optionally failing its ``fail_at``-th change."""

    def __init__(self, inner: Any, fail_at: int | None = None) -> None:
        self._inner = inner
        self.capabilities = inner.capabilities.model_copy(update={"write_meta": True})
        self.fail_at = fail_at
        self.calls: list[tuple[str, str, str | None]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _note(self, what: str, key: str, meta: WriteMeta | None) -> None:
        self.calls.append((what, key, None if meta is None else meta.owner))
        if len(self.calls) == self.fail_at:
            raise Conflict("mismatch", path="/" + key)

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        self._note("write", key, meta)
        version: Version = self._inner.write(key, data, precondition)
        return version

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        self._note("delete", key, meta)
        self._inner.delete(key, precondition)


def _upper(doc: TextDoc, shown: str) -> TextDoc:
    return decode(doc.encode().upper(), shown)


@pytest.mark.parametrize("fail_at", [None, 3])
def test_a_change_writes_and_rolls_back_on_the_owners_behalf(
    tmp_path: Path, fail_at: int | None
) -> None:
    for name in ("b.txt", "c.txt"):
        (tmp_path / name).write_text(name + "\n")
    ws = Workspace(str(tmp_path))
    ctx = ws.context("alice")
    for name in ("b.txt", "c.txt"):
        assert ctx.tools.execute("read", {"file_path": name}).ok
    recording = Recording(ws.backend, fail_at)
    ctx.fs.backend = recording
    changes = [Create("a.txt", "new\n"), Update("b.txt", edit=_upper), Delete("c.txt")]
    if fail_at is None:
        ctx.fs.change(changes)
    else:
        with pytest.raises(FsError) as failed:
            ctx.fs.change(changes)
        assert failed.value.code is ErrorCode.FS_STALE
    done = [("write", "a.txt"), ("write", "b.txt"), ("delete", "c.txt")][: fail_at or 3]
    undone = [("write", "b.txt"), ("delete", "a.txt")] if fail_at else []
    assert [(w, k) for w, k, _ in recording.calls] == done + undone
    assert {owner for _, _, owner in recording.calls} == {"alice"}
    if fail_at:
        assert (tmp_path / "b.txt").read_text() == "b.txt\n"
        assert not (tmp_path / "a.txt").exists()


STORE_CHANGES = {"write", "delete", "copy"}


def _enclosing(tree: ast.AST) -> dict[ast.AST, str]:
    """Each node's innermost enclosing function name ("" at module level)."""
    owner: dict[ast.AST, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef) else name
            owner[child] = inner
            visit(child, inner)

    visit(tree, "")
    return owner


def _store_changes(path: Path) -> set[tuple[str, str]]:
    """Where ``path`` calls a change of the store: a backend's write, delete or copy."""
    tree = ast.parse(path.read_text())
    owner = _enclosing(tree)
    found = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if (isinstance(f, ast.Attribute) and f.attr in STORE_CHANGES
                and "backend" in ast.unparse(f.value)):
            found.add((path.name, owner[node]))
    return found


def test_exactly_one_function_changes_the_store() -> None:
    """Every write, copy and delete the seam makes (a rollback's too) is one call, in one
    function of the seam package."""
    modules = [*SEAM.glob("*.py"), SEAM.parent / "changes.py"]
    assert len(set().union(*(_store_changes(m) for m in modules))) == 1


class Journal:
    """A plugin and a backend writing one journal: each intent with the precondition it
    decided, then each change of the store with its precondition and on whose behalf it
    is made."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.entries: list[tuple[str, str, Any, str | None]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    @hookimpl(trylast=True)
    def fs_write_intent(self, event: WriteIntent) -> None:
        self.entries.append(("intent", event.key, event.precondition, None))

    @hookimpl(trylast=True)
    def fs_edit_intent(self, event: EditIntent) -> None:
        self.entries.append(("intent", event.key, event.precondition, None))

    @hookimpl(trylast=True)
    def fs_delete_intent(self, event: DeleteIntent) -> None:
        self.entries.append(("intent", event.key, event.precondition, None))
        if event.destination is not None:
            self.entries.append(("intent", event.destination.lstrip("/"), None, None))

    @hookimpl(trylast=True)
    def fs_undo_intent(self, event: UndoIntent) -> None:
        after = None if event.after is None else IfMatch(event.after)
        self.entries.append(("intent", event.key, after, None))

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        self.entries.append(("write", key, precondition, None if meta is None else meta.owner))
        version: Version = self._inner.write(key, data, precondition, meta=meta)
        return version

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        self.entries.append(("delete", key, precondition,
                             None if meta is None else meta.owner))
        self._inner.delete(key, precondition, meta=meta)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        self.entries.append(("copy", dst, source, None))
        version: Version = self._inner.copy(src, dst, source)
        return version


def test_every_change_asks_the_gate_and_carries_its_precondition(tmp_path: Path) -> None:
    """Each operation asks the gate about every file before the store is changed, and
    every change of the store is conditional: the precondition the gate decided (a move's
    copy and delete both under the source's), or create-only; the owner's (or, for a
    write back, the first author's) on whose behalf."""
    journal = Journal(None)
    ws = Workspace(str(tmp_path), history=History(), plugins=[journal])
    ctx = ws.context("alice")
    journal._inner = ws.backend
    ctx.fs.backend = journal
    fs = ctx.fs
    operations: list[tuple[str, Any]] = [
        ("write", lambda: fs.write("a.txt", "one\n")),
        ("replace", lambda: fs.replace("a.txt", "one", "two")),
        ("insert", lambda: fs.insert("a.txt", 0, "zero\n")),
        ("undo", lambda: fs.undo("a.txt")),
        ("restore", lambda: fs.restore("a.txt", fs.history("a.txt").entries[-1].id)),
        ("create", lambda: fs.create("b.txt", "bee\n")),
        ("change", lambda: fs.change([Create("c.txt", "sea\n"),
                                      Update("b.txt", edit=_upper)])),
        ("move", lambda: fs.move("c.txt", "d.txt")),
        ("delete", lambda: fs.delete("d.txt")),
        ("undo create", lambda: fs.undo("b.txt")),
        ("change delete", lambda: fs.change([Delete("b.txt")])),
    ]
    made: Counter[str] = Counter()
    for name, operation in operations:
        journal.entries.clear()
        operation()
        asked: dict[str, Any] = {}
        changes = 0
        for what, key, pre, owner in journal.entries:
            if what == "intent":
                asked.setdefault(key, pre)
                continue
            changes += 1
            made[what] += 1
            assert key in asked, (name, what, key)
            assert isinstance(pre, (IfMatch, CreateOnly)), (name, what, key, pre)
            if what != "copy":
                assert owner == "alice", (name, what, key, owner)
        assert changes, name
        decided = [p for p in asked.values() if isinstance(p, IfMatch)]
        for what, _, pre, _ in journal.entries:
            if what != "intent" and isinstance(pre, IfMatch):
                assert pre in decided, (name, what, pre)
    assert set(made) == {"write", "delete", "copy"}
    assert made["copy"] == 1


class Landing(Recording):
    """A recording backend whose first write lands and then fails (a lost answer), and
    whose ``fail_at``-th change is refused."""

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        version = super().write(key, data, precondition, meta=meta)
        if len(self.calls) == 1:
            raise RuntimeError("the answer was lost")
        return version


def test_a_step_found_done_after_all_is_undone_once(tmp_path: Path) -> None:
    """A step whose call failed but which landed counts as done; when a later step is
    refused, it is undone with the others, exactly once."""
    for name in ("b.txt", "c.txt"):
        (tmp_path / name).write_text(name + "\n")
    ws = Workspace(str(tmp_path))
    ctx = ws.context("alice")
    for name in ("b.txt", "c.txt"):
        assert ctx.tools.execute("read", {"file_path": name}).ok
    landing = Landing(ws.backend, fail_at=3)
    ctx.fs.backend = landing
    with pytest.raises(FsError) as failed:
        ctx.fs.change([Create("a.txt", "new\n"), Update("b.txt", edit=_upper),
                       Delete("c.txt")])
    assert failed.value.code is ErrorCode.FS_STALE
    assert [(w, k) for w, k, _ in landing.calls] == [
        ("write", "a.txt"), ("write", "b.txt"), ("delete", "c.txt"),
        ("write", "b.txt"), ("delete", "a.txt")]
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").read_text() == "b.txt\n"
