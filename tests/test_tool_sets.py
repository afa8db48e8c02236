"""Named tool sets on the MCP server and the CLI, the docs generated from the tools, and the
one story of what to do after FS_STALE, said in the same words everywhere."""

from __future__ import annotations

import importlib.util
import json
import re
import uuid
from pathlib import Path
from types import ModuleType

import pytest

from fsseam import TOOL_SETS, ErrorCode, Workspace
from fsseam.cli import build_parser, main
from fsseam.conflicts import stale_story
from fsseam.demo import DEMO_DESCRIPTION
from fsseam.mcp import INSTRUCTIONS, ToolServer
from fsseam.messages import render

ROOT = Path(__file__).resolve().parent.parent
FILES = ["read", "write", "edit", "ls", "glob", "grep", "delete", "move", "history", "restore"]
OPENAI = ["apply_patch", "read", "ls", "glob", "grep"]


def _ws(read_only: bool = False) -> Workspace:
    return Workspace(f"memory://sets-{uuid.uuid4().hex[:8]}", {"global_store": False},
                     read_only=read_only, load_entry_points=False)


def _names(server: ToolServer) -> list[str]:
    return [t["name"] for t in server.tool_dicts()]


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen", ROOT / "scripts" / "gen_tool_docs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _flat(text: str) -> str:
    """Markdown and help text as one line: wrapped lines joined, quote marks dropped."""
    return " ".join(line.lstrip("> ").strip() for line in text.splitlines()).replace("  ", " ")


# -- the sets on the MCP server ------------------------------------------------------------


def test_the_server_offers_the_set_it_is_given_in_the_sets_order() -> None:
    ws = _ws()
    assert _names(ToolServer(ws)) == FILES == list(TOOL_SETS["files"])
    assert _names(ToolServer(ws, tools="openai")) == OPENAI
    assert _names(ToolServer(ws, tools="files,multi_edit")) == [*FILES, "multi_edit"]
    assert _names(ToolServer(ws, tools=["anthropic", "read"])) == [
        "str_replace_editor", "memory", "ls", "glob", "grep", "read"]
    assert _names(ToolServer(ws, tools=None)) == ws.context().tools.names()
    assert _names(ToolServer(ws, tools="all")) == list(TOOL_SETS["all"])


def test_a_read_only_workspace_serves_the_read_only_part_of_the_set() -> None:
    ws = _ws(read_only=True)
    assert _names(ToolServer(ws)) == ["read", "ls", "glob", "grep", "history"]
    assert _names(ToolServer(ws, tools="openai")) == ["read", "ls", "glob", "grep"]
    assert _names(ToolServer(ws, tools="anthropic")) == ["ls", "glob", "grep"]


def test_an_unknown_name_is_refused_listing_the_sets_and_the_tools() -> None:
    with pytest.raises(ValueError) as caught:
        ToolServer(_ws(), tools="files,nope")
    assert str(caught.value) == (
        "unknown tool or tool set in 'files,nope'; tool sets: files (read, write, edit, ls, "
        "glob, grep, delete, move, history, restore); anthropic (str_replace_editor, memory, "
        "ls, glob, grep); openai (apply_patch, read, ls, glob, grep); all; tools: read, "
        "write, edit, str_replace_editor, ls, glob, grep, delete, move, multi_edit, "
        "apply_patch, memory, history, restore (a comma list may mix them)"
    )


def test_a_tool_outside_the_set_is_not_listed_but_runs_by_name() -> None:
    server = ToolServer(_ws(), tools="openai")
    assert "write" not in [t["name"] for t in server.tool_dicts()]
    assert server.has_tool("write")
    assert not server.has_tool("wirte")
    assert server.refusal("wirte") == (
        "there is no tool named 'wirte' in the tool set served here (openai: apply_patch, "
        "read, ls, glob, grep). Call one of them."
    )


# -- the sets on the command line ----------------------------------------------------------


def test_mcp_with_an_unknown_set_stops_before_serving(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install -e '.[mcp]'")
    assert main(["mcp", str(tmp_path), "--tools", "opneai"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("fsseam mcp: error: unknown tool or tool set in 'opneai'; tool "
                          "sets: files (read, write, edit, ls, glob, grep, delete, move, ")
    assert "openai (apply_patch, read, ls, glob, grep)" in err
    assert list(tmp_path.iterdir()) == []


def test_schema_prints_the_set_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema", "--tools", "openai", "--dialect", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert [s["name"] for s in printed] == OPENAI
    assert printed == [s for n in OPENAI for s in _ws().context().tools.schemas("json")
                       if s["name"] == n]
    assert main(["schema"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == len(TOOL_SETS["all"])
    assert main(["schema", "--tools", "nope"]) == 2
    assert "unknown tool or tool set in 'nope'" in capsys.readouterr().err


def _help(command: str) -> str:
    sub = build_parser()._subparsers
    assert sub is not None
    action = sub._group_actions[0]
    return _flat(action.choices[command].format_help())  # type: ignore[attr-defined]


def test_call_help_names_every_tool_and_no_count_is_left_stale() -> None:
    assert ", ".join(TOOL_SETS["all"]) in _help("call")
    stale = re.compile(r"\bthe (three|four|five) tools\b", re.IGNORECASE)
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for text in [*(p.read_text(encoding="utf-8") for p in pages),
                 *(_help(c) for c in ("demo", "mcp", "call", "schema"))]:
        assert not stale.search(text)


def test_the_docs_name_each_surfaces_default_set() -> None:
    """What the README and the integration pages say each surface offers by default, and
    the Pydantic AI release they support, is what the code and the extra's pin say."""
    pytest.importorskip("agents")
    pytest.importorskip("pydantic_ai")
    from fsseam.integrations import openai_agents, pydantic_ai
    from fsseam.mcp import DEFAULT_TOOLS as MCP_DEFAULT

    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert MCP_DEFAULT == "files" and "restore; the MCP server's default)" in readme
    both = ("the Agents SDK and Pydantic AI integrations offer `files` with `multi_edit` "
            "and `apply_patch` by default")
    assert both in readme
    default = [*FILES, "multi_edit", "apply_patch"]
    assert openai_agents.DEFAULT_TOOLS == ("files", "multi_edit", "apply_patch")
    assert list(openai_agents.DEFAULT_FUNCTION_TOOLS) == default
    assert list(pydantic_ai.DEFAULT_TOOLS) == default
    assert "gives the ``files`` tool set with ``multi_edit`` and ``apply_patch``" in " ".join(
        (openai_agents.__doc__ or "").split())
    pin = re.search(r'"pydantic-ai-slim>=([\d.]+),<3"',
                    (ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert pin is not None
    page = (ROOT / "docs" / "integrations" / "pydantic-ai.md").read_text(encoding="utf-8")
    assert f"Supported: pydantic-ai-slim {pin.group(1)} up to" in page


# -- docs generated from the tools ---------------------------------------------------------


def test_the_mcp_page_shows_every_tools_annotations() -> None:
    table = _generator().annotation_table()
    assert len(table.splitlines()) == 2 + len(TOOL_SETS["all"])
    assert table in (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")


def test_each_sets_schema_size_is_measured() -> None:
    gen = _generator()
    schemas = {s["name"]: s for s in _ws().context().tools.schemas("json")}
    openai = sum(len(json.dumps(schemas[n], separators=(",", ":"),
                                ensure_ascii=False).encode()) for n in OPENAI)
    row = next(line for line in gen.sets_section() if line.startswith("| `openai` |"))
    assert row.endswith(f"| {openai:,} | {openai // 4:,} |")


# -- one story after FS_STALE --------------------------------------------------------------


def test_the_story_is_told_in_the_same_words_everywhere() -> None:
    story = stale_story()
    for advice in (render("advice_retry"), render("advice_adjust"), render("advice_reread_edit"),
                   render("advice_reread_whole", details={"action": "write"})):
        assert advice in story
    assert story in INSTRUCTIONS
    assert story in DEMO_DESCRIPTION
    assert story in _help("demo")
    for page in ("quickstart.md", "mcp.md"):
        assert story in _flat((ROOT / "docs" / page).read_text(encoding="utf-8")), page


def test_each_refusal_ends_with_its_part_of_the_story() -> None:
    """The advice a real refusal ends with, for each case the story names."""
    ws = _ws()
    a, b = ws.context("a"), ws.context("b")
    assert a.tools.execute("write", {"file_path": "/f.txt", "content": "one\ntwo\n"}).ok
    assert b.tools.execute("read", {"file_path": "/f.txt"}).ok

    def change(old: str, new: str) -> None:
        assert b.tools.execute("edit", {"file_path": "/f.txt", "old_string": old,
                                        "new_string": new}).ok

    change("two", "TWO")
    unique = a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "one",
                                      "new_string": "1"})
    change("one", "ONE")
    gone = a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "one",
                                    "new_string": "1"})
    change("ONE", "one")
    whole = a.tools.execute("write", {"file_path": "/f.txt", "content": "mine\n"})
    for res in (unique, gone, whole):
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert unique.text.endswith("Your old_string still occurs exactly once in it. "
                                + render("advice_retry"))
    assert gone.text.endswith("Your old_string no longer occurs in it. "
                              + render("advice_adjust"))
    assert whole.text.endswith(render("advice_reread_whole", details={"action": "write"}))
    assert ws.backend.read("f.txt").data == b"one\nTWO\n"
