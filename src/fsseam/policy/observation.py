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
"""

from __future__ import annotations

import threading

from pydantic import BaseModel, Field

from ..errors import ErrorCode, FsError
from ..events import (
    DeletedEvent,
    DeleteIntent,
    EditIntent,
    MissingEvent,
    ReadEvent,
    WriteIntent,
    WrittenEvent,
)
from ..gate import hookimpl
from ..versions import CreateOnly, IfMatch, Version

__all__ = ["Ledger", "ObservationPolicy"]

LEDGER_FORMAT = 1


class Ledger(BaseModel):
    """What each owner has observed: key -> Version, or None for confirmed absence."""

    format: int = LEDGER_FORMAT
    owners: dict[str, dict[str, Version | None]] = Field(default_factory=dict)


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
            raise FsError(ErrorCode.FS_STALE, path=event.path, reason=reason)
        event.precondition = IfMatch(version)
        event.conflict_code = ErrorCode.FS_STALE
        event.conflict_reason = "changed_during_edit"

    @hookimpl(tryfirst=True)
    def fs_written(self, event: WrittenEvent) -> None:
        self.record(event.owner, event.key, event.version)

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
