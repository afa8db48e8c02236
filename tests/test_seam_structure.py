"""The seam's shape: intents built in one place, the backend never probed by name, every
write and delete of a change (its rollback too) made on the owner's behalf without
wrapping the backend, and one function that changes the store, reached only through the
one pipeline."""

from __future__ import annotations

import ast
import sys
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, FsError, Workspace
from fsseam.backends.base import ANY_VERSION, WriteMeta
from fsseam.backends.history import History
from fsseam.changes import Create, Delete, Update
from fsseam.errors import Conflict
from fsseam.text import TextDoc, decode
from fsseam.versions import Precondition, Version

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


def test_the_seam_is_a_package_of_small_modules() -> None:
    modules = sorted(SEAM.glob("*.py"))
    assert len(modules) >= 8
    for m in modules:
        assert len(m.read_text().splitlines()) <= 400, m.name


def test_intents_are_built_only_by_the_one_builder() -> None:
    built = {
        (m.name, name, line) for m in SEAM.glob("*.py") for name, line in _calls(m)
        if name in INTENTS
    }
    assert built and {name for name, _, _ in built} == {"plans.py"}


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
    """Every write, copy and delete the seam makes (a rollback's too) is one call, in
    ``commit.perform``; only the pipeline (and the commit stage's rollback) calls it."""
    modules = [*SEAM.glob("*.py"), SEAM.parent / "changes.py"]
    assert set().union(*(_store_changes(m) for m in modules)) == {("commit.py", "perform")}
    callers = {m.name for m in modules for name, _ in _calls(m) if name == "perform"}
    assert callers == {"pipeline.py", "commit.py"}


def test_every_change_is_a_plan_run_by_the_pipeline() -> None:
    """The modules that change files hand a plan to ``pipeline.run``; none commits by
    itself."""
    running = {m.name for m in SEAM.glob("*.py") for name, _ in _calls(m) if name == "run"}
    assert running == {"writing.py", "changing.py", "managing.py", "history.py", "rawfile.py"}


class Changes:
    """A backend that forwards everything and records, for each change of the store,
    which function of the seam package made the call."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.callers: list[tuple[str, str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def _note(self, what: str) -> None:
        frame = sys._getframe(1)
        while frame is not None and not frame.f_globals["__name__"].startswith("fsseam.seam"):
            frame = frame.f_back  # type: ignore[assignment]
        self.callers.append((what, frame.f_code.co_name if frame is not None else ""))

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        self._note("write")
        version: Version = self._inner.write(key, data, precondition, meta=meta)
        return version

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        self._note("delete")
        self._inner.delete(key, precondition, meta=meta)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        self._note("copy")
        version: Version = self._inner.copy(src, dst, source)
        return version


def test_every_operation_changes_the_store_through_the_pipeline(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path), history=History())
    ctx = ws.context("alice")
    changes = Changes(ws.backend)
    ctx.fs.backend = changes
    fs = ctx.fs
    fs.write("a.txt", "one\n")
    fs.replace("a.txt", "one", "two")
    fs.insert("a.txt", 0, "zero\n")
    fs.undo("a.txt")
    fs.restore("a.txt", fs.history("a.txt").entries[-1].id)
    fs.create("b.txt", "bee\n")
    fs.change([Create("c.txt", "sea\n"), Update("b.txt", edit=_upper)])
    fs.move("c.txt", "d.txt")
    fs.delete("d.txt")
    fs.undo("b.txt")
    fs.change([Delete("b.txt")])
    made = {what for what, _ in changes.callers}
    assert made == {"write", "delete", "copy"}
    assert {caller for _, caller in changes.callers} == {"perform"}
    assert [what for what, _ in changes.callers].count("copy") == 1


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
