"""The local search's read-ahead: small files read on reader threads in batches give what
the caller's own reads give, in the walk's order, and leave no descriptor open."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from fsseam import Workspace
from fsseam.backends.local import LocalBackend
from fsseam.backends.local import search as local_search
from fsseam.errors import ErrorCode, FsError
from fsseam.grep import compile_pattern

NEEDLE = b"needle_7"
CAP = 1 << 20


def _tree(root: Path) -> None:
    """Enough files for several batches, and every kind the readers leave to the caller."""
    for i in range(3 * local_search.BATCH_FILES + 5):
        d = root / f"d{i % 4}" / ("deep/er" if i % 5 == 0 else "")
        d.mkdir(parents=True, exist_ok=True)
        text = b"line one\nline two %d\n" % i + (NEEDLE + b"\n" if i % 9 == 0 else b"")
        (d / f"f{i:03d}.txt").write_bytes(text)
    (root / "d1" / "bin.dat").write_bytes(b"\x00\x01" + NEEDLE)
    big = b"x" * (local_search.AHEAD_MAX_BYTES + 10) + b"\n" + NEEDLE + b"\n"
    (root / "d2" / "big.txt").write_bytes(big)
    (root / "d2" / "huge.txt").write_bytes(b"y" * (CAP + 1))
    (root / "d3" / "link.txt").symlink_to(root / "d0" / "f000.txt")
    os.mkfifo(root / "d3" / "fifo")
    (root / ".hidden").mkdir()
    (root / ".hidden" / "h.txt").write_bytes(NEEDLE)


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _reads(backend: LocalBackend) -> list[tuple[str, bytes | str, bool]]:
    out: list[tuple[str, bytes | str, bool]] = []
    for key, got, keep in backend.read_tree_unhashed("", lambda k: True, CAP,
                                                     lambda b: NEEDLE in b):
        out.append((key, got.code.value if isinstance(got, FsError) else got, keep))
    return out


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    _tree(tmp_path)
    return tmp_path


def test_read_ahead_gives_what_the_callers_reads_give(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    backend = LocalBackend(str(tree))
    before = _open_fds()
    monkeypatch.setattr(local_search, "READERS", 1)
    alone = _reads(backend)
    monkeypatch.setattr(local_search, "READERS", 2)
    ahead = _reads(backend)
    assert ahead == alone
    keys = [k for k, _, _ in ahead]
    assert keys == sorted(keys)  # the walk's order
    assert "d3/link.txt" not in keys  # symlinks left out
    got = {k: (v, keep) for k, v, keep in ahead}
    assert got["d2/huge.txt"][0] == ErrorCode.FS_TOO_LARGE.value
    # Larger than the readers take: read by the caller.
    assert got["d2/big.txt"] == (b"x" * (local_search.AHEAD_MAX_BYTES + 10) + b"\n"
                                 + NEEDLE + b"\n", True)
    assert got["d3/fifo"][0] == ErrorCode.FS_UNSUPPORTED.value
    assert got["d1/f009.txt"] == (b"line one\nline two 9\n" + NEEDLE + b"\n", True)
    assert got["d0/f004.txt"] == (b"line one\nline two 4\n", False)
    assert _open_fds() == before


def test_grep_counts_match_with_and_without_readers(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ctx = Workspace(str(tree)).context("t")
    pattern = compile_pattern(NEEDLE.decode())
    outcomes = []
    for readers in (1, 2):
        monkeypatch.setattr(local_search, "READERS", readers)
        res = ctx.fs.grep(pattern, mode="content", limit=1000)
        outcomes.append(res.model_dump())
    assert outcomes[0] == outcomes[1]
    res = outcomes[1]
    assert res["files_matched"] == len(range(0, 3 * local_search.BATCH_FILES + 5, 9)) + 1
    assert res["skipped"] == {"binary": 1, "hidden": 1, "unreadable": 1}
    paths = [f["path"] for f in res["files"]]
    assert paths == sorted(paths)


def test_a_search_left_early_closes_every_descriptor(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(local_search, "READERS", 2)
    backend = LocalBackend(str(tree))
    before = _open_fds()
    reads = backend.read_tree_unhashed("", lambda k: True, CAP)
    for _ in range(local_search.BATCH_FILES + 3):  # into the read-ahead
        next(reads)
    assert _open_fds() > before
    reads.close()
    assert _open_fds() == before
