""".gitignore and .ignore in ls, glob and grep: git's own answer is the reference.

A project tree with nested ignore files (negation, directory-only patterns, anchoring,
``**``, a file re-included under an ignored directory, comments, an escaped ``#``,
trailing spaces) is written to every store (memory, local, moto S3, fake-gcs-server,
Azurite) and to a real git repository; what each store's finders leave out is compared
with ``git check-ignore`` on the same tree. Small generated trees and pattern sets are
compared the same way on local disk and memory.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsseam import Limits, Overwrite, Workspace
from fsseam import ignores as ignores_module
from fsseam.backends.base import Blob, Entry
from fsseam.errors import ErrorCode, FsError
from fsseam.globs import compile_glob
from fsseam.grep import compile_pattern
from fsseam.ignores import Ignores, parse
from fsseam.seam import finding, workers
from fsseam.versions import Version

from .budget import examples

STORES = ["memory", "local", "s3", "gcs", "azure"]

ROOT_GITIGNORE = b"""\
# a comment: no pattern
*.log
!keep.log
build/
/top-only.txt
notes/**/draft.md
\\#hash.txt
trailing.txt   \n\
cache/
!cache/keep.txt
out/*
!out/kept/
a/b/deep.txt
-dash.txt
"""

TREE: dict[str, bytes] = {
    ".gitignore": ROOT_GITIGNORE,
    "src/.gitignore": b"*.tmp\n!important.log\ngenerated/\n",
    "src/main.py": b"needle\n",
    "src/gen.tmp": b"needle\n",
    "src/important.log": b"needle\n",
    "src/other.log": b"needle\n",
    "src/generated/x.py": b"needle\n",
    "src/generated/.gitignore": b"!x.py\n",
    "a/b/deep.txt": b"needle\n",
    "x/a/b/deep.txt": b"needle\n",
    "top-only.txt": b"needle\n",
    "sub/top-only.txt": b"needle\n",
    "notes/draft.md": b"needle\n",
    "notes/x/y/draft.md": b"needle\n",
    "notes/readme.md": b"needle\n",
    "#hash.txt": b"needle\n",
    "trailing.txt": b"needle\n",
    "cache/keep.txt": b"needle\n",
    "cache/x.txt": b"needle\n",
    "out/file.txt": b"needle\n",
    "out/kept/k.txt": b"needle\n",
    "-dash.txt": b"needle\n",
    "d/-dash.txt": b"needle\n",
    "d/-other.txt": b"needle\n",
    "d/.gitignore": b"-other.txt\n",
    "build/x.txt": b"needle\n",
    "lib/build/y.txt": b"needle\n",
    "build.txt": b"needle\n",
    "logs/app.log": b"needle\n",
    "logs/keep.log": b"needle\n",
    "keep.log": b"needle\n",
    "z.txt": b"needle\n",
}
IGNORED_DIRS = {"src/generated", "cache", "build", "lib/build"}
"""The directories the tree's rules ignore (each counted once); ``out/`` is not one: its
contents are (``out/*``), so that ``out/kept/`` can be re-included."""


def git_ignored(tmp: Path, tree: Mapping[str, bytes]) -> set[str]:
    """The files of ``tree`` that git ignores, by ``git check-ignore`` on a real repo."""
    repo = tmp / f"git-{uuid.uuid4().hex[:8]}"
    for key, data in tree.items():
        p = repo / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    files = [k for k in tree if k.rpartition("/")[2] not in (".gitignore", ".ignore")]
    got = subprocess.run(
        ["git", "-c", "core.excludesFile=/dev/null", "check-ignore", "--no-index", "--stdin"],
        cwd=repo, input="\n".join(files) + "\n", capture_output=True, text=True, check=False)
    assert got.returncode in (0, 1), got.stderr
    return {line for line in got.stdout.splitlines() if line}


def visible(tree: Mapping[str, bytes]) -> set[str]:
    """The files a glob ``**`` finds with nothing ignored (hidden names are skipped)."""
    return {k for k in tree if not any(s.startswith(".") for s in k.split("/"))}


def _workspace(kind: str, request: pytest.FixtureRequest, tmp_path: Path,
               limits: Limits | None = None) -> Workspace:
    extra: dict[str, Any] = {} if limits is None else {"limits": limits}
    if kind == "memory":
        return Workspace(f"memory://ignores-{uuid.uuid4().hex}", {"global_store": False},
                         load_entry_points=False, **extra)
    if kind == "local":
        root = tmp_path / f"root-{uuid.uuid4().hex[:8]}"
        root.mkdir()
        return Workspace(str(root), **extra)
    if kind == "s3":
        moto = request.getfixturevalue("moto_s3")
        bucket = moto.create_bucket()
        return Workspace(f"s3://{bucket}/r", storage_options=moto.storage_options(), **extra)
    if kind == "gcs":
        endpoint, _ = request.getfixturevalue("fake_gcs")
        bucket = endpoint.create_bucket()
        return Workspace(f"gs://{bucket}/r", storage_options=endpoint.storage_options(),
                         **extra)
    az = request.getfixturevalue("azurite")
    container = az.create_container()
    return Workspace(f"az://{container}/r", storage_options=az.storage_options(), **extra)


def fill(ws: Workspace, tree: Mapping[str, bytes]) -> None:
    for key, data in tree.items():
        ws.backend.write(key, data, Overwrite())


@pytest.fixture(params=STORES)
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workspace]:
    ws = _workspace(request.param, request, tmp_path)
    fill(ws, TREE)
    yield ws


def _paths(paths: list[str]) -> set[str]:
    return {p.lstrip("/") for p in paths}


def test_the_fixture_covers_what_it_says(tmp_path: Path) -> None:
    ignored = git_ignored(tmp_path, TREE)
    assert ignored == {
        "src/gen.tmp", "src/other.log", "src/generated/x.py", "a/b/deep.txt",
        "top-only.txt", "notes/draft.md", "notes/x/y/draft.md", "#hash.txt", "trailing.txt",
        "cache/keep.txt", "cache/x.txt", "out/file.txt", "-dash.txt", "d/-dash.txt",
        "d/-other.txt", "build/x.txt", "lib/build/y.txt", "logs/app.log",
    }


def test_glob_grep_and_ls_leave_out_what_git_ignores(project: Workspace, tmp_path: Path
                                                     ) -> None:
    expected = visible(TREE) - git_ignored(tmp_path, TREE)
    fs = project.context("a").fs
    glob = fs.glob(compile_glob("**"), "/", limit=1000)
    assert _paths(glob.paths) == expected
    # Each ignored directory once, each ignored file outside them once.
    files_out = {k for k in visible(TREE) - expected
                 if not any(k.startswith(d + "/") for d in IGNORED_DIRS)}
    assert glob.ignored == len(IGNORED_DIRS) + len(files_out) == 17
    grep = fs.grep(compile_pattern("needle"), "/", limit=1000)
    assert {f.path.lstrip("/") for f in grep.files} == expected
    assert (grep.ignored, grep.searched) == (17, len(expected))
    listed = fs.list("/")
    assert {e.path.lstrip("/") for e in listed.entries} == {
        ".gitignore", "src", "a", "x", "sub", "notes", "out", "d", "lib", "logs", "keep.log",
        "z.txt", "build.txt"}
    # The root's ignored entries: build/ and cache/, and four files.
    assert listed.ignored == 6
    everything = fs.glob(compile_glob("**"), "/", limit=1000, include_ignored=True)
    assert _paths(everything.paths) == visible(TREE) and everything.ignored == 0
    grep_all = fs.grep(compile_pattern("needle"), "/", limit=1000, include_ignored=True)
    assert {f.path.lstrip("/") for f in grep_all.files} == visible(TREE)
    assert grep_all.ignored == 0
    assert len(fs.list("/", include_ignored=True).entries) == 13 + 6


def test_named_paths_are_found(project: Workspace) -> None:
    fs = project.context("a").fs
    # The search path itself (and what is above it) is never left out.
    grep = fs.grep(compile_pattern("needle"), "/build")
    assert [f.path for f in grep.files] == ["/build/x.txt"] and grep.ignored == 0
    # A literal segment of the pattern names a directory or a file.
    assert fs.glob(compile_glob("cache/*.txt")).paths == ["/cache/keep.txt", "/cache/x.txt"]
    assert fs.glob(compile_glob("**/build/*.txt")).paths == ["/build/x.txt",
                                                             "/lib/build/y.txt"]
    assert fs.glob(compile_glob("**/top-only.txt")).paths == ["/sub/top-only.txt",
                                                              "/top-only.txt"]
    # A file named as grep's path is searched.
    one = fs.grep(compile_pattern("needle"), "/src/gen.tmp")
    assert [f.path for f in one.files] == ["/src/gen.tmp"] and one.ignored == 0


def test_ignored_files_stay_readable_and_editable_by_path(project: Workspace) -> None:
    ctx = project.context("a")
    for path in ("/build/x.txt", "/src/gen.tmp"):
        assert "needle" in ctx.tools.execute("read", {"file_path": path}).text
        done = ctx.tools.execute("edit", {"file_path": path, "old_string": "needle",
                                          "new_string": "pin"})
        assert done.ok, done.text
        assert project.backend.read(path.lstrip("/")).data == b"pin\n"
    assert ctx.tools.execute("write", {"file_path": "/cache/new.txt", "content": "n\n"}).ok
    assert ctx.fs.glob(compile_glob("**/new.txt")).paths == []
    assert ctx.fs.glob(compile_glob("**/new.txt"), include_ignored=True).paths == [
        "/cache/new.txt"]


def test_rules_above_the_search_apply_and_a_change_is_seen(project: Workspace) -> None:
    fs = project.context("a").fs
    # grep in src: the root's *.log applies there (its !important.log re-includes one).
    grep = fs.grep(compile_pattern("needle"), "/src")
    assert [f.path for f in grep.files] == ["/src/important.log", "/src/main.py"]
    assert grep.ignored == 3  # other.log, gen.tmp, generated/
    assert fs.glob(compile_glob("*"), "/logs").paths == ["/logs/keep.log"]
    project.backend.write("src/.gitignore", b"main.py\n", Overwrite())
    again = fs.grep(compile_pattern("needle"), "/src")
    assert [f.path for f in again.files] == ["/src/gen.tmp", "/src/generated/x.py"]
    assert again.ignored == 3  # main.py, and both .log files (the root's *.log)


def test_the_tools_say_how_many_were_left_out_and_how_to_include_them(
    project: Workspace,
) -> None:
    ctx = project.context("a")
    for tool, args in (("glob", {"pattern": "**"}), ("grep", {"pattern": "needle"}),
                       ("ls", {})):
        text = ctx.tools.execute(tool, args).text
        assert "include_ignored=true" in text, (tool, text)
        whole = ctx.tools.execute(tool, {**args, "include_ignored": True}).text
        assert "include_ignored" not in whole, (tool, whole)
    text = ctx.tools.execute("glob", {"pattern": "**"}).text
    assert ("(17 paths ignored by .gitignore or .ignore files were left out; pass "
            "include_ignored=true to include them.)") in text


DOT_IGNORE = {
    ".gitignore": b"*.txt\n",
    ".ignore": b"!wanted.txt\n",
    "wanted.txt": b"needle\n",
    "other.txt": b"needle\n",
    "sub/.gitignore": b"!other.txt\n",
    "sub/other.txt": b"needle\n",
    "sub/wanted.txt": b"needle\n",
    "sub/.ignore": b"gone.md\n",
    "sub/gone.md": b"needle\n",
    "sub/kept.md": b"needle\n",
}


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_dot_ignore_wins_over_gitignore(kind: str, request: pytest.FixtureRequest,
                                        tmp_path: Path) -> None:
    ws = _workspace(kind, request, tmp_path)
    fill(ws, DOT_IGNORE)
    fs = ws.context("a").fs
    assert _paths(fs.glob(compile_glob("**")).paths) == {
        "wanted.txt", "sub/other.txt", "sub/wanted.txt", "sub/kept.md"}


def test_an_ignore_file_sorting_after_its_directorys_entries(tmp_path: Path,
                                                             request: pytest.FixtureRequest
                                                             ) -> None:
    """``a/-x.txt`` and ``a/!y/z.txt`` sort before ``a/.gitignore``: a flat walk holds
    them back until it has passed that file's place."""
    tree = {"a/-x.txt": b"n\n", "a/!y/z.txt": b"n\n", "a/.gitignore": b"-x.txt\n\\!y/\n",
            "a/.eslintrc": b"n\n", "a/b.txt": b"n\n"}
    for kind in ("memory", "local"):
        ws = _workspace(kind, request, tmp_path)
        fill(ws, tree)
        out = ws.context("a").fs.glob(compile_glob("**"))
        assert (out.paths, out.ignored) == (["/a/b.txt"], 2)


def test_a_large_ignore_file_or_one_not_utf8_holds_no_rules() -> None:
    assert parse(b"*.txt\n" + b"#" * (1 << 20)) is None
    assert parse(b"*.txt\n\xff\n") is None
    rules = parse(b"*.txt\n")
    assert rules is not None and rules.decide("a.txt", False) is True
    assert parse(b"*.txt\n") is rules  # parsed once per process


def test_a_flat_walk_holds_a_bounded_number_of_entries(monkeypatch: pytest.MonkeyPatch
                                                       ) -> None:
    monkeypatch.setattr(ignores_module, "MAX_HELD", 10)
    reads: list[tuple[str, int]] = []
    consumed = 0

    def read(key: str) -> Blob:
        reads.append((key, consumed))
        if key == "a/.gitignore":
            return Blob(data=b"-*\n", version=Version(kind="etag", value="1"))
        raise FsError(ErrorCode.FS_NOT_FOUND, "missing")

    def walk() -> Iterator[tuple[Entry, None]]:
        nonlocal consumed
        for k in [f"a/-{i:03d}" for i in range(50)] + ["a/.gitignore", "a/z"]:
            consumed += 1
            yield Entry(key=k, name=k.rpartition("/")[2], kind="file", size=1), None

    ig = Ignores(read, "")
    out = [e.key for e, _ in ig.flat(walk())]
    assert [k for k in out if not ig.excludes_file(k)] == ["a/.gitignore", "a/z"]
    assert ig.files_left == 50
    # Past ten held entries, a/'s ignore files are read directly (once), long before the
    # walk reaches them.
    assert reads == [("a/.ignore", 11), ("a/.gitignore", 11)]


def test_ignore_files_are_read_once_per_call_on_s3(moto_s3: Any) -> None:
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/r", storage_options=moto_s3.storage_options(),
                   content_index=False)
    fill(ws, TREE)
    fs = ws.context("a").fs

    def gets(run: Any) -> list[str]:
        moto_s3.log.clear()
        run()
        return sorted(p for m, p in moto_s3.log.to_bucket(bucket) if m == "GET"
                      and "list-type" not in p and not p.endswith(f"/{bucket}"))

    paths = gets(lambda: fs.glob(compile_glob("**/*.md"), "/", limit=1000))
    # One GET per ignore file whose rules a path asked about: the root's and src/'s (is
    # src/generated/ ignored?). d/.gitignore only speaks of d/'s files, none of which
    # *.md matches, and src/generated/.gitignore lies in an ignored directory: never read.
    ignore_gets = [p for p in paths if p.rsplit("/", 1)[-1] in (".gitignore", ".ignore")]
    assert ignore_gets == [f"/{bucket}/r/.gitignore", f"/{bucket}/r/src/.gitignore"]
    assert len(paths) == len(ignore_gets)  # no other GET: the walk is the listing
    # Every file matched: every ignore file outside ignored directories, once each.
    paths = gets(lambda: fs.glob(compile_glob("**"), "/", limit=1000))
    assert paths == [f"/{bucket}/r/.gitignore", f"/{bucket}/r/d/.gitignore",
                     f"/{bucket}/r/src/.gitignore"]
    # A search below the root lists the root once (which ignore files it holds: a read of
    # a missing one would cost a 404 and a listing to tell it from a directory), reads
    # the one it has, then walks src/ (one listing) and reads its .gitignore and the two
    # files searched: main.py and important.log (nothing below generated/).
    moto_s3.log.clear()
    fs.grep(compile_pattern("needle"), "/src")
    got = [(m, p.split("?")[0]) for m, p in moto_s3.log.to_bucket(bucket)]
    assert sorted(got) == sorted([
        ("GET", f"/{bucket}"), ("GET", f"/{bucket}/r/.gitignore"),  # the root, surveyed
        ("GET", f"/{bucket}"),  # the walk of src/
        ("GET", f"/{bucket}/r/src/.gitignore"),
        ("GET", f"/{bucket}/r/src/important.log"), ("GET", f"/{bucket}/r/src/main.py")])


def test_grep_through_the_content_index_honours_the_rules(moto_s3: Any, tmp_path: Path
                                                          ) -> None:
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/r", storage_options=moto_s3.storage_options(),
                   content_index=True)
    fill(ws, TREE)
    fs = ws.context("a").fs
    expected = visible(TREE) - git_ignored(tmp_path, TREE)
    ignore_gets = []
    for _ in range(2):  # cold, then warm (the index rules most files out)
        moto_s3.log.clear()
        grep = fs.grep(compile_pattern("needle"), "/", limit=1000)
        assert {f.path.lstrip("/") for f in grep.files} == expected
        assert grep.ignored == 17
        ignore_gets.append(sorted(p for m, p in moto_s3.log.to_bucket(bucket)
                                  if m == "GET" and p.endswith("ignore")))
    # The versioned walk says each ignore file's version: read once, then known by it.
    assert ignore_gets == [[f"/{bucket}/r/.gitignore", f"/{bucket}/r/d/.gitignore",
                            f"/{bucket}/r/src/.gitignore"], []]


def test_grep_by_helper_processes_honours_the_rules(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(finding, "SWITCH_SECONDS", 0.0)
    pool = workers.helpers()
    if pool.failed:
        pool.failed = False
    pool.wait_ready(2)
    root = tmp_path / "big"
    root.mkdir()
    tree = dict(TREE)
    for d in range(4):  # enough directories for several parts
        for i in range(5):
            tree[f"p{d}/q/f{i}.txt"] = b"needle\n"
            tree[f"p{d}/build/f{i}.txt"] = b"needle\n"
            tree[f"p{d}/.venv/f{i}.txt"] = b"needle\n"  # hidden, and ignored below
        tree[f"p{d}/.gitignore"] = b".venv/\n"
    ws = Workspace(str(root), limits=Limits(finder_processes=2))
    fill(ws, tree)
    one = Workspace(str(root), limits=Limits(finder_processes=1))
    expected = visible(tree) - git_ignored(tmp_path, tree)
    before = pool.parts_there
    many = ws.context("a").fs.grep(compile_pattern("needle"), "/", limit=1000)
    single = one.context("a").fs.grep(compile_pattern("needle"), "/", limit=1000)
    assert pool.parts_there > before  # helpers searched some of it
    assert {f.path.lstrip("/") for f in many.files} == expected
    assert many.files == single.files
    assert many.ignored == single.ignored == 17 + 4
    # A hidden directory is the search's to leave out, in a helper too: its files count
    # as hidden, whatever an ignore file says of it.
    assert many.skipped == single.skipped
    assert many.skipped["hidden"] == single.skipped["hidden"] >= 4 * 5


# -- generated trees against git ---------------------------------------------------------
_NAMES = ["a", "b", "c.log", "d.txt", "-e", "f"]
_PATTERNS = ["a", "/a", "a/", "*.log", "!c.log", "b/*", "**/f", "a/**", "!a/", "!b",
             "b/d.txt", "!*.txt", "*.txt", "!f/", "f/", "-e", "a/**/d.txt", "!/b/a",
             "**/a/c.log", "b", "*", "*/", "/*", "a*", "[ab]", "?", "!**/c.log", "a/*/d.txt",
             "**", "!*/", "b/**/", "f/**", "#a", "\\#a", "a ", "-e/", "!-e"]


@st.composite
def _trees(draw: st.DrawFn) -> dict[str, bytes]:
    files: set[str] = set()
    for _ in range(draw(st.integers(1, 8))):
        depth = draw(st.integers(1, 3))
        files.add("/".join(draw(st.sampled_from(_NAMES)) for _ in range(depth)))
    # A name is a file or a directory, never both.
    files = {f for f in files if not any(g.startswith(f + "/") for g in files)}
    tree = {f: b"needle\n" for f in files}
    dirs = sorted({f.rpartition("/")[0] for f in files})
    for d in draw(st.lists(st.sampled_from(dirs), max_size=2, unique=True)):
        rules = draw(st.lists(st.sampled_from(_PATTERNS), min_size=1, max_size=4))
        tree[f"{d}/.gitignore" if d else ".gitignore"] = "\n".join(rules).encode() + b"\n"
    return tree


@settings(max_examples=examples(120), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tree=_trees())
def test_generated_trees_agree_with_git(tree: dict[str, bytes], tmp_path: Path) -> None:
    expected = visible(tree) - git_ignored(tmp_path, tree)
    # The same rules in .ignore files alone decide as git decides with them as .gitignore.
    renamed = {k.removesuffix(".gitignore") + ".ignore" if k.endswith(".gitignore") else k: v
               for k, v in tree.items()}
    for ws, files in ((Workspace(f"memory://ignores-{uuid.uuid4().hex}",
                                 {"global_store": False}, load_entry_points=False), tree),
                      (Workspace(str(_fresh(tmp_path))), tree),
                      (Workspace(str(_fresh(tmp_path))), renamed)):
        fill(ws, files)
        fs = ws.context("a").fs
        assert _paths(fs.glob(compile_glob("**"), limit=1000).paths) == expected, tree
        grep = fs.grep(compile_pattern("needle"), limit=1000)
        assert {f.path.lstrip("/") for f in grep.files} == expected, tree


def _fresh(tmp_path: Path) -> Path:
    root = tmp_path / f"t-{uuid.uuid4().hex[:8]}"
    root.mkdir()
    return root


def test_a_mount_table_and_kept_history_honour_the_rules(tmp_path: Path) -> None:
    """Over a mount table the local one-pass read gets a plain ``accept`` (no walk hooks):
    the rules are read directly, and the answer is the same. Kept history forwards the
    hooks to the local walk."""
    from fsseam.backends import LocalBackend, MemoryBackend, Mount, MountBackend
    from fsseam.backends.history import History
    from fsseam.backends.memory import isolated_memory_filesystem

    expected = visible(TREE) - git_ignored(tmp_path, TREE)
    local = tmp_path / "mounted"
    local.mkdir()
    table = MountBackend([
        Mount("", MemoryBackend(isolated_memory_filesystem(), f"/m-{uuid.uuid4().hex}")),
        Mount("repo", LocalBackend(str(local)))])
    mounted = Workspace("mounts", backend=table)
    fill(mounted, {f"repo/{k}": v for k, v in TREE.items()})
    grep = mounted.context("a").fs.grep(compile_pattern("needle"), "/repo", limit=1000)
    assert {f.path.removeprefix("/repo/") for f in grep.files} == expected
    assert grep.ignored == 17
    kept = Workspace(str(_fresh(tmp_path)), history=History(path=str(tmp_path / "kept-h")))
    fill(kept, TREE)
    grep = kept.context("a").fs.grep(compile_pattern("needle"), "/", limit=1000)
    assert {f.path.lstrip("/") for f in grep.files} == expected and grep.ignored == 17


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_a_deeper_listing_leaves_out_ignored_entries_at_each_level(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path,
) -> None:
    ws = _workspace(kind, request, tmp_path)
    fill(ws, TREE)
    listed = ws.context("a").fs.list("/src", depth=2)
    assert [e.path for e in listed.entries] == ["/src/.gitignore", "/src/important.log",
                                                "/src/main.py"]
    assert listed.ignored == 3  # gen.tmp, other.log, generated/
    listed = ws.context("a").fs.list("/out", depth=2)
    assert [e.path for e in listed.entries] == ["/out/kept", "/out/kept/k.txt"]
    assert listed.ignored == 1  # out/file.txt


def test_a_local_grep_does_not_walk_ignored_directories(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from fsseam.backends.local import tree as tree_module

    ws = Workspace(str(_fresh(tmp_path)), limits=Limits(finder_processes=1))
    fill(ws, TREE)
    listed: list[str] = []
    real = tree_module.sorted_dirents

    def recording(fd: int, prefix: str) -> Any:
        listed.append(prefix)
        return real(fd, prefix)

    monkeypatch.setattr(tree_module, "sorted_dirents", recording)
    grep = ws.context("a").fs.grep(compile_pattern("needle"), "/", limit=1000)
    assert grep.ignored == 17
    assert set(listed) == {"", "src", "a", "a/b", "x", "x/a", "x/a/b", "sub", "notes",
                           "notes/x", "notes/x/y", "out", "out/kept", "d", "lib", "logs"}


def test_the_fsspec_filesystem_lists_every_entry(tmp_path: Path) -> None:
    ws = Workspace(str(_fresh(tmp_path)))
    fill(ws, TREE)
    fs = ws.context("a").filesystem()
    names = {p.rpartition("/")[2] for p in fs.ls("/", detail=False)}
    assert {"build", "cache", "top-only.txt", "-dash.txt"} <= names


def test_a_directory_above_the_search_is_listed_once_then_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ignores_module, "SURVEY_MAX", 5)
    reads: list[str] = []
    listed: list[str] = []

    def read(key: str) -> Blob:
        reads.append(key)
        if key.endswith(".gitignore"):
            return Blob(data=b"*.log\n", version=Version(kind="etag", value="1"))
        raise FsError(ErrorCode.FS_NOT_FOUND, "missing")

    def listing(d: str) -> Iterator[Entry]:
        listed.append(d)
        n = 3 if d == "" else 50  # the root is short, big/ is long
        names = [".gitignore"] + [f"n{i}" for i in range(n)]
        for name in names:
            yield Entry(key=f"{d}/{name}" if d else name, name=name, kind="file", size=6)

    ig = Ignores(read, "big/sub", listing=listing)
    ig.listed("big/sub", ["x.log", "x.txt"])  # the walk's own listing of the search root
    assert ig.excludes_file("big/sub/x.log") and not ig.excludes_file("big/sub/x.txt")
    # The root lists whole (it has a .gitignore, read); big/ lists past the bound: both
    # of its names are read.
    assert listed == ["big", ""]
    assert reads == ["big/.ignore", "big/.gitignore", ".gitignore"]
