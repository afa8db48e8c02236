"""Committing a change: the plan every change is made of, the one call that changes the
store, and what a failed step leaves.

What a change does is a :class:`Plan`: its :class:`Step` list (create, write, copy,
delete; each with its precondition). A one-file operation (write, create, edit, delete,
move, restore, undo) is a plan of one step (a move: two) that carries a
:class:`FilePlan`, which says how that operation explains its refusals. :func:`run`
commits a plan, one file or many, and is the only caller of :func:`perform`, the one call
that changes the store (a rollback's changes too):

- in a fixed order (:func:`commit_order`): files created (new files, moves'
  destinations) first, then files updated in place, then files deleted (deletes, moves'
  sources), each group by key. A crash part-way leaves a prefix of that order done, so
  no content is ever only in the process: a moved file exists at both paths until its
  source is deleted last. And two changes that overlap on files of the same kind meet on
  the first shared file in the same order, so one of them wins it and the other stops
  there;
- every step is conditional (create-only, or compare-and-swap on the version the agent
  observed), so another writer's change is never overwritten;
- a one-file write is nothing when the file already holds the bytes at the version the
  agent read, else one conditional write;
- a failed step is not taken as one that changed nothing: one function settles it, for
  one file and for many (:func:`settle_failed`), and whether it landed after all is one
  rule (:func:`settle`, one read through :func:`~fsseam.seam.verdicts.landed`): the
  agent's own landed write is success, another writer's identical change made since the
  agent's read is FS_STALE saying so. When the file cannot be read back, its state is
  unknown;
- when a step of several fails (a lost compare-and-swap, a storage error, a size limit,
  anything), the steps already done are undone in reverse order, each again conditional
  on the version this change just wrote: a file someone else changed meanwhile is left
  as they made it, and the error says exactly which file holds what (:class:`Rollback`).
  Nothing that may depend on a step of unknown outcome is undone (the copy of a move
  whose source may be gone is kept). A move of one file takes its copy back when the
  store refuses the source's delete.

What a refused step tells the agent comes from :mod:`fsseam.seam.verdicts`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ..backends.base import Backend, WriteMeta
from ..edits import EditOp
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..events import Lost
from ..messages import Reason, render
from ..text import TextDoc
from ..versions import CreateOnly, IfMatch, Precondition, SameChange, Version
from .calls import before_commit
from .core import Core
from .verdicts import (
    Outcome,
    ambiguous,
    cause_text,
    gone_already,
    holds,
    judge,
    landed,
    refusal_for,
    stale,
    stale_source,
)

__all__ = [
    "CREATE",
    "CREATE_BYTES",
    "DELETE",
    "EDIT",
    "MOVE",
    "RESTORE",
    "UNDO",
    "UNDO_CREATE",
    "WRITE",
    "WRITE_OVER",
    "FilePlan",
    "Plan",
    "Rollback",
    "Step",
    "StepAction",
    "StepRules",
    "commit_order",
    "perform",
    "rollback",
    "run",
    "settle",
    "settle_failed",
    "step_failed",
]


# -- the plan of a change --------------------------------------------------------------
StepAction = Literal["create", "copy", "write", "delete"]
"""The storage call a step makes."""


@dataclass(frozen=True)
class StepRules:
    """How the step of a one-file operation differs from a part of a change: what its
    refusals name, and when it is done without a write. One value per kind of operation
    (:data:`WRITE`, :data:`EDIT`, ...); a :class:`FilePlan` carries one."""

    action: str
    """The action an unknown outcome's cause names."""
    stale_action: str
    """The action a stale diff names."""
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


WRITE = StepRules("write", "write", check_first="write")
"""A whole-file write (text, or exact bytes)."""
CREATE = StepRules("create", "write", check_first="write")
"""A whole-file create of text."""
WRITE_OVER = StepRules("write", "write", check_first="write", rerun_is_own=False)
"""Exact bytes built over the version a handle read (an append handle's close)."""
CREATE_BYTES = StepRules("create", "write", rerun_is_own=False)
"""A create-only write of exact bytes (fsspec's exclusive create)."""
EDIT = StepRules("edit", "edit")
DELETE = StepRules("delete", "delete")
MOVE = StepRules("move", "move")
RESTORE = StepRules("write", "restore", check_first="back", unread_is_unknown=False)
UNDO = StepRules("write", "undo", check_first="back", unread_is_unknown=False, undo=True)
"""An undo that writes back the version before this owner's change."""
UNDO_CREATE = StepRules("delete", "undo", undo=True, gone_is_done=True)
"""An undo of a change that created the file: the file deleted."""


@dataclass
class FilePlan:
    """One file's new bytes (or its deletion) and how to make the change: the plan every
    single-file change (write, create, edit, restore, undo, delete, move) carries on the
    one step of its :class:`Plan`; ``rules`` says how its operation differs."""

    key: str
    shown: str
    data: bytes
    precondition: Precondition
    rules: StepRules
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


@dataclass
class Step:
    """One change of one file in a plan: a conditional storage call, how a lost
    precondition is explained and how to undo it; or, a one-file operation's only step,
    the :class:`FilePlan` whose rules say how its refusals are explained."""

    action: StepAction
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

    @property
    def observed(self) -> bool:
        """Whether the change rests on what the agent read (a version, or the file seen
        absent), so that equal bytes someone else made since are not this change (see
        :func:`~fsseam.versions.same_change`): a one-file step whose loss the policy
        explains as FS_STALE, a part of a change conditional on the version read."""
        if self.alone is not None:
            return _observed(self.alone)
        return isinstance(self.precondition, IfMatch)


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


# -- committing a plan, and the one settlement of a failed step ------------------------
def run(fs: Core, plan: Plan) -> list[Step]:
    """Commit ``plan``'s steps in their commit order, each through the one call that
    changes the store: the steps, each with the version it wrote (and, a one-file step,
    whether it wrote nothing). Raises the refusal; a plan of several steps has undone what
    it did first."""
    ordered = commit_order(plan.steps)
    done: list[Step] = []
    for i, step in enumerate(ordered):
        lone = step.alone
        if lone is not None and _held(fs, step, lone):
            continue
        # A call with an id records what it changes before its first change (a replay
        # finds the record there and stops here).
        before_commit(fs, ordered)
        try:
            step.version = perform(fs.backend, step, plan.meta)
        except BaseException as failure:
            # Returns only when the step is found done after all; it joined ``done``.
            settle_failed(fs, plan, step, failure, done, ordered[i + 1:])
            continue
        if lone is not None and step.action == "write" and lone.meta.owner is not None:
            assert step.version is not None
            fs.authors.note(step.key, step.version, lone.meta.owner)
        done.append(step)
    return ordered


def settle_failed(fs: Core, plan: Plan, step: Step, failure: BaseException,
                  done: list[Step], pending: Sequence[Step]) -> None:
    """The one settlement of a failed step, for one file and for many: returns when the
    step is found done after all (it joins ``done``, with the version it wrote), else
    raises the refusal as the operation explains it, after undoing what the plan did (a
    plan of several steps: every step done, see :func:`step_failed`; a move of one file:
    its copy). Whether a step that failed landed after all is one rule, :func:`settle`.
    In a plan of several steps, anything at all (an interrupt too) undoes what was done
    before it goes on; a one-file operation lets an interrupt through as it is."""
    lone = step.alone
    if lone is None:
        step_failed(fs.backend, step, failure, done, pending, plan.meta)
        return
    if not isinstance(failure, Exception):
        raise failure
    _lone_failed(fs, step, lone, failure, done)
    done.append(step)


_GROUP: dict[StepAction, int] = {"create": 0, "copy": 0, "write": 1, "delete": 2}


def commit_order(steps: Sequence[Step]) -> list[Step]:
    """Creates and copies, then in-place writes, then deletes; each group by key."""
    return sorted(steps, key=lambda s: (_GROUP[s.action], s.key))


def perform(backend: Backend, step: Step, meta: WriteMeta | None) -> Version | None:
    """The one call that changes the store: ``step``'s write, copy or delete under its
    precondition, on behalf of ``meta``'s owner (for stores that keep it). Every change
    the seam makes, a rollback's too, is made here."""
    if step.action == "create" or step.action == "write":
        assert step.data is not None
        return backend.write(step.key, step.data, step.precondition, meta=meta)
    if step.action == "copy":
        assert step.source is not None
        return backend.copy(step.source, step.key, step.precondition)
    backend.delete(step.key, step.precondition, meta=meta)
    return None


def settle(backend: Backend, step: Step, failure: BaseException, owner: str | None = None
           ) -> tuple[Outcome, Version | None]:
    """What a failed step left: done after all (with the version it wrote), not done, or
    unknown. Costs at most one read (and, for equal bytes, one look at who wrote them), on
    this failure path only. Equal bytes are judged by the one rule
    (:func:`~fsseam.versions.same_change`): a refused write over a version the agent read
    is not done when someone else made the same bytes; a create meeting a file with its
    bytes, or a call that failed without an answer, is."""
    delete = step.action == "delete"
    if delete and step.moved_to is not None and isinstance(failure, Conflict):
        if not failure.resent:
            # The store refused the only delete it was sent: another writer moved, deleted
            # or changed the source since the copy; the copy is to be taken back.
            return "not_done", None
        # Perhaps the answer to a resend of our own landed delete: one read says.
        return landed(backend, step.key, None)
    if delete and gone_already(failure):
        # A delete's goal, reached by our own resent delete or by someone else's: the file
        # is gone either way.
        return "done", None
    if isinstance(failure, Conflict):
        if delete or failure.reason == ConflictKind.missing:
            return "not_done", None
        # A refused write or copy: a resend meeting our own landed request, when the file
        # holds exactly our bytes and the store says it is ours; someone else's change
        # otherwise, unless the step rests on no read (a create).
    elif not ambiguous(failure):
        return "not_done", None
    pre = step.precondition
    return landed(backend, step.key, None if delete else step.data, owner=owner,
                  seen=pre.version if isinstance(pre, IfMatch) else None,
                  observed=step.observed, answered=isinstance(failure, Conflict))


# -- a one-file operation: held already, or refused as it explains it ------------------
def _held(fs: Core, step: Step, plan: FilePlan) -> bool:
    """A one-file write whose file holds its bytes before anything is written: nothing to
    write (the step's version and ``unchanged`` set). Raises the refusal found instead."""
    if step.action != "write":
        return False
    pre = plan.precondition
    early = _held_already(fs, plan, pre.version if isinstance(pre, IfMatch) else None)
    if early is None:
        return False
    step.version, step.unchanged = early
    return True


def _lone_failed(fs: Core, step: Step, plan: FilePlan, failure: Exception,
                 done: list[Step]) -> None:
    """A one-file operation's step failed: returns when it is done after all (the step's
    version set), else raises the refusal as that operation explains it. Nothing is
    undone, but a move's copy when the source's delete loses."""
    if step.action == "write":
        if isinstance(failure, Conflict):
            pre = plan.precondition
            seen = pre.version if isinstance(pre, IfMatch) else None
            step.version, step.unchanged = _lost(fs, plan, failure, seen, None)
        else:
            step.version = landed_write(fs, step, plan, failure)
    elif step.action == "copy":
        _copy_failed(fs, plan, step, failure)
    elif step.moved_to is not None:
        copy = done[-1]
        assert copy.version is not None
        _unmove(fs, failure, plan, step, copy, copy.version)
    else:
        _delete_failed(fs, plan, step, failure)


def _held_already(fs: Core, plan: FilePlan, seen: Version | None
                  ) -> tuple[Version, bool] | None:
    """Whether the file holds the plan's bytes before anything is written (see
    :attr:`FilePlan.check_first`); None: write."""
    key, data, current = plan.key, plan.data, plan.current
    if plan.rules.check_first == "back":
        if seen is None or not holds(fs, key, seen, data, plan.data_version):
            return None
        return (seen, True) if fs.probe_version(key) == seen else None
    if plan.rules.check_first != "write":
        return None
    if current is not None and (seen is None or current[1] == seen):
        held = _judged(fs, plan, seen, current, answered=True)
        if held is not None:
            return held
    if seen is None:
        return None
    if current is not None and current[1] != seen:
        return _lost(fs, plan, Conflict("mismatch", path=plan.shown), seen, current)
    if current is None and holds(fs, key, seen, data, None):
        # Writing back exactly what was read: one look at the version instead of a write
        # (which would make a new version of the same bytes).
        now = fs.probe_version(key)
        if now == seen:
            return seen, True
        lost = (Conflict("missing", path=plan.shown) if now is None
                else Conflict("mismatch", path=plan.shown))
        return _lost(fs, plan, lost, seen, None)
    return None


def _lost(fs: Core, plan: FilePlan, c: Conflict, seen: Version | None,
          current: tuple[bytes, Version] | None) -> tuple[Version, bool]:
    """A write whose precondition failed: success after all when the file already holds
    exactly these bytes, else the refusal, with what changed when it is FS_STALE."""
    shown = plan.shown
    fallback = _explained(fs, plan, c)
    if c.reason == ConflictKind.missing:
        raise fallback
    if current is None:
        try:
            current = fs.load_bytes(plan.key, record_missing=False)
        except FsError as e:
            if plan.rules.unread_is_unknown:
                raise _unverified(c, shown, plan.rules.action, fallback, e) from None
            raise fallback from None
    held = _judged(fs, plan, seen, current, answered=True)
    if held is not None:
        return held
    raise _stale_or(fs, plan, seen, current, fallback)


def _judged(fs: Core, plan: FilePlan, seen: Version | None, current: tuple[bytes, Version],
            *, answered: bool) -> tuple[Version, bool] | None:
    """A file that may already hold the plan's bytes, by the one rule: (its version,
    whether nothing was written) when the change is done (held at the version read, or
    the owner's own landed write); the refusal saying another writer made exactly this
    change; None when the file holds other bytes."""
    # A write back made in another's name (an undo, a restore) is not proven this owner's
    # by the owner the object names.
    owner = fs.owner if plan.meta.owner == fs.owner and plan.rules.rerun_is_own else None
    verdict = judge(fs.backend, plan.key, plan.data, current[0], current[1], seen=seen,
                    observed=_observed(plan), owner=owner, answered=answered)
    if verdict is SameChange.DIFFERENT:
        return None
    if verdict is SameChange.HELD:
        return current[1], True
    if verdict is SameChange.OURS:
        return current[1], False
    fallback = _explained(fs, plan, Conflict("mismatch", path=plan.shown))
    raise stale(fs, plan.key, plan.shown, seen, current, action=plan.rules.stale_action,
                fallback=fallback, ops=plan.ops, old=plan.old, undo=plan.rules.undo, same=verdict)


def _observed(plan: FilePlan) -> bool:
    """Whether the change rests on what the agent read (a version, or the file seen
    absent): the policy explains a lost guard as FS_STALE then."""
    return plan.lost[0] is ErrorCode.FS_STALE


def _explained(fs: Core, plan: FilePlan, c: Conflict) -> FsError:
    """What the lost guard means, as the intent (or an undo) says."""
    if plan.plain is not None and c.reason == ConflictKind.mismatch:
        return plan.plain
    return refusal_for(c, plan.shown, *plan.lost)


def _stale_or(fs: Core, plan: FilePlan, seen: Version | None,
              current: tuple[bytes, Version] | None, fallback: FsError) -> FsError:
    """FS_STALE with what changed since ``seen``, when the intent says stale; else
    ``fallback``."""
    if seen is None or plan.lost[0] is not ErrorCode.FS_STALE:
        return fallback
    return stale(fs, plan.key, plan.shown, seen, current, action=plan.rules.stale_action,
                 fallback=fallback, ops=plan.ops, old=plan.old, undo=plan.rules.undo)


def _delete_failed(fs: Core, plan: FilePlan, step: Step, failure: Exception) -> None:
    """A one-file delete that failed. A guard that met no file is the delete done for an
    undo (``gone_is_done``), FS_NOT_FOUND for a delete; a guard lost to a changed file is
    the refusal, FS_STALE with what changed when the intent says stale. A delete that
    failed without a refusal may have landed: one read says."""
    key, shown, pre = plan.key, plan.shown, plan.precondition
    if isinstance(failure, Conflict):
        if failure.reason == ConflictKind.missing:
            if plan.rules.gone_is_done:
                return  # someone deleted it already: the file is as the undo leaves it
            raise FsError(ErrorCode.FS_NOT_FOUND, path=shown,
                          reason=Reason.deleted_before_delete) from None
        seen = pre.version if isinstance(pre, IfMatch) else None
        raise _stale_or(fs, plan, seen, None, _explained(fs, plan, failure)) from None
    if plan.rules.gone_is_done and gone_already(failure):
        return
    if isinstance(failure, FsError) and not ambiguous(failure):
        raise fs.not_found(key, failure) if failure.reason != Reason.is_directory else (
            failure) from None
    # The delete may have landed: the file gone is the delete done.
    _landed_delete(fs, step, failure)


def _unverified(c: Conflict, shown: str, action: str, fallback: FsError, read: FsError
                ) -> FsError:
    """A refused write whose file could not be read back: the refusal may have met our
    own landed request (a resend after a lost answer), so the outcome is unknown, unless
    the read itself shows the file is not ours (gone, or too large)."""
    if read.code is not ErrorCode.FS_BACKEND:
        return fallback
    return FsError(ErrorCode.FS_BACKEND, path=shown, reason=Reason.outcome_unknown,
                   details={"cause": cause_text(c, shown, action)})


def _landed_delete(fs: Core, step: Step, failure: Exception) -> None:
    """A delete that failed without a refusal may have landed: returns when the file is
    gone (the delete done), else raises the failure, or FS_BACKEND saying the outcome is
    unknown when the file cannot be read either (one read, on this path only)."""
    shown = step.shown
    outcome, _ = settle(fs.backend, step, failure)
    if outcome == "unknown":
        raise FsError(ErrorCode.FS_BACKEND, path=shown, reason=Reason.outcome_unknown,
                      details={"cause": cause_text(failure, shown, "delete")}) from failure
    if outcome == "not_done":
        raise failure


def _copy_failed(fs: Core, plan: FilePlan, copy: Step, failure: Exception) -> None:
    """A move's guarded copy failed: nothing was changed; the refusal says why (no read is
    added)."""
    src, src_shown = plan.key, plan.shown
    if isinstance(failure, Conflict):
        if failure.reason == ConflictKind.exists:
            raise FsError(ErrorCode.FS_ALREADY_EXISTS, path=src_shown,
                          reason=Reason.move_destination_exists,
                          details={"destination": copy.shown}) from None
        if failure.reason == ConflictKind.missing:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=src_shown,
                          reason=Reason.deleted_before_move) from None
        raise stale_source(fs, failure, src, src_shown, plan.precondition, plan.lost,
                           "move") from None
    if isinstance(failure, FsError):
        raise fs.not_found(src, failure) if failure.code is ErrorCode.FS_NOT_FOUND else (
            failure) from None
    raise failure


def _unmove(fs: Core, e: Exception, plan: FilePlan, remove: Step, copy: Step,
            version: Version) -> None:
    """The source's delete failed after the copy was made. Returns when the source is gone
    by this move's own delete (its answer lost, a resend found the file gone): the move is
    done, and its bytes are at the destination. When the store refused the only delete it
    was sent (no such file, another version), another writer moved, deleted or changed
    the source since the copy: that is definitive, so the copy is taken back, guarded by
    its own version (no one's later write to it is lost), and the move refused. Otherwise
    the copy is taken back too and the error raised; but never while the source may be
    gone."""
    src_shown, dst_shown = plan.shown, copy.shown
    facts = {"destination": dst_shown}
    if isinstance(e, Conflict) and not e.resent:
        _take_back(fs, e, plan, copy, version)
        if e.reason == ConflictKind.missing:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=src_shown,
                          reason=Reason.deleted_before_move) from None
        raise stale_source(fs, e, plan.key, src_shown, plan.precondition, plan.lost,
                           "move") from None
    if gone_already(e) and not isinstance(e, Conflict):
        return  # a plain "no such file", which a resend of our own delete also meets
    if ambiguous(e) or isinstance(e, Conflict):
        outcome, _ = settle(fs.backend, remove, e)
        if outcome == "done":
            return
        if outcome == "unknown":
            raise FsError(ErrorCode.FS_BACKEND, path=src_shown, reason=Reason.move_outcome_unknown,
                          details={**facts, "cause": cause_text(e, src_shown, "delete")},
                          ) from e
    _take_back(fs, e, plan, copy, version)
    if isinstance(e, Conflict):
        raise stale_source(fs, e, plan.key, src_shown, plan.precondition, plan.lost,
                           "move") from None
    raise e


def _take_back(fs: Core, e: Exception, plan: FilePlan, copy: Step, version: Version) -> None:
    """Delete a move's copy, guarded by the version the copy made; raises when it cannot
    be taken back (``e``: why the move failed)."""
    src_shown, dst, dst_shown = plan.shown, copy.key, copy.shown
    facts = {"destination": dst_shown}
    try:
        perform(fs.backend, Step("delete", dst, dst_shown, IfMatch(version)), None)
    except Conflict as lost:
        if lost.reason != ConflictKind.missing:  # missing: the copy is gone, as the undo wants
            raise FsError(ErrorCode.FS_STALE, path=src_shown, reason=Reason.move_rollback_lost,
                          details=facts) from e
    except Exception as failed:
        if landed(fs.backend, dst, None)[0] != "done":
            details = {**facts, "cause": cause_text(e, src_shown, "delete"),
                       "error": cause_text(failed, dst_shown, "delete").rstrip(".")}
            raise FsError(ErrorCode.FS_BACKEND, path=src_shown, reason=Reason.move_copy_kept,
                          details=details) from e


def landed_write(fs: Core, step: Step, plan: FilePlan, failure: Exception) -> Version:
    """A one-file write that failed without a refusal may have landed (:func:`settle`):
    the version it made when the file holds exactly its bytes and no store's record names
    another writer (one read, on this path only; the plan's writer is noted then); else
    the failure, or, when the file cannot be read either, FS_BACKEND saying the outcome is
    unknown instead of "nothing was changed"."""
    author, shown = plan.meta.owner, plan.shown
    # A write back made in another's name (an undo, a restore) is not proven ours by
    # the owner the object names.
    outcome, version = settle(fs.backend, step, failure,
                              author if author == fs.owner else None)
    if outcome == "done":
        assert version is not None
        if author is not None:
            fs.authors.note(plan.key, version, author)
        return version
    if outcome == "unknown":
        raise FsError(ErrorCode.FS_BACKEND, path=shown, reason=Reason.outcome_unknown,
                      details={"cause": cause_text(failure, shown, plan.rules.action)}
                      ) from failure
    raise failure


# -- a plan of several files: undoing what was done ------------------------------------
@dataclass
class Rollback:
    """What undoing a failed commit left: one sentence per file the commit reached."""

    complete: bool
    files: list[str]


def _inverse(step: Step) -> Step:
    """The step that takes a done ``step`` back, guarded by what it left: a created or
    copied file deleted, a written one given its old bytes, a deleted one created again."""
    if step.action in ("create", "copy"):
        assert step.version is not None
        return Step("delete", step.key, step.shown, IfMatch(step.version))
    assert step.old is not None
    if step.action == "write":
        assert step.version is not None
        return Step("write", step.key, step.shown, IfMatch(step.version), data=step.old)
    return Step("create", step.key, step.shown, CreateOnly(), data=step.old)


def _undo(backend: Backend, step: Step, meta: WriteMeta | None) -> tuple[str, bool]:
    """Undo one done step: the sentence saying what the file holds now, and whether it is
    back as it was."""
    try:
        perform(backend, _inverse(step), meta)
    except Exception as e:  # a lost precondition, a storage error, a backend bug
        return _undo_failed(backend, step, e)
    return render(Reason.rollback_restored, step.shown), True


def _undo_failed(backend: Backend, step: Step, error: Exception) -> tuple[str, bool]:
    """What a failed undo left, from one read: an undo whose answer was lost may have
    landed, and a lost precondition may meet our own resent undo."""
    shown = step.shown
    before = None if step.action in ("create", "copy") else step.old
    ours = None if step.action == "delete" else step.data
    text = cause_text(error, shown, "undo").rstrip(".")
    try:
        held: bytes | None = backend.read(step.key).data
    except Exception as e:
        if not gone_already(e):
            return render(Reason.rollback_unknown, shown, {"error": text}), False
        held = None
    if held == before:
        return render(Reason.rollback_restored, shown), True
    if held == ours and ours is not None:
        return render(Reason.rollback_kept, shown, {"error": text}), False
    if step.action == "delete":
        if held is None:
            return render(Reason.rollback_still_deleted, shown, {"error": text}), False
        return render(Reason.rollback_recreated, shown), False
    if held is None:
        return render(Reason.rollback_deleted, shown), False
    return render(Reason.rollback_changed, shown), False


def rollback(backend: Backend, done: Sequence[Step], failed: Step | None,
             pending: Sequence[Step], unknown: bool = False,
             meta: WriteMeta | None = None, held: bool = False) -> Rollback:
    """Undo ``done`` in reverse order; describe every file the commit was to change, in
    commit order. ``unknown``: whether ``failed`` took effect is not known; ``meta``: on
    whose behalf the undoing writes and deletes are made; ``held``: ``failed``'s file
    holds exactly its bytes, written by a writer the store cannot name (left as it is)."""
    sentences: dict[str, str] = {}
    complete = True
    if held and failed is not None:
        sentences[failed.key] = render(Reason.rollback_shared, failed.shown)
        complete = False
    # Copies of moves whose source is not known to hold its bytes: undoing one could
    # leave the bytes nowhere.
    kept: dict[str, str] = {}
    if unknown and failed is not None and failed.moved_to is not None:
        kept[failed.moved_to] = failed.shown
    for step in reversed(done):
        if step.key in kept:
            sentences[step.key] = render(Reason.rollback_move_kept, step.shown,
                                         {"source": kept[step.key]})
            complete = False
            continue
        if step.shared:
            sentences[step.key] = render(
                (Reason.rollback_shared_deleted if step.action == "delete"
                 else Reason.rollback_shared),
                step.shown)
            complete = False
            if step.moved_to is not None:
                kept[step.moved_to] = step.shown
            continue
        sentences[step.key], ok = _undo(backend, step, meta)
        if not ok and step.moved_to is not None:
            kept[step.moved_to] = step.shown
        complete = complete and ok
    rest = [*([failed] if failed is not None else []), *pending]
    if unknown and failed is not None:
        reason = Reason.outcome_unknown_deleted if failed.action == "delete" else (
            Reason.outcome_unknown_written)
        sentences[failed.key] = render(reason, failed.shown)
    for step in rest:
        sentences.setdefault(step.key, render(Reason.rollback_untouched, step.shown))
    order = dict.fromkeys(s.key for s in (*done, *rest))
    return Rollback(complete and not unknown, [sentences[k] for k in order])


def step_failed(backend: Backend, step: Step, failure: BaseException, done: list[Step],
                pending: Sequence[Step], meta: WriteMeta | None) -> None:
    """A step of a plan of several failed: returns when it is found done after all
    (:func:`settle`; it joins ``done``), else undoes ``done`` and raises. The raised FsError
    is the step's refusal when everything was undone, ``change_rollback_incomplete`` naming
    what each file holds when an undo itself lost (or failed), and
    ``change_outcome_unknown`` (FS_BACKEND) when the step's own outcome is unknown; the
    last two have the original failure as their ``__cause__``. Anything at all (an
    interrupt too) undoes what was done before it goes on."""
    outcome, version = settle(backend, step, failure,
                              meta.owner if meta is not None else None)
    if outcome == "done":
        step.version = version
        step.shared = not ambiguous(failure)
        done.append(step)
        if isinstance(failure, Exception):
            return
    error: BaseException = failure
    if outcome in ("not_done", "maybe") and isinstance(failure, Conflict):
        assert step.explain is not None
        error = step.explain(failure)
    result = rollback(backend, done, None if outcome == "done" else step,
                      pending, unknown=outcome == "unknown", meta=meta,
                      held=outcome == "maybe")
    if not isinstance(failure, Exception):
        raise failure
    if outcome == "unknown":
        raise FsError(
            ErrorCode.FS_BACKEND, path=step.shown, reason=Reason.change_outcome_unknown,
            details={"cause": cause_text(failure, step.shown, step.action),
                     "files": "; ".join(result.files), "rollback": result.files},
        ) from failure
    if result.complete:
        if error is failure:
            raise failure
        raise error from None
    cause = error if isinstance(error, FsError) else FsError(
        ErrorCode.FS_BACKEND, path=step.shown, reason=Reason.step_failed,
        details={"action": step.action, "detail": repr(error)})
    raise FsError(
        cause.code, path=step.shown, reason=Reason.change_rollback_incomplete,
        details={"cause": cause.message, "files": "; ".join(result.files),
                 "rollback": result.files},
    ) from failure
