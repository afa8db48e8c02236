"""The one pipeline every change of the seam runs through: :func:`run` commits a
:class:`~fsseam.seam.plans.Plan`, one file or many, and is the only caller of the store's
changes (:func:`~fsseam.seam.commit.perform`).

The operations before it resolve the paths, read what the plan needs, ask the gate
(:func:`~fsseam.seam.plans.ask`), check the preconditions and the limits; after it, they
dispatch the events and build the outcome from the steps it returns.

A plan of several steps commits all or nothing (see :mod:`fsseam.seam.commit`). A
one-file operation's plan is one step that carries its
:class:`~fsseam.seam.plans.FilePlan`: a write is nothing when the file already holds the
bytes at the version the agent read, else one conditional write. A file that holds
exactly the bytes otherwise is judged by the one rule
(:func:`~fsseam.versions.same_change`): the agent's own landed write is success, another
writer's identical change made since the agent's read is FS_STALE saying so; any other
refusal is FS_STALE with what changed since the agent's read when the policy says
stale. A delete is one guarded delete; a move a guarded copy, then a guarded delete of
the source (the copy taken back when the store refuses that delete: another writer
moved, deleted or changed the source). A call that failed without an answer may have
landed: one read says.
"""

from __future__ import annotations

from ..changes import ambiguous, cause_text, gone_already, judge, landed
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..messages import Reason
from ..versions import IfMatch, SameChange, Version
from .commit import commit_order, perform, step_failed
from .core import Core
from .plans import FilePlan, Plan, Step
from .stale import stale, stale_source

__all__ = ["run"]


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
        try:
            step.version = perform(fs.backend, step, plan.meta)
        except BaseException as failure:
            if lone is None:
                # Returns only when the step is found done after all; it joined ``done``.
                step_failed(fs.backend, step, failure, done, ordered[i + 1:], plan.meta)
            elif isinstance(failure, Exception):
                _lone_failed(fs, step, lone, failure, done)
                done.append(step)
            else:
                raise
            continue
        if lone is not None and step.action == "write" and lone.meta.owner is not None:
            assert step.version is not None
            fs.authors.note(step.key, step.version, lone.meta.owner)
        done.append(step)
    return ordered


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
            step.version = fs.landed_write(failure, plan.key, plan.shown, plan.data,
                                            plan.action, plan.meta.owner)
    elif step.action == "copy":
        _copy_failed(fs, plan, step, failure)
    elif step.moved_to is not None:
        copy = done[-1]
        assert copy.version is not None
        _unmove(fs, failure, plan, copy, copy.version)
    else:
        _delete_failed(fs, plan, failure)


def _held_already(fs: Core, plan: FilePlan, seen: Version | None
                  ) -> tuple[Version, bool] | None:
    """Whether the file holds the plan's bytes before anything is written (see
    :attr:`FilePlan.check_first`); None: write."""
    key, data, current = plan.key, plan.data, plan.current
    if plan.check_first == "back":
        if seen is None or not fs.holds(key, seen, data, plan.data_version):
            return None
        return (seen, True) if fs.probe_version(key) == seen else None
    if plan.check_first != "write":
        return None
    if current is not None and (seen is None or current[1] == seen):
        held = _judged(fs, plan, seen, current, answered=True)
        if held is not None:
            return held
    if seen is None:
        return None
    if current is not None and current[1] != seen:
        return _lost(fs, plan, Conflict("mismatch", path=plan.shown), seen, current)
    if current is None and fs.holds(key, seen, data, None):
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
            if plan.unread_is_unknown:
                raise _unverified(c, shown, plan.action, fallback, e) from None
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
    owner = fs.owner if plan.meta.owner == fs.owner and plan.rerun_is_own else None
    verdict = judge(fs.backend, plan.key, plan.data, current[0], current[1], seen=seen,
                    observed=_observed(plan), owner=owner, answered=answered)
    if verdict is SameChange.DIFFERENT:
        return None
    if verdict is SameChange.HELD:
        return current[1], True
    if verdict is SameChange.OURS:
        return current[1], False
    fallback = _explained(fs, plan, Conflict("mismatch", path=plan.shown))
    raise stale(fs, plan.key, plan.shown, seen, current, action=plan.stale_action,
                fallback=fallback, ops=plan.ops, old=plan.old, undo=plan.undo, same=verdict)


def _observed(plan: FilePlan) -> bool:
    """Whether the change rests on what the agent read (a version, or the file seen
    absent): the policy explains a lost guard as FS_STALE then."""
    return plan.lost[0] is ErrorCode.FS_STALE


def _explained(fs: Core, plan: FilePlan, c: Conflict) -> FsError:
    """What the lost guard means, as the intent (or an undo) says."""
    if plan.plain is not None and c.reason == ConflictKind.mismatch:
        return plan.plain
    return fs.refusal_for(c, plan.shown, *plan.lost)


def _stale_or(fs: Core, plan: FilePlan, seen: Version | None,
              current: tuple[bytes, Version] | None, fallback: FsError) -> FsError:
    """FS_STALE with what changed since ``seen``, when the intent says stale; else
    ``fallback``."""
    if seen is None or plan.lost[0] is not ErrorCode.FS_STALE:
        return fallback
    return stale(fs, plan.key, plan.shown, seen, current, action=plan.stale_action,
                 fallback=fallback, ops=plan.ops, old=plan.old, undo=plan.undo)


def _delete_failed(fs: Core, plan: FilePlan, failure: Exception) -> None:
    """A one-file delete that failed. A guard that met no file is the delete done for an
    undo (``gone_is_done``), FS_NOT_FOUND for a delete; a guard lost to a changed file is
    the refusal, FS_STALE with what changed when the intent says stale. A delete that
    failed without a refusal may have landed: one read says."""
    key, shown, pre = plan.key, plan.shown, plan.precondition
    if isinstance(failure, Conflict):
        if failure.reason == ConflictKind.missing:
            if plan.gone_is_done:
                return  # someone deleted it already: the file is as the undo leaves it
            raise FsError(ErrorCode.FS_NOT_FOUND, path=shown,
                          reason=Reason.deleted_before_delete) from None
        seen = pre.version if isinstance(pre, IfMatch) else None
        raise _stale_or(fs, plan, seen, None, _explained(fs, plan, failure)) from None
    if plan.gone_is_done and gone_already(failure):
        return
    if isinstance(failure, FsError) and not ambiguous(failure):
        raise fs.not_found(key, failure) if failure.reason != Reason.is_directory else (
            failure) from None
    # The delete may have landed: the file gone is the delete done.
    _landed_delete(fs, failure, key, shown)


def _unverified(c: Conflict, shown: str, action: str, fallback: FsError, read: FsError
                ) -> FsError:
    """A refused write whose file could not be read back: the refusal may have met our
    own landed request (a resend after a lost answer), so the outcome is unknown, unless
    the read itself shows the file is not ours (gone, or too large)."""
    if read.code is not ErrorCode.FS_BACKEND:
        return fallback
    return FsError(ErrorCode.FS_BACKEND, path=shown, reason=Reason.outcome_unknown,
                   details={"cause": cause_text(c, shown, action)})


def _landed_delete(fs: Core, failure: Exception, key: str, shown: str) -> None:
    """A delete that failed without a refusal may have landed: returns when the file is
    gone (the delete done), else raises the failure, or FS_BACKEND saying the outcome is
    unknown when the file cannot be read either (one read, on this path only)."""
    if not ambiguous(failure):
        raise failure
    outcome, _ = landed(fs.backend, key, None)
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


def _unmove(fs: Core, e: Exception, plan: FilePlan, copy: Step, version: Version) -> None:
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
        outcome, _ = landed(fs.backend, plan.key, None)
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
