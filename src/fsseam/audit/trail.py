"""The audit trail: entries kept create-only in any store fsseam opens, appended in order.

Entry ``n`` is the object ``entries/{n:012d}.json`` below the trail's prefix, written with
the store's own create-only condition: two writers that both try ``n`` cannot both win, so
no entry is lost and none is overwritten. A process keeps the next number and the hash of
the last entry it wrote (one listing at first use); a writer that loses ``n`` reads the
entry that won (for its hash, the next entry's ``prev``) and tries ``n + 1``. Uncontended,
an append is one request.

Anchors (``anchors/{seq:012d}.json``, wherever the user points) hold the chain's head,
written create-only too: a store that refuses to delete them (an S3 bucket with Object
Lock) bounds what a cut of the trail's tail can hide.
"""

from __future__ import annotations

import builtins
import json
import threading
import weakref
from collections.abc import Hashable
from datetime import UTC, datetime
from typing import Any

from pydantic import ValidationError

from ..backends.base import Backend
from ..backends.registry import open_backend
from ..errors import Conflict, ErrorCode, FsError
from ..messages import Reason
from ..versions import CreateOnly, Entry
from .entry import Anchor, AuditEntry, canonical
from .verify import AuditReport, check

__all__ = ["FOLDER", "AuditTarget", "AuditTrail", "open_target", "shared_trail"]

FOLDER = ".fsseam-audit"
"""Where ``audit=True`` keeps the trail: a reserved folder at the workspace's root."""

ENTRIES = "entries"
ANCHORS = "anchors"
MAX_ATTEMPTS = 10_000
"""Entries another writer may append between two tries of one append before it gives up
(each lost try costs one read; a trail this busy needs no more)."""

AuditTarget = bool | str | tuple[str, dict[str, Any]] | Any
"""Where a trail or an anchor lives: True (the workspace's reserved folder), a URL,
``(url, storage_options)``, or an fsspec filesystem instance (its root)."""


def open_target(target: str | tuple[str, dict[str, Any]] | Any,
                storage_options: dict[str, Any] | None = None) -> Backend:
    """The backend over a URL, ``(url, options)`` or fsspec filesystem instance, opened
    as a workspace opens its URL (its create-only writes are the store's own)."""
    if isinstance(target, tuple):
        url, options = target
        return open_backend(url, options)
    if isinstance(target, str):
        return open_backend(target, storage_options)
    return open_backend("", {}, target)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _seq_of(name: str) -> int | None:
    stem, dot, ext = name.partition(".")
    if dot and ext == "json" and len(stem) == 12 and stem.isdigit():
        return int(stem)
    return None


class AuditTrail:
    """The entries below ``prefix`` of ``backend`` ("" for its root). ``name``: how the
    trail is shown (its URL)."""

    def __init__(self, backend: Backend, prefix: str = "", *, name: str = "") -> None:
        self.backend = backend
        self.prefix = prefix.strip("/")
        self.name = name or f"{backend.root}/{self.prefix}".rstrip("/")
        self._lock = threading.Lock()
        self._next: int | None = None
        self._prev: str | None = None

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, target: str | tuple[str, dict[str, Any]] | Any,
             storage_options: dict[str, Any] | None = None) -> AuditTrail:
        """The trail at a URL (its root), ``(url, options)`` or fsspec filesystem."""
        backend = open_target(target, storage_options)
        name = target if isinstance(target, str) else (
            target[0] if isinstance(target, tuple) else backend.root)
        return cls(backend, name=name)

    @classmethod
    def of_workspace(cls, url: str, storage_options: dict[str, Any] | None = None
                     ) -> AuditTrail:
        """The trail ``audit=True`` keeps in the workspace at ``url``."""
        return cls(open_backend(url, storage_options), FOLDER,
                   name=f"{url.rstrip('/')}/{FOLDER}")

    def identity(self) -> Hashable:
        """What names this trail's storage in this process (two trails alike share the
        next number)."""
        return (self.backend.storage_id(), self.prefix)

    # -- keys ------------------------------------------------------------------------------
    def _key(self, *parts: str) -> str:
        return "/".join(p for p in (self.prefix, *parts) if p)

    def entry_key(self, seq: int) -> str:
        return self._key(ENTRIES, f"{seq:012d}.json")

    # -- appending -------------------------------------------------------------------------
    def append(self, fields: dict[str, Any]) -> AuditEntry:
        """Append an entry made of ``fields`` (all but ``seq``, ``time``, ``prev``,
        ``hash``); returns it. Raises FsError when it cannot be written."""
        with self._lock:
            for _ in range(MAX_ATTEMPTS):
                if self._next is None:
                    self._next, self._prev = self._head()
                entry = AuditEntry(seq=self._next, time=_now(), prev=self._prev,
                                   **fields).sealed()
                try:
                    self.backend.put_plain(self.entry_key(entry.seq), entry.to_bytes(),
                                           CreateOnly())
                except Conflict:
                    won = self.read(entry.seq)
                    if won is None:  # removed meanwhile: start again from a listing
                        self._next = None
                        continue
                    self._next, self._prev = won.seq + 1, won.hash
                    continue
                except BaseException:
                    self._next = None  # it may have landed: ask the store next time
                    raise
                self._next, self._prev = entry.seq + 1, entry.hash
                return entry
        raise FsError(ErrorCode.FS_BACKEND, reason=Reason.audit_unwritten,
                      details={"changes": self.name})

    def _head(self) -> tuple[int, str | None]:
        """The next number and the last entry's hash, from one listing (and one read)."""
        seqs = self.sequence_numbers()
        if not seqs:
            return 0, None
        last = self.read(seqs[-1])
        if last is None:
            return seqs[-1] + 1, None
        return last.seq + 1, last.hash

    # -- reading ---------------------------------------------------------------------------
    def _listed(self, folder: str) -> builtins.list[Entry]:
        try:
            return self.backend.list(self._key(folder))
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND and e.reason != Reason.bucket_missing:
                return []
            raise

    def sequence_numbers(self) -> builtins.list[int]:
        """The numbers of the entries the trail holds, ascending."""
        found = (_seq_of(e.name) for e in self._listed(ENTRIES) if e.kind == "file")
        return sorted(s for s in found if s is not None)

    def read(self, seq: int) -> AuditEntry | None:
        """Entry ``seq`` (None when absent); FsError when it is not an entry."""
        blob = self.backend.get_plain(self.entry_key(seq))
        return None if blob is None else self.parse(self.entry_key(seq), blob.data)

    def parse(self, name: str, data: bytes) -> AuditEntry:
        try:
            return AuditEntry.model_validate(json.loads(data))
        except (ValueError, ValidationError) as e:
            raise FsError(ErrorCode.FS_BACKEND, reason=Reason.audit_trail_corrupt,
                          details={"name": name, "detail": str(e)[:200]}) from None

    def raw(self) -> builtins.list[tuple[int, bytes]]:
        """Every entry object's number and bytes, in number order."""
        listed = [e for e in self._listed(ENTRIES)
                  if e.kind == "file" and _seq_of(e.name) is not None]
        found = []
        for entry, blob in self.backend.read_many(listed):
            if isinstance(blob, FsError):
                if blob.code is ErrorCode.FS_NOT_FOUND:
                    continue
                raise blob
            seq = _seq_of(entry.name)
            assert seq is not None
            found.append((seq, blob.data))
        return sorted(found, key=lambda pair: pair[0])

    def entries(self, *, owner: str | None = None, path: str | None = None
                ) -> builtins.list[AuditEntry]:
        """Every entry in order, or those of ``owner`` and of ``path`` (a shown path,
        ``/a.txt``, or a folder ending in ``/``)."""
        kept = []
        for seq, data in self.raw():
            entry = self.parse(self.entry_key(seq), data)
            if owner is not None and entry.owner != owner:
                continue
            if path is not None and not _matches(entry, path):
                continue
            kept.append(entry)
        return kept

    def verify(self, store: Backend | None = None, anchors: Backend | None = None
               ) -> AuditReport:
        """Check this trail: its chain; with ``store`` (the workspace's backend, or
        ``ws.backend``), each entry against the store; with ``anchors`` (the backend where
        :meth:`anchor` wrote them), each anchor and whether the tail could have been cut."""
        kept = self.anchors(anchors) if anchors is not None else None
        return check(self.name, self.raw(), store, kept)

    # -- anchors ---------------------------------------------------------------------------
    def anchor(self, target: Backend) -> Anchor:
        """Write the chain's head create-only at ``target`` (its root); returns it. An
        anchor of the same head already there is that anchor."""
        seqs = self.sequence_numbers()
        if not seqs:
            raise FsError(ErrorCode.FS_NOT_FOUND, reason=Reason.audit_trail_empty,
                          details={"name": self.name})
        head = self.read(seqs[-1])
        assert head is not None
        made = Anchor(seq=head.seq, hash=head.hash, time=_now())
        key = f"{ANCHORS}/{head.seq:012d}.json"
        try:
            target.put_plain(key, canonical(made.model_dump()), CreateOnly())
        except Conflict:
            there = target.get_plain(key)
            if there is not None:
                kept = Anchor.model_validate(json.loads(there.data))
                if kept.hash == made.hash:
                    return kept
            raise
        return made

    @staticmethod
    def anchors(target: Backend) -> builtins.list[Anchor]:
        """The anchors kept at ``target``, by entry number."""
        try:
            listed = [e for e in target.list(ANCHORS)
                      if e.kind == "file" and _seq_of(e.name) is not None]
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return []
            raise
        found = []
        for _, blob in target.read_many(listed):
            if isinstance(blob, FsError):
                raise blob
            found.append(Anchor.model_validate(json.loads(blob.data)))
        return sorted(found, key=lambda a: a.seq)


def _matches(entry: AuditEntry, path: str) -> bool:
    shown = "/" + path.lstrip("/") if not path.startswith("branch:") else path
    names = [entry.path] + ([entry.source] if entry.source is not None else [])
    if shown.endswith("/"):
        return any(n.startswith(shown) for n in names)
    return shown in names


# Weak: a trail is kept while a workspace appends to it (the storage it holds, a private
# memory store say, is then freed with the last workspace over it).
_shared: weakref.WeakValueDictionary[Hashable, AuditTrail] = weakref.WeakValueDictionary()
_shared_lock = threading.Lock()


def shared_trail(trail: AuditTrail, key: Hashable | None = None) -> AuditTrail:
    """The trail this process already keeps for the same storage (its next number known,
    so an append is one request), or ``trail``, kept for the next."""
    key = trail.identity() if key is None else key
    with _shared_lock:
        kept = _shared.get(key)
        if kept is None:
            _shared[key] = kept = trail
        return kept

