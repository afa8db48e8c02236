"""Changes of several files at once: what to change, and committing it all or nothing.

A change is a sequence of :data:`FileChange` (:class:`Create`, :class:`Update` with an
optional move, :class:`Delete`). :func:`fsseam.seam.changing.change` validates every part of it
against the versions the agent observed and computes every new content before anything is
written; then :func:`commit` performs the :class:`Step` list it built:

- in a fixed order: files created (new files, moves' destinations) first, then files
  updated in place, then files deleted (deletes, moves' sources), each group by key. A
  crash part-way leaves a prefix of that order done, so no content is ever only in the
  process: a moved file exists at both paths until its source is deleted last. And two
  changes that overlap on files of the same kind meet on the first shared file in the same
  order, so one of them wins it and the other stops there;
- every step is conditional (create-only, or compare-and-swap on the version the agent
  observed), so another writer's change is never overwritten;
- when a step fails (a lost compare-and-swap, a storage error, a size limit, anything),
  the steps already done are undone in reverse order, each again conditional on the
  version this change just wrote: a file someone else changed meanwhile is left as they
  made it, and the error says exactly which file holds what (:class:`Rollback`);
- a failed step is not taken as one that changed nothing: its outcome is done, not done
  or unknown (:func:`settle`). A store that loses an answer may have done the step (a
  delete whose resend finds the file gone, a write that landed and then raised): the
  step then counts as done and the commit goes on. When the file cannot be read back,
  its state is unknown: nothing that may depend on it is undone (the copy of a move whose
  source may be gone is kept), and the error names each file and what it holds.

Nothing here knows a tool; the seam turns the outcome into events and a result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .backends.base import Backend, WriteMeta, write_as
from .backends.kept import delete_as
from .errors import Conflict, ConflictKind, ErrorCode, FsError
from .messages import Reason, render
from .text import TextDoc
from .versions import CreateOnly, IfMatch, Precondition, Version

__all__ = [
    "Create",
    "Delete",
    "DocEdit",
    "FileChange",
    "Outcome",
    "Rollback",
    "Step",
    "Update",
    "ambiguous",
    "cause_text",
    "commit",
    "commit_order",
    "gone_already",
    "landed",
    "settle",
]

DocEdit = Callable[[TextDoc, str], TextDoc]
"""A pure edit of a whole text: ``(doc, shown path) -> new doc``; raises FsError."""


@dataclass(frozen=True)
class Create:
    """A new file; the path must be absent."""

    path: str
    content: str


@dataclass(frozen=True)
class Update:
    """Edit a file (``edit``), move it to ``move_to`` (which must be absent), or both."""

    path: str
    edit: DocEdit | None = None
    move_to: str | None = None


@dataclass(frozen=True)
class Delete:
    path: str


FileChange = Create | Update | Delete

Action = Literal["create", "copy", "write", "delete"]
Outcome = Literal["done", "not_done", "unknown"]
_GROUP: dict[Action, int] = {"create": 0, "copy": 0, "write": 1, "delete": 2}


@dataclass
class Step:
    """One conditional storage call of a commit, and how to undo it."""

    action: Action
    key: str
    shown: str
    precondition: Precondition
    explain: Callable[[Conflict], FsError]
    """What a lost precondition means to the agent (FS_STALE, FS_ALREADY_EXISTS, ...)."""
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


def commit_order(steps: Sequence[Step]) -> list[Step]:
    """Creates and copies, then in-place writes, then deletes; each group by key."""
    return sorted(steps, key=lambda s: (_GROUP[s.action], s.key))


def _do(backend: Backend, step: Step, meta: WriteMeta | None) -> Version | None:
    if step.action == "create" or step.action == "write":
        assert step.data is not None
        return write_as(backend, step.key, step.data, step.precondition, meta)
    if step.action == "copy":
        assert step.source is not None
        return backend.copy(step.source, step.key, step.precondition)
    delete_as(backend, step.key, step.precondition, meta)
    return None


def gone_already(failure: BaseException) -> bool:
    """Whether a delete's failure says the file is not there (a precondition that met no
    file, or a plain 404): the goal of the delete, whoever reached it."""
    if isinstance(failure, Conflict):
        return failure.reason == ConflictKind.missing
    return (isinstance(failure, FsError) and failure.code is ErrorCode.FS_NOT_FOUND
            and failure.reason != Reason.bucket_missing)


def ambiguous(failure: BaseException) -> bool:
    """Whether the store may have done what a failed call asked: a storage error, a lost
    answer whose recovery failed, anything unexpected. A refusal the store answered (a
    lost precondition, a size limit, permissions) changed nothing."""
    if isinstance(failure, FsError):
        return failure.code is ErrorCode.FS_BACKEND and not isinstance(failure, Conflict)
    return True


def landed(backend: Backend, key: str, want: bytes | None) -> tuple[Outcome, Version | None]:
    """One read after a call that may have landed: "done" (with the version read) when
    the file holds exactly ``want`` (None: it is absent), "not_done" when it holds
    anything else, "unknown" when it cannot be read."""
    try:
        now = backend.read(key)
    except FsError as e:
        if gone_already(e):
            return ("done" if want is None else "not_done"), None
        return "unknown", None
    except Exception:
        return "unknown", None
    if want is not None and now.data == want:
        return "done", now.version
    return "not_done", None


def settle(backend: Backend, step: Step, failure: BaseException) -> tuple[Outcome, Version | None]:
    """What a failed step left: done after all (with the version it wrote), not done, or
    unknown. Costs at most one read, on this failure path only."""
    delete = step.action == "delete"
    if delete and gone_already(failure):
        # Our own resent delete, or someone else's: the file is gone either way, and a
        # move's bytes are at its destination.
        return "done", None
    if isinstance(failure, Conflict):
        if delete or failure.reason == ConflictKind.missing:
            return "not_done", None
        # A refused write or copy: a resend meeting our own landed request, when the file
        # holds exactly our bytes; someone else's change when it holds others.
    elif not ambiguous(failure):
        return "not_done", None
    return landed(backend, step.key, None if delete else step.data)


def cause_text(failure: BaseException, shown: str, action: str) -> str:
    """A failure's sentence without the "nothing was changed" a storage error adds: the
    failed call may have taken effect."""
    if isinstance(failure, Conflict):
        return render("step_refused", shown, {"action": action})
    if isinstance(failure, FsError):
        if failure.reason in (Reason.storage_failed, Reason.store_busy) and {
                "action", "detail"} <= failure.details.keys():
            return render("step_failed", failure.path, failure.details)
        return failure.message
    return render("step_failed", shown, {"action": action, "detail": repr(failure)})


@dataclass
class Rollback:
    """What undoing a failed commit left: one sentence per file the commit reached."""

    complete: bool
    files: list[str]


def _undo(backend: Backend, step: Step, meta: WriteMeta | None) -> tuple[str, bool]:
    """Undo one done step: the sentence saying what the file holds now, and whether it is
    back as it was."""
    try:
        if step.action in ("create", "copy"):
            assert step.version is not None
            delete_as(backend, step.key, IfMatch(step.version), meta)
        elif step.action == "write":
            assert step.version is not None and step.old is not None
            write_as(backend, step.key, step.old, IfMatch(step.version), meta)
        else:
            assert step.old is not None
            write_as(backend, step.key, step.old, CreateOnly(), meta)
    except Exception as e:  # a lost precondition, a storage error, a backend bug
        return _undo_failed(backend, step, e)
    return render("rollback_restored", step.shown), True


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
            return render("rollback_unknown", shown, {"error": text}), False
        held = None
    if held == before:
        return render("rollback_restored", shown), True
    if held == ours and ours is not None:
        return render("rollback_kept", shown, {"error": text}), False
    if step.action == "delete":
        if held is None:
            return render("rollback_still_deleted", shown, {"error": text}), False
        return render("rollback_recreated", shown), False
    if held is None:
        return render("rollback_deleted", shown), False
    return render("rollback_changed", shown), False


def rollback(backend: Backend, done: Sequence[Step], failed: Step | None,
             pending: Sequence[Step], unknown: bool = False,
             meta: WriteMeta | None = None) -> Rollback:
    """Undo ``done`` in reverse order; describe every file the commit was to change, in
    commit order. ``unknown``: whether ``failed`` took effect is not known; ``meta``: on
    whose behalf the undoing writes and deletes are made."""
    sentences: dict[str, str] = {}
    complete = True
    # Copies of moves whose source is not known to hold its bytes: undoing one could
    # leave the bytes nowhere.
    kept: dict[str, str] = {}
    if unknown and failed is not None and failed.moved_to is not None:
        kept[failed.moved_to] = failed.shown
    for step in reversed(done):
        if step.key in kept:
            sentences[step.key] = render("rollback_move_kept", step.shown,
                                         {"source": kept[step.key]})
            complete = False
            continue
        if step.shared:
            sentences[step.key] = render(
                "rollback_shared_deleted" if step.action == "delete" else "rollback_shared",
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
        reason = "outcome_unknown_deleted" if failed.action == "delete" else (
            "outcome_unknown_written")
        sentences[failed.key] = render(reason, failed.shown)
    for step in rest:
        sentences.setdefault(step.key, render("rollback_untouched", step.shown))
    order = dict.fromkeys(s.key for s in (*done, *rest))
    return Rollback(complete and not unknown, [sentences[k] for k in order])


def commit(backend: Backend, steps: Sequence[Step], meta: WriteMeta | None = None
           ) -> list[Step]:
    """Perform ``steps`` in :func:`commit_order`; all or, as far as the store allows,
    nothing, writing and deleting on behalf of ``meta``'s owner (for stores that keep
    it). Returns the steps (each with its ``version``).

    A step that failed but is found done (:func:`settle`) counts as done. On any other
    failure the done steps are undone and the failure is raised; when an undo itself lost
    (or failed), the raised FsError is ``change_rollback_incomplete`` naming what each
    file holds, and when the failed step's own outcome is unknown it is
    ``change_outcome_unknown`` (FS_BACKEND), likewise naming each file; either has the
    original failure as its ``__cause__``."""
    ordered = commit_order(steps)
    done: list[Step] = []
    for i, step in enumerate(ordered):
        try:
            step.version = _do(backend, step, meta)
        except BaseException as failure:
            # Anything at all (an interrupt too) undoes what was done before it goes on.
            outcome, version = settle(backend, step, failure)
            if outcome == "done":
                step.version = version
                step.shared = not ambiguous(failure)
                done.append(step)
                if isinstance(failure, Exception):
                    continue
            error: BaseException = failure
            if outcome == "not_done" and isinstance(failure, Conflict):
                error = step.explain(failure)
            result = rollback(backend, done, None if outcome == "done" else step,
                              ordered[i + 1:], unknown=outcome == "unknown", meta=meta)
            if not isinstance(failure, Exception):
                raise
            if outcome == "unknown":
                raise FsError(
                    ErrorCode.FS_BACKEND, path=step.shown, reason="change_outcome_unknown",
                    details={"cause": cause_text(failure, step.shown, step.action),
                             "files": "; ".join(result.files), "rollback": result.files},
                ) from failure
            if result.complete:
                if error is failure:
                    raise
                raise error from None
            cause = error if isinstance(error, FsError) else FsError(
                ErrorCode.FS_BACKEND, path=step.shown, reason="step_failed",
                details={"action": step.action, "detail": repr(error)})
            raise FsError(
                cause.code, path=step.shown, reason="change_rollback_incomplete",
                details={"cause": cause.message, "files": "; ".join(result.files),
                         "rollback": result.files},
            ) from failure
        done.append(step)
    return ordered
