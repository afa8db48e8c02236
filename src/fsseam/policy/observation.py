"""The observation policy: no agent modifies a file state it has not seen.

Per owner, the ledger keeps the version last observed of each file, or that the file was
confirmed absent. Rules (docs/concepts.md, "The observation policy"):

- a successful read (windows too) records the version; a successful write records the new
  one, so an agent's own edits never make its next edit stale;
- a not-found answer records absence;
- write: observed V -> IfMatch(V); nothing or absence observed -> CreateOnly; a lost
  compare-and-swap is FS_NOT_OBSERVED when nothing was observed, FS_STALE otherwise;
- edit: needs an observed version equal to the current one (else FS_NOT_OBSERVED or
  FS_STALE), and writes IfMatch(V);
- create: always CreateOnly; absence never authorizes an edit;
- delete and move (of the source): need an observed version, and are conditional on it
  (IfMatch(V)); afterwards the source is recorded absent and a move's destination observed.
- undo: each owner's changes of each file are kept newest last (the version before and
  the version made, at most UNDO_DEPTH); an undo takes back the newest, conditional on
  the version it made; a later undo takes back the one before it.
"""

from __future__ import annotations

import threading

from pydantic import BaseModel, ConfigDict, Field

from ..errors import ErrorCode, FsError
from ..events import (
    DeletedEvent,
    DeleteIntent,
    EditIntent,
    MissingEvent,
    ReadEvent,
    UndoIntent,
    WriteIntent,
    WrittenEvent,
)
from ..gate import hookimpl
from ..versions import CreateOnly, IfMatch, Version

__all__ = ["Change", "Ledger", "ObservationPolicy"]

LEDGER_FORMAT = 1
UNDO_DEPTH = 20
"""Changes kept per owner and file for undo; older ones can no longer be undone."""


class Change(BaseModel):
    """One change an owner made to a file: the version it replaced (None: it created the
    file) and the version it made."""

    model_config = ConfigDict(frozen=True)
    before: Version | None
    after: Version


class Ledger(BaseModel):
    """What each owner has observed: key -> Version, or None for confirmed absence; and,
    for undo, the changes each owner made to each file (newest last)."""

    format: int = LEDGER_FORMAT
    owners: dict[str, dict[str, Version | None]] = Field(default_factory=dict)
    changes: dict[str, dict[str, list[Change]]] = Field(default_factory=dict)


class ObservationPolicy:
    def __init__(self, ledger: Ledger | None = None) -> None:
        self.ledger = ledger or Ledger()
        self._lock = threading.Lock()

    # -- the ledger ------------------------------------------------------
    def observed(self, owner: str, key: str) -> tuple[bool, Version | None]:
        """(known, version): known=False when nothing was observed; version None = absent."""
        with self._lock:
            seen = self.ledger.owners.get(owner, {})
            return (key in seen, seen.get(key))

    def record(self, owner: str, key: str, version: Version | None) -> None:
        with self._lock:
            self.ledger.owners.setdefault(owner, {})[key] = version

    # -- hooks -----------------------------------------------------------
    @hookimpl(tryfirst=True)
    def fs_read(self, event: ReadEvent) -> None:
        self.record(event.owner, event.key, event.version)

    @hookimpl(tryfirst=True)
    def fs_missing(self, event: MissingEvent) -> None:
        self.record(event.owner, event.key, None)

    @hookimpl(tryfirst=True)
    def fs_write_intent(self, event: WriteIntent) -> None:
        if event.operation == "create":
            event.precondition = CreateOnly()
            return
        known, version = self.observed(event.owner, event.key)
        if version is not None:
            event.precondition = IfMatch(version)
            event.conflict_code = ErrorCode.FS_STALE
            event.conflict_reason = "stale_write"
        else:
            event.precondition = CreateOnly()
            if known:
                event.conflict_code = ErrorCode.FS_STALE
                event.conflict_reason = "created_since_absent_write"
            else:
                event.conflict_code = ErrorCode.FS_NOT_OBSERVED
                event.conflict_reason = "not_observed_write"

    @hookimpl(tryfirst=True)
    def fs_edit_intent(self, event: EditIntent) -> None:
        known, version = self.observed(event.owner, event.key)
        if not known:
            raise FsError(ErrorCode.FS_NOT_OBSERVED, path=event.path, reason="not_observed_edit")
        if version != event.current:
            reason = "created_since_absent_edit" if version is None else "stale_edit"
            # The version seen lets the seam show what changed since (fsseam.conflicts).
            raise FsError(ErrorCode.FS_STALE, path=event.path, reason=reason,
                          details={"observed": version})
        event.precondition = IfMatch(version)
        event.conflict_code = ErrorCode.FS_STALE
        event.conflict_reason = "changed_during_edit"

    @hookimpl(tryfirst=True)
    def fs_written(self, event: WrittenEvent) -> None:
        self.record(event.owner, event.key, event.version)
        if event.operation == "move":
            return  # a move's destination is no change an undo takes back
        with self._lock:
            files = self.ledger.changes.setdefault(event.owner, {})
            stack = files.setdefault(event.key, [])
            if event.operation == "undo":
                undone = stack.pop() if stack else None
                if stack and undone is not None and stack[-1].after == undone.before:
                    # The change below now ends at the version the undo wrote (a new
                    # generation on GCS): the next undo is conditional on that.
                    stack[-1] = Change(before=stack[-1].before, after=event.version)
            else:
                stack.append(Change(before=event.replaced, after=event.version))
                del stack[:-UNDO_DEPTH]
            if not stack:
                del files[event.key]

    @hookimpl(tryfirst=True)
    def fs_undo_intent(self, event: UndoIntent) -> None:
        with self._lock:
            stack = self.ledger.changes.get(event.owner, {}).get(event.key)
            top = stack[-1] if stack else None
        if top is None:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=event.path,
                          reason="nothing_to_undo")
        event.before, event.after = top.before, top.after

    @hookimpl(tryfirst=True)
    def fs_delete_intent(self, event: DeleteIntent) -> None:
        known, version = self.observed(event.owner, event.key)
        if not known:
            raise FsError(ErrorCode.FS_NOT_OBSERVED, path=event.path,
                          reason=f"not_observed_{event.operation}")
        if version is None:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=event.path, reason="absent_observed")
        event.precondition = IfMatch(version)
        event.conflict_code = ErrorCode.FS_STALE
        event.conflict_reason = f"stale_{event.operation}"

    @hookimpl(tryfirst=True)
    def fs_deleted(self, event: DeletedEvent) -> None:
        self.record(event.owner, event.key, None)
        if event.operation == "undo":  # the undo of a change that created the file
            with self._lock:
                files = self.ledger.changes.get(event.owner, {})
                stack = files.get(event.key)
                if stack:
                    stack.pop()
                if not stack:
                    files.pop(event.key, None)
