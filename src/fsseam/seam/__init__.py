"""ctx.fs: the seam between tools and storage.

Resolves virtual paths under the root, applies the text rules, dispatches fs/* events
through the gate, and calls the backend with the precondition the gate decided. Every
method returns a pydantic outcome or raises FsError; a failed call changes nothing.

:class:`Seam` is a facade over modules with one job each: ``reading`` (read, stat,
images and PDFs), ``finding`` (list, walk, glob, grep: the scan of the files, and helper
processes for a large local tree; ``globbing``: what a glob counts, and its walk by names
on local disk), ``changing`` (write, create, edit, delete, move, and
several files as one), ``commit`` (the plan of a change, committed against the store, and
what a failed step leaves), ``verdicts`` (did a failed call land, what a refusal tells the
agent) and ``history`` (history, restore, undo). Every change asks the gate through
``changing.guard_for`` and is a plan (one file or many) that ``commit.run`` commits.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Literal, cast

from ..changes import FileChange
from ..edits import EditOp, Insert, Replace
from ..errors import ErrorCode, FsError
from ..events import ReadEvent
from ..globs import Glob
from ..grep import Pattern
from ..limits import Limits
from ..messages import Reason
from ..outcomes import (
    ChangeOutcome,
    DeleteOutcome,
    EditOutcome,
    GlobOutcome,
    GrepOutcome,
    HistoryOutcome,
    ImageOutcome,
    ListEntry,
    ListOutcome,
    MoveOutcome,
    ReadOutcome,
    RestoreOutcome,
    StatOutcome,
    WriteOutcome,
)
from ..versions import CreateOnly, IfMatch, Version
from . import changing, finding, reading
from . import history as _history
from .calls import one_change
from .core import Core, one_call
from .finding import smallest

__all__ = ["Limits", "Seam", "smallest"]

class Seam(Core):
    """One owner's view of one workspace (``ctx.fs``).

    Its dependencies are handed in (the Workspace builds it): the backend, the gate, the
    limits, the workspace's document cache and whether it is read-only. Nothing above the
    seam reaches the backend.
    """

    # -- reads -------------------------------------------------------------
    @one_call
    def read(
        self, path: str, offset: int = 1, limit: int | None = None, *,
        max_chars: int | None = None, max_line_chars: int | None = None,
    ) -> ReadOutcome:
        """Lines ``[offset, offset + limit)`` (1-based) and the version of the file.

        A surface that shows at most ``max_chars`` characters, cutting lines longer than
        ``max_line_chars``, passes both: the read then holds no more than that output needs
        (see :class:`~fsseam.text.LineWindow`), whatever the file and the limit.

        A PDF reads as its text (a :class:`~fsseam.outcomes.PdfOutcome`: each page after
        a line naming its number; needs pypdf); an image is FS_NOT_TEXT here (see
        :meth:`read_any`)."""
        # Without ``images`` a read never gives an image.
        return cast(ReadOutcome,
                    reading.read(self, path, offset, limit, max_chars, max_line_chars))

    @one_call
    def read_any(
        self, path: str, offset: int = 1, limit: int | None = None, *,
        max_chars: int | None = None, max_line_chars: int | None = None,
    ) -> ReadOutcome | ImageOutcome:
        """What the ``read`` tool shows: :meth:`read`, except that an image (PNG, JPEG,
        GIF, WebP, told by its first bytes, not its name) is an
        :class:`~fsseam.outcomes.ImageOutcome` holding its bytes, up to
        ``Limits.max_image_bytes`` (FS_TOO_LARGE above). It is recorded as an observation
        of the file's version, as a read of every line of a text file is."""
        return reading.read(self, path, offset, limit, max_chars, max_line_chars, images=True)

    @one_call
    def stat(self, path: str) -> StatOutcome:
        return reading.stat(self, path)

    @one_call
    def show(self, path: str) -> str:
        """The whole text of a file for an application to put in a prompt (CRLF as LF, no
        BOM), recorded as this owner's read of that version (see
        :meth:`fsseam.Context.show`)."""
        return reading.show(self, path)

    @one_call
    def read_bytes(self, path: str) -> tuple[bytes, Version]:
        """The whole file (at most ``Limits.max_edit_bytes``) and its version, for a surface
        whose API is bytes; the owner has now observed that version."""
        key, shown = self.resolve_file(path)
        data, version = self.load_bytes(key)
        self.record_observed(key, shown, data, version)
        return data, version

    @one_change
    def write_bytes(self, path: str, data: bytes, *, call_id: str | None = None) -> Version:
        """Replace (or create) the whole file with exactly ``data``, for a surface whose API
        is bytes (no text rules), guarded as a whole-file write; the version it now has."""
        return changing.write_bytes(self, path, data)

    @one_change
    def rewrite_bytes(self, path: str, data: bytes, base: Version | None, *,
                      call_id: str | None = None) -> Version:
        """Replace the whole file with exactly ``data``, made from the file at ``base`` (the
        version a handle read when it opened; None: it found no file): conditional on that
        version (create-only for None), whatever this owner observed since. A lost
        condition is FS_STALE with what changed; the version the file now has."""
        return changing.write_bytes(self, path, data,
                                   CreateOnly() if base is None else IfMatch(base))

    @one_call
    def read_range(self, path: str, start: int = 0, end: int | None = None
                   ) -> tuple[bytes, Version]:
        """The bytes ``[start, end)`` of a file and their version, recorded as a read (a
        partial one unless the range is the whole file), for a surface whose API is a file
        system."""
        key, shown = self.resolve_file(path)
        cap = self.limits.max_edit_bytes
        try:
            stream = self.backend.open_read(key, self.limits.read_chunk_bytes)
        except FsError as e:
            raise self.not_found(key, e) from None
        parts: list[bytes] = []
        kept = pos = 0
        whole = True
        try:
            for chunk in stream.chunks():
                lo = max(start - pos, 0)
                hi = len(chunk) if end is None else min(end - pos, len(chunk))
                pos += len(chunk)
                if hi > lo:
                    parts.append(chunk[lo:hi])
                    kept += hi - lo
                    if kept > cap:
                        raise FsError(ErrorCode.FS_TOO_LARGE, path=shown,
                                      reason=Reason.edit_too_large,
                                      details={"size": stream.size or kept, "cap": cap})
                if end is not None and pos >= end and stream.version is not None:
                    # The rest is not needed, and the version is known without it.
                    whole = False
                    break
        except FsError as e:
            raise self.not_found(key, e) from None
        finally:
            stream.close()
        version = stream.version
        if version is None:  # pragma: no cover - a backend bug
            raise FsError(ErrorCode.FS_BACKEND, path=shown, reason=Reason.no_version)
        data = b"".join(parts)
        if whole and start <= 0 and (end is None or end >= pos):
            self.record_observed(key, shown, data, version)
        else:
            self.gate.dispatch(ReadEvent(owner=self.owner, key=key, path=shown, version=version,
                                        partial=True))
        return data, version

    @one_change
    def create_bytes(self, path: str, data: bytes, *, call_id: str | None = None) -> Version:
        """Create a file holding exactly ``data``, create-only (FS_ALREADY_EXISTS if it
        exists); the version it now has."""
        return changing.create_bytes(self, path, data)

    @one_call
    def prune_directories(self, path: str) -> None:
        """Remove the directories left empty at and below ``path``, innermost first, for a
        surface whose delete of a directory removes it: deleting the files leaves their
        directories on local disk (an object store keeps none). A directory holding
        anything stays, and so does the root; no file is touched. Nothing on a read-only
        workspace."""
        if not self.read_only:
            self.backend.prune_directories(self.key(path))

    def version_now(self, path: str) -> Version | None:
        """The version a file has now (None: it does not exist), for a listing's details;
        observes nothing."""
        key, _ = self.resolve_file(path)
        return self.probe_version(key)

    @one_call
    def kept(self, path: str, version: Version) -> bytes | None:
        """The exact bytes of ``path`` at ``version`` while this workspace keeps them (a
        small file it has just read or written whole), else None; no request to the
        storage. A surface that must show what a window of lines cannot (whether the last
        line ends in a newline) asks here."""
        return self.docs.raw(self.key(path), version)

    @one_call
    def list(
        self, path: str = "/", depth: int = 1, skip: Callable[[ListEntry], bool] | None = None,
        max_chars: int | None = None, *, include_ignored: bool = False,
    ) -> ListOutcome:
        """Entries below a directory, ``depth`` levels deep, sorted; ``skip`` filters.

        ``max_chars``: the output the listing goes to, one entry's path a line. Entries are
        kept only until their rows fill it (the first entries, in listing order, plus the
        one that overflows); the rest of each directory listed is counted in
        ``ListOutcome.more``, and no directory is listed once the output is full.

        Entries the ``.gitignore`` / ``.ignore`` files ignore are left out and counted
        (``ListOutcome.ignored``) unless ``include_ignored``."""
        return finding.list_entries(self, path, depth, skip, max_chars, include_ignored)

    # Not one call: a walk yields lazily and observes nothing.
    def walk(self, path: str = "/") -> Iterator[ListEntry]:
        """Every file (and symlink, never followed) below a directory, in path order, in
        the fewest requests the storage allows; plugins may hide entries."""
        return finding.walk(self, path)

    # -- writes ------------------------------------------------------------
    @one_change
    def write(self, path: str, content: str, *, call_id: str | None = None) -> WriteOutcome:
        """Replace (or create) the whole file; an existing file keeps BOM and newlines."""
        return changing.write(self, path, content, "write")

    @one_change
    def create(self, path: str, content: str, *, call_id: str | None = None) -> WriteOutcome:
        """Create a new file; never replaces one (FS_ALREADY_EXISTS)."""
        return changing.write(self, path, content, "create")

    @one_change
    def edit(self, path: str, ops: Sequence[EditOp], *,
             call_id: str | None = None) -> EditOutcome:
        """Apply a sequence of edits as one plan under one compare-and-swap.

        Argument checks that need no file run first; then one read, the gate's edit intent
        (the observation policy), the plan (any failing edit refuses the whole call), and
        one conditional write. A failed call changes nothing.
        """
        return changing.edit(self, path, ops)

    @one_change
    def replace(self, path: str, old: str, new: str, replace_all: bool = False, *,
                call_id: str | None = None) -> EditOutcome:
        """Replace a literal, unique (or every, with ``replace_all``) occurrence of ``old``."""
        return changing.edit(self, path, [Replace(old, new, replace_all)])

    @one_change
    def insert(self, path: str, line: int, text: str, *, call_id: str | None = None) -> EditOutcome:
        """Insert ``text`` verbatim at the zero-based line boundary ``line`` (0 = the start
        of the file, the line count = its end); no newline is added: end the text with one
        to insert whole lines."""
        return changing.edit(self, path, [Insert(line, text)])

    @one_change
    def change(self, changes: Sequence[FileChange], *,
               call_id: str | None = None) -> ChangeOutcome:
        """Create, update, move and delete several files as one change, all or nothing.

        Nothing is written until every part has been validated: every path resolved (none
        named twice), one read of each file updated, moved or deleted, the gate's intent for
        each (the observation policy decides each precondition: a fresh observation of
        each existing file, the absence of each new one), every new content computed and
        within the limits. Then :func:`fsseam.seam.commit.run` commits it in a fixed order,
        each step conditional, undoing the steps done if one fails. The written and deleted
        events are dispatched only once the whole change has committed.
        """
        return changing.change(self, changes)

    # -- finding -----------------------------------------------------------
    @one_call
    def glob(self, pattern: Glob, path: str = "/", limit: int = 100, *,
             include_ignored: bool = False) -> GlobOutcome:
        """Files below ``path`` matching ``pattern``, in path order (the first ``limit``);
        those the ``.gitignore`` / ``.ignore`` files ignore are left out and counted
        unless ``include_ignored`` (docs/finders.md, "Ignored files")."""
        return finding.glob(self, pattern, path, limit, include_ignored)

    @one_call
    def grep(
        self,
        pattern: Pattern,
        path: str = "/",
        *,
        files: Glob | None = None,
        mode: Literal["files_with_matches", "content", "count"] = "files_with_matches",
        context: int = 0,
        limit: int = 100,
        include_ignored: bool = False,
    ) -> GrepOutcome:
        """Search the text files below ``path`` (or the file ``path``) for ``pattern``.

        ``limit`` caps the files listed (``files_with_matches``, ``count``) or the matching
        lines shown (``content``). Binary, non-UTF-8, over-size and unreadable files are
        skipped and counted, never fatal. In ``content`` mode each file shown is recorded
        as observed at the version that was searched (its lines were shown, as a windowed
        read shows them). Files the ``.gitignore`` / ``.ignore`` files ignore are left
        out and counted unless ``include_ignored``.
        """
        return finding.grep(self, pattern, path, files, mode, context, limit,
                            include_ignored)

    # -- managing ----------------------------------------------------------
    @one_change
    def delete(self, path: str, *, call_id: str | None = None) -> DeleteOutcome:
        """Delete a file, only at the version this owner observed (with the policy on)."""
        return changing.delete(self, path)

    @one_change
    def move(self, source: str, destination: str, *, call_id: str | None = None) -> MoveOutcome:
        """Move a file to a path that does not exist yet.

        The source must be at the version this owner observed; the destination is created
        only if absent. Built from steps the storage guards: a create-only copy of the
        observed version, then a delete conditional on it; if that delete loses (the source
        changed meanwhile) the copy is removed again, conditional on its own version.
        """
        return changing.move(self, source, destination)

    # -- history -----------------------------------------------------------
    @one_call
    def history(self, path: str, limit: int = _history.DEFAULT_HISTORY_LIMIT
                ) -> HistoryOutcome:
        """The versions the store keeps of a file, newest first (at most ``limit``)."""
        return _history.history(self, path, limit)

    @one_change
    def restore(self, path: str, version: str, *, call_id: str | None = None) -> RestoreOutcome:
        """Write back the bytes of a kept version (named by its id, or a unique prefix), as
        a guarded write: conditional on the version this owner observed, or create-only
        when it saw the file absent."""
        return _history.restore(self, path, version)

    @one_change
    def undo(self, path: str, *, call_id: str | None = None) -> RestoreOutcome:
        """Take back this owner's last change of the file: the version before it written
        back, conditional on the version the change made (or, for a change that created
        the file, the file deleted, conditional likewise)."""
        return _history.undo(self, path)
