"""Glob patterns with ``**``, as agents write them (``src/**/*.py``, ``**/*.{ts,tsx}``).

Semantics (the common ones of fast-glob, ripgrep and Python's ``pathlib``):

- ``*`` matches any characters within one path segment, ``?`` one character, ``[abc]`` /
  ``[!abc]`` a class; none of them matches ``/``.
- ``**`` as a whole segment matches zero or more segments: ``src/**/*.py`` matches
  ``src/a.py`` and ``src/x/y/a.py``; a trailing ``**`` matches everything below.
- ``{a,b}`` alternatives expand into several patterns (at most :data:`MAX_ALTERNATIVES`),
  each then checked as a whole pattern is: no ``..`` (``{..}/**`` is refused as ``../**``
  is), and ``.``, empty segments and a leading ``/`` dropped.
- Patterns are relative to the search directory; a leading ``/`` anchors them at the
  workspace root instead. ``*.py`` matches only the directory's own files: use ``**/*.py``
  to search below it.

Matching costs time linear in the path for a given pattern, whatever its ``*`` and ``**``
(see :class:`_Alternative`): a backtracking regex takes exponential time on patterns such as
``**/**/**/**/x`` or ``*a*a*a*a*b``.

Hidden and dependency directories (``.git``, ``node_modules``, ...) are not searched unless
the pattern or the search path names them: see :func:`mentions`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import ErrorCode, FsError
from .messages import Reason

__all__ = [
    "ECHO_CHARS",
    "MAX_ALTERNATIVES",
    "SKIP_DIRS",
    "Glob",
    "compile_glob",
    "echo",
    "is_skipped",
]

MAX_ALTERNATIVES = 64
ECHO_CHARS = 100
"""The most of a pattern a message quotes (see :func:`echo`)."""
SKIP_DIRS = frozenset(
    {"node_modules", ".venv", "venv", "site-packages", "__pycache__", ".git", ".hg", ".svn",
     ".tox", ".mypy_cache", ".pytest_cache", ".ruff_cache", "dist-packages"}
)
"""Directories skipped when searching, besides every hidden (dot) one."""


def is_skipped(name: str) -> bool:
    """A hidden or dependency path segment."""
    return name.startswith(".") or name in SKIP_DIRS


def _expand(pattern: str) -> list[str]:
    """``a{b,c}d`` -> ``[abd, acd]``, innermost first; nested braces work."""
    out = [pattern]
    while True:
        changed = False
        nxt: list[str] = []
        for p in out:
            m = re.search(r"\{([^{}]*)\}", p)
            if m is None:
                nxt.append(p)
                continue
            changed = True
            nxt.extend(p[: m.start()] + alt + p[m.end() :] for alt in m.group(1).split(","))
        if len(nxt) > MAX_ALTERNATIVES:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                reason=Reason.glob_too_many_alternatives,
                details={"pattern": echo(pattern), "max": MAX_ALTERNATIVES},
            )
        out = nxt
        if not changed:
            return out


def _normalize(alternative: str) -> str:
    """An alternative as a relative pattern: ``.`` segments and repeated or outer ``/``
    dropped, as a path drops them. A brace can put them anywhere (``{.,src}/x``,
    ``{/etc,src}/**``), so this runs on each alternative, after expansion."""
    return "/".join(s for s in alternative.split("/") if s not in ("", "."))


def _class(body: str, pattern: str) -> str:
    """The body of ``[...]`` (without its brackets and ``!``) as a regex set of one
    character: each character literal, ``a-z`` a range, ``/`` never."""
    chars = body.replace("/", "")
    items: list[str] = []
    i = 0
    while i < len(chars):
        if i + 2 < len(chars) and chars[i + 1] == "-":
            lo, hi = chars[i], chars[i + 2]
            if lo > hi:
                raise _bad_class(pattern, f"{lo}-{hi}")
            items.append(f"{re.escape(lo)}-{re.escape(hi)}")
            i += 3
        else:
            items.append(re.escape(chars[i]))
            i += 1
    if not items:
        raise _bad_class(pattern, f"[{body}]")
    return "".join(items)


def _bad_class(pattern: str, part: str) -> FsError:
    return FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.glob_bad_class,
                   details={"pattern": echo(pattern), "part": part})


def _pieces(seg: str, pattern: str) -> list[str | None]:
    """The segment as one regex piece per character it matches, None for each ``*``."""
    out: list[str | None] = []
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            out.append(None)
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            negated = seg[i + 1 : i + 2] in ("!", "^")
            j = seg.find("]", i + 2 if negated else i + 1)
            if j < 0:
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    reason=Reason.glob_unclosed_class,
                    details={"pattern": echo(pattern)},
                )
            body = seg[i + 2 if negated else i + 1 : j]
            # A negated class leaves out "/" too: no wildcard crosses a segment.
            out.append(f"[^{_class(body, pattern)}/]" if negated else f"[{_class(body, pattern)}]")
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return out


Segment = Callable[[str], object]
"""Whether one path segment (a name) matches one segment of a pattern (truthy: it does)."""


def _segment(seg: str, pattern: str) -> Segment:
    """A matcher for one segment whose cost is linear in the name.

    Between two ``*`` every piece matches exactly one character, so each run between stars
    has a fixed length: the first run must start the name, the last end it, and each run
    in between is taken at its leftmost place after the one before (a later place never
    leaves more room for the rest). A regex would try every split of the name among the
    stars instead: ``*a*a*a*a*a*b`` against 200 ``a``s never ends."""
    if not any(c in seg for c in "*?["):
        return seg.__eq__
    pieces = _pieces(seg, pattern)
    runs: list[list[str]] = [[]]
    for p in pieces:
        if p is None:
            runs.append([])
        else:
            runs[-1].append(p)
    if len(runs) <= 2:
        # At most one star: the regex gives the star's length up one character at a time,
        # each try costing the (fixed) length of the rest: linear, and in C.
        return re.compile("[^/]*".join("".join(r) for r in runs)).fullmatch
    first, *middle, last = ((re.compile("".join(r)), len(r)) for r in runs)
    head, n_head = first
    tail, n_tail = last
    inner = [(rx, n) for rx, n in middle if n]

    def match(name: str) -> bool:
        end = len(name) - n_tail
        if end < n_head:
            return False
        if n_head and head.match(name) is None:
            return False
        if n_tail and tail.match(name, end) is None:
            return False
        at = n_head
        for rx, _ in inner:
            found = rx.search(name, at, end)
            if found is None:
                return False
            at = found.end()
        return True

    return match


_ANY = "**"
"""A ``**`` that is not the pattern's last segment: zero or more non-empty segments."""
_REST = "**$"
"""A last ``**``: one or more segments, whatever they hold (``src/**`` is all below src)."""

_Step = Segment | str


@dataclass(frozen=True)
class _Alternative:
    """One alternative of a pattern, split where a path has fixed positions: the segments
    before its first ``**`` match the path's first segments, those after its last ``**``
    its last ones, and only the part in between (``middle``) can match segments in more
    than one way."""

    text: str
    head: tuple[Segment, ...]
    tail: tuple[Segment, ...]
    middle: tuple[_Step, ...] | None
    """None without ``**``; else from the first ``**`` to the last, inclusive."""
    regex: str | None = None
    """The same matching as one regex, when a backtracking engine runs it in linear time:
    at most one ``**`` and one ``*`` per segment (each retry of the rest then stops at the
    next ``/``). :class:`Glob` runs these in C."""

    def match(self, segs: list[str]) -> bool:
        n, h, t = len(segs), len(self.head), len(self.tail)
        if n < h + t or (self.middle is None and n != h + t):
            return False
        for i, seg in enumerate(self.head):
            if not seg(segs[i]):
                return False
        for i, seg in enumerate(self.tail, n - t):
            if not seg(segs[i]):
                return False
        if self.middle is None:
            return True
        return _walk(self.middle, segs[h : n - t])

    def enters(self, segs: list[str]) -> bool:
        """Whether a path below the directory ``segs`` may match: its first segments match
        ``head`` as far as both go, and a segment is left to take (a ``**`` after
        ``head`` takes any). Loose where a ``**`` follows: what comes after it is not
        tried."""
        head, k = self.head, len(segs)
        if self.middle is None and k >= len(head):
            return False
        return all(seg(name) for seg, name in zip(head, segs, strict=False))


def _walk(steps: tuple[_Step, ...], segs: list[str]) -> bool:
    """Whether ``steps`` match all of ``segs``: the set of places the pattern can be at,
    advanced one segment at a time, so each segment is tried against each step at most
    once (a backtracking regex retries the rest for every way of splitting the path among
    several ``**``: exponential in their number)."""
    end = len(steps)
    if all(s == _ANY for s in steps):
        return "" not in segs
    if all(isinstance(s, str) for s in steps):  # **s ending the pattern
        return bool(segs)

    def closure(places: set[int]) -> set[int]:
        for j in sorted(places):
            while j < end and steps[j] == _ANY:
                j += 1
                places.add(j)
        return places

    at = closure({0})
    for seg in segs:
        nxt: set[int] = set()
        for j in at:
            if j == end:
                continue
            step = steps[j]
            if step == _ANY:
                if seg:
                    nxt.add(j)
            elif step == _REST:
                nxt.update((j, end))
            elif not isinstance(step, str) and step(seg):
                nxt.add(j + 1)
        if not nxt:
            return False
        at = closure(nxt)
    return end in at


def _regex(raw: list[str], pattern: str) -> str | None:
    if raw.count("**") > 1 or any(seg.count("*") > 1 for seg in raw if seg != "**"):
        return None
    parts: list[str] = []
    for n, seg in enumerate(raw):
        last = n == len(raw) - 1
        if seg == "**":
            parts.append("(?s:.*)" if last else "(?:[^/]+/)*")
        else:
            pieces = _pieces(seg, pattern)
            parts.append("".join("[^/]*" if p is None else p for p in pieces)
                         + ("" if last else "/"))
    return "".join(parts)


def _alternative(text: str, pattern: str) -> _Alternative:
    raw = text.split("/")
    steps: list[_Step] = [
        (_REST if n == len(raw) - 1 else _ANY) if seg == "**" else _segment(seg, pattern)
        for n, seg in enumerate(raw)
    ]
    stars = [n for n, s in enumerate(steps) if isinstance(s, str)]
    lo, hi = (stars[0], stars[-1] + 1) if stars else (len(steps), len(steps))
    fixed = [s for s in steps if not isinstance(s, str)]
    head, tail = fixed[:lo], fixed[len(fixed) - (len(steps) - hi):]
    return _Alternative(text, tuple(head), tuple(tail), tuple(steps[lo:hi]) if stars else None,
                        _regex(raw, pattern))


@dataclass(frozen=True)
class Glob:
    """A compiled glob: ``match`` takes a path relative to the search directory."""

    pattern: str
    alternatives: tuple[_Alternative, ...]
    """The pattern's brace expansions, each a relative pattern that cannot leave the search
    directory (no ``..``, no leading ``/``)."""
    base: str
    """The literal leading directories of the pattern (``src/app`` of ``src/app/**/*.py``):
    only that part of the tree needs walking."""
    named: frozenset[str]
    """Hidden or dependency segment names the pattern spells out, so they are searched."""
    dot_wildcard: bool = False
    """The pattern has a segment like ``.*``: hidden names match it where it stands."""

    _fast: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    _slow: tuple[_Alternative, ...] = field(init=False, repr=False, compare=False)
    _everywhere: bool = field(init=False, repr=False, compare=False)
    suffixes: tuple[str, ...] | None = field(init=False, repr=False, compare=False)
    """When every alternative is ``**/*SUFFIX`` after ``base`` (a literal suffix): a path
    below ``base`` matches exactly when it ends with one of them (``**/*.py`` and
    ``src/**/*.py``: ``.py``). A segment never holds ``/``, so the path's end is its last
    segment's end: a walk of ``base`` tests the name, no regex."""
    names: tuple[Segment, ...] | None = field(init=False, repr=False, compare=False)
    """When every alternative is ``**/NAME`` after ``base`` (``**/test_*.py``): a path
    below ``base`` matches exactly when its last segment matches one of these (a ``**``
    not last takes any directories): a walk of ``base`` tests the name alone."""

    def __post_init__(self) -> None:
        fast = [a.regex for a in self.alternatives if a.regex is not None]
        compiled = re.compile("|".join(f"(?:{r})" for r in fast)) if fast else None
        object.__setattr__(self, "_fast", compiled)
        object.__setattr__(self, "_slow", tuple(a for a in self.alternatives
                                                if a.regex is None))
        # A pattern starting with ** may match below any directory.
        object.__setattr__(self, "_everywhere", any(
            not a.head and a.middle is not None for a in self.alternatives))
        # A base is only ever the leading segments of a single alternative.
        below = len(self.base.split("/")) if self.base else 0
        raw = [a.text.split("/")[below:] for a in self.alternatives]
        suffixes = tuple(r[1][1:] for r in raw if len(r) == 2 and r[0] == "**"
                         and r[1][:1] == "*" and not any(c in r[1][1:] for c in "*?["))
        object.__setattr__(self, "suffixes",
                           suffixes if len(suffixes) == len(raw) else None)
        last = tuple(a.tail[0] for a, r in zip(self.alternatives, raw, strict=True)
                     if len(r) == 2 and r[0] == "**" and r[1] != "**")
        object.__setattr__(self, "names", last if len(last) == len(raw) else None)

    def match(self, relative: str) -> bool:
        """Whether ``relative`` matches, in time linear in its length for a given pattern."""
        fast = self._fast
        if fast is not None and fast.fullmatch(relative) is not None:
            return True
        slow = self._slow
        if not slow:
            return False
        segs = relative.split("/")
        return any(a.match(segs) for a in slow)

    def allows(self, relative: str) -> bool:
        """False when ``relative`` lies in a hidden or dependency directory (or is a hidden
        file) that the pattern does not name."""
        return all(self.allows_name(seg) for seg in relative.split("/"))

    def allows_name(self, name: str) -> bool:
        """Whether a search takes a file or enters a directory of this name: not a hidden
        or dependency name, or one the pattern names (by name, or by a wildcard segment
        starting with a dot, for a hidden name)."""
        if not is_skipped(name) or name in self.named:
            return True
        return self.dot_wildcard and name.startswith(".")

    def enters(self, relative: str) -> bool:
        """Whether a path below the directory ``relative`` ("" for the search directory)
        may match: False lets a walk leave it unlisted (``src/*.py`` needs nothing below
        ``src/a``). Loose: True for some directories with nothing to match below."""
        if self._everywhere:
            return True
        segs = relative.split("/") if relative else []
        return any(a.enters(segs) for a in self.alternatives)


def echo(pattern: str) -> str:
    """A pattern as a message may quote it: whole when short, else its start, marked cut.
    A model pasting a huge pattern gets a sentence about it, not the pattern back."""
    if len(pattern) <= ECHO_CHARS:
        return pattern
    return f"{pattern[:ECHO_CHARS]}... ({len(pattern):,} characters)"


def compile_glob(pattern: str, *, max_chars: int | None = None) -> Glob:
    """Compile ``pattern`` (FS_INVALID_ARGUMENT with the fix when it cannot be used).

    ``max_chars``: a longer pattern is refused before any work is done on it (the tools
    pass the workspace's ``Limits.glob_pattern_chars``)."""
    if max_chars is not None and len(pattern) > max_chars:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.glob_too_long,
                      details={"length": len(pattern), "max": max_chars})
    if not pattern or not pattern.strip():
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.glob_empty)
    if "\x00" in pattern:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.path_nul)
    p = _normalize(pattern.strip()) or "**"
    texts: list[str] = []
    for raw in _expand(p):
        # After expansion, not before: "{..}/**" has no ".." segment until its braces open.
        if any(seg == ".." for seg in raw.split("/")):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.glob_parent,
                          details={"pattern": echo(pattern)})
        text = _normalize(raw)
        if text not in texts:
            texts.append(text)
    alternatives = tuple(_alternative(t, pattern) for t in texts)
    base_parts: list[str] = []
    if len(texts) == 1:
        for seg in texts[0].split("/")[:-1]:
            if any(ch in seg for ch in "*?["):
                break
            base_parts.append(seg)
    named = frozenset(
        seg for a in texts for seg in a.split("/") if is_skipped(seg)
        and not any(ch in seg for ch in "*?[")
    )
    dot_wildcard = any(
        seg.startswith(".") and any(ch in seg for ch in "*?[")
        for a in texts for seg in a.split("/")
    )
    return Glob(pattern=p, alternatives=alternatives, base="/".join(base_parts), named=named,
                dot_wildcard=dot_wildcard)
