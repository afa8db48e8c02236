"""Pure functions from outcomes to the text the model sees.

Truncation lives here: the text is bounded. (A read given an output budget keeps only
what that output can show; ``ReadOutcome.cut`` says which lines it shortened.)
"""

from __future__ import annotations

from collections.abc import Mapping

from ..errors import ErrorCode
from ..outcomes import EditOutcome, ListEntry, ListOutcome, ReadOutcome, WriteOutcome

__all__ = [
    "MAX_LINE_CHARS",
    "MAX_READ_CHARS",
    "numbered",
    "render_edit",
    "render_error",
    "render_listing",
    "render_read",
    "render_write",
]

MAX_LINE_CHARS = 2000
MAX_READ_CHARS = 100_000
# Line-number prefixes, made once: formatting them per line dominated rendering a read.
_PREFIXES = [f"{n:>6}\t" for n in range(20_001)]


def _cut(line: str, length: int | None = None) -> str:
    """``line`` cut to MAX_LINE_CHARS; ``length`` is its full length when the read kept
    only its start."""
    length = len(line) if length is None else length
    if length <= MAX_LINE_CHARS:
        return line
    more = length - MAX_LINE_CHARS
    return f"{line[:MAX_LINE_CHARS]}... [line truncated: {more} more characters]"


def numbered(lines: list[str], start: int, cut: Mapping[int, int] | None = None) -> list[str]:
    """``cat -n`` style: ``{n:>6}\\t{line}``, tabs kept, long lines cut (``cut``: full
    lengths of lines the read shortened, by line number)."""
    if cut:
        lines = [_cut(line, cut.get(n)) for n, line in enumerate(lines, start)]
    elif lines and max(map(len, lines)) > MAX_LINE_CHARS:
        lines = [_cut(line) for line in lines]
    end = start + len(lines)
    if end <= len(_PREFIXES):
        return list(map(str.__add__, _PREFIXES[start:end], lines))
    return [f"{n:>6}\t{line}" for n, line in enumerate(lines, start)]


def fit(rows: list[str], max_chars: int) -> int:
    """How many leading rows fit in ``max_chars`` (at least one, so progress is made)."""
    text = "\n".join(rows)
    if len(text) + 1 <= max_chars:
        return len(rows)
    # Row i fits when its newline in the joined text lies before max_chars.
    cut = text.rfind("\n", 0, max_chars)
    return text.count("\n", 0, cut) + 1 if cut >= 0 else 1


def render_read(o: ReadOutcome, max_chars: int = MAX_READ_CHARS) -> str:
    if o.total == 0:
        return f"(The file {o.path} is empty.)"
    rows = numbered(o.lines, o.offset, o.cut)
    shown = fit(rows, max_chars)
    last = o.offset + shown - 1
    out = "\n".join(rows[:shown])
    if shown < len(rows):
        tail = f" of {o.total}" if o.total is not None else ""
        return (
            f"{out}\n\n(Output capped at {max_chars} characters: showing lines {o.offset}-"
            f"{last}{tail}. Use offset={last + 1} to continue.)"
        )
    if o.total is None:
        return (
            f"{out}\n\n(Showing lines {o.offset}-{last}; more lines follow. Use "
            f"offset={last + 1} to continue.)"
        )
    if last < o.total:
        return (
            f"{out}\n\n(Showing lines {o.offset}-{last} of {o.total}. Use offset={last + 1} "
            "to continue.)"
        )
    if o.offset > 1:
        return f"{out}\n\n(End of file: lines {o.offset}-{last} of {o.total}.)"
    return out


def render_write(o: WriteOutcome) -> str:
    verb = "Created" if o.created else "Wrote"
    unit = "line" if o.lines == 1 else "lines"
    return f"{verb} {o.path} ({o.lines} {unit})."


def render_edit(o: EditOutcome) -> str:
    if o.operation == "insert":
        head = f"Inserted into {o.path} at line {o.first_line}."
    elif o.replacements == 1:
        head = f"Edited {o.path}: replaced 1 occurrence at line {o.first_line}."
    else:
        head = f"Edited {o.path}: replaced {o.replacements} occurrences."
    return head + "\n" + "\n".join(numbered(o.snippet, o.snippet_start))


def listed(e: ListEntry) -> str:
    """One listing row: ``/dir/``, ``/file``, a link ``/link -> /target`` (its target inside
    the workspace) or ``/link@`` (pointing outside it, or at nothing)."""
    if e.type == "directory":
        return f"{e.path}/"
    if e.type == "symlink":
        return f"{e.path} -> {e.target}" if e.target is not None else f"{e.path}@"
    return e.path


def render_listing(o: ListOutcome) -> str:
    rows = [o.path]
    for e in o.entries:
        rows.append(f"{'  ' * e.depth}{listed(e)}")
    if o.omitted:
        rows.append(f"({o.omitted} hidden, dependency or cache entries omitted)")
    return "\n".join(rows)


def render_error(code: ErrorCode, message: str) -> str:
    return f"Error [{code.value}]: {message}"
