"""Notebook display of tool results (``_repr_markdown_``)."""

from __future__ import annotations

from typing import Any

from ..errors import ErrorCode
from ..messages import Reason, render


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def result_markdown(
    tool: str, text: str, value: Any, error: tuple[ErrorCode, str] | None
) -> str:
    """Markdown for one result: the model's text, and the diff of a change."""
    if error is not None:
        code, message = error
        failed = render(Reason.display_failed, details={"tool": tool, "code": code.value})
        return f"{failed}\n\n{message}"
    parts = [render(Reason.display_ok, details={"tool": tool}), _fence(text)]
    diff = getattr(value, "diff", None)
    if diff:
        parts.append(_fence(diff.rstrip("\n"), "diff"))
    return "\n\n".join(parts)
