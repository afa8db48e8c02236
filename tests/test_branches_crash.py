"""A merge killed right after each of its storage calls is finished by another process,
with every file of main exact.

The branch: ``a.txt`` changed, ``b.txt`` deleted, ``n/new.txt`` added, and ``m.txt``
changed on the branch and on main (other lines: merged three ways); ``u.txt`` untouched.
A clean merge makes N storage calls (counted by :class:`tests.merge_crash.KillAfter`
around main's backend: every call the merge makes reaches the store through it; the test
of the sequence says which). For every k in 1..N, on a fresh root set up the same way, a
merge is killed right after call k returns; then another process finishes it, by
``ws.merge`` or by opening the branch (``ws.branch``, then ``ws.merge``), and every file
of main is exact (the branch's bytes, the three-way result, the deletion), the branch has
no change left, no journal is left, and the outcome says which files were published and
which of them finished a killed merge (``resumed``). Between the kill and the finish each
file is whole: the bytes before the merge or the bytes after it.

Local, S3 (moto server), GCS (fake-gcs-server) and Azure (Azurite): the merge runs in a
child process, forked from one that imported the clients once (tests/merge_crash.py), and
the wrapper kills it with SIGKILL; the test's own process finishes it. Memory cannot
cross processes: there the wrapper raises a BaseException after call k (and on any call
after it) and the same process finishes, through a new Workspace. Files are published one
at a time (``PUBLISHERS = 1``) so each k is one point of the merge.

Every k on memory, local and GCS, for both finishes. S3 (moto, some 20 ms a request) and
Azure (Azurite) are slower: there the merge finish takes every k after a call that writes
(a kill after a read leaves the store as a kill after the write before it did), but the
plan's manifest (which leaves main and the branch as the plan's blob after it does), and
the opening finish the four points where opening differs (no journal yet, the journal
alone, one file published, all but the journal's removal).

Also: a change made on main, while the merge is dead, to a file it had not published yet
is never overwritten: that file is reported as a conflict and stays on the branch, and the
rest is published; or, when the two changes do not overlap, the same merge combines them
three ways (published, not a conflict).
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from fsseam import CreateOnly, ErrorCode, IfMatch, Workspace
from fsseam.backends.base import WriteMeta
from fsseam.backends.memory import isolated_memory_filesystem
from fsseam.backends.registry import open_backend
from fsseam.branches import PREFIX, merging
from fsseam.branches.review import MergeOutcome

from .merge_crash import KillAfter, Killed

STORES = ["memory", "local", "s3", "gcs", "azure"]
NAME = "feat"
OWNER = "reviewer"

BASE_M = b"1\n2\n3\n4\n5\n"
BRANCH_M = b"one\n2\n3\n4\n5\n"
MAIN_M = b"1\n2\n3\n4\nfive\n"
MERGED_M = b"one\n2\n3\n4\nfive\n"

BEFORE = {"a.txt": b"alpha\n", "b.txt": b"beta\n", "m.txt": MAIN_M, "u.txt": b"untouched\n"}
"""Main when the merge starts."""
AFTER = {"a.txt": b"ALPHA\n", "m.txt": MERGED_M, "n/new.txt": b"new\n", "u.txt": b"untouched\n"}
"""Main when the merge is done."""
PUBLISHED = ["/a.txt", "/b.txt", "/m.txt", "/n/new.txt"]
CHANGED = {"a.txt", "b.txt", "m.txt", "n/new.txt"}


@dataclass
class Root:
    """One fresh root of a store: how to open it, and (memory) the store itself."""

    url: str
    options: dict[str, Any] | None = None
    fs: Any = None

    def workspace(self, backend: Any = None) -> Workspace:
        if backend is not None:
            return Workspace(self.url, backend=backend, load_entry_points=False)
        return Workspace(self.url, self.options, fs=self.fs, load_entry_points=False)

    def backend(self) -> Any:
        return open_backend(self.url, self.options, self.fs)


@dataclass
class Store:
    kind: str
    fresh: Callable[[], Root]
    killer: Forker | None = None
    """The process that forks each killed merge (None: memory, killed in this process)."""


class Forker:
    """tests/merge_crash.py in a process of its own: each job a forked child."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
               "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("merge_crash.py"))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def merge(self, root: Root, after: int) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        job = {"url": root.url, "options": root.options, "branch": NAME, "owner": OWNER,
               "after": after}
        self.proc.stdin.write(json.dumps(job) + "\n")
        self.proc.stdin.flush()
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            assert sel.select(timeout=120), "the forked merge never answered"
        line = self.proc.stdout.readline()
        assert line, "the forking process died"
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture(scope="module")
def forker() -> Iterator[Forker]:
    f = Forker()
    yield f
    f.close()


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
          ) -> Store:
    kind = request.param
    monkeypatch.setattr(merging, "PUBLISHERS", 1)
    if kind == "memory":
        return Store(kind, lambda: Root(f"memory://crash-{uuid.uuid4().hex}",
                                        fs=isolated_memory_filesystem()))
    forker: Forker = request.getfixturevalue("forker")
    if kind == "local":
        def local() -> Root:
            d = tmp_path / uuid.uuid4().hex[:12]
            d.mkdir()
            return Root(str(d))

        return Store(kind, local, forker)
    if kind == "s3":
        moto = request.getfixturevalue("moto_s3")
        where, options = f"s3://{moto.create_bucket()}", moto.storage_options()
    elif kind == "gcs":
        endpoint, _ = request.getfixturevalue("fake_gcs")
        where, options = f"gs://{endpoint.create_bucket()}", endpoint.storage_options()
    else:
        az = request.getfixturevalue("azurite")
        where, options = f"az://{az.create_container()}", az.storage_options()
    return Store(kind, lambda: Root(f"{where}/{uuid.uuid4().hex[:12]}", options), forker)


def set_up(root: Root) -> None:
    """Main's files, the branch's four changes, then main's own change of ``m.txt``."""
    main = root.backend()
    for key, data in {**BEFORE, "m.txt": BASE_M}.items():
        main.write(key, data, CreateOnly())
    branch = root.workspace().branch(NAME).backend
    agent = WriteMeta(owner="agent")
    for key, data in (("a.txt", b"ALPHA\n"), ("m.txt", BRANCH_M)):
        branch.write(key, data, IfMatch(branch.read(key).version), meta=agent)
    branch.delete("b.txt", IfMatch(branch.read("b.txt").version), meta=agent)
    branch.write("n/new.txt", b"new\n", CreateOnly(), meta=agent)
    main.write("m.txt", MAIN_M, IfMatch(main.read("m.txt").version))


def files(root: Root) -> dict[str, bytes]:
    """Every file of main and its bytes, read from the store itself."""
    main = root.backend()
    return {e.key: main.read(e.key).data for e in main.walk("")
            if e.kind == "file" and not e.key.startswith((PREFIX, ".fsseam"))}


def killed_merge(store: Store, root: Root, after: int) -> list[tuple[str, str]]:
    """A merge of the branch, killed right after its storage call ``after`` (0: never);
    the calls it made when it was not killed."""
    if store.killer is not None:
        reply = store.killer.merge(root, after)
        assert "error" not in reply, reply["error"]
        if after:
            assert reply["status"] == -9, reply
            return []
        assert reply["status"] == 0 and reply["result"]["outcome"]["ok"], reply
        return [(m, k) for m, k in reply["result"]["calls"]]

    def die() -> None:
        raise Killed

    counted = KillAfter(root.backend(), after, kill=die)
    dying = root.workspace(backend=counted)
    counted.armed = True
    if after:
        with pytest.raises(Killed):
            dying.merge(NAME, owner=OWNER)
        return []
    assert dying.merge(NAME, owner=OWNER).ok
    return counted.calls


def kind_of(key: str) -> str:
    """A call's key as the sequence names it: the reserved folder's object kinds, else the
    file's key."""
    if key.startswith(PREFIX + "/"):
        return key.split("/")[1]
    return key


CLEAN = [
    ("get_plain", "journals"),  # a killed merge to finish first? none
    ("get_plain", "refs"), ("get_plain", "manifests"),  # the head
    ("read_many", "a.txt,b.txt,m.txt,n/new.txt"),  # main's files now
    ("get_plain", "blobs"), ("get_plain", "blobs"),  # m.txt's base and branch bytes
    ("put_plain", "manifests"), ("put_plain", "blobs"),  # m.txt merged three ways, named
    ("put_plain", "journals"),
    ("get_plain", "blobs"), ("write", "a.txt"),
    ("delete", "b.txt"),
    ("get_plain", "blobs"), ("write", "m.txt"),
    ("get_plain", "blobs"), ("write", "n/new.txt"),
    ("put_plain", "manifests"), ("put_plain", "refs"),  # the branch without them
    ("delete", "journals"),
]
"""A clean merge's storage calls, in order (their kinds)."""
JOURNALED = CLEAN.index(("put_plain", "journals")) + 1
"""The call after which a killed merge has its journal."""
DONE = len(CLEAN)
"""The call after which a killed merge was over."""
WRITES = [i + 1 for i, (method, _) in enumerate(CLEAN)
          if method in ("put_plain", "write", "delete")]
"""The calls after which the store differs from the call before."""
EVERY_K = ("memory", "local", "gcs")


def points(kind: str, finish: str) -> list[int]:
    """The k a test kills the merge after (see the module docstring)."""
    if kind in EVERY_K:
        return list(range(1, DONE + 1))
    if finish == "merge":  # the first write is the plan's manifest: its blob's is like it
        return WRITES[1:]
    return [JOURNALED - 1, JOURNALED, CLEAN.index(("write", "a.txt")) + 1, DONE - 1]


def test_the_wrapper_counts_every_storage_call_of_a_merge(store: Store) -> None:
    root = store.fresh()
    set_up(root)
    assert files(root) == BEFORE
    calls = killed_merge(store, root, 0)
    assert [(m, kind_of(k)) for m, k in calls] == CLEAN
    assert files(root) == AFTER


def check_done(root: Root, k: int, after: dict[str, bytes] = AFTER) -> None:
    """Main exact, the branch without a change, no journal."""
    assert files(root) == after, k
    branches = root.workspace().branches_of
    assert branches.backend(NAME).head().files == {}, k
    assert branches.store.journal(NAME) is None, k


def check_whole(root: Root) -> None:
    """Between the kill and the finish, each file of main is whole: before or after."""
    now = files(root)
    for key in BEFORE.keys() | AFTER.keys():
        assert now.get(key) in (BEFORE.get(key), AFTER.get(key)), (key, now.get(key))


def expected_outcome(k: int) -> dict[str, Any]:
    if k < JOURNALED:  # nothing published yet: the next merge is a whole one
        return {"ok": True, "published": PUBLISHED, "resumed": [], "merged": ["/m.txt"]}
    if k < DONE:  # the journal names every file; each done again or found done
        return {"ok": True, "published": PUBLISHED, "resumed": PUBLISHED, "merged": []}
    return {"ok": True, "published": [], "resumed": [], "merged": []}


def summary(out: MergeOutcome) -> dict[str, Any]:
    return {"ok": out.ok, "published": out.published, "resumed": out.resumed,
            "merged": out.merged}


def test_a_merge_killed_after_each_call_is_finished_by_the_next_merge(store: Store) -> None:
    for k in points(store.kind, "merge"):
        root = store.fresh()
        set_up(root)
        killed_merge(store, root, k)
        check_whole(root)
        out = root.workspace().merge(NAME, owner=OWNER)
        assert summary(out) == expected_outcome(k), (k, out.text)
        assert out.conflicts == [] and out.unknown == [], (k, out.text)
        check_done(root, k)


def test_a_merge_killed_after_each_call_is_finished_by_opening_the_branch(
        store: Store) -> None:
    for k in points(store.kind, "branch"):
        root = store.fresh()
        set_up(root)
        killed_merge(store, root, k)
        check_whole(root)
        ws = root.workspace()
        branch = ws.branch(NAME)
        if k >= JOURNALED:  # opening it finished the merge
            check_done(root, k)
            assert branch.backend.read("a.txt").data == b"ALPHA\n"
        else:  # no journal: the merge never began to publish; main as it was
            assert files(root) == BEFORE, k
            [info] = ws.branches()
            assert (info.files, info.merging) == (4, False), k
        out = ws.merge(NAME, owner=OWNER)
        assert out.ok and out.resumed == [], (k, out.text)
        assert out.published == (PUBLISHED if k < JOURNALED else []), (k, out.text)
        check_done(root, k)


MAINS_OWN = b"alpha, as main's author left it\n"


@pytest.mark.parametrize("finish", ["merge", "branch"])
def test_a_change_on_main_while_the_merge_is_dead_is_kept_and_reported(
        store: Store, finish: str) -> None:
    """Killed right after its journal, before ``a.txt``: main's author then rewrites
    ``a.txt``. The finish never overwrites it: reported as a conflict, kept on the branch;
    every other file published."""
    root = store.fresh()
    set_up(root)
    killed_merge(store, root, JOURNALED)
    assert files(root) == BEFORE
    main = root.backend()
    main.write("a.txt", MAINS_OWN, IfMatch(main.read("a.txt").version))
    ws = root.workspace()
    if finish == "branch":
        ws.branch(NAME)
    out = ws.merge(NAME, owner=OWNER)
    assert files(root) == {**AFTER, "a.txt": MAINS_OWN}
    assert not out.ok and out.code is ErrorCode.FS_STALE, out.text
    assert [(c.path, c.kind) for c in out.conflicts] == [("/a.txt", "both_changed")], out.text
    assert "+ALPHA" in out.conflicts[0].branch_diff, out.text
    assert "+alpha, as main's author left it" in out.conflicts[0].main_diff, out.text
    if finish == "merge":
        assert out.published == ["/b.txt", "/m.txt", "/n/new.txt"], out.text
        assert out.resumed == out.published, out.text
    [info] = ws.branches()
    assert (info.files, info.merging) == (1, False)
    assert ws.branch(NAME).backend.read("a.txt").data == b"ALPHA\n"
    assert ws.branches_of.store.keys("journals") == []


def test_a_change_on_main_while_the_merge_is_dead_is_merged_three_ways(store: Store) -> None:
    """Killed right after its journal; main's author then changes another line of
    ``m.txt``. The finish finds ``m.txt`` changed meanwhile and leaves it on the branch;
    the same merge then combines the two changes three ways: published, merged, and not
    reported as a conflict."""
    root = store.fresh()
    set_up(root)
    killed_merge(store, root, JOURNALED)
    main = root.backend()
    main.write("m.txt", b"1\n2\nthree\n4\nfive\n", IfMatch(main.read("m.txt").version))
    out = root.workspace().merge(NAME, owner=OWNER)
    after = {**AFTER, "m.txt": b"one\n2\nthree\n4\nfive\n"}
    assert out.ok and out.conflicts == [] and out.unknown == [], out.text
    assert sorted(out.published) == PUBLISHED and out.merged == ["/m.txt"], out.text
    assert out.resumed == ["/a.txt", "/b.txt", "/n/new.txt"], out.text
    check_done(root, JOURNALED, after)
