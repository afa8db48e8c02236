"""Content-digest versions, shared by the local, memory and generic backends, and the
precondition check each makes against the digest of what is there."""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

from ..errors import Conflict
from ..paths import display
from ..versions import CreateOnly, IfMatch, Precondition, Version

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
    shown = display(key)
    if isinstance(precondition, CreateOnly) and current is not None:
        raise Conflict("exists", path=shown)
    if isinstance(precondition, IfMatch):
        if current is None:
            raise Conflict("missing", path=shown)
        if current != precondition.version:
            raise Conflict("mismatch", path=shown)
