"""Notebook display of tool results (``_repr_markdown_``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .result import ToolResult


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def result_markdown(result: ToolResult) -> str:
    if not result.ok:
        assert result.error is not None
        return f"**{result.tool}** failed: `{result.error.code.value}`\n\n{result.error.message}"
    parts = [f"**{result.tool}** ok", _fence(result.text)]
    diff = getattr(result.value, "diff", None)
    if diff:
        parts.append(_fence(diff.rstrip("\n"), "diff"))
    return "\n\n".join(parts)
