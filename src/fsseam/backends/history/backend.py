"""History kept by fsseam, for storage that keeps none (local disk, memory, generic).

S3 versioned buckets and GCS object versioning keep every version a write replaces;
local files and memory keep nothing. ``Workspace(url, history=History(...))`` wraps the
workspace's backend in :class:`KeptHistoryBackend`, which gives it ``versions`` and
``read_version`` from copies it keeps itself:

- Before a write or delete through fsseam replaces a version, that version's bytes are in
  the history store (durably, on disk: written to a temp file, fsynced, renamed), and the
  new bytes are copied there before they are published too. A crash at any point leaves
  every replaced version kept; at worst an unreferenced copy, removed later.
- Each file's index says, per version, when fsseam wrote it and for which owner.
- The store lies outside the workspace tree (a directory outside a local root, or process
  memory), so no tool ever lists, globs, greps or reads it as a workspace file.
- It is bounded: ``max_versions`` per file and ``max_bytes`` in all; the oldest copies go
  first, and a version larger than ``max_bytes`` is not kept at all.

Writers that bypass fsseam (an editor, ``git checkout``) are not seen: the version they
replace is kept only if fsseam kept it earlier. Everything else is the inner backend's.
"""

from __future__ import annotations

import builtins
import hashlib
import os
import sys
import threading
import time
from collections.abc import Callable, Hashable
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from ...errors import Conflict, ErrorCode, FsError
from ...messages import Part, Reason
from ...paths import display
from ...versions import Capabilities, CreateOnly, IfMatch, Overwrite, Precondition, Version
from ..base import ANY_VERSION, Backend, Blob, VersionInfo, Wrapper, WriteMeta
from ..digests import DIGEST_KIND
from .stores import HistoryStore, KeptEntry, MemoryHistoryStore

__all__ = [
    "History",
    "HistoryStore",
    "KeptEntry",
    "KeptHistoryBackend",
    "MemoryHistoryStore",
    "keep_history",
    "local_root",
]

DAMAGED = Reason.history_index_damaged


class Budget:
    """What the copies of one history store may hold, and the eviction of the oldest."""

    def __init__(self, store: HistoryStore, max_versions: int, max_bytes: int,
                 entries: Callable[[str], builtins.list[KeptEntry]]) -> None:
        self.store = store
        self.max_versions = max_versions
        self.max_bytes = max_bytes
        # A file's index for a change made with its lock held (a damaged one set aside).
        self._entries = entries
        self._used: int | None = None
        self._lock = threading.Lock()

    def trim(self, key: str, entries: builtins.list[KeptEntry]) -> None:
        """At most ``max_versions`` entries, and no copy that no entry names."""
        del entries[: max(0, len(entries) - self.max_versions)]
        self.store.save(key, entries)
        named = {e.sha256 for e in entries if e.sha256 is not None}
        for sha, size in self.store.copies(key).items():
            if sha not in named:
                self.store.drop(key, sha)
                self.grew(-size)

    def grew(self, n: int) -> None:
        """Count ``n`` more bytes kept (a first count scans the store). Called with a
        file's lock held, so it never evicts: :meth:`enforce` does, after the lock."""
        with self._lock:
            self._used = self._scan_usage() if self._used is None else self._used + n

    def enforce(self) -> None:
        with self._lock:
            over = self._used is not None and self._used > self.max_bytes
        if over:
            self.evict()

    def _scan_usage(self) -> int:
        return sum(sum(self.store.copies(k).values()) for k in self.store.files())

    def evict(self) -> None:
        """Drop the oldest copies, over every file, until the total fits ``max_bytes``.
        A copy's age is that of the newest entry naming it (a found-in-place version,
        which has no time, counts as oldest). Files are locked one at a time."""
        candidates: builtins.list[tuple[float, str, str, int]] = []
        total = 0
        for key in self.store.files():
            sizes = self.store.copies(key)
            total += sum(sizes.values())
            newest: dict[str, float] = {}
            try:
                listed = self.store.entries(key)
            except FsError as err:
                if err.reason != DAMAGED:
                    raise
                continue  # its copies wait for the file's next change to set the index aside
            for e in listed:
                if e.sha256 in sizes:
                    newest[e.sha256] = max(newest.get(e.sha256, 0.0), e.time or 0.0)
            candidates += [(newest.get(sha, 0.0), key, sha, size) for sha, size in sizes.items()]
        candidates.sort()
        doomed: dict[str, set[str]] = {}
        for _, key, sha, size in candidates:
            if total <= self.max_bytes:
                break
            doomed.setdefault(key, set()).add(sha)
            total -= size
        for key, shas in doomed.items():
            with self.store.lock(key):
                entries = [e for e in self._entries(key) if e.sha256 not in shas]
                self.store.save(key, entries)
                for sha in shas:
                    self.store.drop(key, sha)
        with self._lock:
            self._used = total


MiB = 1 << 20
RETRIES = 5
T = TypeVar("T")


class History(BaseModel):
    """Opt-in history for storage that keeps no versions of its own (local, memory,
    generic): ``Workspace(url, history=History())``."""

    model_config = ConfigDict(frozen=True)

    max_versions: int = Field(default=20, ge=1)
    """Versions kept per file (deletions count); older ones are dropped first."""
    max_bytes: int = Field(default=256 * MiB, ge=1)
    """Bytes of kept copies in all, over every file of the workspace; the oldest copies
    are dropped first."""
    path: str | None = None
    """A directory for the copies, outside the workspace root. None: for a local
    workspace, ``$XDG_CACHE_HOME/fsseam/history/<digest of the root>`` (``~/.cache`` when
    unset); for any other storage, this process's memory."""


_MEMORY_STORES: dict[Hashable, MemoryHistoryStore] = {}
_MEMORY_GUARD = threading.Lock()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _now() -> float:
    return time.time()


class KeptHistoryBackend(Wrapper):
    """A backend with history kept by fsseam: everything is the inner backend's, except
    that replaced versions are copied first, and ``versions`` / ``read_version`` answer
    from those copies."""

    def __init__(self, inner: Backend, store: HistoryStore, history: History) -> None:
        super().__init__(inner)
        self.store = store
        self.history = history
        note = inner.capabilities.note
        kept = (
            f"history kept by fsseam in {store.where} (up to {history.max_versions} versions "
            f"a file, {history.max_bytes} bytes in all)"
        )
        self._adds = {"history": True, "write_meta": True}
        self.capabilities = inner.capabilities.model_copy(
            update={**self._adds, "note": f"{note}; {kept}" if note else kept}
        )
        self.budget = Budget(store, history.max_versions, history.max_bytes, self._entries)

    def __repr__(self) -> str:
        return f"KeptHistoryBackend({self.inner!r}, {self.store.where!r})"

    def capabilities_for(self, key: str) -> Capabilities:
        """The inner store's guarantees for ``key``, with this history added."""
        return self.inner.capabilities_for(key).model_copy(update=self._adds)

    def read_version_id(self, key: str, version_id: str) -> Blob:
        """Not the inner store's: the versions kept here are copies, which no id of the
        store's names (FS_NOT_FOUND, as for a store that names versions no other way)."""
        return Backend.read_version_id(self, key, version_id)

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> KeptHistoryBackend:
        raise TypeError("KeptHistoryBackend wraps an open backend: use keep_history()")

    # -- keeping (reads, paths and listings are the inner backend's: Wrapper's) --------
    def _entries(self, key: str) -> builtins.list[KeptEntry]:
        """The file's index, for a change made with its lock held. A damaged index must
        not stop the change (the file itself is fine): it is set aside and a new one
        started from the copies still kept, which a digest store can name again (a copy's
        name is the digest of its bytes, so it is that version). They come back without
        owner or time, like versions found in place."""
        try:
            return self.store.entries(key)
        except FsError as e:
            if e.reason != DAMAGED:
                raise
        shas = self.store.set_aside(key)
        entries: builtins.list[KeptEntry] = []
        if self.inner.capabilities.version_kind == DIGEST_KIND:
            entries = [KeptEntry(kind=DIGEST_KIND, value=sha, sha256=sha,
                                 size=self.store.copies(key).get(sha)) for sha in shas]
        self.store.save(key, entries)
        return entries

    def _current(self, key: str) -> Blob | None:
        try:
            return self.inner.read(key)
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise

    def _keep(self, key: str, entries: builtins.list[KeptEntry], blob: Blob) -> None:
        """Make sure the version ``blob`` holds is kept: its copy, and an index entry (one
        found in place, by no known owner, when fsseam did not write it)."""
        sha = _sha(blob.data)
        if not self.store.has(key, sha):
            self.store.put(key, sha, blob.data)
            self.budget.grew(len(blob.data))
        for e in reversed(entries):
            if e.is_version(blob.version):
                if e.sha256 is None:
                    e.sha256 = sha
                    self.store.save(key, entries)
                return
        entries.append(KeptEntry(kind=blob.version.kind, value=blob.version.value, sha256=sha,
                                 size=len(blob.data)))
        self.store.save(key, entries)

    def _keep_expected(self, key: str, entries: builtins.list[KeptEntry], version: Version) -> None:
        """Before replacing ``version``: keep it, unless a copy is kept already. If the file
        is no longer at it, the write about to be made fails its precondition anyway."""
        for e in reversed(entries):
            if e.is_version(version) and e.sha256 is not None and self.store.has(key, e.sha256):
                return
        blob = self._current(key)
        if blob is not None and blob.version == version:
            self._keep(key, entries, blob)

    def _replace(
        self, key: str, entries: builtins.list[KeptEntry], pre: Precondition,
        act: Callable[[Precondition], T],
    ) -> T:
        """Run ``act(precondition)`` after keeping what it replaces. ``Overwrite`` (whatever
        is there) becomes a compare-and-swap on the version just kept, retried, so the
        version replaced is always the one kept."""
        if isinstance(pre, IfMatch):
            self._keep_expected(key, entries, pre.version)
            return act(pre)
        if not isinstance(pre, Overwrite):
            return act(pre)
        for _ in range(RETRIES):
            blob = self._current(key)
            if blob is not None:
                self._keep(key, entries, blob)
            try:
                return act(CreateOnly() if blob is None else IfMatch(blob.version))
            except Conflict:
                continue
        raise FsError(
            ErrorCode.FS_BACKEND, path=display(key), reason=Reason.kept_changing,
            details={"doing": Part("_kept_copying")},
        )

    def write(
        self, key: str, data: bytes, precondition: Precondition, *,
        meta: WriteMeta | None = None,
    ) -> Version:
        sha = _sha(data)
        with self.store.lock(key):
            entries = self._entries(key)
            fresh = not self.store.has(key, sha)
            if fresh:
                # The new bytes are kept before they are published: an external writer
                # replacing them later cannot take them out of the history.
                self.store.put(key, sha, data)
                self.budget.grew(len(data))
            try:
                version = self._replace(key, entries, precondition,
                                        lambda pre: self.inner.write(key, data, pre))
            except BaseException:
                if fresh and not any(e.sha256 == sha for e in entries):
                    self.store.drop(key, sha)
                    self.budget.grew(-len(data))
                raise
            entries.append(KeptEntry(kind=version.kind, value=version.value, sha256=sha,
                                     size=len(data), time=_now(),
                                     owner=_author(entries, version, meta)))
            self.budget.trim(key, entries)
        self.budget.enforce()
        return version

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        with self.store.lock(key):
            entries = self._entries(key)
            if isinstance(precondition, Overwrite) and self._current(key) is None:
                self.inner.delete(key, precondition)  # says what is missing, in its words
            self._replace(key, entries, precondition,
                          lambda pre: self.inner.delete(key, pre))
            entries.append(KeptEntry(kind=self.inner.capabilities.version_kind,
                                     time=_now(), deleted=True,
                                     owner=meta.owner if meta is not None else None))
            self.budget.trim(key, entries)
        self.budget.enforce()

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        with self.store.lock(dst):
            version = self.inner.copy(src, dst, source)
            entries = self._entries(dst)
            # No copy of the bytes yet: the first write over it keeps them.
            entries.append(KeptEntry(kind=version.kind, value=version.value, time=_now()))
            self.budget.trim(dst, entries)
        return version

    # -- history -------------------------------------------------------------------
    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        entries = self.store.entries(key)
        current = self._current(key)
        out: builtins.list[VersionInfo] = []
        skip = -1
        if current is not None:
            found = next((i for i in range(len(entries) - 1, -1, -1)
                          if entries[i].is_version(current.version)), None)
            e = entries[found] if found is not None else None
            skip = found if found is not None else -1
            out.append(VersionInfo(
                version=current.version, size=len(current.data), latest=True,
                modified=_time(e.time) if e else None, owner=e.owner if e else None,
            ))
        copies = self.store.copies(key)
        for i in range(len(entries) - 1, -1, -1):
            e = entries[i]
            if i == skip:
                continue
            if e.deleted:
                out.append(VersionInfo(version=Version(kind=e.kind, value=""), deleted=True,
                                       modified=_time(e.time), owner=e.owner))
            elif e.sha256 is not None and e.sha256 in copies:
                out.append(VersionInfo(version=e.version, size=e.size,
                                       modified=_time(e.time), owner=e.owner))
        if not out:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason=Reason.not_found)
        return out[:limit] if limit is not None else out

    def read_version(self, key: str, version: Version) -> Blob:
        for e in reversed(self.store.entries(key)):
            if e.is_version(version) and e.sha256 is not None:
                data = self.store.get(key, e.sha256)
                if data is not None and _sha(data) == e.sha256:
                    return Blob(data=data, version=version)
        current = self._current(key)
        if current is not None and current.version == version:
            return current
        raise FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason=Reason.kept_version_missing,
                      details={"version": str(version)})


def _author(entries: builtins.list[KeptEntry], version: Version, meta: WriteMeta | None
            ) -> str | None:
    """Who wrote these bytes first: versions are digests, so bytes written again (an undo,
    a restore) are a version the index may name already, and keep its owner (None: found
    in place, by no known owner). Bytes new to the index are the writer's."""
    for e in entries:
        if e.is_version(version):
            return e.owner
    return meta.owner if meta is not None else None


def _time(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def local_root(backend: Backend) -> str | None:
    """The root directory of a local backend (never imported here: it needs ``fcntl``)."""
    local = sys.modules.get("fsseam.backends.local")
    if local is not None and isinstance(backend, local.LocalBackend):
        return str(backend.root)
    return None


def default_directory(root: str) -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    digest = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return os.path.join(base, "fsseam", "history", digest)


def keep_history(backend: Backend, history: History) -> KeptHistoryBackend:
    """``backend`` with history kept by fsseam (see :class:`History` for where)."""
    if not isinstance(history, History):
        # A path or True passed by mistake would otherwise fail deep inside, unexplained.
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.history_not_history,
                      details={"given": repr(history)})
    if backend.capabilities.history:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.history_native)
    root = local_root(backend)
    path = history.path
    if path is None and root is not None:
        path = default_directory(root)
    if path is None:
        with _MEMORY_GUARD:
            store: HistoryStore = _MEMORY_STORES.setdefault(backend.storage_id(),
                                                             MemoryHistoryStore())
        return KeptHistoryBackend(backend, store, history)
    real = os.path.realpath(path)
    if root is not None and (real == root or real.startswith(root.rstrip(os.sep) + os.sep)):
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.history_inside_root,
                      details={"where": path})
    from .directory import DirectoryHistoryStore
    sync = backend.durability != "rename"
    return KeptHistoryBackend(backend, DirectoryHistoryStore(real, sync=sync), history)
