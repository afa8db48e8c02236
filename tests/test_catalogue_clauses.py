"""Fragments the backends and the tool-run path put into a sentence (an {action}, a
{doing}, an {error}, a {kind}) are catalogue clauses: what the model reads is pinned here
word for word, through the real code paths that say it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from fsseam import ErrorCode, FsError, Overwrite, Workspace
from fsseam.backends import LocalBackend
from fsseam.backends.history import History, KeptHistoryBackend
from fsseam.backends.history.directory import DirectoryHistoryStore
from fsseam.backends.history.stores import MemoryHistoryStore
from fsseam.versions import Precondition, Version


@pytest.mark.parametrize(
    ("arguments", "kind"),
    [('["/m.txt"]', "an array"), ('"/m.txt"', "a string"), ("1", "a number"),
     ("1.5", "a number"), ("true", "a boolean"), ("null", "null")],
)
def test_arguments_not_an_object_name_their_json_kind(arguments: str, kind: str) -> None:
    ws = Workspace("memory://clauses-kinds", {"global_store": False}, load_entry_points=False)
    res = ws.context("a").tools.execute("read", arguments)
    assert not res.ok
    assert res.text == (
        f"Error [FS_INVALID_ARGUMENT]: arguments must be a JSON object, not {kind}."
    )


def test_a_copy_onto_a_path_through_a_file_says_copy_to(tmp_path: Path) -> None:
    """The destination of a copy is written: a file on its way is a mistake in the path
    (parent_is_file), said with the two-word action."""
    backend = LocalBackend(str(tmp_path))
    backend.write("f.txt", b"x\n", Overwrite())
    with pytest.raises(FsError) as info:
        backend.copy("f.txt", "f.txt/y.txt")
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert info.value.message == (
        "cannot copy to /f.txt/y.txt: a parent of this path is a file, not a directory."
    )


class _Contended(LocalBackend):
    """Local disk where another writer replaces the file just before each write of ours,
    so every compare-and-swap the kept history makes finds a newer version."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self._turn = itertools.count(1)

    def write(self, key: str, data: bytes, precondition: Precondition,
              **kwargs: object) -> Version:
        Path(self.root, key).write_bytes(b"theirs\n" * next(self._turn))
        return super().write(key, data, precondition)


def test_a_file_that_keeps_changing_while_it_is_kept_says_so(tmp_path: Path) -> None:
    inner = _Contended(str(tmp_path))
    Path(tmp_path, "a.txt").write_bytes(b"one\n")
    backend = KeptHistoryBackend(inner, MemoryHistoryStore(), History())
    with pytest.raises(FsError) as info:
        backend.write("a.txt", b"ours\n", Overwrite())
    assert info.value.message == (
        "/a.txt kept changing while it was being copied into the history; nothing was "
        "changed. Retry later."
    )


DAMAGE = {
    b"[]": "holds a JSON list, not an object",
    b'"x"': "holds a JSON str, not an object",
    b'{"entries": []}': "wrong format or key",
    b'{"format": 1, "key": "f.txt", "entries": "zzz"}': "its entries are not a list",
    b'{"format": 1, "key": "f.txt", "entries": [{"kind": "sha256", "value": "ab", '
    b'"size": "big"}]}': (
        "an entry's size: Input should be a valid integer, unable to parse string as an "
        "integer"
    ),
}


@pytest.mark.parametrize(("index", "error"), list(DAMAGE.items()))
def test_a_damaged_index_says_what_is_wrong_with_it(
    index: bytes, error: str, tmp_path: Path,
) -> None:
    store = DirectoryHistoryStore(str(tmp_path / "kept"))
    with store.lock("f.txt"):
        pass  # makes the file's directory and an empty index, as a first change does
    (path,) = (tmp_path / "kept").glob("*/index.json")
    path.write_bytes(index)
    with pytest.raises(FsError) as info:
        store.entries("f.txt")
    assert info.value.code is ErrorCode.FS_BACKEND
    assert info.value.message.startswith(
        f"the history fsseam keeps of /f.txt cannot be used: its index file {path} is "
        f"damaged ({error}), so no older version of it can be listed or brought back now."
    )
