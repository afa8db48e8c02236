"""A change someone else made is not yours (local files and memory): agents incrementing
a counter lose no increment, the second of two agents editing from one read is told the
file already holds its change (FS_STALE, with the diff), and equal bytes answer one rule
(:func:`fsseam.versions.same_change`) on every path. S3 and GCS run the shared
:class:`~fsseam.testing.stores.SameChangeSuite`, where the owner's own landed edit, run
again, is recognised from the object's metadata."""

from __future__ import annotations

import multiprocessing
import threading
import uuid
from pathlib import Path

import pytest

from fsseam import ErrorCode, Workspace
from fsseam.backends.base import WriteMeta
from fsseam.testing.stores.races import SAME_CHANGE, counter_increments, same_change_pair
from fsseam.versions import IfMatch, SameChange, same_change

MAYBE = ("made since your read by another writer or by an earlier try of yours whose "
         "answer was lost (which one cannot be told); nothing was written: if your change "
         "should apply once, it is there; if it builds on the old value, apply it again.")


def _ws(kind: str, root: Path) -> Workspace:
    if kind == "local":
        return Workspace(str(root))
    return Workspace(f"memory://same-{uuid.uuid4().hex[:8]}", {"global_store": False})


@pytest.fixture(params=["local", "memory"])
def ws(request: pytest.FixtureRequest, root: Path) -> Workspace:
    return _ws(request.param, root)


def _count(ws: Workspace, path: str = "count.txt") -> bytes:
    return ws.backend.read(path).data


def test_the_second_of_two_agents_editing_from_one_read_is_told(ws: Workspace) -> None:
    a, b = same_change_pair(ws)
    assert a.startswith("ok: Edited /count.txt"), a
    assert b == (
        f"FS_STALE: Error [FS_STALE]: /count.txt already holds exactly your change, {MAYBE} "
        "What changed, from the version you read to the current one:\n@@ -1 +1 @@\n"
        "-count=0\n+count=1\nYour old_string no longer occurs in it. This refusal counts as "
        "your read of the current version: fit your edit to the change shown and retry it, "
        "without reading the file again."
    ), b
    assert _count(ws) == b"count=1\n"
    # The diff was shown whole: b's next edit goes on from count=1 without a read.
    res = ws.context("pair-b").tools.execute(
        "edit", {"file_path": "/count.txt", "old_string": "count=1", "new_string": "count=2"})
    assert res.ok, res.text
    assert _count(ws) == b"count=2\n"


def test_counter_agents_in_threads_lose_no_increment(ws: Workspace) -> None:
    ws.context("setup").fs.write("/loop.txt", "count=0\n")
    agents, times = 4, 5
    start = threading.Barrier(agents)
    done: list[int] = []

    def agent(i: int) -> None:
        ctx = ws.context(f"counter-{i}")
        start.wait(timeout=60)
        n_done = 0
        while n_done < times:
            read = ctx.tools.execute("read", {"file_path": "/loop.txt"})
            n = int(read.value.lines[0].removeprefix("count="))
            res = ctx.tools.execute("edit", {"file_path": "/loop.txt",
                                             "old_string": f"count={n}\n",
                                             "new_string": f"count={n + 1}\n"})
            n_done += res.ok
        done.append(n_done)

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(agents)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sum(done) == agents * times
    assert ws.backend.read("loop.txt").data == f"count={agents * times}\n".encode()


def test_counter_agents_in_processes_lose_no_increment(root: Path) -> None:
    """Local files, each agent a process of its own (only the file's compare-and-swap
    between them): the count is the number of increments answered as done."""
    (root / "count.txt").write_text("count=0\n")
    agents, times = 3, 4
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(agents) as pool:
        start = manager.Barrier(agents)
        results = pool.starmap(counter_increments,
                               [(str(root), {}, i, times, start) for i in range(agents)])
    assert sum(r[0] for r in results) == agents * times
    assert (root / "count.txt").read_text() == f"count={agents * times}\n"


def test_identical_writes_from_one_read_one_succeeds(ws: Workspace) -> None:
    ws.context("setup").fs.write("/w.txt", "v0\n")
    a, b = ws.context("a"), ws.context("b")
    for ctx in (a, b):
        assert ctx.tools.execute("read", {"file_path": "/w.txt"}).ok
    assert a.tools.execute("write", {"file_path": "/w.txt", "content": "v1\n"}).ok
    res = b.tools.execute("write", {"file_path": "/w.txt", "content": "v1\n"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert res.text.startswith(f"Error [FS_STALE]: /w.txt already holds exactly your change, "
                               f"{MAYBE} What changed"), res.text
    # Nothing changed since a's own write: writing the same again writes nothing.
    res = a.tools.execute("write", {"file_path": "/w.txt", "content": "v1\n"})
    assert res.text == "/w.txt already holds exactly this content; nothing was written."


def test_a_file_created_since_the_agent_saw_it_absent_is_not_its_create(
        ws: Workspace) -> None:
    a, b = ws.context("a"), ws.context("b")
    for ctx in (a, b):
        assert not ctx.tools.execute("read", {"file_path": "/n.txt"}).ok  # absent, observed
    assert a.tools.execute("write", {"file_path": "/n.txt", "content": "count=1\n"}).ok
    res = b.tools.execute("write", {"file_path": "/n.txt", "content": "count=1\n"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert "/n.txt " + SAME_CHANGE in res.text
    # A create rests on no read: a file that holds exactly its bytes is its file.
    res = ws.context("c").tools.execute(
        "str_replace_editor", {"command": "create", "path": "/n.txt", "file_text": "count=1\n"})
    assert res.ok, res.text


def test_an_owners_landed_edit_run_again_may_be_its_own(ws: Workspace) -> None:
    """Where the store keeps no writer, the refusal says the change may be the agent's
    own earlier try (call ids, a later issue, will tell)."""
    ws.context("setup").fs.write("/count.txt", "count=0\n")
    owner = ws.context("owner")
    assert owner.tools.execute("read", {"file_path": "/count.txt"}).ok
    read = ws.backend.read("count.txt").version
    ws.backend.write("count.txt", b"count=1\n", IfMatch(read), meta=WriteMeta(owner="owner"))
    res = owner.tools.execute("edit", {"file_path": "/count.txt", "old_string": "count=0",
                                       "new_string": "count=1"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert MAYBE in res.text
    assert _count(ws) == b"count=1\n"


@pytest.mark.parametrize(("equal", "moved", "observed", "ours", "answered", "verdict"), [
    (False, True, True, True, True, SameChange.DIFFERENT),
    (True, False, True, None, True, SameChange.HELD),
    (True, True, True, True, True, SameChange.OURS),
    (True, True, False, None, True, SameChange.HELD),
    (True, True, False, False, True, SameChange.HELD),
    (True, True, True, False, True, SameChange.THEIRS),
    (True, True, True, False, False, SameChange.THEIRS),
    (True, True, True, None, True, SameChange.MAYBE_OURS),
    (True, True, True, None, False, SameChange.OURS),
])
def test_the_one_rule(equal: bool, moved: bool, observed: bool, ours: bool | None,
                      answered: bool, verdict: SameChange) -> None:
    assert same_change(equal=equal, moved=moved, observed=observed, ours=ours,
                       answered=answered) is verdict




def test_every_surface_refuses_another_writers_same_change(ws: Workspace) -> None:
    """The editor, the memory tool and the guarded fsspec filesystem change files through
    the same pipeline: each is told, none is answered success."""
    from fsseam.filesystem import GuardRefused

    ws.context("setup").fs.write("/e.txt", "count=0\n")
    ws.context("setup").fs.write("/memories/m.txt", "count=0\n")
    ws.context("setup").fs.write("/f.txt", "count=0\n")
    a, b = ws.context("a"), ws.context("b")
    for ctx in (a, b):
        for path in ("/e.txt", "/memories/m.txt", "/f.txt"):
            assert ctx.tools.execute("read", {"file_path": path}).ok
    for path in ("/e.txt", "/memories/m.txt", "/f.txt"):
        assert a.tools.execute("edit", {"file_path": path, "old_string": "count=0",
                                        "new_string": "count=1"}).ok
    res = b.tools.execute("str_replace_editor", {"command": "str_replace", "path": "/e.txt",
                                                 "old_str": "count=0", "new_str": "count=1"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert "/e.txt " + SAME_CHANGE in res.text
    res = b.tools.execute("memory", {"command": "str_replace", "path": "/memories/m.txt",
                                     "old_str": "count=0", "new_str": "count=1"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert "/memories/m.txt " + SAME_CHANGE in res.text
    guarded = b.filesystem()
    with pytest.raises(GuardRefused) as refused:
        guarded.pipe_file("f.txt", b"count=1\n")
    assert refused.value.code is ErrorCode.FS_STALE
    assert SAME_CHANGE in str(refused.value)
    for path in ("e.txt", "memories/m.txt", "f.txt"):
        assert ws.backend.read(path).data == b"count=1\n"


def test_a_patch_whose_update_another_writer_made_is_told_and_writes_nothing(
        ws: Workspace) -> None:
    """A part of a change of several files (apply_patch, multi_edit) that, made on what the
    agent read, gives exactly the file's current bytes is refused saying so, and no part
    of the change is written."""
    setup = ws.context("setup")
    setup.fs.write("/count.txt", "count=0\n")
    setup.fs.write("/other.txt", "one\n")
    a, b, c = ws.context("a"), ws.context("b"), ws.context("c")
    for ctx in (a, b, c):
        for path in ("/count.txt", "/other.txt"):
            assert ctx.tools.execute("read", {"file_path": path}).ok
    assert a.tools.execute("edit", {"file_path": "/count.txt", "old_string": "count=0",
                                    "new_string": "count=1"}).ok
    patch = ("*** Begin Patch\n*** Update File: /other.txt\n@@\n-one\n+two\n"
             "*** Update File: /count.txt\n@@\n-count=0\n+count=1\n*** End Patch")
    res = b.tools.execute("apply_patch", {"patch": patch})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert "/count.txt already holds exactly your change, " + MAYBE in res.text
    assert "-count=0\n+count=1" in res.text
    res = c.tools.execute("multi_edit", {"file_path": "/count.txt", "edits": [
        {"old_string": "count=0", "new_string": "count=1"}]})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert "/count.txt already holds exactly your change, " + MAYBE in res.text
    assert _count(ws) == b"count=1\n"
    assert _count(ws, "other.txt") == b"one\n"
