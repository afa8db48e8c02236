"""The providers' native tool shapes, checked against the ``openai`` and ``anthropic``
packages' own type definitions: calls are built from their types, answers validated with
them (the core never imports either package)."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
from anthropic.types import (
    MemoryTool20250818Param,
    ToolParam,
    ToolResultBlockParam,
    ToolTextEditor20250728Param,
    ToolUseBlock,
)
from anthropic.types.beta import (
    BetaMemoryTool20250818CreateCommand,
    BetaMemoryTool20250818DeleteCommand,
    BetaMemoryTool20250818InsertCommand,
    BetaMemoryTool20250818RenameCommand,
    BetaMemoryTool20250818StrReplaceCommand,
    BetaMemoryTool20250818ViewCommand,
)
from openai.types.responses import (
    ApplyPatchToolParam,
    FunctionToolParam,
    ResponseApplyPatchToolCall,
    ResponseFunctionToolCall,
)
from openai.types.responses.response_apply_patch_tool_call import (
    OperationCreateFile,
    OperationDeleteFile,
    OperationUpdateFile,
)
from openai.types.responses.response_input_item_param import (
    ApplyPatchCallOutput,
    FunctionCallOutput,
)
from pydantic import TypeAdapter

from fsseam import UnknownToolError, Workspace
from fsseam.versions import Overwrite

SRC = Path(__file__).resolve().parents[1] / "src"


def valid(kind: Any, value: Any) -> None:
    """``value`` has the shape of the SDK's TypedDict ``kind`` (extra keys refused)."""
    TypeAdapter(kind).validate_python(value, strict=False)
    annotations: dict[str, Any] = {}
    for base in reversed(kind.__mro__):
        annotations.update(getattr(base, "__annotations__", {}))
    assert set(value) <= set(annotations), set(value) - set(annotations)


def test_the_core_never_imports_the_sdks() -> None:
    for path in SRC.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] not in ("openai", "anthropic"), (path, name)


# -- Anthropic -------------------------------------------------------------------------------
def test_anthropic_native_definitions() -> None:
    tools = Workspace("memory://native-a").context("a").tools
    defs = tools.native_tools("anthropic", max_characters=2000)
    by_name = {d["name"]: d for d in defs}
    memory = by_name["memory"]
    editor = by_name["str_replace_based_edit_tool"]
    assert memory == {"type": "memory_20250818", "name": "memory"}
    assert editor == {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool",
                      "max_characters": 2000}
    valid(MemoryTool20250818Param, memory)
    valid(ToolTextEditor20250728Param, editor)
    assert "str_replace_editor" not in by_name
    for d in defs:
        if d not in (memory, editor):
            valid(ToolParam, d)
    assert tools.native_tools("anthropic")[3] == {
        "type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}


def _use(name: str, payload: dict[str, Any], n: int = 1) -> ToolUseBlock:
    return ToolUseBlock(id=f"toolu_{n:02d}", name=name, input=payload, type="tool_use")


def test_memory_tool_calls_built_from_the_sdk_types() -> None:
    ws = Workspace("memory://native-memory")
    tools = ws.context("a").tools
    tools.native_tools("anthropic")
    calls = [
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories"),
        BetaMemoryTool20250818CreateCommand(command="create", path="/memories/a.md",
                                            file_text="one\n"),
        BetaMemoryTool20250818InsertCommand(command="insert", path="/memories/a.md",
                                            insert_line=1, insert_text="two"),
        BetaMemoryTool20250818StrReplaceCommand(command="str_replace", path="/memories/a.md",
                                                old_str="two", new_str="TWO"),
        BetaMemoryTool20250818ViewCommand(command="view", path="/memories/a.md",
                                          view_range=[2, -1]),
    ]
    answers = []
    for n, cmd in enumerate(calls, start=1):
        block = tools.handle(_use("memory", cmd.model_dump(exclude_none=True), n))
        valid(ToolResultBlockParam, block)
        assert block["tool_use_id"] == f"toolu_{n:02d}"
        assert block["is_error"] is False, block
        answers.append(block["content"])
    assert answers[1] == "File created successfully at: /memories/a.md"
    assert answers[4] == "Here's the content of /memories/a.md with line numbers:\n     2\tTWO"
    assert ws.backend.read("memories/a.md").data == b"one\nTWO\n"
    # outside /memories: an error result the model can read
    bad = tools.handle(_use("memory", BetaMemoryTool20250818CreateCommand(
        command="create", path="/etc/x", file_text="x").model_dump(), 9))
    valid(ToolResultBlockParam, bad)
    assert bad["is_error"] is True
    assert bad["content"].startswith("Error [FS_OUTSIDE_ROOT]: /etc/x is not under /memories")


def test_memory_rename_and_delete_through_native_calls(root: Path) -> None:
    ws = Workspace(str(root))
    tools = ws.context("a").tools
    ws.backend.write("memories/x.md", b"x\n", Overwrite())
    rename = BetaMemoryTool20250818RenameCommand(command="rename", old_path="/memories/x.md",
                                                 new_path="/memories/y.md")
    res = tools.handle(_use("memory", rename.model_dump()))
    assert res["is_error"] and "FS_NOT_OBSERVED" in res["content"]
    view = BetaMemoryTool20250818ViewCommand(command="view", path="/memories/x.md")
    assert not tools.handle(_use("memory", view.model_dump(exclude_none=True)))["is_error"]
    res = tools.handle(_use("memory", rename.model_dump()))
    assert res["content"] == "Successfully renamed /memories/x.md to /memories/y.md"
    delete = BetaMemoryTool20250818DeleteCommand(command="delete", path="/memories/y.md")
    res = tools.handle(_use("memory", delete.model_dump()))
    assert res["content"] == "Successfully deleted /memories/y.md"
    assert not (root / "memories" / "y.md").exists()


def test_the_native_text_editor_honours_max_characters() -> None:
    ws = Workspace("memory://native-editor")
    ws.backend.write("long.txt", "".join(f"line {i}\n" for i in range(500)).encode(),
                     Overwrite())
    tools = ws.context("a").tools
    tools.native_tools("anthropic", max_characters=300)
    block = tools.handle(_use("str_replace_based_edit_tool",
                              {"command": "view", "path": "/long.txt"}))
    valid(ToolResultBlockParam, block)
    text = block["content"]
    assert len(text) <= 300 + 120, len(text)  # the rows fit; the notice says how to go on
    assert "To see more, view with view_range" in text
    res = tools.handle(_use("str_replace_based_edit_tool", {
        "command": "str_replace", "path": "/long.txt", "old_str": "line 7\n",
        "new_str": "line seven\n"}))
    assert res["is_error"] is False, res
    # the function form stays as it was configured
    plain = tools.execute("str_replace_editor", {"command": "view", "path": "/long.txt"})
    assert len(plain.text) > 3000


# -- OpenAI ----------------------------------------------------------------------------------
def test_openai_native_definitions() -> None:
    defs = Workspace("memory://native-o").context("a").tools.native_tools("openai")
    patch = [d for d in defs if d["type"] == "apply_patch"]
    assert patch == [{"type": "apply_patch"}]
    valid(ApplyPatchToolParam, patch[0])
    for d in defs:
        if d["type"] == "function":
            valid(FunctionToolParam, d)
    assert "apply_patch" not in {d.get("name") for d in defs}


def test_native_definitions_of_a_tool_set() -> None:
    """A surface hands the provider one tool set, native where it can be: the editor and
    memory tool natively for ``anthropic``, the patch tool natively for ``openai``."""
    tools = Workspace("memory://native-set").context("a").tools
    anthropic = tools.native_tools("anthropic", "anthropic", max_characters=500)
    assert [d["name"] for d in anthropic] == [
        "str_replace_based_edit_tool", "memory", "ls", "glob", "grep"]
    assert anthropic[0]["max_characters"] == 500
    openai = tools.native_tools("openai", "openai")
    assert [d.get("name", d["type"]) for d in openai] == [
        "apply_patch", "read", "ls", "glob", "grep"]
    assert openai[0] == {"type": "apply_patch"}
    assert [d["name"] for d in tools.native_tools("openai", ["read", "grep"])] == [
        "read", "grep"]
    with pytest.raises(UnknownToolError):
        tools.native_tools("openai", "nonsense")
    read_only = Workspace("memory://native-set", read_only=True).context("a").tools
    assert [d.get("name", d["type"]) for d in read_only.native_tools("openai", "openai")] == [
        "read", "ls", "glob", "grep"]


def _call(op: Any, n: int = 1) -> ResponseApplyPatchToolCall:
    return ResponseApplyPatchToolCall(id=f"apc_{n}", call_id=f"call_{n}", operation=op,
                                      status="completed", type="apply_patch_call")


def test_apply_patch_calls_built_from_the_sdk_types(root: Path) -> None:
    ws = Workspace(str(root))
    (root / "lib").mkdir()
    (root / "lib" / "fib.py").write_bytes(
        b"def fib(n):\r\n\tif n <= 1:\r\n\t\treturn n\r\n\treturn fib(n-1) + fib(n-2)\r\n")
    (root / "old.txt").write_bytes(b"old\n")
    ctx = ws.context("a")
    for path in ("/lib/fib.py", "/old.txt"):
        assert ctx.tools.execute("read", {"file_path": path}).ok
    update = _call(OperationUpdateFile(
        type="update_file", path="lib/fib.py",
        diff="@@\n-def fib(n):\n+def fibonacci(n):\n \tif n <= 1:\n \t\treturn n\n"
             "-\treturn fib(n-1) + fib(n-2)\n+\treturn fibonacci(n-1) + fibonacci(n-2)\n"), 1)
    create = _call(OperationCreateFile(type="create_file", path="lib/new.py",
                                       diff="+import fib\n+\n+print(fib)\n"), 2)
    delete = _call(OperationDeleteFile(type="delete_file", path="old.txt"), 3)
    out = ctx.tools.handle(update)
    valid(ApplyPatchCallOutput, out)
    assert out == {"type": "apply_patch_call_output", "call_id": "call_1",
                   "status": "completed",
                   "output": "Success. Updated the following files:\nM /lib/fib.py"}
    assert (root / "lib" / "fib.py").read_bytes() == (
        b"def fibonacci(n):\r\n\tif n <= 1:\r\n\t\treturn n\r\n"
        b"\treturn fibonacci(n-1) + fibonacci(n-2)\r\n")
    outs = ctx.tools.handle_apply_patch_calls([create, delete])
    for o in outs:
        valid(ApplyPatchCallOutput, o)
        assert o["status"] == "completed", o
    assert [o["call_id"] for o in outs] == ["call_2", "call_3"]
    assert (root / "lib" / "new.py").read_bytes() == b"import fib\n\nprint(fib)\n"
    assert not (root / "old.txt").exists()


def test_apply_patch_calls_of_one_turn_are_all_or_nothing(root: Path) -> None:
    ws = Workspace(str(root))
    (root / "a.txt").write_bytes(b"a\n")
    (root / "b.txt").write_bytes(b"b\n")
    ctx = ws.context("a")
    for path in ("/a.txt", "/b.txt"):
        assert ctx.tools.execute("read", {"file_path": path}).ok
    good = _call(OperationUpdateFile(type="update_file", path="a.txt", diff="@@\n-a\n+A\n"), 1)
    bad = _call(OperationUpdateFile(type="update_file", path="b.txt", diff="@@\n-x\n+X\n"), 2)
    outs = ctx.tools.handle_apply_patch_calls([good, bad])
    for o in outs:
        valid(ApplyPatchCallOutput, o)
        assert o["status"] == "failed"
        assert o["output"].startswith("Error [FS_NO_MATCH]: hunk 1 of /b.txt (line 1 of the "
                                      "diff) does not match the file")
        assert o["output"].endswith("Nothing was applied: every file is as it was.")
    assert (root / "a.txt").read_bytes() == b"a\n"
    assert (root / "b.txt").read_bytes() == b"b\n"
    # a create over an existing file fails the call, and says why
    out = ctx.tools.handle(_call(OperationCreateFile(type="create_file", path="a.txt",
                                                     diff="+x\n"), 3))
    assert out["status"] == "failed" and "FS_ALREADY_EXISTS" in out["output"]


def test_function_calls_of_the_responses_api() -> None:
    ws = Workspace("memory://native-fn")
    tools = ws.context("a").tools
    call = ResponseFunctionToolCall(type="function_call", call_id="call_9", name="write",
                                    arguments='{"file_path": "/x.txt", "content": "x"}')
    out = tools.handle(call)
    valid(FunctionCallOutput, out)
    assert out == {"type": "function_call_output", "call_id": "call_9",
                   "output": "Created /x.txt (1 line)."}
    unknown = tools.handle(ResponseFunctionToolCall(type="function_call", call_id="call_10",
                                                    name="rm_rf", arguments="{}"))
    assert unknown["output"].startswith("Error [FS_INVALID_ARGUMENT]: there is no tool named "
                                        "'rm_rf'. The tools are: read, write")
