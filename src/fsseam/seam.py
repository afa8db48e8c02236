"""ctx.fs: the seam between tools and storage.

Resolves virtual paths under the root, applies the text rules, dispatches fs/* events
through the gate, and calls the backend with the precondition the gate decided. Every
method returns a pydantic outcome or raises FsError; a failed call changes nothing.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from .backends._digest import digest_version
from .backends.base import Backend, Blob, Entry
from .changes import (
    Create,
    Delete,
    FileChange,
    Step,
    Update,
    ambiguous,
    cause_text,
    commit,
    gone_already,
    landed,
)
from .doccache import DocCache
from .edits import (
    EditOp,
    EditPlan,
    Insert,
    Replace,
    Span,
    apply,
    check_new_text,
    check_replace,
)
from .errors import Conflict, ErrorCode, FsError
from .events import (
    DeletedEvent,
    DeleteIntent,
    EditIntent,
    ListEvent,
    MissingEvent,
    ReadEvent,
    StatEvent,
    WriteIntent,
    WrittenEvent,
)
from .gate import Gate
from .globs import SKIP_DIRS, Glob, echo, is_skipped
from .grep import Pattern, RegexBudget, SearchTimeout, has_match, hunks, matching_lines
from .history import Authors
from .limits import Limits
from .messages import Role
from .outcomes import (
    ChangedFile,
    ChangeOutcome,
    DeleteOutcome,
    EditOutcome,
    GlobOutcome,
    GrepFile,
    GrepHunk,
    GrepOutcome,
    ListEntry,
    ListOutcome,
    MoveOutcome,
    ReadOutcome,
    StatOutcome,
    WriteOutcome,
)
from .paths import display, to_key
from .text import (
    SNIFF_BYTES,
    LineWindow,
    TextDoc,
    TextFormat,
    check_text,
    decode,
    encode_new,
)
from .undo import HistoryOps
from .versions import CreateOnly, IfMatch, Overwrite, Precondition, Version

__all__ = ["Limits", "Seam"]

T = TypeVar("T")

SNIPPET_CONTEXT = 3
WALK_BATCH = 1000
"""Walked entries go through the gate's list hook this many at a time."""


def _snippet(doc: TextDoc, span: Span, anchored: bool) -> tuple[list[str], int]:
    """The lines around ``span`` in ``doc``; ``anchored``: ``span.at`` is an offset in
    ``doc`` itself (a plan of one edit), so only the lines shown are looked at."""
    start = max(1, span.first_line - SNIPPET_CONTEXT)
    end = span.last_line + SNIPPET_CONTEXT
    if anchored and span.at is not None:
        return doc.lines_near(span.at, span.first_line, start, end), start
    lines = doc.lines
    return lines[start - 1 : min(len(lines), end)], start


def _encode(make: Callable[[], bytes], role: str) -> bytes:
    try:
        return make()
    except UnicodeEncodeError as e:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason="text_not_utf8",
            details={"arg": Role(role), "position": e.start},
        ) from None


def _listing_order(e: Entry) -> tuple[str, str]:
    return e.name, e.kind


def smallest(
    items: Iterable[T], key: Callable[[T], Any], cost: Callable[[T], int], budget: int
) -> tuple[list[T], int]:
    """The first of ``items`` in ``sorted(items, key=key)`` order whose costs add up to
    ``budget`` (all of them if they add up to less; at least one, as a cut output shows at
    least one row), sorted, and how many items there were.

    One pass, holding only those: a heap whose top is the greatest kept item, which leaves
    as soon as the others alone reach the budget."""
    heap: list[_Desc[T]] = []
    total = count = 0
    for item in items:
        count += 1
        k = key(item)
        if total >= budget and heap and not k < heap[0].key:
            continue  # after every item kept: it would leave at once
        c = cost(item)
        heapq.heappush(heap, _Desc(k, c, count, item))
        total += c
        while len(heap) > 1 and total - heap[0].cost >= budget:
            total -= heapq.heappop(heap).cost
    kept = sorted(heap, reverse=True)
    return [d.item for d in kept], count


class _Desc(Generic[T]):
    """A heap item that sorts greatest first (ties: the later item first)."""

    __slots__ = ("cost", "item", "key", "seq")

    def __init__(self, key: Any, cost: int, seq: int, item: T) -> None:
        self.key, self.cost, self.seq, self.item = key, cost, seq, item

    def __lt__(self, other: _Desc[T]) -> bool:
        if self.key == other.key:
            return bool(self.seq > other.seq)
        return bool(other.key < self.key)


def _probe(e: Entry, depth: int) -> ListEntry:
    return ListEntry.model_construct(
        path=display(e.key), type=e.kind, size=e.size, depth=depth,
        target=None if e.target is None else display(e.target),
    )


def _entry(e: Entry, depth: int) -> ListEntry:
    return ListEntry(
        path=display(e.key), type=e.kind, size=e.size, depth=depth,
        target=None if e.target is None else display(e.target),
    )


class Seam(HistoryOps):
    """One owner's view of one workspace (``ctx.fs``).

    Its dependencies are handed in (the Workspace builds it): the backend, the gate, the
    limits, the workspace's document cache and whether it is read-only. Nothing above the
    seam reaches the backend. History, restore and undo come from
    :class:`~fsseam.undo.HistoryOps`.
    """

    def __init__(
        self,
        backend: Backend,
        gate: Gate,
        owner: str,
        *,
        limits: Limits | None = None,
        docs: DocCache | None = None,
        read_only: bool = False,
        authors: Authors | None = None,
    ) -> None:
        self.backend = backend
        self.owner = owner
        self.limits = limits or Limits()
        self.read_only = read_only
        self._gate = gate
        self._docs = docs or DocCache(self.limits.doc_cache_bytes)
        self._authors = authors or Authors()

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
            return FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason="not_found")
        return err

    def _writable(self) -> None:
        if self.read_only:
            raise FsError(ErrorCode.FS_READ_ONLY, reason="read_only")

    def _writable_at(self, *keys: str) -> None:
        """A store mounted read-only refuses a change before anything is read for it (a
        backend with ``check_writable``: mounts), as a read-only workspace does."""
        check = getattr(self.backend, "check_writable", None)
        if check is not None:
            for key in keys:
                check(key)

    # -- reads -------------------------------------------------------------
    def read(
        self, path: str, offset: int = 1, limit: int | None = None, *,
        max_chars: int | None = None, max_line_chars: int | None = None,
    ) -> ReadOutcome:
        """Lines ``[offset, offset + limit)`` (1-based) and the version of the file.

        A surface that shows at most ``max_chars`` characters, cutting lines longer than
        ``max_line_chars``, passes both: the read then holds no more than that output needs
        (see :class:`~fsseam.text.LineWindow`), whatever the file and the limit."""
        if offset < 1:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="offset_below_one")
        limit = self.limits.default_read_lines if limit is None else limit
        if limit < 1:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="below_one",
                          details={"arg": Role("limit")})
        key = self.key(path)
        shown = display(key)
        try:
            stream = self.backend.open_read(key, self.limits.read_chunk_bytes)
        except FsError as e:
            raise self._missing(key, e) from None
        window = LineWindow(shown, offset, limit, max_chars, max_line_chars)
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
            raise FsError(ErrorCode.FS_BACKEND, path=shown, reason="no_version")
        total = window.count if complete else None
        if complete and offset > max(total or 0, 1):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                path=shown,
                reason="offset_past_end",
                details={"requested": offset, "total": total},
            )
        returned = len(window.lines)
        partial = not (complete and offset == 1 and returned == total)
        if complete:
            raw = b"".join(small) if small is not None else None
            if raw is not None and partial:
                # A file small enough to keep is validated whole, so a read reports a
                # non-UTF-8 file even when the invalid bytes lie outside the window. (A
                # window of every line has decoded every byte strictly already.)
                check_text(raw, shown)
            self._docs.put(key, version, window.format, raw)
        self._gate.dispatch(
            ReadEvent(owner=self.owner, key=key, path=shown, version=version, partial=partial)
        )
        # Built from values of the declared types, so not validated again: checking each of
        # the lines a read returns is most of what validation costs (30 us for 2,000).
        return ReadOutcome.model_construct(
            path=shown,
            lines=window.lines,
            offset=offset,
            returned=returned,
            total=total,
            version=version,
            partial=partial,
            cut=window.cut,
        )

    def _load(self, key: str, record_missing: bool = True) -> tuple[TextDoc, Version]:
        """The whole file as text, for an edit: one round trip, and never more than the
        edit limit fetched (a huge object is refused, not downloaded)."""
        data, version = self._load_bytes(key, record_missing)
        return decode(data, display(key)), version

    def _load_bytes(self, key: str, record_missing: bool = True) -> tuple[bytes, Version]:
        """The whole file's bytes and their version, within the edit limit."""
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
        except FsError as e:
            if not record_missing:
                raise
            raise self._missing(key, e) from None
        finally:
            stream.close()
        if size > cap:
            raise FsError(
                ErrorCode.FS_TOO_LARGE,
                path=shown,
                reason="edit_too_large",
                details={"size": size, "cap": cap},
            )
        version = stream.version
        if version is None:  # pragma: no cover - a backend bug
            raise FsError(ErrorCode.FS_BACKEND, path=shown, reason="no_version")
        return b"".join(parts), version

    def stat(self, path: str) -> StatOutcome:
        key = self.key(path)
        st = self.backend.stat(key)
        event = StatEvent(owner=self.owner, key=key, path=display(key), type=st.kind,
                          size=st.size)
        self._gate.dispatch(event)
        return StatOutcome(path=display(key), type=st.kind, size=st.size)

    def _visible(self, key: str, entries: Sequence[Entry], operation: Literal["list", "walk"]
                 ) -> Sequence[Entry]:
        """Entries after the gate's list hook (plugins may hide some)."""
        event = ListEvent(owner=self.owner, key=key, path=display(key), operation=operation,
                          entries=list(entries))
        self._gate.dispatch(event)
        return event.entries

    def list(
        self, path: str = "/", depth: int = 1, skip: Callable[[ListEntry], bool] | None = None,
        max_chars: int | None = None,
    ) -> ListOutcome:
        """Entries below a directory, ``depth`` levels deep, sorted; ``skip`` filters.

        ``max_chars``: the output the listing goes to, one entry's path a line. Entries are
        kept only until their rows fill it (the first entries, in listing order, plus the
        one that overflows); the rest of each directory listed is counted in
        ``ListOutcome.more``, and no directory is listed once the output is full."""
        key = self.key(path)
        out: list[ListEntry] = []
        omitted = more = used = 0

        def children(k: str, level: int) -> Iterator[Entry]:
            nonlocal omitted
            for e in self._listed(k):
                # The filter sees each child as a row, which is dropped at once: only the
                # rows kept are validated and held.
                if skip is not None and skip(_probe(e, level)):
                    omitted += 1
                    continue
                yield e

        def walk(k: str, level: int) -> None:
            nonlocal more, used
            # A row is at least its directory's path, a slash, the name and a newline
            # (escaping only makes it longer).
            base = len(display(k).rstrip("/")) + 2

            def cost(e: Entry) -> int:
                return base + len(e.name)

            if max_chars is None:
                kept = sorted(children(k, level), key=_listing_order)
            else:
                kept, total = smallest(children(k, level), _listing_order, cost,
                                       max_chars - used)
                more += total - len(kept)
            for i, e in enumerate(kept):
                if max_chars is not None and used >= max_chars:
                    more += len(kept) - i
                    return
                out.append(_entry(e, level))
                used += cost(e)
                if e.kind == "directory" and level < depth and (
                    max_chars is None or used < max_chars
                ):
                    walk(e.key, level + 1)

        walk(key, 1)
        return ListOutcome(path=display(key), entries=out, omitted=omitted, more=more)

    def _listed(self, key: str) -> Iterator[Entry]:
        """The children of a directory, as the storage yields them, through the gate's list
        hook in batches (plugins may hide some)."""
        lazy: Callable[[str], Iterable[Entry]] | None = getattr(self.backend, "list_lazy", None)
        entries = self.backend.list(key) if lazy is None else lazy(key)
        batch: list[Entry] = []
        sent = False
        for e in entries:
            batch.append(e)
            if len(batch) >= WALK_BATCH:
                yield from self._visible(key, batch, "list")
                batch, sent = [], True
        if batch or not sent:
            yield from self._visible(key, batch, "list")

    def walk(self, path: str = "/") -> Iterator[ListEntry]:
        """Every file (and symlink, never followed) below a directory, in path order, in
        the fewest requests the storage allows; plugins may hide entries."""
        key = self.key(path)
        batch: list[Entry] = []
        for e in self.backend.walk(key):
            batch.append(e)
            if len(batch) >= WALK_BATCH:
                yield from (_entry(v, 0) for v in self._visible(key, batch, "walk"))
                batch = []
        if batch:
            yield from (_entry(v, 0) for v in self._visible(key, batch, "walk"))

    # -- writes ------------------------------------------------------------
    def _conflict(
        self,
        err: Conflict,
        path: str,
        code: ErrorCode | None,
        reason: str | None,
        hint: str | None,
    ) -> FsError:
        """What a lost precondition means to this caller (the intent's code and reason)."""
        if code is None:
            return err
        if err.reason == "missing":
            return FsError(code, path=path, reason="deleted_since_read")
        if hint is not None:
            return FsError(code, hint, path=path)
        return FsError(code, path=path, reason=reason or err.reason)

    def _check_size(self, shown: str, n: int) -> None:
        if n > self.limits.max_edit_bytes:
            raise FsError(
                ErrorCode.FS_TOO_LARGE,
                path=shown,
                reason="content_too_large",
                details={"size": n, "cap": self.limits.max_edit_bytes},
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
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path=shown, reason="root_is_directory")
        self._writable_at(key)
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
        code, reason, hint = intent.conflict_code, intent.conflict_reason, intent.conflict_hint
        if operation == "create":
            precondition = CreateOnly()
            code, reason, hint = ErrorCode.FS_ALREADY_EXISTS, "add_exists", None
        fmt: TextFormat | None = None
        old_view: str | None = None
        # The file's bytes and version when this call read them anyway (no extra request).
        current: tuple[bytes, Version] | None = None
        if isinstance(precondition, IfMatch):
            cached = self._docs.get(key, precondition.version)
            if cached is not None:
                fmt, old_view = cached
            else:
                try:
                    current = self._load_bytes(key, record_missing=False)
                except FsError as e:
                    if e.code is not ErrorCode.FS_NOT_FOUND:
                        raise
                    raise self._conflict(
                        Conflict("missing", path=shown), shown, code, reason, hint
                    ) from None
                doc = decode(current[0], shown)
                fmt, old_view = doc.format, doc.view
        elif isinstance(precondition, Overwrite):
            try:
                current = self._load_bytes(key, record_missing=False)
                doc = decode(current[0], shown)
                fmt, old_view = doc.format, doc.view
            except FsError as e:
                if e.code is not ErrorCode.FS_NOT_FOUND:
                    raise
        check_new_text(content, "content")
        data = _encode(lambda: encode_new(content, fmt), "content")
        self._check_size(shown, len(data))
        if current is not None and current[0] == data:
            return self._unchanged_write(key, shown, operation, data, current[1])
        if isinstance(precondition, IfMatch):
            seen = precondition.version
            if current is not None and current[1] != seen:
                return self._lost_write(Conflict("mismatch", path=shown), key, shown, data,
                                        precondition, operation, (code, reason, hint), current)
            if current is None and self._holds(key, seen, data, None):
                # Writing back exactly what was read: one look at the version instead of
                # a write (which would make a new version of the same bytes).
                now = self._probe(key)
                if now == seen:
                    return self._unchanged_write(key, shown, operation, data, seen)
                lost = (Conflict("missing", path=shown) if now is None
                        else Conflict("mismatch", path=shown))
                return self._lost_write(lost, key, shown, data, precondition, operation,
                                        (code, reason, hint))
        try:
            version = self._put(key, data, precondition)
        except Conflict as c:
            return self._lost_write(c, key, shown, data, precondition, operation,
                                    (code, reason, hint))
        except Exception as e:
            version = self._landed_write(e, key, shown, data, operation, self.owner)
        created = isinstance(precondition, CreateOnly) or (
            isinstance(precondition, Overwrite) and fmt is None
        )
        new_doc = decode(data, shown)
        self._docs.put(key, version, new_doc.format, data)
        old_text = "" if created else old_view
        replaced = (precondition.version if isinstance(precondition, IfMatch)
                    else current[1] if current is not None else None)
        event = WrittenEvent(
            owner=self.owner, key=key, path=shown, operation=operation, version=version,
            created=created, replaced=None if created else replaced,
        )
        self._gate.dispatch(event.with_diff(shown, old_text, new_doc.view))
        outcome = WriteOutcome(
            path=shown, operation=operation, created=created, version=version, size=len(data),
            lines=new_doc.line_count,
        )
        outcome.with_diff(shown, old_text, new_doc.view)
        return outcome

    def _unverified(self, c: Conflict, shown: str, action: str, fallback: FsError,
                    read: FsError) -> FsError:
        """A refused write whose file could not be read back: the refusal may have met our
        own landed request (a resend after a lost answer), so the outcome is unknown,
        unless the read itself shows the file is not ours (gone, or too large)."""
        if read.code is not ErrorCode.FS_BACKEND:
            return fallback
        return FsError(ErrorCode.FS_BACKEND, path=shown, reason="outcome_unknown",
                       details={"cause": cause_text(c, shown, action)})

    def _lost_write(
        self,
        c: Conflict,
        key: str,
        shown: str,
        data: bytes,
        precondition: Precondition,
        operation: Literal["write", "create"],
        lost: tuple[ErrorCode | None, str | None, str | None],
        current: tuple[bytes, Version] | None = None,
    ) -> WriteOutcome:
        """A write whose precondition failed: success after all when the file already holds
        exactly these bytes (another agent wrote the same), else the conflict, with what
        changed since the agent's read when it is FS_STALE."""
        fallback = self._conflict(c, shown, *lost)
        if c.reason == "missing":
            raise fallback
        if current is None:
            try:
                current = self._load_bytes(key, record_missing=False)
            except FsError as e:
                raise self._unverified(c, shown, operation, fallback, e) from None
        if current[0] == data:
            return self._unchanged_write(key, shown, operation, data, current[1])
        if isinstance(precondition, IfMatch) and lost[0] is ErrorCode.FS_STALE:
            raise self._stale(key, shown, precondition.version, current, action="write",
                              fallback=fallback)
        raise fallback

    def _unchanged_write(
        self, key: str, shown: str, operation: Literal["write", "create"], data: bytes,
        version: Version,
    ) -> WriteOutcome:
        """The file holds exactly ``data`` already: nothing is written; the writer has now
        observed its current version."""
        self._observed(key, shown, data, version)
        doc = decode(data, shown)
        outcome = WriteOutcome(path=shown, operation=operation, created=False, version=version,
                               size=len(data), lines=len(doc.lines), unchanged=True)
        outcome.with_diff(shown, doc.view, doc.view)
        return outcome

    def edit(self, path: str, ops: Sequence[EditOp]) -> EditOutcome:
        """Apply a sequence of edits as one plan under one compare-and-swap.

        Argument checks that need no file run first; then one read, the gate's edit intent
        (the observation policy), the plan (any failing edit refuses the whole call), and
        one conditional write. A failed call changes nothing.
        """
        self._writable()
        if not ops:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="no_edits")
        for index, op in enumerate(ops, start=1):
            try:
                if isinstance(op, Replace):
                    check_replace(op)
                else:
                    check_new_text(op.text, "text")
            except FsError as e:
                if len(ops) > 1:
                    e.details["edit_index"] = index
                raise
        key = self.key(path)
        shown = display(key)
        self._writable_at(key)
        doc, current = self._load(key)
        operation: Literal["replace", "insert", "edit"] = (
            "edit" if len(ops) > 1 else "insert" if isinstance(ops[0], Insert) else "replace"
        )
        intent = EditIntent(
            owner=self.owner,
            key=key,
            path=shown,
            operation=operation,
            current=current,
            precondition=IfMatch(current),
            conflict_code=ErrorCode.FS_STALE,
            conflict_reason="changed_during_edit",
        )
        try:
            self._gate.dispatch(intent)
        except FsError as e:
            seen = _seen_before(e)
            if seen is None:
                raise
            return self._stale_edit(key, shown, doc, current, seen, ops, intent, e)
        pre = intent.precondition
        code, reason, hint = intent.conflict_code, intent.conflict_reason, intent.conflict_hint
        if isinstance(pre, IfMatch) and pre.version != current:
            raise self._conflict(Conflict("mismatch", path=shown), shown, code, reason, hint)
        plan = apply(doc, ops, shown)
        if not plan.changed:
            return self._unchanged_edit(key, shown, plan, doc, current, intent, ops)
        return self._commit(key, shown, plan, pre, intent, _replace_all(ops), ops)

    def _stale_edit(
        self, key: str, shown: str, doc: TextDoc, current: Version, seen: Version,
        ops: Sequence[EditOp], intent: EditIntent, refused: FsError,
    ) -> EditOutcome:
        """The file moved on from the version the agent read. If the edit, made on what the
        agent read, gives exactly the current bytes (another agent made the same change),
        it succeeds without a write; otherwise FS_STALE shows what changed."""
        old = self._text_at(key, seen)
        if old is not None:
            try:
                mine = apply(old, ops, shown)
            except FsError:
                mine = None
            if mine is not None and mine.after.encode() == doc.encode():
                return self._unchanged_edit(key, shown, mine, doc, current, intent, ops)
        raise self._stale(key, shown, seen, (doc.encode(), current), action="edit",
                          fallback=refused, ops=ops, old=old) from None

    def _unchanged_edit(
        self, key: str, shown: str, plan: EditPlan, doc: TextDoc, current: Version,
        intent: EditIntent, ops: Sequence[EditOp],
    ) -> EditOutcome:
        """The file already holds the edit's result: nothing is written."""
        self._observed(key, shown, doc.encode(), current)
        first = plan.spans[0]
        # The plan's offsets are in the text it made, not in ``doc``: lines are counted.
        snippet, start = _snippet(doc, first, False)
        outcome = EditOutcome(
            path=shown, operation=intent.operation, replacements=plan.replacements,
            replace_all=_replace_all(ops), version=current, first_line=first.first_line,
            snippet=snippet, snippet_start=start, edits=len(plan.spans), unchanged=True,
        )
        outcome.with_diff(shown, doc.view, doc.view)
        return outcome

    def _commit(
        self,
        key: str,
        shown: str,
        plan: EditPlan,
        pre: Precondition,
        intent: EditIntent,
        replace_all: bool,
        ops: Sequence[EditOp] = (),
    ) -> EditOutcome:
        new_doc = plan.after
        data = _encode(new_doc.encode, "new")
        self._check_size(shown, len(data))
        seen = pre.version if isinstance(pre, IfMatch) else None
        try:
            version = self._put(key, data, pre)
        except Conflict as c:
            fallback = self._conflict(
                c, shown, intent.conflict_code, intent.conflict_reason, intent.conflict_hint
            )
            if c.reason == "missing":
                raise fallback from None
            try:
                now = self._load_bytes(key, record_missing=False)
            except FsError as e:
                raise self._unverified(c, shown, "edit", fallback, e) from None
            if now[0] == data:  # another writer made exactly this change meanwhile
                return self._unchanged_edit(key, shown, plan, decode(now[0], shown), now[1],
                                            intent, ops)
            if intent.conflict_code is not ErrorCode.FS_STALE:
                raise fallback from None
            raise self._stale(key, shown, seen, now, action="edit", fallback=fallback,
                              ops=ops, old=plan.before) from None
        except Exception as e:
            version = self._landed_write(e, key, shown, data, "edit", self.owner)
        self._docs.put(key, version, new_doc.format, data)
        event = WrittenEvent(
            owner=self.owner, key=key, path=shown, operation=intent.operation,
            version=version, created=False, replaced=seen,
        )
        self._gate.dispatch(event.with_diff(shown, plan.before.view, new_doc.view))
        first = plan.spans[0]
        snippet, start = _snippet(new_doc, first, len(plan.spans) == 1)
        outcome = EditOutcome(
            path=shown, operation=intent.operation, replacements=plan.replacements,
            replace_all=replace_all, version=version, first_line=first.first_line, snippet=snippet,
            snippet_start=start, edits=len(plan.spans),
        )
        outcome.with_diff(shown, plan.before.view, new_doc.view)
        return outcome

    def replace(self, path: str, old: str, new: str, replace_all: bool = False) -> EditOutcome:
        """Replace a literal, unique (or every, with ``replace_all``) occurrence of ``old``."""
        return self.edit(path, [Replace(old, new, replace_all)])

    def insert(self, path: str, line: int, text: str) -> EditOutcome:
        """Insert ``text`` verbatim at the zero-based line boundary ``line`` (0 = the start
        of the file, the line count = its end); no newline is added: end the text with one
        to insert whole lines."""
        return self.edit(path, [Insert(line, text)])

    # -- changing several files at once -------------------------------------
    def change(self, changes: Sequence[FileChange]) -> ChangeOutcome:
        """Create, update, move and delete several files as one change, all or nothing.

        Nothing is written until every part has been validated: every path resolved (none
        named twice), one read of each file updated, moved or deleted, the gate's intent for
        each (the observation policy decides each precondition: a fresh observation of
        each existing file, the absence of each new one), every new content computed and
        within the limits. Then :func:`fsseam.changes.commit` writes it in a fixed order,
        each step conditional, undoing the steps done if one fails. The written and deleted
        events are dispatched only once the whole change has committed.
        """
        self._writable()
        if not changes:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="change_empty")
        for c in changes:
            if isinstance(c, Create):
                check_new_text(c.content, "content")
        named: set[str] = set()
        resolved: list[tuple[FileChange, str, str | None]] = []
        for c in changes:
            key = self._file_key(c.path)
            dst: str | None = None
            if isinstance(c, Update):
                if c.move_to is not None:
                    dst = self._file_key(c.move_to)
                    dst = None if dst == key else dst
                if c.edit is None and dst is None:
                    raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(key),
                                  reason="change_nothing")
            for k in (key, dst):
                if k is None:
                    continue
                if k in named:
                    raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(k),
                                  reason="change_same_path")
                named.add(k)
            resolved.append((c, key, dst))
        prepared = [self._prepare(c, key, dst) for c, key, dst in resolved]
        commit(self._owned(), [step for p in prepared for step in p.steps])
        return self._committed(prepared)

    def _file_key(self, path: str) -> str:
        key = self.key(path)
        if not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason="root_is_directory")
        return key

    def _absent(self, key: str, exists: FsError) -> None:
        """Raise ``exists`` (or FS_IS_DIRECTORY) unless nothing is at ``key`` now."""
        try:
            st = self.backend.stat(key)
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND and e.reason != "bucket_missing":
                return
            raise
        if st.kind == "directory":
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path=display(key), reason="is_directory")
        raise exists

    def _stale_before(self, pre: Precondition, current: tuple[bytes, Version], key: str,
                      shown: str, intent: EditIntent | DeleteIntent, action: str) -> None:
        """A precondition already lost against the version just read: refuse now, with
        what changed since the agent's read."""
        if isinstance(pre, IfMatch) and pre.version != current[1]:
            fallback = self._conflict(Conflict("mismatch", path=shown), shown,
                                      intent.conflict_code, intent.conflict_reason,
                                      intent.conflict_hint)
            raise self._stale_part(key, shown, pre.version, current, action, fallback)

    def _stale_part(self, key: str, shown: str, seen: Version | None,
                    current: tuple[bytes, Version] | None, action: str,
                    fallback: FsError) -> FsError:
        """FS_STALE for one file of a change, with what changed since ``seen`` (the same
        refusal a single edit gives; one more read when ``current`` is not at hand)."""
        if fallback.code is not ErrorCode.FS_STALE or seen is None:
            return fallback
        return self._stale(key, shown, seen, current, action=action, fallback=fallback)

    def _lost_part(self, key: str, shown: str, pre: Precondition, action: str,
                   intent: EditIntent | DeleteIntent) -> Callable[[Conflict], FsError]:
        """What a step of a change that lost its precondition at commit tells the agent."""

        def lost(err: Conflict) -> FsError:
            fallback = self._conflict(err, shown, intent.conflict_code, intent.conflict_reason,
                                      intent.conflict_hint)
            if err.reason != "mismatch" or not isinstance(pre, IfMatch):
                return fallback
            return self._stale_part(key, shown, pre.version, None, action, fallback)

        return lost

    def _prepare(self, c: FileChange, key: str, dst: str | None) -> _Prepared:
        shown = display(key)
        if isinstance(c, Create):
            return self._prepare_create(c, key, shown)
        if isinstance(c, Delete):
            raw, current = self._load_bytes(key)
            intent = DeleteIntent(
                owner=self.owner, key=key, path=shown, operation="delete",
                precondition=IfMatch(current), conflict_code=ErrorCode.FS_STALE,
                conflict_reason="stale_delete",
            )
            self._gate.dispatch(intent)
            pre = intent.precondition
            self._stale_before(pre, (raw, current), key, shown, intent, "delete")
            stale = self._lost_part(key, shown, pre, "delete", intent)

            def gone(err: Conflict) -> FsError:
                if err.reason == "missing":
                    return FsError(ErrorCode.FS_NOT_FOUND, path=shown, reason="missing")
                return stale(err)

            step = Step("delete", key, shown, pre, gone, old=raw)
            return _Prepared(c, key, shown, [step], before=_text_or_none(raw))
        return self._prepare_update(c, key, shown, dst)

    def _prepare_create(self, c: Create, key: str, shown: str) -> _Prepared:
        intent = WriteIntent(owner=self.owner, key=key, path=shown, operation="create",
                             precondition=CreateOnly(), size=len(c.content))
        self._gate.dispatch(intent)
        self._absent(key, FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown, reason="add_exists"))
        data = _encode(lambda: encode_new(c.content, None), "content")
        self._check_size(shown, len(data))

        def exists(err: Conflict) -> FsError:
            return self._conflict(err, shown, ErrorCode.FS_ALREADY_EXISTS, "add_exists", None)

        step = Step("create", key, shown, CreateOnly(), exists, data=data)
        return _Prepared(c, key, shown, [step], before="", after=decode(data, shown))

    def _prepare_update(self, c: Update, key: str, shown: str, dst: str | None) -> _Prepared:
        after: TextDoc | None = None
        before: str | None = None
        pre: Precondition
        if c.edit is not None:
            doc, current = self._load(key)
            edit = EditIntent(
                owner=self.owner, key=key, path=shown, operation="edit", current=current,
                precondition=IfMatch(current), conflict_code=ErrorCode.FS_STALE,
                conflict_reason="changed_during_edit",
            )
            try:
                self._gate.dispatch(edit)
            except FsError as e:
                seen = _seen_before(e)
                if seen is None:
                    raise
                raise self._stale_part(key, shown, seen, (doc.encode(), current), "edit",
                                       e) from None
            pre = edit.precondition
            self._stale_before(pre, (doc.encode(), current), key, shown, edit, "edit")
            after = c.edit(doc, shown)
            data = _encode(after.encode, "new")
            self._check_size(shown, len(data))
            old, before = doc.encode(), doc.view
            lost = self._lost_part(key, shown, pre, "edit", edit)
        else:
            old, current = self._load_bytes(key)
        if dst is None:
            assert after is not None
            step = Step("write", key, shown, pre, lost, data=data, old=old)
            return _Prepared(c, key, shown, [step], before=before, after=after)
        dst_shown = display(dst)
        move = DeleteIntent(
            owner=self.owner, key=key, path=shown, operation="move", destination=dst_shown,
            precondition=IfMatch(current), conflict_code=ErrorCode.FS_STALE,
            conflict_reason="stale_move",
        )
        self._gate.dispatch(move)
        source = move.precondition
        self._stale_before(source, (old, current), key, shown, move, "move")
        stale = self._lost_part(key, shown, source, "move", move)
        facts = {"destination": dst_shown}
        self._absent(dst, FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown,
                                  reason="move_destination_exists", details=facts))

        def moved(err: Conflict) -> FsError:
            if err.reason == "exists":
                return FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown,
                               reason="move_destination_exists", details=facts)
            if err.reason == "missing":
                return FsError(ErrorCode.FS_NOT_FOUND, path=shown, reason="deleted_before_move")
            return stale(err)

        if after is not None:
            put = Step("create", dst, dst_shown, CreateOnly(), moved, data=after.encode())
        else:
            put = Step("copy", dst, dst_shown, source, moved, data=old, source=key)
        remove = Step("delete", key, shown, source, moved, old=old, moved_to=dst)
        return _Prepared(c, key, shown, [put, remove], before=before, after=after, dst=dst,
                         dst_shown=dst_shown)

    def _committed(self, prepared: Sequence[_Prepared]) -> ChangeOutcome:
        """Record and report a change that committed."""
        files: list[ChangedFile] = []
        diffs: list[tuple[str, str | None, str]] = []
        for p in prepared:
            c = p.change
            if isinstance(c, Delete):
                self._gate.dispatch(DeletedEvent(owner=self.owner, key=p.key, path=p.shown))
                files.append(ChangedFile(path=p.shown, action="delete"))
                diffs.append((p.shown, p.before, ""))
                continue
            written = p.steps[0]
            version = written.version
            assert version is not None
            key, shown = (p.dst, p.dst_shown) if p.dst is not None else (p.key, p.shown)
            assert key is not None and shown is not None
            new_view = p.after.view if p.after is not None else None
            if p.after is not None:
                # The bytes, not only the text: a later conflict's diff starts from them.
                kept = written.data if written.data is not None else p.after.view
                self._docs.put(key, version, p.after.format, kept)
            operation: Literal["create", "edit", "move"] = (
                "create" if isinstance(c, Create) else "move" if p.dst is not None else "edit"
            )
            # An update in place replaced the version its step was conditional on (the one
            # the agent observed): undo writes that back. A create or a move's destination
            # replaced nothing.
            pre = written.precondition
            replaced = (pre.version if operation == "edit" and isinstance(pre, IfMatch)
                        else None)
            if operation != "move":  # a moved file's bytes are its source's author's
                self._authors.note(key, version, self.owner)
            event = WrittenEvent(owner=self.owner, key=key, path=shown, operation=operation,
                                 version=version, created=operation != "edit",
                                 replaced=replaced)
            if new_view is not None:
                event = event.with_diff(shown, p.before, new_view)
            self._gate.dispatch(event)
            if p.dst is not None:
                self._gate.dispatch(DeletedEvent(owner=self.owner, key=p.key, path=p.shown,
                                                 operation="move", destination=shown))
            action: Literal["add", "update", "move"] = (
                "add" if operation == "create" else "move" if operation == "move" else "update"
            )
            files.append(ChangedFile(
                path=shown, action=action, source=p.shown if p.dst is not None else None,
                version=version, lines=None if p.after is None else p.after.line_count,
            ))
            if new_view is not None:
                diffs.append((shown, p.before, new_view))
        return ChangeOutcome(files=files).with_diffs(diffs)

    # -- finding -----------------------------------------------------------
    def glob(self, pattern: Glob, path: str = "/", limit: int = 100) -> GlobOutcome:
        """Files below ``path`` matching ``pattern``, in path order (the first ``limit``)."""
        key = self.key(path)
        if pattern.base and any(s in ("", ".", "..") for s in pattern.base.split("/")):
            # The walk starts at the base unchecked (it is below a checked key): only plain
            # names keep it below the search directory, whoever built the Glob.
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="glob_parent",
                          details={"pattern": echo(pattern.pattern)})
        base = "/".join(p for p in (key, pattern.base) if p)
        prefix = f"{key}/" if key else ""
        paths: list[str] = []
        total = hidden = 0
        try:
            entries = self._walk_visible(base)
            for e in entries:
                relative = e.key[len(prefix):]
                if not pattern.match(relative):
                    continue
                if not pattern.allows(relative):
                    hidden += 1
                    continue
                total += 1
                if len(paths) < limit:
                    paths.append(display(e.key))
        except FsError as e:
            # A literal base the tree does not have simply matches nothing.
            if not (pattern.base and e.code is ErrorCode.FS_NOT_FOUND):
                raise
        return GlobOutcome(path=display(key), pattern=pattern.pattern, paths=paths,
                           total=total, limit=limit, hidden=hidden)

    def _walk_visible(self, key: str) -> Iterator[Entry]:
        """The gate-filtered files of a walk (symlinks left out: their targets inside the
        tree are walked themselves)."""
        batch: list[Entry] = []
        for e in self.backend.walk(key):
            if e.kind != "file":
                continue
            batch.append(e)
            if len(batch) >= WALK_BATCH:
                yield from self._visible(key, batch, "walk")
                batch = []
        if batch:
            yield from self._visible(key, batch, "walk")

    def grep(
        self,
        pattern: Pattern,
        path: str = "/",
        *,
        files: Glob | None = None,
        mode: Literal["files_with_matches", "content", "count"] = "files_with_matches",
        context: int = 0,
        limit: int = 100,
    ) -> GrepOutcome:
        """Search the text files below ``path`` (or the file ``path``) for ``pattern``.

        ``limit`` caps the files listed (``files_with_matches``, ``count``) or the matching
        lines shown (``content``). Binary, non-UTF-8, over-size and unreadable files are
        skipped and counted, never fatal. In ``content`` mode each file shown is recorded
        as observed at the version that was searched (its lines were shown, as a windowed
        read shows them).
        """
        key = self.key(path)
        prefix = f"{key}/" if key else ""
        skipped: dict[str, int] = {}
        cap = self.limits.max_edit_bytes
        budget = RegexBudget(self.limits.grep_regex_seconds)
        stopped = False

        def skip(why: str) -> None:
            skipped[why] = skipped.get(why, 0) + 1

        def out_of_time() -> bool:
            # Once the pattern has spent the call's regex time, the files left are counted
            # and not read: reading them would only lead to skipping them.
            nonlocal stopped
            if not budget.spent:
                return False
            stopped = True
            skip("timeout")
            return True

        last_dir: str | None = None
        dir_ok = True

        def accept(k: str) -> bool:
            # Files come directory by directory: whether a directory is searchable is
            # worked out once for all its files, and each file's own name tested alone.
            nonlocal last_dir, dir_ok
            relative = k[len(prefix):]
            if files is not None:
                if not files.match(relative):
                    return False
                ok = files.allows(relative)
            else:
                parent, _, name = relative.rpartition("/")
                if parent != last_dir:
                    last_dir, dir_ok = parent, not parent or _searchable(parent)
                ok = dir_ok and not (name[:1] == "." or name in SKIP_DIRS)  # is_skipped, inline
            if not ok:
                skip("hidden")
                return False
            return not out_of_time()

        def candidates() -> Iterator[Entry]:
            # The walk first: it is the common case, and it says when path is a file (a
            # stat first would cost object stores two requests on every search).
            walked = self._walk_visible(key)
            try:
                head = list(itertools.islice(walked, 1))
            except FsError as err:
                if err.code is not ErrorCode.FS_INVALID_ARGUMENT or not key:
                    raise self._missing(key, err) from None
                try:
                    st = self.backend.stat(key)
                except FsError as err2:
                    raise self._missing(key, err2) from None
                if st.kind != "file":
                    raise
                if st.size is not None and st.size > cap:
                    skip("too_large")  # as in a directory's search: named alone, not read
                    return
                yield Entry(key=key, name=key.rsplit("/", 1)[-1], kind="file", size=st.size)
                return
            for e in itertools.chain(head, walked):
                if not accept(e.key):
                    continue
                if e.size is not None and e.size > cap:
                    skip("too_large")
                    continue
                yield e

        needle = _needle(pattern)

        def tree() -> Iterator[tuple[str, Blob | bytes | FsError, bool | None]] | None:
            """The local backend's walk and reads in one pass, where nothing is lost by it:
            no plugin filters listings (the pass builds no entries to show one) and
            ``path`` is a directory (a file takes the plain path)."""
            fused = getattr(self.backend, "read_tree_unhashed", None)
            if fused is None or self._gate.hooked("fs/list"):
                return None
            holds = None if needle is None else (lambda data: needle in data)
            reads: Iterator[tuple[str, bytes | FsError, bool]] = fused(key, accept, cap, holds)
            try:
                head = list(itertools.islice(reads, 1))
            except FsError as err:
                if err.code is not ErrorCode.FS_INVALID_ARGUMENT or not key:
                    raise self._missing(key, err) from None
                return None
            return itertools.chain(head, reads)

        shown: list[GrepFile] = []
        files_matched = lines_matched = searched = shown_lines = 0
        truncated = False
        # A backend whose versions are digests of the bytes (local) reads without them: a
        # search hashes only the files it shows, the only ones whose version it reports.
        reads = tree()
        if reads is None:
            many = self._read_capped_many(candidates(), cap)
            reads = ((e.key, got, None) for e, got in many)
        # has_needle: whether the literal is in the bytes, when the read has told already.
        for file_key, got, has_needle in reads:
            if isinstance(got, bytes):
                data, version = got, None
            elif isinstance(got, FsError):
                skip("too_large" if got.code is ErrorCode.FS_TOO_LARGE else "unreadable")
                continue
            else:
                data, version = got.data, got.version
            if data.find(b"\x00", 0, SNIFF_BYTES) >= 0:
                skip("binary")
                continue
            if needle is not None and not (
                needle in data if has_needle is None else has_needle
            ):
                # Most files of a search hold no match, and a literal absent from the bytes
                # is absent from their text (UTF-8 encodes each character alone; dropping a
                # BOM or the CR of CRLF joins no two characters that were not adjacent, as
                # a literal holds no newline): only whether the file is text is left to
                # tell, for the counts.
                if not data.isascii():
                    try:
                        data.decode("utf-8")
                    except UnicodeDecodeError:
                        skip("not_utf8")
                        continue
                searched += 1
                continue
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                skip("not_utf8")
                continue
            if text.startswith("\ufeff"):
                text = text[1:]
            if b"\r" in data:  # a byte scan, several times cheaper than a str search
                text = text.replace("\r\n", "\n")
            if pattern.literal is None and out_of_time():
                continue  # read ahead (object stores fetch several at once), not searched
            searched += 1
            try:
                if mode == "files_with_matches":
                    count = 1 if has_match(text, pattern, budget) else 0
                    matches: list[int] = []
                else:
                    matches = matching_lines(text, pattern, budget)
                    count = len(matches)
            except SearchTimeout:
                skip("timeout")
                continue
            if not count:
                continue
            files_matched += 1
            lines_matched += count
            shown_path = display(file_key)
            if mode == "content":
                room = limit - shown_lines
                if room <= 0:
                    truncated = True
                    continue
                if len(matches) > room:
                    matches, truncated = matches[:room], True
                shown_lines += len(matches)
                found = [GrepHunk(first=h.first, lines=h.lines, matches=h.matches)
                         for h in hunks(text, matches, context)]
                shown.append(GrepFile(path=shown_path, count=count, hunks=found))
                self._gate.dispatch(ReadEvent(owner=self.owner, key=file_key,
                                              path=shown_path,
                                              version=(version if version is not None
                                                       else digest_version(data)),
                                              partial=True))
            elif len(shown) < limit:
                shown.append(GrepFile(path=shown_path, count=count))
            else:
                truncated = True
        return GrepOutcome(
            path=display(key), pattern=pattern.source, mode=mode, files=shown,
            files_matched=files_matched, lines_matched=lines_matched, searched=searched,
            limit=limit, truncated=truncated, skipped=skipped, stopped=stopped,
        )

    def _read_capped_many(
        self, entries: Iterable[Entry], cap: int
    ) -> Iterator[tuple[Entry, Blob | bytes | FsError]]:
        """The reads of a search: a file of known size comes from the backend's
        ``read_many`` (the caller has left out those over ``cap``); one whose size the
        store did not say is streamed, and given up on past ``cap`` bytes, not read whole."""
        read_many: Callable[[Iterable[Entry]], Iterator[tuple[Entry, Blob | bytes | FsError]]]
        read_many = getattr(self.backend, "read_many_unhashed", self.backend.read_many)
        for unknown, run in itertools.groupby(entries, key=lambda e: e.size is None):
            if not unknown:
                yield from read_many(run)
                continue
            for e in run:
                yield e, self._read_capped(e.key, cap)

    def _read_capped(self, key: str, cap: int) -> Blob | FsError:
        try:
            stream = self.backend.open_read(key, self.limits.read_chunk_bytes)
        except FsError as err:
            return err
        too_large = FsError(ErrorCode.FS_TOO_LARGE, path=display(key), reason="edit_too_large",
                            details={"size": stream.size, "cap": cap})
        try:
            if stream.size is not None and stream.size > cap:
                return too_large
            parts: list[bytes] = []
            held = 0
            for chunk in stream.chunks():
                held += len(chunk)
                if held > cap:
                    return too_large
                parts.append(chunk)
            data = b"".join(parts)
            version = stream.version
        except FsError as err:
            return err
        finally:
            stream.close()
        return Blob(data=data, version=version if version is not None else digest_version(data))

    # -- managing ----------------------------------------------------------
    def delete(self, path: str) -> DeleteOutcome:
        """Delete a file, only at the version this owner observed (with the policy on)."""
        self._writable()
        key = self.key(path)
        shown = display(key)
        if not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path=shown, reason="root_is_directory")
        self._writable_at(key)
        intent = DeleteIntent(owner=self.owner, key=key, path=shown, operation="delete")
        self._gate.dispatch(intent)
        pre = intent.precondition
        try:
            self._delete(key, pre)
        except Conflict as c:
            if c.reason == "missing":
                raise FsError(ErrorCode.FS_NOT_FOUND, path=shown,
                              reason="deleted_before_delete") from None
            raise self._stale_source(c, key, shown, pre, intent, "delete") from None
        except Exception as e:
            if isinstance(e, FsError) and not ambiguous(e):
                raise self._missing(key, e) if e.reason != "is_directory" else e from None
            # The delete may have landed: the file gone is the delete done.
            outcome, _ = landed(self.backend, key, None)
            if outcome == "unknown":
                raise FsError(ErrorCode.FS_BACKEND, path=shown, reason="outcome_unknown",
                              details={"cause": cause_text(e, shown, "delete")}) from e
            if outcome == "not_done":
                raise
        self._gate.dispatch(DeletedEvent(owner=self.owner, key=key, path=shown))
        return DeleteOutcome(path=shown,
                             version=pre.version if isinstance(pre, IfMatch) else None)

    def _stale_source(
        self, c: Conflict, key: str, shown: str, pre: Precondition, intent: DeleteIntent,
        action: str,
    ) -> FsError:
        """A delete or move whose source moved on: what changed, when it is FS_STALE."""
        fallback = self._conflict(c, shown, intent.conflict_code, intent.conflict_reason,
                                  intent.conflict_hint)
        if not isinstance(pre, IfMatch) or intent.conflict_code is not ErrorCode.FS_STALE:
            return fallback
        return self._stale(key, shown, pre.version, None, action=action, fallback=fallback)

    def move(self, source: str, destination: str) -> MoveOutcome:
        """Move a file to a path that does not exist yet.

        The source must be at the version this owner observed; the destination is created
        only if absent. Built from steps the storage guards: a create-only copy of the
        observed version, then a delete conditional on it; if that delete loses (the source
        changed meanwhile) the copy is removed again, conditional on its own version.
        """
        self._writable()
        src, dst = self.key(source), self.key(destination)
        src_shown, dst_shown = display(src), display(dst)
        if not src or not dst:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason="root_is_directory")
        if src == dst:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=src_shown, reason="move_same_path")
        self._writable_at(src, dst)
        intent = DeleteIntent(owner=self.owner, key=src, path=src_shown, operation="move",
                              destination=dst_shown)
        self._gate.dispatch(intent)
        pre = intent.precondition
        facts = {"destination": dst_shown}
        try:
            version = self.backend.copy(src, dst, pre)
        except Conflict as c:
            if c.reason == "exists":
                raise FsError(ErrorCode.FS_ALREADY_EXISTS, path=src_shown,
                              reason="move_destination_exists", details=facts) from None
            if c.reason == "missing":
                raise FsError(ErrorCode.FS_NOT_FOUND, path=src_shown,
                              reason="deleted_before_move") from None
            raise self._stale_source(c, src, src_shown, pre, intent, "move") from None
        except FsError as e:
            raise self._missing(src, e) if e.code is ErrorCode.FS_NOT_FOUND else e from None
        try:
            self._delete(src, pre)
        except Exception as e:
            self._unmove(e, src, dst, version, pre, intent)
        self._gate.dispatch(WrittenEvent(owner=self.owner, key=dst, path=dst_shown,
                                         operation="move", version=version, created=True))
        self._gate.dispatch(DeletedEvent(owner=self.owner, key=src, path=src_shown,
                                         operation="move", destination=dst_shown))
        return MoveOutcome(source=src_shown, destination=dst_shown, version=version)

    def _unmove(self, e: Exception, src: str, dst: str, version: Version, pre: Precondition,
                intent: DeleteIntent) -> None:
        """The source's delete failed after the copy was made. Returns when the source is
        gone all the same (a resend of our delete found it gone, or the delete landed and
        then failed): the move is done, and its bytes are at the destination. Otherwise the
        copy is taken back, guarded by its own version (no one's later write to it is
        lost), and the error raised; but never while the source may be gone."""
        src_shown, dst_shown = display(src), display(dst)
        facts = {"destination": dst_shown}
        if gone_already(e):
            return
        if ambiguous(e):
            outcome, _ = landed(self.backend, src, None)
            if outcome == "done":
                return
            if outcome == "unknown":
                raise FsError(ErrorCode.FS_BACKEND, path=src_shown,
                              reason="move_outcome_unknown",
                              details={**facts, "cause": cause_text(e, src_shown, "delete")},
                              ) from e
        try:
            self.backend.delete(dst, IfMatch(version))
        except Conflict as lost:
            if lost.reason != "missing":  # missing: the copy is gone, as the undo wants
                raise FsError(ErrorCode.FS_STALE, path=src_shown, reason="move_rollback_lost",
                              details=facts) from e
        except Exception as failed:
            if landed(self.backend, dst, None)[0] != "done":
                details = {**facts, "cause": cause_text(e, src_shown, "delete"),
                           "error": cause_text(failed, dst_shown, "delete").rstrip(".")}
                raise FsError(ErrorCode.FS_BACKEND, path=src_shown, reason="move_copy_kept",
                              details=details) from e
        if isinstance(e, Conflict):
            raise self._stale_source(e, src, src_shown, pre, intent, "move") from None
        raise e


def _seen_before(refused: FsError) -> Version | None:
    """The version the agent saw, when the policy refused its edit as stale (the diff from
    it to the current version goes into the refusal); None for any other refusal."""
    seen = refused.details.get("observed")
    if refused.code is ErrorCode.FS_STALE and isinstance(seen, Version):
        return seen
    return None


_SKIP_RE = re.compile("|".join(re.escape(d) for d in sorted(SKIP_DIRS)))


@dataclass
class _Prepared:
    """One validated part of a change: its steps and the texts around it."""

    change: FileChange
    key: str
    shown: str
    steps: list[Step]
    before: str | None = None
    """The old text (None: not text, or not read)."""
    after: TextDoc | None = None
    """The new text (None: a delete, or a move of bytes not read as text)."""
    dst: str | None = None
    dst_shown: str | None = None


def _text_or_none(data: bytes) -> str | None:
    """The model view of ``data`` when it is text (for a diff); None otherwise."""
    try:
        return decode(data, "").view
    except FsError:
        return None


def _replace_all(ops: Sequence[EditOp]) -> bool:
    return len(ops) == 1 and isinstance(ops[0], Replace) and ops[0].replace_all


def _needle(pattern: Pattern) -> bytes | None:
    """The UTF-8 bytes of a literal pattern, to rule files out before decoding them."""
    if pattern.literal is None:
        return None
    try:
        return pattern.literal.encode("utf-8")
    except UnicodeEncodeError:
        return None  # a lone surrogate: no decoded text holds one, the plain path says so


def _searchable(relative: str) -> bool:
    # Cheap first: most paths have no dot segment and no dependency directory at all.
    if "/." not in "/" + relative and _SKIP_RE.search(relative) is None:
        return True
    return not any(is_skipped(seg) for seg in relative.split("/"))
