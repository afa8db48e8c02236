"""Finding files: a directory's entries (list), every file below one (walk), files by name
(glob) and by content (grep).

Listings and walks go through the gate's list hook in batches (plugins may hide entries);
a listing is capped by the output it goes to.

A grep takes its files from one of four places, the cheapest the store allows: the local
backend's walk and reads in one pass (:meth:`GrepCall.tree`), the content index of an
object store (``fsseam.index``), the plain walk and reads of any store, or, for a large
local tree, parts of the tree searched by helper processes (:func:`run_parts`). Whatever
the source, one :class:`Scan` takes the files: which it searches, what it finds, what it
skips and why.

Several processes: one Python process searches a local tree at about a third of the speed
of GNU grep: the system calls cost the same, the rest is the interpreter's time per file,
and threads do not share it out (each system call hands the GIL over). So a grep that has
run for :data:`SWITCH_SECONDS` in this process and still has parts of the tree ahead
starts helper processes (``Limits.finder_processes``; they stay for the next searches, see
``fsseam.seam.workers``) and hands them the parts (``split_tree``: subtrees, runs of
files), while this process keeps searching parts itself until a helper is ready.

Each part is scanned from an empty start with the call's pattern, limit, time left and
regex time left, and the scans' findings are put back in the walk's order
(:meth:`Scan.absorb`): the answer is the one a single process gives, prefix and all when
the time runs out. A helper that fails or dies costs nothing but time: its part is
searched here again. Helpers are plain ``python -c`` processes running :func:`main`, so
nothing of the caller's ``__main__`` runs in them, whatever start method
``multiprocessing`` would choose.
"""

from __future__ import annotations

import heapq
import itertools
import math
import os
import select
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Literal, TypeVar

import regex

from .. import deadline as _clock
from ..backends.base import Blob, Entry, TreePart
from ..backends.digests import digest_version
from ..deadline import Deadline, OutOfTime
from ..errors import ErrorCode, FsError
from ..events import ListEvent, ReadEvent, StatEvent
from ..globs import Glob, echo, is_skipped
from ..grep import (
    FileRead,
    Pattern,
    RegexBudget,
    SearchTimeout,
    has_match,
    hunks,
    matching_lines,
)
from ..index import indexed_reads
from ..index.grams import required
from ..messages import Reason
from ..outcomes import GlobOutcome, GrepFile, GrepHunk, GrepOutcome, ListEntry, ListOutcome
from ..paths import display, reserved
from ..policy.reserved import ReservedKeys, only_reservations
from ..text import SNIFF_BYTES
from ..versions import Version
from .core import Core
from .globbing import GlobTally, glob_by_names
from .workers import Helper, Helpers, helpers, read_message, write_message

__all__ = ["MAX_HELPERS", "PARTS_PER_HELPER", "SWITCH_SECONDS", "WALK_BATCH", "Answer", "Found",
           "GrepCall", "GrepMode", "PartJob", "Scan", "glob", "grep", "list_entries", "main",
           "named_file", "partial_fields", "processes", "run_parts",
           "scan_part", "smallest", "trim_hunks", "walk", "walk_visible"]


# -- listings and walks ----------------------------------------------------------------------
T = TypeVar("T")

WALK_BATCH = 1000
"""Walked entries go through the gate's list hook this many at a time."""


def _listing_order(e: Entry) -> tuple[str, str]:
    return e.name, e.kind


def smallest(
    items: Iterable[T], key: Callable[[T], Any], cost: Callable[[T], int], budget: int
) -> tuple[list[T], int]:
    """The first of ``items`` in ``sorted(items, key=key)`` order whose costs add up to
    ``budget`` (all of them if they add up to less; at least one, as a cut output shows at
    least one row), sorted, and how many items there were.

    One pass, holding only those: a heap whose top is the greatest kept item, which leaves
    as soon as the others alone reach the budget."""
    heap: list[_Desc[T]] = []
    total = count = 0
    for item in items:
        count += 1
        k = key(item)
        if total >= budget and heap and not k < heap[0].key:
            continue  # after every item kept: it would leave at once
        c = cost(item)
        heapq.heappush(heap, _Desc(k, c, count, item))
        total += c
        while len(heap) > 1 and total - heap[0].cost >= budget:
            total -= heapq.heappop(heap).cost
    kept = sorted(heap, reverse=True)
    return [d.item for d in kept], count


class _Desc(Generic[T]):
    """A heap item that sorts greatest first (ties: the later item first)."""

    __slots__ = ("cost", "item", "key", "seq")

    def __init__(self, key: Any, cost: int, seq: int, item: T) -> None:
        self.key, self.cost, self.seq, self.item = key, cost, seq, item

    def __lt__(self, other: _Desc[T]) -> bool:
        if self.key == other.key:
            return bool(self.seq > other.seq)
        return bool(other.key < self.key)


def _probe(e: Entry, depth: int) -> ListEntry:
    return ListEntry.model_construct(
        path=display(e.key), type=e.kind, size=e.size, depth=depth,
        target=None if e.target is None else display(e.target),
    )


def _entry(e: Entry, depth: int) -> ListEntry:
    return ListEntry(
        path=display(e.key), type=e.kind, size=e.size, depth=depth,
        target=None if e.target is None else display(e.target),
    )


def visible(fs: Core, key: str, entries: Sequence[Entry], operation: Literal["list", "walk"]
            ) -> Sequence[Entry]:
    """Entries after the gate's list hook (plugins may hide some), never the folder where
    branches are kept."""
    event = ListEvent(owner=fs.owner, key=key, path=display(key), operation=operation,
                      entries=[e for e in entries if not reserved(e.key)])
    fs.gate.dispatch(event)
    return event.entries


def list_entries(
    fs: Core, path: str, depth: int, skip: Callable[[ListEntry], bool] | None,
    max_chars: int | None,
) -> ListOutcome:
    """Entries below a directory (see :meth:`fsseam.seam.Seam.list`)."""
    key = fs.key(path)
    out: list[ListEntry] = []
    omitted = more = used = 0

    def children(k: str, level: int) -> Iterator[Entry]:
        nonlocal omitted
        for e in _listed(fs, k):
            # The filter sees each child as a row, which is dropped at once: only the
            # rows kept are validated and held.
            if skip is not None and skip(_probe(e, level)):
                omitted += 1
                continue
            yield e

    def walk_dir(k: str, level: int) -> None:
        nonlocal more, used
        # A row is at least its directory's path, a slash, the name and a newline
        # (escaping only makes it longer).
        base = len(display(k).rstrip("/")) + 2

        def cost(e: Entry) -> int:
            return base + len(e.name)

        if max_chars is None:
            kept = sorted(children(k, level), key=_listing_order)
        else:
            kept, total = smallest(children(k, level), _listing_order, cost, max_chars - used)
            more += total - len(kept)
        for i, e in enumerate(kept):
            if max_chars is not None and used >= max_chars:
                more += len(kept) - i
                return
            out.append(_entry(e, level))
            used += cost(e)
            if e.kind == "directory" and level < depth and (
                max_chars is None or used < max_chars
            ):
                walk_dir(e.key, level + 1)

    try:
        walk_dir(key, 1)
    except FsError as err:
        raise named_file(fs, key, err) from None
    return ListOutcome(path=display(key), entries=out, omitted=omitted, more=more)


def named_file(fs: Core, key: str, err: FsError) -> FsError:
    """``err``, met listing ``key``; when ``key`` is a file, the gate first answers for it
    as for a stat (a reserved key is refused, telling nothing of whether it exists)."""
    if err.code is ErrorCode.FS_INVALID_ARGUMENT and err.reason == Reason.not_directory:
        fs.gate.dispatch(StatEvent(owner=fs.owner, key=key, path=display(key), type="file"))
    return err


def _listed(fs: Core, key: str) -> Iterator[Entry]:
    """The children of a directory, as the storage yields them, through the gate's list
    hook in batches (plugins may hide some)."""
    entries = fs.backend.list_lazy(key)
    batch: list[Entry] = []
    sent = False
    for e in entries:
        batch.append(e)
        if len(batch) >= WALK_BATCH:
            yield from visible(fs, key, batch, "list")
            batch, sent = [], True
    if batch or not sent:
        yield from visible(fs, key, batch, "list")


def walk(fs: Core, path: str) -> Iterator[ListEntry]:
    """Every file (and symlink, never followed) below a directory, in path order."""
    key = fs.key(path)
    batch: list[Entry] = []
    for e in fs.backend.walk(key):
        batch.append(e)
        if len(batch) >= WALK_BATCH:
            yield from (_entry(v, 0) for v in visible(fs, key, batch, "walk"))
            batch = []
    if batch:
        yield from (_entry(v, 0) for v in visible(fs, key, batch, "walk"))


def walk_visible(fs: Core, key: str) -> Iterator[Entry]:
    """The gate-filtered files of a walk (symlinks left out: their targets inside the
    tree are walked themselves)."""
    batch: list[Entry] = []
    for e in fs.backend.walk(key):
        if e.kind != "file":
            continue
        batch.append(e)
        if len(batch) >= WALK_BATCH:
            yield from visible(fs, key, batch, "walk")
            batch = []
    if batch:
        yield from visible(fs, key, batch, "walk")


# -- a grep's scan of the files it reads -----------------------------------------------------
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


def _needle(pattern: Pattern) -> bytes | None:
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
                 budget: RegexBudget, reserved: tuple[str, ...] = ()) -> None:
        self.key, self.pattern, self.files = key, pattern, files
        self.reserved = reserved  # no file under them is taken or counted (a fast path's walk)
        self._reserved = [ReservedKeys(p) for p in reserved]
        self.mode, self.context, self.limit = mode, context, limit
        self.prefix = f"{key}/" if key else ""
        self.cap = cap
        self.deadline = deadline
        self.budget = budget
        self.cut: str | None = None
        """The first file not searched when the call's time ran out."""
        self.needle = _needle(pattern)
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
        if reserved(k) or any(r.reserved(k) for r in self._reserved):
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
        return not self.out_of_time()

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
                     cut=self.cut)

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
            **(partial_fields(self.key, self.cut, named) or {"partial": self.stopped}),
        )


Answer = tuple[Found, dict[str, tuple[str, Version]], float]
"""A part's findings, the key and version of each file it shows by path, and the regex
time it spent."""


# -- the grep of a store -------------------------------------------------------------------
PARTS_PER_HELPER = 32
"""A large local tree is cut into about this many parts per helper process, so that one
part's being larger than the rest keeps one helper busy, not the search waiting."""


def glob(fs: Core, pattern: Glob, path: str, limit: int) -> GlobOutcome:
    """Files below ``path`` matching ``pattern``, in path order (the first ``limit``); once
    ``Limits.finder_seconds`` is spent, those before where the walk stopped (partial). The
    store's walk by names where it has one, else the plain walk (see ``globbing``)."""
    key = fs.key(path)
    if pattern.base and any(s in ("", ".", "..") for s in pattern.base.split("/")):
        # The walk starts at the base unchecked (it is below a checked key): only plain
        # names keep it below the search directory, whoever built the Glob.
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.glob_parent,
                      details={"pattern": echo(pattern.pattern)})
    base = "/".join(p for p in (key, pattern.base) if p)
    tally = GlobTally(pattern, key, limit)
    deadline = Deadline(fs.limits.finder_seconds)
    try:
        if not glob_by_names(fs, tally, base, deadline):
            for e in walk_visible(fs, base):
                if deadline.passed():
                    tally.cut = e.key
                    break
                tally.take(e.key)
    except FsError as e:
        # A literal base the tree does not have simply matches nothing.
        if not (pattern.base and e.code is ErrorCode.FS_NOT_FOUND):
            raise named_file(fs, base, e) from None
    return GlobOutcome(path=display(key), pattern=pattern.pattern, paths=tally.paths,
                       total=tally.total, limit=limit, hidden=tally.hidden,
                       **partial_fields(key, tally.cut, pattern.named))


def grep(fs: Core, pattern: Pattern, path: str, files: Glob | None, mode: GrepMode,
         context: int, limit: int) -> GrepOutcome:
    """Search the text files below ``path`` (see :meth:`fsseam.seam.Seam.grep`)."""
    search = GrepCall(fs, fs.key(path), pattern, files, mode, context, limit)
    if search.fan_out():
        return search.outcome()
    # A backend whose versions are digests of the bytes (local) reads without them: a
    # search hashes only the files it shows, the only ones whose version it reports.
    reads = search.tree()
    if reads is None:  # an object store's content index reads only the possible matches
        reads = indexed_reads(fs, search, WALK_BATCH)
    if reads is None:
        many = _read_capped_many(fs, search.candidates(), search.cap, search.deadline)
        reads = ((e.key, got, None) for e, got in many)
    search.scan_all(reads)
    return search.outcome()


class GrepCall(Scan):
    """One grep call on a store: where its files come from, and what it records of the
    files it shows."""

    def __init__(self, fs: Core, key: str, pattern: Pattern, files: Glob | None,
                 mode: GrepMode, context: int, limit: int) -> None:
        deadline = Deadline(fs.limits.finder_seconds)
        reserved = only_reservations(fs.gate)
        super().__init__(key, pattern, files, mode, context, limit,
                         cap=fs.limits.max_edit_bytes, deadline=deadline,
                         budget=RegexBudget(fs.limits.grep_regex_seconds, deadline.left),
                         reserved=reserved or ())
        # No plugin but reservations filters listings, and the search is outside them: the
        # fast paths may search (a reserved folder's search is the gate's to refuse).
        self.plain = reserved is not None and not any(r.reserved(key) for r in self._reserved)
        self.fs = fs
        self.walk_failed: FsError | None = None
        """Why a walk of ``key`` already failed (the content index's): not walked again."""

    def seen(self, key: str, path: str, version: Version) -> None:
        fs = self.fs
        fs.gate.dispatch(ReadEvent(owner=fs.owner, key=key, path=path, version=version,
                                    partial=True))

    def candidates(self) -> Iterator[Entry]:
        # The walk first: it is the common case, and it says when path is a file (a stat
        # first would cost object stores two requests on every search).
        fs, key = self.fs, self.key
        walked = walk_visible(fs, key)
        try:
            if self.walk_failed is not None:
                raise self.walk_failed  # path is a file: its one listing said so already
            head = list(itertools.islice(walked, 1))
        except FsError as err:
            if err.code is not ErrorCode.FS_INVALID_ARGUMENT or not key:
                raise fs.not_found(key, err) from None
            try:
                st = fs.backend.stat(key)
            except FsError as err2:
                raise fs.not_found(key, err2) from None
            if st.kind != "file":
                raise
            # A file named alone is answered as a stat is: a plugin may refuse it (a
            # reserved key), before a match could tell anything of its bytes.
            fs.gate.dispatch(StatEvent(owner=fs.owner, key=key, path=display(key),
                                       type="file", size=st.size))
            if st.size is not None and st.size > self.cap:
                self.skip("too_large")  # as in a directory's search: named alone, not read
                return
            yield Entry(key=key, name=key.rsplit("/", 1)[-1], kind="file", size=st.size)
            return
        try:
            for e in itertools.chain(head, walked):
                if not self.accept(e.key):
                    continue
                if e.size is not None and e.size > self.cap:
                    self.skip("too_large")
                    continue
                yield e
        except OutOfTime as stop:
            # Ends the reads' input: those in flight still come, for scan_all to drop.
            self.cut = stop.key

    def fan_out(self) -> bool:
        """Search a local tree by parts, with helper processes once it proves large (see
        :func:`run_parts`); False where that does not apply (the other paths then search): a
        store that cannot split its walk, a plugin filtering listings, a machine or
        ``Limits.finder_processes`` that allows one process, ``path`` a file, a tree of
        one part."""
        fs, key = self.fs, self.key
        n = processes(fs.limits.finder_processes)
        if not n or not self.plain:
            return False
        try:
            parts = list(fs.backend.split_tree(key, n * PARTS_PER_HELPER))
        except FsError as err:
            if err.code is not ErrorCode.FS_INVALID_ARGUMENT or not key:
                raise fs.not_found(key, err) from None
            return False
        if len(parts) < 2:
            return False
        run_parts(self, parts, n)
        return True

    def tree(self) -> Iterator[FileRead] | None:
        """The local backend's walk and reads in one pass, where nothing is lost by it: no
        plugin filters listings (the pass builds no entries to show one) and ``path`` is a
        directory (a file takes the plain path).

        The pass asks ``accept`` about each file just before reading it, in path order,
        and lets its OutOfTime through: the files before that one have all been yielded,
        so the search stops at that file with a prefix searched."""
        fs, key, needle = self.fs, self.key, self.needle
        if not self.plain:
            return None
        holds = None if needle is None else (lambda data: needle in data)
        reads = fs.backend.read_tree_unhashed(key, self.accept, self.cap, holds)
        if reads is None:
            return None
        try:
            head = list(itertools.islice(reads, 1))
        except OutOfTime as stop:
            self.cut = stop.key
            return iter(())
        except FsError as err:
            if err.code is not ErrorCode.FS_INVALID_ARGUMENT or not key:
                raise fs.not_found(key, err) from None
            return None
        return itertools.chain(head, reads)



def _read_capped_many(
    fs: Core, entries: Iterable[Entry], cap: int, deadline: Deadline | None = None
) -> Iterator[tuple[Entry, Blob | bytes | FsError]]:
    """The reads of a search: a file of known size comes from the backend's ``read_many``
    (the caller has left out those over ``cap``); one whose size the store did not say is
    streamed, and given up on past ``cap`` bytes, not read whole, or once ``deadline``
    has passed (OutOfTime: the requests of one stream are not all one request)."""
    read_many = fs.backend.read_many_unhashed
    for unknown, run in itertools.groupby(entries, key=lambda e: e.size is None):
        if not unknown:
            yield from read_many(run)
            continue
        for e in run:
            yield e, _read_capped(fs, e.key, cap, deadline)


def _read_capped(fs: Core, key: str, cap: int, deadline: Deadline | None = None
                 ) -> Blob | FsError:
    try:
        stream = fs.backend.open_read(key, fs.limits.read_chunk_bytes)
    except FsError as err:
        return err
    too_large = FsError(ErrorCode.FS_TOO_LARGE, path=display(key), reason=Reason.edit_too_large,
                        details={"size": stream.size, "cap": cap})
    try:
        if stream.size is not None and stream.size > cap:
            return too_large
        parts: list[bytes] = []
        held = 0
        for chunk in stream.chunks():
            held += len(chunk)
            if held > cap:
                return too_large
            if deadline is not None:
                deadline.check(key)
            parts.append(chunk)
        data = b"".join(parts)
        version = stream.version
    except FsError as err:
        return err
    finally:
        stream.close()
    return Blob(data=data, version=version if version is not None else digest_version(data))


# -- a large local tree, by several processes ----------------------------------------------
SWITCH_SECONDS = 0.25
"""How long a grep runs in this process before it hands parts of the tree to helpers: a
search of a few thousand files ends before, and never starts one."""

MAX_HELPERS = 8
_AHEAD = 128
"""Parts handed out ahead of the first one not yet put back, per helper: the other helpers
keep going while one searches a part larger than the rest (a tree's parts are of any
size). What the answers waiting their turn hold is bounded apart (``_held``)."""
_GRACE = 2.0
"""How long past the call's deadline to wait for a helper's answer (a helper stops at
its own deadline; one stuck in a read is given up on)."""


def processes(setting: int | None) -> int:
    """How many helpers a search may use (``Limits.finder_processes``); fewer than 2 means
    none: one helper would only move the work to another process."""
    if setting is None:
        try:
            setting = len(os.sched_getaffinity(0))
        except AttributeError:  # pragma: no cover - macOS has no affinity
            setting = os.cpu_count() or 1
        setting = min(setting, MAX_HELPERS)
    return setting if setting >= 2 else 0


@dataclass(frozen=True)
class PartJob:
    """One part of a grep, as a helper gets it."""

    part: TreePart
    key: str
    pattern: Pattern
    files: Glob | None
    mode: GrepMode
    context: int
    limit: int
    cap: int
    seconds: float
    """The call's time left when the part was handed out (inf: no limit)."""
    regex_seconds: float
    reserved: tuple[str, ...] = ()


class _PartScan(Scan):
    def __init__(self, job: PartJob, deadline: Deadline, budget: RegexBudget) -> None:
        super().__init__(job.key, job.pattern, job.files, job.mode, job.context, job.limit,
                         cap=job.cap, deadline=deadline, budget=budget,
                         reserved=job.reserved)
        self.versions: dict[str, tuple[str, Version]] = {}

    def seen(self, key: str, path: str, version: Version) -> None:
        self.versions[path] = (key, version)


def scan_part(job: PartJob) -> Answer:
    """Scan one part in a helper, on a deadline and a regex budget of its own, made from
    the time the call had left when it handed the part out."""
    # Deadline(0) means no limit: a job handed out with no time left must stop at once.
    s = job.seconds
    deadline = Deadline(0) if math.isinf(s) else Deadline(max(s, 1e-9))
    budget = RegexBudget(job.regex_seconds, deadline.left)
    before = budget.left
    scan = _PartScan(job, deadline, budget)
    needle = scan.needle
    holds = None if needle is None else (lambda data: needle in data)
    scan.scan_all(job.part.reads(scan.accept, job.cap, holds))
    return scan.found(), scan.versions, before - budget.left


def main() -> None:
    """A helper: answer jobs from stdin on stdout until stdin closes."""
    out = os.dup(1)
    os.dup2(2, 1)  # whatever prints, the answers' pipe stays clean
    write_message(out, ("ready", os.getpid()))
    while True:
        try:
            call, index, job = read_message(0)
        except EOFError:
            return
        try:
            answer: Any = ("done", call, index, scan_part(job))
        except BaseException as e:  # the caller searches the part again
            answer = ("failed", call, index, repr(e))
        write_message(out, answer)



def run_parts(scan: Scan, parts: list[TreePart], n: int) -> None:
    """Search ``parts`` in order into ``scan``, with up to ``n`` helpers once the search
    has run :data:`SWITCH_SECONDS` here (see the module docstring)."""
    pool: Helpers | None = helpers()
    assert pool is not None
    if not pool.lock.acquire(blocking=False):
        pool = None  # another search has them: this one runs here
    try:
        _run(scan, parts, n, pool)
    finally:
        if pool is not None:
            pool.lock.release()


def _job(scan: Scan, part: TreePart) -> PartJob:
    # The part may show no more than the answer has room for now: less than that room is
    # left once the parts before it are put back, so it cuts nothing the answer shows.
    shown = scan.shown_lines if scan.mode == "content" else len(scan.shown)
    return PartJob(part=part, key=scan.key, pattern=scan.pattern, files=scan.files,
                   mode=scan.mode, context=scan.context, limit=max(scan.limit - shown, 0),
                   cap=scan.cap, seconds=scan.deadline.left(),
                   regex_seconds=scan.budget.left, reserved=scan.reserved)


def _run(scan: Scan, parts: list[TreePart], n: int, pool: Helpers | None) -> None:
    started = _clock.clock()
    call = -1
    if pool is not None:
        pool.calls += 1
        call = pool.calls
    answers: dict[int, Answer | None] = {}
    needle = scan.needle
    holds = None if needle is None else (lambda data: needle in data)

    def here(i: int) -> None:
        # Every part before it is put back: this one is scanned straight into the
        # call's own scan, exactly as one process scans it.
        scan.scan_all(parts[i].reads(scan.accept, scan.cap, holds))

    merged = handed = 0
    helped = False
    while merged < len(parts) and scan.cut is None:
        if merged in answers:  # put back in the walk's order
            got = answers.pop(merged)
            if got is None:  # a helper failed on it: search it here
                here(merged)
            else:
                scan.budget.left -= got[2]  # spent in a helper, on a budget of its own
                scan.absorb(got[0], got[1])
            merged += 1
            continue
        mine: list[Helper] = []
        if pool is not None and (helped or _clock.clock() - started >= SWITCH_SECONDS):
            # Past the first moments of a search (which end most searches), helpers.
            helped = True
            if not pool.all and not pool.failed and len(parts) - handed >= 2:
                pool.start(n)
            mine = pool.all[:n]
            _take(pool, mine, call, answers, 0.0)
            handed = _hand_out(scan, parts, pool, mine, call, answers, handed,
                               merged + _AHEAD * n)
            mine = pool.all[:n]
        if not any(h.job is not None and h.job[0] == call for h in mine):
            # No helper is on this search (none ready yet, or none at all), so every
            # part handed out is answered: put those back, or take the next one here.
            if merged in answers:
                continue
            assert merged == handed
            here(handed)
            handed = merged = handed + 1
            if pool is not None:
                pool.parts_here += 1
            continue
        assert pool is not None
        left = scan.deadline.left()
        if not _take(pool, mine, call, answers,
                     None if math.isinf(left) else max(left, 0.0) + _GRACE):
            scan.cut = parts[merged].start  # the helpers did not answer in time
            return


def _hand_out(scan: Scan, parts: list[TreePart], pool: Helpers, mine: list[Helper],
              call: int, answers: dict[int, Answer | None], handed: int, upto: int) -> int:
    """Give the next parts (before ``upto``) to the idle helpers, while what the answers
    waiting their turn show is under twice the limit; the next part not handed out."""
    for h in [h for h in mine if h.ready and h.job is None]:
        if (handed == len(parts) or handed >= upto
                or _held(answers) >= 2 * max(scan.limit, 1)):
            break
        try:
            write_message(h.to, (call, handed, _job(scan, parts[handed])))
        except OSError:
            pool.drop(h)
            continue
        h.job = (call, handed)
        handed += 1
    return handed


def _held(answers: dict[int, Answer | None]) -> int:
    """What the answers waiting their turn show: files and matching lines. No part is
    handed out while they show twice the call's limit, so they hold at most that plus one
    part's worth (at most the limit) per helper; once the answer is full, a part shows
    nothing and comes back as counts."""
    return sum(len(a[0].shown) + sum(len(h.matches) for f in a[0].shown for h in f.hunks or ())
               for a in answers.values() if a is not None)


def _take(pool: Helpers, mine: list[Helper], call: int, answers: dict[int, Answer | None],
          timeout: float | None) -> bool:
    """Take the messages of helpers that have one, waiting up to ``timeout`` (None: no
    limit) for the first; False when none came in time."""
    if not mine:
        return True
    poll = select.poll()  # not select(): a long-lived process's pipes may be past fd 1023
    for h in mine:
        poll.register(h.fro, select.POLLIN)
    wait = None if timeout is None else math.ceil(timeout * 1000)
    readable = {fd for fd, _ in poll.poll(wait)}
    for h in mine:
        if h.fro in readable:
            job = h.job
            pool.receive(h, call, answers)
            if job is not None and job[0] == call and answers.get(job[1]) is not None:
                pool.parts_there += 1
    return bool(readable) or timeout == 0.0
