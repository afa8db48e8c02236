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
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

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
)
from ..ignores import NAMES, Carried, Ignores, literal_names
from ..index import indexed_reads
from ..messages import Reason
from ..outcomes import GlobOutcome, GrepOutcome, ListEntry, ListOutcome
from ..paths import display, reserved
from ..policy.reserved import only_reservations
from ..versions import Version
from .core import Core
from .globbing import GlobTally, glob_by_names
from .scan import Answer, Found, GrepMode, Scan, partial_fields, trim_hunks
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


def ignores_for(fs: Core, root: str, pattern: Glob | None, include_ignored: bool,
                hidden: bool = True) -> Ignores | None:
    """The ignore rules of a finder call searching below ``root`` for the files
    ``pattern`` names (None: the call includes ignored paths). ``hidden``: the call leaves
    out hidden and dependency names the pattern does not name, which the rules then do
    not count (a listing shows them)."""
    if include_ignored:
        return None
    backend = fs.backend
    ignores = Ignores(backend.read, root, literal_names(pattern), backend.storage_id(),
                      backend.list_lazy)
    if hidden:
        ignores.searched = searched_names(pattern)
    return ignores


def searched_names(pattern: Glob | None) -> Callable[[str], bool]:
    """Whether a search for the files ``pattern`` names (None: every file) takes a file or
    enters a directory of this name: hidden and dependency names only where the pattern
    names them (``Ignores.searched``; a helper process sets it again from its job)."""
    return pattern.allows_name if pattern is not None else _not_skipped


def _not_skipped(name: str) -> bool:
    return not is_skipped(name)


def list_entries(
    fs: Core, path: str, depth: int, skip: Callable[[ListEntry], bool] | None,
    max_chars: int | None, include_ignored: bool = False,
) -> ListOutcome:
    """Entries below a directory (see :meth:`fsseam.seam.Seam.list`)."""
    key = fs.key(path)
    out: list[ListEntry] = []
    omitted = more = used = 0
    ignores = ignores_for(fs, key, None, include_ignored, hidden=False)

    def children(k: str, level: int) -> Iterator[Entry]:
        nonlocal omitted
        listed: Iterable[Entry] = _listed(fs, k)
        if ignores is not None:
            listed = ignores.screen(k, listed)
        for e in listed:
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
    return ListOutcome(path=display(key), entries=out, omitted=omitted, more=more,
                       ignored=0 if ignores is None else ignores.ignored)


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


def walk_visible(fs: Core, key: str, ignores: Ignores | None = None) -> Iterator[Entry]:
    """The gate-filtered files of a walk (symlinks left out: their targets inside the
    tree are walked themselves); with ``ignores``, none below an ignored directory."""
    batch: list[Entry] = []
    walked: Iterable[Entry] = fs.backend.walk(key)
    if ignores is not None:
        walked = (e for e, _ in ignores.flat((e, None) for e in walked))
    for e in walked:
        if e.kind != "file":
            continue
        batch.append(e)
        if len(batch) >= WALK_BATCH:
            yield from visible(fs, key, batch, "walk")
            batch = []
    if batch:
        yield from visible(fs, key, batch, "walk")


# -- the grep of a store -------------------------------------------------------------------
PARTS_PER_HELPER = 32
"""A large local tree is cut into about this many parts per helper process, so that one
part's being larger than the rest keeps one helper busy, not the search waiting."""


def glob(fs: Core, pattern: Glob, path: str, limit: int, include_ignored: bool = False
         ) -> GlobOutcome:
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
    deadline = Deadline(fs.limits.finder_seconds)
    ignores = ignores_for(fs, base, pattern, include_ignored)
    tally = GlobTally(pattern, key, limit, ignores)
    try:
        if not glob_by_names(fs, tally, base, deadline):
            for e in walk_visible(fs, base, ignores):
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
                       ignored=0 if ignores is None else ignores.ignored,
                       **partial_fields(key, tally.cut, pattern.named))


def grep(fs: Core, pattern: Pattern, path: str, files: Glob | None, mode: GrepMode,
         context: int, limit: int, include_ignored: bool = False) -> GrepOutcome:
    """Search the text files below ``path`` (see :meth:`fsseam.seam.Seam.grep`)."""
    key = fs.key(path)
    search = GrepCall(fs, key, pattern, files, mode, context, limit,
                      ignores_for(fs, key, files, include_ignored))
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
                 mode: GrepMode, context: int, limit: int, ignores: Ignores | None = None
                 ) -> None:
        deadline = Deadline(fs.limits.finder_seconds)
        reserved = only_reservations(fs.gate)
        super().__init__(key, pattern, files, mode, context, limit,
                         cap=fs.limits.max_edit_bytes, deadline=deadline,
                         budget=RegexBudget(fs.limits.grep_regex_seconds, deadline.left),
                         reserved=reserved or (), ignores=ignores)
        # No plugin but reservations filters listings, and the search is outside them: the
        # fast paths may search (a reserved folder's search is the gate's to refuse).
        self.plain = reserved is not None and not any(r.reserved(key)
                                                      for r in self.reserved_keys)
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
        walked = walk_visible(fs, key, self.ignores)
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
        ignores = self.ignores
        if ignores is not None:
            _split_dirs(ignores, key, parts)
            # A part whose directory is ignored is left out (its topmost ignored directory
            # counted once), as the walk of one process leaves the directory out.
            parts = [p for p in parts if not ignores.left_out(p.key)]
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
        reads = fs.backend.read_tree_unhashed(key, self.taking, self.cap, holds)
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



def _split_dirs(ignores: Ignores, key: str, parts: Sequence[TreePart]) -> None:
    """Tell ``ignores`` what the split of the tree below ``key`` says of the directories it
    split: all their files lie in runs of names (parts), so an ignore file no run's names
    can hold is none there, and needs no read."""
    runs: dict[str, list[tuple[str, str]]] = {key: []}
    for p in parts:
        if p.span is not None:
            runs.setdefault(p.key, []).append(p.span)
        d = p.key if p.span is not None else p.key.rpartition("/")[0]
        while d != key and d.startswith(f"{key}/" if key else ""):
            runs.setdefault(d, [])
            d = d.rpartition("/")[0]
    for d, spans in runs.items():
        ignores.listed(d, [n for n in NAMES if any(a <= n <= b for a, b in spans)])


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
    ignores: Carried | None = None
    """The call's ignore rules above the part (None: ignored files are searched too)."""


class _PartScan(Scan):
    def __init__(self, job: PartJob, deadline: Deadline, budget: RegexBudget) -> None:
        super().__init__(job.key, job.pattern, job.files, job.mode, job.context, job.limit,
                         cap=job.cap, deadline=deadline, budget=budget,
                         reserved=job.reserved,
                         ignores=None if job.ignores is None else Ignores.resume(job.ignores))
        if self.ignores is not None:
            self.ignores.searched = searched_names(job.files)
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
    scan.scan_all(job.part.reads(scan.taking, job.cap, holds))
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
    ignores = scan.ignores
    carried = None
    if ignores is not None:
        # A subtree's own ignore files are read by the helper's walk; a run of files
        # needs its directory's too.
        carried = ignores.carried(part.key, inclusive=part.span is not None)
    return PartJob(part=part, key=scan.key, pattern=scan.pattern, files=scan.files,
                   mode=scan.mode, context=scan.context, limit=max(scan.limit - shown, 0),
                   cap=scan.cap, seconds=scan.deadline.left(),
                   regex_seconds=scan.budget.left, reserved=scan.reserved, ignores=carried)


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
        scan.scan_all(parts[i].reads(scan.taking, scan.cap, holds))

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
