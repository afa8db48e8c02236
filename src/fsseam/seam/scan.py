"""One grep's scan of the files it reads: which it searches, what it finds, what it skips
and why (:class:`Scan`), whatever the files' source (``fsseam.seam.finding``: a store's
walk, the content index, the local one-pass read, or a part of a local tree searched in a
helper process, whose findings a scan takes back in the walk's order: ``absorb``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Generator, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

import regex

from ..backends.base import Blob
from ..backends.digests import digest_version
from ..deadline import Deadline, OutOfTime
from ..errors import ErrorCode, FsError
from ..globs import Glob, is_skipped
from ..grep import (
    FileRead,
    Pattern,
    RegexBudget,
    SearchTimeout,
    has_match,
    hunks,
    matching_lines,
)
from ..ignores import Ignores
from ..index.grams import required
from ..outcomes import GrepFile, GrepHunk, GrepOutcome
from ..paths import display, reserved
from ..policy.reserved import ReservedKeys
from ..text import SNIFF_BYTES
from ..versions import Version

__all__ = ["Answer", "Found", "GrepMode", "Scan", "needle", "partial_fields", "trim_hunks"]

GrepMode = Literal["files_with_matches", "content", "count"]


@dataclass
class Found:
    """What the scan of one part of a walk found (picklable: it crosses processes)."""

    shown: list[GrepFile] = field(default_factory=list)
    files_matched: int = 0
    lines_matched: int = 0
    searched: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    stopped: bool = False
    truncated: bool = False
    cut: str | None = None
    ignored: int = 0


def trim_hunks(f: GrepFile, room: int, context: int) -> GrepFile:
    """``f`` with only its first ``room`` matching lines shown (``f`` itself when it has
    no more): exactly the hunks ``hunks`` makes of those lines, since a hunk's end is its
    last match's line plus ``context`` (or the file's end, which the hunk already
    stops at)."""
    given = f.hunks or []
    if sum(len(h.matches) for h in given) <= room:
        return f
    kept: list[GrepHunk] = []
    for h in given:
        if len(h.matches) >= room:
            matches = h.matches[:room]
            last = min(h.first + len(h.lines) - 1, matches[-1] + context)
            kept.append(GrepHunk(first=h.first, lines=h.lines[:last - h.first + 1],
                                 matches=matches))
            break
        kept.append(h)
        room -= len(h.matches)
    return GrepFile(path=f.path, count=f.count, hunks=kept)


def partial_fields(key: str, cut: str | None, named: frozenset[str]) -> dict[str, Any]:
    """The fields of an outcome cut short at ``cut`` (none when it was not): where the call
    stopped, and the directory it stopped in as the narrower path to search next: the
    nearest one a search does not skip, below ``key`` (its own files left: no such
    directory)."""
    if cut is None:
        return {}
    prefix = f"{key}/" if key else ""
    parents = cut[len(prefix):].split("/")[:-1] if cut.startswith(prefix) else []
    kept = list(itertools.takewhile(lambda s: not is_skipped(s) or s in named, parents))
    return {"partial": True, "unsearched_from": display(cut),
            "next_path": display(prefix + "/".join(kept)) if kept else None}


def needle(pattern: Pattern) -> bytes | None:
    """UTF-8 bytes every file holding a match holds, to rule files out before decoding
    them: a literal pattern itself, or the longest literal run every match of a regex
    contains (``handle_`` of ``handle_[a-z]+_v[0-9]+``). Only for a case-sensitive regex
    with no inline flags, and a run with no line break (the text searched has CRLF made
    LF, so a run holding one may match where the bytes hold something else)."""
    text = pattern.literal
    if text is None:
        text = _regex_run(pattern)
    if text is None:
        return None
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return None  # a lone surrogate: no decoded text holds one, the plain path says so


def _regex_run(pattern: Pattern) -> str | None:
    if pattern.compiled.flags & regex.IGNORECASE or "(?" in pattern.source:
        return None
    runs = [r for r in required(pattern) or () if "\n" not in r and "\r" not in r]
    best = max(runs, key=len, default="")
    return best if len(best) >= 2 else None


def _searchable(relative: str) -> bool:
    return not any(is_skipped(seg) for seg in relative.split("/"))


class Scan:
    """One grep: which files it takes, what it found, what it skipped and why. The files
    come from the caller (``scan_all``): :class:`GrepCall` walks a store for them,
    :func:`scan_part` a part of a local tree in another process."""

    def __init__(self, key: str, pattern: Pattern, files: Glob | None, mode: GrepMode,
                 context: int, limit: int, *, cap: int, deadline: Deadline,
                 budget: RegexBudget, reserved: tuple[str, ...] = (),
                 ignores: Ignores | None = None) -> None:
        self.key, self.pattern, self.files = key, pattern, files
        self.ignores = ignores
        """The call's ignore rules (None: ignored files are searched too)."""
        self.ignored_there = 0
        """Paths the ignore rules left out in the parts other processes searched."""
        self.reserved = reserved  # no file under them is taken or counted (a fast path's walk)
        self.reserved_keys = [ReservedKeys(p) for p in reserved]
        self.mode, self.context, self.limit = mode, context, limit
        self.prefix = f"{key}/" if key else ""
        self.cap = cap
        self.deadline = deadline
        self.budget = budget
        self.cut: str | None = None
        """The first file not searched when the call's time ran out."""
        self.needle = needle(pattern)
        self.skipped: dict[str, int] = {}
        self.stopped = self.truncated = False
        self.shown: list[GrepFile] = []
        self.files_matched = self.lines_matched = self.searched = self.shown_lines = 0
        self._last_dir: str | None = None
        self._dir_ok = True

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1

    def out_of_time(self) -> bool:
        # Once the pattern has spent the call's regex time, the files left are counted
        # and not read: reading them would only lead to skipping them.
        if not self.budget.spent:
            return False
        self.stopped = True
        self.skip("timeout")
        return True

    def accept(self, k: str) -> bool:
        # Files come directory by directory: whether a directory is searchable is worked
        # out once for all its files, and each file's own name tested alone.
        self.deadline.check(k)  # every file, taken or not: no stretch of a walk unchecked
        # The branches' folder, and any other reserved one (a pass with no list hook
        # sees them too).
        if reserved(k) or any(r.reserved(k) for r in self.reserved_keys):
            return False
        ignores = self.ignores
        if ignores is not None and ignores.below_ignored(k):
            return False
        relative = k[len(self.prefix):]
        if self.files is not None:
            if not self.files.match(relative):
                return False
            ok = self.files.allows(relative)
        else:
            parent, _, name = relative.rpartition("/")
            if parent != self._last_dir:
                self._last_dir, self._dir_ok = parent, not parent or _searchable(parent)
            ok = self._dir_ok and not is_skipped(name)
        if not ok:
            self.skip("hidden")
            return False
        if ignores is not None and ignores.excludes_file(k):
            return False
        return not self.out_of_time()

    __call__ = accept
    """The scan as the ``accept`` of a local walk (see ``taking``)."""

    @property
    def taking(self) -> Callable[[str], bool]:
        """``accept`` as a local walk takes it: with ignore rules, the scan itself, which
        the walk tells each directory's names and asks which directories to leave out
        (``fsseam.backends.local.tree.Pruning``)."""
        return self.accept if self.ignores is None else self

    def listed(self, key: str, names: Collection[str],
               read: Callable[[str, int], bytes | None]) -> None:
        if self.ignores is not None:
            self.ignores.listed(key, names, read)

    def prunes(self, key: str) -> bool:
        return self.ignores is not None and self.ignores.prunes(key)

    def _text(self, data: bytes, has_needle: bool | None) -> str | None:
        """The text to search in ``data``; None when the file is skipped or cannot match
        (counted as such)."""
        if data.find(b"\x00", 0, SNIFF_BYTES) >= 0:
            self.skip("binary")
            return None
        needle = self.needle
        if needle is not None and not (needle in data if has_needle is None else has_needle):
            # Most files of a search hold no match, and a literal absent from the bytes is
            # absent from their text (UTF-8 encodes each character alone; dropping a BOM or
            # the CR of CRLF joins no two characters that were not adjacent, as a literal
            # holds no newline): only whether the file is text is left to tell, for the
            # counts.
            if not data.isascii():
                try:
                    data.decode("utf-8")
                except UnicodeDecodeError:
                    self.skip("not_utf8")
                    return None
            self.searched += 1
            return None
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.skip("not_utf8")
            return None
        if text.startswith("\ufeff"):
            text = text[1:]
        if b"\r" in data:  # a byte scan, several times cheaper than a str search
            text = text.replace("\r\n", "\n")
        if self.pattern.literal is None and self.out_of_time():
            return None  # read ahead (object stores fetch several at once), not searched
        self.searched += 1
        return text

    def scan(self, file_key: str, got: Blob | bytes | FsError, has_needle: bool | None
             ) -> None:
        """Search one file that was read, and note what it holds."""
        if isinstance(got, bytes):
            data, version = got, None
        elif isinstance(got, FsError):
            self.skip("too_large" if got.code is ErrorCode.FS_TOO_LARGE else "unreadable")
            return
        else:
            data, version = got.data, got.version
        text = self._text(data, has_needle)
        if text is None:
            return
        try:
            if self.mode == "files_with_matches":
                count = 1 if has_match(text, self.pattern, self.budget) else 0
                matches: list[int] = []
            else:
                matches = matching_lines(text, self.pattern, self.budget)
                count = len(matches)
        except SearchTimeout:
            if self.deadline.passed():
                raise OutOfTime(file_key) from None  # the call's time, not the pattern's
            self.skip("timeout")
            return
        if not count:
            return
        self.files_matched += 1
        self.lines_matched += count
        shown_path = display(file_key)
        if self.mode == "content":
            room = self.limit - self.shown_lines
            if room <= 0:
                self.truncated = True
                return
            if len(matches) > room:
                matches, self.truncated = matches[:room], True
            self.shown_lines += len(matches)
            found = [GrepHunk(first=h.first, lines=h.lines, matches=h.matches)
                     for h in hunks(text, matches, self.context)]
            self.shown.append(GrepFile(path=shown_path, count=count, hunks=found))
            self.seen(file_key, shown_path,
                      version if version is not None else digest_version(data))
        elif len(self.shown) < self.limit:
            self.shown.append(GrepFile(path=shown_path, count=count))
        else:
            self.truncated = True

    def scan_all(self, reads: Iterator[FileRead]) -> None:
        """Scan each read in turn until the reads end or the call's time is up. A read
        that arrives after that is dropped with every one after it (a prefix of the
        files stays searched, whatever was fetched ahead), and closing ``reads`` leaves
        the reads still in flight behind without waiting for them."""
        try:
            for read in reads:
                if self.deadline.passed():
                    self.cut = read[0]
                    break
                self.scan(*read)
        except OutOfTime as stop:  # from the walk (accept), a stream, or a regex search
            self.cut = stop.key
        finally:
            if isinstance(reads, Generator):
                reads.close()

    def seen(self, key: str, path: str, version: Version) -> None:
        """A file whose lines are shown (content mode) was read at ``version``: what the
        caller records of it (an observation, as a window of a read records one)."""

    def found(self) -> Found:
        """What this scan found, to be put in its place among other parts' (``absorb``)."""
        return Found(shown=self.shown, files_matched=self.files_matched,
                     lines_matched=self.lines_matched, searched=self.searched,
                     skipped=self.skipped, stopped=self.stopped, truncated=self.truncated,
                     cut=self.cut, ignored=self.ignored)

    @property
    def ignored(self) -> int:
        """Paths the ignore rules left out: here, and in the parts searched elsewhere."""
        return self.ignored_there + (0 if self.ignores is None else self.ignores.ignored)

    def absorb(self, part: Found, versions: dict[str, tuple[str, Version]]) -> None:
        """Add what a scan of the next part of the walk found, as if this scan had read
        that part's files itself: its counts, and its files shown while this scan's limit
        has room (``versions``: the key and version of each file shown in content mode, by
        path, for ``seen``). The part was scanned from an empty start with a limit no
        smaller than the room this scan has now (the room when the part was handed out),
        so it cut nothing that this scan would show: what is left over is cut here, as
        ``scan`` would have cut it."""
        self.files_matched += part.files_matched
        self.lines_matched += part.lines_matched
        self.searched += part.searched
        self.ignored_there += part.ignored
        for why, n in part.skipped.items():
            self.skipped[why] = self.skipped.get(why, 0) + n
        self.stopped |= part.stopped
        self.truncated |= part.truncated
        for f in part.shown:
            if self.mode != "content":
                if len(self.shown) < self.limit:
                    self.shown.append(f)
                else:
                    self.truncated = True
                continue
            room = self.limit - self.shown_lines
            if room <= 0:
                self.truncated = True
                continue
            kept = trim_hunks(f, room, self.context)
            if kept is not f:
                self.truncated = True
            self.shown_lines += sum(len(h.matches) for h in kept.hunks or ())
            self.shown.append(kept)
            key, version = versions[f.path]
            self.seen(key, f.path, version)
        if part.cut is not None:
            self.cut = part.cut

    def outcome(self) -> GrepOutcome:
        named = self.files.named if self.files is not None else frozenset()
        return GrepOutcome(
            path=display(self.key), pattern=self.pattern.source, mode=self.mode,
            files=self.shown, files_matched=self.files_matched,
            lines_matched=self.lines_matched, searched=self.searched, limit=self.limit,
            truncated=self.truncated, skipped=self.skipped, stopped=self.stopped,
            ignored=self.ignored,
            **(partial_fields(self.key, self.cut, named) or {"partial": self.stopped}),
        )


Answer = tuple[Found, dict[str, tuple[str, Version]], float]
"""A part's findings, the key and version of each file it shows by path, and the regex
time it spent."""
