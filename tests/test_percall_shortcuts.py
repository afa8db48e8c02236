"""The per-call shortcuts of a local write and edit, each pinned to the long way it
replaces (docs/decisions.md): the newline count, the new document
built from the text instead of decoded from its bytes, the resolution of a key without
``os.path.realpath``, the old text of a write decoded only for its diff, and a read that
stops at the file's size."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsseam import ErrorCode, Workspace
from fsseam.backends.local import LocalBackend
from fsseam.backends.local.tree import Tree
from fsseam.text import TextFormat, count_newlines, decode, encode_new, new_doc

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
CHARS = st.sampled_from(["a", "\n", "\r", "\r\n", "é", "😀", "\ufeff", "\t", "\u2028"])
TEXTS = st.lists(CHARS, max_size=60).map("".join)


@SETTINGS
@given(text=TEXTS, end=st.none() | st.integers(min_value=0, max_value=80))
def test_count_newlines_is_str_count(text: str, end: int | None) -> None:
    stop = len(text) if end is None else end
    assert count_newlines(text, end) == text.count("\n", 0, stop)


def test_count_newlines_in_pieces_of_a_large_text() -> None:
    text = ("x" * 999_999 + "\n") * 3 + "é\n"
    assert count_newlines(text) == 4
    assert count_newlines(text, 2_000_000) == 2


@SETTINGS
@given(content=TEXTS, like=st.none() | st.builds(
    TextFormat, bom=st.booleans(), newline=st.sampled_from(["\n", "\r\n"])))
def test_new_doc_is_the_decoded_bytes_of_encode_new(content: str, like: TextFormat | None
                                                    ) -> None:
    made = new_doc(content, like)
    data = encode_new(content, like)
    assert made.encode() == data
    decoded = decode(data, "/f")
    assert (made.original, made.bom, made.view, made.newline, made.line_count) == (
        decoded.original, decoded.bom, decoded.view, decoded.newline, decoded.line_count)


# -- resolving a key --------------------------------------------------------------------------


def _long_way(tree: Tree, key: str) -> str | None:
    below = tree._below(os.path.realpath(tree.path(key)), tree.root)
    return below


@pytest.fixture
def linked(root: Path, tmp_path: Path) -> Path:
    (root / "d" / "e").mkdir(parents=True)
    (root / "d" / "e" / "f.txt").write_bytes(b"f\n")
    (root / "a.txt").write_bytes(b"a\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    os.symlink("d", root / "dir_link")
    os.symlink("../a.txt", root / "d" / "up_link")
    os.symlink(outside, root / "out_link")
    os.symlink("missing", root / "dangling")
    return root


KEYS = ["", "a.txt", "d", "d/e/f.txt", "d/e/new.txt", "new/dir/x.txt", "a.txt/below",
        "dir_link/e/f.txt", "d/up_link", "out_link/x", "dangling", "dangling/x"]


@pytest.mark.parametrize("key", KEYS)
def test_resolve_answers_as_realpath(linked: Path, key: str) -> None:
    backend = LocalBackend(str(linked))
    tree = backend._tree
    expected = _long_way(tree, key)
    if expected is None:
        with pytest.raises(Exception) as info:
            tree.resolve(key)
        assert getattr(info.value, "code", None) is ErrorCode.FS_OUTSIDE_ROOT
    else:
        assert tree.resolve(key) == expected
    assert tree._plain(key) is (key in {"", "a.txt", "d", "d/e/f.txt", "d/e/new.txt",
                                        "new/dir/x.txt", "a.txt/below"})


def test_a_root_moved_away_is_resolved_the_long_way(root: Path, tmp_path: Path) -> None:
    """The root replaced by a link to elsewhere: its key is outside the root, as realpath
    says, not a file of the new target."""
    (root / "f.txt").write_bytes(b"x\n")
    backend = LocalBackend(str(root))
    assert backend._tree.resolve("f.txt") == "f.txt"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f.txt").write_bytes(b"other\n")
    root.rename(tmp_path / "old_root")
    os.symlink(elsewhere, root)
    assert backend._tree._plain("f.txt") is False
    with pytest.raises(Exception) as info:
        backend._tree.resolve("f.txt")
    assert getattr(info.value, "code", None) is ErrorCode.FS_OUTSIDE_ROOT


# -- the old text of a write, decoded only for the diff --------------------------------------


def test_write_after_a_read_diffs_against_the_text_read(root: Path) -> None:
    (root / "f.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    ws = Workspace(str(root), load_entry_points=False)
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": "/f.txt"}).ok
    res = ctx.tools.execute("write", {"file_path": "/f.txt", "content": "one\nTWO\n"})
    assert res.ok, res.text
    assert (root / "f.txt").read_bytes() == b"\xef\xbb\xbfone\r\nTWO\r\n"
    assert res.value.lines == 2
    assert res.value.diff == (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n")


# -- a read that stops at the file's size ------------------------------------------------------


@pytest.mark.parametrize("size", [0, 1, 65_535, 65_536, 65_537, 200_001])
def test_reads_end_at_the_size_without_another_read(root: Path, size: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    data = bytes(i % 251 for i in range(size))
    (root / "f.bin").write_bytes(data)
    backend = LocalBackend(str(root))
    reads: list[int] = []
    real = os.read

    def counting(fd: int, n: int) -> bytes:
        got = real(fd, n)
        reads.append(len(got))
        return got

    monkeypatch.setattr(os, "read", counting)
    blob = backend.read("f.bin")
    assert blob.data == data
    # One read of all of it; an empty file's read is the one that finds its end.
    assert reads == [size]
