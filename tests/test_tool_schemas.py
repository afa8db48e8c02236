"""The tool schemas are public API: pinned by snapshots, stable across processes."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from fsseam import Workspace

from .snapshot import check

DIALECTS = ["openai", "anthropic", "json"]


def schemas(dialect: str) -> list[dict[str, Any]]:
    return Workspace("memory://s").context("a").tools.schemas(dialect=dialect)  # type: ignore[arg-type]


def params(dialect: str, name: str) -> dict[str, Any]:
    for s in schemas(dialect):
        if dialect == "openai":
            if s["function"]["name"] == name:
                return s["function"]["parameters"]  # type: ignore[no-any-return]
        elif s["name"] == name:
            key = "input_schema" if dialect == "anthropic" else "parameters"
            return s[key]  # type: ignore[no-any-return]
    raise AssertionError(name)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_schema_snapshot(dialect: str) -> None:
    check(f"schemas-{dialect}.json", json.dumps(schemas(dialect), indent=2) + "\n")


def test_names_registered_and_snake_case() -> None:
    names = Workspace("memory://s").context("a").tools.names()
    assert names == ["read", "write", "edit", "str_replace_editor", "ls", "glob", "grep",
                     "delete", "move", "multi_edit", "apply_patch", "memory", "history",
                     "restore"]


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize(
    ("tool", "required", "optional"),
    [
        ("read", {"file_path"}, {"offset", "limit"}),
        ("write", {"file_path", "content"}, set()),
        ("edit", {"file_path", "old_string", "new_string"}, {"replace_all"}),
        (
            "str_replace_editor",
            {"command", "path"},
            {"file_text", "old_str", "new_str", "insert_line", "insert_text", "view_range"},
        ),
        ("ls", set(), {"path", "include_ignored"}),
        ("glob", {"pattern"}, {"path", "include_ignored"}),
        (
            "grep",
            {"pattern"},
            {"path", "glob", "output_mode", "case_insensitive", "context_lines", "max_results",
             "include_ignored"},
        ),
        ("delete", {"file_path"}, set()),
        ("move", {"source_path", "destination_path"}, set()),
        ("multi_edit", {"file_path", "edits"}, set()),
        ("apply_patch", {"patch"}, set()),
        (
            "memory",
            {"command"},
            {"path", "view_range", "file_text", "old_str", "new_str", "insert_line",
             "insert_text", "old_path", "new_path"},
        ),
        ("history", {"file_path"}, {"limit"}),
        ("restore", {"file_path", "version"}, set()),
    ],
)
def test_required_and_optional_arguments(
    dialect: str, tool: str, required: set[str], optional: set[str]
) -> None:
    p = params(dialect, tool)
    assert p["type"] == "object"
    assert p["additionalProperties"] is False
    assert set(p["required"]) == required
    assert set(p["properties"]) == required | optional
    for prop in p["properties"].values():
        assert "anyOf" not in prop and "title" not in prop  # shapes every API accepts
        assert prop.get("description")


def test_argument_types() -> None:
    p = params("json", "read")["properties"]
    assert (p["file_path"]["type"], p["offset"]["type"], p["limit"]["type"]) == (
        "string", "integer", "integer")
    assert p["offset"]["minimum"] == 1 and p["limit"]["minimum"] == 1
    e = params("json", "edit")["properties"]
    assert e["old_string"]["minLength"] == 1
    assert e["replace_all"] == {
        "default": False,
        "description": "Replace every occurrence of old_string (default false).",
        "type": "boolean",
    }
    ed = params("json", "str_replace_editor")["properties"]
    assert ed["command"]["enum"] == ["view", "create", "str_replace", "insert", "undo_edit"]
    h = params("json", "history")["properties"]
    assert (h["limit"]["type"], h["limit"]["minimum"], h["limit"]["maximum"]) == (
        "integer", 1, 100)
    r = params("json", "restore")["properties"]
    assert (r["version"]["type"], r["version"]["minLength"]) == ("string", 1)
    assert ed["insert_line"]["type"] == "integer"
    assert ed["view_range"] == {
        "items": {"type": "integer"},
        "type": "array",
        "description": ed["view_range"]["description"],
    }


def test_dialect_shapes() -> None:
    o = schemas("openai")[0]
    assert set(o) == {"type", "function"} and o["type"] == "function"
    assert set(o["function"]) == {"name", "description", "parameters"}
    a = schemas("anthropic")[0]
    assert set(a) == {"name", "description", "input_schema"}
    with pytest.raises(ValueError, match="unknown schema dialect"):
        Workspace("memory://s").context("a").tools.schemas(dialect="xml")  # type: ignore[arg-type]


def test_nested_and_command_schemas() -> None:
    edits = params("json", "multi_edit")["properties"]["edits"]
    assert edits["type"] == "array" and edits["minItems"] == 1
    item = edits["items"]
    assert "$ref" not in json.dumps(params("json", "multi_edit"))  # inlined for every API
    assert item["required"] == ["old_string", "new_string"]
    assert item["additionalProperties"] is False
    assert set(item["properties"]) == {"old_string", "new_string", "replace_all"}
    mem = params("json", "memory")["properties"]
    assert mem["command"]["enum"] == ["view", "create", "str_replace", "insert", "delete",
                                      "rename"]


@pytest.mark.parametrize("tool", ["multi_edit", "apply_patch", "memory"])
def test_change_tools_state_exact_matching_and_all_or_nothing(tool: str) -> None:
    desc = next(s["description"] for s in schemas("json") if s["name"] == tool).lower()
    assert "fs_not_observed" in desc and "fs_stale" in desc
    if tool != "memory":
        assert "exact" in desc and "no fuzzy matching" in desc
    assert "none is applied" in desc or "no file is changed" in desc or "all or nothing" in desc


@pytest.mark.parametrize("tool", ["read", "write", "edit", "str_replace_editor"])
def test_descriptions_state_the_observation_policy(tool: str) -> None:
    desc = next(s["description"] for s in schemas("json") if s["name"] == tool)
    low = desc.lower()
    if tool == "read":
        assert "modify" in low and "read again" in low
    else:
        assert "fs_not_observed" in low and "fs_stale" in low
    if tool in ("write", "str_replace_editor"):
        assert "needs no" in low  # new files need no read


def test_schemas_byte_stable_across_calls_and_processes() -> None:
    here = json.dumps(schemas("anthropic"))
    assert here == json.dumps(schemas("anthropic"))
    code = (
        "import json; from fsseam import Workspace; "
        "print(json.dumps(Workspace('memory://z').context('q').tools.schemas('anthropic')))"
    )
    other = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
    ).stdout.strip()
    assert other == here


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ({"file_path": "/a", "old_string": "", "new_string": "x"}, "old_string is empty"),
        ({"file_path": "/a", "new_string": "x"}, "missing required argument 'old_string'"),
        ({"file_path": "/a", "old_string": "a", "new_string": "b", "bogus": 1},
         "unexpected argument 'bogus'"),
        ({"file_path": "/a", "old_string": "a", "new_string": "b", "replace_all": "maybe"},
         "replace_all"),
    ],
)
def test_invalid_arguments_name_the_field(args: dict[str, Any], needle: str) -> None:
    res = Workspace("memory://s", {"global_store": False}).context("a").tools.execute("edit", args)
    assert not res.ok and res.error is not None
    assert res.error.code.value == "FS_INVALID_ARGUMENT"
    assert needle in res.text


def test_replace_all_defaults_to_false() -> None:
    ctx = Workspace("memory://s", {"global_store": False}).context("a")
    ctx.tools.execute("write", {"file_path": "/a", "content": "x x"})
    res = ctx.tools.execute("edit", {"file_path": "/a", "old_string": "x", "new_string": "y"})
    assert res.error is not None and res.error.code.value == "FS_MULTIPLE_MATCHES"


def test_unknown_tool_is_a_result_listing_the_tools() -> None:
    ctx = Workspace("memory://s", {"global_store": False}).context("a")
    res = ctx.tools.execute("remove_file", {"file_path": "/a"})
    assert not res.ok and res.value is None
    assert res.error is not None and res.error.code.value == "FS_INVALID_ARGUMENT"
    assert res.text == (
        "Error [FS_INVALID_ARGUMENT]: there is no tool named 'remove_file'. The tools are: "
        "read, write, edit, str_replace_editor, ls, glob, grep, delete, move, multi_edit, "
        "apply_patch, memory, history, restore. Call one of them."
    )
    assert str(res) == res.text


def test_unknown_tool_raises_in_strict_mode_and_from_get() -> None:
    from fsseam import UnknownToolError

    tools = Workspace("memory://s", {"global_store": False}).context("a").tools
    with pytest.raises(UnknownToolError) as info:
        tools.execute("remove_file", {}, strict=True)
    assert "read, write, edit, str_replace_editor, ls" in str(info.value)
    with pytest.raises(UnknownToolError):
        tools.get("remove_file")
    assert tools.execute("read", {"file_path": "/none"}, strict=True).error is not None


def test_str_of_a_result_is_the_model_text() -> None:
    ctx = Workspace("memory://s", {"global_store": False}).context("a")
    res = ctx.tools.execute("write", {"file_path": "/a.md", "content": "x\n"})
    assert str(res) == "Created /a.md (1 line)."
    assert f"{res}" == res.text
    assert repr(res).startswith("ToolResult(tool='write', ok=True")


def test_tool_annotations() -> None:
    tools = Workspace("memory://s", {"global_store": False}).context("a").tools
    hints = {n: tools.get(n).annotations.mcp() for n in tools.names()}
    assert hints == {
        "read": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                 "openWorldHint": False},
        "write": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
                  "openWorldHint": False},
        "edit": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                 "openWorldHint": False},
        "str_replace_editor": {"readOnlyHint": False, "destructiveHint": True,
                               "idempotentHint": False, "openWorldHint": False},
        **{n: {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
               "openWorldHint": False} for n in ("ls", "glob", "grep")},
        **{n: {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
               "openWorldHint": False} for n in ("delete", "move", "multi_edit", "apply_patch",
                                                 "memory")},
        "history": {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True,
                    "openWorldHint": False},
        # Restoring one version twice leaves the file as the first call did.
        "restore": {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": True,
                    "openWorldHint": False},
    }


def test_arguments_as_json_string() -> None:
    ctx = Workspace("memory://s", {"global_store": False}).context("a")
    res = ctx.tools.execute("write", '{"file_path": "/j.txt", "content": "j"}')
    assert res.ok
    bad = ctx.tools.execute("write", "{not json")
    assert bad.error is not None and bad.error.code.value == "FS_INVALID_ARGUMENT"
