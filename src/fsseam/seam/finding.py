"""Finding: files by name (glob) and by content (grep)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, Literal

from ..backends._digest import digest_version
from ..backends.base import Blob, Entry
from ..errors import ErrorCode, FsError
from ..events import ReadEvent
from ..globs import Glob, echo, is_skipped
from ..grep import Pattern, RegexBudget, SearchTimeout, has_match, hunks, matching_lines
from ..index import indexed_reads
from ..outcomes import GlobOutcome, GrepFile, GrepHunk, GrepOutcome
from ..paths import display
from ..text import SNIFF_BYTES
from . import listing
from .core import Core
from .deadline import Deadline, OutOfTime
from .listing import walk_visible

__all__ = ["GrepMode", "glob", "grep"]

GrepMode = Literal["files_with_matches", "content", "count"]
Read = tuple[str, Blob | bytes | FsError, bool | None]
"""One file of a search: its key, what reading it gave, and whether the literal is in the
bytes when the read has told already (None: not told)."""


def glob(fs: Core, pattern: Glob, path: str, limit: int) -> GlobOutcome:
    """Files below ``path`` matching ``pattern``, in path order (the first ``limit``); once
    ``Limits.finder_seconds`` is spent, those before where the walk stopped (partial)."""
    key = fs.key(path)
    if pattern.base and any(s in ("", ".", "..") for s in pattern.base.split("/")):
        # The walk starts at the base unchecked (it is below a checked key): only plain
        # names keep it below the search directory, whoever built the Glob.
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="glob_parent",
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
    """The UTF-8 bytes of a literal pattern, to rule files out before decoding them."""
    if pattern.literal is None:
        return None
    try:
        return pattern.literal.encode("utf-8")
    except UnicodeEncodeError:
        return None  # a lone surrogate: no decoded text holds one, the plain path says so


def _searchable(relative: str) -> bool:
    return not any(is_skipped(seg) for seg in relative.split("/"))


class _Search:
    """One grep call: which files it takes, what it found, what it skipped and why."""

    def __init__(self, fs: Core, key: str, pattern: Pattern, files: Glob | None,
                 mode: GrepMode, context: int, limit: int) -> None:
        self.fs, self.key, self.pattern, self.files = fs, key, pattern, files
        self.mode, self.context, self.limit = mode, context, limit
        self.prefix = f"{key}/" if key else ""
        self.cap = fs.limits.max_edit_bytes
        self.deadline = Deadline(fs.limits.finder_seconds)
        self.budget = RegexBudget(fs.limits.grep_regex_seconds, self.deadline.left)
        self.cut: str | None = None
        """The first file not searched when the call's time ran out."""
        self.needle = _needle(pattern)
        self.skipped: dict[str, int] = {}
        self.stopped = self.truncated = False
        self.shown: list[GrepFile] = []
        self.files_matched = self.lines_matched = self.searched = self.shown_lines = 0
        self._last_dir: str | None = None
        self._dir_ok = True
        self.walk_failed: FsError | None = None
        """Why a walk of ``key`` already failed (the content index's): not walked again."""

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
                raise fs._missing(key, err) from None
            try:
                st = fs.backend.stat(key)
            except FsError as err2:
                raise fs._missing(key, err2) from None
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

    def tree(self) -> Iterator[Read] | None:
        """The local backend's walk and reads in one pass, where nothing is lost by it: no
        plugin filters listings (the pass builds no entries to show one) and ``path`` is a
        directory (a file takes the plain path).

        The pass asks ``accept`` about each file just before reading it, in path order,
        and lets its OutOfTime through: the files before that one have all been yielded,
        so the search stops at that file with a prefix searched."""
        fs, key, needle = self.fs, self.key, self.needle
        fused = fs.extras.read_tree_unhashed
        if fused is None or fs._gate.hooked("fs/list"):
            return None
        holds = None if needle is None else (lambda data: needle in data)
        reads: Iterator[tuple[str, bytes | FsError, bool]] = fused(
            key, self.accept, self.cap, holds)
        try:
            head = list(itertools.islice(reads, 1))
        except OutOfTime as stop:
            self.cut = stop.key
            return iter(())
        except FsError as err:
            if err.code is not ErrorCode.FS_INVALID_ARGUMENT or not key:
                raise fs._missing(key, err) from None
            return None
        return itertools.chain(head, reads)

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
            fs = self.fs
            seen = version if version is not None else digest_version(data)
            fs._gate.dispatch(ReadEvent(owner=fs.owner, key=file_key, path=shown_path,
                                        version=seen, partial=True))
        elif len(self.shown) < self.limit:
            self.shown.append(GrepFile(path=shown_path, count=count))
        else:
            self.truncated = True

    def scan_all(self, reads: Iterator[Read]) -> None:
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

    def outcome(self) -> GrepOutcome:
        named = self.files.named if self.files is not None else frozenset()
        return GrepOutcome(
            path=display(self.key), pattern=self.pattern.source, mode=self.mode,
            files=self.shown, files_matched=self.files_matched,
            lines_matched=self.lines_matched, searched=self.searched, limit=self.limit,
            truncated=self.truncated, skipped=self.skipped, stopped=self.stopped,
            **(_partial(self.key, self.cut, named) or {"partial": self.stopped}),
        )


def _read_capped_many(
    fs: Core, entries: Iterable[Entry], cap: int, deadline: Deadline | None = None
) -> Iterator[tuple[Entry, Blob | bytes | FsError]]:
    """The reads of a search: a file of known size comes from the backend's ``read_many``
    (the caller has left out those over ``cap``); one whose size the store did not say is
    streamed, and given up on past ``cap`` bytes, not read whole, or once ``deadline``
    has passed (OutOfTime: the requests of one stream are not all one request)."""
    read_many: Callable[[Iterable[Entry]], Iterator[tuple[Entry, Blob | bytes | FsError]]]
    read_many = fs.extras.read_many_unhashed or fs.backend.read_many
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
    too_large = FsError(ErrorCode.FS_TOO_LARGE, path=display(key), reason="edit_too_large",
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
