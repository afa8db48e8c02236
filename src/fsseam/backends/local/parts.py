"""A local tree cut into parts, so that several processes can search it.

A part is a stretch of the walk's order: the whole subtree of one directory, or a run of
the files directly in a directory (between two of its subdirectories). The parts of a
tree, one after the other, are its walk, so searching each part in turn is searching the
tree; searching them at once and putting the answers back in order is the same search.

A part is a small picklable value that names its files by key below the root. Another
process re-opens the root and reads them by the same descriptor walk, which never
follows a link nor leaves the root: a part carries no descriptor and no trust.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ...errors import FsError
from ...paths import MAX_PATH_DEPTH
from . import search
from .tree import Tree, sorted_dirents

__all__ = ["RUN_FILES", "LocalTreePart", "split_tree"]

RUN_FILES = 2000
"""The most files of one directory in one part: a flat directory of 100,000 files is
still shared out."""

_LEVELS = 3
"""How deep a split looks for subtrees to hand out (it lists the directories it splits
once more than the search does: a few dozen)."""


@dataclass(frozen=True)
class LocalTreePart:
    """One part of a search's walk over a local tree (see the module docstring); a
    ``fsseam.backends.base.TreePart``."""

    root: str
    given: str
    """The root as the workspace named it (``Tree``'s two spellings of it)."""
    key: str
    """The directory of the part."""
    span: tuple[str, str] | None = None
    """None: the whole subtree of ``key``. Otherwise the first and last names of a run of
    files directly in ``key``: a part stays a few strings, whatever it holds."""

    @property
    def start(self) -> str:
        """Where the part begins in the walk's order: its first file's key, or its
        directory's key for a subtree (which sorts before every file below it)."""
        if self.span is None:
            return self.key
        return f"{self.key}/{self.span[0]}" if self.key else self.span[0]

    def reads(
        self, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]]:
        """``read_tree_unhashed`` of this part alone, in any process."""
        tree = Tree(self.root, self.given)
        if self.span is not None:
            return search.read_span_unhashed(tree, self.key, *self.span, accept, max_bytes,
                                             wanted)
        return _subtree(tree, self.key, accept, max_bytes, wanted)


def _subtree(tree: Tree, key: str, accept: Callable[[str], bool], max_bytes: int,
             wanted: Callable[[bytes], bool] | None) -> Iterator[tuple[str, bytes | FsError, bool]]:
    # A directory removed or replaced since the split is one the walk would not have
    # entered: nothing of it is searched, as in one process.
    try:
        yield from search.read_tree_unhashed(tree, key, accept, max_bytes, wanted)
    except FsError:
        return


def split_tree(tree: Tree, key: str, want: int) -> list[LocalTreePart]:
    """The walk of the directory ``key`` as parts, in order: the top directory's subtrees
    and runs of files, then each level's subtrees split in turn (up to three levels down)
    until there are ``want`` parts or no subtree is left. A part is a few strings, so
    the split costs the memory of its parts' count, not of the files below them.
    FsError when ``key`` is not a directory."""
    fd = tree.open_dir(key, "walk")
    try:
        parts = _split(tree, fd, key)
    finally:
        os.close(fd)
    for _ in range(_LEVELS):
        if len(parts) >= want or all(p.span is not None for p in parts):
            break
        parts = [q for p in parts
                 for q in ([p] if p.span is not None else _split_below(tree, p.key))]
    return parts


def _split_below(tree: Tree, key: str) -> list[LocalTreePart]:
    try:
        fd = tree.open_dir(key, "walk")
    except FsError:
        return []  # gone since listed: the walk would not find it either
    try:
        return _split(tree, fd, key)
    except FsError:
        return []  # a directory the walk cannot list is one it skips
    finally:
        os.close(fd)


def _split(tree: Tree, fd: int, key: str) -> list[LocalTreePart]:
    """The parts of the directory open as ``fd``, one level: by the walk's own order and
    rules (``Tree.runs``)."""
    parts: list[LocalTreePart] = []
    run: list[str] = []

    def flush() -> None:
        for i in range(0, len(run), RUN_FILES):
            chunk = run[i:i + RUN_FILES]
            parts.append(LocalTreePart(tree.root, tree.given, key, (chunk[0], chunk[-1])))
        run.clear()

    for child, d, is_dir in sorted_dirents(fd, key):
        if not is_dir:
            run.append(d.name)
        elif child.count("/") + 1 < MAX_PATH_DEPTH:
            flush()
            parts.append(LocalTreePart(tree.root, tree.given, child))
    flush()
    return parts
