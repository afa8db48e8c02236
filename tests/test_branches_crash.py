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
after it) and the same process finishes, through a new Workspace. The killed merge
publishes one file at a time (``PUBLISHERS = 1``) so each k is one point of the merge; a
test on memory and local kills the default (files published by threads at once) too, and
another kills the finish itself after each of its calls.

Every k on memory, local and GCS, for both finishes, and on Azure (Azurite) for the merge
finish. On S3 (moto: a Python server in the test's process, some 30 ms a request), and on
Azure for the opening finish, the four points where a finish differs: no journal yet, the
journal alone, one file published, all but the journal's removal.

Also, while the merge is dead: ``collect`` with no grace leaves what the finish needs; a
change made on main to a file the merge had not published yet is never overwritten (that
file is reported as a conflict and stays on the branch, the rest is published; or, when
the two changes do not overlap, the same merge combines them three ways: published, not
a conflict); an agent's later change on the branch is published after it, not reported
as a conflict with the merge's own files.
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
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from fsseam import CreateOnly, ErrorCode, IfMatch, Workspace
from fsseam.backends.base import WriteMeta
from fsseam.backends.memory import isolated_memory_filesystem
from fsseam.backends.registry import open_backend
from fsseam.branches import PREFIX, merging, open_branch
from fsseam.branches.manage import Branches
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
AT_ONCE = merging.PUBLISHERS
"""Files a merge publishes at once by default."""


@dataclass
class Root:
    """One fresh root of a store: how to open it, and (memory) the store itself."""

    url: str
    options: dict[str, Any] | None = None
    fs: Any = None
    main: Any = None

    def workspace(self, backend: Any = None) -> Workspace:
        if backend is not None:
            return Workspace(self.url, backend=backend, load_entry_points=False)
        return Workspace(self.url, self.options, fs=self.fs, load_entry_points=False)

    def backend(self) -> Any:
        """Main's backend, opened once: the test's own reads and writes (a finish opens a
        Workspace of its own)."""
        if self.main is None:
            self.main = open_backend(self.url, self.options, self.fs)
        return self.main


@dataclass
class Store:
    kind: str
    fresh: Callable[[], Root]
    killer: Forker | None = None
    """The process that forks each killed merge (None: memory, killed in this process)."""
    requests: Callable[[], list[tuple[str, str]]] | None = None
    """The requests the store's server saw since the last call (S3), if counted."""


class Forker:
    """tests/merge_crash.py in a process of its own: each job a forked child."""

    def __init__(self) -> None:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p),
               "GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT": "false"}
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("merge_crash.py"))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def merge(self, root: Root, after: int, publishers: int,
              paths: list[str] | None) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        job = {"url": root.url, "options": root.options, "branch": NAME, "owner": OWNER,
               "after": after, "publishers": publishers, "paths": paths}
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
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    kind = request.param
    if kind == "memory":
        return Store(kind, lambda: Root(f"memory://crash-{uuid.uuid4().hex}",
                                        fs=isolated_memory_filesystem()))
    forker: Forker = request.getfixturevalue("forker")
    if kind == "local":
        def local() -> Root:
            d = tmp_path / uuid.uuid4().hex[:12]
            d.mkdir()
            # A SIGKILL is a crash of the process, which "rename" durability survives (no
            # fsync: that guards a power loss, which no test here makes).
            return Root(str(d), {"durability": "rename"})

        return Store(kind, local, forker)
    if kind == "s3":
        moto = request.getfixturevalue("moto_s3")
        bucket = moto.create_bucket()
        where, options = f"s3://{bucket}", moto.storage_options()

        def requests() -> list[tuple[str, str]]:
            seen = moto.log.to_bucket(bucket)
            moto.log.clear()
            return list(seen)

        return Store(kind, lambda: Root(f"{where}/{uuid.uuid4().hex[:12]}", options), forker,
                     requests)
    if kind == "gcs":
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
    branch = open_branch(main, NAME)  # what ws.branch(NAME).backend is
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


def run_merge(store: Store, root: Root, after: int, publishers: int = 1,
              paths: list[str] | None = None) -> tuple[bool, list[tuple[str, str]]]:
    """A merge of the branch (of ``paths``: all when None) by another process (memory: by
    this one), killed right after its storage call ``after`` (0: never), publishing
    ``publishers`` files at once: whether it was killed, and the calls it made when it
    was not."""
    if store.killer is not None:
        reply = store.killer.merge(root, after, publishers, paths)
        assert "error" not in reply, reply["error"]
        if reply["status"] == -9:
            return True, []
        assert reply["status"] == 0 and reply["result"]["outcome"]["ok"], reply
        return False, [(m, k) for m, k in reply["result"]["calls"]]

    def die() -> None:
        raise Killed

    counted = KillAfter(open_backend(root.url, root.options, root.fs), after, kill=die)
    dying = root.workspace(backend=counted)
    counted.armed = True
    kept = merging.PUBLISHERS
    merging.PUBLISHERS = publishers
    try:
        out = dying.merge(NAME, owner=OWNER, paths=paths)
    except Killed:
        return True, []
    finally:
        merging.PUBLISHERS = kept
    assert out.ok, out.text
    return False, counted.calls


def killed_merge(store: Store, root: Root, after: int) -> list[tuple[str, str]]:
    """:func:`run_merge`, which must be killed when ``after`` is not 0."""
    killed, calls = run_merge(store, root, after)
    assert killed == bool(after), after
    return calls


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
SPREAD = [JOURNALED - 1, JOURNALED, CLEAN.index(("write", "a.txt")) + 1, DONE - 1]
"""No journal yet; the journal alone; one file published; all but the journal's removal."""


def points(kind: str, finish: str) -> list[int]:
    """The k a test kills the merge after (see the module docstring)."""
    spread = ("s3",) if finish == "merge" else ("s3", "azure")
    return SPREAD if kind in spread else list(range(1, DONE + 1))


def test_the_wrapper_counts_every_storage_call_of_a_merge(store: Store) -> None:
    root = store.fresh()
    set_up(root)
    assert files(root) == BEFORE
    if store.requests is not None:
        store.requests()
    calls = killed_merge(store, root, 0)
    assert [(m, kind_of(k)) for m, k in calls] == CLEAN
    if store.requests is not None:
        # Every change that reached the server went through the wrapper, one a call: a
        # kill after call k comes before every later change.
        changes = [r for r in store.requests() if r[0] in ("PUT", "POST", "DELETE")]
        assert len(changes) == sum(m in ("put_plain", "write", "delete") for m, _ in CLEAN)


def check_done(root: Root, k: int, after: dict[str, bytes] = AFTER) -> None:
    """Main exact, the branch without a change, no journal."""
    assert files(root) == after, k
    branches = Branches(root.backend())
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


@pytest.mark.parametrize("store", ["memory", "local"], indirect=True)
def test_a_finish_killed_after_each_of_its_calls_is_finished_by_the_next(
        store: Store) -> None:
    """Killed after it published ``a.txt``; then the finish is killed after each of its own
    calls in turn; a third merge finishes: every file exact."""
    first = CLEAN.index(("write", "a.txt")) + 1
    j = 0
    killed = True
    while killed:
        j += 1
        root = store.fresh()
        set_up(root)
        killed_merge(store, root, first)
        killed, _ = run_merge(store, root, j)
        check_whole(root)
        out = root.workspace().merge(NAME, owner=OWNER)
        assert out.ok and out.conflicts == [] and out.unknown == [], (j, out.text)
        assert set(out.published) <= set(PUBLISHED), (j, out.text)
        check_done(root, j)
    assert j > DONE - first, j  # the finish does every step again, then settles


@pytest.mark.parametrize("store", ["memory", "local"], indirect=True)
def test_a_merge_publishing_at_once_killed_after_each_call_is_finished(store: Store) -> None:
    """The default: files published by several threads at once, the kill after the k-th
    call of any of them; the finish makes every file exact all the same."""
    for k in range(JOURNALED, DONE + 1):
        root = store.fresh()
        set_up(root)
        killed, _ = run_merge(store, root, k, publishers=AT_ONCE)
        assert killed, k
        check_whole(root)
        out = root.workspace().merge(NAME, owner=OWNER)
        assert out.ok and out.conflicts == [] and out.unknown == [], (k, out.text)
        check_done(root, k)


def test_a_change_on_the_branch_while_the_merge_is_dead_is_merged_after_it(
        store: Store) -> None:
    """Killed right after its journal; an agent on the branch then changes ``a.txt``,
    ``n/new.txt`` and another line of ``m.txt`` again, and makes ``b.txt`` anew. The
    finish publishes what the journal names and keeps the agent's later changes on the
    branch, resting on what it published; the same merge then publishes them (``m.txt``
    three ways, keeping main's change too): no conflict with the merge's own files."""
    root = store.fresh()
    set_up(root)
    killed_merge(store, root, JOURNALED)
    branch = open_branch(root.backend(), NAME)
    agent = WriteMeta(owner="agent")
    newer = {"a.txt": b"ALPHA, and more\n", "n/new.txt": b"newer\n",
             "m.txt": b"one\n2\nthree\n4\n5\n"}
    for key, data in newer.items():
        branch.write(key, data, IfMatch(branch.read(key).version), meta=agent)
    branch.write("b.txt", b"beta, made anew\n", CreateOnly(), meta=agent)
    out = root.workspace().merge(NAME, owner=OWNER)
    assert out.ok and out.conflicts == [] and out.unknown == [], out.text
    assert out.resumed == PUBLISHED and out.merged == ["/m.txt"], out.text
    check_done(root, JOURNALED, {**AFTER, **newer, "b.txt": b"beta, made anew\n",
                                 "m.txt": b"one\n2\nthree\n4\nfive\n"})


def test_collect_while_the_merge_is_dead_leaves_what_its_finish_needs(store: Store) -> None:
    """Killed after each call (memory, local; elsewhere the journal's neighbours and the
    last but one); then ``collect`` with no grace at all (every object no ref or journal
    reaches goes) runs before the finish: the finish still has every blob it publishes,
    and main ends exact."""
    every = store.kind in ("memory", "local")
    for k in range(1, DONE + 1) if every else (JOURNALED - 1, JOURNALED, DONE - 1):
        root = store.fresh()
        set_up(root)
        killed_merge(store, root, k)
        root.workspace().collect(grace=timedelta(0))
        out = root.workspace().merge(NAME, owner=OWNER)
        assert summary(out) == expected_outcome(k), (k, out.text)
        check_done(root, k)


@pytest.mark.parametrize("store", ["memory", "local"], indirect=True)
def test_a_merge_of_some_files_killed_after_each_call_is_finished_by_the_next(
        store: Store) -> None:
    """``merge(paths=[a.txt, m.txt])`` killed after each of its calls; the next merge, of
    ``b.txt`` alone, finishes it first: ``a.txt`` and ``m.txt`` are on main when its
    journal was written (resumed, unless the kill came after its last call), else left on
    the branch; ``b.txt`` is published; ``n/new.txt`` stays on the branch, main without
    it."""
    some = ["/a.txt", "/m.txt"]
    root = store.fresh()
    set_up(root)
    _, calls = run_merge(store, root, 0, paths=some)
    for k in range(1, len(calls) + 1):
        root = store.fresh()
        set_up(root)
        killed, _ = run_merge(store, root, k, paths=some)
        assert killed, k
        check_whole(root)
        out = root.workspace().merge(NAME, owner=OWNER, paths=["/b.txt"])
        assert out.ok and out.conflicts == [], (k, out.text)
        journaled = k >= JOURNALED
        resumed = some if journaled and k < len(calls) else []
        assert (out.published, out.resumed) == ([*resumed, "/b.txt"], resumed), (k, out.text)
        main = BEFORE if not journaled else {**BEFORE, "a.txt": AFTER["a.txt"],
                                             "m.txt": AFTER["m.txt"]}
        assert files(root) == {k_: v for k_, v in main.items() if k_ != "b.txt"}, k
        left = {"n/new.txt"} | (set() if journaled else {"a.txt", "m.txt"})
        assert set(Branches(root.backend()).backend(NAME).head().files) == left, k
        assert Branches(root.backend()).store.journal(NAME) is None, k
