"""Generate docs/tools.md from the tool schemas (a test keeps the two in step).

    python scripts/gen_tool_docs.py > docs/tools.md
"""

from __future__ import annotations

import json
from typing import Any

from fsseam import Workspace


def render() -> str:
    tools = Workspace("memory://docs").context("docs").tools.schemas(dialect="json")
    out = [
        "# Tools reference",
        "",
        "Generated from the schemas by `scripts/gen_tool_docs.py`; the JSON shown is exactly",
        'what `ctx.tools.schemas(dialect="json")` returns (`"openai"` wraps it as',
        '`{"type": "function", "function": ...}`, `"anthropic"` names the schema',
        "`input_schema`).",
        "",
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
