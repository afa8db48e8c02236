"""The fs/* event gate: exact event sequences, vetoes, preconditions set by plugins,
policy=False and read_only (docs/concepts.md, "The observation policy")."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from fsseam import (
    CreateOnly,
    EditIntent,
    ErrorCode,
    FsError,
    IfMatch,
    MissingEvent,
    Overwrite,
    ReadEvent,
    Workspace,
    WriteIntent,
    WrittenEvent,
    hookimpl,
)


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    @property
    def names(self) -> list[str]:
        return [e[0] for e in self.events]

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        self.events.append((event.name, event.path, event.owner, event.key, event.version,
                            event.partial))

    @hookimpl
    def fs_missing(self, event: MissingEvent) -> None:
        self.events.append((event.name, event.path, event.owner, event.key))

    @hookimpl
    def fs_write_intent(self, event: WriteIntent) -> None:
        self.events.append((event.name, event.path, event.operation, event.precondition,
                            event.size, event.conflict_code))

    @hookimpl
    def fs_edit_intent(self, event: EditIntent) -> None:
        self.events.append((event.name, event.path, event.operation, event.precondition,
                            event.current))

    @hookimpl
    def fs_written(self, event: WrittenEvent) -> None:
        self.events.append((event.name, event.path, event.operation, event.created,
                            event.version, event.diff))


class Store:
    """A workspace of either kind with raw access to the stored bytes."""

    def __init__(self, kind: str, tmp: Path, **kw: Any) -> None:
        self.kind = kind
        if kind == "memory":
            self.ws = Workspace(f"memory://ev-{uuid.uuid4().hex}", load_entry_points=False, **kw)
        else:
            d = tmp / "root"
            d.mkdir()
            self.dir = d
            self.ws = Workspace(str(d), load_entry_points=False, **kw)

    def put(self, key: str, data: bytes) -> None:
        if self.kind == "memory":
            self.ws.backend.fs.pipe_file(self.ws.backend.path(key), data)  # type: ignore[attr-defined]
        else:
            p = self.dir / key
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)

    def get(self, key: str) -> bytes | None:
        if self.kind == "memory":
            fs = self.ws.backend.fs  # type: ignore[attr-defined]
            path = self.ws.backend.path(key)  # type: ignore[attr-defined]
            return bytes(fs.cat_file(path)) if fs.exists(path) else None
        p = self.dir / key
        return p.read_bytes() if p.exists() else None


@pytest.fixture(params=["memory", "local"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make(kind: str, tmp: Path, *plugins: Any, **kw: Any) -> tuple[Store, Recorder]:
    rec = Recorder()
    # pluggy calls later registrations first: the recorder, registered first, sees the
    # event after every other plugin has set it.
    return Store(kind, tmp, plugins=[rec, *plugins], **kw), rec


# -- sequences ----------------------------------------------------------------------
def test_read_emits_one_read_event(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    s.put("n.md", b"one\ntwo\n")
    out = s.ws.context(owner="a").fs.read("/n.md")
    assert rec.events == [("fs/read", "/n.md", "a", "n.md", out.version, False)]


def test_windowed_read_is_a_partial_read_event(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    s.put("n.md", b"one\ntwo\n")
    res = s.ws.context(owner="a").tools.execute(
        "read", {"file_path": "n.md", "offset": 2, "limit": 1}
    )
    assert res.ok
    assert rec.events == [("fs/read", "/n.md", "a", "n.md", res.value.version, True)]


def test_read_of_missing_emits_missing(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    res = s.ws.context(owner="a").tools.execute("read", {"file_path": "/d/nope.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
    assert rec.events == [("fs/missing", "/d/nope.txt", "a", "d/nope.txt")]


def test_failed_reads_emit_nothing(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    s.put("bin", b"\x00\x01")
    s.put("d/x", b"x")
    ctx = s.ws.context(owner="a")
    for args in ({"file_path": "/bin"}, {"file_path": "/d"}, {"file_path": "/../x"}):
        assert not ctx.tools.execute("read", args).ok
    assert rec.events == []


def test_write_of_new_file(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    res = s.ws.context(owner="a").tools.execute(
        "write", {"file_path": "/new.txt", "content": "hello\nworld\n"}
    )
    assert res.ok, res.text
    assert rec.names == ["fs/write-intent", "fs/written"]
    intent, written = rec.events
    assert intent == ("fs/write-intent", "/new.txt", "write", CreateOnly(), 12,
                      ErrorCode.FS_NOT_OBSERVED)
    assert written[:4] == ("fs/written", "/new.txt", "write", True)
    assert written[4] == res.value.version
    diff = written[5]
    assert diff is not None
    assert "+hello\n" in diff and "+world\n" in diff
    assert "--- a/new.txt" in diff and "+++ b/new.txt" in diff
    assert s.get("new.txt") == b"hello\nworld\n"


def test_write_over_a_read_file(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    s.put("f.txt", b"old\n")
    ctx = s.ws.context(owner="a")
    v = ctx.fs.read("/f.txt").version
    res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "new\n"})
    assert res.ok, res.text
    assert rec.names == ["fs/read", "fs/write-intent", "fs/written"]
    assert rec.events[1][3] == IfMatch(v)
    assert rec.events[1][5] is ErrorCode.FS_STALE
    assert rec.events[2][3] is False
    diff = rec.events[2][5]
    assert "-old\n" in diff and "+new\n" in diff


def test_edit_sequence_and_diff(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    s.put("f.py", b"a = 1\r\nb = 2\r\nc = 3\r\n")
    ctx = s.ws.context(owner="a")
    v = ctx.fs.read("/f.py").version
    rec.events.clear()
    res = ctx.tools.execute("edit", {"file_path": "/f.py", "old_string": "b = 2",
                                     "new_string": "b = 20\nb2 = 21"})
    assert res.ok, res.text
    assert rec.names == ["fs/edit-intent", "fs/written"]
    intent, written = rec.events
    assert intent == ("fs/edit-intent", "/f.py", "replace", IfMatch(v), v)
    assert written[:4] == ("fs/written", "/f.py", "replace", False)
    assert written[4] == res.value.version != v
    diff = written[5]
    assert diff == res.value.diff
    assert diff.splitlines() == [
        "--- a/f.py",
        "+++ b/f.py",
        "@@ -1,3 +1,4 @@",
        " a = 1",
        "-b = 2",
        "+b = 20",
        "+b2 = 21",
        " c = 3",
    ]
    assert s.get("f.py") == b"a = 1\r\nb = 20\r\nb2 = 21\r\nc = 3\r\n"


def test_insert_and_editor_commands_emit_edit_events(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    s.put("f.txt", b"x\n")
    ctx = s.ws.context(owner="a")
    assert ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/f.txt"}).ok
    assert ctx.tools.execute(
        "str_replace_editor", {"command": "insert", "path": "/f.txt", "insert_line": 1,
                               "new_str": "y\n"}).ok
    assert ctx.tools.execute(
        "str_replace_editor", {"command": "create", "path": "/g.txt", "file_text": "g"}).ok
    assert rec.names == ["fs/read", "fs/edit-intent", "fs/written", "fs/write-intent",
                         "fs/written"]
    assert rec.events[1][2] == "insert"
    assert rec.events[2][2] == "insert"
    assert rec.events[3][2:4] == ("create", CreateOnly())
    assert rec.events[4][2:4] == ("create", True)
    assert "+y\n" in rec.events[2][5]
    assert s.get("f.txt") == b"x\ny\n"


def test_edit_of_missing_emits_missing_only(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    ctx = s.ws.context(owner="a")
    res = ctx.tools.execute("edit", {"file_path": "/gone.txt", "old_string": "a",
                                     "new_string": "b"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
    res2 = ctx.tools.execute("str_replace_editor", {"command": "insert", "path": "gone.txt",
                                                    "insert_line": 0, "new_str": "b"})
    assert res2.error is not None and res2.error.code is ErrorCode.FS_NOT_FOUND
    assert rec.events == [("fs/missing", "/gone.txt", "a", "gone.txt")] * 2
    assert s.get("gone.txt") is None


def test_failed_edits_emit_no_written(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path)
    s.put("f.txt", b"aa\n")
    ctx = s.ws.context(owner="a")
    ctx.fs.read("/f.txt")
    rec.events.clear()
    for old, code in (("zz", ErrorCode.FS_NO_MATCH), ("a", ErrorCode.FS_MULTIPLE_MATCHES)):
        res = ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": old,
                                         "new_string": "b"})
        assert res.error is not None and res.error.code is code
    assert "fs/written" not in rec.names
    assert s.get("f.txt") == b"aa\n"


# -- vetoes -------------------------------------------------------------------------
class Veto:
    def __init__(self) -> None:
        self.calls = 0

    @hookimpl
    def fs_write_intent(self, event: WriteIntent) -> None:
        self.calls += 1
        raise FsError(ErrorCode.FS_PERMISSION_DENIED, f"{event.path}: writes are vetoed.")

    @hookimpl
    def fs_edit_intent(self, event: EditIntent) -> None:
        self.calls += 1
        raise FsError(ErrorCode.FS_PERMISSION_DENIED, f"{event.path}: edits are vetoed.")


@pytest.mark.parametrize("policy", [True, False])
def test_veto_stops_every_mutation(kind: str, tmp_path: Path, policy: bool) -> None:
    veto = Veto()
    s, rec = make(kind, tmp_path, veto, policy=policy)
    s.put("f.txt", b"keep\r\nme\n")
    ctx = s.ws.context(owner="a")
    assert ctx.tools.execute("read", {"file_path": "/f.txt"}).ok
    calls: list[tuple[str, dict[str, Any]]] = [
        ("write", {"file_path": "/f.txt", "content": "x"}),
        ("write", {"file_path": "/new.txt", "content": "x"}),
        ("edit", {"file_path": "/f.txt", "old_string": "keep", "new_string": "x"}),
        ("str_replace_editor", {"command": "create", "path": "/new2.txt", "file_text": "x"}),
        ("str_replace_editor",
         {"command": "str_replace", "path": "/f.txt", "old_str": "me", "new_str": "x"}),
        ("str_replace_editor",
         {"command": "insert", "path": "/f.txt", "insert_line": 0, "new_str": "x"}),
    ]
    for name, args in calls:
        res = ctx.tools.execute(name, args)
        assert not res.ok and res.error is not None, (name, args)
        assert res.error.code is ErrorCode.FS_PERMISSION_DENIED, (name, res.text)
        assert "vetoed" in res.error.message
    assert veto.calls == len(calls)
    assert "fs/written" not in rec.names
    assert s.get("f.txt") == b"keep\r\nme\n"
    assert s.get("new.txt") is None and s.get("new2.txt") is None
    # the veto did not poison the ledger: the observed version still authorizes an edit
    s.ws.gate.pm.unregister(veto)
    res = ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": "keep",
                                     "new_string": "kept"})
    assert res.ok, res.text
    assert s.get("f.txt") == b"kept\r\nme\n"


# -- plugins set the precondition ------------------------------------------------------
class ForceCreateOnly:
    @hookimpl
    def fs_write_intent(self, event: WriteIntent) -> None:
        event.precondition = CreateOnly()


class ForceOverwrite:
    @hookimpl
    def fs_write_intent(self, event: WriteIntent) -> None:
        event.precondition = Overwrite()


def test_plugin_forcing_create_only_is_honoured(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path, ForceCreateOnly(), policy=False)
    s.put("f.txt", b"orig\n")
    ctx = s.ws.context(owner="a")
    res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "x"})
    assert res.error is not None and res.error.code is ErrorCode.FS_ALREADY_EXISTS
    assert rec.events[-1][3] == CreateOnly()
    assert s.get("f.txt") == b"orig\n"
    res = ctx.tools.execute("write", {"file_path": "/g.txt", "content": "g\n"})
    assert res.ok, res.text
    assert s.get("g.txt") == b"g\n"


def test_plugin_forcing_create_only_over_the_policy_is_honoured(
    kind: str, tmp_path: Path
) -> None:
    s, rec = make(kind, tmp_path, ForceCreateOnly())
    s.put("f.txt", b"orig\n")
    ctx = s.ws.context(owner="a")
    ctx.fs.read("/f.txt")  # the policy alone would allow IfMatch(V)
    res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "x"})
    assert not res.ok and res.error is not None
    assert rec.events[-1][3] == CreateOnly()
    assert s.get("f.txt") == b"orig\n"


def test_plugin_forcing_overwrite_over_the_policy_is_honoured(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path, ForceOverwrite())
    s.put("f.txt", b"orig\r\n")
    ctx = s.ws.context(owner="a")
    res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "x\ny\n"})
    assert res.ok, res.text  # no read, yet the plugin's Overwrite decides
    assert rec.events[0][3] == Overwrite()
    assert s.get("f.txt") == b"x\r\ny\r\n"


def test_plugin_setting_an_edit_precondition_is_honoured(kind: str, tmp_path: Path) -> None:
    class PinToOld:
        def __init__(self) -> None:
            self.version: Any = None

        @hookimpl
        def fs_edit_intent(self, event: EditIntent) -> None:
            event.precondition = IfMatch(self.version)

    pin = PinToOld()
    s, rec = make(kind, tmp_path, pin, policy=False)
    s.put("f.txt", b"one\n")
    ctx = s.ws.context(owner="a")
    pin.version = ctx.fs.read("/f.txt").version
    s.put("f.txt", b"two\n")
    res = ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": "two",
                                     "new_string": "three"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert s.get("f.txt") == b"two\n"
    assert "fs/written" not in rec.names


# -- policy=False ----------------------------------------------------------------------
def test_without_policy_write_is_bare_overwrite(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path, policy=False)
    s.put("f.txt", b"\xef\xbb\xbfold\r\n")
    ctx = s.ws.context(owner="a")
    res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "new\nlines\n"})
    assert res.ok, res.text
    assert rec.events[0][:4] == ("fs/write-intent", "/f.txt", "write", Overwrite())
    assert rec.events[1][:4] == ("fs/written", "/f.txt", "write", False)
    assert s.get("f.txt") == b"\xef\xbb\xbfnew\r\nlines\r\n"
    res = ctx.tools.execute("write", {"file_path": "/n.txt", "content": "n"})
    assert res.ok and res.value.created
    assert rec.events[-1][:4] == ("fs/written", "/n.txt", "write", True)


def test_without_policy_edit_needs_no_read(kind: str, tmp_path: Path) -> None:
    s, rec = make(kind, tmp_path, policy=False)
    s.put("f.txt", b"abc\n")
    ctx = s.ws.context(owner="a")
    res = ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": "b",
                                     "new_string": "B"})
    assert res.ok, res.text
    assert s.get("f.txt") == b"aBc\n"
    assert rec.names == ["fs/edit-intent", "fs/written"]
    assert rec.events[0][3] == IfMatch(rec.events[0][4])


def test_without_policy_edit_is_if_match_on_the_version_it_read(
    kind: str, tmp_path: Path
) -> None:
    store: list[Store] = []

    class ConcurrentWriter:
        """Changes the file after the edit read it and before it is written."""

        @hookimpl
        def fs_edit_intent(self, event: EditIntent) -> None:
            store[0].put("f.txt", b"abc\nconcurrent\n")

    s, rec = make(kind, tmp_path, ConcurrentWriter(), policy=False)
    store.append(s)
    s.put("f.txt", b"abc\n")
    ctx = s.ws.context(owner="a")
    res = ctx.tools.execute("edit", {"file_path": "/f.txt", "old_string": "b",
                                     "new_string": "B"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert s.get("f.txt") == b"abc\nconcurrent\n"  # the concurrent update was not lost
    # The refusal shows the whole change ("+concurrent"), which counts as a read of the
    # current version: the one event after the intent is that observation.
    assert "+concurrent" in res.text
    assert rec.names == ["fs/edit-intent", "fs/read"]
    assert isinstance(rec.events[0][3], IfMatch)
    assert rec.events[0][3].version == rec.events[0][4]


# -- read_only -------------------------------------------------------------------------
@pytest.mark.parametrize("policy", [True, False])
def test_read_only_refuses_every_mutation(kind: str, tmp_path: Path, policy: bool) -> None:
    s, rec = make(kind, tmp_path, read_only=True, policy=policy)
    s.put("f.txt", b"ro\r\ndata\n")
    ctx = s.ws.context(owner="a")
    assert ctx.tools.execute("read", {"file_path": "/f.txt"}).ok
    calls: list[tuple[str, dict[str, Any]]] = [
        ("write", {"file_path": "/f.txt", "content": "x"}),
        ("write", {"file_path": "/new.txt", "content": "x"}),
        ("edit", {"file_path": "/f.txt", "old_string": "ro", "new_string": "x"}),
        ("edit", {"file_path": "/missing.txt", "old_string": "ro", "new_string": "x"}),
        ("str_replace_editor", {"command": "create", "path": "/new2.txt", "file_text": "x"}),
        ("str_replace_editor",
         {"command": "str_replace", "path": "/f.txt", "old_str": "data", "new_str": "x"}),
        ("str_replace_editor",
         {"command": "insert", "path": "/f.txt", "insert_line": 0, "new_str": "x"}),
    ]
    for name, args in calls:
        res = ctx.tools.execute(name, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_READ_ONLY, (name, res.text)
    for call in (
        lambda: ctx.fs.write("/f.txt", "x"),
        lambda: ctx.fs.create("/c.txt", "x"),
        lambda: ctx.fs.replace("/f.txt", "ro", "x"),
        lambda: ctx.fs.insert("/f.txt", 1, "x"),
    ):
        with pytest.raises(FsError) as info:
            call()
        assert info.value.code is ErrorCode.FS_READ_ONLY
    assert rec.names == ["fs/read"]
    assert s.get("f.txt") == b"ro\r\ndata\n"
    assert s.get("new.txt") is None and s.get("new2.txt") is None and s.get("c.txt") is None


def test_a_missing_bucket_is_not_reported_as_a_missing_file() -> None:
    """FS_NOT_FOUND with reason "bucket_missing" passes through the seam as the backend said
    it: no "or create the file", and no absence recorded (a write would fail the same way)."""
    rec = Recorder()
    ws = Workspace("memory://b", {"global_store": False}, plugins=[rec], load_entry_points=False)
    said = FsError(
        ErrorCode.FS_NOT_FOUND,
        "the bucket nope does not exist; create it or fix the workspace URL.",
        path="a.md",
        reason="bucket_missing",
    )

    def gone(key: str, chunk_size: int = 0) -> Any:
        raise said

    ws.backend.open_read = gone  # type: ignore[method-assign]
    res = ws.context("a").tools.execute("read", {"file_path": "/a.md"})
    assert res.text == (
        "Error [FS_NOT_FOUND]: the bucket nope does not exist; create it or fix the workspace "
        "URL."
    )
    assert rec.names == []
    plain = ws.context("a").fs.not_found("a.md", FsError(ErrorCode.FS_NOT_FOUND, "gone"))
    assert plain.message.endswith("or create the file.")
