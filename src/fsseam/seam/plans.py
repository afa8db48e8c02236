"""The gate's intents, built in one place, and the plan of a one-file change.

Every change asks the gate first: an intent names the file, the operation and the
precondition the seam proposes; plugins (the observation policy) set the precondition
they require, say how a lost compare-and-swap is explained, or veto. :func:`ask` builds
each kind and dispatches it; nothing else in the seam constructs an intent.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, overload

from ..backends.base import WriteMeta
from ..edits import EditOp
from ..errors import ErrorCode, FsError
from ..events import DeleteIntent, EditIntent, UndoIntent, WriteIntent
from ..text import TextDoc
from ..versions import CreateOnly, IfMatch, Overwrite, Precondition, Version
from .core import Core, Lost

__all__ = ["FilePlan", "ask", "lost_of", "seen_before"]

WriteOp = Literal["write", "create", "restore"]
EditKind = Literal["replace", "insert", "edit"]
DeleteOp = Literal["delete", "move"]

_STALE_REASON = {"delete": "stale_delete", "move": "stale_move"}


@overload
def ask(fs: Core, kind: Literal["write"], key: str, shown: str, *, operation: WriteOp,
        size: int) -> WriteIntent: ...
@overload
def ask(fs: Core, kind: Literal["edit"], key: str, shown: str, *, operation: EditKind,
        current: Version) -> EditIntent: ...
@overload
def ask(fs: Core, kind: Literal["delete"], key: str, shown: str, *, operation: DeleteOp,
        current: Version | None = None, destination: str | None = None) -> DeleteIntent: ...
@overload
def ask(fs: Core, kind: Literal["undo"], key: str, shown: str) -> UndoIntent: ...
def ask(
    fs: Core, kind: str, key: str, shown: str, *, operation: str = "", size: int = 0,
    current: Version | None = None, destination: str | None = None,
) -> WriteIntent | EditIntent | DeleteIntent | UndoIntent:
    """Build the intent of a change and dispatch it (a plugin's veto raises FsError).

    ``write``: a whole-file write, proposed without a guard (a create is create-only);
    ``edit``: guarded by the version just read (``current``), a lost guard is FS_STALE;
    ``delete`` (a delete, or a move's source): guarded by ``current`` when the file was
    read for it (a lost guard is FS_STALE then), else proposed without a guard;
    ``undo``: the policy says what to take back."""
    intent: WriteIntent | EditIntent | DeleteIntent | UndoIntent
    owner = fs.owner
    if kind == "write":
        pre: Precondition = CreateOnly() if operation == "create" else Overwrite()
        intent = WriteIntent(owner=owner, key=key, path=shown, operation=operation,  # type: ignore[arg-type]
                             precondition=pre, size=size)
    elif kind == "edit":
        assert current is not None
        intent = EditIntent(owner=owner, key=key, path=shown, operation=operation,  # type: ignore[arg-type]
                            current=current, precondition=IfMatch(current),
                            conflict_code=ErrorCode.FS_STALE,
                            conflict_reason="changed_during_edit")
    elif kind == "delete" and current is not None:
        intent = DeleteIntent(owner=owner, key=key, path=shown, operation=operation,  # type: ignore[arg-type]
                              destination=destination, precondition=IfMatch(current),
                              conflict_code=ErrorCode.FS_STALE,
                              conflict_reason=_STALE_REASON[operation])
    elif kind == "delete":
        intent = DeleteIntent(owner=owner, key=key, path=shown, operation=operation,  # type: ignore[arg-type]
                              destination=destination)
    else:
        intent = UndoIntent(owner=owner, key=key, path=shown)
    fs._gate.dispatch(intent)
    return intent


def lost_of(intent: WriteIntent | EditIntent | DeleteIntent) -> Lost:
    """How the intent says a lost precondition is explained."""
    return intent.conflict_code, intent.conflict_reason, intent.conflict_hint


def seen_before(refused: FsError) -> Version | None:
    """The version the agent saw, when the policy refused its edit as stale (the diff from
    it to the current version goes into the refusal); None for any other refusal."""
    seen = refused.details.get("observed")
    if refused.code is ErrorCode.FS_STALE and isinstance(seen, Version):
        return seen
    return None


@dataclass
class FilePlan:
    """One file's new bytes (or its deletion) and how to make the change: the plan every
    single-file change (write, create, edit, restore, undo, delete) hands to
    :func:`fsseam.seam.pipeline.commit_one` (or, a deletion, ``delete_one``).

    The paths differ where their behaviour has always differed; the flags say where."""

    key: str
    shown: str
    data: bytes
    precondition: Precondition
    action: str
    """The action an unknown outcome's cause names."""
    stale_action: str
    """The action a stale diff names."""
    lost: Lost
    meta: WriteMeta
    """On whose behalf the bytes are written (an undo or a restore: their first author)."""
    current: tuple[bytes, Version] | None = None
    """The file's bytes and version when the call read them already (no extra request)."""
    data_version: Version | None = None
    """The version ``data`` was read from (a restore, an undo), when it is one."""
    old: TextDoc | None = None
    """The text the change was made on, for a stale diff."""
    ops: Sequence[EditOp] = ()
    """The edits, whose replacements a stale diff locates."""
    plain: FsError | None = None
    """An undo's refusal when its guard lost to a changed file and no diff is made."""
    check_first: Literal["none", "write", "back"] = "none"
    """Before writing, whether the file already holds the bytes: ``write`` (a whole-file
    write: the bytes it read, else a look at the version when the plan would write back
    what was read), ``back`` (a restore or an undo: a look at the version)."""
    unread_is_unknown: bool = True
    """After a refusal, a file that cannot be read back: the outcome is unknown (write,
    edit) rather than the refusal itself (restore, undo)."""
    undo: bool = False
    """A stale diff says the undo's change is what was lost."""
    gone_is_done: bool = False
    """A delete that finds no file has done its job (an undo of a create), rather than
    being refused (a delete)."""
