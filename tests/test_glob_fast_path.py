"""The local glob's walk by names (``LocalBackend.walk_names``): it answers exactly what the
plain walk answers (paths, total, limit, hidden, partial) on a tree with every kind of
entry, and what an object store's flat listing of the same files answers; its hooks
prune before listing and see each directory's names before its files; and ``hidden``
counts each hidden or dependency directory not searched once, each hidden matching file
once, on every path."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsseam.deadline
import fsseam.seam.finding
from fsseam import ListEvent, Overwrite, Workspace, hookimpl
from fsseam.backends.local import LocalBackend
from fsseam.errors import ErrorCode, FsError
from fsseam.globs import compile_glob
from fsseam.outcomes import GlobOutcome
from fsseam.paths import MAX_PATH_DEPTH
from fsseam.policy.reserved import ReservedKeys

from .budget import examples

FILES = (
    # Names that sort around "/" and ".": "a-b.txt", "a.d/x.py" and "a.txt" sort before
    # "a/...", "a0.txt" after it.
    "a.txt", "a-b.txt", "a0.txt", "a.d/x.py", "a/x.py", "a/b.txt", "a/a/a.txt", "a/.b.py",
    "b.py", ".env", ".hidden.py", "src/x.py", "src/y.js", "src/sub/x.py",
    "src/sub/deep/z.py", "src/.cache/c.py", "src/.cache/more/d.py",
    "src/__pycache__/x.cpython.pyc", "src/lib/one.txt", "src/lib/two.py",
    "src/x/y/z/w.xyzw", "node_modules/pkg/index.js", "node_modules/pkg/.bin/run.js",
    "node_modules/pkg/node_modules/inner/i.js", "pkg/node_modules/dep/d.js", ".git/HEAD",
    ".git/objects/ab/cdef", ".venv/lib/site.py", ".github/workflows/ci.yml",
    "docs/node_modules", "docs/index.md", "lib/lib/lib.py", "z.py",
)
"""The regular files, on every store."""

PATTERNS = [
    "**/*.py", "**/*", "**", "*.py", "*", "src/**", "src/*.py", "src/**/*.py", "**/.*",
    ".*/**", "**/.*/**", "node_modules/**", "**/node_modules/**/*.js", "**/{a,b}*.txt",
    "**/a/**", "**/*.{py,txt}", "src/*/x.py", "**/lib/*", "?.py", "**/[ab]*", "**/.venv/**",
    "**/x*y*z*w*", "a*/**", "**/.cache/*.py", "**/*.js", "a/*", "**/__pycache__/**",
    "docs/*", "**/.git/**", "nothere/**", "src/sub/**/*.py", "a/**/*.{txt,py}",
]


_TOKENS = ["a", "b", ".a", "-", "*", "*", "?", "**/", "/**", "/", "[ab]", "[!a]", "*.a",
           "{a,b}", "{a*,?b}", "{*.a,*.b}", "**/*.a", "a/**/*.a", "a/b/**/*.b", "**/a*b",
           "**/[!a]*", "a/**/{a,b*}"]
_NAMES = ["a", "b", "ab", ".a", "a.a", "b.b", "-", "ba.a"]


@settings(max_examples=examples(600), deadline=None)
@given(st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=6).map("".join),
       st.lists(st.sampled_from(_NAMES), min_size=1, max_size=5))
def test_a_walk_by_names_prunes_nothing_that_matches(pattern: str, segs: list[str]) -> None:
    """Every directory on the way to a matching path is entered, and a pattern of suffixes
    matches exactly the paths that end with one."""
    glob = compile_glob(pattern)
    path = "/".join(segs)
    if glob.match(path):
        for n in range(len(segs)):
            assert glob.enters("/".join(segs[:n])), (glob.pattern, path, n)
    if not path.startswith(f"{glob.base}/" if glob.base else ""):
        return
    if glob.suffixes is not None:
        assert glob.match(path) is path.endswith(glob.suffixes), (glob.pattern, path)
    if glob.names is not None:
        assert glob.match(path) is any(bool(s(segs[-1])) for s in glob.names), (
            glob.pattern, path)


def test_the_patterns_that_match_by_suffix() -> None:
    assert compile_glob("**/*.py").suffixes == (".py",)
    assert compile_glob("**/*.{py,pyi}").suffixes == (".py", ".pyi")
    assert compile_glob("**/*").suffixes == ("",)
    assert compile_glob("src/app/**/*.ts").suffixes == (".ts",)  # below its base, src/app
    for other in ("*.py", "src/*.py", "**/a*.py", "**/*.p?", "{**/*.py,*.js}",
                  "{src,lib}/**/*.py"):
        assert compile_glob(other).suffixes is None, other
    # A last segment alone, after a **: matched by name.
    tests = compile_glob("src/**/test_*.py").names
    assert tests is not None and [bool(tests[0](n)) for n in ("test_a.py", "a_test.py")] == [
        True, False]
    assert len(compile_glob("**/{a,b}*.txt").names or ()) == 2
    for other in ("*.py", "**/a/*.py", "**/a/**", "**", "{**/*.py,*.js}"):
        assert compile_glob(other).names is None, other
    assert not compile_glob("src/*.py").enters("src/a")
    assert compile_glob("src/*.py").enters("src") and compile_glob("**/x").enters("a/b")


def _local_tree(root: Path) -> None:
    """The files, and what only a disk has: links to a file and to directories (inside
    and outside the root), a FIFO, empty directories, hidden ones holding no file."""
    for rel in FILES:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(rel)
    (root / "link.py").symlink_to(root / "b.py")
    (root / "src" / "linked").symlink_to(root / "a")
    (root / "src" / "out").symlink_to("/etc")
    (root / ".links").mkdir()
    (root / ".links" / "l.py").symlink_to(root / "b.py")  # hidden, but no file in it
    (root / ".empty" / "deeper").mkdir(parents=True)
    (root / "node_modules" / "empty").mkdir()
    (root / "emptydir").mkdir()
    os.mkfifo(root / "src" / "pipe.py")  # a file to a walk, as the plain walk takes it


class PassThrough:
    """A plugin that sees listings (and hides nothing): the glob takes the plain walk."""

    @hookimpl
    def fs_list(self, event: ListEvent) -> None:
        pass


class NoEntryWalk(LocalBackend):
    """A local store whose entry walk must not be used: a glob here walks by names."""

    def walk(self, key: str) -> Iterator[Any]:
        raise AssertionError("the glob took the entry walk")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    _local_tree(root)
    return root


def _keys(backend: LocalBackend, key: str) -> list[str]:
    """The keys of the files of a walk by names, one after the other."""
    walk = backend.walk_names(key)
    assert walk is not None
    return [f"{here}/{n}" if here else n for here, names in walk for n in names]


def _fast(root: Path) -> Workspace:
    return Workspace(str(root), backend=NoEntryWalk(str(root)), load_entry_points=False)


def _plain(root: Path) -> Workspace:
    ws = Workspace(str(root), load_entry_points=False)
    ws.gate.register(PassThrough())
    return ws


def _memory() -> Workspace:
    ws = Workspace(f"memory://glob-fast-{uuid.uuid4().hex}", {"global_store": False},
                   load_entry_points=False)
    for rel in [*FILES, "src/pipe.py"]:
        ws.backend.write(rel, rel.encode(), Overwrite())
    return ws


def _answers(ws: Workspace, limit: int, include_ignored: bool = False
             ) -> dict[tuple[str, str], dict[str, Any]]:
    fs = ws.context("t").fs
    return {(pattern, path): fs.glob(compile_glob(pattern), path, limit=limit,
                                     include_ignored=include_ignored).model_dump()
            for pattern in PATTERNS for path in ("/", "/src", "/node_modules")}


IGNORE_FILES = {
    ".gitignore": "# build outputs\nbuild/\n*.log\n!keep.log\nsrc/sub/deep/\n/lib\n.venv\n",
    "src/.gitignore": "*.js\n!y.js\nlib/\n",
    "a/.ignore": "x.py\n",
    "docs/.gitignore": "*\n!index.md\n",
}
IGNORED_FILES = ("build/out.py", "build/x.log", "a.log", "keep.log", "src/z.log",
                 "src/w.js", ".hidden/build/h.py", "pkg/build/b.py")
"""Files beside FILES for the ignore rules (and the rules themselves, as files)."""


def _with_ignores(root: Path) -> None:
    for rel, text in {**IGNORE_FILES, **{f: f for f in IGNORED_FILES}}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize("include_ignored", [False, True])
def test_the_walk_by_names_honours_ignore_files_as_the_plain_walk(
    root: Path, include_ignored: bool
) -> None:
    """With .gitignore and .ignore files in the tree, the walk by names (which prunes the
    ignored directories unlisted) answers what the plain walk and an object store's flat
    listing answer: paths, totals, hidden and ignored counts."""
    _with_ignores(root)
    mem = _memory()
    for rel, text in {**IGNORE_FILES, **{f: f for f in IGNORED_FILES}}.items():
        mem.backend.write(rel, text.encode(), Overwrite())
    fast = _answers(_fast(root), 4, include_ignored)
    assert fast == _answers(_plain(root), 4, include_ignored)
    # .hidden/build/ is ignored, but inside a hidden directory: counted as hidden (the
    # rules are not asked about what the search leaves out as hidden) on every walk.
    assert fast == _answers(mem, 4, include_ignored)
    everything = fast[("**/*.py", "/")]
    if include_ignored:
        assert everything["ignored"] == 0
        assert "/build/out.py" in _fast(root).context("t").fs.glob(
            compile_glob("**/*.py"), "/", limit=100, include_ignored=True).paths
    else:
        # The directories build/, pkg/build/, lib/ (anchored: /lib only), src/sub/deep/,
        # src/lib/ (src/.gitignore), once each, and the file a/x.py (a/.ignore).
        got = _fast(root).context("t").fs.glob(compile_glob("**/*.py"), "/", limit=100)
        assert got.paths == ["/a.d/x.py", "/b.py", "/src/pipe.py", "/src/sub/x.py",
                             "/src/x.py", "/z.py"]
        assert got.ignored == everything["ignored"] == 6
        assert got.hidden == 10  # .hidden/ now holds a file: one more than without rules
        logs = _fast(root).context("t").fs.glob(compile_glob("**/*.log"), "/", limit=100)
        # a.log and src/z.log, and the five directories (the pattern may match in each).
        assert logs.paths == ["/keep.log"] and logs.ignored == 7
        top = _fast(root).context("t").fs.glob(compile_glob("*.log"), "/", limit=100)
        assert top.paths == ["/keep.log"] and top.ignored == 1  # a.log; no directory
        js = _fast(root).context("t").fs.glob(compile_glob("src/*.js"), "/", limit=100)
        assert js.paths == ["/src/y.js"] and js.ignored == 1  # src/w.js (!y.js re-includes)


@pytest.mark.parametrize("limit", [3, 1000])
def test_the_walk_by_names_answers_as_the_plain_walk(root: Path, limit: int) -> None:
    fast = _answers(_fast(root), limit)
    assert fast == _answers(_plain(root), limit)
    assert fast == _answers(_memory(), limit)
    # The tree holds what the comparison is about: cut lists, hidden counts, every kind.
    assert fast[("**/*.py", "/")] == {
        "kind": "glob", "path": "/", "pattern": "**/*.py",
        "paths": ["/a.d/x.py", "/a/x.py", "/b.py", "/lib/lib/lib.py", "/src/lib/two.py",
                  "/src/pipe.py", "/src/sub/deep/z.py", "/src/sub/x.py", "/src/x.py",
                  "/z.py"][:limit],
        "total": 10, "limit": limit, "hidden": 9, "ignored": 0, "partial": False,
        "unsearched_from": None, "next_path": None}
    assert fast[("*.py", "/")]["hidden"] == 1  # .hidden.py; no directory is searched
    assert fast[(".*/**", "/")]["total"] == 4  # .git's, .github's and .venv's files
    assert fast[("**/.*", "/")]["paths"][:3] == ["/.env", "/.hidden.py", "/a/.b.py"][:limit]


def test_an_object_store_counts_as_the_local_walk(root: Path,
                                                  request: pytest.FixtureRequest) -> None:
    moto_s3 = request.getfixturevalue("moto_s3")
    url = f"s3://{moto_s3.create_bucket()}/ws"
    ws = Workspace(url, moto_s3.storage_options(), load_entry_points=False)
    for rel in [*FILES, "src/pipe.py"]:
        ws.backend.write(rel, rel.encode(), Overwrite())
    s3, local = ws.context("t").fs, _fast(root).context("t").fs
    for pattern in ("**/*.py", "*.py", "**/.*", "src/**", "**/node_modules/**/*.js"):
        glob = compile_glob(pattern)
        assert s3.glob(glob, "/", limit=3) == local.glob(glob, "/", limit=3), pattern


def test_hidden_counts_each_directory_left_out_once(root: Path) -> None:
    ctx = _fast(root).context("t")
    res = ctx.tools.execute("glob", {"pattern": "**/*.py"})
    assert res.ok, res.text
    # Left out: .git, .github, .venv, node_modules, src/.cache (its two files count
    # once), src/__pycache__, pkg/node_modules, .hidden.py and a/.b.py. Not: .links (a
    # link is no file), .empty and node_modules/empty (nothing in them).
    assert res.value.hidden == 9
    assert res.text.endswith(
        "(9 hidden or dependency directories and matching hidden files were left out, not "
        "searched; name them in the pattern to include them.)"), res.text
    # Named, a skipped directory is searched, and the others still count (no hidden file
    # matches this pattern).
    res = ctx.tools.execute("glob", {"pattern": "**/.cache/*.py"})
    assert (res.text.splitlines()[0], res.value.total, res.value.hidden) == (
        "/src/.cache/c.py", 1, 6)


def test_the_walk_prunes_before_listing_and_tells_each_listing_first(root: Path) -> None:
    backend = LocalBackend(str(root))
    events: list[tuple[str, Any]] = []

    def keep_dir(key: str) -> bool:
        events.append(("keep?", key))
        return not key.rsplit("/", 1)[-1].startswith((".", "node_modules"))

    def listed(key: str, names: list[str]) -> None:
        events.append(("listed", (key, names)))

    walk = backend.walk_names("", keep_dir, listed)
    assert walk is not None
    for here, names in walk:
        events.extend(("file", f"{here}/{n}" if here else n) for n in names)
    files = [k for what, k in events if what == "file"]
    plain = [e.key for e in backend.walk("") if e.kind == "file"]
    kept = ("", *[k for what, k in events if what == "listed" for k in [k[0]]])
    assert files == [k for k in plain if k.rpartition("/")[0] in kept]
    assert files == sorted(files) and "link.py" not in files and "src/pipe.py" in files
    listings = [k for what, k in events if what == "listed"]
    assert listings[0] == ("", sorted([".empty", ".env", ".git", ".github", ".hidden.py",
                                       ".links", ".venv", "a", "a-b.txt", "a.d", "a.txt",
                                       "a0.txt", "b.py", "docs", "emptydir", "lib",
                                       "link.py", "node_modules", "pkg", "src", "z.py"]))
    listed_keys = [k for k, _ in listings]
    # A directory pruned is never listed; a link to a directory is not followed.
    assert not any(k.startswith((".", "node_modules", "src/.cache", "src/linked",
                                 "src/out")) for k in listed_keys)
    assert ("keep?", ".git") in events and ("keep?", "src/linked") not in events
    # Each directory is asked about before it is listed, and listed before its files.
    for key in ("a", "src/sub", "src/sub/deep"):
        asked = events.index(("keep?", key))
        at = next(i for i, (what, k) in enumerate(events) if what == "listed" and k[0] == key)
        first = next(i for i, (what, k) in enumerate(events)
                     if what == "file" and k.rpartition("/")[0] == key)
        assert asked < at < first, key


def test_the_walk_leaves_out_temp_files_and_says_what_a_path_is(root: Path) -> None:
    backend = LocalBackend(str(root))
    (root / "a" / ".x.py.fsseam-0123456789abcdef0123456789abcdef.tmp").write_text("a fake")
    backend.write("a/new.txt", b"new", Overwrite())
    got = _keys(backend, "a")
    assert got == ["a/.b.py", "a/.x.py.fsseam-0123456789abcdef0123456789abcdef.tmp",
                   "a/a/a.txt", "a/b.txt", "a/new.txt", "a/x.py"]
    assert got == [e.key for e in backend.walk("a") if e.kind == "file"]
    for key, code in (("b.py", ErrorCode.FS_INVALID_ARGUMENT),
                      ("nothere", ErrorCode.FS_NOT_FOUND)):
        with pytest.raises(FsError) as err:
            next(iter(backend.walk_names(key) or ()))
        assert err.value.code is code


def test_the_walk_stops_at_the_deepest_path(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*["d"] * (MAX_PATH_DEPTH + 1))
    deep.mkdir(parents=True)
    for n in (MAX_PATH_DEPTH - 2, MAX_PATH_DEPTH - 1, MAX_PATH_DEPTH):
        tmp_path.joinpath(*["d"] * n, "f.py").write_text("x")
    backend = LocalBackend(str(tmp_path))
    names = _keys(backend, "")
    assert names == [e.key for e in backend.walk("") if e.kind == "file"]
    # A path has at most MAX_PATH_DEPTH names: the deepest file is left out.
    assert [k.count("/") + 1 for k in names] == [MAX_PATH_DEPTH, MAX_PATH_DEPTH - 1]


def test_reserved_folders_are_neither_shown_nor_counted(root: Path) -> None:
    (root / ".fsseam-branches" / "refs").mkdir(parents=True)
    (root / ".fsseam-branches" / "refs" / "x.py").write_text("x")
    (root / ".state" / "obs").mkdir(parents=True)
    (root / ".state" / "obs" / "o.py").write_text("x")
    (root / ".state" / "obs.lock").write_text("x")
    (root / "keep" / "obs").mkdir(parents=True)
    (root / "keep" / "obs" / "k.py").write_text("x")
    (root / "keep" / "obs.lock").write_text("x")
    (root / "keep" / "k.py").write_text("x")
    for make in (_fast, _plain):
        ws = make(root)
        ws.gate.register(ReservedKeys(".state/obs"))
        ws.gate.register(ReservedKeys("keep/obs"))
        fs = ws.context("t").fs
        res = fs.glob(compile_glob("**/*.py"), "/", limit=100)
        assert res.hidden == 9, make  # .state holds nothing else: not counted
        assert "/keep/k.py" in res.paths and "/keep/obs/k.py" not in res.paths
        res = fs.glob(compile_glob("**/.*/**"), "/", limit=100)
        assert not any(p.startswith(("/.fsseam", "/.state")) for p in res.paths), res.paths
        assert fs.glob(compile_glob("keep/*"), "/", limit=100).paths == ["/keep/k.py"]


# -- out of time -------------------------------------------------------------------------
class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class RunOutAt(LocalBackend):
    """Either walk moves the clock past the deadline once it has yielded ``at`` (the walk
    by names, the run holding it)."""

    at = ""
    clock: Clock

    def walk_names(self, key: str, keep_dir: Any = None, listed: Any = None
                   ) -> Iterator[tuple[str, list[str]]]:
        for here, names in super().walk_names(key, keep_dir, listed):
            yield here, names
            if self.at in [f"{here}/{n}" if here else n for n in names]:
                self.clock.now += 1e6

    def walk(self, key: str) -> Iterator[Any]:
        for entry in super().walk(key):
            yield entry
            if entry.key == self.at:
                self.clock.now += 1e6


def test_out_of_time_the_walk_by_names_answers_a_prefix(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(fsseam.deadline, "clock", clock)
    backend = RunOutAt(str(root))
    backend.clock, backend.at = clock, "b.py"
    ws = Workspace(str(root), backend=backend, load_entry_points=False)
    res = ws.context("t").tools.execute("glob", {"pattern": "**/*.py"})
    assert res.ok, res.text
    out = res.value
    assert isinstance(out, GlobOutcome)
    assert out.paths == ["/a.d/x.py", "/a/x.py", "/b.py"]
    assert (out.total, out.partial, out.unsearched_from, out.next_path) == (
        3, True, "/docs/index.md", "/docs")
    # Counted: what lies before /docs/index.md (.git, .github, .hidden.py, .venv and
    # a/.b.py), not the directories after it (node_modules, src/.cache, ...).
    assert out.hidden == 5
    assert res.text == (
        "/a.d/x.py\n/a/x.py\n/b.py\n"
        "(5 hidden or dependency directories and matching hidden files were left out, not "
        "searched; name them in the pattern to include them.)\n"
        "(The glob stopped early: it used up the time one search may take, so it covers the "
        "paths before /docs/index.md in path order, and so do the counts. To find the rest, "
        "search a narrower path, such as path=/docs (where it stopped), or make the "
        "pattern narrower.)")
    # The plain walk stops at the same file, with the same counts (handing the gate one
    # entry at a time, as the walk by names takes them).
    clock.now = 0.0
    monkeypatch.setattr(fsseam.seam.finding, "WALK_BATCH", 1)
    ws.gate.register(PassThrough())
    assert ws.context("t").tools.execute("glob", {"pattern": "**/*.py"}).value == out
