"""The fs/* events the seam dispatches through the gate.

Facts are frozen; intents are mutable so plugins can set the precondition (and how a lost
compare-and-swap is reported). A plugin vetoes by raising FsError.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .diff import LazyDiff
from .errors import ErrorCode
from .versions import Overwrite, Precondition, Version

__all__ = [
    "EditIntent",
    "FsEvent",
    "MissingEvent",
    "ReadEvent",
    "WriteIntent",
    "WrittenEvent",
]

Operation = Literal["write", "create", "replace", "insert"]


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


class WriteIntent(FsEvent):
    """A whole-file write (``write``) or a guarded create (``create``) is about to happen."""

    name: Literal["fs/write-intent"] = "fs/write-intent"
    operation: Literal["write", "create"] = "write"
    precondition: Precondition = Overwrite()
    size: int
    conflict_code: ErrorCode | None = None
    conflict_hint: str | None = None


class EditIntent(FsEvent):
    """An edit (``replace`` or ``insert``) of the file as it is at ``current``."""

    name: Literal["fs/edit-intent"] = "fs/edit-intent"
    operation: Literal["replace", "insert"]
    current: Version
    precondition: Precondition
    conflict_code: ErrorCode | None = None
    conflict_hint: str | None = None


class WrittenEvent(LazyDiff, FsEvent):
    model_config = ConfigDict(frozen=True)
    name: Literal["fs/written"] = "fs/written"
    operation: Operation
    version: Version
    created: bool
