"""What a glob counts, and its walk by names where the store offers one.

Every path of a glob (``finding.glob``) counts alike, in :class:`GlobTally`: the first
``limit`` matching files in path order, all of them, and what it left out as hidden.
``hidden`` counts each hidden or dependency directory the glob did not search (one that
holds a file, below which the pattern may match: ``*.py`` searches no directory, so
leaves none out) once, and each hidden file that matches once: a walk that prunes such
a directory cannot say how many of its files would match, and one that lists every key
(an object store) says the same by grouping its keys.

The local store walks by names (``Backend.walk_names``): no ``lstat`` and no entry per
file, hidden and dependency directories pruned, not walked to be counted, and so are
the directories below which the pattern cannot match. Taken only where nothing is lost
by it: no plugin but reservations filters listings (the walk builds no entries to show
one; reserved folders are left out here).
"""

from __future__ import annotations

from collections.abc import Callable

from ..deadline import Deadline
from ..errors import FsError
from ..globs import SKIP_DIRS, Glob
from ..ignores import Ignores
from ..paths import display, reserved
from ..policy.reserved import ReservedKeys, only_reservations
from .core import Core

__all__ = ["GlobTally", "glob_by_names"]


class GlobTally:
    """What one glob found below the directory ``key`` (see the module docstring)."""

    def __init__(self, pattern: Glob, key: str, limit: int,
                 ignores: Ignores | None = None) -> None:
        self.pattern, self.limit = pattern, limit
        self.prefix = f"{key}/" if key else ""
        self.ignores = ignores
        """The call's ignore rules (None: ignored paths included). An ignored directory
        counts as a hidden one does: once, where the pattern may match below it."""
        if ignores is not None:
            plen = len(self.prefix)
            ignores.counts_dir = lambda d: pattern.enters(d[plen:])
        self.paths: list[str] = []
        self.total = self.hidden = 0
        self.cut: str | None = None
        """The first file the walk did not reach, once the time was up."""
        self._left_out: str | None = None
        """The key of the hidden directory the walk is in, and a slash: its files follow
        each other in path order."""
        self._searched: str | None = None
        """The directory (relative) of the last file taken, which the glob searches."""

    def take(self, key: str) -> None:
        """One more file of the walk, in path order."""
        left_out = self._left_out
        if left_out is not None and key.startswith(left_out):
            return
        pattern = self.pattern
        relative = key[len(self.prefix):]
        parent, _, name = relative.rpartition("/")
        if parent != self._searched:  # the files of a directory follow each other
            segs = parent.split("/") if parent else []
            for i, seg in enumerate(segs):
                if not pattern.allows_name(seg):
                    directory = "/".join(segs[:i + 1])
                    self._left_out = f"{self.prefix}{directory}/"
                    self.hidden += pattern.enters(directory)
                    return
            self._searched = parent
        if pattern.match(relative):
            self.found(key, name)

    def found(self, key: str, name: str) -> None:
        """A matching file, in a directory the glob searches."""
        if not self.pattern.allows_name(name):
            self.hidden += 1
            return
        if self.ignores is not None and self.ignores.excludes_file(key):
            return
        self.total += 1
        if len(self.paths) < self.limit:
            self.paths.append(display(key))


def glob_by_names(fs: Core, tally: GlobTally, base: str, deadline: Deadline) -> bool:
    """The glob's walk of ``base`` by names into ``tally``, out of time at ``deadline``
    (``tally.cut``); False where the store offers no such walk or the plain walk must
    run (a plugin filters listings, or refuses this one)."""
    holds = only_reservations(fs.gate)
    if holds is None:
        return False
    keys = tuple(ReservedKeys(p) for p in holds)
    if any(r.reserved(base) for r in keys):
        return False  # the plain walk's listing is refused

    def unseen(key: str) -> bool:
        return reserved(key) or any(r.reserved(key) for r in keys)

    pattern, plen, ignores = tally.pattern, len(tally.prefix), tally.ignores

    def keep_dir(dir_key: str) -> bool:
        # The reserved folders lie at the root; a reserved prefix anywhere.
        if (keys or "/" not in dir_key) and unseen(dir_key):
            return False
        relative = dir_key[plen:]
        if not pattern.enters(relative):
            return False
        if ignores is not None and ignores.ignores_dir(dir_key):
            # Never a hidden one (the rules are not asked about names the search skips:
            # Ignores.searched); counted where the plain walk would see a key below it.
            ignores.dirs_left += _holds_a_file(fs, dir_key, unseen)
            return False
        name = relative[relative.rfind("/") + 1:]
        if not (name[:1] == "." or name in SKIP_DIRS) or pattern.allows_name(name):
            return True
        tally.hidden += _holds_a_file(fs, dir_key, unseen)
        return False

    walk = fs.backend.walk_names(base, keep_dir,
                                 None if ignores is None else ignores.listed)
    if walk is None:
        return False
    suffixes, match = pattern.suffixes, pattern.match
    ends = pattern.names[0] if pattern.names is not None and len(pattern.names) == 1 else None
    passed, paths, limit, total = deadline.passed, tally.paths, tally.limit, tally.total
    try:
        # The time is read between runs (up to RUN_NAMES files of one directory each), and
        # a run's names are tested by name alone where the pattern allows (a suffix, or
        # one last segment after a **): the rest is only for the files that match.
        for here, names in walk:
            if passed():
                tally.cut = f"{here}/{names[0]}" if here else names[0]
                break
            prefix = f"{here}/" if here else ""
            # The rules of the run's directory, asked about its files only if any speak.
            judge = ignores is not None and ignores.applies_in(here)
            if suffixes is not None:
                hits = [n for n in names if n.endswith(suffixes)]
            elif ends is not None:
                hits = [n for n in names if ends(n)]
            else:
                below = prefix[plen:]
                hits = [n for n in names if match(below + n)]
            for name in hits:
                if keys or name[:1] == "." or name in SKIP_DIRS:
                    # Reserved names are hidden ones (.fsseam-*), or lie beside a
                    # reserved prefix.
                    if unseen(prefix + name):
                        continue
                    if not pattern.allows_name(name):
                        tally.hidden += 1
                        continue
                if judge and ignores is not None and ignores.excludes_file(prefix + name):
                    continue
                total += 1
                if total <= limit:
                    paths.append(display(prefix + name))
    finally:
        tally.total = total
    return True


def _holds_a_file(fs: Core, dir_key: str, unseen: Callable[[str], bool]) -> bool:
    """Whether the plain walk would yield a file below ``dir_key`` (the first one found
    ends the look: one listing, for most directories)."""
    walk = fs.backend.walk_names(dir_key, lambda k: not unseen(k))
    if walk is None:
        return False
    try:
        for here, names in walk:
            if any(not unseen(f"{here}/{n}" if here else n) for n in names):
                return True
    except FsError:
        pass  # removed or replaced meanwhile: the plain walk would skip it too
    return False
