"""Generate docs/tools.md from the tool schemas (a test keeps the two in step).

    python scripts/gen_tool_docs.py > docs/tools.md

``annotation_table()`` is the table of MCP annotations in docs/mcp.md
(tests/test_tool_sets.py checks that the page holds it as generated here).
"""

from __future__ import annotations

import json
from typing import Any

from fsseam import TOOL_SETS, Workspace
from fsseam.mcp import DEFAULT_TOOLS

BYTES_PER_TOKEN = 4
"""The token estimate: JSON bytes / 4 (no tokenizer is a dependency; for English prose and
JSON keys the providers' tokenizers average close to four bytes a token)."""

# Which set each surface offers when not told otherwise (names= / --tools change it).
SURFACE_DEFAULTS = (
    ("MCP (`fsseam mcp`, `ToolServer`)", f"`{DEFAULT_TOOLS}` (what the server lists; a client "
     "calling another tool by name still runs it)"),
    ("OpenAI Agents SDK (`fsseam_tools()`)", "`files`, `multi_edit`, `apply_patch` (what it "
     "always offered; `names=\"openai\"` for the OpenAI-trained shape)"),
    ("Pydantic AI (`FsseamToolset`)", "`files`, `multi_edit`, `apply_patch` (what it always "
     "offered; `names=\"files\"` for one editor)"),
    ("deepagents (`FsseamBackend`)", "none: deepagents' own tools (`read_file`, `edit_file`, "
     "...) run over fsseam"),
    ("`fsseam call`", "any tool"),
    ("`fsseam schema`", "`all` (`--tools` chooses)"),
)


def _schemas() -> list[dict[str, Any]]:
    return Workspace("memory://docs").context("docs").tools.schemas(dialect="json")


def schema_bytes(schema: dict[str, Any]) -> int:
    """The size of one tool's schema as a model API receives it: compact JSON, UTF-8."""
    text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
    return len(text.encode("utf-8"))


def sets_section() -> list[str]:
    sizes = {s["name"]: schema_bytes(s) for s in _schemas()}
    out = [
        "## Tool sets",
        "",
        "A surface offers one named set of tools (or a comma list mixing set and tool names,",
        "`files,multi_edit`): `fsseam mcp --tools NAME`, `fsseam schema --tools NAME`,",
        "`ctx.tools.offered(names)` and the integrations' `names=`. Five tools edit a file in",
        "overlapping ways; a set gives the model one, in the shape it was trained on. Size:",
        "the compact JSON of the set's schemas as `schemas(dialect=\"json\")` returns them;",
        f"tokens estimated as bytes / {BYTES_PER_TOKEN}.",
        "",
        "| set | tools | schema bytes | ~tokens |",
        "| --- | --- | --- | --- |",
    ]
    for name, tools in TOOL_SETS.items():
        total = sum(sizes[t] for t in tools)
        listed = ", ".join(f"`{t}`" for t in tools)
        out.append(f"| `{name}` | {listed} | {total:,} | {total // BYTES_PER_TOKEN:,} |")
    out += ["", "| surface | default set |", "| --- | --- |"]
    out += [f"| {surface} | {default} |" for surface, default in SURFACE_DEFAULTS]
    return [*out, ""]


def annotation_table() -> str:
    """Every tool's MCP annotations, as docs/mcp.md shows them."""
    registry = Workspace("memory://docs").context("docs").tools
    hints = ("readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint")
    out = ["| tool | " + " | ".join(f"`{h}`" for h in hints) + " |",
           "| --- |" + " --- |" * len(hints)]
    for name in registry.names():
        wire = registry.get(name).annotations.mcp()
        out.append(f"| `{name}` | " + " | ".join(str(wire[h]).lower() for h in hints) + " |")
    return "\n".join(out)


def render() -> str:
    tools = _schemas()
    out = [
        "# Tools reference",
        "",
        "Generated from the schemas by `scripts/gen_tool_docs.py`; the JSON shown is exactly",
        'what `ctx.tools.schemas(dialect="json")` returns (`"openai"` wraps it as',
        '`{"type": "function", "function": ...}`, `"anthropic"` names the schema',
        "`input_schema`).",
        "",
        *sets_section(),
    ]
    for tool in tools:
        params: dict[str, Any] = tool["parameters"]
        required = set(params["required"])
        out += [f"## `{tool['name']}`", "", tool["description"], "", "| argument | type | "
                "required | description |", "| --- | --- | --- | --- |"]
        for name, prop in params["properties"].items():
            kind = prop.get("type", "")
            if "enum" in prop:
                kind = " \\| ".join(f"`{v}`" for v in prop["enum"])
            desc = prop.get("description", "").replace("|", "\\|").replace("\n", " ")
            out.append(f"| `{name}` | {kind} | {'yes' if name in required else 'no'} | {desc} |")
        out += ["", "```json", json.dumps(tool, indent=2), "```", ""]
    return "\n".join(out)


if __name__ == "__main__":
    print(render(), end="")
