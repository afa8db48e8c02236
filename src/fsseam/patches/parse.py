"""Patches parsed: the Codex patch envelope and V4A hunks, read into values, purely.

The envelope (``*** Begin Patch`` ... ``*** End Patch``) holds file sections::

    *** Add File: PATH        followed by the new file's lines, each prefixed with +
    *** Delete File: PATH
    *** Update File: PATH     optionally followed by *** Move to: NEW_PATH, then hunks

A hunk is an optional run of ``@@`` lines (each ``@@ TEXT`` names a line of the file to
move past, narrowing where the hunk applies; a bare ``@@`` only separates hunks) and lines
prefixed with a space (context), ``-`` (removed) or ``+`` (added); ``*** End of File``
after a hunk anchors it at the end of the file. The OpenAI Responses API sends the same
hunks without the envelope (a V4A ``diff``), and a new file as ``+`` lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..errors import ErrorCode, FsError
from ..messages import Reason

__all__ = [
    "AddFile",
    "DeleteFile",
    "PatchHunk",
    "PatchOp",
    "UpdateFile",
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


@dataclass(frozen=True)
class PatchHunk:
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
    sources: tuple[int, ...] = field(default=(), compare=False)
    """For each of ``new``, the index in ``old`` of the context line it repeats, or -1 for
    an added line: where a hunk matched a line whose whitespace differs, the file keeps
    its own text of every context line (empty: unknown, ``new`` is used as it is)."""


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
    hunks: tuple[PatchHunk, ...]
    move_to: str | None = None
    line: int = 0


PatchOp = AddFile | DeleteFile | UpdateFile


def quoted(text: str) -> str:
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

    def read(self) -> tuple[PatchHunk, ...]:
        hunks: list[PatchHunk] = []
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

    def _hunk(self, needs_header: bool) -> PatchHunk | None:
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
            raise _invalid(Reason.patch_bad_line, line=self.i + 1, text=quoted(line))
        old: list[str] = []
        new: list[str] = []
        sources: list[int] = []
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
                sources.append(len(old))
                old.append(text)
                new.append(text)
            elif kind == "-":
                old.append(text)
            elif kind == "+":
                sources.append(-1)
                new.append(text)
            else:
                raise _invalid(Reason.patch_bad_line, line=self.i + 1, text=quoted(line))
            self.i += 1
        if not (old or new):
            raise _invalid(Reason.patch_empty_hunk, line=start)
        return PatchHunk(tuple(anchors), tuple(old), tuple(new), end_of_file, start, tuple(sources))


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
        raise _invalid(Reason.patch_no_begin, text=quoted(lines[lo] if lo <= hi else ""))
    if hi == lo or lines[hi].strip() != END:
        raise _invalid(Reason.patch_no_end)
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
            raise _invalid(Reason.patch_bad_header, line=number, text=quoted(body[i]))
        if not path:
            raise _invalid(Reason.patch_no_path, line=number, marker=marker)
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
                    raise _invalid(Reason.patch_no_path, line=i + 1, marker=MOVE)
                i += 1
            reader = _Hunks(body, i, first_needs_header=False)
            hunks = reader.read()
            i = reader.i
            if not hunks and move_to is None:
                raise _invalid(Reason.patch_empty_update, line=number, path=path)
            ops.append(UpdateFile(path, hunks, move_to, number))
    if not ops:
        raise _invalid(Reason.patch_empty)
    return ops


def _section(line: str) -> tuple[str | None, str]:
    for marker in (ADD, DELETE, UPDATE):
        if line.startswith(marker):
            return marker, line[len(marker):].strip()
    return None, ""


def parse_update_diff(diff: str) -> tuple[PatchHunk, ...]:
    """The hunks of a V4A diff without the envelope (an ``update_file`` operation)."""
    lines = _lines(diff)
    while lines and (lines[-1] == "" or lines[-1].rstrip() == END):
        lines.pop()
    reader = _Hunks(lines, 0, first_needs_header=False)
    hunks = reader.read()
    if reader.i < len(lines):
        line = lines[reader.i]
        raise _invalid(Reason.patch_bad_line, line=reader.i + 1, text=quoted(line))
    if not hunks:
        raise _invalid(Reason.patch_empty_hunk, line=1)
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
            raise _invalid(Reason.patch_add_line, line=number, text=quoted(line))
        out.append(line[1:] + "\n")
    return "".join(out)
