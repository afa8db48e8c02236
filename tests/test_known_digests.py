"""Digest backends hash each content once: bytes equal to the ones last read or written at a
key take their version from a comparison, and any other bytes are digested."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fsseam.backends.digests as digest_mod
from fsseam import CreateOnly, Workspace
from fsseam.backends.digests import KnownDigests, digest_version
from fsseam.backends.memory import isolated_memory_filesystem
from fsseam.seam.verdicts import holds
from fsseam.text import decode
from fsseam.tools.registry import ToolRegistry

BIG = 10_000
"""Hashes of at least this many bytes are the ones counted (not hmac's temp-name tags)."""


@pytest.fixture
def hashed(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Sizes of the contents sha256 is run over (those of BIG bytes or more)."""
    calls: list[int] = []
    real = hashlib.sha256

    def counting(data: bytes = b"", **kwargs: object) -> object:
        if len(data) >= BIG:
            calls.append(len(data))
        return real(data, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(hashlib, "sha256", counting)
    yield calls


def test_version_is_the_digest_of_exactly_the_bytes_given(hashed: list[int]) -> None:
    known = KnownDigests()
    a, b = b"a" * BIG, b"b" * BIG
    assert known.version("k", a) == digest_version(a)
    assert known.version("k", bytes(a)) == digest_version(a)  # equal bytes, not the object
    assert known.version("k", b) == digest_version(b)  # same size, other bytes: hashed
    assert known.version("other", b) == digest_version(b)  # kept per key
    # digest_version above hashed 4 times; version() hashed a, b and b at "other".
    assert len(hashed) == 4 + 3


def test_bounded_and_big_contents_are_not_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    real = digest_mod.digest_version
    monkeypatch.setattr(digest_mod, "digest_version", lambda d: calls.append(len(d)) or real(d))
    known = KnownDigests(budget=4 * BIG)
    big = b"x" * (BIG + 1)  # over a quarter of the budget
    known.version("big", big)
    known.version("big", big)
    assert calls == [len(big), len(big)]
    calls.clear()
    for i in range(5):  # 5 small contents: the oldest is dropped to stay within the budget
        known.version(f"k{i}", bytes([i]) * BIG)
    known.version("k4", bytes([4]) * BIG)
    assert calls == [BIG] * 5
    known.version("k0", bytes([0]) * BIG)
    assert calls == [BIG] * 6
    known.forget("k4")
    known.version("k4", bytes([4]) * BIG)
    assert calls == [BIG] * 7


@pytest.fixture(params=["memory", "local"])
def tools(request: pytest.FixtureRequest, tmp_path: Path) -> ToolRegistry:
    if request.param == "memory":
        ws = Workspace("memory://known", fs=isolated_memory_filesystem())
    else:
        ws = Workspace(str(tmp_path))
    return ws.context("a").tools


def _text(tag: str) -> str:
    return "".join(f"{i:05d} line of text {tag if i == 500 else ''}\n" for i in range(1000))


def test_an_edit_hashes_only_its_new_bytes(tools: ToolRegistry, hashed: list[int]) -> None:
    assert tools.execute("write", {"file_path": "/f.txt", "content": _text("alpha")}).ok
    hashed.clear()
    assert tools.execute("read", {"file_path": "/f.txt"}).ok
    assert hashed == []  # the bytes this backend just wrote: compared, not hashed
    res = tools.execute("edit", {"file_path": "/f.txt", "old_string": "alpha",
                                 "new_string": "omega"})
    assert res.ok, res.text
    # The edit's read and the re-check before the write compare; the new bytes are hashed.
    assert hashed == [len(_text("omega").encode())]


def test_same_size_change_by_another_writer_is_a_new_version() -> None:
    fs = isolated_memory_filesystem()
    backend = Workspace("memory://known", fs=fs).backend
    v1 = backend.write("f.txt", b"a" * BIG, CreateOnly())
    fs.pipe_file("/known/f.txt", b"b" * BIG)  # another fsspec user, same size
    blob = backend.read("f.txt")
    assert blob.data == b"b" * BIG
    assert blob.version == digest_version(b"b" * BIG) != v1


def test_a_write_hashes_only_its_new_bytes(tools: ToolRegistry, hashed: list[int]) -> None:
    assert tools.execute("write", {"file_path": "/f.txt", "content": _text("alpha")}).ok
    hashed.clear()
    res = tools.execute("write", {"file_path": "/f.txt", "content": _text("omega")})
    assert res.ok, res.text
    # Whether the write only puts back the bytes read is answered by the bytes kept for
    # that version (a comparison), not by a digest of the new bytes; the write digests them.
    assert hashed == [len(_text("omega").encode())]
    hashed.clear()
    res = tools.execute("write", {"file_path": "/f.txt", "content": _text("omega")})
    assert res.ok and res.value.unchanged, res.text
    assert tools.execute("read", {"file_path": "/f.txt"}).value.lines[500].endswith("omega")


@settings(max_examples=60, deadline=None)
@given(kept=st.binary(max_size=64), given_=st.binary(max_size=64), cached=st.booleans())
def test_holds_answers_as_the_digest_does(kept: bytes, given_: bytes, cached: bool) -> None:
    seam = Workspace("memory://holds", fs=isolated_memory_filesystem()).context("a").fs
    version = digest_version(kept)
    if cached:
        seam.docs.put("f.txt", version, decode(b"x", "/f.txt").format, kept)
    assert holds(seam, "f.txt", version, given_, None) is (given_ == kept)
