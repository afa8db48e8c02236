"""The gate's intents, built in one place, and the plan every change is made of.

Every change asks the gate first: an intent names the file, the operation and the
precondition the seam proposes; plugins (the observation policy) set the precondition
they require, say how a lost compare-and-swap is explained, or veto. :func:`ask` builds
each kind and dispatches it; nothing else in the seam constructs an intent.

What a change does is a :class:`Plan`: its :class:`Step` list (create, write, copy,
delete, move; each with its precondition), which :func:`fsseam.seam.pipeline.run`
commits. A one-file operation (write, create, edit, delete, move, restore, undo) is a
plan of one step that carries a :class:`FilePlan`: the flags for where its outcome has
always differed from a part of a change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal, overload

from ..backends.base import WriteMeta
from ..edits import EditOp
from ..errors import Conflict, ErrorCode, FsError
from ..events import DeleteIntent, EditIntent, UndoIntent, WriteIntent
from ..messages import Reason
from ..text import TextDoc
from ..versions import CreateOnly, IfMatch, Overwrite, Precondition, Version
from .core import Core, Lost

__all__ = ["Action", "FilePlan", "Plan", "Step", "ask", "lost_of", "seen_before"]

WriteOp = Literal["write", "create", "restore"]
EditKind = Literal["replace", "insert", "edit"]
DeleteOp = Literal["delete", "move"]
Action = Literal["create", "copy", "write", "delete"]

_STALE_REASON = {"delete": Reason.stale_delete, "move": Reason.stale_move}


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
                            conflict_reason=Reason.changed_during_edit)
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
    fs.gate.dispatch(intent)
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
    single-file change (write, create, edit, restore, undo, delete, move) carries on the
    one step of its :class:`Plan`.

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
    rerun_is_own: bool = True
    """Equal bytes that the store names this owner as the writer of are this owner's own
    landed write (a task run again after its answer was lost). False where the bytes were
    built in this process for one write only (an append handle's close): another handle
    of the same owner made them, so they are not this write's."""


@dataclass
class Step:
    """One change of one file in a plan: a conditional storage call, how a lost
    precondition is explained and how to undo it; or, a one-file operation's only step,
    the :class:`FilePlan` whose flags say how its refusals are explained."""

    action: Action
    key: str
    shown: str
    precondition: Precondition
    explain: Callable[[Conflict], FsError] | None = None
    """What a lost precondition means to the agent (FS_STALE, FS_ALREADY_EXISTS, ...);
    a part of a change."""
    data: bytes | None = None
    """create / write: the new bytes; copy: the bytes copied (to recognise a copy that
    landed although its call failed)."""
    source: str | None = None
    """copy: the key copied from."""
    old: bytes | None = None
    """write / delete: the bytes before, which an undo puts back."""
    moved_to: str | None = None
    """delete of a move's source: the key its bytes were copied to. That copy is never
    undone while the source is not known to hold them again."""
    version: Version | None = field(default=None, compare=False)
    """Set once the step is done: the version it wrote (None for a delete)."""
    shared: bool = field(default=False, compare=False)
    """Done by a refusal: the store answered that the file already held exactly the step's
    bytes (or, for a delete, no file), which may be another writer's identical change, not
    only a resend of ours. A rollback leaves such a file as it is: undoing it could take
    away their file, or bring back one they deleted."""
    alone: FilePlan | None = field(default=None, compare=False)
    """A one-file operation's step: how its refusals are explained (see
    :class:`FilePlan`); None for a part of a change."""
    unchanged: bool = field(default=False, compare=False)
    """A one-file step that wrote nothing: the file holds its bytes already."""


@dataclass
class Plan:
    """A change of one file or many: its steps, made on behalf of ``meta``'s owner. A
    plan of several steps commits all or nothing (the steps done are undone when one
    fails); a one-file operation's plan is one step, with nothing to undo."""

    steps: list[Step]
    meta: WriteMeta

    @classmethod
    def one(cls, action: Literal["write", "delete", "move"], plan: FilePlan, *,
            destination: tuple[str, str] | None = None) -> Plan:
        """The plan of a one-file operation: a write, a delete, or a move (to
        ``destination``, a key and its shown path): a guarded copy, then a guarded delete
        of the source, both under the source's guard."""
        if action == "write":
            steps = [Step("write", plan.key, plan.shown, plan.precondition, data=plan.data,
                          alone=plan)]
        elif action == "delete":
            steps = [Step("delete", plan.key, plan.shown, plan.precondition, alone=plan)]
        else:
            assert destination is not None
            dst, dst_shown = destination
            steps = [Step("copy", dst, dst_shown, plan.precondition, source=plan.key,
                          alone=plan),
                     Step("delete", plan.key, plan.shown, plan.precondition, moved_to=dst,
                          alone=plan)]
        return cls(steps, plan.meta)
