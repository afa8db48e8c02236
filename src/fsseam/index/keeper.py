"""The content index of one workspace: its shards, the entries fsseam's own writes leave,
and the reserved folder it lives in.

Registered on the workspace's gate: it hides its folder from every listing and refuses it
to every tool (as the observation store's folder is), and on ``fs/written`` keeps the new
text of the file in memory, keyed by the version the write made. A write costs nothing
more: the 4-grams are worked out by the next grep that lists the file at that version, and
stored with that grep's shard writes.

Shards are read and written with the store's plain objects (one request each, the
observation shards' path) and written under compare-and-swap: on a conflict the other
writer's shard is read again, this grep's entries laid over it, and the write tried again,
a few times; then the entries are dropped (the next grep reads those files again). A grep
never fails because the index could not be read or written.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import TypeVar

from ..backends.base import Backend
from ..errors import Conflict, ErrorCode, FsError
from ..events import DeletedEvent, WrittenEvent
from ..gate import hookimpl
from ..messages import Reason
from ..policy.reserved import ReservedKeys
from ..text import SNIFF_BYTES
from ..versions import CreateOnly, IfMatch, Precondition, Version
from .grams import Bitmap, bitmap, grams, normalized
from .shards import IndexShard, Kind, decode, encode, object_name

__all__ = ["FOLDER", "PLUGIN_NAME", "ContentIndex", "Loaded", "Record", "ReservedIndex",
           "describe"]

FOLDER = ".fsseam-index"
PLUGIN_NAME = "fsseam-content-index"
FETCH_CONCURRENCY = 32
RETRIES = 4
PENDING_MAX = 4096
"""Written files kept for the next grep; beyond it the oldest are dropped (and read)."""
PENDING_MAX_CHARS = 64 << 20

Record = tuple[str, Kind, Bitmap | None]
T = TypeVar("T")
_log = logging.getLogger(__name__)


def describe(data: bytes) -> tuple[Kind, Bitmap | None]:
    """What grep makes of ``data``: its kind and, for text, its 4-gram bitmap."""
    if data.find(b"\x00", 0, SNIFF_BYTES) >= 0:
        return Kind.BINARY, None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return Kind.NOT_UTF8, None
    return Kind.TEXT, bitmap(grams(normalized(data)))


def parallel(calls: list[Callable[[], T]]) -> list[T]:
    """Run ``calls`` at once on a bounded pool (each waits on one request)."""
    if len(calls) <= 1:
        return [c() for c in calls]
    with ThreadPoolExecutor(min(FETCH_CONCURRENCY, len(calls)),
                            thread_name_prefix="fsseam-index") as pool:
        return list(pool.map(lambda c: c(), calls))


class Loaded:
    """One shard as this grep found it, and what the grep adds to it."""

    def __init__(self, prefix: str, version: Version | None, shard: IndexShard | None) -> None:
        self.prefix, self.version = prefix, version
        self.files: dict[str, Record] = dict(shard.files) if shard is not None else {}
        self.added: dict[str, Record] = {}
        self.gone: set[str] = set()
        self.seen: set[str] = set()
        """The names the walk listed in this shard's directory."""

    def name(self, key: str) -> str:
        return key[len(self.prefix) + 1:] if self.prefix else key

    def covered_by(self, key: str) -> bool:
        """Whether a walk of ``key`` lists every file this shard may hold."""
        p = self.prefix
        return not key or p == key or p.startswith(key + "/")


class ReservedIndex(ReservedKeys):
    """The index's folder, hidden and refused. Registered wherever an index can be kept,
    with ``content_index=False`` too: a workspace that does not use the index another one
    wrote still shows the agent nothing of it."""

    def __repr__(self) -> str:
        return f"ReservedIndex({self.prefix!r})"

    def _refuse(self, key: str, path: str) -> None:
        if self.reserved(key):
            raise FsError(ErrorCode.FS_PERMISSION_DENIED, path=path,
                          reason=Reason.reserved_index)


class ContentIndex(ReservedIndex):
    """The index of one workspace root (see the module's text)."""

    def __init__(self, backend: Backend, folder: str = FOLDER, *, persist: bool = True
                 ) -> None:
        super().__init__(folder)
        self.backend = backend
        self.persist = persist
        self._lock = threading.Lock()
        self._pending: dict[str, tuple[str, str]] = {}
        self._pending_chars = 0

    def __repr__(self) -> str:
        return f"ContentIndex({self.prefix!r})"

    # -- fsseam's own writes -----------------------------------------------------------
    @hookimpl
    def fs_written(self, event: WrittenEvent) -> None:
        text = event.new_text()
        with self._lock:
            self._forget(event.key)
            if text is None or "\x00" in text or len(text) > PENDING_MAX_CHARS // 16:
                return
            while self._pending and (len(self._pending) >= PENDING_MAX
                                     or self._pending_chars + len(text) > PENDING_MAX_CHARS):
                self._forget(next(iter(self._pending)))
            self._pending[event.key] = (str(event.version), text)
            self._pending_chars += len(text)

    @hookimpl
    def fs_deleted(self, event: DeletedEvent) -> None:
        with self._lock:
            self._forget(event.key)

    def _forget(self, key: str) -> None:
        old = self._pending.pop(key, None)
        if old is not None:
            self._pending_chars -= len(old[1])

    def written(self, key: str, version: str) -> Record | None:
        """The record of fsseam's own write of ``key`` at ``version``, if it is kept."""
        with self._lock:
            kept = self._pending.get(key)
        if kept is None or kept[0] != version:
            return None
        return (version, Kind.TEXT, bitmap(grams(kept[1].encode("utf-8"))))

    def settled(self, keys: Iterable[str]) -> None:
        """Drop the kept writes of ``keys``, now stored in shards."""
        with self._lock:
            for key in keys:
                self._forget(key)

    # -- shards ------------------------------------------------------------------------
    def _key(self, prefix: str) -> str:
        return f"{self.prefix}/{object_name(prefix)}"

    def _read(self, prefix: str) -> Loaded:
        key = self._key(prefix)
        try:
            blob = self.backend.get_plain(key)
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND:
                _log.warning("content index shard %s unreadable: %s", key, e)
            blob = None
        if blob is None:
            return Loaded(prefix, None, None)
        shard = decode(blob.data, prefix)
        if shard is None:
            # Worth an operator's look: anyone who can write the folder can plant a shard.
            _log.warning("content index shard %s is damaged, of another format or too "
                         "large inflated (%d bytes); rebuilt", key, len(blob.data))
        return Loaded(prefix, blob.version, shard)

    def load(self, prefixes: Iterable[str]) -> dict[str, Loaded]:
        """The shards of ``prefixes``, fetched at once."""
        wanted = sorted(set(prefixes))
        got = parallel([partial(self._read, p) for p in wanted])
        return dict(zip(wanted, got, strict=True))

    def save(self, shards: Mapping[str, Loaded]) -> None:
        """Store the shards this grep added to, at once; never raises."""
        if not self.persist:
            return  # a read-only workspace changes nothing in the store, its index neither
        dirty = [s for s in shards.values() if s.added or s.gone]
        parallel([partial(self._save, s) for s in dirty])

    def _write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        return self.backend.put_plain(key, data, precondition)

    def _save(self, loaded: Loaded) -> None:
        key = self._key(loaded.prefix)
        files = {k: v for k, v in loaded.files.items() if k not in loaded.gone}
        files.update(loaded.added)
        version = loaded.version
        for _ in range(RETRIES):
            precondition = IfMatch(version) if version is not None else CreateOnly()
            try:
                self._write(key, encode(IndexShard(loaded.prefix, files)), precondition)
                return
            except Conflict:
                # Another writer stored the shard first: keep what it holds, lay this
                # grep's entries over it (both describe versions that were real).
                theirs = self._read(loaded.prefix)
                version = theirs.version
                files = {**theirs.files, **loaded.added}
            except FsError as e:
                _log.warning("content index shard %s not saved: %s", key, e)
                return
        _log.info("content index shard %s not saved: %d conflicts", key, RETRIES)
