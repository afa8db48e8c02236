"""Patches applied: parsed hunks located in a text and spliced into it, purely.

Matching: a hunk's context and removed lines must equal lines of the file's model view
(CRLF shown as LF, the BOM hidden): exactly if they can, else but for trailing whitespace,
else but for whitespace around each line (the Agents SDK's ``apply_diff`` accepts the
same); a loose match keeps the file's own context lines. Where a hunk applies:

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

from collections.abc import Callable, Sequence

from ..changes import Create, Delete, DocEdit, FileChange, Update
from ..errors import ErrorCode, FsError
from ..messages import Clause, Reason, Role, render
from ..text import TextDoc, split_lines
from .parse import AddFile, DeleteFile, PatchHunk, PatchOp, quoted

__all__ = ["MAX_LISTED_MATCHES", "apply_hunks", "as_changes", "hunk_edit"]

MAX_LISTED_MATCHES = 20


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


def _clause(name: str, **facts: object) -> str:
    """A clause of the catalogue rendered now, for a detail read as text (the sentence puts
    it right after a word, hence the space)."""
    return " " + render(name, details=facts)


def _where(after: int) -> str:
    return _clause(Clause.patch_after_line, after=after) if after else ""


_LEVELS: tuple[Callable[[str], str] | None, ...] = (None, str.rstrip, str.strip)
"""How closely a hunk's lines must equal the file's, tried in turn, as the Agents SDK's
``apply_diff`` and Codex do: exactly; but for trailing whitespace; but for whitespace
around each line. The first level where a hunk matches decides, so a hunk that matches
twice there is refused as ambiguous, never applied at the first place."""

_Candidate = tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...]]


def _candidates(h: PatchHunk) -> list[_Candidate]:
    """(old, new, sources) to look for: the hunk, then, when it closes with a blank line,
    without it. A blank line closing a hunk is usually the separator before the next one,
    not a line of the file (and its twin among the new lines goes with it)."""
    out = [(h.old, h.new, h.sources)]
    if h.old and h.old[-1] == "":
        new = h.new[:-1] if h.new and h.new[-1] == "" else h.new
        out.append((h.old[:-1], new, h.sources))
    return out


def _kept(lines: list[str], start: int, c: _Candidate) -> tuple[str, ...]:
    """The new lines of a hunk matched loosely at ``start``: each context line as the file
    has it (its whitespace is not the hunk's to change), added lines as the hunk says."""
    old, new, sources = c
    if not sources:
        return new
    return tuple(lines[start + s] if 0 <= s < len(old) else text
                 for text, s in zip(new, sources, strict=False))


def _locate(lines: list[str], h: PatchHunk, index: int, cursor: int, path: str
            ) -> tuple[int, tuple[str, ...], tuple[str, ...]]:
    """(first line, old, new) of hunk ``index`` (1-based) in ``lines``, from ``cursor``."""
    pos = cursor
    for anchor in h.anchors:
        at = _anchor_at(lines, anchor, pos)
        if at is None:
            raise FsError(ErrorCode.FS_NO_MATCH, path=path, reason=Reason.patch_anchor_not_found,
                          details={"anchor": quoted(anchor), "hunk": index, "line": h.line,
                                   "where": _where(pos)})
        pos = at + 1
    if not h.end_of_file and not h.old:
        if h.anchors or index > 1:
            return pos, h.old, h.new
        return len(lines), h.old, h.new
    limit = 1 if h.anchors else MAX_LISTED_MATCHES + 1
    for norm in _LEVELS:
        view = lines if norm is None else [norm(line) for line in lines]
        for c in _candidates(h):
            seq = c[0] if norm is None else tuple(norm(line) for line in c[0])
            if h.end_of_file:
                start = len(view) - len(seq)
                found = [start] if start >= pos and _at(view, seq, start) else []
            else:
                found = _occurrences(view, seq, pos, limit) if seq else []
            if len(found) > 1:
                raise _ambiguous(found, h, index, path)
            if found:
                return found[0], c[0], c[1] if norm is None else _kept(lines, found[0], c)
    where = _clause(Clause.patch_at_end) if h.end_of_file else _where(pos)
    raise FsError(ErrorCode.FS_NO_MATCH, path=path, reason=Reason.patch_hunk_no_match,
                  details={"hunk": index, "line": h.line, "first": _first(h), "where": where})


def _ambiguous(found: list[int], h: PatchHunk, index: int, path: str) -> FsError:
    listed = found[:MAX_LISTED_MATCHES]
    more = len(found) - len(listed)
    return FsError(ErrorCode.FS_MULTIPLE_MATCHES, path=path, reason=Reason.patch_hunk_ambiguous,
                   details={"hunk": index, "line": h.line, "count": len(found),
                            "lines": ", ".join(str(i + 1) for i in listed),
                            "more": _clause(Clause.patch_more) if more else "",
                            "match_lines": [i + 1 for i in listed]})


def _first(h: PatchHunk) -> str:
    first = next((line for line in h.old if line.strip()), h.old[0] if h.old else "")
    return quoted(first)


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


def apply_hunks(doc: TextDoc, hunks: Sequence[PatchHunk], path: str) -> TextDoc:
    """``doc`` with every hunk applied in order (raises FS_NO_MATCH, FS_MULTIPLE_MATCHES,
    FS_INVALID_ARGUMENT; ``path`` names the file in errors)."""
    current = doc
    cursor = 0
    for index, h in enumerate(hunks, start=1):
        if any("\x00" in line for line in h.new):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=path, reason=Reason.text_has_nul,
                          details={"arg": Role("new")})
        lines = split_lines(current.view)
        start, old, new = _locate(lines, h, index, cursor, path)
        begin, end, text = _region(current, start, len(old), new)
        current = current.splice([(begin, end, text)])
        cursor = start + len(new)
    return current


def hunk_edit(hunks: Sequence[PatchHunk]) -> DocEdit:
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
