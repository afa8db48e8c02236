"""grep's fast paths on a local tree (a literal ruled out on the raw bytes, files read
without their versions and only the shown ones hashed, the walk and the reads in one pass)
give exactly what the plain path gives: the same outcome, skipped counts included, and the
same observations."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
import uuid
from pathlib import Path
from typing import Any, Literal
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsseam import Limits, ListEvent, ReadEvent, Workspace, hookimpl
from fsseam.backends.local import LocalBackend
from fsseam.grep import MatchBlock, Pattern, compile_pattern, hunks, matching_lines
from fsseam.seam import scan

from .budget import examples

Mode = Literal["files_with_matches", "content", "count"]


class Reads:
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any, bool]] = []

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        self.seen.append((event.key, event.version, event.partial))


class Listings:
    """A plugin that receives listings (and hides nothing): the search then builds the walk's
    entries for it, which the one-pass local search does not."""

    def __init__(self) -> None:
        self.walked = 0

    @hookimpl
    def fs_list(self, event: ListEvent) -> None:
        self.walked += len(event.entries)


def _plain(p: Pattern) -> Pattern:
    # The same search without the literal shortcut (nor a regex's literal runs, patched
    # out where it runs): the regex engine on decoded text.
    return dataclasses.replace(p, literal=None)


def _memory(files: dict[str, bytes], *plugins: Any) -> tuple[Workspace, Reads]:
    reads = Reads()
    ws = Workspace(f"memory://fast-{uuid.uuid4().hex}", load_entry_points=False,
                   plugins=[reads, *plugins])
    for key, data in files.items():
        ws.backend.fs.pipe_file(ws.backend.path(key), data)  # type: ignore[attr-defined]
    return ws, reads


def _local(root: Path, files: dict[str, bytes], *plugins: Any,
           limits: Limits | None = None) -> tuple[Workspace, Reads]:
    for key, data in files.items():
        p = root / key
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    reads = Reads()
    ws = Workspace(str(root), load_entry_points=False, plugins=[reads, *plugins],
                   limits=limits)
    return ws, reads


# Pieces that exercise every branch: the needle whole and split by CR or a newline, NULs
# (binary), a BOM, CRLF, a byte that is not UTF-8, multi-byte characters.
_PIECES = [b"ab", b"a", b"b", b"\r\n", b"\n", b"\r", b"\x00", b"\xef\xbb\xbf", b"\xff",
           "é".encode(), "ab\u00e9".encode(), b"x"]
_contents = st.lists(st.sampled_from(_PIECES), max_size=12).map(b"".join)
_names = st.sampled_from(["a.txt", "d/b.txt", "d/e/c.md", ".hid/h.txt", "z.txt"])
_patterns = st.sampled_from(["ab", "a", "b", "x", "é", "abé", "\r", "b\r", "\ufeffab",
                             "\ud800", "a.", "^ab", "b$", "[ab]", "(?:ab)",
                             # regexes whose literal runs rule files out on their bytes
                             "ab+", "(ab)+x", "abé+", "a\\nb", "[xa]ab", "ab|x", "xa?b"])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(files=st.dictionaries(_names, _contents, max_size=5), source=_patterns,
       mode=st.sampled_from(["files_with_matches", "content", "count"]),
       context=st.integers(0, 2), limit=st.integers(1, 4), listed=st.booleans())
def test_fast_paths_give_what_the_plain_path_gives(
    files: dict[str, bytes], source: str, mode: Mode, context: int, limit: int, listed: bool
) -> None:
    # listed: a plugin receives listings, so the local search walks entries first and then
    # reads them (read_many_unhashed); without one it takes the one-pass read_tree_unhashed.
    pattern = compile_pattern(source)
    fast_listings, plain_listings = Listings(), Listings()
    with tempfile.TemporaryDirectory() as tmp:
        fast_ws, fast_reads = _local(Path(tmp), files, *([fast_listings] if listed else []))
        plain_ws, plain_reads = _memory(files, *([plain_listings] if listed else []))
        fast = fast_ws.context("a").fs.grep(pattern, mode=mode, context=context, limit=limit)
        with mock.patch.object(scan, "_regex_run", lambda p: None):
            plain = plain_ws.context("a").fs.grep(_plain(pattern), mode=mode,
                                                  context=context, limit=limit)
        assert fast == plain
        assert fast_reads.seen == plain_reads.seen
        assert fast_listings.walked == plain_listings.walked == (len(files) if listed else 0)


def test_content_mode_records_the_digest_of_the_bytes_searched(tmp_path: Path) -> None:
    data = b"\xef\xbb\xbfone\r\nneedle\r\n"
    ws, reads = _local(tmp_path, {"d/w.txt": data, "d/other.txt": b"nothing\n"})
    out = ws.context("a").fs.grep(compile_pattern("needle"), mode="content")
    assert out.lines_matched == 1
    [(key, version, partial)] = reads.seen
    assert (key, partial) == ("d/w.txt", True)
    assert (version.kind, version.value) == ("sha256", hashlib.sha256(data).hexdigest())
    assert version == ws.backend.read("d/w.txt").version


def test_unhashed_reads_are_the_reads_without_their_versions(tmp_path: Path) -> None:
    ws, _ = _local(tmp_path, {"a.txt": b"one", "d/b.txt": b"two"})
    entries = list(ws.backend.walk(""))
    hashed = list(ws.backend.read_many(entries))
    unhashed = list(ws.backend.read_many_unhashed(entries))  # type: ignore[attr-defined]
    assert [(e.key, b.data) for e, b in hashed] == [(e.key, d) for e, d in unhashed]
    assert all(b.version.value == hashlib.sha256(b.data).hexdigest() for _, b in hashed)


def test_one_pass_search_stats_nothing_and_rechecks_only_what_may_match(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Per file: open, fstat, read, close; the second fstat (did it change while read?) only
    for the files holding the literal, whose lines may be shown."""
    files = {f"d{i % 3}/f{i:03d}.txt": (b"needle\n" if i % 4 == 0 else b"hay\n") * 3
             for i in range(40)}
    fs = _local(tmp_path, files)[0].context("a").fs
    fs.grep(compile_pattern("needle"))  # the root's one-time lookups are not per file
    calls = {"stat": 0, "fstat": 0}
    real_stat, real_fstat = os.stat, os.fstat

    def counting_stat(*args: Any, **kwargs: Any) -> Any:
        calls["stat"] += 1
        return real_stat(*args, **kwargs)

    def counting_fstat(fd: int) -> os.stat_result:
        calls["fstat"] += 1
        return real_fstat(fd)

    monkeypatch.setattr(os, "stat", counting_stat)
    monkeypatch.setattr(os, "fstat", counting_fstat)
    out = fs.grep(compile_pattern("needle"), mode="files_with_matches", limit=100)
    monkeypatch.undo()
    assert out.files_matched == 10 and out.searched == 40
    assert calls == {"stat": 0, "fstat": 40 + 10}


def test_a_file_changed_while_read_is_read_again_only_when_wanted(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_bytes(b"old needle\n")
    backend = LocalBackend(str(tmp_path))
    changed: list[bytes] = []

    def writer_during_read(wanted: bool) -> Any:
        def ask(data: bytes) -> bool:
            if not changed:  # another writer, between the read and the check
                changed.append(data)
                (tmp_path / "a.txt").write_bytes(b"new needle!\n")
            return wanted

        return ask

    got = list(backend.read_tree_unhashed("", lambda k: True, 1 << 20, writer_during_read(True)))
    assert got == [("a.txt", b"new needle!\n", True)]  # read again: the bytes on disk
    assert changed == [b"old needle\n"]
    changed.clear()
    (tmp_path / "a.txt").write_bytes(b"old needle\n")
    got = list(backend.read_tree_unhashed("", lambda k: True, 1 << 20, writer_during_read(False)))
    assert got == [("a.txt", b"old needle\n", False)]  # not wanted: passed as read


def test_one_pass_search_meets_links_fifos_and_large_files_as_the_walk_does(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    files = {"a.txt": b"needle\n", "big.txt": b"needle " * 40, "d/b.txt": b"needle\n"}
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"needle outside\n")

    def make(where: Path, *plugins: Any) -> Workspace:
        ws, _ = _local(where, files, *plugins, limits=Limits(max_edit_bytes=100))
        os.mkfifo(where / "pipe")
        os.symlink(outside, where / "out.txt")
        os.symlink("a.txt", where / "in.txt")
        os.symlink(tmp_path, where / "up")
        return ws

    one_pass = make(root).context("a").fs
    listings = Listings()
    two_pass = make(tmp_path / "root2", listings).context("a").fs
    modes: list[Mode] = ["content", "files_with_matches", "count"]
    for mode in modes:
        got = one_pass.grep(compile_pattern("needle"), mode=mode)
        assert got == two_pass.grep(compile_pattern("needle"), mode=mode)
        assert [f.path for f in got.files] == ["/a.txt", "/d/b.txt"]
        assert got.skipped == {"too_large": 1, "unreadable": 1}  # big.txt; the FIFO
    assert listings.walked > 0
    assert (root / "pipe").is_fifo() and outside.read_bytes() == b"needle outside\n"


def _hunks_by_newline_offsets(text: str, matches: list[int], context: int) -> list[MatchBlock]:
    # The former hunks(), finding each newline: the reference for the split-based one.
    if not matches:
        return []
    newlines = [i for i, c in enumerate(text) if c == "\n"]
    n_lines = len(newlines) + (0 if text.endswith("\n") or not text else 1)

    def line(k: int) -> str:
        start = newlines[k - 1] + 1 if k > 0 else 0
        end = newlines[k] if k < len(newlines) else len(text)
        return text[start:end]

    out: list[MatchBlock] = []
    run: list[int] = []
    lo = hi = -1
    for m in matches:
        a, b = max(0, m - context), min(n_lines - 1, m + context)
        if run and a <= hi + 1:
            hi = max(hi, b)
            run.append(m)
            continue
        if run:
            out.append(MatchBlock(lo + 1, [line(k) for k in range(lo, hi + 1)],
                              [r + 1 for r in run]))
        run, lo, hi = [m], a, b
    out.append(MatchBlock(lo + 1, [line(k) for k in range(lo, hi + 1)], [r + 1 for r in run]))
    return out


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="ab\nx", max_size=40), source=st.sampled_from(["a", "b", "^", "$"]),
       context=st.integers(0, 3))
def test_hunks_are_the_lines_around_the_matches(text: str, source: str, context: int) -> None:
    matches = matching_lines(text, compile_pattern(source))
    assert hunks(text, matches, context) == _hunks_by_newline_offsets(text, matches, context)


_atoms = st.sampled_from(["a", "b", "ab", "é", "_", "\\(", "[ab]", "[^a]", ".", "\\w", "\\d",
                          "\\n", "\\s", "\\b", "^", "$", "\\x61"])


@st.composite
def _regexes(draw: st.DrawFn, depth: int = 2) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        if depth and draw(st.booleans()):
            inner = draw(_regexes(depth - 1))
            alt = draw(st.sampled_from(["", "|" + draw(_regexes(depth - 1))]))
            parts.append(f"({inner}{alt})")
        else:
            parts.append(draw(_atoms))
        parts[-1] += draw(st.sampled_from(["", "", "+", "*", "?", "{2}", "{0,2}"]))
    return "".join(parts)


@settings(max_examples=examples(400), deadline=None)
@given(source=_regexes(), text=st.text(alphabet="ab_é(1 \n\r", max_size=30))
def test_a_regex_s_literal_run_is_in_every_text_it_matches(source: str, text: str) -> None:
    """The bytes a regex grep rules files out by are in the bytes of every file the regex
    matches (after the BOM and CRLF a search drops)."""
    pattern = compile_pattern(source)
    needle = scan.needle(pattern)
    if needle is None:
        return
    searched = text.replace("\r\n", "\n")
    if pattern.compiled.search(searched):
        assert needle in text.encode("utf-8")
