"""The fs/* events the seam dispatches through the gate.

Facts are frozen; intents are mutable so plugins can set the precondition (and how a lost
compare-and-swap is reported). A plugin vetoes by raising FsError. What the plugins
leave on an intent is its :class:`Guard` (:meth:`fsseam.gate.Gate.decide` returns it):
the precondition the change carries and how its loss is explained.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .diff import LazyDiff
from .errors import ErrorCode
from .versions import Entry, Overwrite, Precondition, Version

__all__ = [
    "DeleteIntent",
    "DeletedEvent",
    "EditIntent",
    "FsEvent",
    "Guard",
    "Intent",
    "ListEvent",
    "Lost",
    "MissingEvent",
    "ReadEvent",
    "StatEvent",
    "UndoIntent",
    "WriteIntent",
    "WrittenEvent",
]

Operation = Literal["write", "create", "replace", "insert", "edit", "move", "restore", "undo"]


class FsEvent(BaseModel):
    name: str
    owner: str
    key: str
    """Canonical root-relative key: two spellings of one file give one key."""
    path: str
    """The virtual path shown to the model."""


Lost = tuple[ErrorCode | None, str | None, str | None]
"""How a lost precondition is explained: the code, the catalogue reason, the literal hint."""


@dataclass(frozen=True)
class Guard:
    """The precondition a change carries, and how its loss is explained to the agent:
    ``code`` (None: the store's own refusal is passed on), a catalogue ``reason``, or a
    plugin's literal ``hint`` instead."""

    precondition: Precondition
    code: ErrorCode | None = None
    reason: str | None = None
    hint: str | None = None

    @property
    def lost(self) -> Lost:
        """How a lost precondition is explained: the code, reason and hint."""
        return self.code, self.reason, self.hint


class Intent(FsEvent):
    """A change about to happen: the precondition proposed for it and how its loss is
    explained, which plugins set (:meth:`decide`) or veto."""

    precondition: Precondition = Overwrite()
    conflict_code: ErrorCode | None = None
    conflict_reason: str | None = None
    """How a lost compare-and-swap is explained: a message catalogue reason."""
    conflict_hint: str | None = None
    """A literal explanation instead (takes precedence over ``conflict_reason``)."""

    def decide(self, guard: Guard) -> None:
        """Set the precondition and how its loss is explained."""
        self.precondition = guard.precondition
        self.conflict_code = guard.code
        self.conflict_reason = guard.reason
        self.conflict_hint = guard.hint


class ReadEvent(FsEvent):
    model_config = ConfigDict(frozen=True)
    name: Literal["fs/read"] = "fs/read"
    version: Version
    partial: bool = False


class MissingEvent(FsEvent):
    model_config = ConfigDict(frozen=True)
    name: Literal["fs/missing"] = "fs/missing"


class StatEvent(FsEvent):
    """A stat answered; a plugin may veto it (raise FsError, e.g. FS_NOT_FOUND to hide)."""

    model_config = ConfigDict(frozen=True)
    name: Literal["fs/stat"] = "fs/stat"
    type: Literal["file", "directory", "symlink"]
    size: int | None = None


class ListEvent(FsEvent):
    """Entries of a listing (``list``: one directory) or of a walk (``walk``: a batch of the
    files below ``path``) are about to be shown. Plugins may hide some by removing them
    from ``entries``."""

    name: Literal["fs/list"] = "fs/list"
    operation: Literal["list", "walk"] = "list"
    entries: list[Entry]


class WriteIntent(Intent):
    """A whole-file write (``write``), a guarded create (``create``) or the bytes of an older
    version written back (``restore``) is about to happen."""

    name: Literal["fs/write-intent"] = "fs/write-intent"
    operation: Literal["write", "create", "restore"] = "write"
    size: int


class EditIntent(Intent):
    """An edit (``replace``, ``insert``, or several as one ``edit``) of the file as it is at
    ``current``."""

    name: Literal["fs/edit-intent"] = "fs/edit-intent"
    operation: Literal["replace", "insert", "edit"]
    """``edit``: several edits applied as one."""
    current: Version
    precondition: Precondition


class WrittenEvent(LazyDiff, FsEvent):
    model_config = ConfigDict(frozen=True)
    name: Literal["fs/written"] = "fs/written"
    operation: Operation
    version: Version
    created: bool
    replaced: Version | None = None
    """The version this write replaced, where the seam knows it (None: a new file)."""
    unchanged: bool = False
    """Nothing was written: the file already held the result (sent for an ``undo`` that
    found its change already taken back, so the record of that change is dropped)."""


class UndoIntent(FsEvent):
    """``owner`` asks to take back its own last change of the file. A plugin that records
    changes (the observation policy) sets ``after`` (the version that change made, which
    the undo is conditional on) and ``before`` (the version to bring back; None when the
    change created the file, which is then deleted), or vetoes with an FsError."""

    name: Literal["fs/undo-intent"] = "fs/undo-intent"
    before: Version | None = None
    after: Version | None = None


class DeleteIntent(Intent):
    """A file is about to be deleted (``delete``), or moved away (``move``, to
    ``destination``). Set ``precondition`` (IfMatch of the observed version), or veto."""

    name: Literal["fs/delete-intent"] = "fs/delete-intent"
    operation: Literal["delete", "move"] = "delete"
    destination: str | None = None
    """For a move: the path the file is moved to."""


class DeletedEvent(FsEvent):
    """A file was deleted, or moved away (``destination`` set)."""

    model_config = ConfigDict(frozen=True)
    name: Literal["fs/deleted"] = "fs/deleted"
    operation: Literal["delete", "move", "undo"] = "delete"
    destination: str | None = None
