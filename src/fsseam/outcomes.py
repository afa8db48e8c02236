"""Structured outcomes of ctx.fs operations: facts, from which ``render`` derives text."""

from __future__ import annotations

from datetime import datetime
from functools import cached_property
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, PrivateAttr, computed_field

from .backends.base import VersionInfo
from .diff import LazyDiff, unified_diff
from .versions import Version

__all__ = [
    "ChangeOutcome",
    "ChangedFile",
    "DeleteOutcome",
    "EditOutcome",
    "GlobOutcome",
    "GrepFile",
    "GrepHunk",
    "GrepOutcome",
    "HistoryEntry",
    "HistoryOutcome",
    "ImageOutcome",
    "ListEntry",
    "ListOutcome",
    "MoveOutcome",
    "PdfOutcome",
    "ReadOutcome",
    "RestoreOutcome",
    "StatOutcome",
    "WriteOutcome",
    "version_id",
]


class _Outcome(BaseModel):
    model_config = ConfigDict(frozen=True)


class ReadOutcome(_Outcome):
    kind: Literal["read"] = "read"
    path: str
    lines: list[str]
    offset: int
    """1-based number of the first returned line."""
    returned: int
    total: int | None
    """Lines in the file; None when the read stopped early on a large remote object."""
    version: Version
    partial: bool
    """True unless every line of the file was returned."""
    cut: dict[int, int] = {}
    """Lines returned shortened (read with ``max_line_chars``): 1-based line number -> the
    line's full length in characters."""


class PdfOutcome(ReadOutcome):
    """A read of a PDF: a window of its text's lines, each page after a line naming its
    number (``--- page 3 ---``); ``version`` is the PDF file's."""

    pages: int


class ImageOutcome(_Outcome):
    """A read of an image: the facts. The bytes are not a field (the structured facts stay
    small); :attr:`data` holds them for the surface that shows the image."""

    kind: Literal["image"] = "image"
    path: str
    media_type: str
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``."""
    size: int
    version: Version
    _data: bytes = PrivateAttr(default=b"")

    def with_data(self, data: bytes) -> Self:
        """Attach the image's bytes."""
        self._data = data
        return self

    @property
    def data(self) -> bytes:
        return self._data


class WriteOutcome(LazyDiff, _Outcome):
    kind: Literal["write"] = "write"
    path: str
    operation: Literal["write", "create"]
    created: bool
    version: Version
    size: int
    lines: int
    unchanged: bool = False
    """The file already held exactly these bytes: nothing was written (``version`` is the
    file's current version, which the writer has now observed)."""


class EditOutcome(LazyDiff, _Outcome):
    kind: Literal["edit"] = "edit"
    path: str
    operation: Literal["replace", "insert", "edit"]
    """``edit``: a sequence of several edits applied as one."""
    replacements: int
    replace_all: bool = False
    version: Version
    first_line: int
    """1-based line where the (first) change starts in the new file."""
    snippet: list[str]
    """A few lines of the new file around the (first) change."""
    snippet_start: int
    edits: int = 1
    """How many edits the call applied (all in one write)."""
    unchanged: bool = False
    """The file already held exactly the result (someone made the same change since the
    read, say): nothing was written, and ``version`` is the current one."""


class StatOutcome(_Outcome):
    kind: Literal["stat"] = "stat"
    path: str
    type: Literal["file", "directory"]
    size: int | None = None


class ListEntry(_Outcome):
    path: str
    type: Literal["file", "directory", "symlink"]
    size: int | None = None
    depth: int
    target: str | None = None
    """For a symlink: the path it points to, when that lies inside the workspace."""


class ListOutcome(_Outcome):
    kind: Literal["list"] = "list"
    path: str
    entries: list[ListEntry]
    omitted: int = 0
    """Entries left out by the filter (hidden, dependency and cache folders)."""
    more: int = 0
    """Entries of the directories listed that are not among ``entries`` because no output
    of the size asked for could show them (``Seam.list``'s ``max_chars``)."""
    ignored: int = 0
    """Entries left out by the ``.gitignore`` / ``.ignore`` files (``include_ignored``)."""


class GlobOutcome(_Outcome):
    kind: Literal["glob"] = "glob"
    path: str
    """The directory searched."""
    pattern: str
    paths: list[str]
    """Matching files in path order, at most ``limit`` of them."""
    total: int
    """All matching files."""
    limit: int
    hidden: int = 0
    """What was left out as hidden, not searched: each hidden or dependency directory
    (``.git``, ``node_modules``, ...) holding a file below which the pattern may match
    counts once, and each matching hidden file once."""
    ignored: int = 0
    """Paths left out by the ``.gitignore`` / ``.ignore`` files: each ignored directory
    once (it is not walked), each ignored file that would otherwise match."""
    partial: bool = False
    """The call ran out of time (``Limits.finder_seconds``): ``paths`` and the counts cover
    only the files before ``unsearched_from``."""
    unsearched_from: str | None = None
    """When partial: the first file the walk did not reach, in path order."""
    next_path: str | None = None
    """When partial: the directory below ``path`` the walk stopped in, to search next
    (None when the files left lie directly in ``path``)."""


class GrepHunk(_Outcome):
    first: int
    """1-based number of the first line shown."""
    lines: list[str]
    matches: list[int]
    """1-based numbers of the matching lines among them."""


class GrepFile(_Outcome):
    path: str
    count: int
    """Matching lines in the file."""
    hunks: list[GrepHunk] = []
    """The lines shown (content mode)."""


class GrepOutcome(_Outcome):
    kind: Literal["grep"] = "grep"
    path: str
    pattern: str
    mode: Literal["files_with_matches", "content", "count"]
    files: list[GrepFile]
    """Files with matches, in path order; fewer than ``files_matched`` when capped."""
    files_matched: int
    lines_matched: int
    searched: int
    """Files whose text was searched."""
    limit: int
    truncated: bool
    """Results were left out to stay within ``limit`` (and the output cap)."""
    skipped: dict[str, int] = {}
    """Files not searched, by why: ``binary``, ``not_utf8``, ``too_large``, ``timeout``,
    ``unreadable``, ``hidden``."""
    ignored: int = 0
    """Paths left out by the ``.gitignore`` / ``.ignore`` files: each ignored directory
    once (it is not walked), each ignored file that would otherwise be searched."""
    stopped: bool = False
    """The pattern spent the call's regex time (``Limits.grep_regex_seconds``): the files
    after that were not searched, and are counted in ``skipped["timeout"]``."""
    partial: bool = False
    """Not every file was searched for lack of time: the call's time ran out
    (``Limits.finder_seconds``; ``unsearched_from`` says where) or its regex time did
    (``stopped``)."""
    unsearched_from: str | None = None
    """When the call's time ran out: the first file it did not search, in path order. The
    files shown and every count cover only the files before it."""
    next_path: str | None = None
    """When the call's time ran out: the directory below ``path`` it stopped in, to search
    next (None when the files left lie directly in ``path``)."""


class DeleteOutcome(_Outcome):
    kind: Literal["delete"] = "delete"
    path: str
    version: Version | None
    """The version that was deleted (None when deleted unconditionally)."""


class MoveOutcome(_Outcome):
    kind: Literal["move"] = "move"
    source: str
    destination: str
    version: Version
    """The destination's version, which the mover has now observed."""


class ChangedFile(_Outcome):
    """One file of a change that committed."""

    path: str
    """The file's path now (for a move: the destination)."""
    action: Literal["add", "update", "move", "delete"]
    source: str | None = None
    """For a move: the path it was moved from."""
    version: Version | None = None
    """Its new version (None for a delete)."""
    lines: int | None = None
    """Lines of the new text (None for a delete, or a move of a file not read as text)."""


class ChangeOutcome(_Outcome):
    """A change of several files that committed: every file, in the order given."""

    kind: Literal["change"] = "change"
    files: list[ChangedFile]
    _diff_parts: list[tuple[str, str | None, str]] = PrivateAttr(default_factory=list)

    def with_diffs(self, parts: list[tuple[str, str | None, str]]) -> Self:
        """Attach (path, old text or None if unknown, new text) of each file."""
        self._diff_parts = parts
        return self

    @computed_field  # type: ignore[prop-decorator]
    @cached_property
    def diff(self) -> str | None:
        """The unified diffs of the files whose old text is known, one after another."""
        known = [(p, old, new) for p, old, new in self._diff_parts if old is not None]
        if not known:
            return None
        return "".join(unified_diff(p, old, new) for p, old, new in known if old is not None)


# -- history --------------------------------------------------------------------------------
def version_id(version: Version) -> str:
    """The id an agent sees and passes back: the store's own id of a kept version (an S3
    VersionId), else the version's value (a GCS generation; 12 hex digits of a digest)."""
    if version.detail and version.detail != "null":
        return version.detail
    value = version.value.strip('"')
    return value[:12] if version.kind == "sha256" else value


class HistoryEntry(BaseModel):
    model_config = ConfigDict(frozen=True)
    id: str
    """What ``restore`` takes (empty for a deletion)."""
    version: Version
    size: int | None = None
    modified: datetime | None = None
    owner: str | None = None
    """Who wrote it through fsseam, where that is known without extra requests."""
    latest: bool = False
    deleted: bool = False

    @classmethod
    def of(cls, info: VersionInfo, owner: str | None = None) -> HistoryEntry:
        return cls(
            id="" if info.deleted else version_id(info.version),
            version=info.version, size=info.size, modified=info.modified,
            owner=info.owner or owner, latest=info.latest, deleted=info.deleted,
        )


class HistoryOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["history"] = "history"
    path: str
    entries: list[HistoryEntry]
    """Newest first."""
    limit: int
    you: str
    """The owner who asked (to mark the versions it wrote)."""


class RestoreOutcome(LazyDiff, BaseModel):
    """An older version's bytes written back (``restore``), or an owner's last change taken
    back (``undo``)."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["restore"] = "restore"
    path: str
    operation: Literal["restore", "undo"]
    restored: str | None
    """The id of the version brought back (None when an undo deleted a file it created)."""
    version: Version | None
    """The file's version now (None when the undo deleted the file)."""
    replaced: Version | None = None
    created: bool = False
    """The file did not exist (a restore after a deletion)."""
    deleted: bool = False
    """The undo took back the change that created the file: it was deleted."""
    unchanged: bool = False
    """The file already held exactly these bytes: nothing was written."""
    size: int = 0
    lines: list[str] | None = None
    """The text of the file now, when it is text (views render from it)."""
