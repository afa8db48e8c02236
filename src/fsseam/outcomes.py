"""Structured outcomes of ctx.fs operations: facts, from which ``render`` derives text."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from .diff import LazyDiff
from .versions import Version

__all__ = [
    "EditOutcome",
    "ListEntry",
    "ListOutcome",
    "ReadOutcome",
    "StatOutcome",
    "WriteOutcome",
]


class _Outcome(BaseModel):
    model_config = ConfigDict(frozen=True)


class ReadOutcome(_Outcome):
    kind: Literal["read"] = "read"
    path: str
    lines: list[str]
    offset: int
    """1-based number of the first returned line."""
    returned: int
    total: int | None
    """Lines in the file; None when the read stopped early on a large remote object."""
    version: Version
    partial: bool
    """True unless every line of the file was returned."""
    cut: dict[int, int] = {}
    """Lines returned shortened (read with ``max_line_chars``): 1-based line number -> the
    line's full length in characters."""


class WriteOutcome(LazyDiff, _Outcome):
    kind: Literal["write"] = "write"
    path: str
    operation: Literal["write", "create"]
    created: bool
    version: Version
    size: int
    lines: int


class EditOutcome(LazyDiff, _Outcome):
    kind: Literal["edit"] = "edit"
    path: str
    operation: Literal["replace", "insert"]
    replacements: int
    replace_all: bool = False
    version: Version
    first_line: int
    """1-based line where the (first) change starts in the new file."""
    snippet: list[str]
    """A few lines of the new file around the (first) change."""
    snippet_start: int


class StatOutcome(_Outcome):
    kind: Literal["stat"] = "stat"
    path: str
    type: Literal["file", "directory"]
    size: int | None = None


class ListEntry(_Outcome):
    path: str
    type: Literal["file", "directory", "symlink"]
    size: int | None = None
    depth: int
    target: str | None = None
    """For a symlink: the path it points to, when that lies inside the workspace."""


class ListOutcome(_Outcome):
    kind: Literal["list"] = "list"
    path: str
    entries: list[ListEntry]
    omitted: int = 0
    """Entries left out by the filter (hidden, dependency and cache folders)."""
