"""Changes of several files at once: what to change, and committing it all or nothing.

A change is a sequence of :data:`FileChange` (:class:`Create`, :class:`Update` with an
optional move, :class:`Delete`). :meth:`fsseam.seam.Seam.change` validates every part of it
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
  made it, and the error says exactly which file holds what (:class:`Rollback`).

Nothing here knows a tool; the seam turns the outcome into events and a result.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .backends.base import Backend
from .errors import Conflict, ErrorCode, FsError
from .messages import render
from .text import TextDoc
from .versions import CreateOnly, IfMatch, Precondition, Version

__all__ = [
    "Create",
    "Delete",
    "DocEdit",
    "FileChange",
    "Rollback",
    "Step",
    "Update",
    "commit",
    "commit_order",
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
    """create / write: the new bytes."""
    source: str | None = None
    """copy: the key copied from."""
    old: bytes | None = None
    """write / delete: the bytes before, which an undo puts back."""
    version: Version | None = field(default=None, compare=False)
    """Set once the step is done: the version it wrote (None for a delete)."""


def commit_order(steps: Sequence[Step]) -> list[Step]:
    """Creates and copies, then in-place writes, then deletes; each group by key."""
    return sorted(steps, key=lambda s: (_GROUP[s.action], s.key))


def _do(backend: Backend, step: Step) -> Version | None:
    try:
        if step.action == "create" or step.action == "write":
            assert step.data is not None
            return backend.write(step.key, step.data, step.precondition)
        if step.action == "copy":
            assert step.source is not None
            return backend.copy(step.source, step.key, step.precondition)
        backend.delete(step.key, step.precondition)
        return None
    except Conflict as c:
        raise step.explain(c) from None


@dataclass
class Rollback:
    """What undoing a failed commit left: one sentence per file the commit reached."""

    complete: bool
    files: list[str]


def _undo(backend: Backend, step: Step) -> tuple[str, bool]:
    """Undo one done step: the sentence saying what the file holds now, and whether it is
    back as it was."""
    shown = step.shown
    gone = step.action == "delete"
    try:
        if step.action in ("create", "copy"):
            assert step.version is not None
            backend.delete(step.key, IfMatch(step.version))
        elif step.action == "write":
            assert step.version is not None and step.old is not None
            backend.write(step.key, step.old, IfMatch(step.version))
        else:
            assert step.old is not None
            backend.write(step.key, step.old, CreateOnly())
    except Conflict as c:
        if gone:
            return render("rollback_recreated", shown), False
        if c.reason == "missing":
            return render("rollback_deleted", shown), False
        return render("rollback_changed", shown), False
    except Exception as e:  # a storage error (or a backend bug): say what the file holds
        error = e.message if isinstance(e, FsError) else repr(e)
        reason = "rollback_still_deleted" if gone else "rollback_kept"
        return render(reason, shown, {"error": error}), False
    return render("rollback_restored", shown), True


def rollback(backend: Backend, done: Sequence[Step], failed: Step | None,
             pending: Sequence[Step]) -> Rollback:
    """Undo ``done`` in reverse order; describe every file the commit was to change, in
    commit order."""
    sentences: dict[str, str] = {}
    complete = True
    for step in reversed(done):
        sentences[step.key], ok = _undo(backend, step)
        complete = complete and ok
    rest = [*([failed] if failed is not None else []), *pending]
    for step in rest:
        sentences.setdefault(step.key, render("rollback_untouched", step.shown))
    order = dict.fromkeys(s.key for s in (*done, *rest))
    return Rollback(complete, [sentences[k] for k in order])


def commit(backend: Backend, steps: Sequence[Step]) -> list[Step]:
    """Perform ``steps`` in :func:`commit_order`; all or, as far as the store allows,
    nothing. Returns the steps (each with its ``version``). On a failure the done steps
    are undone and the failure is raised; when an undo itself lost (or failed), the raised
    FsError is ``change_rollback_incomplete`` naming what each file holds, with the
    original failure as its ``__cause__``."""
    ordered = commit_order(steps)
    done: list[Step] = []
    for i, step in enumerate(ordered):
        try:
            step.version = _do(backend, step)
        except BaseException as failure:
            # Anything at all (an interrupt too) undoes what was done before it goes on.
            result = rollback(backend, done, step, ordered[i + 1:])
            if result.complete or not isinstance(failure, Exception):
                raise
            cause = failure if isinstance(failure, FsError) else FsError(
                ErrorCode.FS_BACKEND, path=step.shown, reason="step_failed",
                details={"action": step.action, "detail": repr(failure)})
            raise FsError(
                cause.code, path=step.shown, reason="change_rollback_incomplete",
                details={"cause": cause.message, "files": "; ".join(result.files),
                         "rollback": result.files},
            ) from failure
        done.append(step)
    return ordered
