"""The local search's one-pass walk and reads: the lean read of a small regular file gives
what the full one-file read gives, every other kind goes the full way, results come in
the walk's order, and a search left early holds no descriptor."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fsseam import Workspace
from fsseam.backends.local import LocalBackend
from fsseam.errors import ErrorCode, FsError
from fsseam.grep import compile_pattern

NEEDLE = b"needle_7"
CAP = 1 << 20
FILES = 200


def _tree(root: Path) -> None:
    """Files in several directories and depths, and every kind the lean read leaves to
    the full one."""
    for i in range(FILES):
        d = root / f"d{i % 4}" / ("deep/er" if i % 5 == 0 else "")
        d.mkdir(parents=True, exist_ok=True)
        text = b"line one\nline two %d\n" % i + (NEEDLE + b"\n" if i % 9 == 0 else b"")
        (d / f"f{i:03d}.txt").write_bytes(text)
    (root / "d1" / "bin.dat").write_bytes(b"\x00\x01" + NEEDLE)
    (root / "d2" / "huge.txt").write_bytes(b"y" * (CAP + 1))
    (root / "d3" / "link.txt").symlink_to(root / "d0" / "f000.txt")
    os.mkfifo(root / "d3" / "fifo")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.txt").write_bytes(NEEDLE)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    _tree(tmp_path)
    return tmp_path


def test_each_file_as_the_one_file_read_gives_it(tree: Path) -> None:
    backend = LocalBackend(str(tree))
    before = _open_fds()
    got = {k: (v.code if isinstance(v, FsError) else v, keep)
           for k, v, keep in backend.read_tree_unhashed("", lambda k: True, CAP,
                                                        lambda b: NEEDLE in b)}
    keys = list(got)
    assert keys == sorted(keys)  # the walk's order
    assert "d3/link.txt" not in got  # symlinks left out, as a search leaves them
    assert got["d2/huge.txt"] == (ErrorCode.FS_TOO_LARGE, False)
    assert got["d3/fifo"] == (ErrorCode.FS_UNSUPPORTED, False)
    for key, (value, keep) in got.items():
        if isinstance(value, bytes):
            assert value == backend.read(key).data, key
            assert keep == (NEEDLE in value), key
    assert got["d1/f009.txt"] == (b"line one\nline two 9\n" + NEEDLE + b"\n", True)
    assert got["d0/f004.txt"] == (b"line one\nline two 4\n", False)
    assert len([k for k in got if k.endswith(".txt")]) == FILES + 2  # .hidden/h.txt too
    assert _open_fds() == before


def test_grep_over_the_tree(tree: Path) -> None:
    ctx = Workspace(str(tree)).context("t")
    res = ctx.fs.grep(compile_pattern(NEEDLE.decode()), mode="content", limit=1000)
    assert res.files_matched == len(range(0, FILES, 9))
    assert res.skipped == {"binary": 1, "hidden": 1, "unreadable": 1}
    paths = [f.path for f in res.files]
    assert paths == sorted(paths)


def test_a_search_left_early_closes_every_descriptor(tree: Path) -> None:
    backend = LocalBackend(str(tree))
    before = _open_fds()
    reads = backend.read_tree_unhashed("", lambda k: True, CAP)
    for _ in range(FILES // 3):
        next(reads)
    assert _open_fds() > before  # the walk's directories
    reads.close()
    assert _open_fds() == before
