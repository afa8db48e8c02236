"""The ignore rules of one finder call: the ``.gitignore`` and ``.ignore`` files of the
tree searched and of the directories above it, with git's semantics (docs/finders.md,
"Ignored files").

The patterns of one file are git's, as ``pathspec`` translates them (negation, ``x/``
for directories only, anchoring by a slash, ``**``): within a file the last pattern that
matches decides. Between files, as ripgrep decides: a match in a ``.ignore`` file (a
deeper one first) wins over any ``.gitignore`` match, and among ``.gitignore`` files the
deepest that matches decides. A path below an ignored directory is ignored whatever a
deeper file says: the walk never enters that directory (git does not either). The rules
hold on every store, whether or not a ``.git`` exists (as ``rg --no-require-git``).

One :class:`Ignores` serves one call. It learns which directories hold ignore files from
the walk itself: a local walk reports each directory's names (``listed``), a flat walk of
an object store passes its entries through :meth:`Ignores.flat`, a listing through
:meth:`Ignores.screen`; a directory it never saw listed (those above the search) is read
directly. Each ignore file is read once per call through the backend's own reads, and
its parsed rules are kept per process by content and by (key, version), so an unchanged
file is parsed once (and, where a listing says its version, not even read).

Paths named explicitly are never left out: the search directory and those above it, and
any directory or file whose name is a literal segment of the call's glob (``named``).
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pathspec.patterns.gitignore.spec import GitIgnoreSpecPattern

from .backends.base import Blob, Entry
from .errors import FsError
from .globs import Glob
from .versions import Version

__all__ = ["MAX_BYTES", "MAX_HELD", "NAMES", "SCREEN_HELD", "SURVEY_MAX", "Carried", "Ignores",
           "Rules", "literal_names", "parse"]

NAMES = (".ignore", ".gitignore")
"""The ignore files of a directory, the one that wins first."""
MAX_BYTES = 1 << 20
"""A larger ignore file is not read: it holds no rules (as one not UTF-8 holds none)."""
MAX_HELD = 10_000
"""The most entries of a flat walk held back while an ignore file of their directory may
still come; past it, the directory's ignore files are read directly."""
SCREEN_HELD = 256
"""The most entries of one listing held back until its end says whether the directory
has ignore files; past it, they are read directly (a listing may be capped to what its
output shows, and holds no more than that)."""
SURVEY_MAX = 1000
"""The most entries a listing of a directory above the search is read for (a page of an
object store's listing); past it, its two ignore files are read directly."""
_LAST = ".ignore"
"""The name of a directory's ignore files that sorts last: once a walk in key order has
passed ``dir/.ignore``, the directory's ignore files have all been listed."""
_PARSED_BYTES = 16 << 20
"""What the process keeps of parsed ignore files, by the size of their text."""

T = TypeVar("T")


class Rules:
    """The patterns of one ignore file, matched as git matches them against a path
    relative to the file's directory."""

    def __init__(self, source: bytes, text: str) -> None:
        self.source = source
        patterns: list[GitIgnoreSpecPattern] = []
        for line in text.splitlines():
            try:
                pattern = GitIgnoreSpecPattern(line)
            except ValueError:
                continue  # a pattern git cannot use is left out, as git leaves it
            if pattern.include is not None and pattern.regex is not None:
                patterns.append(pattern)
        self.count = len(patterns)
        # pathspec matches a directory's contents through its directory-mark group (so
        # that a pattern excluding a directory matches the files under it); here a walk
        # asks about the directory itself, so a pattern matches only the path asked: a
        # file never through the mark, a directory (asked without its slash) at its end.
        sources = [p.regex.pattern for p in patterns if p.regex is not None]
        includes = [bool(p.include) for p in patterns]
        # A pattern with no slash but a last one matches a name at any depth: it is
        # matched against the last name alone, not tried after each slash of the path.
        names = [isinstance(p.pattern, str) and "/" not in p.pattern.rstrip("/")
                 and s.startswith(_ANY_DEPTH) for p, s in zip(patterns, sources, strict=True)]
        self._file = _Matcher([_MARK.sub(_NEVER, s) for s in sources], includes, names)
        self._dir = _Matcher([_MARK.sub(r"\\Z", s) for s in sources], includes, names)

    def decide(self, path: str, is_dir: bool) -> bool | None:
        """True: ignored; False: re-included (a negation); None: no pattern matches."""
        return (self._dir if is_dir else self._file).decide(path)

    def __reduce__(self) -> tuple[Any, ...]:
        # Crosses to a helper process as its text: parsed there once (``parse``'s cache).
        return (parse, (self.source,))


_MARK = re.compile(r"\(\?P<\w+>/\)")
"""pathspec's directory mark: the ``/`` after a name that makes the rest contents."""
_NEVER = "(?!)"
_NAMES_KEPT = 1 << 16
_ANY_DEPTH = "^(?:.+/)?"
"""How pathspec starts the regex of a pattern that matches at any depth."""
_EARLY = re.compile(r"(?:^|(?<=/))[\x00-.]")
"""A name that may sort before ``.ignore`` (its first character is at most ``.``)."""


class _Matcher:
    """The last of several patterns that matches a path: those matching a name at any
    depth against the path's last name, the others against the whole path, each kind in
    one regex run (the patterns in reverse order as alternatives: the first that matches
    is the last in the file), and the later of the two decides."""

    def __init__(self, sources: list[str], includes: list[bool], names: list[bool]) -> None:
        self._includes = includes
        # A pattern ending in what can never match (a directory's pattern, asked about a
        # file) is left out of the run.
        kept = [i for i, s in enumerate(sources) if not s.endswith(_NEVER)]
        self._name = _Alternatives([("^" + sources[i][len(_ANY_DEPTH):], i)
                                    for i in kept if names[i]])
        self._path = _Alternatives([(sources[i], i) for i in kept if not names[i]])
        self._by_name: dict[str, int] = {}
        """What ``_name`` says of each name met: a tree repeats its names (``__init__.py``,
        ``README.md``), and the rules of a file serve every call of the process."""

    def decide(self, path: str) -> bool | None:
        at = self._path.last(path) if self._path.any else -1
        if self._name.any:
            name = path.rpartition("/")[2]
            by_name = self._by_name.get(name)
            if by_name is None:
                if len(self._by_name) >= _NAMES_KEPT:
                    self._by_name = {}
                by_name = self._by_name[name] = self._name.last(name)
            if by_name > at:
                at = by_name
        return None if at < 0 else self._includes[at]


class _Alternatives:
    def __init__(self, patterns: list[tuple[str, int]]) -> None:
        self.any = bool(patterns)
        self._index = [i for _, i in patterns[::-1]]
        self._each = [re.compile(s) for s, _ in patterns[::-1]]
        self._one: re.Pattern[str] | None = None
        if patterns:
            one = re.compile("|".join(f"({s})" for s, _ in patterns[::-1]))
            if one.groups == len(patterns):  # else a pattern has groups of its own
                self._one = one

    def last(self, text: str) -> int:
        """The index of the last pattern that matches ``text`` (-1: none does)."""
        one = self._one
        if one is not None:
            m = one.match(text)
            return -1 if m is None else self._index[(m.lastindex or 1) - 1]
        for rx, i in zip(self._each, self._index, strict=True):
            if rx.match(text) is not None:
                return i
        return -1


_cache: OrderedDict[bytes, Rules | None] = OrderedDict()
_cached_bytes = 0
_versions: OrderedDict[tuple[Hashable, str, str], Rules | None] = OrderedDict()
_cache_lock = threading.Lock()


def parse(data: bytes) -> Rules | None:
    """The rules of an ignore file's bytes (None: too large, not UTF-8, no pattern); kept
    by content, so the same file is parsed once per process."""
    global _cached_bytes
    with _cache_lock:
        if data in _cache:
            _cache.move_to_end(data)
            return _cache[data]
    rules: Rules | None = None
    if len(data) <= MAX_BYTES:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = ""
        if text.startswith("\ufeff"):
            text = text[1:]
        rules = Rules(data, text) if text else None
        if rules is not None and not rules.count:
            rules = None
    with _cache_lock:
        _cache[data] = rules
        _cached_bytes += len(data)
        while _cached_bytes > _PARSED_BYTES and len(_cache) > 1:
            old, _ = _cache.popitem(last=False)
            _cached_bytes -= len(old)
    return rules


def _by_version(storage: Hashable, key: str, version: Version) -> tuple[bool, Rules | None]:
    with _cache_lock:
        k = (storage, key, str(version))
        if k in _versions:
            _versions.move_to_end(k)
            return True, _versions[k]
    return False, None


def _remember(storage: Hashable, key: str, version: Version, rules: Rules | None) -> None:
    with _cache_lock:
        _versions[(storage, key, str(version))] = rules
        while len(_versions) > 4096:
            _versions.popitem(last=False)


def literal_names(glob: Glob | None) -> frozenset[str]:
    """The segments a glob spells out (no wildcard in them): named, so never left out."""
    if glob is None:
        return frozenset()
    return frozenset(seg for a in glob.alternatives for seg in a.text.split("/")
                     if seg and not any(c in seg for c in "*?["))


def _parent(key: str) -> str:
    return key.rpartition("/")[0]


def _join(d: str, name: str) -> str:
    return f"{d}/{name}" if d else name


_Pair = tuple[Rules | None, Rules | None]
_NONE: _Pair = (None, None)


@dataclass(frozen=True)
class Carried:
    """What a helper process needs of a call's rules to search one part of the tree: the
    search directory, the names spelled out, and the rules of the directories above the
    part (picklable; a part's own ignore files are read by the helper's walk)."""

    root: str
    named: frozenset[str]
    rules: tuple[tuple[str, Rules | None, Rules | None], ...]


class Ignores:
    """The ignore rules of one finder call below the directory ``root`` (see the module
    docstring), and how many paths they left out (``ignored``)."""

    def __init__(self, read: Callable[[str], Blob] | None, root: str,
                 named: frozenset[str] = frozenset(), storage: Hashable = None,
                 listing: Callable[[str], Iterable[Entry]] | None = None) -> None:
        self._read = read
        self._listing = listing
        self.root = root
        self.named = named
        self._storage = storage
        self._rules: dict[str, _Pair] = {}
        self._present: dict[str, dict[str, tuple[Version | None, int | None]]] = {}
        self._flat_at: str | None = None
        """In a flat walk: the last key it yielded (every ignore file sorting before it is
        noted in ``_present``)."""
        self._parts: dict[str, tuple[tuple[tuple[Rules, int], ...],
                                     tuple[tuple[Rules, int], ...]]] = {}
        """Per directory: the rules above it and its own (see ``_parts_of``)."""
        self._verdicts: dict[str, bool] = {}
        """Directories below ``root`` (none below an ignored one): whether ignored."""
        self._memo: tuple[str | None, list[tuple[Rules, int]]] = (None, [])
        """The last directory asked about and its rules (a walk asks about its files in
        turn)."""
        self._last_out: str | None = None
        self._clear: str | None = None
        """The last directory found to have no ignored directory above it."""
        self._lock = threading.RLock()
        self.dirs_left = 0
        """Ignored directories left out (each counted once: the walk does not enter it)."""
        self.searched: Callable[[str], bool] | None = None
        """Whether the call searches a directory or file of this name (None: every one).
        The rules are not asked about a name it does not search, nor about anything
        below such a directory: the call leaves those out as hidden (``.venv``, ``.git``,
        ``node_modules``, ...), whatever an ignore file says, so every walk counts them
        alike, whether it prunes hidden directories unlisted or lists every key."""
        self.counts_dir: Callable[[str], bool] | None = None
        """Which ignored directories count (None: all): a glob counts only those below
        which its pattern may match, as it counts hidden ones."""
        self.files_left = 0
        """Ignored files left out that would otherwise have been results."""

    @property
    def ignored(self) -> int:
        return self.dirs_left + self.files_left

    @classmethod
    def resume(cls, carried: Carried) -> Ignores:
        """A helper's rules for a part of the call (see :class:`Carried`)."""
        ig = cls(None, carried.root, carried.named)
        for d, first, second in carried.rules:
            ig._rules[d] = (first, second)
        return ig

    def carried(self, key: str, inclusive: bool) -> Carried:
        """The rules a helper searching the part at directory ``key`` needs: those of the
        directories above it (and of ``key`` itself when ``inclusive``), read here now."""
        dirs = [key] if inclusive else []
        d = key
        while d:
            d = _parent(d)
            dirs.append(d)
        return Carried(self.root, self.named,
                       tuple((d, *self._rules_of(d)) for d in reversed(dirs)))

    # -- what the walk says ------------------------------------------------------------
    def listed(self, key: str, names: Collection[str],
               read: Callable[[str, int], bytes | None] | None = None) -> None:
        """The directory ``key`` holds ``names``: its ignore files are read now through
        ``read`` (a local walk, holding the directory open; None: unreadable), or later
        through the backend's reads, when a path below it is asked about."""
        found = [n for n in NAMES if n in names]
        if not found:
            self._rules.setdefault(key, _NONE)
            return
        if read is None:
            with self._lock:
                if key not in self._rules:
                    self._present[key] = {n: (None, None) for n in found}
            return
        got: list[Rules | None] = []
        for name in NAMES:
            data = read(name, MAX_BYTES) if name in found else None
            got.append(None if data is None else parse(data))
        self._rules[key] = (got[0], got[1])

    def prunes(self, key: str) -> bool:
        """Whether a walk leaves out the directory ``key`` (counted once, here)."""
        if not self.ignores_dir(key):
            return False
        if self.counts_dir is None or self.counts_dir(key):
            self.dirs_left += 1
        return True

    def ignores_dir(self, key: str) -> bool:
        """Whether the directory ``key`` below ``root`` is ignored, not counted (its
        parents were asked about already, as for ``prunes``)."""
        if self.searched is not None and not self.searched(key.rpartition("/")[2]):
            return False
        return self._below_root(key) and self._ignored(key, True)

    def excludes_file(self, key: str) -> bool:
        """Whether the file ``key`` is ignored, by itself (its directories were asked
        about already: ``prunes``, ``below_ignored``); counted when it is."""
        memo = self._memo  # the common case first: a directory no rules speak of
        if memo[0] == key.rpartition("/")[0] and not memo[1]:
            return False
        if self.searched is not None and not self.searched(key.rpartition("/")[2]):
            return False
        if not self._below_root(key) or not self._ignored(key, False):
            return False
        self.files_left += 1
        return True

    def excludes_dir(self, key: str) -> bool:
        """Whether the directory ``key`` (a listing's entry) is ignored; counted once per
        call when it is."""
        return self.prunes(key)

    def below_ignored(self, key: str) -> bool:
        """Whether a directory between ``root`` and the path ``key`` is ignored (see
        ``left_out``)."""
        d = key.rpartition("/")[0]
        return d != self._clear and self.left_out(d)

    def left_out(self, d: str) -> bool:
        """Whether the directory ``d``, or one between ``root`` and it, is ignored: the
        topmost such directory is counted once (paths come in key order, so those below
        one directory come together)."""
        last = self._last_out
        if last is not None and (d + "/").startswith(last):
            return True
        top = self._topmost(d)
        if top is None:
            return False
        self._last_out = top + "/"
        if self.counts_dir is None or self.counts_dir(top):
            self.dirs_left += 1
        return True

    def _topmost(self, d: str) -> str | None:
        """The topmost ignored directory from ``root`` down to ``d`` (None: none is);
        from the top, so nothing below an ignored directory is asked about (nor its
        ignore files read)."""
        if d == self._clear:
            return None  # the files of one directory come together
        if not self._below_root(d):
            return None
        root, searched = self.root, self.searched
        at = root
        for seg in (d[len(root) + 1:] if root else d).split("/"):
            if searched is not None and not searched(seg):
                break  # left out as hidden: not the rules' to count
            at = _join(at, seg)
            verdict = self._verdicts.get(at)
            if verdict is None:
                verdict = self._verdicts[at] = self._ignored(at, True)
            if verdict:
                return at
        self._clear = d
        return None

    def _below_root(self, key: str) -> bool:
        root = self.root
        return key != root and (not root or key.startswith(root + "/"))

    def applies_in(self, d: str) -> bool:
        """Whether any rules speak of the paths in the directory ``d`` (a walk asks once
        per directory and skips ``excludes_file`` for its files when none do: most trees
        hold few ignore files)."""
        memo = self._memo
        if memo[0] == d:
            return bool(memo[1])
        chain = self._chain_of(d)
        self._memo = (d, chain)
        return bool(chain)

    # -- the rules ---------------------------------------------------------------------
    def _ignored(self, path: str, is_dir: bool) -> bool:
        parent, _, name = path.rpartition("/")
        memo = self._memo  # one read: another thread (an index's walk) may set it
        if memo[0] == parent:
            chain = memo[1]
        else:
            chain = self._chain_of(parent)
            self._memo = (parent, chain)
        if not chain or name in self.named:
            return False
        for rules, start in chain:
            verdict = rules.decide(path[start:], is_dir)
            if verdict is not None:
                return verdict
        return False

    def _chain_of(self, d: str) -> list[tuple[Rules, int]]:
        """The rules that speak of the paths in the directory ``d``, in the order they
        decide (every .ignore first, deepest first, then every .gitignore: ripgrep's
        order), each with where a path's part relative to its directory starts."""
        first, second = self._parts_of(d)
        return [*first, *second]

    def _parts_of(self, d: str) -> tuple[tuple[tuple[Rules, int], ...],
                                         tuple[tuple[Rules, int], ...]]:
        """The .ignore and the .gitignore rules of ``d`` and the directories above it,
        deepest first: built on its parent's (kept per directory: a walk asks about every
        directory, each below one it asked about already)."""
        got = self._parts.get(d)
        if got is None:
            own_ignore, own_git = self._rules_of(d)
            start = len(d) + 1 if d else 0
            up_ignore, up_git = self._parts_of(_parent(d)) if d else ((), ())
            got = ((((own_ignore, start),) if own_ignore is not None else ()) + up_ignore,
                   (((own_git, start),) if own_git is not None else ()) + up_git)
            self._parts[d] = got
        return got

    def _rules_of(self, d: str) -> _Pair:
        got = self._rules.get(d)
        if got is not None:
            return got
        with self._lock:
            got = self._rules.get(d)
            if got is not None:
                return got
            present = self._present.pop(d, None)
            if present is None:
                if self._complete(d):
                    self._rules[d] = _NONE
                    return _NONE
                present = self._survey(d)  # never listed (above the search)
            pair = (self._load(d, NAMES[0], present), self._load(d, NAMES[1], present))
            self._rules[d] = pair
            return pair

    def _survey(self, d: str) -> dict[str, tuple[Version | None, int | None]]:
        """Which ignore files the directory ``d`` holds, from one listing of it (a read of
        a missing file costs an object store a second request, to tell it from a
        directory); both are read when it lists more than ``SURVEY_MAX`` entries."""
        both: dict[str, tuple[Version | None, int | None]] = {n: (None, None) for n in NAMES}
        if self._listing is None:
            return both
        found: dict[str, tuple[Version | None, int | None]] = {}
        it = iter(self._listing(d))
        try:
            for i, e in enumerate(it, 1):
                if e.name in NAMES and e.kind == "file":
                    found[e.name] = (None, e.size)
                if i >= SURVEY_MAX:
                    return both  # (before asking for more: a page more is a request)
        except FsError:
            return {}  # no directory there (or none readable): no ignore files
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
        return found

    def _complete(self, d: str) -> bool:
        """Whether a flat walk has listed every ignore file of ``d`` (it is at or below
        ``root`` and the walk has passed where they sort)."""
        at = self._flat_at
        if at is None or not (d == self.root or self._below_root(d)):
            return False
        return at >= _join(d, _LAST)

    def _load(self, d: str, name: str,
              present: Mapping[str, tuple[Version | None, int | None]]) -> Rules | None:
        if name not in present or self._read is None:
            return None
        version, size = present[name]
        if size is not None and size > MAX_BYTES:
            return None
        key = _join(d, name)
        if version is not None:
            known, rules = _by_version(self._storage, key, version)
            if known:
                return rules
        try:
            blob = self._read(key)
        except FsError:
            return None  # none there (or none readable): no rules
        rules = parse(blob.data)
        _remember(self._storage, key, blob.version, rules)
        return rules

    # -- flat walks and listings ---------------------------------------------------------
    def flat(self, pairs: Iterable[tuple[Entry, T]]) -> Iterator[tuple[Entry, T]]:
        """A walk in key order (with anything beside each entry), less the paths below
        ignored directories (counted), each yielded once the ignore files of all its
        directories are known: an entry that sorts before an ignore file of one of its
        directories (``a/-x.txt`` before ``a/.gitignore``) is held back until the walk
        has passed that file's place, or until ``MAX_HELD`` are held (their directories'
        ignore files are then read directly)."""
        held: deque[tuple[Entry, T]] = deque()
        early = _EARLY.search
        start = len(self.root) + 1 if self.root else 0
        for pair in pairs:
            e = pair[0]
            k = e.key
            self._flat_at = k  # (one assignment: a reader on another thread sees either)
            if not held and early(k, start) is None:
                # No name on its way sorts before ".ignore" (the common case): nothing
                # to wait for.
                if not self.below_ignored(k):
                    yield pair
                continue
            name = k.rpartition("/")[2]
            if name in NAMES and e.kind == "file":
                d = _parent(k)
                if d == self.root or self._below_root(d):
                    with self._lock:
                        if d not in self._rules:
                            version = pair[1] if isinstance(pair[1], Version) else None
                            self._present.setdefault(d, {})[name] = (version, e.size)
            held.append(pair)
            yield from self._release(held, len(held) > MAX_HELD)
        self._flat_at = "\U0010ffff"
        yield from self._release(held, False)

    def _release(self, held: deque[tuple[Entry, T]], force: bool
                 ) -> Iterator[tuple[Entry, T]]:
        while held:
            k = held[0][0].key
            waiting = self._waiting(k)
            if waiting:
                if not force:
                    return
                for d in waiting:
                    self._rules_of_now(d)
            pair = held.popleft()
            if not self.below_ignored(k):
                yield pair

    def _waiting(self, k: str) -> list[str]:
        """The directories of ``k`` (at or below ``root``) whose ignore files a flat walk
        may still list."""
        root = self.root
        if _EARLY.search(k, len(root) + 1 if root else 0) is None:
            return []  # no name sorts before ".ignore": the common case, decided at once
        segs = (k[len(root) + 1:] if root else k).split("/")
        out = []
        d = root
        for i, seg in enumerate(segs):
            if "/".join(segs[i:]) < _LAST and d not in self._rules and not self._complete(d):
                out.append(d)
            d = _join(d, seg)
        return out

    def _rules_of_now(self, d: str) -> None:
        """Read ``d``'s ignore files directly (the walk has not reached them yet)."""
        with self._lock:
            if d in self._rules:
                return
            present = {n: (None, None) for n in NAMES}
            self._present.pop(d, None)
            self._rules[d] = (self._load(d, NAMES[0], present),
                              self._load(d, NAMES[1], present))

    def screen(self, key: str, entries: Iterable[Entry]) -> Iterator[Entry]:
        """A listing of the directory ``key`` (in any order), less its ignored entries
        (counted): held until the listing ends, or ``SCREEN_HELD`` entries (its ignore
        files are then read directly)."""
        held: list[Entry] = []
        it = iter(entries)
        for e in it:
            held.append(e)
            if len(held) > SCREEN_HELD:
                self._rules_of_now(key)
                break
        else:
            self.listed(key, [e.name for e in held if e.kind == "file"])
        for e in held:
            if not self._left_out(e):
                yield e
        for e in it:
            if not self._left_out(e):
                yield e

    def _left_out(self, e: Entry) -> bool:
        if e.kind == "directory":
            return self.excludes_dir(e.key)
        return self.excludes_file(e.key)
