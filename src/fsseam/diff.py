"""Unified diffs for presentation surfaces (diff cards), cheap on large files."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from functools import cached_property
from typing import Self

from pydantic import BaseModel, PrivateAttr, computed_field

__all__ = ["LazyDiff", "unified_diff"]

_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")
CONTEXT = 3
MAX_DIFF_WORK = 250_000
"""Above this many line pairs in the changed middle, difflib's matching (quadratic at
worst) is skipped: the change is shown as one hunk replacing the old lines with the new."""


def unified_diff(path: str, old: str, new: str) -> str:
    """A unified diff of two texts (``\\n`` lines), ``a/PATH`` -> ``b/PATH``.

    Common leading and trailing lines are trimmed before difflib runs, so an edit of one
    line in a large file costs a diff of a few lines, not of the whole file.
    """
    if old == new:
        return ""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    head = 0
    limit = min(len(a), len(b))
    while head < limit and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < limit - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    start = max(0, head - CONTEXT)
    a_mid = a[start : len(a) - max(0, tail - CONTEXT)]
    b_mid = b[start : len(b) - max(0, tail - CONTEXT)]
    if len(a_mid) * len(b_mid) > MAX_DIFF_WORK:
        return _one_hunk(path, a_mid, b_mid, start)
    out: list[str] = []
    for line in difflib.unified_diff(
        a_mid, b_mid, fromfile=f"a{path}", tofile=f"b{path}", n=CONTEXT
    ):
        m = _HUNK.match(line)
        if m:
            line = (
                f"@@ -{int(m.group(1)) + start}{m.group(2) or ''} "
                f"+{int(m.group(3)) + start}{m.group(4) or ''} @@\n"
            )
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        out.append(line)
    return "".join(out)


def _one_hunk(path: str, a: list[str], b: list[str], start: int) -> str:
    def span(first: int, n: int) -> str:
        return f"{first + 1 if n else first},{n}" if n != 1 else f"{first + 1}"

    out = [
        f"--- a{path}\n",
        f"+++ b{path}\n",
        f"@@ -{span(start, len(a))} +{span(start, len(b))} @@\n",
    ]
    for sign, lines in (("-", a), ("+", b)):
        if not lines:
            continue
        # Prefix every line in C: only the last line can lack its newline.
        text = "".join(lines)
        if text.endswith("\n"):
            out.append(sign + text[:-1].replace("\n", "\n" + sign) + "\n")
        else:
            out.append(sign + text.replace("\n", "\n" + sign) + "\n\\ No newline at end of file\n")
    return "".join(out)


class LazyDiff(BaseModel):
    """Mixin for models that carry the diff of a change: computed on first access.

    Most writes are never shown to a person, so the diff costs nothing until a surface
    (a plugin, a notebook, an MCP client's structured content) asks for it.
    """

    _diff_args: tuple[str, str | Callable[[], str | None] | None, str] | None = PrivateAttr(
        default=None)

    def with_diff(self, path: str, old: str | Callable[[], str | None] | None, new: str
                  ) -> Self:
        """Attach the texts; ``old`` None means the old text is unknown (no diff), a
        callable gives it when the diff is asked for (decoding it costs a write time that
        most writes never need)."""
        self._diff_args = (path, old, new)
        return self

    def new_text(self) -> str | None:
        """The text the change left, when the seam attached it (None: not attached, e.g. a
        write of bytes that are no text): for a plugin that indexes what was written."""
        return None if self._diff_args is None else self._diff_args[2]

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def diff(self) -> str | None:
        """Unified diff ``a/PATH`` -> ``b/PATH`` of the change (None if the old text was not
        known without an extra request)."""
        if self._diff_args is None:
            return None
        path, old, new = self._diff_args
        if callable(old):
            old = old()
        return None if old is None else unified_diff(path, old, new)
