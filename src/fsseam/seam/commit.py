"""The commit stage of the pipeline: the one call that changes the store, and what a
failed step of a plan of several steps leaves.

:func:`fsseam.seam.pipeline.run` performs a plan's steps through :func:`perform`:

- in a fixed order (:func:`commit_order`): files created (new files, moves'
  destinations) first, then files updated in place, then files deleted (deletes, moves'
  sources), each group by key. A crash part-way leaves a prefix of that order done, so
  no content is ever only in the process: a moved file exists at both paths until its
  source is deleted last. And two changes that overlap on files of the same kind meet on
  the first shared file in the same order, so one of them wins it and the other stops
  there;
- every step is conditional (create-only, or compare-and-swap on the version the agent
  observed), so another writer's change is never overwritten;
- when a step of several fails (a lost compare-and-swap, a storage error, a size limit,
  anything), the steps already done are undone in reverse order, each again conditional
  on the version this change just wrote: a file someone else changed meanwhile is left
  as they made it, and the error says exactly which file holds what (:class:`Rollback`);
- a failed step is not taken as one that changed nothing: its outcome is done, not done
  or unknown (:func:`settle`). A store that loses an answer may have done the step (a
  delete whose resend finds the file gone, a write that landed and then raised): the
  step then counts as done and the commit goes on. When the file cannot be read back,
  its state is unknown: nothing that may depend on it is undone (the copy of a move whose
  source may be gone is kept), and the error names each file and what it holds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..backends.base import Backend, WriteMeta
from ..changes import Outcome, ambiguous, cause_text, gone_already, landed
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..messages import Reason, render
from ..versions import CreateOnly, IfMatch, Version
from .plans import Action, Step

__all__ = ["Rollback", "commit_order", "perform", "rollback", "settle", "step_failed"]

_GROUP: dict[Action, int] = {"create": 0, "copy": 0, "write": 1, "delete": 2}


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
                  observed=isinstance(pre, IfMatch), answered=isinstance(failure, Conflict))


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
