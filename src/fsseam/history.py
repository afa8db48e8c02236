"""History as the tools see it: the outcomes of ``history``, ``restore`` and ``undo``, the
short version ids an agent passes back, and who wrote which version.

Pure data and lookups; the seam (:mod:`fsseam.seam.history`) does the storage calls.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict

from .backends.base import VersionInfo
from .diff import LazyDiff
from .errors import ErrorCode, FsError
from .messages import Reason
from .versions import Version

__all__ = [
    "Authors",
    "HistoryEntry",
    "HistoryOutcome",
    "RestoreOutcome",
    "match_version",
    "version_id",
]

MIN_PREFIX = 6
"""The shortest prefix of a version id that ``restore`` accepts (unique among the kept)."""


def version_id(version: Version) -> str:
    """The id an agent sees and passes back: the store's own id of a kept version (an S3
    VersionId), else the version's value (a GCS generation; 12 hex digits of a digest)."""
    if version.detail and version.detail != "null":
        return version.detail
    value = version.value.strip('"')
    return value[:12] if version.kind == "sha256" else value


class HistoryEntry(BaseModel):
    model_config = ConfigDict(frozen=True)
    id: str
    """What ``restore`` takes (empty for a deletion)."""
    version: Version
    size: int | None = None
    modified: datetime | None = None
    owner: str | None = None
    """Who wrote it through fsseam, where that is known without extra requests."""
    latest: bool = False
    deleted: bool = False

    @classmethod
    def of(cls, info: VersionInfo, owner: str | None = None) -> HistoryEntry:
        return cls(
            id="" if info.deleted else version_id(info.version),
            version=info.version, size=info.size, modified=info.modified,
            owner=info.owner or owner, latest=info.latest, deleted=info.deleted,
        )


class HistoryOutcome(BaseModel):
    model_config = ConfigDict(frozen=True)
    kind: Literal["history"] = "history"
    path: str
    entries: list[HistoryEntry]
    """Newest first."""
    limit: int
    you: str
    """The owner who asked (to mark the versions it wrote)."""


class RestoreOutcome(LazyDiff, BaseModel):
    """An older version's bytes written back (``restore``), or an owner's last change taken
    back (``undo``)."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["restore"] = "restore"
    path: str
    operation: Literal["restore", "undo"]
    restored: str | None
    """The id of the version brought back (None when an undo deleted a file it created)."""
    version: Version | None
    """The file's version now (None when the undo deleted the file)."""
    replaced: Version | None = None
    created: bool = False
    """The file did not exist (a restore after a deletion)."""
    deleted: bool = False
    """The undo took back the change that created the file: it was deleted."""
    unchanged: bool = False
    """The file already held exactly these bytes: nothing was written."""
    size: int = 0
    lines: list[str] | None = None
    """The text of the file now, when it is text (views render from it)."""


def match_version(token: str, kept: Sequence[VersionInfo], path: str) -> VersionInfo:
    """The kept version ``token`` names: its id (or ``kind:value``), or a unique prefix of
    at least MIN_PREFIX characters. Several kept versions with equal content are one
    (the newest is taken)."""
    t = token.strip().strip('"')
    exact = [k for k in kept if t and t in (version_id(k.version), str(k.version),
                                            k.version.value.strip('"'))]
    found = exact or [
        k for k in kept if len(t) >= MIN_PREFIX and not k.deleted
        and (version_id(k.version).startswith(t) or k.version.value.startswith(t))
    ]
    if not found:
        raise FsError(ErrorCode.FS_NOT_FOUND, path=path, reason=Reason.version_unknown,
                      details={"version": token})
    if len({k.version for k in found}) > 1:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=path, reason=Reason.version_ambiguous,
                      details={"version": token, "count": len(found)})
    if found[0].deleted:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=path, reason=Reason.version_is_deletion,
                      details={"version": token})
    return found[0]


class Authors:
    """Which owner wrote which version, as this workspace saw its own writes: history on a
    store whose listing names no writer (S3) still names these, at no cost. Bounded. The
    first owner noted for a version stays: where versions are digests, bytes written again
    (an undo, a restore) are the same version, and their author is who wrote them first."""

    def __init__(self, size: int = 4096) -> None:
        self._size = size
        self._items: OrderedDict[tuple[str, str, str, str | None], str] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(key: str, version: Version) -> tuple[str, str, str, str | None]:
        return (key, version.kind, version.value, version.detail)

    def note(self, key: str, version: Version, owner: str) -> None:
        with self._lock:
            self._items.setdefault(self._key(key, version), owner)
            self._items.move_to_end(self._key(key, version))
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def owner(self, key: str, version: Version) -> str | None:
        with self._lock:
            return self._items.get(self._key(key, version))
