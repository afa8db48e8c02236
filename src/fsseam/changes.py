"""Changes of several files at once: what to change, and what a failed call left.

A change is a sequence of :data:`FileChange` (:class:`Create`, :class:`Update` with an
optional move, :class:`Delete`), built by the tools and the patch parser.
:func:`fsseam.seam.changing.change` validates every part of it against the versions the
agent observed and computes every new content before anything is written; then the seam's
one pipeline (:func:`fsseam.seam.pipeline.run`) commits the plan it built, all or nothing
(see :mod:`fsseam.seam.commit`).

The helpers here say what a failed storage call may have done (:func:`ambiguous`,
:func:`gone_already`, :func:`landed`), whether a file holding a change's bytes holds the
agent's own change (:func:`judge`, the one rule of :func:`~fsseam.versions.same_change`),
and name it without claiming nothing changed (:func:`cause_text`). Nothing here knows a
tool, or calls a change of the backend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .backends.base import Backend
from .errors import Conflict, ConflictKind, ErrorCode, FsError
from .messages import Reason, render
from .text import TextDoc
from .versions import SameChange, Version, same_change

__all__ = [
    "Create",
    "Delete",
    "DocEdit",
    "FileChange",
    "Outcome",
    "Update",
    "ambiguous",
    "cause_text",
    "gone_already",
    "judge",
    "landed",
    "written_by",
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

Outcome = Literal["done", "not_done", "unknown", "maybe"]
"""What a failed call left: done, not done, unknown (the file cannot be read), or maybe:
the file holds exactly the call's bytes, written since the read by a writer the store
cannot name (another writer's same change, or this call's own resent request)."""


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


def landed(backend: Backend, key: str, want: bytes | None, *, owner: str | None = None,
           seen: Version | None = None, observed: bool = True, answered: bool = False,
           ) -> tuple[Outcome, Version | None]:
    """One read after a call that may have landed: "done" (with the version read) when
    the file holds exactly ``want`` (None: it is absent) and :func:`judge` takes the bytes
    as the change done (``owner``'s own write, or nothing lost: see
    :func:`~fsseam.versions.same_change`), "not_done" when it holds anything else or
    another writer's equal bytes, "maybe" when it holds equal bytes whose writer the store
    cannot name, "unknown" when it cannot be read. ``answered``: the call was refused by
    the store (not a call that failed without an answer)."""
    try:
        now = backend.read(key)
    except FsError as e:
        if gone_already(e):
            return ("done" if want is None else "not_done"), None
        return "unknown", None
    except Exception:
        return "unknown", None
    if want is None:
        return "not_done", None
    verdict = judge(backend, key, want, now.data, now.version, seen=seen, observed=observed,
                    owner=owner, answered=answered)
    if verdict in (SameChange.HELD, SameChange.OURS):
        return "done", now.version
    if verdict is SameChange.MAYBE_OURS:
        return "maybe", now.version
    return "not_done", None


def written_by(backend: Backend, key: str, version: Version, owner: str | None
               ) -> bool | None:
    """Whether ``owner``'s write made ``version`` of the file, where the store keeps who
    wrote an object (one HEAD); None where it cannot say (no writer kept, no owner, the
    file moved on again, the look failed)."""
    if owner is None:
        return None
    try:
        found = backend.writer_of(key)
    except FsError:
        return None
    if found is None or found[0] != version:
        return None
    return found[1] == owner


def judge(backend: Backend, key: str, data: bytes, held: bytes, version: Version, *,
          seen: Version | None, observed: bool, owner: str | None, answered: bool,
          ) -> SameChange:
    """:func:`~fsseam.versions.same_change` for a file read as ``held`` at ``version``,
    whose change would write ``data`` over ``seen`` (the version it rests on; None: the
    file seen absent, or no read): the store is asked who wrote it only when that decides."""
    equal = held == data
    moved = seen is None or version != seen
    ours = written_by(backend, key, version, owner) if equal and moved else None
    return same_change(equal=equal, moved=moved, observed=observed, ours=ours,
                       answered=answered)


def cause_text(failure: BaseException, shown: str, action: str) -> str:
    """A failure's sentence without the "nothing was changed" a storage error adds: the
    failed call may have taken effect."""
    if isinstance(failure, Conflict):
        return render(Reason.step_refused, shown, {"action": action})
    if isinstance(failure, FsError):
        if failure.reason in (Reason.storage_failed, Reason.store_busy) and {
                "action", "detail"} <= failure.details.keys():
            return render(Reason.step_failed, failure.path, failure.details)
        return failure.message
    return render(Reason.step_failed, shown, {"action": action, "detail": repr(failure)})
