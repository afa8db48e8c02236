"""Everything the model reads comes from the catalogue: a scan of the source that proves it.

Two rules, checked on every module of ``src/fsseam`` and ``backends/*/src`` (parsed, never
imported):

1. **No prose outside the catalogue.** A string literal (or f-string) that reads as English
   (two words in a row) is model-facing unless it stands in one of the places below, where
   what it says reaches a person or a programmer, never the model: docstrings, the catalogue
   itself, log lines, programmer errors (a TypeError for a wrong API use), assertions,
   descriptions and help texts (tool schemas are pinned by ``tests/snapshots``; CLI help is
   for humans). Anything else (a detail given to an FsError, an outcome text, the message of
   an exception a tool call reports) must be a catalogue entry, named by its reason.
2. **No reason compared by hand.** ``err.reason == "bucket_missing"`` is a branch a typo
   silently disables; comparisons name a typed value (``Reason.bucket_missing``,
   ``ConflictKind.missing``).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"

# Two words in a row, the first of two letters or more: "Deleted {path}." reads as
# "Deleted x.", which is prose; "utf-8", "%H:%M:%S UTC", "**/*.py" and keys are not.
_PROSE = re.compile(r"\b[A-Za-z][a-z']+ [A-Za-z']+\b")

# Exceptions that report a wrong use of the API to the programmer who made it. Outside a
# pydantic validator they never reach the model: tool calls report FsError only.
PROGRAMMER_ERRORS = frozenset({
    "TypeError", "ValueError", "RuntimeError", "NotImplementedError", "AssertionError",
    "AttributeError", "KeyError", "LookupError", "IndexError", "ImportError",
})
# Inside these a ValueError's text is what pydantic reports to the model.
VALIDATORS = frozenset({"model_validator", "field_validator", "validator", "root_validator"})
# Log lines and warnings are read by operators.
LOG_CALLS = frozenset({"debug", "info", "warning", "error", "exception", "critical", "log",
                       "warn"})
# Keyword arguments that describe (a tool's schema, pinned by the snapshots), help a person
# at a terminal (argparse), or note a backend's guarantees for its developer (a
# capability's ``note``, which no tool shows).
DESCRIBING = frozenset({"description", "help", "epilog", "usage", "title", "note"})
# Module-level constants that are schema text (tool and argument descriptions, an MCP
# server's instructions: out of the catalogue's scope, pinned by the snapshots) or a tool's
# vocabulary (the catalogue's own mechanism for a tool's argument names).
SCHEMA_CONSTANT = re.compile(r"^_?[A-Z_]*(DESCRIPTION|_PATH|_DIR|INSTRUCTIONS|VOCABULARY)$")
# String methods whose arguments are text looked for in other text, never said.
MATCHING = frozenset({"startswith", "endswith", "removeprefix", "removesuffix", "split",
                      "rsplit", "partition", "rpartition", "find", "rfind", "index", "count"})

# Files (relative to the repository) whose prose is for people, not the model, and why.
HUMAN_FILES: dict[str, str] = {
    "src/fsseam/cli.py": "the command line's own output and help are read by a person",
    "src/fsseam/demo.py": "the demo prints to a person at a terminal",
    "src/fsseam/pytest_plugin.py": "pytest's own reports, read by the developer",
    "src/fsseam/branches/review.py": "a branch's review and its merge's report are read by "
    "the person who approves (a notebook, a terminal); no tool shows them to the model",
}
# Test code: expected outputs pinned as literals on purpose, and the stores' own error texts
# that emulator fixtures inject (the shared suites, and each adapter's testing module).
TEST_DIRS = ("src/fsseam/testing/",)
TEST_MODULE = "testing.py"
CATALOGUE_DIRS = ("src/fsseam/messages/",)

# Single sites whose prose is not model-facing, by file: (a part of the literal, why).
ALLOWED: dict[str, list[tuple[str, str]]] = {
    "src/fsseam/patches/parse.py": [
        ("*** ", "the patch format's own markers, parsed (and echoed as the syntax they are)"),
    ],
    "src/fsseam/diff.py": [
        ("\n\\ No newline at end of file", "unified diff syntax, as diff(1) writes it"),
    ],
    "src/fsseam/backends/history/backend.py": [
        ("history kept by fsseam in", "part of a capability note, which no tool shows"),
    ],
    "src/fsseam/backends/history/stores.py": [
        ("this process's memory", "a history store's where, said only in a capability note "
         "and a repr, which no tool shows"),
    ],
    "src/fsseam/mcp.py": [
        ("pip install 'fsseam[mcp]'", "the install hint of the person starting the server"),
        ("the MCP server needs the official MCP SDK", "raised to that person, at start-up"),
    ],
    "src/fsseam/seam/workers.py": [
        ("from fsseam.seam.finding import main", "the command line of a helper process "
         "(python -c), which no one reads"),
    ],
    "src/fsseam/tools/registry.py": [
        ("no tool named", "UnknownToolError (a LookupError) of get(), for the programmer; "
         "a tool call reports the catalogue's unknown_tool"),
    ],
    "src/fsseam/backends/objectstore/direct.py": [
        ("header line", "http.client's own exception for an over-long header line: a "
         "transport error, retried and mapped by the store, its words never shown"),
        ("got more than", "http.client's own exception for too many headers, as above"),
        ("can't send", "a request target http.client would refuse too: a programming "
         "error of the store's transport, never shown"),
        ("Invalid header", "a header value with a line break, refused as http.client "
         "refuses it: a programming error, never shown"),
    ],
    "backends/gcs/src/fsseam_gcs/client.py": [
        ("bytes x-x/x", "an HTTP Content-Range header value"),
    ],
    "backends/s3/src/fsseam_s3/client.py": [
        ("no version of", "an error made to look like S3's own NoSuchVersion: mapped by its "
         "code to version_not_kept, its words are never shown"),
    ],
    "backends/s3/src/fsseam_s3/transport.py": [
        ("reduce your request rate", "s3fs's own words it retries a ClientError by, matched "
         "against botocore's message, never written"),
        ("Expected checksum", "botocore's FlexibleChecksumError, with botocore's own words as "
         "it raises them through s3fs"),
    ],
    "backends/azure/src/fsseam_azure/client.py": [
        ("no kept version of", "a ResourceNotFoundError made to look like Azure's own: mapped "
         "by its status to version_not_kept, its words are never shown"),
    ],
}

@dataclass(frozen=True)
class Site:
    file: str
    line: int
    text: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.text[:70]!r}"


def _sources() -> list[Path]:
    return sorted([*SRC.joinpath("fsseam").rglob("*.py"), *ROOT.glob("backends/*/src/**/*.py")])


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _text(node: ast.expr) -> str | None:
    """The words of a string literal; an f-string's fields, and values glued to a literal
    with ``+``, read as ``x``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(
            v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x"
            for v in node.values
        )
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is not None or right is not None:
            return (left or "x") + (right or "x")
    return None


def is_prose(text: str) -> bool:
    return _PROSE.search(text) is not None


class _ProseScan(ast.NodeVisitor):
    """Prose literals outside the places where a person, not the model, reads them."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.found: list[Site] = []
        self._validator = 0

    # -- places whose strings are not model-facing --------------------------------------
    def _skip_docstring(self, body: list[ast.stmt]) -> list[ast.stmt]:
        first = body[0] if body else None
        if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)):
            return body[1:]
        return body

    def visit_Module(self, node: ast.Module) -> None:
        for stmt in self._skip_docstring(node.body):
            if self._schema_constant(stmt):
                continue
            self.visit(stmt)

    def _schema_constant(self, stmt: ast.stmt) -> bool:
        targets = (stmt.targets if isinstance(stmt, ast.Assign)
                   else [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
        return any(isinstance(t, ast.Name) and SCHEMA_CONSTANT.match(t.id) for t in targets)

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        validator = any(_call_name(d.func if isinstance(d, ast.Call) else d) in VALIDATORS
                        for d in node.decorator_list)
        self._validator += validator
        for d in node.decorator_list:
            self.visit(d)
        for stmt in self._skip_docstring(node.body):
            self.visit(stmt)
        self._validator -= validator

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for stmt in self._skip_docstring(node.body):
            self.visit(stmt)

    def visit_Expr(self, node: ast.Expr) -> None:
        if _text(node.value) is None:
            self.visit(node.value)
        # else: a string standing alone documents the statement before it (an attribute's
        # docstring); it is never returned or raised.

    def visit_Assert(self, node: ast.Assert) -> None:
        self.visit(node.test)  # the message is for the programmer

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc
        if (isinstance(exc, ast.Call) and _call_name(exc.func) in PROGRAMMER_ERRORS
                and not self._validator):
            return
        self.generic_visit(node)

    def visit_Compare(self, node: ast.Compare) -> None:
        for operand in (node.left, *node.comparators):
            if not _stringy(operand, set()):  # a literal compared with is looked for, not said
                self.visit(operand)

    def visit_Call(self, node: ast.Call) -> None:
        name = _call_name(node.func)
        if name in LOG_CALLS or name in MATCHING:
            return
        if name == "add" and node.args and isinstance(node.args[0], ast.Dict):
            return  # an adapter's own catalogue entries (fsseam.messages.add)
        if name == "Field":
            return  # a pydantic field's description: schema text
        self.visit(node.func)
        for arg in node.args:
            self.visit(arg)
        for kw in node.keywords:
            if kw.arg not in DESCRIBING:
                self.visit(kw.value)

    # -- the strings themselves ---------------------------------------------------------
    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._check(node)
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                self.visit(v.value)

    def visit_Constant(self, node: ast.Constant) -> None:
        self._check(node)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        if _text(node) is None:
            self.generic_visit(node)
            return
        self._check(node)
        for side in (node.left, node.right):
            if _text(side) is None:
                self.visit(side)
            elif isinstance(side, ast.JoinedStr):
                for v in side.values:
                    if isinstance(v, ast.FormattedValue):
                        self.visit(v.value)

    def _check(self, node: ast.Constant | ast.JoinedStr | ast.BinOp) -> None:
        text = _text(node)
        if text is not None and is_prose(text):
            self.found.append(Site(self.file, node.lineno, text))


def prose_sites(file: str, tree: ast.Module) -> list[Site]:
    """The model-facing prose of one module (``file``: its path in the repository)."""
    if (file.startswith(CATALOGUE_DIRS + TEST_DIRS) or file.endswith("/" + TEST_MODULE)
            or file in HUMAN_FILES):
        return []
    scan = _ProseScan(file)
    scan.visit(tree)
    return scan.found


def _stringy(node: ast.expr, constants: set[str]) -> bool:
    """A literal string, a collection of them, or a module constant bound to one."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_stringy(e, constants) for e in node.elts)
    if isinstance(node, ast.Call) and _call_name(node.func) in ("frozenset", "set", "tuple"):
        return any(_stringy(a, constants) for a in node.args)
    return isinstance(node, ast.Name) and node.id in constants


def _string_constants(tree: ast.Module) -> set[str]:
    """Module-level names bound to strings (``DAMAGED = "history_index_damaged"``)."""
    names: set[str] = set()
    for stmt in tree.body:
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        targets = (stmt.targets if isinstance(stmt, ast.Assign)
                   else [stmt.target] if isinstance(stmt, ast.AnnAssign) else [])
        if value is not None and _stringy(value, set()):
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
    return names


def _is_reason(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "reason") or (
        isinstance(node, ast.Name) and node.id == "reason")


def comparison_sites(file: str, tree: ast.Module, source: str) -> list[Site]:
    """Reasons compared with strings by hand."""
    constants = _string_constants(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        operands = [node.left, *node.comparators]
        if any(_is_reason(o) for o in operands) and any(
                _stringy(o, constants) for o in operands if not _is_reason(o)):
            found.append(Site(file, node.lineno, ast.get_source_segment(source, node) or ""))
    return found


# Calls whose first argument names a catalogue sentence.
_NAMING_CALLS = frozenset({"render", "say", "Sentence"})


def spelled_sites(file: str, tree: ast.Module, source: str) -> list[Site]:
    """A catalogue reason written as a string where the raise or render names it
    (``reason="stale_edit"``, ``render("rollback_kept", ...)``): the enum member says at the
    site exactly which sentence the model reads, and a misspelt one fails at import."""
    from fsseam.messages import Reason

    members = set(Reason.__members__)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        named = [k.value for k in node.keywords if k.arg == "reason"]
        if _call_name(node.func) in _NAMING_CALLS and node.args:
            named.append(node.args[0])
        for value in named:
            if isinstance(value, ast.Constant) and value.value in members:
                found.append(Site(file, node.lineno, ast.get_source_segment(source, node) or ""))
    return found


def _scan() -> Iterator[tuple[str, Site]]:
    for path in _sources():
        source = path.read_text()
        tree = ast.parse(source, str(path))
        file = _rel(path)
        for site in prose_sites(file, tree):
            yield "prose", site
        for site in comparison_sites(file, tree, source):
            yield "comparison", site
        for site in spelled_sites(file, tree, source):
            yield "spelled", site


def _allowed(site: Site) -> bool:
    return any(p in site.text for p, _ in ALLOWED.get(site.file, []))


def test_no_model_facing_prose_outside_the_catalogue() -> None:
    found = [str(s) for kind, s in _scan()
             if kind == "prose" and not _allowed(s)]
    assert found == [], "\n".join(found)


def test_no_reason_is_compared_by_hand() -> None:
    found = [str(s) for kind, s in _scan() if kind == "comparison"]
    assert found == [], "\n".join(found)


def test_every_raise_and_render_names_its_sentence_by_the_enum() -> None:
    found = [str(s) for kind, s in _scan() if kind == "spelled"]
    assert found == [], "write Reason.<name>: " + "\n".join(found)


@pytest.mark.parametrize(
    "source",
    [
        "raise FsError(ErrorCode.FS_STALE, path=p, reason='stale_edit')\n",
        "text = render('rollback_kept', shown, {'error': e})\n",
        "part = Sentence('advice_retry')\n",
    ],
)
def test_the_scan_finds_a_reason_spelled_as_a_string(source: str) -> None:
    assert len(spelled_sites(_SEAM, ast.parse(source), source)) == 1


def test_an_adapters_own_reason_and_the_enum_pass_the_scan() -> None:
    source = (
        "raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason='s3_part_size')\n"
        "raise FsError(ErrorCode.FS_STALE, reason=Reason.stale_edit)\n"
        "text = render(Reason.rollback_kept, shown)\n"
    )
    assert spelled_sites(_SEAM, ast.parse(source), source) == []


# -- the scanner catches what it is meant to catch ----------------------------------------

_SEAM = "src/fsseam/seam.py"


@pytest.mark.parametrize(
    "source",
    [
        # A new sentence in the seam, as a detail of an error...
        "def f(p):\n    raise FsError(ErrorCode.FS_BACKEND, reason='storage_failed',\n"
        "                  details={'detail': 'the disk is full'})\n",
        # ... as an outcome text, plain or formatted...
        "def render_copy(o):\n    return f'Copied {o.path} to {o.destination}.'\n",
        "def render_copy(o):\n    return 'Copied ' + o.path\n",
        # ... as an exception whose text a tool call reports...
        "def f():\n    raise FsError(ErrorCode.FS_BACKEND, 'the store is down')\n",
        "def f():\n    raise OSError('the store is down')\n",
        # ... as a ValueError a pydantic validator turns into the model's error.
        "class A(BaseModel):\n    @model_validator(mode='after')\n    def _v(self):\n"
        "        raise ValueError('give one of them')\n",
        # A module constant that is a sentence.
        "NOTE = 'nothing was written'\n",
    ],
)
def test_the_scan_finds_a_new_sentence(source: str) -> None:
    sites = prose_sites(_SEAM, ast.parse(source))
    assert len(sites) == 1, sites


def test_the_scan_leaves_text_for_people_and_programmers_alone() -> None:
    source = (
        '"""A module docstring, in prose."""\n'
        "import logging\n"
        "log = logging.getLogger(__name__)\n"
        "READ_DESCRIPTION = 'Read a text file, with line numbers.'\n"
        "class Args(BaseModel):\n"
        "    '''What the tool takes.'''\n"
        "    path: str = Field(description='Path of the file to read.')\n"
        "def f(x):\n"
        "    '''Does a thing.'''\n"
        "    log.warning('retrying the request %s', x)\n"
        "    assert x, 'x must be set by the caller'\n"
        "    if not isinstance(x, str):\n"
        "        raise TypeError(f'f takes a str, not {type(x).__name__}')\n"
        "    return render(Reason.deleted, x, {'action': 'write', 'key': 'a/b.txt'})\n"
        "messages.add({'s3_part': 'the part is too small for {store}.'})\n"
        "parser.add_argument('--root', help='the directory to serve')\n"
    )
    assert prose_sites(_SEAM, ast.parse(source)) == []
    assert prose_sites("src/fsseam/messages/files.py", ast.parse("X = 'a whole sentence'")) == []


@pytest.mark.parametrize(
    "source",
    [
        "if err.reason == 'bucket_missing':\n    pass\n",
        "if e.reason != 'bucket_missing' and x:\n    pass\n",
        "if failure.reason in ('storage_failed', 'store_busy'):\n    pass\n",
        "DAMAGED = 'history_index_damaged'\nif e.reason != DAMAGED:\n    pass\n",
        "_DETAILED = frozenset({'a', 'b'})\nok = err.reason not in _DETAILED\n",
        "assert info.value.reason == 'exists'\n",
    ],
)
def test_the_scan_finds_a_reason_compared_by_hand(source: str) -> None:
    assert len(comparison_sites(_SEAM, ast.parse(source), source)) == 1


def test_typed_comparisons_pass_the_scan() -> None:
    source = (
        "_DETAILED = frozenset({Reason.change_outcome_unknown})\n"
        "a = err.reason == Reason.bucket_missing\n"
        "b = c.reason != ConflictKind.missing\n"
        "c = err.reason in _DETAILED\n"
        "d = err.reason is None\n"
    )
    assert comparison_sites(_SEAM, ast.parse(source), source) == []


def test_a_sentence_added_to_the_real_seam_is_found() -> None:
    """The seam's own module, with one outcome sentence added at its end: exactly that one
    more site (no exemption of the file hides it)."""
    seam = next(p for p in (SRC / "fsseam" / "seam.py", SRC / "fsseam" / "seam" / "__init__.py")
                if p.exists())
    source = seam.read_text()
    before = prose_sites(_SEAM, ast.parse(source))
    added = source + "\n\ndef _copied(path):\n    return f'{path} was copied.'\n"
    after = prose_sites(_SEAM, ast.parse(added))
    assert [s.text for s in after if s not in before] == ["x was copied."]
