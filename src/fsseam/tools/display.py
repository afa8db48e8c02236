"""Notebook display of tool results (``_repr_markdown_``)."""

from __future__ import annotations

import re
from typing import Any

from ..errors import ErrorCode
from ..messages import Reason, render

# A unified diff inside a refusal's text (FS_STALE's "what changed"): from a hunk header,
# every line a hunk may hold; the first other line (a sentence, a blank line) ends it.
_HUNK_HEADER = re.compile(r"@@ -\d+(,\d+)? \+\d+(,\d+)? @@")
_HUNK_LINE = (" ", "+", "-", "\\", "@@ ")


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _message_markdown(message: str) -> str:
    """A refusal's text as markdown: its sentences as they are, each diff in it fenced, so
    a notebook shows the diff's lines as lines (not run together into one paragraph)."""
    parts: list[str] = []
    prose: list[str] = []
    diff: list[str] = []
    for line in message.split("\n"):
        if diff and line.startswith(_HUNK_LINE):
            diff.append(line)
            continue
        if diff:
            parts.append(_fence("\n".join(diff), "diff"))
            diff = []
        if _HUNK_HEADER.match(line):
            if prose:
                parts.append("\n".join(prose))
                prose = []
            diff.append(line)
        else:
            prose.append(line)
    if diff:
        parts.append(_fence("\n".join(diff), "diff"))
    if prose:
        parts.append("\n".join(prose))
    return "\n\n".join(part for part in parts if part.strip())


def result_markdown(
    tool: str, text: str, value: Any, error: tuple[ErrorCode, str] | None
) -> str:
    """Markdown for one result: the model's text, and the diff of a change (of a refused
    one too: the diff in its message, fenced)."""
    if error is not None:
        code, message = error
        failed = render(Reason.display_failed, details={"tool": tool, "code": code.value})
        return f"{failed}\n\n{_message_markdown(message)}"
    parts = [render(Reason.display_ok, details={"tool": tool}), _fence(text)]
    diff = getattr(value, "diff", None)
    if diff:
        parts.append(_fence(diff.rstrip("\n"), "diff"))
    return "\n\n".join(parts)
