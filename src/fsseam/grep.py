"""Content search, as pure functions: compile a pattern, find matching lines with context.

Patterns are Python regular expressions, run by the ``regex`` package (compatible with
``re`` for what agents write) because it can stop a search after a time limit: a pattern
that backtracks catastrophically on one file skips that file instead of hanging the call,
and a :class:`RegexBudget` bounds the time of all the files of one call together.
``^`` and ``$`` match at line boundaries; ``.`` does not cross lines.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import regex

from .backends.base import Blob
from .errors import ErrorCode, FsError
from .globs import echo
from .messages import Reason

__all__ = [
    "MAX_CONTEXT",
    "FileRead",
    "MatchBlock",
    "Pattern",
    "RegexBudget",
    "SearchTimeout",
    "compile_pattern",
    "has_match",
    "hunks",
    "matching_lines",
]

MAX_CONTEXT = 50
_META = frozenset(".^$*+?{}[]\\|()\n")
FileRead = tuple[str, Blob | bytes | FsError, bool | None]
"""One file of a search, as a scan takes it: its key, what reading it gave, and whether the
literal is in the bytes when the read has told already (None: not told)."""
SEARCH_TIMEOUT_S = 2.0
"""Per file: a search running longer than this is abandoned and the file counted."""


class SearchTimeout(Exception):
    """The pattern took too long on one file, or the call's budget is spent."""


class RegexBudget:
    """The regex time one search call may spend, over all its files.

    Each file still gets at most :data:`SEARCH_TIMEOUT_S`, but never more than what is
    left: a pattern that is slow on every file costs the call this budget once, not that
    timeout once per file. Only the time in the regex engine counts, not reads: a fast
    pattern spends seconds only over gigabytes of text.

    ``until``: the seconds the whole call has left (its ``Limits.finder_seconds``), which
    no one search may outlast either."""

    def __init__(self, seconds: float, until: Callable[[], float] | None = None) -> None:
        self.left = seconds
        self.until = until

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def allowance(self) -> float:
        """The timeout of the next search (SearchTimeout when nothing is left)."""
        call = math.inf if self.until is None else self.until()
        if self.left <= 0 or call <= 0:
            raise SearchTimeout
        return min(SEARCH_TIMEOUT_S, self.left, call)

    def charge(self, started: float, allowed: float, timed_out: bool) -> None:
        """Spend the wall time since ``started``; a search that timed out spends at least
        what it was allowed. (The engine times out on the process's CPU time: other
        threads can make that pass faster than the wall clock, machine load slower.)"""
        spent = time.monotonic() - started
        self.left -= max(spent, allowed) if timed_out else spent


@dataclass(frozen=True)
class Pattern:
    source: str
    compiled: regex.Pattern[str]
    literal: str | None
    """The pattern itself when it is plain text (no metacharacters, case-sensitive): then
    ``str.find`` does the search, several times faster than any regex engine."""


def compile_pattern(
    pattern: str, case_insensitive: bool = False, *, max_chars: int | None = None
) -> Pattern:
    """Compile (FS_INVALID_ARGUMENT with the reason and the fix when it does not compile).

    ``max_chars``: a longer pattern is refused before it is compiled (compiling is not
    linear in the length: megabytes take tens of seconds). The tools pass the workspace's
    ``Limits.grep_pattern_chars``."""
    if max_chars is not None and len(pattern) > max_chars:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.grep_pattern_too_long,
                      details={"length": len(pattern), "max": max_chars})
    if pattern == "":
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.grep_empty)
    flags = regex.MULTILINE | regex.VERSION0
    if case_insensitive:
        flags |= regex.IGNORECASE
    try:
        compiled = regex.compile(pattern, flags)
    except (regex.error, OverflowError, RecursionError) as e:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.grep_bad_pattern,
            details={"pattern": echo(pattern), "error": echo(str(e))},
        ) from None
    plain = not case_insensitive and not any(c in _META for c in pattern)
    literal = pattern if plain else None
    return Pattern(pattern, compiled, literal)


def _starts(text: str, p: Pattern, budget: RegexBudget | None) -> Iterator[int]:
    if p.literal is not None:
        i = text.find(p.literal)
        while i >= 0:
            yield i
            i = text.find(p.literal, i + max(1, len(p.literal)))
        return
    timeout = SEARCH_TIMEOUT_S if budget is None else budget.allowance()
    started = time.monotonic()
    timed_out = False
    try:
        # The timeout covers the whole iteration, not each match.
        for m in p.compiled.finditer(text, timeout=timeout):
            yield m.start()
    except TimeoutError as e:
        timed_out = True
        raise SearchTimeout from e
    finally:
        if budget is not None:
            budget.charge(started, timeout, timed_out)


def has_match(text: str, p: Pattern, budget: RegexBudget | None = None) -> bool:
    """Whether ``p`` matches somewhere in ``text`` (SearchTimeout when it takes longer than
    a file may, or than ``budget`` has left)."""
    if p.literal is not None:
        return p.literal in text
    timeout = SEARCH_TIMEOUT_S if budget is None else budget.allowance()
    started = time.monotonic()
    timed_out = False
    try:
        return p.compiled.search(text, timeout=timeout) is not None
    except TimeoutError as e:
        timed_out = True
        raise SearchTimeout from e
    finally:
        if budget is not None:
            budget.charge(started, timeout, timed_out)


def matching_lines(text: str, p: Pattern, budget: RegexBudget | None = None) -> list[int]:
    """0-based numbers of the lines where a match starts, ascending, each once."""
    out: list[int] = []
    line = 0
    pos = 0
    for start in _starts(text, p, budget):
        line += text.count("\n", pos, start)
        pos = start
        if not out or out[-1] != line:
            out.append(line)
    return out


@dataclass(frozen=True)
class MatchBlock:
    """A run of lines to show: ``first`` is 1-based; ``matches`` the 1-based numbers of the
    matching lines among them."""

    first: int
    lines: list[str]
    matches: list[int]


def hunks(text: str, matches: list[int], context: int) -> list[MatchBlock]:
    """Matching lines with ``context`` lines around them, overlapping runs merged."""
    if not matches:
        return []
    # One split in C beats finding each newline from Python, even for the lines not shown.
    parts = text.split("\n")
    n_lines = len(parts) - (1 if text.endswith("\n") or not text else 0)
    line = parts.__getitem__

    out: list[MatchBlock] = []
    run: list[int] = []
    lo = hi = -1
    for m in matches:
        a, b = max(0, m - context), min(n_lines - 1, m + context)
        if run and a <= hi + 1:
            hi = max(hi, b)
            run.append(m)
            continue
        if run:
            out.append(MatchBlock(lo + 1, [line(k) for k in range(lo, hi + 1)],
                              [r + 1 for r in run]))
        run, lo, hi = [m], a, b
    out.append(MatchBlock(lo + 1, [line(k) for k in range(lo, hi + 1)], [r + 1 for r in run]))
    return out
