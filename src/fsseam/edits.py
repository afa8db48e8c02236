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

from collections.abc import Sequence
from dataclasses import dataclass

from .errors import ErrorCode, FsError
from .messages import Role
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
    "find_matches",
    "insert",
    "replace",
]

MAX_LISTED_MATCHES = 20
"""An ambiguous match names at most this many line numbers."""


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

    @property
    def replacements(self) -> int:
        return sum(s.count for s in self.spans)

    @property
    def changed(self) -> bool:
        return self.after.original != self.before.original or self.after.bom != self.before.bom


def _lf(text: str) -> str:
    return text.replace("\r\n", "\n")


def check_new_text(text: str, role: str) -> None:
    """New text must stay text: a NUL would make the file unreadable to every text tool."""
    if "\x00" in text:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT, reason="text_has_nul", details={"arg": Role(role)}
        )


def check_replace(op: Replace) -> None:
    """Argument checks that need no file: run before anything is read."""
    if op.old == "":
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="old_empty")
    check_new_text(op.new, "new")
    if _lf(op.old) == _lf(op.new):
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="old_equals_new")


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


def _non_overlapping(starts: list[int], width: int) -> list[int]:
    """The occurrences ``replace_all`` replaces: left to right, never overlapping."""
    out: list[int] = []
    end = -1
    for s in starts:
        if s >= end:
            out.append(s)
            end = s + width
    return out


def replace(doc: TextDoc, op: Replace, path: str) -> tuple[TextDoc, Span]:
    """Apply one replacement (``path`` names the file in errors)."""
    old, new = _lf(op.old), _lf(op.new)
    starts = find_matches(doc.view, old)
    if not starts:
        raise FsError(ErrorCode.FS_NO_MATCH, path=path, reason="no_match")
    if len(starts) > 1 and not op.replace_all:
        listed = starts[:MAX_LISTED_MATCHES]
        more = len(starts) - len(listed)
        raise FsError(
            ErrorCode.FS_MULTIPLE_MATCHES,
            path=path,
            reason="multiple_matches",
            details={
                "count": len(starts),
                "lines": ", ".join(str(doc.line_of(s)) for s in listed),
                "more": f" (and {more} more)" if more else "",
                "match_lines": [doc.line_of(s) for s in listed],
            },
        )
    chosen = _non_overlapping(starts, len(old)) if op.replace_all else starts
    after = doc.splice([(s, s + len(old), new) for s in chosen])
    first = doc.line_of(chosen[0])
    last = first + max(0, len(split_lines(new)) - 1)
    # The text before the first match is unchanged, so is where its line starts.
    at = doc.view.rfind("\n", 0, chosen[0]) + 1
    return after, Span(first, last, len(chosen), at)


def insert(doc: TextDoc, op: Insert, path: str) -> tuple[TextDoc, Span]:
    """Insert at a line boundary, verbatim: ``l1\\nl2\\n`` + ``X`` at 1 -> ``l1\\nXl2\\n``."""
    check_new_text(op.text, "text")
    total = doc.line_count
    if op.line < 0 or op.line > total:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            path=path,
            reason="insert_out_of_range",
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
