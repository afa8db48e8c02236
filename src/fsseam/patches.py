"""Patches: the Codex patch envelope and V4A hunks, parsed and applied to a text, purely.

The envelope (``*** Begin Patch`` ... ``*** End Patch``) holds file sections::

    *** Add File: PATH        followed by the new file's lines, each prefixed with +
    *** Delete File: PATH
    *** Update File: PATH     optionally followed by *** Move to: NEW_PATH, then hunks

A hunk is an optional run of ``@@`` lines (each ``@@ TEXT`` names a line of the file to
move past, narrowing where the hunk applies; a bare ``@@`` only separates hunks) and lines
prefixed with a space (context), ``-`` (removed) or ``+`` (added); ``*** End of File``
after a hunk anchors it at the end of the file. The OpenAI Responses API sends the same
hunks without the envelope (a V4A ``diff``), and a new file as ``+`` lines.

Matching is exact: a hunk's context and removed lines must equal lines of the file's model
view (CRLF shown as LF, the BOM hidden), whitespace included. Where a hunk applies:

- after the previous hunk of the same file, and after each of its ``@@`` lines in turn;
- a hunk with ``@@`` text takes the first place after its last ``@@`` line (that is what the
  line is for); a hunk without must match exactly one place after the previous hunk, so a
  repeated block is refused rather than edited at a guess;
- with ``*** End of File``, only at the end of the file;
- a hunk with no context and no removed lines inserts where it stands (after its ``@@``
  line or the previous hunk); the first hunk of a file, unanchored, appends to the file.

Applying splices each hunk into the original text (:meth:`fsseam.text.TextDoc.splice`):
every byte outside the replaced lines is kept (CRLF, lone CRs, tabs, the BOM), added lines
take the file's newline style, and whether the file ends with a newline never changes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .changes import Create, Delete, DocEdit, FileChange, Update
from .errors import ErrorCode, FsError
from .messages import Role
from .text import TextDoc, split_lines

__all__ = [
    "AddFile",
    "DeleteFile",
    "Hunk",
    "PatchOp",
    "UpdateFile",
    "apply_hunks",
    "as_changes",
    "hunk_edit",
    "parse_create_diff",
    "parse_patch",
    "parse_update_diff",
]

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File:"
DELETE = "*** Delete File:"
UPDATE = "*** Update File:"
MOVE = "*** Move to:"
END_OF_FILE = "*** End of File"
_HEREDOC_OPEN = ("<<EOF", "<<'EOF'", '<<"EOF"')
# A unified-diff hunk header (``@@ -3,7 +3,8 @@ def f():``): its line numbers are only
# hints; the text after it, if any, names a line as an ``@@`` line does.
_UNIFIED_HEADER = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")
_SHOWN_CHARS = 60
MAX_LISTED_MATCHES = 20


@dataclass(frozen=True)
class Hunk:
    """One hunk: where it applies (``anchors``, ``end_of_file``) and what it changes."""

    anchors: tuple[str, ...]
    """The texts of its ``@@ TEXT`` lines, in order."""
    old: tuple[str, ...]
    """Context and removed lines: what must be in the file."""
    new: tuple[str, ...]
    """Context and added lines: what replaces them."""
    end_of_file: bool = False
    line: int = 0
    """Where the hunk starts in the patch (1-based), for messages."""


@dataclass(frozen=True)
class AddFile:
    path: str
    content: str
    line: int = 0


@dataclass(frozen=True)
class DeleteFile:
    path: str
    line: int = 0


@dataclass(frozen=True)
class UpdateFile:
    path: str
    hunks: tuple[Hunk, ...]
    move_to: str | None = None
    line: int = 0


PatchOp = AddFile | DeleteFile | UpdateFile


def _shown(text: str) -> str:
    """A patch line quoted for a message, cut to a readable length."""
    cut = text if len(text) <= _SHOWN_CHARS else text[:_SHOWN_CHARS] + "..."
    return repr(cut)


def _lines(text: str) -> list[str]:
    """The lines of a patch; a CRLF patch is read as LF (its lines never end in a CR)."""
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _invalid(reason: str, **details: object) -> FsError:
    return FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=reason, details=details)


# -- parsing ---------------------------------------------------------------------------------
class _Hunks:
    """Reads hunks from lines ``[i, end)`` of a patch until a line that is not a hunk's."""

    def __init__(self, lines: list[str], i: int, first_needs_header: bool) -> None:
        self.lines = lines
        self.i = i
        self.first_needs_header = first_needs_header

    def read(self) -> tuple[Hunk, ...]:
        hunks: list[Hunk] = []
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line == "":
                # Empty lines between hunks; one inside a hunk is read there (as an empty
                # context line whose space was dropped).
                self.i += 1
                continue
            if line.startswith("*") and not line.startswith(END_OF_FILE):
                break
            hunk = self._hunk(needs_header=bool(hunks) or self.first_needs_header)
            if hunk is None:
                break
            hunks.append(hunk)
        return tuple(hunks)

    @staticmethod
    def _is_header(line: str) -> bool:
        # Never a hunk line: those start with a space, - or +.
        return line.rstrip() == "@@" or line.startswith("@@ ")

    @staticmethod
    def _anchor(line: str) -> str | None:
        """The text of an ``@@`` line (None for a bare one)."""
        m = _UNIFIED_HEADER.match(line)
        if m is not None:
            return m.group(1) or None
        text = line[3:] if line.startswith("@@ ") else ""
        return text if text.strip() else None

    def _hunk(self, needs_header: bool) -> Hunk | None:
        start = self.i + 1
        anchors: list[str] = []
        headers = 0
        while self.i < len(self.lines) and self._is_header(self.lines[self.i]):
            anchor = self._anchor(self.lines[self.i])
            if anchor is not None:
                anchors.append(anchor)
            headers += 1
            self.i += 1
        if not headers and needs_header:
            line = self.lines[self.i]
            raise _invalid("patch_bad_line", line=self.i + 1, text=_shown(line))
        old: list[str] = []
        new: list[str] = []
        end_of_file = False
        while self.i < len(self.lines):
            line = self.lines[self.i]
            if line.rstrip() == END_OF_FILE:
                end_of_file = True
                self.i += 1
                break
            if self._is_header(line) or (line.startswith("*") and old + new):
                break
            kind, text = line[:1], line[1:]
            if kind == "" or kind == " ":
                # A line with no prefix at all is an empty context line (models drop the
                # space of an empty line).
                old.append(text)
                new.append(text)
            elif kind == "-":
                old.append(text)
            elif kind == "+":
                new.append(text)
            else:
                raise _invalid("patch_bad_line", line=self.i + 1, text=_shown(line))
            self.i += 1
        if not (old or new):
            raise _invalid("patch_empty_hunk", line=start)
        return Hunk(tuple(anchors), tuple(old), tuple(new), end_of_file, start)


def _bounds(lines: list[str]) -> tuple[int, int]:
    """``[lo, hi]``: the first and last lines of the envelope, blank lines and a heredoc
    wrapper (``<<'EOF'`` ... ``EOF``, which shell-trained models add) set aside."""
    lo, hi = 0, len(lines) - 1
    while lo <= hi and lines[lo].strip() == "":
        lo += 1
    while hi >= lo and lines[hi].strip() == "":
        hi -= 1
    if hi - lo >= 3 and lines[lo].strip() in _HEREDOC_OPEN and lines[hi].strip() == "EOF":
        lo, hi = lo + 1, hi - 1
    return lo, hi


def parse_patch(text: str) -> list[PatchOp]:
    """The file sections of a Codex patch envelope (raises FS_INVALID_ARGUMENT; line
    numbers in errors count from the first line of ``text``)."""
    lines = _lines(text)
    lo, hi = _bounds(lines)
    if lo > hi or lines[lo].strip() != BEGIN:
        raise _invalid("patch_no_begin", text=_shown(lines[lo] if lo <= hi else ""))
    if hi == lo or lines[hi].strip() != END:
        raise _invalid("patch_no_end")
    body = lines[:hi]  # the sections lie in body[lo + 1:]
    ops: list[PatchOp] = []
    i = lo + 1
    while i < len(body):
        line = body[i].strip()
        number = i + 1
        if line == "":
            i += 1
            continue
        marker, path = _section(line)
        if marker is None:
            raise _invalid("patch_bad_header", line=number, text=_shown(body[i]))
        if not path:
            raise _invalid("patch_no_path", line=number, marker=marker)
        i += 1
        if marker == ADD:
            content: list[str] = []
            while i < len(body) and body[i].startswith("+"):
                content.append(body[i][1:] + "\n")
                i += 1
            ops.append(AddFile(path, "".join(content), number))
        elif marker == DELETE:
            ops.append(DeleteFile(path, number))
        else:
            move_to: str | None = None
            if i < len(body) and body[i].strip().startswith(MOVE):
                move_to = body[i].strip()[len(MOVE):].strip()
                if not move_to:
                    raise _invalid("patch_no_path", line=i + 1, marker=MOVE)
                i += 1
            reader = _Hunks(body, i, first_needs_header=False)
            hunks = reader.read()
            i = reader.i
            if not hunks and move_to is None:
                raise _invalid("patch_empty_update", line=number, path=path)
            ops.append(UpdateFile(path, hunks, move_to, number))
    if not ops:
        raise _invalid("patch_empty")
    return ops


def _section(line: str) -> tuple[str | None, str]:
    for marker in (ADD, DELETE, UPDATE):
        if line.startswith(marker):
            return marker, line[len(marker):].strip()
    return None, ""


def parse_update_diff(diff: str) -> tuple[Hunk, ...]:
    """The hunks of a V4A diff without the envelope (an ``update_file`` operation)."""
    lines = _lines(diff)
    while lines and (lines[-1] == "" or lines[-1].rstrip() == END):
        lines.pop()
    reader = _Hunks(lines, 0, first_needs_header=False)
    hunks = reader.read()
    if reader.i < len(lines):
        line = lines[reader.i]
        raise _invalid("patch_bad_line", line=reader.i + 1, text=_shown(line))
    if not hunks:
        raise _invalid("patch_empty_hunk", line=1)
    return hunks


def parse_create_diff(diff: str) -> str:
    """The content of a new file given as ``+`` lines (a ``create_file`` operation): each
    line becomes a line of the file, ending in a newline."""
    lines = _lines(diff)
    while lines and (lines[-1] == "" or lines[-1].rstrip() == END):
        lines.pop()
    out: list[str] = []
    for number, line in enumerate(lines, start=1):
        if not line.startswith("+"):
            raise _invalid("patch_add_line", line=number, text=_shown(line))
        out.append(line[1:] + "\n")
    return "".join(out)


# -- applying --------------------------------------------------------------------------------
def _offsets(view: str) -> list[int]:
    """View offset where each line starts, plus one past the last line."""
    starts = [0]
    i = view.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = view.find("\n", i + 1)
    if starts[-1] != len(view):
        starts.append(len(view))
    return starts


def _at(lines: list[str], seq: Sequence[str], i: int) -> bool:
    n = len(seq)
    return i + n <= len(lines) and all(lines[i + k] == seq[k] for k in range(n))


def _occurrences(lines: list[str], seq: Sequence[str], start: int, limit: int) -> list[int]:
    """Where ``seq`` occurs as whole lines at or after ``start`` (at most ``limit``)."""
    found: list[int] = []
    first = seq[0]
    for i in range(start, len(lines) - len(seq) + 1):
        if lines[i] == first and _at(lines, seq, i):
            found.append(i)
            if len(found) >= limit:
                break
    return found


def _anchor_at(lines: list[str], anchor: str, start: int) -> int | None:
    """The first line at or after ``start`` equal to ``anchor`` (or, failing that, equal
    once surrounding whitespace is set aside: an ``@@`` line names a line, and models
    often leave out its indentation)."""
    for i in range(start, len(lines)):
        if lines[i] == anchor:
            return i
    bare = anchor.strip()
    for i in range(start, len(lines)):
        if lines[i].strip() == bare:
            return i
    return None


def _where(after: int) -> str:
    return f" after line {after}" if after else ""


def _locate(lines: list[str], h: Hunk, index: int, cursor: int, path: str
            ) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """(first line, old, new) of hunk ``index`` (1-based) in ``lines``, from ``cursor``."""
    pos = cursor
    for anchor in h.anchors:
        at = _anchor_at(lines, anchor, pos)
        if at is None:
            raise FsError(ErrorCode.FS_NO_MATCH, path=path, reason="patch_anchor_not_found",
                          details={"anchor": _shown(anchor), "hunk": index, "line": h.line,
                                   "where": _where(pos)})
        pos = at + 1
    old, new = h.old, h.new
    if h.end_of_file:
        candidates = [(old, new)]
        if old and old[-1] == "":
            candidates.append((old[:-1], new[:-1] if new and new[-1] == "" else new))
        for o, n in candidates:
            start = len(lines) - len(o)
            if start >= pos and _at(lines, o, start):
                return start, o, n
        raise FsError(ErrorCode.FS_NO_MATCH, path=path, reason="patch_hunk_no_match",
                      details={"hunk": index, "line": h.line, "first": _first(h),
                               "where": " at the end of the file"})
    if not old:
        if h.anchors or index > 1:
            return pos, old, new
        return len(lines), old, new
    limit = 1 if h.anchors else MAX_LISTED_MATCHES + 1
    found = _occurrences(lines, old, pos, limit)
    if not found and old[-1] == "":
        # A blank line closing a hunk is usually the separator before the next one, not a
        # line of the file: try without it (and without its twin among the new lines).
        old = old[:-1]
        new = new[:-1] if new and new[-1] == "" else new
        found = _occurrences(lines, old, pos, limit) if old else []
    if not found:
        raise FsError(ErrorCode.FS_NO_MATCH, path=path, reason="patch_hunk_no_match",
                      details={"hunk": index, "line": h.line, "first": _first(h),
                               "where": _where(pos)})
    if len(found) > 1:
        listed = found[:MAX_LISTED_MATCHES]
        more = len(found) - len(listed)
        raise FsError(ErrorCode.FS_MULTIPLE_MATCHES, path=path, reason="patch_hunk_ambiguous",
                      details={"hunk": index, "line": h.line, "count": len(found),
                               "lines": ", ".join(str(i + 1) for i in listed),
                               "more": " and more" if more else "",
                               "match_lines": [i + 1 for i in listed]})
    return found[0], old, new


def _first(h: Hunk) -> str:
    first = next((line for line in h.old if line.strip()), h.old[0] if h.old else "")
    return _shown(first)


def _region(doc: TextDoc, start: int, n: int, new: Sequence[str]) -> tuple[int, int, str]:
    """The view region that lines ``[start, start + n)`` occupy and the text replacing
    them with ``new``, keeping whether the file ends with a newline."""
    view = doc.view
    offsets = _offsets(view)
    count = len(offsets) - 1
    terminated = view == "" or view.endswith("\n")
    begin = offsets[start] if start < count else len(view)
    end = offsets[start + n] if start + n < count else len(view)
    if terminated or start + n < count:
        return begin, end, "".join(line + "\n" for line in new)
    # The region reaches the file's last line, which has no newline: neither will the
    # new last line.
    if new:
        if n == 0:
            return len(view), len(view), "\n" + "\n".join(new)
        return begin, end, "\n".join(new)
    if start == 0:
        return 0, len(view), ""
    return begin - 1, end, ""


def apply_hunks(doc: TextDoc, hunks: Sequence[Hunk], path: str) -> TextDoc:
    """``doc`` with every hunk applied in order (raises FS_NO_MATCH, FS_MULTIPLE_MATCHES,
    FS_INVALID_ARGUMENT; ``path`` names the file in errors)."""
    current = doc
    cursor = 0
    for index, h in enumerate(hunks, start=1):
        if any("\x00" in line for line in h.new):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=path, reason="text_has_nul",
                          details={"arg": Role("new")})
        lines = split_lines(current.view)
        start, old, new = _locate(lines, h, index, cursor, path)
        begin, end, text = _region(current, start, len(old), new)
        current = current.splice([(begin, end, text)])
        cursor = start + len(new)
    return current


def hunk_edit(hunks: Sequence[Hunk]) -> DocEdit:
    """The hunks as an edit of a whole text, for :class:`fsseam.changes.Update`."""
    frozen = tuple(hunks)

    def edit(doc: TextDoc, path: str) -> TextDoc:
        return apply_hunks(doc, frozen, path)

    return edit


def as_changes(ops: Sequence[PatchOp]) -> list[FileChange]:
    """The file changes a parsed patch asks for, in its order."""
    out: list[FileChange] = []
    for op in ops:
        if isinstance(op, AddFile):
            out.append(Create(op.path, op.content))
        elif isinstance(op, DeleteFile):
            out.append(Delete(op.path))
        else:
            out.append(Update(op.path, hunk_edit(op.hunks) if op.hunks else None, op.move_to))
    return out
