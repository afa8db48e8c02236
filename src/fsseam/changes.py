"""Changes of several files at once: what to change.

A change is a sequence of :data:`FileChange` (:class:`Create`, :class:`Update` with an
optional move, :class:`Delete`), built by the tools and the patch parser.
:func:`fsseam.seam.changing.change` validates every part of it against the versions the
agent observed and computes every new content before anything is written; then
:func:`fsseam.seam.commit.run` commits the plan it built, all or nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .text import TextDoc

__all__ = ["Create", "Delete", "DocEdit", "FileChange", "Update"]

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
