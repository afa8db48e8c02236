"""The seam's history calls (``history``, ``restore``, ``undo``) and what its conflicts and
no-op writes share with them. A mixin of :class:`fsseam.seam.Seam`, kept apart so the seam
module stays about reads, writes and edits.

Costs on S3 (counted at the server): ``history`` is one ListObjectVersions page (one per
1,000 versions, up to the backend's ``max_versions_listed``); ``undo`` one GET of the old
version (by VersionId) and one conditional PUT; ``restore`` of a full version id one GET
of that version and one conditional PUT (of a prefix, one listing first). A conflict costs
one GET of the current version, on the conflict path only (a refused edit already made
it).
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Sequence
from typing import Any, Literal

from .backends.base import ANY_VERSION, Backend, Blob, WriteMeta, write_as
from .backends.kept import delete_as
from .changes import ambiguous, cause_text, gone_already, landed
from .conflicts import DIFF_IS_A_READ, changes_part, summarize, target_status
from .doccache import DocCache
from .edits import EditOp
from .errors import Conflict, ErrorCode, FsError
from .events import DeletedEvent, ReadEvent, UndoIntent, WriteIntent, WrittenEvent
from .gate import Gate
from .history import Authors, HistoryEntry, HistoryOutcome, RestoreOutcome, match_version
from .history import version_id as _id
from .limits import Limits
from .messages import Sentence
from .paths import display
from .text import TextDoc, decode
from .versions import CreateOnly, IfMatch, Overwrite, Precondition, Version

__all__ = ["HistoryOps"]

DEFAULT_HISTORY_LIMIT = 10


class HistoryOps:
    """History, restore and undo over ``ctx.fs``; conflicts that show what changed."""

    backend: Backend
    owner: str
    limits: Limits
    _gate: Gate
    _docs: DocCache
    _authors: Authors

    # Provided by the seam.
    def key(self, path: str) -> str:
        raise NotImplementedError

    def _writable(self) -> None:
        raise NotImplementedError

    def _load_bytes(self, key: str, record_missing: bool = True) -> tuple[bytes, Version]:
        raise NotImplementedError

    def _conflict(
        self, err: Conflict, path: str, code: ErrorCode | None, reason: str | None,
        hint: str | None,
    ) -> FsError:
        raise NotImplementedError

    # -- shared by writes, edits, restore and undo ----------------------------------
    def _meta(self) -> WriteMeta:
        return WriteMeta(owner=self.owner)

    def _put(self, key: str, data: bytes, precondition: Precondition,
             meta: WriteMeta | None = None) -> Version:
        """The backend's write, with the owner for stores that keep it (``meta``: another
        author, for bytes written back)."""
        meta = meta if meta is not None else self._meta()
        version = write_as(self.backend, key, data, precondition, meta)
        if meta.owner is not None:
            self._authors.note(key, version, meta.owner)
        return version

    def _landed_write(self, failure: Exception, key: str, shown: str, data: bytes,
                      action: str, author: str | None) -> Version:
        """A write that failed without a refusal may have landed: the version it made when
        the file holds exactly its bytes (one read, on this path only; ``author`` is noted
        as the writer then); else the failure, or, when the file cannot be read either,
        FS_BACKEND saying the outcome is unknown instead of "nothing was changed"."""
        if not ambiguous(failure):
            raise failure
        outcome, version = landed(self.backend, key, data)
        if outcome == "done":
            assert version is not None
            if author is not None:
                self._authors.note(key, version, author)
            return version
        if outcome == "unknown":
            raise FsError(ErrorCode.FS_BACKEND, path=shown, reason="outcome_unknown",
                          details={"cause": cause_text(failure, shown, action)}) from failure
        raise failure

    def _delete(self, key: str, precondition: Precondition) -> None:
        """The backend's delete, naming this owner to stores that record who deleted."""
        delete_as(self.backend, key, precondition, self._meta())

    def _owned(self) -> Backend:
        """The backend, writing and deleting on this owner's behalf: for the steps of a
        change, which the commit makes with plain backend calls."""
        return _Owned(self.backend, self._meta())  # type: ignore[return-value]

    def _observed(self, key: str, shown: str, data: bytes, version: Version) -> None:
        """Record that this owner has seen ``data`` as the file's ``version``."""
        try:
            fmt = decode(data, shown).format
        except FsError:
            fmt = None
        if fmt is not None:
            self._docs.put(key, version, fmt, data)
        self._gate.dispatch(ReadEvent(owner=self.owner, key=key, path=shown, version=version))

    def _holds(self, key: str, version: Version, data: bytes, data_version: Version | None
               ) -> bool:
        """Whether the file at ``version`` holds exactly ``data``, known without a request:
        the versions are equal, a content digest says so, or the cached bytes do."""
        if data_version is not None and data_version == version:
            return True
        # The bytes kept for ``version`` are exactly its content, so comparing with them (a
        # memcmp) answers as the digest would, without hashing every write's bytes.
        raw = self._docs.raw(key, version)
        if raw is not None:
            return raw == data
        if version.kind == "sha256":
            return hashlib.sha256(data).hexdigest() == version.value
        return False

    def _probe(self, key: str) -> Version | None:
        """The file's version now, from the smallest read the store allows (None: gone):
        a 1-byte range where the version comes with the first response (S3, GCS, a local
        file whose digest is cached), else one whole read (a digest needs every byte)."""
        try:
            stream = self.backend.open_read(key, 1)
            try:
                known = stream.version
            finally:
                stream.close()
            return known if known is not None else self.backend.read(key).version
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise

    def _text_at(self, key: str, version: Version) -> TextDoc | None:
        """The text of ``version`` as the agent saw it: cached bytes, else (on a conflict
        path only) the store's history; None when neither has it, or it is not text."""
        raw = self._docs.raw(key, version)
        if raw is None and self._keeps_history(key):
            try:
                raw = self.backend.read_version(key, version).data
            except FsError:
                return None
        if raw is None:
            return None
        try:
            return decode(raw, display(key))
        except FsError:
            return None

    def _stale(
        self,
        key: str,
        shown: str,
        seen: Version | None,
        current: tuple[bytes, Version] | None,
        *,
        action: str,
        fallback: FsError,
        ops: Sequence[EditOp] = (),
        old: TextDoc | None = None,
        undo: bool = False,
    ) -> FsError:
        """FS_STALE with what changed from ``seen`` (the version the agent read or wrote) to
        the current version, and where each replacement of ``ops`` stands in it. A diff
        shown whole counts as a read of the current version only after an edit or an undo
        (see :data:`~fsseam.conflicts.DIFF_IS_A_READ`). ``fallback`` when no diff can be
        made (diffs off, the old text unknown, a file that is not text)."""
        if self.limits.conflict_diff_chars <= 0 or seen is None:
            return fallback
        try:
            data, version = current if current is not None else self._load_bytes(key, False)
            new = decode(data, shown)
        except FsError:
            return fallback
        old = old if old is not None else self._text_at(key, seen)
        if old is None:
            return fallback
        summary = summarize(shown, old.view, new.view, self.limits.conflict_diff_chars)
        if summary.complete and action in DIFF_IS_A_READ:
            self._observed(key, shown, data, version)
        return FsError(
            ErrorCode.FS_STALE, path=shown, reason="stale_undo" if undo else "stale_changed",
            details={"action": action, "changes": changes_part(
                summary, target_status(new.view, ops), undo=undo, action=action),
                "observed": seen, "current": version, "complete": summary.complete},
        )

    # -- history ---------------------------------------------------------------------
    def _keeps_history(self, key: str) -> bool:
        """Whether the store holding ``key`` keeps versions: under mounts, the mount's own
        store decides (one mount's versioned bucket keeps history where another does not)."""
        for_key = getattr(self.backend, "capabilities_for", None)
        caps = for_key(key) if callable(for_key) else self.backend.capabilities
        return bool(caps.history)

    def _require_history(self, key: str, shown: str, tool: str) -> None:
        if not self._keeps_history(key):
            raise FsError(ErrorCode.FS_UNSUPPORTED, path=shown, reason="history_not_kept",
                          details={"tool": tool})

    def _file(self, path: str) -> tuple[str, str]:
        key = self.key(path)
        if not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason="root_is_directory")
        return key, display(key)

    def history(self, path: str, limit: int = DEFAULT_HISTORY_LIMIT) -> HistoryOutcome:
        """The versions the store keeps of a file, newest first (at most ``limit``)."""
        if limit < 1:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="limit_below_one")
        key, shown = self._file(path)
        self._require_history(key, shown, "history")
        kept = self.backend.versions(key, limit)
        entries = [HistoryEntry.of(k, self._authors.owner(key, k.version)) for k in kept]
        return HistoryOutcome(path=shown, entries=entries, limit=limit, you=self.owner)

    def restore(self, path: str, version: str) -> RestoreOutcome:
        """Write back the bytes of a kept version (named by its id, or a unique prefix), as
        a guarded write: conditional on the version this owner observed, or create-only
        when it saw the file absent."""
        self._writable()
        key, shown = self._file(path)
        self._require_history(key, shown, "restore")
        old = self._by_id(key, version)
        if old is None:
            match = match_version(version, self.backend.versions(key), shown)
            old = self.backend.read_version(key, match.version)
            restored = _id(match.version)
            author = match.owner or self._authors.owner(key, match.version)
        else:
            # Read by its full id, with no listing: the owner comes from what this process
            # saw written (a listing's metadata is not at hand).
            restored = _id(old.version)
            author = self._authors.owner(key, old.version)
        intent = WriteIntent(owner=self.owner, key=key, path=shown, operation="restore",
                             precondition=Overwrite(), size=len(old.data))
        self._gate.dispatch(intent)
        fallback_for = (intent.conflict_code, intent.conflict_reason, intent.conflict_hint)
        return self._write_back(key, shown, old.data, old.version, intent.precondition,
                                "restore", restored, fallback_for, author=author)

    def _by_id(self, key: str, token: str) -> Blob | None:
        """The version a full id names, read directly where the store can (one GET, and
        reachable however many versions a listing would have to page through); None when
        the store cannot, or the token is no full id of a kept version (a prefix, a
        digest): the listing decides then."""
        read = getattr(self.backend, "read_version_id", None)
        if not callable(read):
            return None
        try:
            blob: Blob = read(key, token.strip().strip('"'))
        except FsError:
            return None
        return blob

    def undo(self, path: str) -> RestoreOutcome:
        """Take back this owner's last change of the file: the version before it written
        back, conditional on the version the change made (or, for a change that created
        the file, the file deleted, conditional likewise)."""
        self._writable()
        key, shown = self._file(path)
        intent = UndoIntent(owner=self.owner, key=key, path=shown)
        self._gate.dispatch(intent)
        after, before = intent.after, intent.before
        if after is None:
            raise FsError(ErrorCode.FS_UNSUPPORTED, path=shown, reason="undo_needs_policy")
        plain = FsError(ErrorCode.FS_STALE, path=shown, reason="stale_undo",
                        details={"changes": Sentence("changes_unknown")})
        if before is None:
            return self._undo_create(key, shown, after, plain)
        self._require_history(key, shown, "undo")
        old = self.backend.read_version(key, before)
        return self._write_back(key, shown, old.data, old.version, IfMatch(after), "undo",
                                _id(before), (ErrorCode.FS_STALE, None, None), plain,
                                author=self._authors.owner(key, before))

    def _undo_create(self, key: str, shown: str, after: Version, plain: FsError
                     ) -> RestoreOutcome:
        try:
            self._delete(key, IfMatch(after))
        except Conflict as c:
            if c.reason != "missing":
                raise self._stale(key, shown, after, None, action="undo", fallback=plain,
                                  undo=True) from None
            # Someone deleted it already: the file is as the undo would leave it.
        except Exception as e:
            # A delete whose answer was lost may have landed: the file gone is the undo done.
            if not gone_already(e):
                if not ambiguous(e):
                    raise
                outcome, _ = landed(self.backend, key, None)
                if outcome == "unknown":
                    raise FsError(ErrorCode.FS_BACKEND, path=shown, reason="outcome_unknown",
                                  details={"cause": cause_text(e, shown, "delete")}) from e
                if outcome == "not_done":
                    raise
        self._gate.dispatch(DeletedEvent(owner=self.owner, key=key, path=shown,
                                         operation="undo"))
        return RestoreOutcome(path=shown, operation="undo", restored=None, version=None,
                              replaced=after, deleted=True)

    def _write_back(
        self,
        key: str,
        shown: str,
        data: bytes,
        data_version: Version,
        pre: Precondition,
        op: Literal["restore", "undo"],
        restored: str,
        lost: tuple[ErrorCode | None, str | None, str | None],
        plain: FsError | None = None,
        *,
        author: str | None = None,
    ) -> RestoreOutcome:
        """Write ``data`` (an older version's exact bytes) under ``pre``; nothing is written
        when the file already holds them. The bytes are written as ``author``'s, who wrote
        them first (None: not known), never as this owner's: an undo or a restore brings
        back someone's work, it does not make it its own."""
        code, reason, hint = lost
        seen = pre.version if isinstance(pre, IfMatch) else None
        if seen is not None and self._holds(key, seen, data, data_version):
            now = self._probe(key)
            if now == seen:
                return self._unchanged_back(key, shown, data, seen, op, restored)
        try:
            version = self._put(key, data, pre, WriteMeta(owner=author))
        except Conflict as c:
            fallback = plain if plain is not None and c.reason == "mismatch" else (
                self._conflict(c, shown, code, reason, hint))
            if c.reason == "missing":
                raise fallback from None
            try:
                current = self._load_bytes(key, record_missing=False)
            except FsError:
                raise fallback from None
            if current[0] == data:
                return self._unchanged_back(key, shown, data, current[1], op, restored)
            if seen is None or code is not ErrorCode.FS_STALE:
                raise fallback from None
            raise self._stale(key, shown, seen, current, action=op, fallback=fallback,
                              undo=op == "undo") from None
        except Exception as e:
            version = self._landed_write(e, key, shown, data, "write", author)
        old_view = None
        if seen is not None:
            cached = self._docs.get(key, seen)
            old_view = cached[1] if cached is not None else None
        try:
            doc: TextDoc | None = decode(data, shown)
        except FsError:
            doc = None
        if doc is not None:
            self._docs.put(key, version, doc.format, data)
        created = isinstance(pre, CreateOnly)
        event = WrittenEvent(owner=self.owner, key=key, path=shown, operation=op,
                             version=version, created=created, replaced=seen)
        self._gate.dispatch(event.with_diff(shown, "" if created else old_view,
                                            doc.view if doc is not None else ""))
        outcome = RestoreOutcome(
            path=shown, operation=op, restored=restored, version=version, replaced=seen,
            created=created, size=len(data), lines=doc.lines if doc is not None else None,
        )
        outcome.with_diff(shown, "" if created else old_view,
                          doc.view if doc is not None else "")
        return outcome

    def _unchanged_back(
        self, key: str, shown: str, data: bytes, version: Version,
        op: Literal["restore", "undo"], restored: str,
    ) -> RestoreOutcome:
        """The file already holds the bytes to write back: nothing is written."""
        self._observed(key, shown, data, version)
        if op == "undo":
            # The change is undone all the same: the record of it is taken off the stack.
            self._gate.dispatch(WrittenEvent(owner=self.owner, key=key, path=shown,
                                             operation="undo", version=version,
                                             created=False, unchanged=True))
        try:
            lines: list[str] | None = decode(data, shown).lines
        except FsError:
            lines = None
        return RestoreOutcome(
            path=shown, operation=op, restored=restored,
            version=version, unchanged=True, size=len(data), lines=lines,
        )


class _Owned:
    """A backend whose writes and deletes carry one owner's :class:`WriteMeta` (where the
    store keeps it); everything else is the backend's own."""

    def __init__(self, inner: Backend, meta: WriteMeta) -> None:
        self._inner = inner
        self._meta = meta
        # Asked of the class: a wrapper forwarding attributes (capabilities among them) to
        # a store that keeps metadata may itself have a plain write.
        write = getattr(type(inner), "write", None)
        try:
            self._takes_meta = write is not None and (
                "meta" in inspect.signature(write).parameters)
        except (TypeError, ValueError):
            self._takes_meta = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        if not self._takes_meta:
            return self._inner.write(key, data, precondition)
        return write_as(self._inner, key, data, precondition, meta or self._meta)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION) -> None:
        delete_as(self._inner, key, precondition, self._meta)
