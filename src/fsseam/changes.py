"""Changes of several files at once: what to change, and what a failed call left.

A change is a sequence of :data:`FileChange` (:class:`Create`, :class:`Update` with an
optional move, :class:`Delete`), built by the tools and the patch parser.
:func:`fsseam.seam.changing.change` validates every part of it against the versions the
agent observed and computes every new content before anything is written; then the seam's
one pipeline (:func:`fsseam.seam.pipeline.run`) commits the plan it built, all or nothing
(see :mod:`fsseam.seam.commit`).

The helpers here say what a failed storage call may have done (:func:`ambiguous`,
:func:`gone_already`, :func:`landed`) and name it without claiming nothing changed
(:func:`cause_text`). Nothing here knows a tool, or calls a change of the backend.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from .backends.base import Backend
from .errors import Conflict, ConflictKind, ErrorCode, FsError
from .messages import Reason, render
from .text import TextDoc
from .versions import Version

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
    "landed",
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

Outcome = Literal["done", "not_done", "unknown"]


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
