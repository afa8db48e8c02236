"""Branches on every store: agents guarded on a branch, reads over main, merges that publish
exactly or write nothing, rewind, discard, collect, and the requests each costs.

Every store: memory (isolated), local files, S3 (moto server), GCS (fake-gcs-server behind
a counting proxy), Azure (Azurite behind a counting proxy); a fresh bucket or container per
test. Assertions are on exact bytes read from the store itself and on exact codes.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, FsError, Workspace
from fsseam.backends.base import ANY_VERSION, Backend, Wrapper, WriteMeta
from fsseam.branches import PREFIX, BranchBackend
from fsseam.branches.layout import BranchStore
from fsseam.branches.merging import merge
from fsseam.versions import IfMatch, Precondition

STORES = ["memory", "local", "s3", "gcs", "azure"]
COUNTED = ["s3", "gcs", "azure"]

Take = Callable[[], list[tuple[str, str]]]


@dataclass
class Rig:
    """A fresh workspace on one store, and (on an emulator) the requests it received since
    the last ``take``."""

    kind: str
    ws: Workspace
    url: str
    options: dict[str, Any] | None
    take: Take | None = None


def _counted(take_all: Take, where: str) -> Take:
    def take() -> list[tuple[str, str]]:
        return [(m, p) for m, p in take_all() if f"/{where}/" in p or p.endswith(f"/{where}")]

    return take


def make_rig(request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> Rig:
    if kind == "memory":
        url = f"memory://branches-{uuid.uuid4().hex}"
        options: dict[str, Any] | None = {"global_store": False}
        return Rig(kind, Workspace(url, options, load_entry_points=False), url, options)
    if kind == "local":
        root = tmp_path / "root"
        root.mkdir()
        return Rig(kind, Workspace(str(root)), str(root), None)
    if kind == "s3":
        moto = request.getfixturevalue("moto_s3")
        bucket = moto.create_bucket()
        url, options = f"s3://{bucket}/r", moto.storage_options()
        log = moto.log
        seen = [len(log.to_bucket(bucket))]

        def take_s3() -> list[tuple[str, str]]:
            got = log.to_bucket(bucket)
            new, seen[0] = got[seen[0]:], len(got)
            return new

        return Rig(kind, Workspace(url, storage_options=options), url, options, take_s3)
    if kind == "gcs":
        endpoint, proxy = request.getfixturevalue("fake_gcs")
        bucket = endpoint.create_bucket()
        url = f"gs://{bucket}/r"
        options = {**endpoint.storage_options(), "endpoint_url": proxy.url}
        proxy.take()
        return Rig(kind, Workspace(url, storage_options=options), url, options,
                   _counted(proxy.take, bucket))
    az = request.getfixturevalue("azurite")
    container = az.create_container()
    url, options = f"az://{container}/r", az.storage_options()
    az.take()
    return Rig(kind, Workspace(url, storage_options=options), url, options,
               _counted(az.take, container))


@pytest.fixture(params=STORES)
def rig(request: pytest.FixtureRequest, tmp_path: Path) -> Rig:
    return make_rig(request, request.param, tmp_path)


@pytest.fixture(params=COUNTED)
def counted(request: pytest.FixtureRequest, tmp_path: Path) -> Rig:
    return make_rig(request, request.param, tmp_path)


# -- helpers -------------------------------------------------------------------------------


def ok(res: Any) -> Any:
    assert res.ok, res.text
    return res


def code(res: Any) -> ErrorCode | None:
    return res.error.code if res.error is not None else None


def stored(backend: Backend) -> dict[str, bytes]:
    """Every file of main and its bytes, read from the store itself (the reserved folders
    left out)."""
    return {e.key: backend.read(e.key).data for e in backend.walk("")
            if e.kind == "file" and not e.key.startswith(".fsseam")}


def reserved(backend: Backend) -> dict[str, bytes]:
    """Every object of the branches' folder and its bytes."""
    try:
        return {e.key: backend.read(e.key).data for e in backend.walk(PREFIX)
                if e.kind == "file"}
    except FsError as e:
        assert e.code is ErrorCode.FS_NOT_FOUND
        return {}


def seed(ws: Workspace, files: dict[str, str]) -> dict[str, bytes]:
    """Main holds exactly ``files`` (written by a setup owner); returns main's bytes."""
    ctx = ws.context("setup")
    for path, text in files.items():
        ok(ctx.tools.execute("write", {"file_path": path, "content": text}))
    got = stored(ws.backend)
    assert got == {p.lstrip("/"): t.encode() for p, t in files.items()}
    return got


def branch_files(br: Workspace) -> dict[str, bytes]:
    """Every file as the branch reads it."""
    return stored(br.backend)


def show(ctx: Any, path: str) -> str:
    return str(ctx.show(path))


def edit(ctx: Any, path: str, old: str, new: str) -> Any:
    return ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new})


# -- requests counted at the emulators -----------------------------------------------------


def measure(rig: Rig) -> dict[str, list[tuple[str, str]]]:
    """The requests of each operation, main's and the branch's, on one file each."""
    assert rig.take is not None
    ws = rig.ws
    seed(ws, {"/f0.txt": "zero\nmore\n", "/f1.txt": "one\nmore\n"})
    br = ws.branch("feat")
    a, b = ws.context("a"), br.context("b")
    rig.take()
    got: dict[str, list[tuple[str, str]]] = {}

    def run(label: str, call: Callable[[], Any]) -> None:
        ok(call())
        got[label] = rig.take()  # type: ignore[misc]

    run("main read", lambda: a.tools.execute("read", {"file_path": "/f0.txt"}))
    run("main edit", lambda: edit(a, "/f0.txt", "more", "MORE"))
    run("main write", lambda: a.tools.execute("write", {"file_path": "/f0.txt",
                                                        "content": "zero\n"}))
    run("main write new", lambda: a.tools.execute("write", {"file_path": "/m.txt",
                                                            "content": "new\n"}))
    run("branch read", lambda: b.tools.execute("read", {"file_path": "/f1.txt"}))
    run("branch first edit", lambda: edit(b, "/f1.txt", "more", "MORE"))
    run("branch read changed", lambda: b.tools.execute("read", {"file_path": "/f1.txt"}))
    run("branch edit changed", lambda: edit(b, "/f1.txt", "MORE", "more2"))
    run("branch write changed", lambda: b.tools.execute("write", {"file_path": "/f1.txt",
                                                                  "content": "one\n"}))
    run("branch write new", lambda: b.tools.execute("write", {"file_path": "/n.txt",
                                                              "content": "new\n"}))
    show(b, "/f0.txt")
    rig.take()
    run("branch delete", lambda: b.tools.execute("delete", {"file_path": "/f0.txt"}))
    for who, ctx in (("main", a), ("branch", b)):
        run(f"{who} ls", lambda c=ctx: c.tools.execute("ls", {"path": "/"}))
        run(f"{who} glob", lambda c=ctx: c.tools.execute("glob", {"pattern": "**/*.txt"}))
    run("branch grep", lambda: b.tools.execute("grep", {"pattern": "new"}))
    return got


def target(path: str) -> str:
    """What a request addressed: the branch's ref, a manifest, a blob, a main file (its
    key), a listing or, for a GCS upload (the name travels in its body), ``upload``."""
    from urllib.parse import unquote

    path = unquote(path)
    if path.startswith("/upload/"):
        return "upload"
    for part in ("refs", "manifests", "blobs", "journals"):
        if f"/{PREFIX}/{part}/" in path:
            return part.removesuffix("s")
    if "/r/" not in path:
        return "list"  # the bucket's (container's) listing, with the key as its prefix
    return path.rpartition("/r/")[2]


def verbs(requests: list[tuple[str, str]]) -> list[tuple[str, str]]:
    return [("read" if m in ("GET", "HEAD") else "write", target(p)) for m, p in requests]


# What each operation costs, in order: ``main`` is a file of main's, ``base`` the base
# bytes kept for a file's first change on the branch.
COSTS: dict[str, list[tuple[str, str]]] = {
    "main read": [("read", "f0.txt")],
    "main edit": [("read", "f0.txt"), ("write", "f0.txt")],
    "main write": [("write", "f0.txt")],
    # main's read plus the ref (the manifest is immutable, cached by id)
    "branch read": [("read", "ref"), ("read", "f1.txt")],
    # the edit's read through the branch, then manifest, base blob, new blob, ref: the
    # base's bytes come from that read, not from main again
    "branch first edit": [("read", "ref"), ("read", "f1.txt"), ("write", "manifest"),
                          ("write", "blob"), ("write", "blob"), ("write", "ref")],
    "branch read changed": [("read", "ref"), ("read", "blob")],
    "branch edit changed": [("read", "ref"), ("read", "blob"), ("write", "manifest"),
                            ("write", "blob"), ("write", "ref")],
    # a write of a file already changed, on the head this process last saw: three writes
    "branch write changed": [("write", "manifest"), ("write", "blob"), ("write", "ref")],
    # a new file: main's own check that no directory is there (a listing) ...
    "main write new": [("read", "list"), ("write", "m.txt")],
    # ... and on a branch, main asked whether it has the file (create-only), the same
    # check, then the three writes
    "branch write new": [("read", "n.txt"), ("read", "list"), ("write", "manifest"),
                         ("write", "blob"), ("write", "ref")],
    # a listing: main's, and the ref (the branch's changes are in its manifest)
    "main ls": [("read", "list")],
    "branch ls": [("read", "ref"), ("read", "list")],
    "main glob": [("read", "list")],
    "branch glob": [("read", "ref"), ("read", "list")],
    # a deletion of a file read through the branch: its bytes kept as the base (from
    # that read), then the manifest and the ref
    "branch delete": [("write", "manifest"), ("write", "blob"), ("write", "ref")],
}


def test_requests_per_operation_on_a_branch_and_on_main(counted: Rig) -> None:
    got = {label: verbs(reqs) for label, reqs in measure(counted).items()}
    # a search reads the files at once (in no fixed order): the ref for the walk and again
    # for the reads, the listing, then the branch's blobs and main's files (f0.txt is
    # deleted on the branch: not read)
    grep = got.pop("branch grep")
    assert sorted(grep) == [("read", "blob"), ("read", "blob"), ("read", "list"),
                            ("read", "m.txt"), ("read", "ref"), ("read", "ref")]
    expected = COSTS
    if counted.kind == "gcs":
        expected = {label: [(v, "upload" if v == "write" else t) for v, t in reqs]
                    for label, reqs in COSTS.items()}
    assert got == expected
    # the aims: a branch read of a file it did not change is main's read plus one small
    # request; a branch write of a file it changed is three writes
    assert len(got["branch read"]) == len(got["main read"]) + 1
    assert len(got["branch write changed"]) == 3
    assert len(got["branch edit changed"]) == len(got["main edit"]) + 3


# -- agents' guard on a branch -------------------------------------------------------------


def test_two_agents_on_one_branch_from_one_read_one_is_stale_with_the_diff(rig: Rig) -> None:
    main = seed(rig.ws, {"/a.txt": "one\ntwo\n"})
    br = rig.ws.branch("feat")
    first, second = br.context("first"), br.context("second")
    assert show(first, "/a.txt") == show(second, "/a.txt") == "one\ntwo\n"
    ok(edit(first, "/a.txt", "one", "ONE"))
    lost = edit(second, "/a.txt", "two", "TWO")
    assert code(lost) is ErrorCode.FS_STALE, lost.text
    assert "-one\n+ONE" in lost.text, lost.text
    assert branch_files(br) == {"a.txt": b"ONE\ntwo\n"}
    assert stored(rig.ws.backend) == main
    # read again, the second agent's edit lands on top of the first's
    assert show(second, "/a.txt") == "ONE\ntwo\n"
    ok(edit(second, "/a.txt", "two", "TWO"))
    assert branch_files(br) == {"a.txt": b"ONE\nTWO\n"}
    assert stored(rig.ws.backend) == main


def test_counter_agents_in_threads_lose_no_increment_on_a_branch(rig: Rig) -> None:
    """Each agent opens the branch itself (as another process would): its own ref reads
    and head. Their first changes all rest on one head and meet at the ref's
    compare-and-swap together (a barrier in front of it): one moves it, the others are
    checked again on the new head and are stale."""
    agents, rounds = 3, 3
    main = seed(rig.ws, {"/count.txt": "0\n"})
    opened = [rig.ws.branch("feat") for _ in range(agents)]
    at_ref = threading.Barrier(agents, timeout=60)
    stale = [0] * agents
    failures: list[str] = []

    for br in opened:
        store = br.backend.store  # type: ignore[attr-defined]
        put_ref, first = store.put_ref, [True]

        def gated(ref: Any, expected: Any, put_ref: Any = put_ref, first: Any = first) -> Any:
            if first[0]:
                first[0] = False
                at_ref.wait()
            return put_ref(ref, expected)

        store.put_ref = gated

    def agent(i: int) -> None:
        ctx = opened[i].context(f"agent-{i}")
        done = 0
        while done < rounds:
            text = show(ctx, "/count.txt")
            res = edit(ctx, "/count.txt", text, f"{int(text) + 1}\n")
            if res.ok:
                done += 1
            elif code(res) is ErrorCode.FS_STALE:
                stale[i] += 1
            else:
                failures.append(res.text)
                return

    threads = [threading.Thread(target=agent, args=(i,)) for i in range(agents)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sum(stale) >= agents - 1
    assert branch_files(rig.ws.branch("feat")) == {"count.txt": f"{agents * rounds}\n".encode()}
    assert stored(rig.ws.backend) == main
    # every increment is one head of the branch's log, each by the agent that made it
    log = rig.ws.branches()[0].log
    assert [h.operation for h in log] == ["write"] * (agents * rounds) + ["create"]
    assert sorted(h.owner or "" for h in log[:-1]) == sorted(
        f"agent-{i}" for i in range(agents) for _ in range(rounds))


# -- reads on a branch ---------------------------------------------------------------------

MAIN = {"/a.txt": "alpha\n", "/keep.txt": "keep\n", "/d/old.txt": "old needle\n",
        "/d/other.txt": "other\n", "/mv.txt": "move needle\n"}


def change_branch(br: Workspace) -> Any:
    """An agent's turn on the branch: an edit, a new file in new nested directories, a
    deletion and a move."""
    b = br.context("b")
    for path in ("/a.txt", "/d/old.txt", "/mv.txt"):
        show(b, path)
    ok(edit(b, "/a.txt", "alpha", "ALPHA needle"))
    ok(b.tools.execute("write", {"file_path": "/n1/n2/new.txt", "content": "new needle\n"}))
    ok(b.tools.execute("delete", {"file_path": "/d/old.txt"}))
    ok(b.tools.execute("move", {"source_path": "/mv.txt", "destination_path": "/moved/mv.txt"}))
    return b


BRANCH = {"a.txt": b"ALPHA needle\n", "keep.txt": b"keep\n", "d/other.txt": b"other\n",
          "n1/n2/new.txt": b"new needle\n", "moved/mv.txt": b"move needle\n"}


def test_a_branch_reads_its_changes_over_mains_current_files(rig: Rig) -> None:
    main = seed(rig.ws, MAIN)
    br = rig.ws.branch("feat")
    b = change_branch(br)
    assert branch_files(br) == BRANCH
    assert stored(rig.ws.backend) == main

    def tool(name: str, **args: Any) -> str:
        return str(ok(b.tools.execute(name, args)).text)

    assert tool("ls", path="/") == (
        "/a.txt  (13 bytes)\n/d/\n/keep.txt  (5 bytes)\n/moved/\n/n1/")
    assert tool("ls", path="/d") == "/d/other.txt  (6 bytes)"
    assert tool("ls", path="/n1") == "/n1/n2/"
    assert tool("ls", path="/n1/n2") == "/n1/n2/new.txt  (11 bytes)"
    assert tool("glob", pattern="**/*.txt") == (
        "/a.txt\n/d/other.txt\n/keep.txt\n/moved/mv.txt\n/n1/n2/new.txt")
    assert tool("grep", pattern="needle") == "/a.txt\n/moved/mv.txt\n/n1/n2/new.txt"
    assert tool("grep", pattern="needle", output_mode="content") == (
        "/a.txt\n     1\tALPHA needle\n/moved/mv.txt\n     1\tmove needle\n"
        "/n1/n2/new.txt\n     1\tnew needle")
    for gone in ("/d/old.txt", "/mv.txt"):
        res = b.tools.execute("read", {"file_path": gone})
        assert code(res) is ErrorCode.FS_NOT_FOUND, res.text
    # main keeps every file, exactly
    a = rig.ws.context("a")
    assert show(a, "/d/old.txt") == "old needle\n"
    assert show(a, "/mv.txt") == "move needle\n"
    assert stored(rig.ws.backend) == main
    # main's later changes to files the branch did not change show on the branch
    show(a, "/keep.txt")
    ok(edit(a, "/keep.txt", "keep", "kept on main"))
    ok(a.tools.execute("write", {"file_path": "/later.txt", "content": "later\n"}))
    assert show(b, "/keep.txt") == "kept on main\n"
    assert show(b, "/later.txt") == "later\n"
    assert branch_files(br) == {**BRANCH, "keep.txt": b"kept on main\n",
                                "later.txt": b"later\n"}
    # ... and main's change to a file the branch changed does not
    show(a, "/a.txt")
    ok(edit(a, "/a.txt", "alpha", "alpha on main"))
    assert show(b, "/a.txt") == "ALPHA needle\n"


# -- merges --------------------------------------------------------------------------------

MERGED = {"a.txt": b"ALPHA needle\n", "keep.txt": b"keep\n", "d/other.txt": b"other\n",
          "n1/n2/new.txt": b"new needle\n", "moved/mv.txt": b"move needle\n"}


def test_main_is_untouched_until_the_merge_which_publishes_every_file_exactly(rig: Rig) -> None:
    main = seed(rig.ws, MAIN)
    br = rig.ws.branch("feat")
    change_branch(br)
    assert stored(rig.ws.backend) == main
    review = rig.ws.diff("feat")
    assert [(f.path, f.change, f.moved_from, f.main_changed) for f in review.files] == [
        ("/a.txt", "changed", None, False), ("/d/old.txt", "deleted", None, False),
        ("/moved/mv.txt", "moved", "/mv.txt", False), ("/n1/n2/new.txt", "added", None, False)]
    assert stored(rig.ws.backend) == main
    outcome = rig.ws.merge("feat", owner="reviewer", expect=review.token)
    assert outcome.ok, outcome.text
    assert outcome.code is None
    assert sorted(outcome.published) == ["/a.txt", "/d/old.txt", "/moved/mv.txt", "/mv.txt",
                                         "/n1/n2/new.txt"]
    assert outcome.merged == [] and outcome.conflicts == [] and outcome.unknown == []
    assert stored(rig.ws.backend) == MERGED
    # the branch holds no change any more and reads as main does
    info = rig.ws.branches()[0]
    assert (info.head, info.files, info.log[0].operation) == (outcome.head, 0, "merge")
    assert branch_files(br) == MERGED
    assert rig.ws.diff("feat").files == []


def conflicting(rig: Rig) -> tuple[Workspace, dict[str, bytes]]:
    """A branch and main that changed the same files: a.txt's same line on both sides,
    b.txt deleted on the branch and changed on main, c.txt changed on the branch and
    deleted on main; and clean.txt, a change main did not meet."""
    seed(rig.ws, {"/a.txt": "one\ntwo\n", "/b.txt": "bee\n", "/c.txt": "sea\n",
                  "/clean.txt": "clean\n"})
    br = rig.ws.branch("feat")
    b = br.context("b")
    for path in ("/a.txt", "/b.txt", "/c.txt", "/clean.txt"):
        show(b, path)
    ok(edit(b, "/a.txt", "one", "one on the branch"))
    ok(b.tools.execute("delete", {"file_path": "/b.txt"}))
    ok(edit(b, "/c.txt", "sea", "sea on the branch"))
    ok(edit(b, "/clean.txt", "clean", "cleaner"))
    a = rig.ws.context("a")
    for path in ("/a.txt", "/b.txt", "/c.txt"):
        show(a, path)
    ok(edit(a, "/a.txt", "one", "one on main"))
    ok(edit(a, "/b.txt", "bee", "bee on main"))
    ok(a.tools.execute("delete", {"file_path": "/c.txt"}))
    return br, stored(rig.ws.backend)


def test_a_conflict_on_main_is_refused_naming_each_file_and_nothing_is_written(
        rig: Rig) -> None:
    br, main = conflicting(rig)
    before_branch = branch_files(br)
    head = rig.ws.branches()[0].head
    objects = reserved(rig.ws.backend)
    outcome = rig.ws.merge("feat", owner="reviewer")
    assert not outcome.ok
    assert outcome.code is ErrorCode.FS_STALE
    assert outcome.published == [] and outcome.unknown == []
    assert [(c.path, c.kind) for c in outcome.conflicts] == [
        ("/a.txt", "both_changed"), ("/b.txt", "deleted_on_branch"),
        ("/c.txt", "deleted_on_main")]
    for path in ("/a.txt", "/b.txt", "/c.txt"):
        assert path in outcome.message
    a, b, c = outcome.conflicts
    assert "-one\n+one on the branch" in a.branch_diff
    assert "-one\n+one on main" in a.main_diff
    assert "-bee\n" in b.branch_diff and "-bee\n+bee on main" in b.main_diff
    assert "+sea on the branch" in c.branch_diff and "-sea" in c.main_diff
    # nothing written: main's every file, the branch and its folder as they were
    assert stored(rig.ws.backend) == main
    assert branch_files(br) == before_branch
    assert rig.ws.branches()[0].head == head
    assert reserved(rig.ws.backend) == objects
    # a merge of the one file main did not meet is accepted
    done = rig.ws.merge("feat", owner="reviewer", paths=["/clean.txt"])
    assert done.ok and done.published == ["/clean.txt"], done.text
    assert stored(rig.ws.backend) == {**main, "clean.txt": b"cleaner\n"}


def test_changes_that_do_not_overlap_are_merged_three_ways(rig: Rig) -> None:
    seed(rig.ws, {"/a.txt": "1\n2\n3\n4\n5\n", "/b.txt": "bee\n"})
    br = rig.ws.branch("feat")
    b = br.context("b")
    show(b, "/a.txt")
    ok(edit(b, "/a.txt", "1\n", "ONE\n"))
    a = rig.ws.context("a")
    show(a, "/a.txt")
    ok(edit(a, "/a.txt", "5\n", "FIVE\n"))
    review = rig.ws.diff("feat")
    assert [(f.path, f.change, f.main_changed) for f in review.files] == [
        ("/a.txt", "changed", True)]
    outcome = rig.ws.merge("feat", owner="reviewer", expect=review.token)
    assert outcome.ok, outcome.text
    assert (outcome.published, outcome.merged) == (["/a.txt"], ["/a.txt"])
    assert stored(rig.ws.backend) == {"a.txt": b"ONE\n2\n3\n4\nFIVE\n", "b.txt": b"bee\n"}
    assert branch_files(br) == {"a.txt": b"ONE\n2\n3\n4\nFIVE\n", "b.txt": b"bee\n"}


def test_expect_refuses_a_moved_branch_and_a_moved_main_and_takes_the_exact_review(
        rig: Rig) -> None:
    main = seed(rig.ws, {"/a.txt": "1\n2\n3\n4\n5\n", "/b.txt": "bee\n"})
    br = rig.ws.branch("feat")
    b = br.context("b")
    show(b, "/a.txt")
    ok(edit(b, "/a.txt", "1\n", "ONE\n"))
    reviewed = rig.ws.diff("feat")
    # the branch moved since the review
    ok(edit(b, "/a.txt", "2\n", "TWO\n"))
    objects = reserved(rig.ws.backend)
    moved = rig.ws.merge("feat", owner="reviewer", expect=reviewed.token)
    assert (moved.ok, moved.code, moved.published) == (False, ErrorCode.FS_STALE, [])
    assert stored(rig.ws.backend) == main
    assert reserved(rig.ws.backend) == objects
    # main moved since the review (a change of a file the branch changed)
    reviewed = rig.ws.diff("feat")
    a = rig.ws.context("a")
    show(a, "/a.txt")
    ok(edit(a, "/a.txt", "5\n", "FIVE\n"))
    main = stored(rig.ws.backend)
    moved = rig.ws.merge("feat", owner="reviewer", expect=reviewed.token)
    assert (moved.ok, moved.code, moved.published) == (False, ErrorCode.FS_STALE, [])
    assert stored(rig.ws.backend) == main
    assert reserved(rig.ws.backend) == objects
    # a change of a file the review did not show moves nothing it names
    show(a, "/b.txt")
    ok(edit(a, "/b.txt", "bee", "bee on main"))
    reviewed = rig.ws.diff("feat")
    ok(a.tools.execute("write", {"file_path": "/c.txt", "content": "sea\n"}))
    outcome = rig.ws.merge("feat", owner="reviewer", expect=reviewed.token)
    assert outcome.ok, outcome.text
    assert (outcome.published, outcome.merged) == (["/a.txt"], ["/a.txt"])
    assert stored(rig.ws.backend) == {"a.txt": b"ONE\nTWO\n3\n4\nFIVE\n", "b.txt": b"bee on main\n",
                                      "c.txt": b"sea\n"}


def test_paths_merges_a_subset_and_the_rest_stays_on_the_branch(rig: Rig) -> None:
    seed(rig.ws, {"/a.txt": "a\n", "/b.txt": "b\n"})
    br = rig.ws.branch("feat")
    b = br.context("b")
    for path in ("/a.txt", "/b.txt"):
        show(b, path)
    ok(edit(b, "/a.txt", "a", "A"))
    ok(edit(b, "/b.txt", "b", "B"))
    ok(b.tools.execute("write", {"file_path": "/c/new.txt", "content": "new\n"}))
    outcome = rig.ws.merge("feat", owner="reviewer", paths=["/a.txt", "c/new.txt"])
    assert outcome.ok, outcome.text
    assert sorted(outcome.published) == ["/a.txt", "/c/new.txt"]
    assert stored(rig.ws.backend) == {"a.txt": b"A\n", "b.txt": b"b\n", "c/new.txt": b"new\n"}
    assert [f.path for f in rig.ws.diff("feat").files] == ["/b.txt"]
    assert branch_files(br) == {"a.txt": b"A\n", "b.txt": b"B\n", "c/new.txt": b"new\n"}
    # a path the branch did not change is refused, nothing written
    refused = rig.ws.merge("feat", owner="reviewer", paths=["/a.txt"])
    assert (refused.ok, refused.code) == (False, ErrorCode.FS_INVALID_ARGUMENT)
    assert stored(rig.ws.backend) == {"a.txt": b"A\n", "b.txt": b"b\n", "c/new.txt": b"new\n"}


# -- rewind, discard, the list of branches -------------------------------------------------


def test_branches_rewind_and_discard(rig: Rig) -> None:
    main = seed(rig.ws, {"/a.txt": "v0\n"})
    br = rig.ws.branch("feat")
    x, y = br.context("x"), br.context("y")
    show(x, "/a.txt")
    ok(x.tools.execute("write", {"file_path": "/a.txt", "content": "v1\n"}))
    show(y, "/a.txt")
    ok(edit(y, "/a.txt", "v1", "v2"))
    ok(y.tools.execute("write", {"file_path": "/b.txt", "content": "bee\n"}))
    show(x, "/a.txt")
    ok(edit(x, "/a.txt", "v2", "v3"))
    [info] = rig.ws.branches()
    assert (info.name, info.base, info.files, info.owners, info.merging) == (
        "feat", "main", 2, ["x", "y"], False)
    assert [(h.operation, h.path, h.owner) for h in info.log] == [
        ("write", "a.txt", "x"), ("write", "b.txt", "y"), ("write", "a.txt", "y"),
        ("write", "a.txt", "x"), ("create", None, None)]
    assert info.head == info.log[0].head
    assert [h.parent for h in info.log] == [h.head for h in info.log[1:]] + [None]
    # back to the head after the first write: the branch reads as it did then
    first = info.log[3].head
    rewound = rig.ws.rewind("feat", to=first[:12])
    assert rewound.head == first and [h.head for h in rewound.log] == [
        h.head for h in info.log[3:]]
    assert branch_files(br) == {"a.txt": b"v1\n"}
    # an agent that read a later head is stale there
    stale = edit(x, "/a.txt", "v3", "v4")
    assert code(stale) is ErrorCode.FS_STALE, stale.text
    # a head not in the log (a later one now, another branch's, too short a prefix) is
    # refused and the branch stays where it is
    rig.ws.branch("other")
    other_head = rig.ws.branches()[1].head
    for to in (info.head, other_head, first[:6], "0" * 64):
        with pytest.raises(FsError) as refused:
            rig.ws.rewind("feat", to=to)
        assert refused.value.code is ErrorCode.FS_INVALID_ARGUMENT
        assert rig.ws.branches()[0].head == first
    assert branch_files(br) == {"a.txt": b"v1\n"}
    # discard: the branch is gone; main as it was; the name opens a new branch over main
    rig.ws.discard("feat")
    assert [b.name for b in rig.ws.branches()] == ["other"]
    with pytest.raises(FsError) as gone:
        rig.ws.discard("feat")
    assert gone.value.code is ErrorCode.FS_NOT_FOUND
    assert stored(rig.ws.backend) == main
    again = rig.ws.branch("feat")
    assert branch_files(again) == main
    assert [h.operation for h in rig.ws.branches()[0].log] == ["create"]


# -- collect -------------------------------------------------------------------------------


class FailingWrites(Wrapper):
    """Main, where every change of a file fails (the store answers 500): a merge stops
    after its journal, before its first file."""

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Any:
        raise FsError(ErrorCode.FS_BACKEND, "injected: the store answered 500")

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        if not key.startswith(PREFIX):
            raise FsError(ErrorCode.FS_BACKEND, "injected: the store answered 500")
        self.inner.delete(key, precondition, meta=meta)


def test_collect_removes_a_discarded_branch_and_keeps_what_live_branches_need(
        rig: Rig) -> None:
    main = seed(rig.ws, {"/a.txt": "1\n2\n3\n4\n5\n", "/b.txt": "bee\n"})
    gone = rig.ws.branch("gone")
    g = gone.context("g")
    ok(g.tools.execute("write", {"file_path": "/g.txt", "content": "gone one\n"}))
    show(g, "/g.txt")
    ok(g.tools.execute("write", {"file_path": "/g.txt", "content": "gone two\n"}))
    live = rig.ws.branch("live")
    change_live(live)
    expected = branch_files(live)
    log = [h.head for h in rig.ws.branches()[1].log]
    gone_log = [h.head for h in rig.ws.branches()[0].log]
    store = BranchStore(rig.ws.backend)
    gone_keys = {store.manifest_key(h) for h in gone_log} | {
        store.blob_key(hashlib.sha256(data).hexdigest()) for data in (b"gone one\n", b"gone two\n")}
    rig.ws.discard("gone")
    before = reserved(rig.ws.backend)
    assert gone_keys <= before.keys()
    outcome = rig.ws.collect(grace=timedelta(0))
    assert (outcome.removed_manifests, outcome.removed_blobs) == (3, 2)
    after = reserved(rig.ws.backend)
    assert after == {k: v for k, v in before.items() if k not in gone_keys}
    # every object the live branch needs is there: its files, and every head of its log
    assert branch_files(live) == expected
    assert stored(rig.ws.backend) == main
    rig.ws.rewind("live", to=log[-2])
    assert branch_files(live) == {**main, "a.txt": b"ONE\n2\n3\n4\n5\n"}
    rig.ws.rewind("live", to=log[-1])
    assert branch_files(live) == main


def change_live(live: Workspace) -> Any:
    b = live.context("b")
    show(b, "/a.txt")
    ok(edit(b, "/a.txt", "1\n", "ONE\n"))
    ok(b.tools.execute("write", {"file_path": "/new.txt", "content": "new\n"}))
    show(b, "/b.txt")
    ok(b.tools.execute("delete", {"file_path": "/b.txt"}))
    return b


def test_collect_keeps_the_blobs_of_a_merge_under_way(rig: Rig) -> None:
    seed(rig.ws, {"/a.txt": "1\n2\n3\n4\n5\n", "/b.txt": "bee\n"})
    live = rig.ws.branch("live")
    change_live(live)
    a = rig.ws.context("a")
    show(a, "/a.txt")
    ok(edit(a, "/a.txt", "5\n", "FIVE\n"))
    main = stored(rig.ws.backend)
    # the merge stops after its journal: a.txt's three-way bytes are named by the journal
    # (and by a manifest no ref reaches) only
    stopped = merge(BranchBackend(FailingWrites(rig.ws.branches_of.inner), "live"),
                    owner="reviewer")
    assert (stopped.ok, stopped.code, stopped.published) == (False, ErrorCode.FS_BACKEND, [])
    assert sorted(stopped.unknown) == ["/a.txt", "/b.txt", "/new.txt"]
    assert stored(rig.ws.backend) == main
    assert rig.ws.branches()[0].merging
    combined = b"ONE\n2\n3\n4\nFIVE\n"
    key = BranchStore.blob_key(hashlib.sha256(combined).hexdigest())
    assert reserved(rig.ws.backend)[key] == combined
    outcome = rig.ws.collect(grace=timedelta(0))
    # the manifest that named the merge's own bytes goes (no ref reaches it); its blob
    # stays, named by the journal
    assert (outcome.removed_manifests, outcome.removed_blobs) == (1, 0)
    assert reserved(rig.ws.backend)[key] == combined
    # the next merge finishes it, every file exact
    done = rig.ws.merge("live", owner="reviewer")
    assert done.ok, done.text
    assert sorted(done.resumed) == ["/a.txt", "/b.txt", "/new.txt"]
    assert stored(rig.ws.backend) == {"a.txt": combined, "new.txt": b"new\n"}
    assert not rig.ws.branches()[0].merging


def test_a_merge_refused_after_finishing_a_stopped_one_says_what_it_published(
        rig: Rig) -> None:
    seed(rig.ws, {"/a.txt": "1\n2\n3\n4\n5\n", "/b.txt": "bee\n", "/z.txt": "z\n"})
    live = rig.ws.branch("live")
    change_live(live)
    stopped = merge(BranchBackend(FailingWrites(rig.ws.branches_of.inner), "live"),
                    owner="reviewer")
    assert not stopped.ok
    # meanwhile both sides change z.txt's one line: the next merge must refuse it
    b = live.context("b2")
    show(b, "/z.txt")
    ok(edit(b, "/z.txt", "z\n", "branch\n"))
    a = rig.ws.context("a")
    show(a, "/z.txt")
    ok(edit(a, "/z.txt", "z\n", "main\n"))
    refused = rig.ws.merge("live", owner="reviewer")
    assert (refused.ok, refused.code) == (False, ErrorCode.FS_STALE)
    assert refused.message.startswith(
        "The merge of branch 'live' killed earlier was finished first (/a.txt, /b.txt, "
        "/new.txt published). 1 file(s) of branch 'live' were changed on main too")
    assert sorted(refused.published) == ["/a.txt", "/b.txt", "/new.txt"]
    assert stored(rig.ws.backend) == {"a.txt": b"ONE\n2\n3\n4\n5\n", "new.txt": b"new\n",
                                      "z.txt": b"main\n"}
    assert [c.path for c in refused.conflicts] == ["/z.txt"]


class MainMovesFirst(Wrapper):
    """Main, whose author rewrites ``key`` just before the merge's first file write (the
    merge planned it on main's earlier version)."""

    def __init__(self, inner: Backend, key: str, data: bytes) -> None:
        super().__init__(inner)
        self.key, self.data, self.done = key, data, False
        self.lock = threading.Lock()

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Any:
        with self.lock:
            if not self.done and not key.startswith(PREFIX):
                self.done = True
                self.inner.write(self.key, self.data, IfMatch(self.inner.read(self.key).version))
        return self.inner.write(key, data, precondition, meta=meta)


def test_a_file_main_changes_while_the_merge_publishes_is_left_and_said(rig: Rig) -> None:
    seed(rig.ws, {"/a.txt": "1\n2\n3\n4\n5\n", "/b.txt": "bee\n"})
    live = rig.ws.branch("live")
    change_live(live)
    out = merge(BranchBackend(MainMovesFirst(rig.ws.branches_of.inner, "a.txt", b"main's\n"),
                              "live"), owner="reviewer")
    assert (out.ok, out.code) == (False, ErrorCode.FS_STALE), out.text
    assert out.message == (
        "main changed some files of branch 'live' while the merge published it; those were "
        "not written and stay on the branch: /a.txt. Published: /b.txt, /new.txt. Review "
        "ws.diff('live') and merge again (ws.rebase first where both changed).")
    assert out.text.startswith("merge of live not finished (FS_STALE): ")
    assert [(c.path, c.kind) for c in out.conflicts] == [("/a.txt", "changed_meanwhile")]
    assert sorted(out.published) == ["/b.txt", "/new.txt"]
    assert stored(rig.ws.backend) == {"a.txt": b"main's\n", "new.txt": b"new\n"}
    assert [f.path for f in rig.ws.diff("live").files] == ["/a.txt"]
    assert not rig.ws.branches()[0].merging


# -- two processes, one branch name --------------------------------------------------------

OPEN_AND_WRITE = """
import json, sys
from fsseam import Workspace
url, options, name = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
ws = Workspace(url, storage_options=options)
sys.stdin.readline()  # both processes start here together
ctx = ws.branch("feat").context(name)
res = ctx.tools.execute("write", {"file_path": f"/{name}.txt", "content": name + "\\n"})
print(res.text)
sys.exit(0 if res.ok else 1)
"""


@pytest.mark.parametrize("kind", ["local", "s3"])
def test_two_processes_opening_one_branch_name_open_one_branch(
        request: pytest.FixtureRequest, kind: str, tmp_path: Path) -> None:
    rig = make_rig(request, kind, tmp_path)
    main = seed(rig.ws, {"/a.txt": "a\n"})
    procs = [subprocess.Popen(
        [sys.executable, "-c", OPEN_AND_WRITE, rig.url, json.dumps(rig.options), name],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name in ("p1", "p2")]
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, (out, err)
    [info] = rig.ws.branches()
    assert [h.operation for h in info.log][-1:] == ["create"]
    assert sorted(h.operation for h in info.log) == ["create", "write", "write"]
    assert (info.files, info.owners) == (2, ["p1", "p2"])
    assert branch_files(rig.ws.branch("feat")) == {**main, "p1.txt": b"p1\n", "p2.txt": b"p2\n"}
    assert stored(rig.ws.backend) == main


def test_requests_of_a_review_and_a_merge(counted: Rig) -> None:
    """A review of k changed files: the ref, the manifest, main's k files and each file's
    base and branch blobs (2 + 3k). A merge: the journal looked for (a merge to finish),
    the ref, the manifest, main's k files, the journal, then per file its blob and its
    conditional write, then the manifest and ref without the published files and the
    journal removed (7 + 3k)."""
    assert counted.take is not None
    k = 3
    files = {f"/d/f{i}.txt": f"{i}\n" for i in range(k)}
    seed(counted.ws, files)
    b = counted.ws.branch("feat").context("b")
    for i, path in enumerate(files):
        show(b, path)
        ok(edit(b, path, f"{i}\n", f"changed {i}\n"))
    counted.take()
    review = counted.ws.diff("feat")
    got = verbs(counted.take())
    mains = [("read", f"d/f{i}.txt") for i in range(k)]
    assert sorted(got) == sorted([("read", "ref"), ("read", "manifest"), *mains,
                                  *[("read", "blob")] * (2 * k)])
    outcome = counted.ws.merge("feat", owner="reviewer", expect=review.token)
    assert outcome.ok and len(outcome.published) == k, outcome.text
    got = verbs(counted.take())
    reads = [("read", "journal"), ("read", "ref"), ("read", "manifest"), *mains,
             *[("read", "blob")] * k]
    writes = [("write", t) for t in ("journal", *[m[1] for m in mains], "manifest", "ref")]
    if counted.kind == "gcs":
        writes = [("write", "upload")] * len(writes)  # each names its object in its body
    removal = [("write", "journal")]  # a DELETE, named in its path on every store
    assert sorted(got) == sorted(reads + writes + removal)
    assert len(got) == 7 + 3 * k
    assert stored(counted.ws.backend) == {f"d/f{i}.txt": f"changed {i}\n".encode()
                                          for i in range(k)}
