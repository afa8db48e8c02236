"""The sandbox of a local workspace: `..`, symlinks, NUL bytes, and spellings of one file
(docs/concepts.md, "Paths": anything resolving outside the root is FS_OUTSIDE_ROOT; two
spellings of one file are one file for the policy)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, FsError, Workspace

SECRET = b"top secret\r\nline 2\n"


def snapshot(base: Path) -> dict[str, bytes | str]:
    """Every entry under ``base`` (symlinks not followed): file bytes, link targets, dirs."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(base))
            if p.is_symlink():
                out[rel] = "link:" + os.readlink(p)
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = p.read_bytes()
    return out


@pytest.fixture
def layout(root: Path) -> dict[str, Path]:
    base = root.parent
    outside = base / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(SECRET)
    (outside / "sub").mkdir()
    (outside / "sub" / "deep.txt").write_bytes(b"deep\n")
    (root / "a.txt").write_bytes(b"alpha\nbeta\n")
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_bytes(b"in d\n")
    os.symlink(outside / "secret.txt", root / "out_file")
    os.symlink(outside, root / "out_dir")
    os.symlink("../outside/secret.txt", root / "out_rel")  # relative link, same target
    os.symlink(outside / "missing.txt", root / "dangle")  # dangling, points outside
    os.symlink("a.txt", root / "in_link")
    os.symlink("d", root / "in_dir_link")
    os.symlink(base, root / "up")  # the root's parent
    return {"root": root, "outside": outside, "base": base}


ESCAPES = [
    "/../x",
    "../x",
    "a/../../x",
    "/d/../../x",
    "/d/../../outside/secret.txt",
    "/out_file",
    "out_rel",
    "/out_dir/secret.txt",
    "/out_dir/new.txt",
    "/out_dir/sub/deep.txt",
    "/out_dir/newdir/new.txt",
    "/dangle",
    "/up/outside/secret.txt",
    "/up/new.txt",
    "/in_dir_link/../../x",
    "a\x00.txt",
    "/a.txt\x00",
]


def _calls(path: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("read", {"file_path": path}),
        ("read", {"file_path": path, "offset": 1, "limit": 1}),
        ("write", {"file_path": path, "content": "pwned\n"}),
        ("edit", {"file_path": path, "old_string": "top", "new_string": "pwned"}),
        ("str_replace_editor", {"command": "view", "path": path}),
        ("str_replace_editor", {"command": "create", "path": path, "file_text": "pwned\n"}),
        ("str_replace_editor",
         {"command": "str_replace", "path": path, "old_str": "top", "new_str": "pwned"}),
        ("str_replace_editor",
         {"command": "insert", "path": path, "insert_line": 0, "new_str": "pwned"}),
    ]


@pytest.mark.parametrize("path", ESCAPES, ids=repr)
def test_escapes_are_outside_root_for_every_tool(layout: dict[str, Path], path: str) -> None:
    base = layout["base"]
    before = snapshot(base)
    ws = Workspace(str(layout["root"]), load_entry_points=False)
    ctx = ws.context(owner="a")
    for name, args in _calls(path):
        res = ctx.tools.execute(name, args)
        assert not res.ok, (name, args, res.text)
        assert res.error is not None
        assert res.error.code is ErrorCode.FS_OUTSIDE_ROOT, (name, args, res.text)
        assert snapshot(base) == before, (name, args)


@pytest.mark.parametrize("path", ESCAPES, ids=repr)
def test_escapes_are_outside_root_in_ctx_fs(layout: dict[str, Path], path: str) -> None:
    base = layout["base"]
    before = snapshot(base)
    ctx = Workspace(str(layout["root"]), load_entry_points=False).context(owner="a")
    for call in (
        lambda: ctx.fs.read(path),
        lambda: ctx.fs.write(path, "pwned"),
        lambda: ctx.fs.create(path, "pwned"),
        lambda: ctx.fs.replace(path, "top", "pwned"),
        lambda: ctx.fs.insert(path, 0, "pwned"),
        lambda: ctx.fs.stat(path),
    ):
        with pytest.raises(FsError) as info:
            call()
        assert info.value.code is ErrorCode.FS_OUTSIDE_ROOT
    assert snapshot(base) == before


def test_escapes_stay_refused_without_policy(layout: dict[str, Path]) -> None:
    base = layout["base"]
    before = snapshot(base)
    ctx = Workspace(str(layout["root"]), policy=False, load_entry_points=False).context()
    for path in ESCAPES:
        res = ctx.tools.execute("write", {"file_path": path, "content": "pwned\n"})
        assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, path
    assert snapshot(base) == before


def test_real_absolute_paths_climbing_out_are_outside_root(layout: dict[str, Path]) -> None:
    root = layout["root"]
    base = layout["base"]
    before = snapshot(base)
    ctx = Workspace(str(root), load_entry_points=False).context()
    for path in (
        f"{root}/../outside/secret.txt",
        f"{root}/d/../../x.txt",
        f"{root}/out_file",
        f"{root}/out_dir/new.txt",
    ):
        for name, args in _calls(path):
            res = ctx.tools.execute(name, args)
            assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, (
                path, name, res.text)
    assert snapshot(base) == before


def test_directory_symlink_outside_is_not_listed(layout: dict[str, Path]) -> None:
    ctx = Workspace(str(layout["root"]), load_entry_points=False).context()
    res = ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/out_dir"})
    assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT
    assert "secret" not in res.text
    with pytest.raises(FsError) as info:
        ctx.fs.list("/out_dir")
    assert info.value.code is ErrorCode.FS_OUTSIDE_ROOT


def test_real_absolute_path_under_root_is_accepted(layout: dict[str, Path]) -> None:
    root = layout["root"]
    ctx = Workspace(str(root), load_entry_points=False).context()
    real = str((root / "a.txt").resolve())
    res = ctx.tools.execute("read", {"file_path": real})
    assert res.ok, res.text
    assert res.value.path == "/a.txt"
    assert res.value.lines == ["alpha", "beta"]
    res = ctx.tools.execute("edit", {"file_path": real, "old_string": "beta", "new_string": "B"})
    assert res.ok, res.text
    assert (root / "a.txt").read_bytes() == b"alpha\nB\n"
    # a new file by its real absolute path lands under the root
    res = ctx.tools.execute("write", {"file_path": f"{root}/d/new.txt", "content": "n\n"})
    assert res.ok, res.text
    assert (root / "d" / "new.txt").read_bytes() == b"n\n"
    # the root itself by its real path is the root directory
    with pytest.raises(FsError) as info:
        ctx.fs.write(str(root), "x")
    assert info.value.code is ErrorCode.FS_IS_DIRECTORY


def test_root_given_through_a_symlink_accepts_both_real_and_given_paths(
    layout: dict[str, Path],
) -> None:
    root = layout["root"]
    alias = layout["base"] / "alias"
    os.symlink(root, alias)
    ctx = Workspace(str(alias), load_entry_points=False).context()
    assert ctx.fs.read(str(alias / "a.txt")).path == "/a.txt"
    assert ctx.fs.read(str(root / "a.txt")).path == "/a.txt"
    ctx.fs.replace(str(alias / "a.txt"), "alpha", "ALPHA")
    assert (root / "a.txt").read_bytes() == b"ALPHA\nbeta\n"
    with pytest.raises(FsError) as info:
        ctx.fs.read(str(alias / "out_file"))
    assert info.value.code is ErrorCode.FS_OUTSIDE_ROOT


def test_virtual_absolute_path_elsewhere_stays_inside_root(layout: dict[str, Path]) -> None:
    """A real absolute path that is *not* under the root is a virtual path under it."""
    base = layout["base"]
    outside = layout["outside"]
    ctx = Workspace(str(layout["root"]), load_entry_points=False).context()
    before = snapshot(outside)
    target = str(outside / "secret.txt")
    res = ctx.tools.execute("read", {"file_path": target})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
    res = ctx.tools.execute("write", {"file_path": target, "content": "mine\n"})
    assert res.ok, res.text
    assert snapshot(outside) == before
    inside = layout["root"] / str(outside / "secret.txt").lstrip("/")
    assert inside.read_bytes() == b"mine\n"
    assert (base / "outside" / "secret.txt").read_bytes() == SECRET


def test_symlinks_inside_the_root_work(layout: dict[str, Path]) -> None:
    root = layout["root"]
    ctx = Workspace(str(root), load_entry_points=False).context()
    out = ctx.fs.read("/in_link")
    assert out.path == "/a.txt" and out.lines == ["alpha", "beta"]
    ctx.fs.replace("/in_link", "alpha", "one")
    assert (root / "a.txt").read_bytes() == b"one\nbeta\n"
    assert os.readlink(root / "in_link") == "a.txt"  # the link itself is kept
    # a new file through a symlinked directory inside the root
    w = ctx.fs.write("/in_dir_link/new.txt", "hello\n")
    assert w.path == "/d/new.txt" and w.created
    assert (root / "d" / "new.txt").read_bytes() == b"hello\n"
    assert ctx.fs.read("/in_dir_link/f.txt").path == "/d/f.txt"
    # through the root's parent and back in
    assert ctx.fs.read("/up/root/a.txt").path == "/a.txt"


SPELLINGS = [
    "/a.txt", "a.txt", "/./d/../a.txt", "//a.txt", "REAL", "/in_link", "/in_dir_link/../a.txt"
]


def _spell(root: Path, s: str) -> str:
    return str((root / "a.txt").resolve()) if s == "REAL" else s


@pytest.mark.parametrize("read_as", SPELLINGS)
@pytest.mark.parametrize("edit_as", SPELLINGS)
def test_two_spellings_of_one_file_share_one_observation(
    layout: dict[str, Path], read_as: str, edit_as: str
) -> None:
    root = layout["root"]
    ws = Workspace(str(root), load_entry_points=False)
    a = ws.context(owner="a")
    b = ws.context(owner="b")
    a.fs.read(_spell(root, read_as))
    assert ws.policy is not None
    assert list(ws.policy.ledger.owners["a"]) == ["a.txt"]
    res = a.tools.execute(
        "edit", {"file_path": _spell(root, edit_as), "old_string": "alpha", "new_string": "A1"}
    )
    assert res.ok, res.text
    assert (root / "a.txt").read_bytes() == b"A1\nbeta\n"
    assert list(ws.policy.ledger.owners["a"]) == ["a.txt"]
    # another owner changes it (through yet another spelling)
    b.fs.read("/in_link")
    b.fs.replace(str((root / "a.txt").resolve()), "beta", "B2")
    assert (root / "a.txt").read_bytes() == b"A1\nB2\n"
    for i, third in enumerate(SPELLINGS):
        res = a.tools.execute(
            "edit", {"file_path": _spell(root, third), "old_string": "A1", "new_string": "A3"}
        )
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, (third, res.text)
        # The refusal showed b's change whole, so a has now observed it (under the one
        # key): b changes the file again, and a is stale again under this spelling.
        b.fs.write("/a.txt", f"A1\nB{i}e\n")
        res = a.tools.execute("write", {"file_path": _spell(root, third), "content": "x\n"})
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, (third, res.text)
        b.fs.write("/a.txt", f"A1\nB{i}w\n")
        assert list(ws.policy.ledger.owners["a"]) == ["a.txt"]
    assert (root / "a.txt").read_bytes() == f"A1\nB{len(SPELLINGS) - 1}w\n".encode()


def test_create_through_another_spelling_of_an_existing_file_is_refused(
    layout: dict[str, Path],
) -> None:
    root = layout["root"]
    ctx = Workspace(str(root), load_entry_points=False).context()
    for s in SPELLINGS:
        res = ctx.tools.execute(
            "str_replace_editor", {"command": "create", "path": _spell(root, s), "file_text": "x"}
        )
        assert res.error is not None and res.error.code is ErrorCode.FS_ALREADY_EXISTS, s
    assert (root / "a.txt").read_bytes() == b"alpha\nbeta\n"
    assert os.readlink(root / "in_link") == "a.txt"


def test_missing_observed_through_one_spelling_guards_the_other(layout: dict[str, Path]) -> None:
    root = layout["root"]
    ws = Workspace(str(root), load_entry_points=False)
    a, b = ws.context(owner="a"), ws.context(owner="b")
    res = a.tools.execute("read", {"file_path": "/d/../n.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
    b.fs.write("n.txt", "by b\n")
    res = a.tools.execute("write", {"file_path": str(root / "n.txt"), "content": "by a\n"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert (root / "n.txt").read_bytes() == b"by b\n"


def test_empty_and_root_paths(layout: dict[str, Path]) -> None:
    ctx = Workspace(str(layout["root"]), load_entry_points=False).context()
    res = ctx.tools.execute("write", {"file_path": "", "content": "x"})
    assert res.error is not None and res.error.code is ErrorCode.FS_INVALID_ARGUMENT
    for p in ("/", ".", "/d/.."):
        res = ctx.tools.execute("write", {"file_path": p, "content": "x"})
        assert res.error is not None and res.error.code is ErrorCode.FS_IS_DIRECTORY, p


class _SwapParentForSymlink:
    """Between the seam's path check and the backend write, the parent directory of the
    target is replaced by a symlink to a directory outside the root (what a concurrent
    process, e.g. a shell the agent runs, can do at any moment)."""

    def __init__(self, root: Path, outside: Path) -> None:
        self.root = root
        self.outside = outside

    from fsseam import hookimpl as _hookimpl

    @_hookimpl
    def fs_write_intent(self, event: Any) -> None:
        self._swap()

    @_hookimpl
    def fs_edit_intent(self, event: Any) -> None:
        self._swap()

    def _swap(self) -> None:
        d = self.root / "d"
        if not d.is_symlink():
            os.rename(d, self.root / "d_moved")
            os.symlink(self.outside / "sub", d)


@pytest.mark.parametrize(
    ("policy", "path"), [(True, "/d/new.txt"), (False, "/d/new.txt"), (False, "/d/deep.txt")]
)
def test_parent_swapped_for_a_symlink_after_the_check_does_not_escape(
    layout: dict[str, Path], policy: bool, path: str
) -> None:
    root, outside = layout["root"], layout["outside"]
    before = snapshot(outside)
    ws = Workspace(str(root), policy=policy, load_entry_points=False,
                   plugins=[_SwapParentForSymlink(root, outside)])
    ctx = ws.context()
    res = ctx.tools.execute("write", {"file_path": path, "content": "pwned\n"})
    assert snapshot(outside) == before, res.text
    assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, res.text


@pytest.mark.parametrize("path", [p for p in ESCAPES if "\x00" in p or ".." in p], ids=repr)
def test_memory_workspace_lexical_escapes(path: str) -> None:
    from fsspec.implementations.memory import MemoryFileSystem

    fs = MemoryFileSystem(global_store=False, skip_instance_cache=True)
    fs.pipe_file("/x", b"sibling of the root\n")
    fs.pipe_file("/ws/a.txt", b"alpha\n")
    before = {p: fs.cat_file(p) for p in fs.find("/")}
    ctx = Workspace("memory://ws", fs=fs, load_entry_points=False).context()
    for name, args in _calls(path):
        res = ctx.tools.execute(name, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, (
            name, res.text)
    assert {p: fs.cat_file(p) for p in fs.find("/")} == before


def test_filesystem_root_as_workspace_accepts_paths_under_it(layout: dict[str, Path]) -> None:
    """Workspace("/"): every path is under the root; none is outside it."""
    root = layout["root"]
    ctx = Workspace("/", read_only=True, load_entry_points=False).context()
    res = ctx.tools.execute("read", {"file_path": str(root / "a.txt")})
    assert res.ok, res.text
    assert res.value.lines == ["alpha", "beta"]
    assert res.value.path == str((root / "a.txt").resolve())
