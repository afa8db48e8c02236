"""The message catalogue: each sentence once, rendered in the calling tool's words."""

from __future__ import annotations

import ast
import string
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsseam import Conflict, ErrorCode, FsError, Workspace, WriteIntent, hookimpl
from fsseam.messages import DEFAULT_VOCABULARY, MESSAGES, Part, Role, add, render
from fsseam.tools.editor import EDITOR_VOCABULARY
from fsseam.versions import IfMatch, Overwrite, Version

SRC = Path(__file__).resolve().parents[1] / "src"
BACKENDS = Path(__file__).resolve().parents[1] / "backends"
TESTING = SRC / "fsseam" / "testing"

CONFLICT_REASONS = {"exists", "mismatch", "missing"}
# Where a literal message may pass through: a plugin's own text (an intent's conflict_hint),
# which the seam hands on as it is: the function that explains a lost precondition.
PASSTHROUGH = {"refusal_for"}
# A literal run of a template at least this long is a sentence (or most of one).
SENTENCE_CHARS = 25


def _fields(template: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(template) if f}


def _sources() -> list[Path]:
    return [*SRC.rglob("*.py"), *BACKENDS.glob("*/src/**/*.py")]


def _trees() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(), str(path))) for path in _sources()]


def _name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _added(tree: ast.Module) -> dict[str, str]:
    """The sentences a module adds to the catalogue: ``messages.add({...})`` literals."""
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and _name(node.func) == "add" and node.args
                and isinstance(node.args[0], ast.Dict)):
            entries = ast.literal_eval(node.args[0])
            assert all(isinstance(k, str) and isinstance(v, str) for k, v in entries.items())
            found.update(entries)
    return found


def _catalogue() -> dict[str, str]:
    """Every sentence the source defines: the core catalogue and what adapters add (read from
    the source, so adapters that are not installed count too)."""
    found = dict(MESSAGES)
    for _, tree in _trees():
        found.update(_added(tree))
    return found


class _Constructions(ast.NodeVisitor):
    """Every ``FsError(...)``, ``Conflict(...)`` and ``ToolError(...)`` call, with the
    function it is in."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, ast.Call]] = []
        self._in: list[str] = [""]

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._in.append(node.name)
        self.generic_visit(node)
        self._in.pop()

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_Call(self, node: ast.Call) -> None:
        if _name(node.func) in ("FsError", "Conflict", "ToolError"):
            self.calls.append((self._in[-1], node))
        self.generic_visit(node)


def _kwarg(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _is_text(node: ast.expr) -> bool:
    """A message written out: a string literal, an f-string, or text glued to one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp):
        return _is_text(node.left) or _is_text(node.right)
    return False


def _offences(filename: str, tree: ast.Module, catalogue: dict[str, str]) -> list[str]:
    """Errors built with a message instead of a catalogue reason (see below)."""
    visitor = _Constructions()
    visitor.visit(tree)
    found = []
    for function, call in visitor.calls:
        where = f"{filename}:{call.lineno} {_name(call.func)}(...)"
        kind = _name(call.func)
        if kind == "ToolError":
            message = _kwarg(call, "message")
            if message is not None and _is_text(message):
                found.append(f"{where}: a literal message")
            continue
        message = call.args[1] if len(call.args) > 1 else _kwarg(call, "message")
        if message is not None and (_is_text(message)
                                    or function not in PASSTHROUGH):
            found.append(f"{where}: a message instead of a reason")
        if kind == "Conflict":
            first = call.args[0] if call.args else _kwarg(call, "reason")
            if not (isinstance(first, ast.Constant) and first.value in CONFLICT_REASONS):
                found.append(f"{where}: not one of {sorted(CONFLICT_REASONS)}")
            continue
        reason = _kwarg(call, "reason")
        if reason is None and message is None:
            found.append(f"{where}: no reason")
        if isinstance(reason, ast.Constant):
            if reason.value not in catalogue:
                found.append(f"{where}: {reason.value!r} is not in the catalogue")
            elif str(reason.value).startswith("_"):
                found.append(f"{where}: {reason.value!r} is a clause, not a sentence")
    return found


def test_every_error_of_the_code_is_built_from_a_catalogue_reason() -> None:
    """No FsError, Conflict or ToolError in src/ or backends/*/src/ is given a literal
    message: each names its sentence by reason, with the facts the sentence needs, and the
    tools layer renders it. (Plugins and user code may still pass literal messages.)"""
    catalogue = _catalogue()
    offences = [o for path, tree in _trees() for o in _offences(path.name, tree, catalogue)]
    assert offences == []


@pytest.mark.parametrize(
    ("source", "offence"),
    [
        ("raise FsError(ErrorCode.FS_BACKEND, f'{p} is gone.', path=p)", "instead of a reason"),
        ("raise FsError(ErrorCode.FS_BACKEND, 'gone')", "instead of a reason"),
        ("raise FsError(ErrorCode.FS_BACKEND, message='a' + p)", "instead of a reason"),
        ("raise FsError(ErrorCode.FS_BACKEND, reason='no_such_reason')", "not in the catalogue"),
        ("raise FsError(ErrorCode.FS_BACKEND, reason='_below_file')", "a clause"),
        ("raise errors.FsError(ErrorCode.FS_BACKEND, text)", "instead of a reason"),
        ("raise Conflict('exists', f'{p} already exists.', path=p)", "instead of a reason"),
        ("raise Conflict('gone', path=p)", "not one of"),
        ("ToolError(code=c, message=f'no tool {n}')", "a literal message"),
    ],
)
def test_the_check_finds_literal_messages(source: str, offence: str) -> None:
    found = _offences("x.py", ast.parse(source), dict(MESSAGES))
    assert len(found) == 1 and offence in found[0], found


def test_the_check_accepts_reasons_and_the_plugin_passthrough() -> None:
    ok = (
        "def f(p, r, hint):\n"
        "    FsError(ErrorCode.FS_NOT_FOUND, path=p, reason='missing')\n"
        "    FsError(ErrorCode.FS_NOT_FOUND, path=p, reason=r)\n"
        "    Conflict('missing', path=p)\n"
        "    ToolError(code=c, message=m)\n"
        "def refusal_for(code, hint, path):\n"
        "    return FsError(code, hint, path=path)\n"
    )
    assert _offences("x.py", ast.parse(ok), dict(MESSAGES)) == []
    other = ok.replace("def refusal_for", "def explain")
    assert _offences("x.py", ast.parse(other), dict(MESSAGES)) != []


def _facts(template: str, catalogue: dict[str, str]) -> set[str]:
    """The fields a template needs from details: its own and its clauses', not the
    vocabulary's."""
    needed = set()
    for f in _fields(template):
        if f.startswith("_"):
            needed |= _facts(catalogue[f], catalogue)
        elif f not in DEFAULT_VOCABULARY:
            needed.add(f)
    return needed


def test_every_template_renders_with_the_vocabulary_and_its_details() -> None:
    catalogue = _catalogue()
    for reason, template in catalogue.items():
        if reason not in MESSAGES:
            continue  # an adapter that is not installed here
        details = {f: f"<{f}>" for f in _facts(template, catalogue)}
        text = render(reason, "/p.txt", details)  # a missing field would raise KeyError
        assert text.strip() == text and text, reason
        assert "{" not in text.replace("{a,b}", ""), reason


def test_every_reason_used_in_the_code_is_in_the_catalogue() -> None:
    """Reasons are also set outside error constructions (an intent's conflict_reason)."""
    catalogue = _catalogue()
    used: set[str] = set()
    for _, tree in _trees():
        for node in ast.walk(tree):
            keyword = isinstance(node, ast.keyword) and node.arg == "reason"
            assigned = (isinstance(node, ast.Assign) and len(node.targets) == 1
                        and isinstance(node.targets[0], ast.Attribute)
                        and node.targets[0].attr.endswith("reason"))
            if not (keyword or assigned):
                continue
            assert isinstance(node, (ast.keyword, ast.Assign))
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                used.add(value.value)
    assert sorted(used - set(catalogue)) == []


def _string_constants(tree: ast.Module) -> Iterator[str]:
    """Every piece of literal text in a module (the literal parts of f-strings too)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def test_each_sentence_is_written_once() -> None:
    """A sentence of the catalogue is written nowhere but in its entry: no other string in
    the source (an f-string, a usage text, a docstring) holds a sentence of it, and no two
    entries are the same sentence."""
    catalogue = _catalogue()
    assert len(set(catalogue.values())) == len(catalogue)
    definitions = set(catalogue.values())
    sentences: dict[str, str] = {}
    for reason, template in catalogue.items():
        for literal, _, _, _ in string.Formatter().parse(template):
            if len(literal.strip()) >= SENTENCE_CHARS:
                sentences.setdefault(literal.strip(), reason)
    offenders = []
    for path, tree in _trees():
        if TESTING in path.parents:
            continue  # the shared test suites pin outputs: their expected texts are literal
        for text in _string_constants(tree):
            if text in definitions:
                continue
            offenders += [(path.name, reason, s) for s, reason in sentences.items() if s in text]
    assert offenders == []


def test_adapters_add_sentences_once() -> None:
    add({"test_added": "{path} was added by a test."})
    add({"test_added": "{path} was added by a test."})  # the same again: nothing happens
    assert render("test_added", "/a") == "/a was added by a test."
    with pytest.raises(ValueError, match="already has a sentence for 'test_added'"):
        add({"test_added": "{path} says something else."})
    with pytest.raises(ValueError):
        add({"test_broken": "{path is unclosed"})
    assert "test_broken" not in MESSAGES


def test_clauses_are_written_once_and_rendered_in_place() -> None:
    err = FsError(ErrorCode.FS_NOT_TEXT, path="/b.bin", reason="not_text",
                  details={"why": Part("_bad_utf8_at"), "byte": 7})
    assert err.message == (
        "/b.bin is not a UTF-8 text file (invalid UTF-8 at byte 7); it cannot be read or "
        "edited as text and was left unchanged."
    )
    assert render("parent_is_file", "/f.txt/x", {"action": "write"}) == (
        "cannot write /f.txt/x: a parent of this path is a file, not a directory."
    )
    assert render("missing_below_file", "/f.txt/x") == (
        "/f.txt/x does not exist: a parent of this path is a file, not a directory."
    )
    with pytest.raises(KeyError):
        render("parent_is_file", "/f.txt/x")  # a missing fact is an error, never a clause


def test_roles_render_as_the_tools_argument_names() -> None:
    err = FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="text_has_nul",
                  details={"arg": Role("new")})
    assert err.message.startswith("new_string contains a NUL character")
    assert err.render(EDITOR_VOCABULARY).startswith("new_str contains a NUL character")


def test_literal_messages_still_work_for_plugins() -> None:
    err = FsError(ErrorCode.FS_PERMISSION_DENIED, "agents may not write .env files")
    assert err.message == "agents may not write .env files"
    assert err.render(EDITOR_VOCABULARY) == err.message
    assert str(err) == "FS_PERMISSION_DENIED: agents may not write .env files"
    assert Conflict("exists", "the slot is taken", path="/a").message == "the slot is taken"
    with pytest.raises(TypeError):
        FsError(ErrorCode.FS_BACKEND)


def test_a_plugins_own_words_reach_the_model() -> None:
    """A veto and a conflict_hint are a plugin's literal texts: passed on as they are."""
    class Guard:
        @hookimpl
        def fs_write_intent(self, event: WriteIntent) -> None:
            if event.path.endswith(".env"):
                raise FsError(ErrorCode.FS_PERMISSION_DENIED, "agents may not write .env files")
            event.precondition = IfMatch(Version(kind="sha256", value="0" * 64))
            event.conflict_code = ErrorCode.FS_STALE
            event.conflict_hint = "the release manager holds this file; try after the release."

    ws = Workspace("memory://plugin-words", {"global_store": False}, policy=False,
                   plugins=[Guard()], load_entry_points=False)
    tools = ws.context("a").tools
    res = tools.execute("write", {"file_path": "/.env", "content": "x"})
    assert res.text == "Error [FS_PERMISSION_DENIED]: agents may not write .env files"
    ws.backend.write("a.txt", b"a\n", Overwrite())
    res = tools.execute("write", {"file_path": "/a.txt", "content": "b"})
    assert res.text == (
        "Error [FS_STALE]: the release manager holds this file; try after the release."
    )


def test_errors_survive_a_process_boundary() -> None:
    import pickle

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


def test_the_editors_own_mistakes_are_in_its_words(ws: Workspace) -> None:
    tools = ws.context("a").tools

    def editor(**args: object) -> str:
        return tools.execute("str_replace_editor", {"path": "/m.txt", **args}).text

    assert editor(command="view", view_range=[0, 3]) == (
        "Error [FS_INVALID_ARGUMENT]: view_range [0, 3] is invalid: use [start, end] with "
        "1 <= start <= end, or end = -1 for the end of the file."
    )
    assert editor(command="view", path="/", view_range=[1, 3]) == (
        "Error [FS_INVALID_ARGUMENT]: / is a directory; view_range applies to files only."
    )
    assert editor(command="undo_edit") == (
        "Error [FS_INVALID_ARGUMENT]: you have made no change to /m.txt that can be undone "
        "here (undo takes back your own writes and edits of the file, newest first)."
    )
    assert editor(command="insert", insert_line=0) == (
        "Error [FS_INVALID_ARGUMENT]: invalid arguments for str_replace_editor: insert: insert "
        "needs the text to insert, in new_str (or insert_text)."
    )
    # The editor reads with view: its advice says so.
    assert editor(command="str_replace", old_str="x", new_str="y") == (
        "Error [FS_NOT_OBSERVED]: /m.txt has not been read yet. View it first, then retry the "
        "edit."
    )
    assert tools.execute("ls", {"path": "/m.txt"}).text == (
        "Error [FS_INVALID_ARGUMENT]: /m.txt is a file, not a directory. Read it instead."
    )
    # The memory tool's view_range is the editor's, and says so in the same words.
    res = tools.execute("memory", {"command": "view", "path": "/memories/a", "view_range": [5, 2]})
    assert res.text == editor(command="view", view_range=[5, 2])


def test_arguments_that_are_not_an_object_say_what_they_are(ws: Workspace) -> None:
    tools = ws.context("a").tools
    assert tools.execute("read", '["/m.txt"]').text == (
        "Error [FS_INVALID_ARGUMENT]: arguments must be a JSON object, not an array."
    )
    assert tools.execute("edit", {"file_path": "/m.txt", "old_string": "",
                                  "new_string": "y"}).text == (
        "Error [FS_INVALID_ARGUMENT]: invalid arguments for edit: old_string is empty; give the "
        "exact text to replace (read the file to copy it)."
    )


# -- typed reasons and the outcome sentences --------------------------------------------

# Reasons the code builds from a kind, never spelt whole: the prefix, and where.
BUILT_REASONS = {
    "conflict_": "errors.Conflict: conflict_{kind}",
    "not_observed_": "policy.observation: not_observed_{operation} for a delete or a move",
}


def _core() -> dict[str, str]:
    """The core catalogue as the source defines it (not what a test or an adapter added)."""
    from fsseam.messages import edits, files, history, outcomes, stores, tools

    found: dict[str, str] = {}
    for module in (files, edits, stores, tools, history, outcomes):
        found.update(module.SENTENCES)
    return found


def test_reason_names_every_sentence_of_the_catalogue() -> None:
    """``Reason`` and the catalogue agree: one member per sentence (clauses, ``_...``, are
    parts of sentences, not reasons), named as the sentence and equal to its name."""
    from fsseam.messages import Reason

    sentences = [k for k in _core() if not k.startswith("_")]
    missing = [f"    {k} = auto()" for k in sentences if k not in Reason.__members__]
    extra = [m for m in Reason.__members__ if m not in sentences]
    assert missing == [] and extra == [], (
        "add to fsseam/messages/reasons.py:\n" + "\n".join(missing) + f"\nremove: {extra}")
    assert all(member.value == name for name, member in Reason.__members__.items())
    catalogue = _catalogue()
    assert all(render(member, "/p", {f: "x" for f in _facts(MESSAGES[member], catalogue)})
               for member in Reason)



def test_clause_names_every_clause_of_the_catalogue() -> None:
    """``Clause`` and the catalogue agree: one member per clause, named as the clause
    without its underscore and equal to the clause's name."""
    from fsseam.messages import Clause

    clauses = [k for k in _core() if k.startswith("_")]
    assert [member.value for member in Clause] == clauses
    assert all(member.value == f"_{name}" for name, member in Clause.__members__.items())

def test_a_reason_compares_equal_to_the_string_errors_are_built_with() -> None:
    from fsseam.messages import Reason

    err = FsError(ErrorCode.FS_NOT_FOUND, path="/b", reason="bucket_missing",
                  details={"bucket": "b", "action": "read"})
    assert err.reason == Reason.bucket_missing and err.reason != Reason.missing
    assert err.reason in {Reason.bucket_missing}
    assert err.message == FsError(ErrorCode.FS_NOT_FOUND, path="/b", reason=Reason.bucket_missing,
                                  details={"bucket": "b", "action": "read"}).message


def test_conflict_kinds_are_typed_and_agree_with_the_literal() -> None:
    import typing

    from fsseam.errors import ConflictKind, ConflictReason

    assert [k.value for k in ConflictKind] == list(typing.get_args(ConflictReason))
    c = Conflict("missing", path="/a")
    assert c.reason is ConflictKind.missing and c.reason == "missing"
    assert c.message == "/a no longer exists."


def test_every_sentence_of_the_catalogue_is_used() -> None:
    """A sentence nothing can say is dead text: each entry is named somewhere in the code
    (a string, ``Reason.x``, ``Clause.x``, a clause field of another entry), or built from
    a prefix."""
    named: set[str] = set()
    for path, tree in _trees():
        if path.parent.name == "messages":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named.add(node.value)
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "Reason"):
                named.add(node.attr)
            elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                  and node.value.id == "Clause"):
                named.add(f"_{node.attr}")
    for template in _core().values():
        named |= _fields(template)
    unused = [k for k in _core() if k not in named and not k.startswith(tuple(BUILT_REASONS))]
    assert unused == []


def test_every_sentence_rendered_by_name_is_in_the_catalogue() -> None:
    """The catalogue's ``render("...")`` (under whatever name a module imports it) names an
    entry that exists: a typo in a clause rendered on its own fails here, as a typo in
    ``Reason.x`` fails mypy."""
    catalogue = _catalogue()
    wrong = []
    for path, tree in _trees():
        names = {a.asname or a.name for node in ast.walk(tree)
                 if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("messages")
                 for a in node.names if a.name == "render"}
        for node in ast.walk(tree):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in names and node.args
                    and isinstance(node.args[0], ast.Constant)
                    and node.args[0].value not in catalogue):
                wrong.append(f"{path.name}:{node.lineno} {node.args[0].value!r}")
    assert wrong == []


def test_outcome_sentences_render_in_place() -> None:
    """Outcomes say their facts through the catalogue's clauses: counts and ranges."""
    from fsseam.messages import Part, Reason

    assert render(Reason.write_created, "/a", {"lines": 1, "count": Part("_one_line")}) == (
        "Created /a (1 line).")
    assert render(Reason.write_wrote, "/a", {"lines": 3, "count": Part("_n_lines")}) == (
        "Wrote /a (3 lines).")
    assert render(Reason.restored, "/a", {"version": "v1", "size": "1,024", "lines": 2,
                                          "extent": Part("_bytes_lines")}) == (
        "Restored /a at version v1 (1,024 bytes, 2 lines). The version it replaced stays in "
        "the history.")
    assert render(Reason.view_clipped, details={
        "first": 1, "last": 9, "total": None, "next": 10, "end": -1,
        "shown": Part("_lines_span")}) == (
        "<response clipped: showing lines 1-9. To see more, view with view_range [10, -1].>")
