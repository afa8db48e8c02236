"""Every observation-policy rule and error code, table-driven, with the bytes after each call.

Each row sets up a file state, lets some owners act, then makes one tool call and checks
the outcome code and the exact bytes at the path afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, Workspace

from .helpers import raw

Step = tuple[str, str, dict[str, Any]]  # (owner, tool, args)


@dataclass
class Row:
    id: str
    initial: bytes | None
    before: list[Step]
    call: Step
    code: ErrorCode | None  # None = success
    after: bytes | None
    external: Callable[[Workspace], None] | None = None  # runs after `before`
    policy: bool = True
    read_only: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


P = "/f.txt"


def _ext_write(data: bytes) -> Callable[[Workspace], None]:
    def run(ws: Workspace) -> None:
        from fsseam import Overwrite

        ws.backend.write("f.txt", data, Overwrite())

    return run


def _ext_delete(ws: Workspace) -> None:
    ws.backend.delete("f.txt")


READ = ("a", "read", {"file_path": P})
B_READ = ("b", "read", {"file_path": P})
VIEW = ("a", "str_replace_editor", {"command": "view", "path": P})


def edit(old: str, new: str, owner: str = "a") -> Step:
    return (owner, "edit", {"file_path": P, "old_string": old, "new_string": new})


def write(content: str, owner: str = "a") -> Step:
    return (owner, "write", {"file_path": P, "content": content})


def sr(old: str, new: str) -> Step:
    return ("a", "str_replace_editor", {"command": "str_replace", "path": P, "old_str": old,
                                        "new_str": new})


def ins(line: int, text: str) -> Step:
    return ("a", "str_replace_editor", {"command": "insert", "path": P, "insert_line": line,
                                        "new_str": text})


def create(text: str) -> Step:
    return ("a", "str_replace_editor", {"command": "create", "path": P, "file_text": text})


ROWS = [
    # write
    Row("write-new-needs-no-read", None, [], write("new\n"), None, b"new\n"),
    Row("write-existing-unread", b"old\n", [], write("new\n"), ErrorCode.FS_NOT_OBSERVED,
        b"old\n"),
    Row("write-after-read", b"old\n", [READ], write("new\n"), None, b"new\n"),
    Row("write-after-windowed-read", b"1\n2\n3\n", [("a", "read", {"file_path": P, "offset": 2,
        "limit": 1})], write("x\n"), None, b"x\n"),
    Row("write-after-view", b"old\n", [VIEW], write("new\n"), None, b"new\n"),
    Row("write-stale", b"old\n", [READ], write("new\n"), ErrorCode.FS_STALE, b"theirs\n",
        external=_ext_write(b"theirs\n")),
    Row("write-after-other-owner-wrote", b"old\n", [READ, B_READ, write("b\n", "b")],
        write("a\n"), ErrorCode.FS_STALE, b"b\n"),
    Row("write-after-own-write", b"old\n", [READ, write("one\n")], write("two\n"), None,
        b"two\n"),
    Row("write-after-own-edit", b"old\n", [READ, edit("old", "mid")], write("two\n"), None,
        b"two\n"),
    Row("write-after-missing-then-created", None, [READ], write("mine\n"), ErrorCode.FS_STALE,
        b"theirs\n", external=_ext_write(b"theirs\n")),
    Row("write-after-missing", None, [READ], write("mine\n"), None, b"mine\n"),
    Row("write-after-read-then-deleted", b"old\n", [READ], write("new\n"), ErrorCode.FS_STALE,
        None, external=_ext_delete),
    Row("write-recreate-after-missing-seen", b"old\n", [READ, ("a", "read", {"file_path": P})],
        write("new\n"), ErrorCode.FS_STALE, None, external=_ext_delete),
    # edit
    Row("edit-unread", b"old\n", [], edit("old", "new"), ErrorCode.FS_NOT_OBSERVED, b"old\n"),
    Row("edit-after-read", b"old\n", [READ], edit("old", "new"), None, b"new\n"),
    Row("edit-stale", b"old\n", [READ], edit("old", "new"), ErrorCode.FS_STALE, b"old2\n",
        external=_ext_write(b"old2\n")),
    Row("edit-after-own-edit", b"a b\n", [READ, edit("a", "A")], edit("b", "B"), None,
        b"A B\n"),
    Row("edit-missing", None, [], edit("x", "y"), ErrorCode.FS_NOT_FOUND, None),
    Row("edit-after-read-then-deleted", b"old\n", [READ], edit("old", "new"),
        ErrorCode.FS_NOT_FOUND, None, external=_ext_delete),
    Row("edit-absence-never-authorizes", None, [READ], edit("x", "y"), ErrorCode.FS_STALE,
        b"x\n", external=_ext_write(b"x\n")),
    Row("edit-no-match", b"old\n", [READ], edit("zzz", "y"), ErrorCode.FS_NO_MATCH, b"old\n"),
    Row("edit-multiple", b"x x\n", [READ], edit("x", "y"), ErrorCode.FS_MULTIPLE_MATCHES,
        b"x x\n"),
    Row("edit-replace-all", b"x x\n", [READ], ("a", "edit", {"file_path": P, "old_string": "x",
        "new_string": "y", "replace_all": True}), None, b"y y\n"),
    Row("edit-identical", b"old\n", [READ], edit("old", "old"), ErrorCode.FS_INVALID_ARGUMENT,
        b"old\n"),
    Row("edit-empty-old", b"old\n", [READ], edit("", "x"), ErrorCode.FS_INVALID_ARGUMENT,
        b"old\n"),
    Row("edit-directory", None, [], ("a", "edit", {"file_path": "/d", "old_string": "a",
        "new_string": "b"}), ErrorCode.FS_IS_DIRECTORY, None,
        external=lambda ws: _mkdir(ws)),
    Row("edit-binary", b"\x00\x01bin", [], edit("bin", "x"), ErrorCode.FS_NOT_TEXT,
        b"\x00\x01bin"),
    Row("edit-invalid-utf8", b"caf\xe9\n", [], edit("caf", "x"), ErrorCode.FS_NOT_TEXT,
        b"caf\xe9\n"),
    Row("write-over-binary", b"\x00bin", [], write("text"), ErrorCode.FS_NOT_OBSERVED,
        b"\x00bin"),
    # str_replace_editor
    Row("view-missing-then-create", None, [VIEW], create("new\n"), None, b"new\n"),
    Row("create-existing", b"old\n", [READ], create("new\n"), ErrorCode.FS_ALREADY_EXISTS,
        b"old\n"),
    Row("create-after-external-delete", b"old\n", [VIEW], create("new\n"), None, b"new\n",
        external=_ext_delete),
    Row("str-replace-unread", b"old\n", [], sr("old", "new"), ErrorCode.FS_NOT_OBSERVED,
        b"old\n"),
    Row("str-replace-after-view", b"old\n", [VIEW], sr("old", "new"), None, b"new\n"),
    Row("str-replace-after-missing", None, [VIEW], sr("old", "new"), ErrorCode.FS_NOT_FOUND,
        None),
    Row("str-replace-stale", b"old\n", [VIEW], sr("old", "new"), ErrorCode.FS_STALE, b"old!\n",
        external=_ext_write(b"old!\n")),
    Row("insert-after-view", b"a\nb\n", [VIEW], ins(1, "x\n"), None, b"a\nx\nb\n"),
    Row("insert-unread", b"a\n", [], ins(0, "x"), ErrorCode.FS_NOT_OBSERVED, b"a\n"),
    Row("insert-out-of-range", b"a\n", [VIEW], ins(5, "x"), ErrorCode.FS_INVALID_ARGUMENT,
        b"a\n"),
    Row("insert-after-missing", None, [VIEW], ins(0, "x"), ErrorCode.FS_NOT_FOUND, None),
    # policy=False
    Row("nopolicy-write-unread", b"old\n", [], write("new\n"), None, b"new\n", policy=False),
    Row("nopolicy-edit-unread", b"old\n", [], edit("old", "new"), None, b"new\n",
        policy=False),
    # read_only
    Row("readonly-write", b"old\n", [READ], write("new\n"), ErrorCode.FS_READ_ONLY, b"old\n",
        read_only=True),
    Row("readonly-edit", b"old\n", [READ], edit("old", "new"), ErrorCode.FS_READ_ONLY,
        b"old\n", read_only=True),
    Row("readonly-create", None, [], create("x"), ErrorCode.FS_READ_ONLY, None,
        read_only=True),
    Row("readonly-insert", b"a\n", [VIEW], ins(0, "x"), ErrorCode.FS_READ_ONLY, b"a\n",
        read_only=True),
    # paths and arguments
    Row("outside-root", None, [], ("a", "write", {"file_path": "/../f.txt", "content": "x"}),
        ErrorCode.FS_OUTSIDE_ROOT, None),
    Row("read-missing", None, [], READ, ErrorCode.FS_NOT_FOUND, None),
    Row("read-offset-past-end", b"a\n", [], ("a", "read", {"file_path": P, "offset": 5}),
        ErrorCode.FS_INVALID_ARGUMENT, b"a\n"),
    Row("bad-arguments", b"a\n", [], ("a", "read", {"path": P}), ErrorCode.FS_INVALID_ARGUMENT,
        b"a\n"),
]


def _mkdir(ws: Workspace) -> None:
    from fsseam import CreateOnly

    ws.backend.write("d/inner.txt", b"i", CreateOnly())


@pytest.fixture(params=["memory", "local"])
def make_ws(request: pytest.FixtureRequest, root: Path) -> Iterator[Callable[..., Workspace]]:
    def make(**kw: Any) -> Workspace:
        if request.param == "memory":
            return Workspace("memory://table", {"global_store": False}, **kw)
        return Workspace(str(root), **kw)

    yield make


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_policy_rule(row: Row, make_ws: Callable[..., Workspace]) -> None:
    setup = make_ws()
    if row.initial is not None:
        from fsseam import Overwrite

        setup.backend.write("f.txt", row.initial, Overwrite())
    ws = make_ws(policy=row.policy, read_only=row.read_only)
    if ws.backend is not setup.backend and "memory" in type(ws.backend).__name__.lower():
        ws = Workspace(ws.url, policy=row.policy, read_only=row.read_only,
                       fs=setup.backend.fs)  # type: ignore[attr-defined]
    for owner, tool, args in row.before:
        ws.context(owner).tools.execute(tool, args)
    if row.external is not None:
        row.external(ws)
    owner, tool, args = row.call
    res = ws.context(owner).tools.execute(tool, args)
    if row.code is None:
        assert res.ok, res.text
    else:
        assert not res.ok, res.text
        assert res.error is not None and res.error.code is row.code, res.text
    assert raw(ws, P) == row.after
