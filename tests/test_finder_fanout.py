"""A grep of a large local tree by several processes gives the answer one process gives.

The tree is cut into parts (``LocalBackend.split_tree``), helper processes scan parts, and
the findings are put back in the walk's order. Every test compares with the same grep in
one process (``Limits(finder_processes=1)``): files shown, hunks, counts, skips, limits,
truncation, and the reads recorded for the files shown. The helpers are real processes,
started once per test process; ``SWITCH_SECONDS = 0`` hands parts out from the first one,
where a real search first runs a quarter of a second on its own."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsseam.deadline
from fsseam import Limits, ReadEvent, Workspace, hookimpl
from fsseam.backends.local import parts as local_parts
from fsseam.backends.local.writes import temp_name
from fsseam.outcomes import GrepOutcome
from fsseam.seam import finding, workers

from .budget import examples

HELPERS = 2


@pytest.fixture
def helpers(monkeypatch: pytest.MonkeyPatch) -> workers.Helpers:
    monkeypatch.setattr(finding, "SWITCH_SECONDS", 0.0)
    pool = workers.helpers()
    if pool.failed:  # a test below made starting fail: this process may start them again
        pool.failed = False
    pool.wait_ready(HELPERS)
    assert len(pool.all) >= HELPERS and all(h.ready for h in pool.all)
    return pool


class Reads:
    """The reads a grep records (content mode records each file it shows)."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str]] = []

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        self.seen.append((event.key, event.version))


def _tree(root: Path, dirs: int = 6, per_dir: int = 25) -> None:
    """Files in nested directories, some matching, some binary, some not UTF-8, one too
    large for a small cap, files between subdirectories, a skipped directory, a link and
    a write's leftover temp file."""
    for d in range(dirs):
        for sub in ("", "x", "x/y", "z"):
            here = root / f"d{d}" / sub
            here.mkdir(parents=True, exist_ok=True)
            for i in range(per_dir):
                body = "".join(
                    f"line {j} {'needle' if (i * 7 + j + d) % 23 == 0 else 'hay'}\n"
                    for j in range(40))
                (here / f"f{i:02d}.txt").write_text(body)
            (here / "bin.dat").write_bytes(b"needle\x00\x01")
            (here / "latin.txt").write_bytes(b"needle caf\xe9\n")
        (root / f"d{d}.txt").write_text("needle between directories\n")
    (root / "top.txt").write_text("needle\n" * 3)
    (root / "big.txt").write_text("needle\n" + "x" * 5000)
    nm = root / "node_modules" / "pkg"
    nm.mkdir(parents=True)
    (nm / "index.js").write_text("needle\n")
    os.symlink(root / "top.txt", root / "d0" / "link.txt")
    (root / "d1" / temp_name("f00.txt")).write_text("needle in a temp file\n")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    _tree(root)
    return root


def _grep(root: Path, processes: int, args: dict[str, Any], **limits: Any
          ) -> tuple[GrepOutcome, list[tuple[str, str]]]:
    ws = Workspace(str(root), load_entry_points=False,
                   limits=Limits(finder_processes=processes, **limits))
    reads = Reads()
    ws.gate.register(reads)
    res = ws.context("agent").tools.execute("grep", args)
    assert res.ok, res.text
    assert isinstance(res.value, GrepOutcome)
    return res.value, reads.seen


def _same(root: Path, args: dict[str, Any], **limits: Any) -> GrepOutcome:
    one, one_reads = _grep(root, 1, args, **limits)
    many, many_reads = _grep(root, HELPERS, args, **limits)
    assert many.model_dump() == one.model_dump()
    assert many_reads == one_reads
    return many


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
@pytest.mark.parametrize("limit", [1, 7, 10_000])
def test_the_answer_is_one_process_s(tree: Path, helpers: workers.Helpers, mode: str,
                                     limit: int) -> None:
    before = helpers.parts_there
    out = _same(tree, {"pattern": "needle", "output_mode": mode, "max_results": limit,
                       "context_lines": 2}, max_edit_bytes=4096)
    assert helpers.parts_there > before  # the helpers searched parts of it
    assert out.files_matched > 100
    assert out.truncated == (limit < 100)
    assert out.skipped == {"binary": 24, "not_utf8": 24, "too_large": 1, "hidden": 1}
    if mode == "content":
        assert sum(len(h.matches) for f in out.files for h in f.hunks or ()) == min(
            limit, out.lines_matched)


def test_regex_glob_and_case(tree: Path, helpers: workers.Helpers) -> None:
    _same(tree, {"pattern": r"line [0-9]+ NEEDLE$", "case_insensitive": True,
                 "output_mode": "content", "glob": "**/x/*.txt"})
    _same(tree, {"pattern": "between", "path": "/", "glob": "*.txt"})
    out = _same(tree, {"pattern": "needle", "path": "/d3", "output_mode": "count"})
    assert out.files_matched and all(f.path.startswith("/d3/") for f in out.files)


def test_a_file_of_many_runs_and_a_path_that_is_a_file(
        tmp_path: Path, helpers: workers.Helpers, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_parts, "RUN_FILES", 7)  # one flat directory, many parts
    root = tmp_path / "flat"
    root.mkdir()
    for i in range(60):
        (root / f"f{i:03d}.txt").write_text(f"{i}\nneedle {i}\n" if i % 3 else "hay\n")
    before = helpers.parts_there
    out = _same(root, {"pattern": "needle", "output_mode": "content", "max_results": 25})
    assert helpers.parts_there > before
    assert (out.files_matched, out.truncated) == (40, True)
    assert [f.path for f in out.files][:3] == ["/f001.txt", "/f002.txt", "/f004.txt"]
    one = _same(root, {"pattern": "needle", "path": "/f001.txt"})
    assert [f.path for f in one.files] == ["/f001.txt"]


def test_the_reads_recorded_let_the_agent_edit_what_it_was_shown(
        tree: Path, helpers: workers.Helpers) -> None:
    ws = Workspace(str(tree), load_entry_points=False, limits=Limits(finder_processes=2))
    ctx = ws.context("agent")
    res = ctx.tools.execute("grep", {"pattern": "between", "output_mode": "content"})
    assert res.ok and res.value.files_matched == 6, res.text
    edit = ctx.tools.execute("edit", {"file_path": "/d4.txt", "old_string": "between",
                                      "new_string": "among"})
    assert edit.ok, edit.text
    assert (tree / "d4.txt").read_text() == "needle among directories\n"


def test_a_helper_killed_while_searching_costs_its_part_here(
        tree: Path, helpers: workers.Helpers) -> None:
    expected, _ = _grep(tree, 1, {"pattern": "needle", "output_mode": "count"})
    victim = helpers.all[0]
    os.kill(victim.proc.pid, signal.SIGSTOP)  # takes a part, answers nothing
    outcome: list[GrepOutcome] = []
    t = threading.Thread(target=lambda: outcome.append(
        _grep(tree, HELPERS, {"pattern": "needle", "output_mode": "count"})[0]))
    t.start()
    try:
        while victim.job is None and t.is_alive():
            t.join(0.01)  # until the stopped helper holds a part of this search
    finally:
        os.kill(victim.proc.pid, signal.SIGKILL)
    t.join(60)
    assert not t.is_alive()
    assert outcome[0].model_dump() == expected.model_dump()
    assert victim not in helpers.all  # dropped; the next search starts no other
    helpers.wait_ready(HELPERS)


@pytest.mark.parametrize("python", ["no-such-python", "/bin/false"])
def test_helpers_that_cannot_start_leave_the_search_to_this_process(
        tree: Path, monkeypatch: pytest.MonkeyPatch, python: str) -> None:
    # No such program (the start fails), or one that exits at once (the helper is gone
    # before it is ready): either way the search is this process's, and no helper is
    # started again.
    monkeypatch.setattr(finding, "SWITCH_SECONDS", 0.0)
    monkeypatch.setattr(workers, "_helpers", None)  # a process that has none yet
    monkeypatch.setattr(workers.sys, "executable", str(tree / python))
    out = _same(tree, {"pattern": "needle", "output_mode": "count"})
    pool = workers.helpers()
    assert pool.failed and not pool.all and pool.parts_there == 0 and pool.parts_here > 0
    assert out.files_matched > 100


def test_two_searches_at_once_both_answer(tree: Path, helpers: workers.Helpers) -> None:
    expected, _ = _grep(tree, 1, {"pattern": "needle", "output_mode": "count"})
    got: list[GrepOutcome] = []
    hold = threading.Barrier(2)

    def one() -> None:
        hold.wait()
        got.append(_grep(tree, HELPERS, {"pattern": "needle", "output_mode": "count"})[0])

    threads = [threading.Thread(target=one) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert [g.model_dump() for g in got] == [expected.model_dump()] * 2


class RunOutOnFirstRead:
    def __init__(self, clock: Any) -> None:
        self.clock = clock

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        self.clock.now += 1e6


def test_out_of_time_answers_a_prefix(tree: Path, helpers: workers.Helpers,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    full, _ = _grep(tree, 1, {"pattern": "needle", "output_mode": "content"})
    clock = type("Clock", (), {"now": 0.0, "__call__": lambda self: self.now})()
    monkeypatch.setattr(fsseam.deadline, "clock", clock)
    ws = Workspace(str(tree), load_entry_points=False, limits=Limits(finder_processes=2))
    ws.gate.register(RunOutOnFirstRead(clock))
    res = ws.context("agent").tools.execute("grep", {"pattern": "needle",
                                                     "output_mode": "content"})
    assert res.ok, res.text
    out = res.value
    assert out.partial and out.unsearched_from is not None
    shown = [f.path for f in out.files]
    assert 1 <= len(shown) < len(full.files)
    assert [f.model_dump() for f in out.files] == [f.model_dump()
                                                   for f in full.files[:len(shown)]]
    # Nothing shown lies at or after where the search says it stopped.
    assert all(p < out.unsearched_from for p in shown)


def test_a_forked_child_gets_helpers_of_its_own(helpers: workers.Helpers) -> None:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        mine = workers.helpers()
        os._exit(0 if mine is not helpers and not mine.all else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert all(h.proc.poll() is None for h in helpers.all)


def test_one_process_and_small_trees_never_split(tree: Path) -> None:
    pool = workers.helpers()
    before = (pool.parts_here, pool.parts_there)
    _grep(tree, 1, {"pattern": "needle"})
    assert (pool.parts_here, pool.parts_there) == before


names = st.text(alphabet="abAB._-", min_size=1, max_size=4).filter(
    lambda s: s not in (".", ".."))


@settings(max_examples=examples(25), deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=st.dictionaries(st.lists(names, min_size=1, max_size=3).map("/".join),
                             st.lists(st.sampled_from(["needle", "hay", "Needle x", ""]),
                                      max_size=6), max_size=30),
       mode=st.sampled_from(["files_with_matches", "content", "count"]),
       limit=st.integers(1, 12), context=st.integers(0, 3))
def test_any_tree_gives_one_process_s_answer(
        tmp_path_factory: pytest.TempPathFactory, helpers: workers.Helpers,
        files: dict[str, list[str]], mode: str, limit: int, context: int) -> None:
    root = tmp_path_factory.mktemp("prop")
    for rel, lines in files.items():
        p = root / rel
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text("".join(f"{line}\n" for line in lines))
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            continue  # a name that is a file and a directory in one draw
    _same(root, {"pattern": "needle", "output_mode": mode, "max_results": limit,
                 "context_lines": context})


def test_split_parts_are_the_walk(tree: Path) -> None:
    ws = Workspace(str(tree), load_entry_points=False)
    parts = ws.backend.split_tree("", 16)  # type: ignore[attr-defined]
    walked = [e.key for e in ws.backend.walk("")]
    keys: list[str] = []
    for p in parts:
        keys += [k for k, _, _ in p.reads(lambda k: True, 1 << 20)]
    assert keys == [k for k in walked if not k.endswith("link.txt")]
    assert len(parts) >= 16
    assert [p.start for p in parts] == sorted(p.start for p in parts)
