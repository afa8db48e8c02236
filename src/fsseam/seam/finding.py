"""Finding: files by name (glob) and by content (grep)."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from typing import Any

from ..backends._digest import digest_version
from ..backends.base import Blob, Entry
from ..errors import ErrorCode, FsError
from ..events import ReadEvent
from ..globs import Glob, echo
from ..grep import Pattern, RegexBudget
from ..index import indexed_reads
from ..messages import Reason
from ..outcomes import GlobOutcome, GrepOutcome
from ..paths import display
from ..versions import Version
from . import fanout, listing
from .core import Core
from .deadline import Deadline, OutOfTime
from .listing import walk_visible
from .scanning import GrepMode, Read, Scan, partial_fields

__all__ = ["GrepMode", "glob", "grep"]

PARTS_PER_HELPER = 32
"""A large local tree is cut into about this many parts per helper process, so that one
part's being larger than the rest keeps one helper busy, not the search waiting."""


def glob(fs: Core, pattern: Glob, path: str, limit: int) -> GlobOutcome:
    """Files below ``path`` matching ``pattern``, in path order (the first ``limit``); once
    ``Limits.finder_seconds`` is spent, those before where the walk stopped (partial)."""
    key = fs.key(path)
    if pattern.base and any(s in ("", ".", "..") for s in pattern.base.split("/")):
        # The walk starts at the base unchecked (it is below a checked key): only plain
        # names keep it below the search directory, whoever built the Glob.
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.glob_parent,
                      details={"pattern": echo(pattern.pattern)})
    base = "/".join(p for p in (key, pattern.base) if p)
    prefix = f"{key}/" if key else ""
    paths: list[str] = []
    total = hidden = 0
    deadline = Deadline(fs.limits.finder_seconds)
    cut: str | None = None
    try:
        for e in walk_visible(fs, base):
            if deadline.passed():
                cut = e.key
                break
            relative = e.key[len(prefix):]
            if not pattern.match(relative):
                continue
            if not pattern.allows(relative):
                hidden += 1
                continue
            total += 1
            if len(paths) < limit:
                paths.append(display(e.key))
    except FsError as e:
        # A literal base the tree does not have simply matches nothing.
        if not (pattern.base and e.code is ErrorCode.FS_NOT_FOUND):
            raise
    return GlobOutcome(path=display(key), pattern=pattern.pattern, paths=paths,
                       total=total, limit=limit, hidden=hidden,
                       **_partial(key, cut, pattern.named))


def grep(fs: Core, pattern: Pattern, path: str, files: Glob | None, mode: GrepMode,
         context: int, limit: int) -> GrepOutcome:
    """Search the text files below ``path`` (see :meth:`fsseam.seam.Seam.grep`)."""
    search = _Search(fs, fs.key(path), pattern, files, mode, context, limit)
    if search.fan_out():
        return search.outcome()
    # A backend whose versions are digests of the bytes (local) reads without them: a
    # search hashes only the files it shows, the only ones whose version it reports.
    reads = search.tree()
    if reads is None:  # an object store's content index reads only the possible matches
        reads = indexed_reads(fs, search, listing.WALK_BATCH)
    if reads is None:
        many = _read_capped_many(fs, search.candidates(), search.cap, search.deadline)
        reads = ((e.key, got, None) for e, got in many)
    search.scan_all(reads)
    return search.outcome()


def _partial(key: str, cut: str | None, named: frozenset[str]) -> dict[str, Any]:
    return partial_fields(key, cut, named)


class _Search(Scan):
    """One grep call on a store: where its files come from, and what it records of the
    files it shows."""

    def __init__(self, fs: Core, key: str, pattern: Pattern, files: Glob | None,
                 mode: GrepMode, context: int, limit: int) -> None:
        deadline = Deadline(fs.limits.finder_seconds)
        super().__init__(key, pattern, files, mode, context, limit,
                         cap=fs.limits.max_edit_bytes, deadline=deadline,
                         budget=RegexBudget(fs.limits.grep_regex_seconds, deadline.left))
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
        ``fanout``); False where that does not apply (the other paths then search): a
        store that cannot split its walk, a plugin filtering listings, a machine or
        ``Limits.finder_processes`` that allows one process, ``path`` a file, a tree of
        one part."""
        fs, key = self.fs, self.key
        n = fanout.processes(fs.limits.finder_processes)
        if not n or fs.gate.hooked("fs/list"):
            return False
        try:
            parts = list(fs.backend.split_tree(key, n * PARTS_PER_HELPER))
        except FsError as err:
            if err.code is not ErrorCode.FS_INVALID_ARGUMENT or not key:
                raise fs.not_found(key, err) from None
            return False
        if len(parts) < 2:
            return False
        fanout.run_parts(self, parts, n)
        return True

    def tree(self) -> Iterator[Read] | None:
        """The local backend's walk and reads in one pass, where nothing is lost by it: no
        plugin filters listings (the pass builds no entries to show one) and ``path`` is a
        directory (a file takes the plain path).

        The pass asks ``accept`` about each file just before reading it, in path order,
        and lets its OutOfTime through: the files before that one have all been yielded,
        so the search stops at that file with a prefix searched."""
        fs, key, needle = self.fs, self.key, self.needle
        if fs.gate.hooked("fs/list"):
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
