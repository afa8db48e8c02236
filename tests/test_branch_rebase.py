"""``ws.rebase(name, owner=...)``: each branch change that main changed too is moved onto
main's current file, combined where the two changes do not overlap, with git's conflict
markers where they do; a deletion on either side keeps the branch's state. Main is never
written; the merge afterwards is a plain conditional write of the branch's file. And a
branch file's history (``history``, ``restore``, ``str_replace_editor`` undo_edit) from the
branch's log.

Stores: memory (isolated), local files, S3 (a moto server), a fresh bucket per test; the
history tests on memory and local. A change made on the branch while a rebase runs is
ordered by a pause point: a wrapper on the rebase's inner backend runs the agent's change
just before the rebase's ref PUT.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from fsseam import CreateOnly, ErrorCode, FsError, IfMatch, Precondition, Version, Workspace
from fsseam.backends.base import Backend, Wrapper
from fsseam.backends.history import History
from fsseam.branches.backend import BranchBackend
from fsseam.branches.merging import rebase

BASE = "a\nb\nc\nd\ne\n"


def _workspace(kind: str, request: pytest.FixtureRequest, tmp_path: Path,
               history: History | None = None) -> Workspace:
    if kind == "memory":
        return Workspace(f"memory://rebase-{uuid.uuid4().hex}", {"global_store": False},
                         load_entry_points=False, history=history)
    if kind == "local":
        root = tmp_path / f"root-{uuid.uuid4().hex[:8]}"
        root.mkdir()
        return Workspace(str(root), history=history)
    moto = request.getfixturevalue("moto_s3")
    return Workspace(f"s3://{moto.create_bucket()}/r", storage_options=moto.storage_options())


@pytest.fixture(params=["memory", "local", "s3"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workspace]:
    yield _workspace(request.param, request, tmp_path)


@pytest.fixture(params=["memory", "local"])
def near(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workspace]:
    yield _workspace(request.param, request, tmp_path)


@pytest.fixture(params=["memory", "local"])
def kept(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Workspace]:
    """A workspace whose main keeps history (fsseam's own copies)."""
    yield _workspace(request.param, request, tmp_path,
                     History(path=str(tmp_path / "history")))


def on_main(ws: Workspace) -> dict[str, bytes]:
    """Every file on main and its bytes, read from the store itself."""
    backend = ws.backend
    return {e.key: backend.read(e.key).data for e in backend.walk("")
            if e.kind == "file" and not e.key.startswith(".fsseam")}


def run(ctx: Any, tool: str, **args: Any) -> Any:
    result = ctx.tools.execute(tool, args)
    assert result.ok, result.text
    return result


def edit(ctx: Any, path: str, old: str, new: str) -> None:
    run(ctx, "read", file_path=path)
    run(ctx, "edit", file_path=path, old_string=old, new_string=new)


def seeded(ws: Workspace, files: dict[str, str]) -> Any:
    """Main holding ``files``; the main agent that wrote them."""
    main = ws.context("main-agent")
    for path, text in files.items():
        run(main, "write", file_path=path, content=text)
    return main


def branch_bytes(ws: Workspace, name: str, key: str) -> bytes:
    return ws.branch(name).backend.read(key).data


def test_a_clean_rebase_combines_both_changes_and_the_merge_writes_it_as_is(
        ws: Workspace) -> None:
    main = seeded(ws, {"/c.txt": BASE, "/other.txt": "o\n"})
    bot = ws.branch("f").context("bot")
    edit(bot, "/c.txt", "a\n", "A\n")
    run(bot, "write", file_path="/new.txt", content="n\n")
    edit(main, "/c.txt", "e\n", "E\n")
    before = ws.diff("f")
    assert [(f.path, f.main_changed, f.conflict) for f in before.files] == [
        ("/c.txt", True, False), ("/new.txt", False, False)]

    out = ws.rebase("f", owner="rev")
    assert (out.rebased, out.conflicted) == (["/c.txt"], [])
    assert out.text == ("rebased f onto main: 1 file(s) combined, 0 with conflicts to "
                        "resolve on the branch\n  rebased /c.txt\n")
    assert branch_bytes(ws, "f", "c.txt") == b"A\nb\nc\nd\nE\n"
    assert branch_bytes(ws, "f", "new.txt") == b"n\n"
    assert on_main(ws) == {"c.txt": b"a\nb\nc\nd\nE\n", "other.txt": b"o\n"}
    info = ws.branches()[0]
    assert (info.head, info.log[0].operation, info.log[0].owner) == (out.head, "rebase", "rev")

    # The change now rests on main's current file: main unchanged since, a plain write.
    review = ws.diff("f")
    assert [(f.path, f.main_changed, f.conflict) for f in review.files] == [
        ("/c.txt", False, False), ("/new.txt", False, False)]
    assert "-e\n+E\n" not in review.files[0].diff and "-a\n+A\n" in review.files[0].diff
    done = ws.merge("f", owner="rev", expect=review.token)
    assert done.ok and (done.published, done.merged) == (["/c.txt", "/new.txt"], [])
    assert on_main(ws) == {"c.txt": b"A\nb\nc\nd\nE\n", "other.txt": b"o\n",
                           "new.txt": b"n\n"}


def test_overlapping_changes_leave_git_markers_on_the_branch_and_main_untouched(
        ws: Workspace) -> None:
    main = seeded(ws, {"/c.txt": BASE})
    bot = ws.branch("f").context("bot")
    edit(bot, "/c.txt", "b\nc\n", "B\nC\n")
    edit(main, "/c.txt", "c\nd\n", "3\n4\n")
    assert ws.diff("f").files[0].conflict
    refused = ws.merge("f", owner="rev")
    assert not refused.ok and "ws.rebase('f', owner=...)" in refused.message

    out = ws.rebase("f", owner="rev")
    assert (out.rebased, out.conflicted) == ([], ["/c.txt"])
    assert branch_bytes(ws, "f", "c.txt") == (
        b"a\n<<<<<<< main\nb\n3\n4\n=======\nB\nC\nd\n>>>>>>> branch f\ne\n")
    assert on_main(ws) == {"c.txt": b"a\nb\n3\n4\ne\n"}
    review = ws.diff("f")
    assert [(f.main_changed, f.conflict, f.markers) for f in review.files] == [
        (False, True, True)]
    assert "+<<<<<<< main\n" in review.files[0].diff
    assert "[holds the rebase's conflict markers: resolve them on the branch]" in review.text


def test_a_merge_refuses_the_markers_until_a_change_takes_them_out(ws: Workspace) -> None:
    main = seeded(ws, {"/c.txt": BASE, "/ok.txt": "k\n"})
    bot = ws.branch("f").context("bot")
    edit(bot, "/c.txt", "b\n", "B\n")
    edit(bot, "/ok.txt", "k\n", "K\n")
    edit(main, "/c.txt", "b\n", "2\n")
    assert ws.rebase("f", owner="rev").conflicted == ["/c.txt"]
    before = on_main(ws)
    refused = ws.merge("f", owner="rev")
    assert (refused.ok, refused.code) == (False, ErrorCode.FS_STALE)
    assert [(c.path, c.kind) for c in refused.conflicts] == [("/c.txt", "unresolved")]
    assert on_main(ws) == before  # nothing written, not even the clean file
    # An edit that leaves the markers in keeps the file flagged.
    edit(bot, "/c.txt", "a\n", "A\n")
    assert ws.diff("f").files[0].markers
    assert [c.kind for c in ws.merge("f", owner="rev").conflicts] == ["unresolved"]
    assert on_main(ws) == before
    # Taking them out clears it: the merge publishes exactly the resolution.
    run(bot, "write", file_path="/c.txt", content="A\n2B\nc\nd\ne\n")
    review = ws.diff("f")
    assert [(f.path, f.conflict, f.markers) for f in review.files] == [
        ("/c.txt", False, False), ("/ok.txt", False, False)]
    done = ws.merge("f", owner="rev", expect=review.token)
    assert done.ok and done.published == ["/c.txt", "/ok.txt"]
    assert on_main(ws) == {"c.txt": b"A\n2B\nc\nd\ne\n", "ok.txt": b"K\n"}


def test_an_agent_who_read_before_the_rebase_is_refused_then_resolves_and_it_merges(
        ws: Workspace) -> None:
    main = seeded(ws, {"/c.txt": BASE})
    bot = ws.branch("f").context("bot")
    edit(bot, "/c.txt", "b\n", "B\n")
    edit(main, "/c.txt", "b\n", "2\n")
    ws.rebase("f", owner="rev")
    marked = b"a\n<<<<<<< main\n2\n=======\nB\n>>>>>>> branch f\nc\nd\ne\n"
    markers = "<<<<<<< main\n2\n=======\nB\n>>>>>>> branch f\n"

    stale = bot.tools.execute("edit", {"file_path": "/c.txt", "old_string": markers,
                                       "new_string": "B2\n"})
    assert not stale.ok and stale.error.code == "FS_STALE"
    assert branch_bytes(ws, "f", "c.txt") == marked
    shown = run(bot, "read", file_path="/c.txt").text
    assert "<<<<<<< main" in shown and ">>>>>>> branch f" in shown
    run(bot, "edit", file_path="/c.txt", old_string=markers, new_string="B2\n")

    review = ws.diff("f")
    assert review.files[0].diff.splitlines()[3:] == [" a", "-2", "+B2", " c", " d", " e"]
    assert on_main(ws) == {"c.txt": b"a\n2\nc\nd\ne\n"}
    done = ws.merge("f", owner="rev", expect=review.token)
    assert done.ok and (done.published, done.merged) == (["/c.txt"], [])
    assert on_main(ws) == {"c.txt": b"a\nB2\nc\nd\ne\n"}
    assert ws.diff("f").files == []


class PauseBeforeRef(Wrapper):
    """Runs ``hook`` once, just before the first conditional write of branch ``name``'s
    ref (the step that moves a rebase's head)."""

    def __init__(self, inner: Backend, name: str, hook: Callable[[], None]) -> None:
        super().__init__(inner)
        self.ref = f".fsseam-branches/refs/{name}.json"
        self.hook: Callable[[], None] | None = hook

    def put_plain(self, key: str, data: bytes, precondition: Precondition) -> Version:
        if key == self.ref and self.hook is not None:
            hook, self.hook = self.hook, None
            hook()
        return super().put_plain(key, data, precondition)


def test_a_change_made_on_the_branch_while_a_rebase_runs_is_not_overwritten(
        ws: Workspace) -> None:
    main = seeded(ws, {"/c.txt": BASE, "/d.txt": BASE})
    bot = ws.branch("f").context("bot")
    edit(bot, "/c.txt", "a\n", "A\n")
    edit(bot, "/d.txt", "a\n", "A\n")
    edit(main, "/c.txt", "e\n", "E\n")
    edit(main, "/d.txt", "e\n", "E\n")

    def meanwhile() -> None:  # after the rebase's survey, before its ref moves
        run(bot, "edit", file_path="/c.txt", old_string="b\n", new_string="B\n")

    paused = BranchBackend(PauseBeforeRef(ws.backend, "f", meanwhile), "f")
    out = rebase(paused, owner="rev")
    assert (out.rebased, out.conflicted) == (["/d.txt"], [])
    assert branch_bytes(ws, "f", "c.txt") == b"A\nB\nc\nd\ne\n"     # the agent's, kept
    assert branch_bytes(ws, "f", "d.txt") == b"A\nb\nc\nd\nE\n"
    assert [h.operation for h in ws.branches()[0].log[:2]] == ["rebase", "write"]
    assert on_main(ws) == {"c.txt": b"a\nb\nc\nd\nE\n", "d.txt": b"a\nb\nc\nd\nE\n"}

    again = ws.rebase("f", owner="rev")        # the file left is taken by the next one
    assert (again.rebased, again.conflicted) == (["/c.txt"], [])
    assert branch_bytes(ws, "f", "c.txt") == b"A\nB\nc\nd\nE\n"


def test_a_deletion_on_either_side_keeps_the_branch_s_state(ws: Workspace) -> None:
    main = seeded(ws, {"/gone-on-branch.txt": BASE, "/gone-on-main.txt": BASE,
                       "/gone-on-both.txt": BASE})
    bot = ws.branch("f").context("bot")
    run(bot, "read", file_path="/gone-on-branch.txt")
    run(bot, "delete", file_path="/gone-on-branch.txt")
    edit(bot, "/gone-on-main.txt", "a\n", "A\n")
    run(bot, "read", file_path="/gone-on-both.txt")
    run(bot, "delete", file_path="/gone-on-both.txt")
    edit(main, "/gone-on-branch.txt", "a\n", "M\n")
    run(main, "read", file_path="/gone-on-main.txt")
    run(main, "delete", file_path="/gone-on-main.txt")
    run(main, "read", file_path="/gone-on-both.txt")
    run(main, "delete", file_path="/gone-on-both.txt")
    assert [(f.path, f.conflict) for f in ws.diff("f").files] == [
        ("/gone-on-both.txt", False), ("/gone-on-branch.txt", True),
        ("/gone-on-main.txt", True)]

    out = ws.rebase("f", owner="rev")
    assert (out.rebased, out.conflicted) == ([], ["/gone-on-branch.txt", "/gone-on-main.txt"])
    branch = ws.branch("f").backend
    with pytest.raises(FsError) as missing:
        branch.read("gone-on-branch.txt")
    assert missing.value.code is ErrorCode.FS_NOT_FOUND
    assert branch.read("gone-on-main.txt").data == b"A\nb\nc\nd\ne\n"
    assert on_main(ws) == {"gone-on-branch.txt": b"M\nb\nc\nd\ne\n"}
    review = ws.diff("f")
    assert [(f.path, f.change, f.conflict) for f in review.files] == [
        ("/gone-on-both.txt", "deleted", False), ("/gone-on-branch.txt", "deleted", False),
        ("/gone-on-main.txt", "added", False)]

    done = ws.merge("f", owner="rev", expect=review.token)
    assert done.ok, done.text
    assert on_main(ws) == {"gone-on-main.txt": b"A\nb\nc\nd\ne\n"}


def test_added_on_both_sides_gets_each_whole_and_bytes_keep_the_branch_s(
        ws: Workspace) -> None:
    """Bytes that are not text are never marked: the branch's stand over main's."""
    main = seeded(ws, {})
    first = ws.backend.write("data.bin", b"\x00one", CreateOnly())
    bot = ws.branch("f").context("bot")
    run(bot, "write", file_path="/n.txt", content="mine\n")
    ws.branch("f").backend.write("data.bin", b"\x00branch", IfMatch(first))
    run(main, "write", file_path="/n.txt", content="theirs\n")
    ws.backend.write("data.bin", b"\x00main", IfMatch(first))
    both = b"<<<<<<< main\ntheirs\n=======\nmine\n>>>>>>> branch f\n"

    out = ws.rebase("f", owner="rev")
    assert (out.rebased, out.conflicted) == ([], ["/data.bin", "/n.txt"])
    assert branch_bytes(ws, "f", "n.txt") == both
    assert branch_bytes(ws, "f", "data.bin") == b"\x00branch"
    assert on_main(ws) == {"n.txt": b"theirs\n", "data.bin": b"\x00main"}
    # The markers are refused until resolved; then the branch's bytes are published.
    refused = ws.merge("f", owner="rev")
    assert [(c.path, c.kind) for c in refused.conflicts] == [("/n.txt", "unresolved")]
    run(bot, "read", file_path="/n.txt")
    run(bot, "write", file_path="/n.txt", content="theirs\nmine\n")
    done = ws.merge("f", owner="rev", expect=ws.diff("f").token)
    assert done.ok and done.published == ["/data.bin", "/n.txt"]
    assert on_main(ws) == {"n.txt": b"theirs\nmine\n", "data.bin": b"\x00branch"}


def test_paths_limit_the_rebase_to_those_files(ws: Workspace) -> None:
    main = seeded(ws, {"/c.txt": BASE, "/d.txt": BASE, "/same.txt": BASE})
    bot = ws.branch("f").context("bot")
    for path in ("/c.txt", "/d.txt"):
        edit(bot, path, "a\n", "A\n")
        edit(main, path, "a\n", "M\n")
    with pytest.raises(FsError) as unchanged:
        ws.rebase("f", owner="rev", paths=["/same.txt"])
    assert unchanged.value.code is ErrorCode.FS_INVALID_ARGUMENT
    head = ws.branches()[0].head

    out = ws.rebase("f", owner="rev", paths=["/d.txt"])
    assert (out.rebased, out.conflicted) == ([], ["/d.txt"])
    assert out.head != head
    assert branch_bytes(ws, "f", "c.txt") == b"A\nb\nc\nd\ne\n"
    assert branch_bytes(ws, "f", "d.txt") == (
        b"<<<<<<< main\nM\n=======\nA\n>>>>>>> branch f\nb\nc\nd\ne\n")
    assert [(f.path, f.conflict, f.markers) for f in ws.diff("f").files] == [
        ("/c.txt", True, False), ("/d.txt", True, True)]
    assert on_main(ws) == {"c.txt": b"M\nb\nc\nd\ne\n", "d.txt": b"M\nb\nc\nd\ne\n",
                           "same.txt": BASE.encode()}


def test_nothing_to_rebase_moves_no_head(ws: Workspace) -> None:
    seeded(ws, {"/c.txt": BASE})
    bot = ws.branch("f").context("bot")
    edit(bot, "/c.txt", "a\n", "A\n")
    head = ws.branches()[0].head
    out = ws.rebase("f", owner="rev")
    assert (out.rebased, out.conflicted, out.head) == ([], [], head)
    assert ws.branches()[0].head == head


# -- a branch file's history, from the branch's log ----------------------------------------
def versions(ctx: Any, path: str) -> list[str]:
    return [e.id for e in run(ctx, "history", file_path=path).value.entries]


def test_history_restore_and_undo_of_a_file_on_a_branch(near: Workspace) -> None:
    seeded(near, {"/c.txt": "v0\n"})
    bot = near.branch("f").context("bot")
    edit(bot, "/c.txt", "v0", "v1")
    run(bot, "edit", file_path="/c.txt", old_string="v1", new_string="v2")
    listed = run(bot, "history", file_path="/c.txt").value.entries
    # The branch's states, newest first, then the main version its first change rested on.
    assert [(e.latest, e.owner, e.size) for e in listed] == [
        (True, "bot", 3), (False, "bot", 3), (False, None, None)]
    assert [near.branch("f").backend.read_version(
        "c.txt", v.version).data for v in near.branch("f").backend.versions("c.txt")] == [
        b"v2\n", b"v1\n", b"v0\n"]

    restored = run(bot, "restore", file_path="/c.txt", version=listed[1].id)
    assert restored.text.startswith(f"Restored /c.txt at version {listed[1].id} ")
    assert branch_bytes(near, "f", "c.txt") == b"v1\n"
    run(bot, "read", file_path="/c.txt")
    run(bot, "restore", file_path="/c.txt", version=listed[2].id)       # main's, as it was
    assert branch_bytes(near, "f", "c.txt") == b"v0\n"
    assert on_main(near) == {"c.txt": b"v0\n"}

    # undo_edit takes back the agent's own last str_replace on the branch.
    run(bot, "str_replace_editor", command="view", path="/c.txt")
    run(bot, "str_replace_editor", command="str_replace", path="/c.txt", old_str="v0",
        new_str="v9")
    assert branch_bytes(near, "f", "c.txt") == b"v9\n"
    run(bot, "str_replace_editor", command="undo_edit", path="/c.txt")
    assert branch_bytes(near, "f", "c.txt") == b"v0\n"
    assert on_main(near) == {"c.txt": b"v0\n"}
    v2, v1, v0 = (e.id for e in listed)
    v9 = hashlib.sha256(b"v9\n").hexdigest()[:12]
    assert versions(bot, "/c.txt") == [v0, v9, v0, v1, v2, v1, v0]


def test_main_s_version_a_change_rested_on_comes_back_from_the_branch(ws: Workspace) -> None:
    """The base's bytes the branch kept serve main's version in the list, on a store that
    keeps no versions (S3 without versioning) and after main moved on."""
    main = seeded(ws, {"/c.txt": "v0\n"})
    bot = ws.branch("f").context("bot")
    edit(bot, "/c.txt", "v0", "v1")
    edit(main, "/c.txt", "v0", "m1")
    base = run(bot, "history", file_path="/c.txt").value.entries[-1]
    assert (base.latest, base.owner) == (False, None)
    run(bot, "restore", file_path="/c.txt", version=base.id)
    assert branch_bytes(ws, "f", "c.txt") == b"v0\n"

    run(bot, "str_replace_editor", command="view", path="/c.txt")
    run(bot, "str_replace_editor", command="str_replace", path="/c.txt", old_str="v0",
        new_str="v2")
    run(bot, "str_replace_editor", command="undo_edit", path="/c.txt")
    assert branch_bytes(ws, "f", "c.txt") == b"v0\n"
    assert on_main(ws) == {"c.txt": b"m1\n"}

    other = ws.branch("g").context("bot")       # undo of the first change on a branch
    run(other, "str_replace_editor", command="view", path="/c.txt")
    run(other, "str_replace_editor", command="str_replace", path="/c.txt", old_str="m1",
        new_str="g1")
    run(other, "str_replace_editor", command="undo_edit", path="/c.txt")
    assert branch_bytes(ws, "g", "c.txt") == b"m1\n"
    assert on_main(ws) == {"c.txt": b"m1\n"}


def test_history_of_a_file_the_branch_did_not_change_is_main_s(near: Workspace) -> None:
    """Main keeps no versions here: the branch refuses as main does, saying how to keep
    them (the branch itself keeps the states of the files it changed)."""
    seeded(near, {"/c.txt": "v0\n"})
    for tool, args in (("history", {}), ("restore", {"version": "84325551c170"})):
        on_branch = near.branch("f").context("bot").tools.execute(
            tool, {"file_path": "/c.txt", **args})
        on_main_ = near.context("bot").tools.execute(tool, {"file_path": "/c.txt", **args})
        assert on_branch.error is not None and on_branch.error.code == "FS_UNSUPPORTED"
        assert on_branch.text == on_main_.text
        assert "history=History()" in on_branch.text


def test_history_of_a_file_the_branch_did_not_change_is_main_s_where_main_keeps_it(
        kept: Workspace) -> None:
    writer = kept.context("bot")
    run(writer, "write", file_path="/h.txt", content="one\n")
    edit(writer, "/h.txt", "one", "two")
    on_branch = run(kept.branch("g").context("bot"), "history", file_path="/h.txt")
    on_main_ = run(writer, "history", file_path="/h.txt")
    assert on_branch.text == on_main_.text
    assert len(on_main_.value.entries) == 2
