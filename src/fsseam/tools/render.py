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
from ..messages import Clause, Part, Reason
from ..messages import render as say
from ..outcomes import (
    ChangeOutcome,
    DeleteOutcome,
    EditOutcome,
    GlobOutcome,
    GrepOutcome,
    ImageOutcome,
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
    "render_image",
    "render_listing",
    "render_ls",
    "render_move",
    "render_read",
    "render_write",
    "shown_lines",
    "size_text",
]

MAX_LINE_CHARS = 2000
MAX_READ_CHARS = 100_000
# Line-number prefixes, made once: formatting them per line dominated rendering a read. The
# second list starts each with the newline that ends the row before, so that a view is one
# join of prefixes and lines interleaved.
_PREFIXES = [f"{n:>6}\t" for n in range(20_001)]
_NL_PREFIXES = [f"\n{n:>6}\t" for n in range(20_001)]
# The interleaved list itself, each line's place empty: a view copies a slice of it and
# fills in its lines, one list copy and one slice assignment.
_ROWS: list[str] = [""] * (2 * len(_NL_PREFIXES))
_ROWS[0::2] = _NL_PREFIXES
_PREFIX_CHARS = 7
"""Characters of every prefix in the tables (line numbers below 10^6)."""


def _cut(line: str, length: int | None = None) -> str:
    """``line`` cut to MAX_LINE_CHARS; ``length`` is its full length when the read kept
    only its start."""
    length = len(line) if length is None else length
    if length <= MAX_LINE_CHARS:
        return line
    more = length - MAX_LINE_CHARS
    return line[:MAX_LINE_CHARS] + say(Reason.line_truncated, details={"more": more})


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
    parts = _ROWS[2 * start : 2 * end]
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
def _(o: ImageOutcome) -> str:
    return render_image(o)


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


def shown_lines(total: int | None) -> Part:
    """The clause of a range of lines shown: ``3-9 of 40``, or ``3-9`` when the total is
    not known."""
    return Part(Clause.lines_span if total is None else Clause.lines_of)


def render_read(o: ReadOutcome, max_chars: int = MAX_READ_CHARS) -> str:
    if o.total == 0:
        return say(Reason.read_empty, o.path)
    out, shown = numbered_fit(o.lines, o.offset, o.cut, max_chars)
    last = o.offset + shown - 1
    facts = {"first": o.offset, "last": last, "total": o.total, "next": last + 1}
    if shown < len(o.lines):
        note = say(Reason.read_capped, o.path, {
            **facts, "max_chars": max_chars, "shown": shown_lines(o.total)})
    elif o.total is None:
        note = say(Reason.read_more_follow, o.path, facts)
    elif last < o.total:
        note = say(Reason.read_window, o.path, facts)
    elif o.offset > 1:
        note = say(Reason.read_end, o.path, facts)
    else:
        return out
    return f"{out}\n\n{note}"


def render_image(o: ImageOutcome) -> str:
    """The line beside an image a read shows: its path, type and size."""
    return say(Reason.image_shown, o.path, {"media_type": o.media_type, "size": f"{o.size:,}"})


def render_write(o: WriteOutcome) -> str:
    if o.unchanged:
        return say(Reason.write_unchanged, o.path)
    count = Part(Clause.one_line if o.lines == 1 else Clause.n_lines)
    return say(Reason.write_created if o.created else Reason.write_wrote, o.path,
               {"lines": o.lines, "count": count})


def render_edit(o: EditOutcome) -> str:
    if o.unchanged:
        reason = Reason.edit_unchanged
    elif o.edits > 1:
        reason = Reason.edit_several
    elif o.operation == "insert":
        reason = Reason.edit_inserted
    elif o.replacements == 1:
        reason = Reason.edit_replaced_one
    else:
        reason = Reason.edit_replaced
    head = say(reason, o.path, {"edits": o.edits, "replacements": o.replacements,
                                "first_line": o.first_line})
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
        rows.append(say(Reason.list_more, details={"more": o.more}))
    if o.omitted:
        rows.append(say(Reason.list_omitted, details={"omitted": o.omitted}))
    return "\n".join(rows)


MAX_LIST_CHARS = 100_000


def size_text(size: int) -> str:
    """``1,234 bytes``."""
    return say(Clause.bytes, details={"size": f"{size:,}"})


def _ignored(o: ListOutcome | GlobOutcome | GrepOutcome) -> str:
    """The note of the paths the ignore files left out (a line of its own), else nothing."""
    return "\n" + say(Reason.finder_ignored, details={"ignored": o.ignored}) if o.ignored else ""


def render_ls(o: ListOutcome) -> str:
    if not o.entries:
        return say(Reason.ls_empty, o.path) + _ignored(o)
    # The size clause rendered once, each row's size put in its place: a listing has up to
    # tens of thousands of rows.
    before, _, after = size_text(0).partition("0")
    rows = [
        f"{listed(e)}  ({before}{e.size:,}{after})" if e.type == "file" and e.size is not None
        else listed(e)
        for e in o.entries
    ]
    shown = fit(rows, MAX_LIST_CHARS)
    text = "\n".join(rows[:shown])
    total = len(rows) + o.more
    if shown < total:
        text += "\n\n" + say(Reason.ls_clipped, details={"shown": shown, "total": total})
    if o.omitted:
        text += "\n" + say(Reason.ls_omitted, details={"omitted": o.omitted})
    return text + _ignored(o)


def render_glob(o: GlobOutcome) -> str:
    hidden = "\n" + say(Reason.glob_hidden, details={"hidden": o.hidden}) if o.hidden else ""
    hidden += _ignored(o)
    hidden += _out_of_time(Reason.glob_out_of_time, o)
    if not o.paths:
        return say(Reason.glob_none, o.path, {"pattern": echo(o.pattern)}) + hidden
    shown = fit(o.paths, MAX_LIST_CHARS)
    text = "\n".join(o.paths[:shown])
    if shown < o.total:
        text += "\n\n" + say(Reason.glob_clipped, details={"shown": shown, "total": o.total})
    return text + hidden


def _out_of_time(reason: Reason, o: GlobOutcome | GrepOutcome) -> str:
    """The note of a finder whose time ran out (a line of its own), else nothing."""
    where = Part(Clause.narrow if o.next_path is None else Clause.narrow_at)
    details = {"resume": o.unsearched_from, "next": o.next_path, "narrow": where}
    return "" if o.unsearched_from is None else "\n" + say(reason, details=details)


# Why a search skipped files, as the clause that counts them.
_SKIPPED = {"binary": Clause.skipped_binary, "not_utf8": Clause.skipped_not_utf8,
            "too_large": Clause.skipped_too_large, "timeout": Clause.skipped_timeout,
            "unreadable": Clause.skipped_unreadable, "hidden": Clause.skipped_hidden}


def _skipped(kind: str, count: int) -> str:
    clause = _SKIPPED.get(kind)
    return f"{count} {kind}" if clause is None else say(clause, details={"count": count})


def _context_row(n: int, line: str) -> str:
    return f"{n:>5}-\t{line}"


def render_grep(o: GrepOutcome) -> str:
    notes: list[str] = []
    if o.skipped:
        kinds = ", ".join(_skipped(k, n) for k, n in sorted(o.skipped.items()))
        notes.append(say(Reason.grep_not_searched, details={"kinds": kinds}))
    if o.ignored:
        notes.append(_ignored(o).lstrip("\n"))
    if o.unsearched_from is not None:
        notes.append(_out_of_time(Reason.grep_out_of_time, o).lstrip("\n"))
    if o.stopped:
        notes.append(say(Reason.grep_slow_pattern if o.unsearched_from else Reason.grep_stopped))
    if not o.files:
        head = say(Reason.grep_none_shown if o.files_matched else Reason.grep_none, o.path, {
            "pattern": echo(o.pattern), "searched": o.searched, "matched": o.files_matched})
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
        text += "\n\n" + say(Reason.grep_total, details={
            "lines_matched": o.lines_matched, "files_matched": o.files_matched})
    if o.truncated or clipped:
        content = o.mode == "content"
        text += "\n\n" + say(Reason.grep_limited, details={
            "found": Part(Clause.n_matching_lines if content else Clause.n_files),
            "total": o.lines_matched if content else o.files_matched})
    return "\n".join([text, *notes])


def render_delete(o: DeleteOutcome) -> str:
    return say(Reason.deleted, o.path)


def render_move(o: MoveOutcome) -> str:
    return say(Reason.moved, details={"source": o.source, "destination": o.destination})


_LETTER = {"add": "A", "update": "M", "move": "M", "delete": "D"}


def render_change(o: ChangeOutcome) -> str:
    """Codex's summary of an applied patch: a letter (Added, Modified, Deleted) per file."""
    rows = [say(Reason.change_applied)]
    for f in o.files:
        row = f"{_LETTER[f.action]} {f.path}"
        if f.source is not None:
            row += " " + say(Reason.moved_from, details={"source": f.source})
        rows.append(row)
    return "\n".join(rows)


def render_error(code: ErrorCode, message: str) -> str:
    return say(Reason.tool_error, details={"code": code.value, "message": message})
