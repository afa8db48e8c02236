"""The memory tool's views: a directory's rows from one walk, and the texts of a file and a
directory view, as Anthropic's reference memory tool shows them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

from ..messages import Reason, render
from ..outcomes import ListEntry, ListOutcome, ReadOutcome
from ..paths import display
from ..seam import Seam, smallest
from .editor import SKIP_DIRS, clipped_view
from .render import fit, numbered_fit

__all__ = ["listing", "render_directory", "render_file"]


def _size(n: int | None) -> str:
    """Sizes as Anthropic's reference memory tool shows them (``512B``, ``1.5K``)."""
    if n is None:
        return "-"
    if n == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((n.bit_length() - 1) // 10, len(units) - 1)
    size = n / (1024**i)
    return f"{int(size)}{units[i]}" if size == int(size) else f"{size:.1f}{units[i]}"


_Row = tuple[str, Literal["file", "directory"], int | None, int]


def _rows(fs: Seam, key: str, base: str) -> Iterator[_Row]:
    """The rows of a memory directory's view, from its walk, unsorted: each directory
    that holds a file (to two levels) once, and each file two levels deep. A walk is in
    key order, so the files below one directory come one after another: the last
    directory given at each level is all that is remembered."""
    last: dict[int, str] = {}
    for e in fs.walk(display(key)):
        if e.type != "file":
            continue
        parts = e.path[len(base) + 1:].split("/")
        if any(p.startswith(".") or p in SKIP_DIRS for p in parts):
            continue
        for depth in range(1, min(len(parts), 3)):
            d = f"{base}/{'/'.join(parts[:depth])}"
            if last.get(depth) != d:
                last[depth] = d
                yield d, "directory", None, depth
        if len(parts) <= 2:
            yield e.path, "file", e.size, len(parts)


def _row_path(row: _Row) -> str:
    return row[0]


def _row_cost(row: _Row) -> int:
    return len(row[0]) + 3  # at least "-", a tab, the path and a newline


def listing(fs: Seam, key: str, max_chars: int) -> ListOutcome:
    """Files two levels deep and the directories that hold them, from one walk: a
    directory whose files were all deleted or moved is gone, on every store (local
    empty directories are not shown). Only as many rows are kept as the output could
    show; the rest are counted."""
    base = display(key).rstrip("/")
    kept, total = smallest(_rows(fs, key, base), _row_path, _row_cost, max_chars)
    entries = [ListEntry(path=p, type=t, size=size, depth=depth)
               for p, t, size, depth in kept]
    more = total - len(kept)
    return ListOutcome(path=display(key), entries=entries, more=more)


def render_file(o: ReadOutcome, max_chars: int) -> str:
    """A file's view: its lines, numbered, in ``max_chars``."""
    head = render(Reason.memory_file, o.path) + "\n"
    if o.total == 0:
        return head + render(Reason.view_empty)
    text, shown = numbered_fit(o.lines, o.offset, o.cut, max_chars - len(head))
    last = o.offset + shown - 1
    body = head + text
    if shown < len(o.lines) or o.total is None or last < o.total:
        # Anthropic's memory tool names no total in the notice: neither does this one.
        body += "\n" + clipped_view(o.offset, last, o.total, of=False)
    return body


def render_directory(o: ListOutcome, max_chars: int) -> str:
    """A directory's view: a size and a path a row, in ``max_chars``."""
    head = render(Reason.memory_listing, o.path) + "\n"
    rows = [f"-\t{o.path}"]
    for e in o.entries:
        if e.type == "directory":
            rows.append(f"-\t{e.path}/")
        elif e.type == "file":
            rows.append(f"{_size(e.size)}\t{e.path}")
    shown = fit(rows, max_chars - len(head))
    text = head + "\n".join(rows[:shown])
    hidden = len(rows) - shown + o.more
    if hidden:
        text += "\n" + render(Reason.listing_clipped, details={"hidden": hidden})
    return text
