"""The message catalogue: each sentence once, rendered in the calling tool's words."""

from __future__ import annotations

import re
import string
from pathlib import Path

import pytest

from fsseam import ErrorCode, FsError, Workspace
from fsseam.messages import DEFAULT_VOCABULARY, MESSAGES, Role, render
from fsseam.tools.editor import EDITOR_VOCABULARY

SRC = Path(__file__).resolve().parents[1] / "src"
BACKENDS = Path(__file__).resolve().parents[1] / "backends"


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def _sources() -> list[Path]:
    return [*SRC.rglob("*.py"), *BACKENDS.glob("*/src/**/*.py")]


def test_every_template_renders_with_the_vocabulary_and_its_details() -> None:
    for reason, template in MESSAGES.items():
        details = {f: f"<{f}>" for f in _fields(template) if f not in DEFAULT_VOCABULARY}
        text = render(reason, "/p.txt", details)  # a missing field would raise KeyError
        assert text.strip() == text and text, reason


def test_every_reason_used_in_the_code_is_in_the_catalogue() -> None:
    used: set[str] = set()
    for path in _sources():
        used |= set(re.findall(r'reason="([a-z_]+)"', path.read_text()))
    conflicts = {"exists", "mismatch", "missing"}  # Conflict reasons: conflict_<reason>
    bucket = {"bucket_missing"}  # a cause callers branch on; its text is the backend's
    unknown = sorted(used - set(MESSAGES) - conflicts - bucket)
    assert unknown == []


def test_no_catalogue_sentence_is_written_out_elsewhere() -> None:
    """A sentence of the catalogue appears in no other source file (it would drift)."""
    fragments = []
    for template in MESSAGES.values():
        # the longest literal run of each template, long enough to be a real sentence part
        runs = [lit for lit, _, _, _ in string.Formatter().parse(template)]
        longest = max(runs, key=len).strip()
        if len(longest) >= 30:
            fragments.append(longest)
    messages_py = SRC / "fsseam" / "messages.py"
    offenders = []
    for path in _sources():
        if path == messages_py:
            continue
        text = path.read_text()
        offenders += [(path.name, f) for f in fragments if f in text]
    assert offenders == []


def test_roles_render_as_the_tools_argument_names() -> None:
    err = FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="text_has_nul",
                  details={"arg": Role("new")})
    assert err.message.startswith("new_string contains a NUL character")
    assert err.render(EDITOR_VOCABULARY).startswith("new_str contains a NUL character")


def test_literal_messages_still_work_for_plugins() -> None:
    err = FsError(ErrorCode.FS_PERMISSION_DENIED, "agents may not write .env files")
    assert err.message == "agents may not write .env files"
    assert str(err) == "FS_PERMISSION_DENIED: agents may not write .env files"
    with pytest.raises(TypeError):
        FsError(ErrorCode.FS_BACKEND)


def test_errors_survive_a_process_boundary() -> None:
    import pickle

    from fsseam import Conflict

    err = FsError(ErrorCode.FS_NO_MATCH, path="/a.txt", reason="no_match")
    back = pickle.loads(pickle.dumps(err))
    assert (back.code, back.path, back.message) == (err.code, "/a.txt", err.message)
    c = pickle.loads(pickle.dumps(Conflict("mismatch", path="/b.txt")))
    assert (type(c), c.reason, c.code, c.message) == (
        Conflict, "mismatch", ErrorCode.FS_STALE, "/b.txt has changed since it was read."
    )


@pytest.fixture
def ws() -> Workspace:
    ws = Workspace("memory://messages-test", {"global_store": False})
    ctx = ws.context("setup")
    assert ctx.tools.execute("write", {"file_path": "/m.txt", "content": "x\nx\n"}).ok
    return ws


def test_each_tool_names_its_own_arguments(ws: Workspace) -> None:
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": "/m.txt"}).ok
    res = ctx.tools.execute("edit", {"file_path": "/m.txt", "old_string": "x",
                                     "new_string": "y"})
    assert res.text == (
        "Error [FS_MULTIPLE_MATCHES]: old_string occurs 2 times in /m.txt, at lines 1, 2. "
        "Include more surrounding lines in old_string to make it unique, or set replace_all "
        "to replace every occurrence."
    )
    res = ctx.tools.execute("str_replace_editor", {"command": "str_replace", "path": "/m.txt",
                                                   "old_str": "x", "new_str": "y"})
    # str_replace has no replace_all: its advice does not offer one.
    assert res.text == (
        "Error [FS_MULTIPLE_MATCHES]: old_str occurs 2 times in /m.txt, at lines 1, 2. "
        "Include more surrounding lines in old_str to make it unique."
    )
    assert res.error is not None and res.error.message == res.text.split("]: ", 1)[1]
    res = ctx.tools.execute("str_replace_editor", {"command": "insert", "path": "/m.txt",
                                                   "insert_line": 9, "new_str": "z"})
    assert res.text == (
        "Error [FS_INVALID_ARGUMENT]: insert_line 9 is out of range: /m.txt has 2 lines, so "
        "use 0 (before the first line) to 2 (after the last)."
    )
    res = ctx.tools.execute("write", {"file_path": "/n.txt", "content": "a\x00b"})
    assert res.text == (
        "Error [FS_INVALID_ARGUMENT]: content contains a NUL character; fsseam writes text "
        "files only. Remove it."
    )
    res = ctx.tools.execute("str_replace_editor", {"command": "create", "path": "/n.txt",
                                                   "file_text": "a\x00b"})
    assert res.text.startswith("Error [FS_INVALID_ARGUMENT]: file_text contains a NUL")
