"""Glob patterns with ``**``, as agents write them (``src/**/*.py``, ``**/*.{ts,tsx}``).

Semantics (the common ones of fast-glob, ripgrep and Python's ``pathlib``):

- ``*`` matches any characters within one path segment, ``?`` one character, ``[abc]`` /
  ``[!abc]`` a class; none of them matches ``/``.
- ``**`` as a whole segment matches zero or more segments: ``src/**/*.py`` matches
  ``src/a.py`` and ``src/x/y/a.py``; a trailing ``**`` matches everything below.
- ``{a,b}`` alternatives expand into several patterns (at most :data:`MAX_ALTERNATIVES`).
- Patterns are relative to the search directory; a leading ``/`` anchors them at the
  workspace root instead. ``*.py`` matches only the directory's own files: use ``**/*.py``
  to search below it.

Hidden and dependency directories (``.git``, ``node_modules``, ...) are not searched unless
the pattern or the search path names them: see :func:`mentions`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import ErrorCode, FsError

__all__ = [
    "MAX_ALTERNATIVES",
    "SKIP_DIRS",
    "Glob",
    "compile_glob",
    "is_skipped",
]

MAX_ALTERNATIVES = 64
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
                reason="glob_too_many_alternatives",
                details={"pattern": pattern, "max": MAX_ALTERNATIVES},
            )
        out = nxt
        if not changed:
            return out


def _segment(seg: str, pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(seg):
        c = seg[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = seg.find("]", i + 2 if seg[i + 1 : i + 2] in ("!", "^") else i + 1)
            if j < 0:
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    reason="glob_unclosed_class",
                    details={"pattern": pattern},
                )
            body = seg[i + 1 : j]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\").replace("/", "") + "]")
            i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _translate(pattern: str) -> str:
    segments = pattern.split("/")
    parts: list[str] = []
    for n, seg in enumerate(segments):
        last = n == len(segments) - 1
        if seg == "**":
            # zero or more whole segments (each followed by "/" unless it is the end)
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_segment(seg, pattern) + ("" if last else "/"))
    return "".join(parts)


@dataclass(frozen=True)
class Glob:
    """A compiled glob: ``match`` takes a path relative to the search directory."""

    pattern: str
    regex: re.Pattern[str]
    base: str
    """The literal leading directories of the pattern (``src/app`` of ``src/app/**/*.py``):
    only that part of the tree needs walking."""
    named: frozenset[str]
    """Hidden or dependency segment names the pattern spells out, so they are searched."""
    dot_wildcard: bool = False
    """The pattern has a segment like ``.*``: hidden names match it where it stands."""

    def match(self, relative: str) -> bool:
        return self.regex.fullmatch(relative) is not None

    def allows(self, relative: str) -> bool:
        """False when ``relative`` lies in a hidden or dependency directory (or is a hidden
        file) that the pattern does not name."""
        for seg in relative.split("/"):
            if not is_skipped(seg) or seg in self.named:
                continue
            if seg.startswith(".") and self.dot_wildcard:
                continue
            return False
        return True


def compile_glob(pattern: str) -> Glob:
    """Compile ``pattern`` (FS_INVALID_ARGUMENT with the fix when it cannot be used)."""
    if not pattern or not pattern.strip():
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="glob_empty")
    if "\x00" in pattern:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="path_nul")
    p = pattern.strip()
    while p.startswith("./"):
        p = p[2:]
    p = re.sub(r"/+", "/", p).strip("/") or "**"
    if any(seg == ".." for seg in p.split("/")):
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="glob_parent",
                      details={"pattern": pattern})
    alternatives = _expand(p)
    regex = re.compile("|".join(f"(?:{_translate(a)})" for a in alternatives))
    base_parts: list[str] = []
    if len(alternatives) == 1:
        for seg in alternatives[0].split("/")[:-1]:
            if any(ch in seg for ch in "*?["):
                break
            base_parts.append(seg)
    named = frozenset(
        seg for a in alternatives for seg in a.split("/") if is_skipped(seg)
        and not any(ch in seg for ch in "*?[")
    )
    dot_wildcard = any(
        seg.startswith(".") and any(ch in seg for ch in "*?[")
        for a in alternatives for seg in a.split("/")
    )
    return Glob(pattern=p, regex=regex, base="/".join(base_parts), named=named,
                dot_wildcard=dot_wildcard)
