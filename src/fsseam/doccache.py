"""What a workspace remembers of file versions it has seen: format and (small) text, and
who wrote them.

A write with ``IfMatch(V)`` right after a read of V needs the file's format (BOM, newline
style) and, for its diff, the old text; keeping them per version makes that write one
request instead of a download plus an upload. The writer of each version this workspace
wrote (:class:`Authors`) names it in ``history`` where the store's listing does not.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict

from .errors import FsError
from .paths import display
from .text import TextFormat, decode
from .versions import Version

__all__ = ["Authors", "DocCache", "shared_cache", "view_of"]

MAX_ENTRIES = 4096
KEPT_SHARED = 4
"""Shared caches this process keeps alive after their last Workspace is gone (most recent
first): a Workspace made again for each request still finds the text of what was read."""


class DocCache:
    """(key, version) -> TextFormat and, for small files, the text: a bounded LRU.

    Reads and writes store the raw bytes: decoding them costs as much as the read itself,
    and only a later whole-file write needs the text (for its diff), while a conflict needs
    the exact bytes the agent saw (to show what changed, or to find that another agent
    made the very same change).
    """

    def __init__(self, budget: int) -> None:
        self._budget = budget
        self._used = 0
        self._items: OrderedDict[tuple[str, Version], tuple[TextFormat, str | bytes | None]] = (
            OrderedDict()
        )
        self._lock = threading.Lock()

    def put(
        self, key: str, version: Version, fmt: TextFormat, text: str | bytes | None
    ) -> None:
        if text is not None and len(text) > self._budget // 4:
            text = None
        with self._lock:
            old = self._items.pop((key, version), None)
            if old is not None and old[1] is not None:
                self._used -= len(old[1])
            self._items[(key, version)] = (fmt, text)
            self._used += len(text) if text is not None else 0
            while self._items and (self._used > self._budget or len(self._items) > MAX_ENTRIES):
                _, (_, t) = self._items.popitem(last=False)
                self._used -= len(t) if t is not None else 0

    def entries(self) -> list[tuple[str, Version, TextFormat, bytes]]:
        """The exact bytes kept, least recently used first: what a process hands the next
        (the CLI keeps them beside its ledger, so a conflict there shows a diff too)."""
        with self._lock:
            return [(key, version, fmt, text) for (key, version), (fmt, text)
                    in self._items.items() if isinstance(text, bytes)]

    def raw(self, key: str, version: Version) -> bytes | None:
        """The exact bytes of the file at ``version``, when they are kept."""
        with self._lock:
            hit = self._items.get((key, version))
        return hit[1] if hit is not None and isinstance(hit[1], bytes) else None

    def kept(self, key: str, version: Version) -> tuple[TextFormat, str | bytes | None] | None:
        """The format and what is kept of the file at ``version`` (its bytes, a view, or
        None), not decoded: a write needs the format now and the text only for a diff."""
        with self._lock:
            hit = self._items.get((key, version))
            if hit is not None:
                self._items.move_to_end((key, version))
        return hit

    def get(self, key: str, version: Version) -> tuple[TextFormat, str | None] | None:
        """The format and, when kept, the view of the file at ``version``."""
        hit = self.kept(key, version)
        if hit is None:
            return None
        fmt, text = hit
        return fmt, view_of(text, display(key)) if isinstance(text, bytes) else text


def view_of(data: bytes, shown: str) -> str | None:
    """The view of bytes kept, None when they are no text as a whole (they were valid in
    the window that was read)."""
    try:
        return decode(data, shown).view
    except FsError:
        return None


# One cache per store identity and budget, for as long as a Workspace (or one of the last
# few made) holds it: what one Workspace of a URL read, another of the same URL in this
# process can show a diff from.
_shared: weakref.WeakValueDictionary[tuple[str, int], DocCache] = weakref.WeakValueDictionary()
_recent: OrderedDict[tuple[str, int], DocCache] = OrderedDict()
_shared_lock = threading.Lock()


def shared_cache(identity: str, budget: int) -> DocCache:
    """The cache this process's workspaces of one store share (``identity``: one spelling
    of the store, its root and options), bounded by ``budget`` bytes as each workspace's
    own would be. Safe to share: an entry is the exact bytes of one version of one key of
    that store, put there only by a read or a write of it."""
    key = (identity, budget)
    with _shared_lock:
        cache = _shared.get(key)
        if cache is None:
            cache = _shared[key] = DocCache(budget)
        _recent[key] = cache
        _recent.move_to_end(key)
        while len(_recent) > KEPT_SHARED:
            _recent.popitem(last=False)
        return cache


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
