"""A call run again with its call id answers as its first run and changes nothing; another
id over the same change is another writer's.

Each case runs a change once with ``call_id="c1"``. Then, as a durable engine does after the
process died before the step's output was saved, the call runs again with the observations
the owner had before it (a framework's state as last saved): with the same id it answers as
the first run did and the store holds exactly what the first run left; with another id it is
refused (the change is someone else's now), the store again untouched. The same id in the
same context (the answer kept with its observations) answers the same too. Every tool that
changes files, on memory, local files, S3 (moto) and GCS (fake-gcs-server), and the change
methods of ``ctx.fs``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, History, Workspace
from fsseam.backends.base import Wrapper
from fsseam.observations import MemoryObservations
from fsseam.paths import reserved
from fsseam.versions import Precondition, Version

STORES = ["memory", "local", "s3", "gcs"]
OWNER = "agent"
PATCH = ("*** Begin Patch\n*** Update File: /n.txt\n@@\n one\n+added\n two\n"
         "*** Add File: /p.txt\n+new\n*** Delete File: /gone.txt\n*** End Patch")


def _open(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Workspace:
    if kind == "memory":
        return Workspace(f"memory://replay-{uuid.uuid4().hex}", {"global_store": False},
                         load_entry_points=False)
    if kind == "local":
        root = tmp_path / "root"
        root.mkdir(exist_ok=True)
        return Workspace(str(root))
    if kind == "gcs":
        endpoint, _ = request.getfixturevalue("fake_gcs")
        return Workspace(f"gs://{endpoint.create_bucket()}/r",
                         storage_options=endpoint.storage_options())
    moto = request.getfixturevalue("moto_s3")
    return Workspace(f"s3://{moto.create_bucket()}/r", storage_options=moto.storage_options())


@pytest.fixture(params=STORES)
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workspace]:
    yield _open(request.param, tmp_path, request)


def stored(ws: Workspace) -> dict[str, bytes]:
    """Every file and its bytes, read from the store itself (fsseam's own folders aside)."""
    backend = ws.backend
    return {e.key: backend.read(e.key).data for e in backend.walk("")
            if e.kind == "file" and not reserved(e.key)}


def kept(store: MemoryObservations) -> MemoryObservations:
    """A copy of what an owner had observed: the state a durable engine saved before the
    step (the step's own updates are lost with the process)."""
    return MemoryObservations(store.to_ledger().model_copy(deep=True))


@dataclass
class Case:
    name: str
    tool: str
    args: dict[str, Any]
    reads: tuple[str, ...] = ("/n.txt",)
    """What the agent read before the call."""
    other: frozenset[ErrorCode] = field(default_factory=lambda: frozenset({ErrorCode.FS_STALE}))
    """How the same change under another id is refused; empty for a create, which the
    file already holding exactly its bytes leaves with nothing lost and nothing written
    (whoever made it: a create counts nothing)."""
    before: Callable[[Any], None] | None = None
    """Run in the agent's context before the reads (an earlier change to undo)."""


def _edit_first(ctx: Any) -> None:
    ctx.tools.execute("read", {"file_path": "/n.txt"})
    res = ctx.tools.execute("edit", {"file_path": "/n.txt", "old_string": "one",
                                     "new_string": "uno"})
    assert res.ok, res.text


GONE = frozenset({ErrorCode.FS_NOT_FOUND})
EXISTS = frozenset({ErrorCode.FS_STALE})
CREATED: frozenset[ErrorCode] = frozenset()
CASES = [
    Case("write", "write", {"file_path": "/n.txt", "content": "whole\n"}),
    Case("write_new", "write", {"file_path": "/new.txt", "content": "fresh\n"},
         reads=("/new.txt",), other=EXISTS),
    Case("edit", "edit", {"file_path": "/n.txt", "old_string": "two",
                          "new_string": "two\nthree"}),
    Case("multi_edit", "multi_edit", {"file_path": "/n.txt", "edits": [
        {"old_string": "one", "new_string": "uno"},
        {"old_string": "two", "new_string": "two\ntwo"}]}),
    Case("insert", "str_replace_editor", {"command": "insert", "path": "/n.txt",
                                          "insert_line": 1, "new_str": "ins"}),
    Case("str_replace", "str_replace_editor", {"command": "str_replace", "path": "/n.txt",
                                               "old_str": "two", "new_str": "2"}),
    Case("editor_create", "str_replace_editor", {"command": "create", "path": "/c.txt",
                                                 "file_text": "made\n"},
         reads=("/c.txt",), other=CREATED),
    Case("apply_patch", "apply_patch", {"patch": PATCH}, reads=("/n.txt", "/gone.txt", "/p.txt"),
         other=frozenset({ErrorCode.FS_STALE, ErrorCode.FS_NOT_FOUND,
                          ErrorCode.FS_ALREADY_EXISTS})),
    Case("delete", "delete", {"file_path": "/n.txt"}, other=GONE),
    Case("move", "move", {"source_path": "/n.txt", "destination_path": "/m.txt"},
         reads=("/n.txt", "/m.txt"), other=GONE),
    Case("memory_create", "memory", {"command": "create", "path": "/memories/x.md",
                                     "file_text": "hi\n"},
         reads=("/memories/x.md",), other=CREATED),
    Case("memory_insert", "memory", {"command": "insert", "path": "/memories/m.md",
                                     "insert_line": 1, "insert_text": "added"},
         reads=("/memories/m.md",)),
    Case("memory_str_replace", "memory", {"command": "str_replace", "path": "/memories/m.md",
                                          "old_str": "second", "new_str": "2nd"},
         reads=("/memories/m.md",)),
    Case("memory_rename", "memory", {"command": "rename", "old_path": "/memories/m.md",
                                     "new_path": "/memories/r.md"},
         reads=("/memories/m.md", "/memories/r.md"), other=GONE),
    Case("memory_delete", "memory", {"command": "delete", "path": "/memories/m.md"},
         reads=("/memories/m.md",), other=GONE),
]


def _seed(ws: Workspace) -> None:
    seeder = ws.context("seeder")
    for path, text in (("/n.txt", "one\ntwo\n"), ("/gone.txt", "bye\n"),
                       ("/memories/m.md", "first\nsecond\n")):
        res = seeder.tools.execute("write", {"file_path": path, "content": text})
        assert res.ok, res.text


def _context(ws: Workspace, store: MemoryObservations) -> Any:
    return ws.context(OWNER, observations=store)


def _read(ctx: Any, paths: tuple[str, ...]) -> None:
    for path in paths:
        ctx.tools.execute("read", {"file_path": path})  # absent files: seen absent


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_a_call_run_again_with_its_id_answers_the_same_and_changes_nothing(
        ws: Workspace, case: Case) -> None:
    _seed(ws)
    store = MemoryObservations()
    ctx = _context(ws, store)
    if case.before is not None:
        case.before(ctx)
    _read(ctx, case.reads)
    saved = kept(store)
    first = ctx.tools.execute(case.tool, case.args, call_id="c1")
    assert first.ok, first.text
    after = stored(ws)
    assert after != {}

    # The process died before the answer reached the engine: the step runs again, with
    # the observations saved before it.
    again = _context(ws, kept(saved)).tools.execute(case.tool, case.args, call_id="c1")
    assert again.ok, again.text
    assert again.text == first.text
    assert stored(ws) == after

    # The same id where the answer was kept (this context's observations).
    third = _context(ws, store).tools.execute(case.tool, case.args, call_id="c1")
    assert (third.ok, third.text) == (True, first.text)
    assert stored(ws) == after

    # Another id over the same change: another writer's change, refused.
    other = _context(ws, kept(saved)).tools.execute(case.tool, case.args, call_id="c2")
    if case.other:
        assert not other.ok, other.text
        assert other.error is not None and other.error.code in case.other, other.text
    else:
        assert other.ok, other.text
    assert stored(ws) == after


def test_an_id_reused_for_another_call_is_refused(ws: Workspace) -> None:
    _seed(ws)
    ctx = _context(ws, MemoryObservations())
    _read(ctx, ("/n.txt",))
    first = ctx.tools.execute("edit", {"file_path": "/n.txt", "old_string": "one",
                                       "new_string": "uno"}, call_id="c1")
    assert first.ok, first.text
    before = stored(ws)
    res = ctx.tools.execute("edit", {"file_path": "/n.txt", "old_string": "two",
                                     "new_string": "dos"}, call_id="c1")
    assert not res.ok and res.error is not None
    assert res.error.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "call id 'c1' belongs to another call" in res.text
    assert stored(ws) == before


class _DiesOnWrite(Wrapper):
    """The process dies (an exception nothing catches) at the first write of a file: after
    the call's record, before its change."""

    def write(self, key: str, data: bytes, precondition: Precondition, **kw: Any) -> Version:
        if not reserved(key):
            raise SystemExit("killed")
        return self.inner.write(key, data, precondition, **kw)


def test_a_call_killed_before_its_change_makes_it_once_when_run_again(
        ws: Workspace) -> None:
    _seed(ws)
    store = MemoryObservations()
    ctx = _context(ws, store)
    _read(ctx, ("/n.txt",))
    saved = kept(store)
    args = {"command": "insert", "path": "/n.txt", "insert_line": 1, "new_str": "ins"}
    dying = _context(ws, kept(saved))
    dying.fs.backend = _DiesOnWrite(ws.backend)
    with pytest.raises(SystemExit):
        dying.tools.execute("str_replace_editor", args, call_id="c1")
    assert stored(ws)["n.txt"] == b"one\ntwo\n"
    again = _context(ws, kept(saved)).tools.execute("str_replace_editor", args, call_id="c1")
    assert again.ok, again.text
    assert stored(ws)["n.txt"] == b"one\ninstwo\n"
    once_more = _context(ws, kept(saved)).tools.execute("str_replace_editor", args,
                                                        call_id="c1")
    assert once_more.text == again.text
    assert stored(ws)["n.txt"] == b"one\ninstwo\n"


def test_ctx_fs_changes_take_a_call_id(ws: Workspace) -> None:
    _seed(ws)
    store = MemoryObservations()
    ctx = _context(ws, store)
    ctx.fs.read("/n.txt")
    saved = kept(store)
    first = ctx.fs.insert("/n.txt", 2, "end\n", call_id="i1")
    again = _context(ws, kept(saved)).fs.insert("/n.txt", 2, "end\n", call_id="i1")
    assert again.version == first.version
    assert again.snippet == first.snippet
    assert stored(ws)["n.txt"] == b"one\ntwo\nend\n"
    moved = _context(ws, store).fs.move("/n.txt", "/m.txt", call_id="m1")
    assert _context(ws, store).fs.move("/n.txt", "/m.txt", call_id="m1") == moved
    assert stored(ws) == {"gone.txt": b"bye\n", "memories/m.md": b"first\nsecond\n",
                          "m.txt": b"one\ntwo\nend\n"}


def test_a_change_with_an_id_costs_one_request_more(moto_s3: Any) -> None:
    """The call record is the one extra request of a change with an id (S3, counted at the
    server); its answer goes with the observations, kept in process here."""
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/r", storage_options=moto_s3.storage_options())
    _seed(ws)
    counts = []
    for call_id in (None, "c1"):
        ctx = _context(ws, MemoryObservations())
        ctx.tools.execute("read", {"file_path": "/n.txt"})
        moto_s3.log.clear()
        res = ctx.tools.execute("edit", {"file_path": "/n.txt", "old_string": "two",
                                         "new_string": f"two {call_id}"}, call_id=call_id)
        assert res.ok, res.text
        counts.append(sum(moto_s3.log.counts(bucket).values()))
    assert counts[1] == counts[0] + 1, counts


@pytest.fixture(params=["memory", "local"])
def history_ws(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    if request.param == "memory":
        return Workspace(f"memory://replay-h-{uuid.uuid4().hex}", {"global_store": False},
                         history=History(), load_entry_points=False)
    root = tmp_path / "root"
    root.mkdir()
    return Workspace(str(root), history=History(path=str(tmp_path / "kept")),
                     load_entry_points=False)


@pytest.mark.parametrize("how", ["undo_edit", "restore"])
def test_undo_and_restore_run_again_with_their_id_answer_the_same(
        history_ws: Workspace, how: str) -> None:
    ws = history_ws
    _seed(ws)
    store = MemoryObservations()
    ctx = _context(ws, store)
    _edit_first(ctx)  # n.txt: uno, two
    if how == "undo_edit":
        tool, args = "str_replace_editor", {"command": "undo_edit", "path": "/n.txt"}
    else:
        first_version = ctx.fs.history("/n.txt").entries[-1].id
        tool, args = "restore", {"file_path": "/n.txt", "version": first_version}
    ctx.tools.execute("read", {"file_path": "/n.txt"})
    saved = kept(store)
    first = ctx.tools.execute(tool, args, call_id="u1")
    assert first.ok, first.text
    assert stored(ws)["n.txt"] == b"one\ntwo\n"
    again = _context(ws, kept(saved)).tools.execute(tool, args, call_id="u1")
    assert (again.ok, again.text) == (True, first.text)
    assert stored(ws)["n.txt"] == b"one\ntwo\n"
    other = _context(ws, kept(saved)).tools.execute(tool, args, call_id="u2")
    assert not other.ok, other.text
    assert stored(ws)["n.txt"] == b"one\ntwo\n"


def _mem() -> Any:
    return Workspace(f"memory://replay-m-{uuid.uuid4().hex}", {"global_store": False},
                     load_entry_points=False).backend


@pytest.mark.parametrize("root", [True, False], ids=["root-mount", "no-root-mount"])
def test_under_mounts_a_call_runs_once(root: bool) -> None:
    """With a writable "/" mount the records live there; without one, the answer kept
    with the observations still makes a call run again in the same context answer once
    (a new process cannot tell: docs/durable.md)."""
    table = {"/data": _mem(), **({"/": _mem()} if root else {})}
    ws = Workspace.mount(table)
    store = MemoryObservations()
    ctx = _context(ws, store)
    assert ctx.tools.execute("write", {"file_path": "/data/x.txt", "content": "x\n"}).ok
    ctx.tools.execute("read", {"file_path": "/data/x.txt"})
    saved = kept(store)
    args = {"command": "insert", "path": "/data/x.txt", "insert_line": 1, "new_str": "y\n"}
    first = ctx.tools.execute("str_replace_editor", args, call_id="i1")
    again = ctx.tools.execute("str_replace_editor", args, call_id="i1")
    assert first.ok and again.text == first.text
    assert ws.backend.read("data/x.txt").data == b"x\ny\n"
    lost = _context(ws, kept(saved)).tools.execute("str_replace_editor", args, call_id="i1")
    if root:
        assert lost.text == first.text
        assert [e.key.split("/")[0] for e in table["/"].walk("")] == [".fsseam-calls"]
    else:
        assert not lost.ok  # its record had no place: refused as a change made since
    assert ws.backend.read("data/x.txt").data == b"x\ny\n"


def test_collect_removes_expired_call_records_and_keeps_the_rest(ws: Workspace) -> None:
    from fsseam.observations.calls import CALLS_FOLDER, CallRecord
    from fsseam.versions import IfMatch

    _seed(ws)
    ctx = _context(ws, MemoryObservations())
    ctx.tools.execute("read", {"file_path": "/n.txt"})
    for n in (1, 2):
        assert ctx.tools.execute("edit", {"file_path": "/n.txt", "old_string": "two",
                                          "new_string": f"two{n}"}, call_id=f"e{n}").ok
    records = [e.key for e in ws.backend.list(CALLS_FOLDER)]
    assert len(records) == 2
    old = ws.backend.read(records[0])
    aged = CallRecord.model_validate_json(old.data).model_copy(update={"at": 1.0})
    ws.backend.write(records[0], aged.model_dump_json().encode(), IfMatch(old.version))
    assert ws.collect().expired_calls == 1
    assert [e.key for e in ws.backend.list(CALLS_FOLDER)] == records[1:]


def test_a_call_on_a_branch_runs_once(ws: Workspace) -> None:
    """On a branch the record is kept in main's store (never a file of the branch) and a
    call run again with its id changes the branch once."""
    _seed(ws)
    branch = ws.branch("feat")
    store = MemoryObservations()
    ctx = branch.context(OWNER, observations=store)
    ctx.tools.execute("read", {"file_path": "/n.txt"})
    saved = kept(store)
    args = {"command": "insert", "path": "/n.txt", "insert_line": 1, "new_str": "y\n"}
    first = ctx.tools.execute("str_replace_editor", args, call_id="b1")
    again = branch.context(OWNER, observations=kept(saved)).tools.execute(
        "str_replace_editor", args, call_id="b1")
    assert first.ok and (again.ok, again.text) == (True, first.text)
    assert branch.context("reader").fs.read("/n.txt").lines == ["one", "y", "two"]
    assert stored(ws)["n.txt"] == b"one\ntwo\n"  # main untouched
    assert ws.diff("feat").text.count("+y") == 1
