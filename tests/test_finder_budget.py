"""One glob or grep call takes at most ``Limits.finder_seconds``: out of time, it returns
what it found (a prefix of the full answer, in path order), marked partial, with the first
file it did not search and a narrower path to search next; never an error, never a wait
for the reads still in flight.

No test sleeps: the finders' clock (``fsseam.deadline.clock``) is replaced by one
that a gate hook or a backend moves past the deadline at a chosen step of the call."""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

import fsseam.deadline
import fsseam.seam.finding
from fsseam import Limits, ListEvent, Overwrite, ReadEvent, Workspace, hookimpl
from fsseam.grep import RegexBudget, SearchTimeout, compile_pattern, has_match
from fsseam.outcomes import GlobOutcome, GrepOutcome
from fsseam.seam.finding import partial_fields

from .helpers import Unsized

DIRS = ("a", "b/c", "b/d", "e")
FILES = [f"{d}/f{i}.txt" for d in DIRS for i in range(3)]
"""The tree of every test, in path order: 12 files, each holding one match."""
STORES = ["memory", "local", "s3"]
CONCURRENCY_BOUND = 16 + 1  # read_many's reads in flight, and the one taken before waiting


class Clock:
    """A clock that stands still until a test moves it (past any deadline)."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def run_out(self) -> None:
        self.now += 1e6


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(fsseam.deadline, "clock", fake)
    return fake


def _workspace(store: str, tmp_path: Path, request: pytest.FixtureRequest,
               backend: Any = None, **kw: Any) -> Workspace:
    if store == "memory":
        ws = Workspace(f"memory://budget-{uuid.uuid4().hex}", load_entry_points=False, **kw)
    elif store == "local":
        root = tmp_path / "root"
        root.mkdir()
        ws = Workspace(str(root), load_entry_points=False, **kw)
    else:
        moto_s3 = request.getfixturevalue("moto_s3")
        bucket = moto_s3.create_bucket()
        url = f"s3://{bucket}/ws"
        if backend is None:
            ws = Workspace(url, moto_s3.storage_options(), load_entry_points=False, **kw)
        else:
            ws = Workspace(url, backend=backend.from_url(url, moto_s3.storage_options()),
                           load_entry_points=False, **kw)
    for key in FILES:
        ws.backend.write(key, b"x = 1\nneedle\n", Overwrite())
    return ws


class RunOutOnRead:
    """Moves the clock past the deadline once a grep has shown ``key`` (content mode
    records each file it shows as read), and notes the files recorded as read."""

    def __init__(self, clock: Clock, key: str, before: threading.Event | None = None) -> None:
        self.clock, self.key, self.before = clock, key, before
        self.read: list[str] = []

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        self.read.append(event.path)
        if event.key == self.key:
            if self.before is not None:
                assert self.before.wait(30)
            self.clock.run_out()


class RunOutOnBatch:
    """Moves the clock past the deadline when the walk hands its second batch to the gate."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.batches = 0

    @hookimpl
    def fs_list(self, event: ListEvent) -> None:
        if event.operation == "walk":
            self.batches += 1
            if self.batches == 2:
                self.clock.run_out()


def _full_answer(ws: Workspace, mode: str) -> list[str]:
    res = ws.context("full").tools.execute("grep", {"pattern": "needle", "output_mode": mode})
    assert res.ok and not res.value.partial, res.text
    return [f.path for f in res.value.files]


@pytest.mark.parametrize("store", STORES)
def test_grep_out_of_time_returns_the_files_before_where_it_stopped(
    store: str, clock: Clock, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    ws = _workspace(store, tmp_path, request)
    full = _full_answer(ws, "content")
    assert full == [f"/{k}" for k in FILES]
    hook = RunOutOnRead(clock, "b/c/f1.txt")
    ws.gate.register(hook)
    res = ws.context("agent").tools.execute("grep", {"pattern": "needle",
                                                     "output_mode": "content"})
    assert res.ok, res.text
    out = res.value
    assert isinstance(out, GrepOutcome)
    shown = [f.path for f in out.files]
    assert shown == full[:5] == ["/a/f0.txt", "/a/f1.txt", "/a/f2.txt", "/b/c/f0.txt",
                                 "/b/c/f1.txt"]
    assert out.partial and not out.stopped and not out.truncated
    assert (out.unsearched_from, out.next_path) == ("/b/c/f2.txt", "/b/c")
    assert (out.files_matched, out.lines_matched, out.searched) == (5, 5, 5)
    # Only the files shown count as read: those fetched ahead (S3) were never searched.
    assert hook.read == shown
    assert res.text.endswith(
        "(The search stopped early: it used up the time one search may take, so it covers "
        "the files before /b/c/f2.txt in path order, and so do the counts. To find the "
        "rest, search a narrower path, such as path=/b/c (where it stopped), or limit the "
        "files with glob.)"), res.text
    # The next step works: the directory named, searched alone, gives the rest of it.
    clock.now = 0.0
    hook.key = ""
    rest = ws.context("agent").tools.execute("grep", {"pattern": "needle", "path": "/b/c"})
    assert rest.ok and [f.path for f in rest.value.files] == full[3:6], rest.text


@pytest.mark.parametrize("store", STORES)
def test_glob_out_of_time_returns_the_paths_before_where_it_stopped(
    store: str, clock: Clock, tmp_path: Path, request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ws = _workspace(store, tmp_path, request)
    monkeypatch.setattr(fsseam.seam.finding, "WALK_BATCH", 4)
    ws.gate.register(RunOutOnBatch(clock))
    res = ws.context("agent").tools.execute("glob", {"pattern": "**/*.txt"})
    assert res.ok, res.text
    out = res.value
    assert isinstance(out, GlobOutcome)
    assert out.paths == ["/a/f0.txt", "/a/f1.txt", "/a/f2.txt", "/b/c/f0.txt"]
    assert out.total == 4 and out.partial
    assert (out.unsearched_from, out.next_path) == ("/b/c/f1.txt", "/b/c")
    assert res.text == (
        "/a/f0.txt\n/a/f1.txt\n/a/f2.txt\n/b/c/f0.txt\n"
        "(The glob stopped early: it used up the time one search may take, so it covers the "
        "paths before /b/c/f1.txt in path order, and so do the counts. To find the rest, "
        "search a narrower path, such as path=/b/c (where it stopped), or make the pattern "
        "narrower.)")
    assert res.value.model_dump()["partial"] is True  # what MCP's structured result carries


@pytest.mark.parametrize("store", STORES)
def test_reads_fetched_ahead_are_dropped_once_time_is_up(
    store: str, clock: Clock, tmp_path: Path, request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The walk runs out at its fifth file. A store read one file at a time has searched
    the four before it; S3 had fetched them ahead, unsearched, and drops them all: the
    answer is still a prefix, and says where it ends. (S3 without its content index; with
    it, the next test.)"""
    ws = _workspace(store, tmp_path, request,
                    **({"content_index": False} if store == "s3" else {}))
    monkeypatch.setattr(fsseam.seam.finding, "WALK_BATCH", 4)
    ws.gate.register(RunOutOnBatch(clock))
    res = ws.context("agent").tools.execute("grep", {"pattern": "needle"})
    assert res.ok and res.value.partial, res.text
    out = res.value
    if store == "s3":
        assert [f.path for f in out.files] == [] and out.searched == 0
        assert (out.unsearched_from, out.next_path) == ("/a/f0.txt", "/a")
        assert res.text.startswith("No matches for needle in / (0 files searched).\n")
    else:
        assert [f.path for f in out.files] == [f"/{k}" for k in FILES[:4]]
        assert (out.unsearched_from, out.next_path) == ("/b/c/f1.txt", "/b/c")


def test_an_indexed_grep_reads_on_over_listing_batches_and_drops_them_at_the_deadline(
    clock: Clock, tmp_path: Path, request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With S3's content index, a grep plans the next listing batch while the reads of the
    one before are in flight (a batch's slowest read no longer holds up the next batch's):
    out of time when the second batch is handed to the gate, the reads of the first were
    fetched ahead, unsearched, and are dropped, as without the index. The answer is a
    prefix, and says where it ends."""
    ws = _workspace("s3", tmp_path, request, content_index=True)
    monkeypatch.setattr(fsseam.seam.finding, "WALK_BATCH", 4)
    ws.gate.register(RunOutOnBatch(clock))
    res = ws.context("agent").tools.execute("grep", {"pattern": "needle"})
    assert res.ok and res.value.partial, res.text
    out = res.value
    assert [f.path for f in out.files] == [] and out.searched == 0
    assert (out.unsearched_from, out.next_path) == ("/a/f0.txt", "/a")


@pytest.mark.parametrize("started", [True, False], ids=["started", "threads"])
def test_reads_in_flight_are_not_waited_for(
    clock: Clock, tmp_path: Path, request: pytest.FixtureRequest, started: bool
) -> None:
    """Out of time, the call returns while a read it started is still blocked: the
    read-ahead is abandoned, not drained. Reads started on the store's loop
    (``start_read``) and reads on the pool's threads alike."""
    from fsseam_s3 import S3Backend

    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    class Blocking(S3Backend):
        def read(self, key: str) -> Any:
            if key == "e/f2.txt":
                entered.set()
                release.wait(60)
                finished.set()
            return super().read(key)

        def start_read(self, key: str) -> Any:
            if not started:
                return None  # every read on a thread of the pool
            if key != "e/f2.txt":
                return super().start_read(key)
            answer: Future[Any] = Future()  # in flight until released
            threading.Thread(target=lambda: answer.set_result(self.read(key))).start()
            return answer.result

    ws = _workspace("s3", tmp_path, request, backend=Blocking)
    moto_s3 = request.getfixturevalue("moto_s3")
    moto_s3.log.clear()
    # The last file's read has started before the clock runs out at the second file.
    ws.gate.register(RunOutOnRead(clock, "a/f1.txt", before=entered))
    try:
        res = ws.context("agent").tools.execute("grep", {"pattern": "needle",
                                                         "output_mode": "content"})
        assert not finished.is_set()  # returned with that read still blocked
    finally:
        release.set()
    assert finished.wait(60)
    assert res.ok, res.text
    assert [f.path for f in res.value.files] == ["/a/f0.txt", "/a/f1.txt"]
    assert res.value.unsearched_from == "/a/f2.txt"
    gets = [p for m, p in moto_s3.log.to_bucket(ws.backend.bucket) if m == "GET"
            and p.endswith(".txt")]
    assert len(gets) <= CONCURRENCY_BOUND, gets


def test_the_regex_time_and_the_call_time_tell_one_story(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    slow = b"a" * 40 + b"b\n"  # (a|aa)+$ takes seconds on it
    ws = Workspace(f"memory://budget-{uuid.uuid4().hex}", load_entry_points=False,
                   limits=Limits(grep_regex_seconds=0.05))
    for n in range(10):
        ws.backend.write(f"f{n}.txt", slow, Overwrite())
    ctx = ws.context("agent")
    # The pattern alone: its regex time is spent on the first file, the others are counted
    # without being read; the answer is partial (the old story, word for word).
    res = ctx.tools.execute("grep", {"pattern": "(a|aa)+$"})
    assert res.ok and res.value.stopped and res.value.partial, res.text
    assert res.value.unsearched_from is None and res.value.skipped == {"timeout": 10}
    assert "(The search stopped early: the pattern is slow on these files" in res.text
    # Both: the call's time runs out on the walk's second batch, after the regex time. One
    # note says where the call stopped, the next why the pattern is slow.
    monkeypatch.setattr(fsseam.seam.finding, "WALK_BATCH", 4)
    ws.gate.register(RunOutOnBatch(clock))
    res = ctx.tools.execute("grep", {"pattern": "(a|aa)+$"})
    assert res.ok, res.text
    out = res.value
    assert out.stopped and out.partial and out.skipped == {"timeout": 4}
    assert (out.unsearched_from, out.next_path) == ("/f4.txt", None)
    notes = res.text.split("\n")[-2:]
    assert notes == [
        "(The search stopped early: it used up the time one search may take, so it covers "
        "the files before /f4.txt in path order, and so do the counts. To find the rest, "
        "search a narrower path, or limit the files with glob.)",
        "(The pattern was slow on these files too: simplify it, avoiding a repeated group "
        "whose parts can match the same text, such as (a|aa)+ or (a+)+.)",
    ], res.text
    assert "the pattern is slow on these files and used up" not in res.text


def test_a_search_may_not_outlast_the_call() -> None:
    """The regex engine is given no more than the call has left, and nothing once it has
    nothing left."""
    left = [0.5]
    budget = RegexBudget(5.0, lambda: left[0])
    assert budget.allowance() == 0.5
    left[0] = 0.0
    with pytest.raises(SearchTimeout):
        has_match("aaa", compile_pattern("a+"), budget)
    assert RegexBudget(5.0).allowance() == 2.0  # the file's own cap, as before


@pytest.mark.parametrize("store", ["memory", "local"])
def test_zero_means_no_time_limit(store: str, clock: Clock, tmp_path: Path,
                                  request: pytest.FixtureRequest) -> None:
    assert Limits().finder_seconds == 20.0
    ws = _workspace(store, tmp_path, request, limits=Limits(finder_seconds=0))
    ws.gate.register(RunOutOnRead(clock, "a/f0.txt"))
    res = ws.context("agent").tools.execute("grep", {"pattern": "needle",
                                                     "output_mode": "content"})
    assert res.ok and not res.value.partial and len(res.value.files) == len(FILES), res.text
    res = ws.context("agent").tools.execute("glob", {"pattern": "**/*.txt"})
    assert res.ok and not res.value.partial and res.value.total == len(FILES), res.text


def test_the_next_path_is_one_a_search_would_enter() -> None:
    """Where the walk stopped in a directory a search skips, the next step names the
    nearest directory above it that a search enters (or none: search path itself)."""
    none = frozenset[str]()
    assert partial_fields("", None, none) == {}
    assert partial_fields("", "src/node_modules/pkg/a.js", none)["next_path"] == "/src"
    assert partial_fields("", "src/node_modules/pkg/a.js", frozenset({"node_modules"}))[
        "next_path"] == "/src/node_modules/pkg"
    assert partial_fields("src", "src/.cache/x", none) == {
        "partial": True, "unsearched_from": "/src/.cache/x", "next_path": None}
    assert partial_fields("src", "src/a/b/c.py", none)["next_path"] == "/src/a/b"
    assert partial_fields("src/a.py", "src/a.py", none)["next_path"] is None


def test_a_stream_of_unknown_size_stops_at_the_deadline(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store that does not say sizes is streamed chunk by chunk (a request each): the
    stream is given up between two chunks once time is up, not read to the end."""
    chunks: list[int] = []

    def on_chunk(n: int) -> None:
        chunks.append(n)
        if len(chunks) == 3:
            clock.run_out()

    backend = Unsized.from_url(f"memory://unsized-{uuid.uuid4().hex}", {"global_store": False})
    assert isinstance(backend, Unsized)
    backend.on_chunk = on_chunk
    ws = Workspace("memory://unsized", backend=backend, load_entry_points=False,
                   limits=Limits(read_chunk_bytes=1024))
    ws.backend.write("a.txt", b"needle\n", Overwrite())
    ws.backend.write("big.txt", b"needle\n" + b"x" * 64 * 1024, Overwrite())
    res = ws.context("agent").tools.execute("grep", {"pattern": "needle"})
    assert res.ok, res.text
    assert [f.path for f in res.value.files] == ["/a.txt"]
    assert res.value.unsearched_from == "/big.txt" and res.value.next_path is None
    assert len(chunks) == 3  # a.txt's one chunk, then two of big.txt's 65
