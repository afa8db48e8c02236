"""Pure functions from outcomes to the text the model sees.

Truncation lives here: the text is bounded. (A read given an output budget keeps only
what that output can show; ``ReadOutcome.cut`` says which lines it shortened.)
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import singledispatch

from pydantic import BaseModel

from ..errors import ErrorCode
from ..globs import echo
from ..outcomes import (
    ChangeOutcome,
    DeleteOutcome,
    EditOutcome,
    GlobOutcome,
    GrepOutcome,
    ListEntry,
    ListOutcome,
    MoveOutcome,
    ReadOutcome,
    WriteOutcome,
)
from ..text import within

__all__ = [
    "MAX_LINE_CHARS",
    "MAX_LIST_CHARS",
    "MAX_READ_CHARS",
    "fit",
    "numbered",
    "numbered_fit",
    "numbered_text",
    "render",
    "render_change",
    "render_delete",
    "render_edit",
    "render_error",
    "render_glob",
    "render_grep",
    "render_listing",
    "render_ls",
    "render_move",
    "render_read",
    "render_write",
]

MAX_LINE_CHARS = 2000
MAX_READ_CHARS = 100_000
# Line-number prefixes, made once: formatting them per line dominated rendering a read. The
# second list starts each with the newline that ends the row before, so that a view is one
# join of prefixes and lines interleaved.
_PREFIXES = [f"{n:>6}\t" for n in range(20_001)]
_NL_PREFIXES = [f"\n{n:>6}\t" for n in range(20_001)]
_PREFIX_CHARS = 7
"""Characters of every prefix in the tables (line numbers below 10^6)."""


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


def numbered_text(lines: list[str], start: int, cut: Mapping[int, int] | None = None) -> str:
    """``"\n".join(numbered(lines, start, cut))``, built by one join of the prefixes and
    the lines interleaved (no row string per line)."""
    n = len(lines)
    end = start + n
    if not n or end > len(_PREFIXES):
        return "\n".join(numbered(lines, start, cut))
    if cut:
        lines = [_cut(line, cut.get(k)) for k, line in enumerate(lines, start)]
    parts = lines + lines
    parts[0::2] = _NL_PREFIXES[start:end]
    parts[1::2] = lines
    parts[0] = _PREFIXES[start]
    text = "".join(parts)
    if not cut and not within(text, MAX_LINE_CHARS + _PREFIX_CHARS):
        # A row longer than a prefix and a full line: some line needs cutting.
        return "\n".join(numbered(lines, start))
    return text


def numbered_fit(
    lines: list[str], start: int, cut: Mapping[int, int] | None, max_chars: int
) -> tuple[str, int]:
    """The ``numbered`` rows that :func:`fit` in ``max_chars``, joined, and how many they
    are: one text built once and cut at a newline."""
    text = numbered_text(lines, start, cut)
    if len(text) + 1 <= max_chars:
        return text, len(lines)
    at = text.rfind("\n", 0, max_chars)
    if at < 0:
        first = text.find("\n")
        return (text if first < 0 else text[:first]), 1
    return text[:at], text.count("\n", 0, at) + 1


def fit(rows: list[str], max_chars: int) -> int:
    """How many leading rows fit in ``max_chars`` (at least one, so progress is made)."""
    text = "\n".join(rows)
    if len(text) + 1 <= max_chars:
        return len(rows)
    # Row i fits when its newline in the joined text lies before max_chars.
    cut = text.rfind("\n", 0, max_chars)
    return text.count("\n", 0, cut) + 1 if cut >= 0 else 1


@singledispatch
def render(outcome: BaseModel) -> str:
    """The model text of an outcome, chosen by its type (extend with ``render.register``)."""
    raise TypeError(f"no renderer for {type(outcome).__name__}; register one with "
                    "fsseam.tools.render.render.register")


@render.register
def _(o: ReadOutcome) -> str:
    return render_read(o)


@render.register
def _(o: WriteOutcome) -> str:
    return render_write(o)


@render.register
def _(o: EditOutcome) -> str:
    return render_edit(o)


@render.register
def _(o: ListOutcome) -> str:
    return render_listing(o)


@render.register
def _(o: GlobOutcome) -> str:
    return render_glob(o)


@render.register
def _(o: GrepOutcome) -> str:
    return render_grep(o)


@render.register
def _(o: DeleteOutcome) -> str:
    return render_delete(o)


@render.register
def _(o: MoveOutcome) -> str:
    return render_move(o)


@render.register
def _(o: ChangeOutcome) -> str:
    return render_change(o)


def render_read(o: ReadOutcome, max_chars: int = MAX_READ_CHARS) -> str:
    if o.total == 0:
        return f"(The file {o.path} is empty.)"
    out, shown = numbered_fit(o.lines, o.offset, o.cut, max_chars)
    last = o.offset + shown - 1
    if shown < len(o.lines):
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
    if o.unchanged:
        return f"{o.path} already holds exactly this content; nothing was written."
    verb = "Created" if o.created else "Wrote"
    unit = "line" if o.lines == 1 else "lines"
    return f"{verb} {o.path} ({o.lines} {unit})."


def render_edit(o: EditOutcome) -> str:
    if o.unchanged:
        head = (f"{o.path} already has this change (someone made it since your read); "
                "nothing was written.")
        return head + "\n" + "\n".join(numbered(o.snippet, o.snippet_start))
    if o.edits > 1:
        head = (
            f"Edited {o.path}: {o.edits} edits applied in one write ({o.replacements} "
            f"replacements); the first at line {o.first_line}."
        )
    elif o.operation == "insert":
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
    if o.more:
        rows.append(f"({o.more} more entries not listed)")
    if o.omitted:
        rows.append(f"({o.omitted} hidden, dependency or cache entries omitted)")
    return "\n".join(rows)


MAX_LIST_CHARS = 100_000


def _ls_row(e: ListEntry) -> str:
    row = listed(e)
    return f"{row}  ({e.size:,} bytes)" if e.type == "file" and e.size is not None else row


def render_ls(o: ListOutcome) -> str:
    if not o.entries:
        return f"{o.path} is empty."
    rows = [_ls_row(e) for e in o.entries]
    shown = fit(rows, MAX_LIST_CHARS)
    text = "\n".join(rows[:shown])
    total = len(rows) + o.more
    if shown < total:
        text += (
            f"\n\n(Showing {shown} of {total} entries. Use glob with a pattern to "
            "narrow.)"
        )
    if o.omitted:
        text += f"\n({o.omitted} entries omitted)"
    return text


def render_glob(o: GlobOutcome) -> str:
    hidden = (
        f"\n({o.hidden} matching files in hidden or dependency directories were left out; "
        "name the directory in the pattern to include them.)"
        if o.hidden else ""
    )
    if not o.paths:
        return f"No files match {echo(o.pattern)} in {o.path}.{hidden}"
    shown = fit(o.paths, MAX_LIST_CHARS)
    text = "\n".join(o.paths[:shown])
    if shown < o.total:
        text += (
            f"\n\n(Showing {shown} of {o.total} matching files, in path order. Narrow the "
            "pattern or the path to see the rest.)"
        )
    return text + hidden


_SKIPPED = {
    "binary": "binary",
    "not_utf8": "not UTF-8",
    "too_large": "too large",
    "timeout": "too slow for the pattern",
    "unreadable": "unreadable",
    "hidden": "in hidden or dependency directories (name them in glob or path to search "
    "them)",
}


def _context_row(n: int, line: str) -> str:
    return f"{n:>5}-\t{line}"


def render_grep(o: GrepOutcome) -> str:
    notes: list[str] = []
    if o.skipped:
        parts = [f"{n} {_SKIPPED.get(k, k)}" for k, n in sorted(o.skipped.items())]
        notes.append(f"(Not searched: {', '.join(parts)}.)")
    if o.stopped:
        notes.append(
            "(The search stopped early: the pattern is slow on these files and used up the "
            "time one search may take, so the files after that were not searched. Narrow "
            "with path or glob, or simplify the pattern: avoid repeating a group whose "
            "parts can match the same text, such as (a|aa)+ or (a+)+.)"
        )
    pattern = echo(o.pattern)
    if not o.files:
        head = (
            f"No matches for {pattern} in {o.path} ({o.searched} files searched)."
            if not o.files_matched
            else f"{o.files_matched} files match {pattern}; none shown (max_results)."
        )
        return "\n".join([head, *notes])
    rows: list[str] = []
    if o.mode == "files_with_matches":
        rows = [f.path for f in o.files]
    elif o.mode == "count":
        rows = [f"{f.path}: {f.count}" for f in o.files]
    else:
        for f in o.files:
            rows.append(f.path)
            for i, h in enumerate(f.hunks):
                if i:
                    rows.append("--")
                matches = set(h.matches)
                for n, line in enumerate(h.lines, h.first):
                    cut = _cut(line)
                    rows.append(numbered([cut], n)[0] if n in matches else _context_row(n, cut))
    shown = fit(rows, MAX_READ_CHARS)
    text = "\n".join(rows[:shown])
    clipped = shown < len(rows)
    if o.mode == "count":
        text += f"\n\nTotal: {o.lines_matched} matching lines in {o.files_matched} files."
    if o.truncated or clipped:
        unit = "matching lines" if o.mode == "content" else "files"
        total = o.lines_matched if o.mode == "content" else o.files_matched
        text += (
            f"\n\n(Output limited: {total} {unit} in all. Set max_results (up to 10000) to "
            "see more, or narrow with path or glob.)"
        )
    return "\n".join([text, *notes])


def render_delete(o: DeleteOutcome) -> str:
    return f"Deleted {o.path}."


def render_move(o: MoveOutcome) -> str:
    return f"Moved {o.source} to {o.destination}."


_LETTER = {"add": "A", "update": "M", "move": "M", "delete": "D"}


def render_change(o: ChangeOutcome) -> str:
    """Codex's summary of an applied patch: a letter (Added, Modified, Deleted) per file."""
    rows = ["Success. Updated the following files:"]
    for f in o.files:
        moved = f" (moved from {f.source})" if f.source is not None else ""
        rows.append(f"{_LETTER[f.action]} {f.path}{moved}")
    return "\n".join(rows)


def render_error(code: ErrorCode, message: str) -> str:
    return f"Error [{code.value}]: {message}"
