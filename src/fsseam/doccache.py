"""What a workspace remembers of file versions it has seen: format and (small) text.

A write with ``IfMatch(V)`` right after a read of V needs the file's format (BOM, newline
style) and, for its diff, the old text; keeping them per version makes that write one
request instead of a download plus an upload.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from .errors import FsError
from .paths import display
from .text import TextFormat, decode
from .versions import Version

__all__ = ["DocCache"]

MAX_ENTRIES = 4096


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

    def get(self, key: str, version: Version) -> tuple[TextFormat, str | None] | None:
        """The format and, when kept, the view of the file at ``version``."""
        with self._lock:
            hit = self._items.get((key, version))
            if hit is not None:
                self._items.move_to_end((key, version))
        if hit is None:
            return None
        fmt, text = hit
        if isinstance(text, bytes):
            try:
                text = decode(text, display(key)).view
            except FsError:
                text = None  # valid in the window that was read, not as a whole
        return fmt, text
