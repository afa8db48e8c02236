"""ctx.fs: the seam between tools and storage.

Resolves virtual paths under the root, applies the text rules, dispatches fs/* events
through the gate, and calls the backend with the precondition the gate decided. Every
method returns a pydantic outcome or raises FsError; a failed call changes nothing.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict

from .backends.base import Backend, Entry
from .errors import Conflict, ErrorCode, FsError
from .events import EditIntent, MissingEvent, ReadEvent, WriteIntent, WrittenEvent
from .outcomes import EditOutcome, ListEntry, ListOutcome, ReadOutcome, StatOutcome, WriteOutcome
from .paths import display, to_key
from .text import (
    LineWindow,
    TextDoc,
    TextFormat,
    check_text,
    decode,
    encode_new,
    split_lines,
)
from .versions import CreateOnly, IfMatch, Overwrite, Precondition, Version

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = ["Limits", "Seam"]

MiB = 1 << 20
SNIPPET_CONTEXT = 3


class Limits(BaseModel):
    """Size limits of one workspace."""

    model_config = ConfigDict(frozen=True)

    default_read_lines: int = 2000
    max_edit_bytes: int = 64 * MiB
    """Edits and whole-file writes hold the file in memory: above this, FS_TOO_LARGE."""
    read_chunk_bytes: int = 1 * MiB
    count_budget_bytes: int = 1 * MiB
    """Once its window is full and the version is known, a read keeps counting the file's
    lines only up to this many bytes; past it the total is reported unknown. (A local file
    whose digest is not cached is read to the end anyway, to digest it.)"""
    doc_cache_bytes: int = 32 * MiB
    """Texts kept per version so a write after a read needs no second download."""


class _DocCache:
    """(key, version) -> TextFormat and, for small files, the text: a bounded LRU.

    A read stores the raw bytes (decoding them costs as much as the read itself, and only a
    later whole-file write needs the text, for its diff); writes store the text they made.
    """

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._used = 0
        self._items: OrderedDict[tuple[str, Version], tuple[TextFormat, str | bytes | None]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def put(
        self, key: str, version: Version, fmt: TextFormat, text: str | bytes | None
    ) -> None:
        if text is not None and len(text) > self._budget // 4:
            text = None
        with self._lock:
            old = self._items.pop((key, version), None)
            if old is not None and old[1] is not None:
                self._used -= len(old[1])
            self._items[(key, version)] = (fmt, text)
            self._used += len(text) if text is not None else 0
            while self._items and (self._used > self._budget or len(self._items) > 4096):
                _, (_, t) = self._items.popitem(last=False)
                self._used -= len(t) if t is not None else 0

    def get(self, key: str, version: Version) -> tuple[TextFormat, str | None] | None:
        """The format and, when kept, the view of the file at ``version``."""
        with self._lock:
            hit = self._items.get((key, version))
            if hit is not None:
                self._items.move_to_end((key, version))
        if hit is None:
            return None
        fmt, text = hit
        if isinstance(text, bytes):
            try:
                text = decode(text, display(key)).view
            except FsError:
                text = None  # valid in the window that was read, not as a whole
        return fmt, text


def _snippet(doc: TextDoc, first_line: int, last_line: int) -> tuple[list[str], int]:
    lines = doc.lines
    start = max(1, first_line - SNIPPET_CONTEXT)
    end = min(len(lines), last_line + SNIPPET_CONTEXT)
    return lines[start - 1 : end], start


def _check_text(text: str, name: str) -> None:
    """New text must stay text: a NUL would make the file unreadable to every text tool."""
    if "\x00" in text:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            f"{name} contains a NUL character; fsseam writes text files only. Remove it.",
        )


def _encode(make: Callable[[], bytes], name: str) -> bytes:
    try:
        return make()
    except UnicodeEncodeError as e:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            f"{name} contains characters that cannot be written as UTF-8 (a lone surrogate "
            f"at position {e.start}); nothing was written.",
        ) from None


class Seam:
    """One owner's view of one workspace (``ctx.fs``)."""

    def __init__(self, workspace: Workspace, owner: str) -> None:
        self.workspace = workspace
        self.owner = owner
        self.backend: Backend = workspace.backend
        self.limits: Limits = workspace.limits
        self._gate = workspace.gate
        self._docs: _DocCache = workspace._docs

    # -- paths -------------------------------------------------------------
    def key(self, path: str) -> str:
        """The canonical key of a model path (raises FS_OUTSIDE_ROOT, FS_INVALID_ARGUMENT)."""
        native = getattr(self.backend, "native_key", None)
        below = native(path) if native is not None and isinstance(path, str) else None
        key = to_key(path if below is None else below or "/")
        return self.backend.resolve(key)

    def _missing(self, key: str, err: FsError) -> FsError:
        # A missing bucket is not a missing file: "create the file" would send the model
        # into writes that fail the same way, and absence must not be recorded for it.
        if err.code is ErrorCode.FS_NOT_FOUND and err.reason != "bucket_missing":
            self._gate.dispatch(MissingEvent(owner=self.owner, key=key, path=display(key)))
            return FsError(
                ErrorCode.FS_NOT_FOUND,
                f"{display(key)} does not exist. Check the path (list the parent directory), "
                "or create the file.",
                path=display(key),
            )
        return err

    def _writable(self) -> None:
        if self.workspace.read_only:
            raise FsError(
                ErrorCode.FS_READ_ONLY,
                "this workspace is read-only; files can be read but not changed.",
            )

    # -- reads -------------------------------------------------------------
    def read(self, path: str, offset: int = 1, limit: int | None = None) -> ReadOutcome:
        """Lines ``[offset, offset + limit)`` (1-based) and the version of the file."""
        if offset < 1:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, "offset is 1-based: use 1 or more.")
        limit = self.limits.default_read_lines if limit is None else limit
        if limit < 1:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, "limit must be 1 or more.")
        key = self.key(path)
        shown = display(key)
        try:
            stream = self.backend.open_read(key, self.limits.read_chunk_bytes)
        except FsError as e:
            raise self._missing(key, e) from None
        window = LineWindow(shown, offset, limit)
        small: list[bytes] | None = []
        complete = False
        try:
            for chunk in stream.chunks():
                window.feed(chunk)
                if small is not None:
                    small.append(chunk)
                    if window.bytes_seen > self.limits.doc_cache_bytes // 4:
                        small = None
                if (
                    window.window_full
                    and stream.version is not None
                    and window.bytes_seen >= self.limits.count_budget_bytes
                ):
                    break
            else:
                window.feed(b"", final=True)
                complete = True
        except FsError as e:
            raise self._missing(key, e) from None
        finally:
            stream.close()
        version = stream.version
        if version is None:  # pragma: no cover - a backend bug
            raise FsError(ErrorCode.FS_BACKEND, f"{shown}: the storage returned no version.")
        total = window.count if complete else None
        if complete and offset > max(total or 0, 1):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                f"offset {offset} is past the end of {shown}, which has {total} lines. Use "
                f"offset=1 to read from the start.",
                path=shown,
            )
        if complete:
            raw = b"".join(small) if small is not None else None
            if raw is not None:
                # A file small enough to keep is validated whole, so a read reports a
                # non-UTF-8 file even when the invalid bytes lie outside the window.
                check_text(raw, shown)
            self._docs.put(key, version, window.format, raw)
        returned = len(window.lines)
        partial = not (complete and offset == 1 and returned == total)
        self._gate.dispatch(
            ReadEvent(owner=self.owner, key=key, path=shown, version=version, partial=partial)
        )
        return ReadOutcome(
            path=shown,
            lines=window.lines,
            offset=offset,
            returned=returned,
            total=total,
            version=version,
            partial=partial,
        )

    def _load(self, key: str, record_missing: bool = True) -> tuple[TextDoc, Version]:
        """The whole file as text, for an edit: one round trip, and never more than the
        edit limit fetched (a huge object is refused, not downloaded)."""
        shown = display(key)
        cap = self.limits.max_edit_bytes
        try:
            stream = self.backend.open_read(key, cap + 1)
        except FsError as e:
            if not record_missing:
                raise
            raise self._missing(key, e) from None
        parts: list[bytes] = []
        size = stream.size or 0
        try:
            if size <= cap:
                total = 0
                for chunk in stream.chunks():
                    parts.append(chunk)
                    total += len(chunk)
                    if total > cap:
                        break
                size = max(size, total)
        finally:
            stream.close()
        if size > cap:
            raise FsError(
                ErrorCode.FS_TOO_LARGE,
                f"{shown} is {size} bytes or more, over the {cap} bytes an edit or a "
                "whole-file write can hold; it was left unchanged. Read it in windows "
                "(offset/limit) instead.",
                path=shown,
            )
        version = stream.version
        if version is None:  # pragma: no cover - a backend bug
            raise FsError(ErrorCode.FS_BACKEND, f"{shown}: the storage returned no version.")
        return decode(b"".join(parts), shown), version

    def stat(self, path: str) -> StatOutcome:
        key = self.key(path)
        st = self.backend.stat(key)
        return StatOutcome(path=display(key), type=st.kind, size=st.size)

    def list(
        self, path: str = "/", depth: int = 1, skip: Callable[[Entry], bool] | None = None
    ) -> ListOutcome:
        """Entries below a directory, ``depth`` levels deep, sorted; ``skip`` filters."""
        key = self.key(path)
        out: list[ListEntry] = []
        omitted = 0

        def walk(k: str, level: int) -> None:
            nonlocal omitted
            for e in self.backend.list(k):
                if skip is not None and skip(e):
                    omitted += 1
                    continue
                out.append(ListEntry(path=display(e.key), type=e.kind, size=e.size, depth=level))
                if e.kind == "directory" and level < depth:
                    walk(e.key, level + 1)

        walk(key, 1)
        return ListOutcome(path=display(key), entries=out, omitted=omitted)

    # -- writes ------------------------------------------------------------
    def _conflict(self, err: Conflict, code: ErrorCode | None, hint: str | None) -> FsError:
        if code is None:
            return err
        message = hint or err.message
        if err.reason == "missing":
            message = (
                f"{err.message} It was deleted since you last read it; read it again (it "
                "will be reported missing), then write it to recreate it."
            )
        return FsError(code, message, path=err.path)

    def _check_size(self, shown: str, n: int) -> None:
        if n > self.limits.max_edit_bytes:
            raise FsError(
                ErrorCode.FS_TOO_LARGE,
                f"the new content of {shown} is {n} bytes, more than the "
                f"{self.limits.max_edit_bytes} bytes allowed; nothing was written.",
                path=shown,
            )

    def write(self, path: str, content: str) -> WriteOutcome:
        """Replace (or create) the whole file; an existing file keeps BOM and newlines."""
        return self._write(path, content, "write")

    def create(self, path: str, content: str) -> WriteOutcome:
        """Create a new file; never replaces one (FS_ALREADY_EXISTS)."""
        return self._write(path, content, "create")

    def _write(
        self, path: str, content: str, operation: Literal["write", "create"]
    ) -> WriteOutcome:
        self._writable()
        key = self.key(path)
        shown = display(key)
        if not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, "/ is the workspace root directory; "
                          "give a file path.")
        intent = WriteIntent(
            owner=self.owner,
            key=key,
            path=shown,
            operation=operation,
            precondition=CreateOnly() if operation == "create" else Overwrite(),
            size=len(content),
        )
        self._gate.dispatch(intent)
        precondition: Precondition = intent.precondition
        code, hint = intent.conflict_code, intent.conflict_hint
        if operation == "create":
            precondition = CreateOnly()
            code = ErrorCode.FS_ALREADY_EXISTS
            hint = (
                f"{shown} already exists; create never replaces a file. View it and use "
                "str_replace (or insert) to change it."
            )
        fmt: TextFormat | None = None
        old_view: str | None = None
        if isinstance(precondition, IfMatch):
            cached = self._docs.get(key, precondition.version)
            if cached is not None:
                fmt, old_view = cached
            else:
                try:
                    doc, current = self._load(key, record_missing=False)
                except FsError as e:
                    if e.code is not ErrorCode.FS_NOT_FOUND:
                        raise
                    raise self._conflict(
                        Conflict("missing", f"{shown} no longer exists.", path=shown), code, hint
                    ) from None
                if current != precondition.version:
                    raise self._conflict(
                        Conflict("mismatch", f"{shown} has changed.", path=shown), code, hint
                    )
                fmt, old_view = doc.format, doc.view
        elif isinstance(precondition, Overwrite):
            try:
                doc, _ = self._load(key, record_missing=False)
                fmt, old_view = doc.format, doc.view
            except FsError as e:
                if e.code is not ErrorCode.FS_NOT_FOUND:
                    raise
        _check_text(content, "content")
        data = _encode(lambda: encode_new(content, fmt), "content")
        self._check_size(shown, len(data))
        try:
            version = self.backend.write(key, data, precondition)
        except Conflict as c:
            raise self._conflict(c, code, hint) from None
        created = isinstance(precondition, CreateOnly) or (
            isinstance(precondition, Overwrite) and fmt is None
        )
        new_doc = decode(data, shown)
        self._docs.put(key, version, new_doc.format, new_doc.view)
        old_text = "" if created else old_view
        event = WrittenEvent(
            owner=self.owner, key=key, path=shown, operation=operation, version=version,
            created=created,
        )
        self._gate.dispatch(event.with_diff(shown, old_text, new_doc.view))
        outcome = WriteOutcome(
            path=shown, operation=operation, created=created, version=version, size=len(data),
            lines=len(new_doc.lines),
        )
        outcome.with_diff(shown, old_text, new_doc.view)
        return outcome

    def _edit(
        self, key: str, operation: str, build: Callable[[TextDoc], tuple[TextDoc, int, int, int]]
    ) -> EditOutcome:
        """Read once, let the gate decide, apply ``build``, write with the precondition."""
        shown = display(key)
        doc, current = self._load(key)
        intent = EditIntent(
            owner=self.owner,
            key=key,
            path=shown,
            operation="insert" if operation == "insert" else "replace",
            current=current,
            precondition=IfMatch(current),
            conflict_code=ErrorCode.FS_STALE,
            conflict_hint=(
                f"{shown} changed while your edit was being written. Read it again, then "
                "retry the edit."
            ),
        )
        self._gate.dispatch(intent)
        pre = intent.precondition
        if isinstance(pre, IfMatch) and pre.version != current:
            raise self._conflict(
                Conflict("mismatch", f"{shown} has changed.", path=shown),
                intent.conflict_code, intent.conflict_hint,
            )
        new_doc, count, first, last = build(doc)
        data = _encode(new_doc.encode, "the new text")
        self._check_size(shown, len(data))
        try:
            version = self.backend.write(key, data, pre)
        except Conflict as c:
            raise self._conflict(c, intent.conflict_code, intent.conflict_hint) from None
        self._docs.put(key, version, new_doc.format, new_doc.view)
        event = WrittenEvent(
            owner=self.owner, key=key, path=shown, operation=intent.operation,
            version=version, created=False,
        )
        self._gate.dispatch(event.with_diff(shown, doc.view, new_doc.view))
        snippet, start = _snippet(new_doc, first, last)
        outcome = EditOutcome(
            path=shown, operation=intent.operation, replacements=count,
            replace_all=operation == "replace_all", version=version, first_line=first,
            snippet=snippet, snippet_start=start,
        )
        outcome.with_diff(shown, doc.view, new_doc.view)
        return outcome

    def replace(
        self, path: str, old: str, new: str, replace_all: bool = False, *, old_name: str =
        "old_string", new_name: str = "new_string"
    ) -> EditOutcome:
        """Replace a literal, unique (or every, with ``replace_all``) occurrence of ``old``."""
        self._writable()
        key = self.key(path)
        shown = display(key)
        if old == "":
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, f"{old_name} is empty; give the exact "
                          "text to replace (read the file to copy it).")
        _check_text(new, new_name)
        old_n = old.replace("\r\n", "\n")
        new_n = new.replace("\r\n", "\n")
        if old_n == new_n:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, f"{old_name} and {new_name} are the "
                          "same; nothing would change.")

        def build(doc: TextDoc) -> tuple[TextDoc, int, int, int]:
            starts: list[int] = []
            i = doc.view.find(old_n)
            while i >= 0:
                starts.append(i)
                i = doc.view.find(old_n, i + len(old_n))
            if not starts:
                raise FsError(
                    ErrorCode.FS_NO_MATCH,
                    f"{old_name} was not found in {shown}. It must match the file exactly, "
                    "including whitespace and indentation; read the file and copy the text.",
                    path=shown,
                )
            if len(starts) > 1 and not replace_all:
                lines = ", ".join(str(doc.line_of(s)) for s in starts[:20])
                more = "" if len(starts) <= 20 else f" (and {len(starts) - 20} more)"
                raise FsError(
                    ErrorCode.FS_MULTIPLE_MATCHES,
                    f"{old_name} occurs {len(starts)} times in {shown}, at lines {lines}{more}."
                    f" Include more surrounding lines in {old_name} to make it unique, or set "
                    "replace_all to replace every occurrence.",
                    path=shown,
                )
            new_doc = doc.splice([(s, s + len(old_n), new_n) for s in starts])
            first = doc.line_of(starts[0])
            last = first + max(0, len(split_lines(new_n)) - 1)
            return new_doc, len(starts), first, last

        return self._edit(key, "replace_all" if replace_all else "replace", build)

    def insert(self, path: str, line: int, text: str) -> EditOutcome:
        """Insert ``text`` after line ``line`` (0 = before the first line).

        Inserted before an existing line, the text is made to end with a newline so that it
        forms whole lines; at the end of the file no trailing newline is added.
        """
        self._writable()
        key = self.key(path)
        shown = display(key)
        _check_text(text, "new_str")
        text = text.replace("\r\n", "\n")

        def build(doc: TextDoc) -> tuple[TextDoc, int, int, int]:
            n = len(doc.lines)
            if line < 0 or line > n:
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    f"insert_line {line} is out of range: {shown} has {n} lines, so use 0 "
                    f"(before the first line) to {n} (after the last).",
                    path=shown,
                )
            at = doc.line_start(line)
            piece = text
            if line < n:
                if not piece.endswith("\n"):
                    piece += "\n"
            elif doc.view and not doc.view.endswith("\n"):
                piece = "\n" + piece
            new_doc = doc.splice([(at, at, piece)])
            first = line + 1
            last = line + max(1, len(split_lines(text)))
            return new_doc, 1, first, last

        return self._edit(key, "insert", build)
