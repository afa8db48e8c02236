"""The one tool-run path (:mod:`fsseam.tools.base`): its exception ladder, its read-only
filter and its result builders, each written once and taken by every surface that needs no
framework (the registry, its native shapes, MCP, the command line). The frameworks' surfaces
are in tests/integrations/test_surfaces.py."""

from __future__ import annotations

import ast
import inspect
import io
import json
import uuid
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from fsseam import TOOL_SETS, ErrorCode, FsError, Workspace, WriteIntent, hookimpl
from fsseam.cli import main
from fsseam.mcp import ToolServer
from fsseam.tools.base import attempt, failed, offered

SRC = Path(__file__).resolve().parents[1] / "src" / "fsseam"
# The module of the ladder, wherever it lives: the tests below say it is the only one.
RUN = Path(inspect.getfile(attempt))
SURFACES = [
    SRC / "tools" / "registry.py", SRC / "tools" / "native.py", SRC / "tools" / "__init__.py",
    SRC / "mcp.py", SRC / "cli.py", SRC / "demo.py", SRC / "workspace.py",
    SRC / "pytest_plugin.py", *sorted((SRC / "integrations").glob("*.py")),
]
LADDER = {"FsError", "OSError", "UnicodeError", "RecursionError", "ValidationError"}
READ_TOOLS = ["read", "ls", "glob", "grep", "history"]


def _memory(**kwargs: Any) -> Workspace:
    return Workspace(f"memory://run-{uuid.uuid4().hex[:12]}",
                     storage_options={"global_store": False}, **kwargs)


# -- written once ----------------------------------------------------------------------------


def _caught(handler: ast.ExceptHandler) -> set[str]:
    kinds = handler.type
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds] if kinds else []
    return {n.id if isinstance(n, ast.Name) else getattr(n, "attr", "") for n in names}


def test_no_surface_has_a_ladder_of_its_own() -> None:
    """A try that turns FsError and a stray error (OSError, a bad path, deep arguments,
    refused arguments) into an answer is the ladder: only the run path's module has one."""
    ladders = []
    for path in SURFACES:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Try):
                caught = set().union(*(_caught(h) for h in node.handlers))
                if "FsError" in caught and caught & (LADDER - {"FsError"}):
                    ladders.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert ladders == []
    tree = ast.parse(RUN.read_text())
    assert any(isinstance(n, ast.Try) and set().union(*map(_caught, n.handlers)) >= LADDER
               for n in ast.walk(tree))


def test_results_are_built_in_one_place() -> None:
    """``ToolResult(...)`` and ``ToolError(...)`` are made by the run path's module alone."""
    built = []
    for path in SRC.rglob("*.py"):
        if path == RUN:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id in ("ToolResult", "ToolError")):
                built.append(f"{path.relative_to(SRC)}:{node.lineno}")
    assert built == []


# -- the ladder ------------------------------------------------------------------------------


class _Args(BaseModel):
    n: int


def _raise(exc: BaseException) -> Any:
    def call() -> Any:
        raise exc

    return call


def _validation_error() -> ValidationError:
    try:
        _Args.model_validate({"n": "x", "extra": 1})
    except ValidationError as e:
        return e
    raise AssertionError("validated")


def _recurse(n: int) -> int:
    return _recurse(n + 1) + 1


def test_the_ladder_turns_every_model_facing_failure_into_an_fs_error() -> None:
    stale = FsError(ErrorCode.FS_STALE, path="/a.txt", reason="read_only")
    assert attempt(_raise(stale), action="edit") is stale
    assert attempt(lambda: 7, action="read") == 7

    deep = attempt(lambda: _recurse(0), action="write")
    assert isinstance(deep, FsError) and deep.reason == "arguments_too_deep"

    refused = attempt(_raise(_validation_error()), action="read")
    assert isinstance(refused, FsError)
    assert (refused.code, refused.reason) == (ErrorCode.FS_INVALID_ARGUMENT,
                                              "invalid_arguments")
    assert refused.message.startswith("invalid arguments for read: n: ")

    raw = attempt(_raise(UnicodeEncodeError("utf-8", "\udcff", 0, 1, "surrogate")),
                  action="grep")
    assert isinstance(raw, FsError)
    assert raw.message == ("a path given to grep holds bytes that are not UTF-8, which this "
                           "storage cannot use in a name.")

    stray = attempt(_raise(PermissionError(13, "denied")), action="write", path="/a.txt")
    assert isinstance(stray, FsError) and stray.code is ErrorCode.FS_PERMISSION_DENIED
    assert "/a.txt" in stray.message


def test_the_ladder_lets_a_bug_through() -> None:
    """A KeyError is fsseam's bug, not a model's mistake: it is not dressed as one."""
    with pytest.raises(KeyError):
        attempt(_raise(KeyError("x")), action="read")


def test_the_result_of_a_refusal() -> None:
    err = FsError(ErrorCode.FS_NOT_FOUND, path="/\udcff.txt", reason="not_found")
    result = failed("read", err)
    assert not result.ok and result.error is not None
    assert result.error.code is ErrorCode.FS_NOT_FOUND
    assert result.text == f"Error [FS_NOT_FOUND]: {result.error.message}"
    # Lone surrogates never reach a surface that must encode the text.
    result.text.encode("utf-8")


# -- the read-only filter --------------------------------------------------------------------


def test_a_read_only_workspace_offers_only_the_tools_that_modify_nothing() -> None:
    ws = _memory(read_only=True)
    tools = ws.context().tools
    assert tools.offered() == READ_TOOLS
    assert tools.offered(["write", "grep", "read"]) == ["grep", "read"]
    assert [t.name for t in offered(ws, [tools.get(n) for n in tools.names()])] == READ_TOOLS
    writable = _memory().context().tools
    assert writable.offered() == writable.names()
    with pytest.raises(LookupError):
        tools.offered(["nope"])


def test_mcp_serves_what_the_filter_offers() -> None:
    ws = _memory(read_only=True)
    assert [t["name"] for t in ToolServer(ws).tool_dicts()] == READ_TOOLS
    assert [t["name"] for t in ToolServer(_memory(), tools="all").tool_dicts()] == (
        _memory().context().tools.names())
    # By default MCP serves the files set (one way to edit).
    assert [t["name"] for t in ToolServer(_memory()).tool_dicts()] == list(TOOL_SETS["files"])


# -- one answer on every surface -------------------------------------------------------------


class Refuses:
    """A plugin whose write hook fails as a broken store or a runaway recursion would."""

    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    @hookimpl
    def fs_write_intent(self, event: WriteIntent) -> None:
        raise self.exc


@pytest.mark.parametrize("exc", [PermissionError(13, "denied"), RecursionError()],
                         ids=["oserror", "recursion"])
def test_a_stray_failure_reads_the_same_on_every_surface(
    exc: BaseException, tmp_path: Path
) -> None:
    ws = _memory(plugins=[Refuses(exc)])
    args = {"file_path": "/new.txt", "content": "x\n"}
    direct = ws.context("a").tools.execute("write", args)
    assert not direct.ok and direct.error is not None
    native = ws.context("b").tools.handle({"type": "function_call", "call_id": "c",
                                           "name": "write", "arguments": json.dumps(args)})
    assert native["output"] == direct.text
    session = ToolServer(ws).open_session()
    served = ToolServer.result_dict(session.execute("write", args))
    assert served["content"][0]["text"] == direct.text and served["isError"]
    assert served["structuredContent"]["error"] == {"code": direct.error.code.value,
                                                    "message": direct.error.message}


def test_the_command_line_answers_as_the_registry(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("x\n")
    args = json.dumps({"file_path": "/a.txt", "content": "y\n"})
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(["call", str(root), "write", args, "--read-only"])
    expected = Workspace(str(root), read_only=True).context().tools.execute(
        "write", json.loads(args))
    assert (status, out.getvalue()) == (1, expected.text + "\n")
