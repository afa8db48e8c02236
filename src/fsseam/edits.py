"""Pure text edits: find a unique match, replace, replace all, insert at a boundary, and
apply a sequence of them, giving one :class:`EditPlan` (the new text and what changed).

Nothing here does I/O or knows a tool: the seam turns a plan into one compare-and-swap
write, and the tools layer names the arguments in its error texts (the errors carry
catalogue reasons and roles, see :mod:`fsseam.messages`).

Edits match on the model's view of the file (CRLF shown as LF) and are spliced into the
original text (:meth:`fsseam.text.TextDoc.splice`), so every byte outside the edited
regions is kept, and inserted text takes the file's newline style.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import dataclass, field

from .errors import ErrorCode, FsError
from .messages import Part, Reason, Role
from .text import TextDoc, split_lines

__all__ = [
    "EditOp",
    "EditPlan",
    "Insert",
    "Replace",
    "Span",
    "apply",
    "check_new_text",
    "check_replace",
    "count_matches",
    "find_matches",
    "insert",
    "replace",
]

MAX_LISTED_MATCHES = 5
"""An ambiguous match names at most this many lines (distinct, in order)."""
MAX_COUNTED_MATCHES = 1000
"""An ambiguous match counts its occurrences up to this many: past it the refusal says
"more than", so a frequent text costs a bounded search, not a list of every offset."""


@dataclass(frozen=True)
class Replace:
    """Replace ``old`` (unique, or every occurrence with ``replace_all``) with ``new``."""

    old: str
    new: str
    replace_all: bool = False


@dataclass(frozen=True)
class Insert:
    """Insert ``text`` verbatim at the zero-based line boundary ``line``: 0 is the start of
    the file, the line count its end; no newline is added."""

    line: int
    text: str


EditOp = Replace | Insert


@dataclass(frozen=True)
class Span:
    """What one edit changed, in 1-based line numbers of the text after it."""

    first_line: int
    last_line: int
    count: int
    """Occurrences replaced (1 for an insert)."""
    at: int | None = None
    """View offset, in the text after this edit, where line ``first_line`` starts (None when
    the edit ends an unterminated last line: no line starts there)."""


@dataclass(frozen=True)
class EditPlan:
    """The text before and after a sequence of edits, and the span of each."""

    before: TextDoc
    after: TextDoc
    spans: tuple[Span, ...]
    replacements: int = field(init=False)
    """Occurrences replaced, over all edits."""
    changed: bool = field(init=False)
    """Whether the text after differs from the text before (a BOM counts)."""

    def __post_init__(self) -> None:
        # Known when the plan is made: every edit asks both, once it is made.
        object.__setattr__(self, "replacements", sum(s.count for s in self.spans))
        object.__setattr__(self, "changed", self.after.original != self.before.original
                           or self.after.bom != self.before.bom)


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def check_new_text(text: str, role: str) -> None:
    """New text must stay text: a NUL would make the file unreadable to every text tool."""
    if "\x00" in text:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.text_has_nul, details={"arg": Role(role)}
        )


def check_replace(op: Replace) -> None:
    """Argument checks that need no file: run before anything is read."""
    if op.old == "":
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.old_empty)
    check_new_text(op.new, "new")
    if _lf(op.old) == _lf(op.new):
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.old_equals_new)


def find_matches(view: str, old: str) -> list[int]:
    """Start offsets of ``old`` in ``view``, overlapping occurrences included.

    Overlaps count: ``aa`` in ``aaa`` is two candidate places, so it is ambiguous, not a
    unique match at the first one.
    """
    starts: list[int] = []
    i = view.find(old)
    while i >= 0:
        starts.append(i)
        i = view.find(old, i + 1)
    return starts


def count_matches(view: str, old: str, stop: int) -> int:
    """Occurrences of ``old`` in ``view``, overlapping ones included, counted up to
    ``stop`` (``stop`` means that many or more): a bounded search, however frequent."""
    count = 0
    i = view.find(old)
    while i >= 0 and count < stop:
        count += 1
        i = view.find(old, i + 1)
    return count


def _ambiguous(doc: TextDoc, old: str, first: int, path: str) -> FsError:
    """FS_MULTIPLE_MATCHES for ``old``, found first at view offset ``first``: its count (up
    to MAX_COUNTED_MATCHES) and the first lines it occurs on, each line once."""
    view = doc.view
    count = count_matches(view, old, MAX_COUNTED_MATCHES + 1)
    lines: list[int] = []
    line, counted = doc.line_of(first), first
    at = first
    while at >= 0 and len(lines) < MAX_LISTED_MATCHES:
        line += view.count("\n", counted, at)
        counted = at
        lines.append(line)
        # Later matches on this line add no line number: search from the next line on.
        nl = view.find("\n", at)
        at = -1 if nl < 0 else view.find(old, nl + 1)
    many = count > MAX_COUNTED_MATCHES
    return FsError(
        ErrorCode.FS_MULTIPLE_MATCHES,
        path=path,
        reason=Reason.multiple_matches,
        details={
            "count": MAX_COUNTED_MATCHES if many else count,
            "times": Part("_times_over" if many else "_times"),
            "lines": ", ".join(map(str, lines)),
            "where": Part("_at_lines_more" if at >= 0 else
                          "_at_lines" if len(lines) > 1 else "_at_line"),
            "more": at >= 0,
            "match_lines": lines,
        },
    )


def _replaced_all(doc: TextDoc, old: str, new: str) -> tuple[TextDoc, int] | None:
    """``replace_all`` done by ``str.replace`` on the original text, with no offsets kept:
    possible when every occurrence in the view is the same occurrence in the original
    (None otherwise). The occurrences replaced are the same either way: leftmost first,
    never overlapping."""
    o = doc.original
    # A view that is the original has no CRLF; otherwise the two differ only in the \r of
    # each CRLF, which an old text without \n or \r never meets.
    if doc.view is not o and ("\n" in old or "\r" in old):
        if "\r" in old or not o.count("\r") == o.count("\n") == o.count("\r\n"):
            return None
        # Every newline is a CRLF and there is no lone CR: the view's \n is the
        # original's \r\n everywhere.
        old = old.replace("\n", "\r\n")
    count = o.count(old)
    return TextDoc(o.replace(old, doc.styled(new)), doc.bom), count


def _splice_all(doc: TextDoc, old: str, new: str) -> tuple[TextDoc, int]:
    """``replace_all`` by splicing each occurrence, for files with mixed newlines: the
    occurrences are found one after another and written out as they are found."""
    view, width = doc.view, len(old)
    out = io.StringIO()
    styled = doc.styled(new)
    pos = count = 0
    i = view.find(old)
    while i >= 0:
        o_start, o_end = doc.to_original(i), doc.to_original(i + width)
        out.write(doc.original[pos:o_start])
        out.write(styled)
        pos = o_end
        count += 1
        i = view.find(old, i + width)
    out.write(doc.original[pos:])
    return TextDoc(out.getvalue(), doc.bom), count


def replace(doc: TextDoc, op: Replace, path: str) -> tuple[TextDoc, Span]:
    """Apply one replacement (``path`` names the file in errors).

    A unique match is established by a second search, never by finding every occurrence;
    ``replace_all`` builds the new text without a list of offsets. Both cost a bounded
    amount of memory beyond the two texts, however often ``old`` occurs."""
    old, new = _lf(op.old), _lf(op.new)
    view = doc.view
    start = view.find(old)
    if start < 0:
        raise FsError(ErrorCode.FS_NO_MATCH, path=path, reason=Reason.no_match)
    if op.replace_all:
        done = _replaced_all(doc, old, new)
        after, count = done if done is not None else _splice_all(doc, old, new)
    else:
        if view.find(old, start + 1) >= 0:
            raise _ambiguous(doc, old, start, path)
        after, count = doc.splice([(start, start + len(old), new)]), 1
    first = doc.line_of(start)
    last = first + max(0, len(split_lines(new)) - 1)
    # The text before the first match is unchanged, so is where its line starts.
    at = view.rfind("\n", 0, start) + 1
    return after, Span(first, last, count, at)


def insert(doc: TextDoc, op: Insert, path: str) -> tuple[TextDoc, Span]:
    """Insert at a line boundary, verbatim: ``l1\\nl2\\n`` + ``X`` at 1 -> ``l1\\nXl2\\n``."""
    check_new_text(op.text, "text")
    total = doc.line_count
    if op.line < 0 or op.line > total:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            path=path,
            reason=Reason.insert_out_of_range,
            details={"requested": op.line, "total": total},
        )
    at = doc.line_start(op.line) if op.line < total else len(doc.view)
    text = _lf(op.text)
    after = doc.splice([(at, at, text)])
    first = op.line + 1
    last = op.line + max(1, len(split_lines(text)))
    starts_line = at == 0 or doc.view[at - 1] == "\n"
    return after, Span(first, last, 1, at if starts_line else None)


def apply(doc: TextDoc, ops: Sequence[EditOp], path: str) -> EditPlan:
    """Apply ``ops`` in order, each to the result of the previous: one plan, or the first
    failure (its ``details["edit_index"]`` is the 1-based position of the failing edit
    when there is more than one)."""
    current = doc
    spans: list[Span] = []
    for index, op in enumerate(ops, start=1):
        try:
            if isinstance(op, Replace):
                check_replace(op)
                current, span = replace(current, op, path)
            else:
                current, span = insert(current, op, path)
        except FsError as e:
            if len(ops) > 1:
                e.details["edit_index"] = index
            raise
        spans.append(span)
    return EditPlan(doc, current, tuple(spans))
