"""Content-digest versions: the sha256 version of bytes, the bytes a backend last read or
wrote beside their digests, the precondition check each backend makes against the digest
of what is there (local, memory and generic backends), and the versions of local files.

Why a digest and not (mtime, size, inode) for a local file: all three repeat (one clock
tick for many writes, same-size rewrites, inode numbers reused at once after
``os.replace``). The stat cache only spares re-hashing a file whose stat signature (which
includes ctime, so ``os.utime`` cannot hide a change) is unchanged and was already old when
it was hashed, as git treats "racy" index entries. The same signature, taken again after a
read, says whether the file changed while it was read (which every reader and the
compare-and-swap ask).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator

from ..errors import Conflict, ErrorCode, FsError
from ..messages import Reason
from ..oserrors import map_os_error
from ..paths import display
from ..versions import CreateOnly, IfMatch, Precondition, Version
from .base import Blob

__all__ = [
    "DIGEST_KIND", "HASH_CHUNK", "KNOWN_BUDGET", "RACY_WINDOW_NS", "Digests", "KnownDigests",
    "LocalStream", "Signature", "changed_while_read", "check_precondition", "digest_version",
    "hasher", "signature", "version_of",
]

DIGEST_KIND = "sha256"
KNOWN_BUDGET = 16 << 20
"""Bytes of content a backend keeps beside their digests (see :class:`KnownDigests`)."""


def digest_version(data: bytes) -> Version:
    return Version(kind=DIGEST_KIND, value=hashlib.sha256(data).hexdigest())


def hasher() -> hashlib._Hash:
    return hashlib.sha256()


def version_of(h: hashlib._Hash) -> Version:
    return Version(kind=DIGEST_KIND, value=h.hexdigest())


class KnownDigests:
    """The last bytes a backend read or wrote at each key, with their digest.

    The version of bytes equal to the ones kept is their digest: one comparison (a memcmp,
    about 20 times cheaper than sha256) instead of a second hash of the same content. So an
    edit hashes once, the new bytes: its read and the re-check under the lock find the bytes
    that the previous write (or read) left, compared byte for byte. Different bytes are
    hashed as before: the version is always the digest of exactly the bytes given.

    A bounded LRU: at most ``budget`` bytes in all, none over a quarter of it (a bigger
    file is hashed each time, which its I/O dwarfs anyway).
    """

    def __init__(self, budget: int = KNOWN_BUDGET) -> None:
        self._budget = budget
        self._max_item = budget // 4
        self._used = 0
        self._items: OrderedDict[str, tuple[bytes, Version]] = OrderedDict()
        self._lock = threading.Lock()

    def keeps(self, size: int) -> bool:
        """Whether bytes of this size are kept (and worth reading whole to compare)."""
        return size <= self._max_item

    def version(self, key: str, data: bytes) -> Version:
        """The digest version of ``data``, read or about to be written at ``key``."""
        with self._lock:
            hit = self._items.get(key)
        version = hit[1] if hit is not None and hit[0] == data else digest_version(data)
        self.remember(key, data, version)
        return version

    def remember(self, key: str, data: bytes, version: Version) -> None:
        if len(data) > self._max_item:
            self.forget(key)
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._used -= len(old[0])
            self._items[key] = (data, version)
            self._used += len(data)
            while self._used > self._budget:
                _, (dropped, _) = self._items.popitem(last=False)
                self._used -= len(dropped)

    def forget(self, key: str) -> None:
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._used -= len(old[0])


def check_precondition(
    key: str, precondition: Precondition, current: Version | None
) -> None:
    """Raise Conflict unless ``precondition`` holds against ``current`` (None = absent)."""
    if isinstance(precondition, CreateOnly) and current is not None:
        raise Conflict("exists", path=display(key))
    if isinstance(precondition, IfMatch):
        if current is None:
            raise Conflict("missing", path=display(key))
        if current != precondition.version:
            raise Conflict("mismatch", path=display(key))


# -- local files ------------------------------------------------------------

HASH_CHUNK = 1 << 20
"""The read size of a file hashed as it passes (never held whole in memory)."""

# Files modified this recently before they were hashed are not trusted from the cache:
# coarse clocks and FAT/NFS stamp several writes within one tick with one mtime.
RACY_WINDOW_NS = 2_000_000_000  # module default; tests may lower it

Signature = tuple[int, int, int, int, int]
"""A file's stat signature: device, inode, size, mtime and ctime (ctime, so that
``os.utime`` cannot hide a change)."""


def signature(st: os.stat_result) -> Signature:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def changed_while_read(key: str) -> FsError:
    return FsError(ErrorCode.FS_STALE, path=display(key), reason=Reason.changed_while_read)


class _StatCache:
    def __init__(self) -> None:
        self._entries: dict[str, tuple[Signature, Version]] = {}
        self._lock = threading.Lock()

    def get(self, key: str, st: os.stat_result) -> Version | None:
        with self._lock:
            hit = self._entries.get(key)
        if hit is not None and hit[0] == signature(st):
            return hit[1]
        return None

    def put(self, key: str, st: os.stat_result, version: Version, hashed_at_ns: int) -> None:
        racy = max(st.st_mtime_ns, st.st_ctime_ns) >= hashed_at_ns - RACY_WINDOW_NS
        with self._lock:
            if racy:
                self._entries.pop(key, None)
            else:
                self._entries[key] = (signature(st), version)


def _at_end(st: os.stat_result, seen: int, chunk: bytes, want: int) -> bool:
    """Whether a read that brought the total to ``seen`` ended the file: a regular file
    answers short only at its end, and the file had ``st.st_size`` bytes. The read that
    would return nothing is one system call a read of a file no longer makes; a file that
    grew returns more than its size (read on), and any change meanwhile shows in the
    ``fstat`` signature checked after the bytes, as before."""
    return seen == st.st_size and len(chunk) < want


def _read_all(fd: int, st: os.stat_result) -> list[bytes]:
    """All bytes of an open regular file of ``st``, each read asking for all of it and more
    (``os.read`` allocates what it is asked for)."""
    parts: list[bytes] = []
    seen = 0
    while True:
        want = max(st.st_size, 1 << 16) + 1
        chunk = os.read(fd, want)
        if not chunk:
            break
        parts.append(chunk)
        seen += len(chunk)
        if _at_end(st, seen, chunk, want):
            break
    return parts


class LocalStream:
    """A chunked read of one open file (``open_read``): its version from the stat cache at
    once, or from its bytes when the last chunk is read."""

    def __init__(self, fd: int, st: os.stat_result, cached: Version | None, chunk_size: int,
                 key: str, on_done: Callable[[os.stat_result, Version, int], None],
                 known: KnownDigests) -> None:
        self._fd = fd
        self._st = st
        self._chunk_size = chunk_size
        self._version = cached
        self._key = key
        self._on_done = on_done
        self._known = known
        self.size: int | None = st.st_size

    @property
    def version(self) -> Version | None:
        return self._version

    def chunks(self) -> Iterator[bytes]:
        # No version from the stat cache: a file small enough to keep is compared whole with
        # the bytes last read or written here (digested only if they differ); a bigger one
        # is hashed as it passes.
        kept: list[bytes] | None = None
        h = None
        if self._version is None:
            if self._known.keeps(self._st.st_size):
                kept = []
            else:
                h = hasher()
        started = time.time_ns()
        seen = 0
        sig = signature(self._st)
        while True:
            # os.read allocates the full request up front: ask for what the file holds (plus
            # slack for growth), not a 64 MiB edit-sized chunk for an 80 KB file.
            want = min(self._chunk_size, max(self._st.st_size - seen, 0) + (1 << 16))
            try:
                chunk = os.read(self._fd, want)
                unchanged = self._version is None or signature(os.fstat(self._fd)) == sig
            except OSError as e:
                raise map_os_error(e, self._key, "read") from e
            if not unchanged:
                # The version came from the stat cache: it names these bytes only while the
                # file is untouched. Checked before every chunk is handed out, so a reader
                # that stops early has only verified bytes too.
                raise changed_while_read(self._key)
            if not chunk:
                break
            seen += len(chunk)
            if h is not None:
                h.update(chunk)
            elif kept is not None:
                kept.append(chunk)
            yield chunk
            if _at_end(self._st, seen, chunk, want):
                break
        if h is not None or kept is not None:
            if kept is not None:
                data = kept[0] if len(kept) == 1 else b"".join(kept)
                self._version = self._known.version(self._key, data)
            else:
                assert h is not None
                self._version = version_of(h)
            try:
                if signature(os.fstat(self._fd)) == sig:
                    self._on_done(self._st, self._version, started)
            except OSError as e:
                raise map_os_error(e, self._key, "read") from e

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


class Digests:
    """The versions of one tree's files: from the stat cache, from the bytes last read or
    written here (``known``), or digested."""

    def __init__(self, known: KnownDigests) -> None:
        self.cache = _StatCache()
        """Versions by key: the keys of one root name one file each, as its paths do."""
        self.known = known

    def read_fd(self, fd: int, st: os.stat_result, key: str) -> Blob | None:
        """All bytes of an open file and their version; None if it changed while read."""
        started = time.time_ns()
        parts = _read_all(fd, st)
        if signature(os.fstat(fd)) != signature(st):
            return None  # written in place while we read
        data = b"".join(parts)
        version = self.cache.get(key, st)
        if version is None:
            version = self.known.version(key, data)
            self.cache.put(key, st, version, started)
        return Blob(data=data, version=version)

    def digest_fd(self, fd: int, st: os.stat_result, key: str) -> Version | None:
        """The version of an open file, from the cache, from a comparison with the bytes
        last read or written here (a small file, read whole), or hashed in chunks (never
        held whole in memory); None if it changed meanwhile."""
        cached = self.cache.get(key, st)
        if cached is not None:
            return cached
        started = time.time_ns()
        if self.known.keeps(st.st_size):
            parts = _read_all(fd, st)
            if signature(os.fstat(fd)) != signature(st):
                return None
            version = self.known.version(key, b"".join(parts))
        else:
            h = hasher()
            while True:
                chunk = os.read(fd, HASH_CHUNK)
                if not chunk:
                    break
                h.update(chunk)
            if signature(os.fstat(fd)) != signature(st):
                return None
            version = version_of(h)
        self.cache.put(key, st, version, started)
        return version

    def stream(self, fd: int, st: os.stat_result, key: str, chunk_size: int) -> LocalStream:
        """A chunked read of the open file ``fd``; its version is remembered once known."""

        def done(st_: os.stat_result, version: Version, started: int) -> None:
            self.cache.put(key, st_, version, started)

        return LocalStream(fd, st, self.cache.get(key, st), chunk_size, key, done, self.known)
