"""The fs/* events the seam dispatches through the gate.

Facts are frozen; intents are mutable so plugins can set the precondition (and how a lost
compare-and-swap is reported). A plugin vetoes by raising FsError.
"""

from __future__ import annotations

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
    "ListEvent",
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


class WriteIntent(FsEvent):
    """A whole-file write (``write``), a guarded create (``create``) or the bytes of an older
    version written back (``restore``) is about to happen."""

    name: Literal["fs/write-intent"] = "fs/write-intent"
    operation: Literal["write", "create", "restore"] = "write"
    precondition: Precondition = Overwrite()
    size: int
    conflict_code: ErrorCode | None = None
    conflict_reason: str | None = None
    """How a lost compare-and-swap is explained: a message catalogue reason."""
    conflict_hint: str | None = None
    """A literal explanation instead (takes precedence over ``conflict_reason``)."""


class EditIntent(FsEvent):
    """An edit (``replace``, ``insert``, or several as one ``edit``) of the file as it is at
    ``current``."""

    name: Literal["fs/edit-intent"] = "fs/edit-intent"
    operation: Literal["replace", "insert", "edit"]
    """``edit``: several edits applied as one."""
    current: Version
    precondition: Precondition
    conflict_code: ErrorCode | None = None
    conflict_reason: str | None = None
    conflict_hint: str | None = None


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


class DeleteIntent(FsEvent):
    """A file is about to be deleted (``delete``), or moved away (``move``, to
    ``destination``). Set ``precondition`` (IfMatch of the observed version), or veto."""

    name: Literal["fs/delete-intent"] = "fs/delete-intent"
    operation: Literal["delete", "move"] = "delete"
    destination: str | None = None
    """For a move: the path the file is moved to."""
    precondition: Precondition = Overwrite()
    conflict_code: ErrorCode | None = None
    conflict_reason: str | None = None
    conflict_hint: str | None = None


class DeletedEvent(FsEvent):
    """A file was deleted, or moved away (``destination`` set)."""

    model_config = ConfigDict(frozen=True)
    name: Literal["fs/deleted"] = "fs/deleted"
    operation: Literal["delete", "move", "undo"] = "delete"
    destination: str | None = None
