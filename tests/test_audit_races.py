"""The trail under 8 concurrent writers (threads started by one barrier), on moto S3 and
local disk: no entry lost, numbers contiguous, and each file's entries chain its versions
(``version_before`` of one is ``version_after`` of the one before) in trail order.

Two races: 8 workspaces of one process (the process's trail: its next number known), and
8 trails over one store with their own next numbers, as 8 processes hold them (every
append races on the store's create-only condition; a lost one reads the winner and tries
the next number). And real processes on local disk, each its own workspace.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import AuditTrail, ErrorCode, Version, Workspace
from fsseam.audit import FOLDER
from fsseam.backends.base import Backend
from fsseam.backends.registry import open_backend

WRITERS = 8
ROUNDS = 3


@pytest.fixture(params=["local", "s3"])
def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Workspace]:
    if request.param == "local":
        root = tmp_path / "root"
        root.mkdir()
        return lambda: Workspace(str(root), audit=True, load_entry_points=False,
                                 observations=str(tmp_path / "seen.json"))
    moto = request.getfixturevalue("moto_s3")
    bucket = moto.create_bucket()
    url, options = f"s3://{bucket}/r", moto.storage_options()
    return lambda: Workspace(url, storage_options=options, audit=True,
                             load_entry_points=False, content_index=False)


def together(work: Callable[[int], None]) -> None:
    """``work(i)`` for each writer, in threads released at once; re-raises a failure."""
    start = threading.Barrier(WRITERS)
    failures: list[BaseException] = []

    def run(i: int) -> None:
        try:
            start.wait()
            work(i)
        except BaseException as e:  # reported below, in the test's thread
            failures.append(e)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures


def test_eight_workspaces_lose_no_entry(opener: Callable[[], Workspace]) -> None:
    first = opener()
    assert first.context("setup").tools.execute(
        "write", {"file_path": "/shared.txt", "content": ""}, call_id="seed").ok
    landed: list[str] = []

    def work(i: int) -> None:
        ctx = opener().context(f"w{i}")
        for r in range(ROUNDS):
            res = ctx.tools.execute("write", {"file_path": f"/own/{i}.txt",
                                              "content": f"{i} {r}\n"}, call_id=f"o{i}.{r}")
            assert res.ok, res.text
            if r == 0:
                ctx.tools.execute("read", {"file_path": f"/own/{i}.txt"})
            landed.append(f"o{i}.{r}")
        while True:  # one line each in the shared file: refused while stale, read again
            ctx.tools.execute("read", {"file_path": "/shared.txt"})
            current = first.backend.read("shared.txt").data.decode()
            res = ctx.tools.execute("write", {"file_path": "/shared.txt",
                                              "content": current + f"{i}\n"},
                                    call_id=f"s{i}")
            if res.ok:
                landed.append(f"s{i}")
                return
            assert res.error is not None
            assert res.error.code in (ErrorCode.FS_STALE, ErrorCode.FS_NOT_OBSERVED), res.text

    together(work)
    assert first.audit is not None
    trail = first.audit.entries()
    assert [e.seq for e in trail] == list(range(len(trail)))
    assert sorted(e.call_id for e in trail if e.call_id != "seed") == sorted(landed)
    assert len(trail) == 1 + WRITERS * (ROUNDS + 1)
    by_file: dict[str, list[Any]] = {}
    for e in trail:
        by_file.setdefault(e.path, []).append(e)
    for path, chain in by_file.items():
        for before, after in itertools.pairwise(chain):
            assert after.version_before == before.version_after, path
        last = Version.model_validate(chain[-1].version_after)
        assert last == first.backend.read(path.lstrip("/")).version
    lines = first.backend.read("shared.txt").data.decode().split()
    assert sorted(lines) == [str(i) for i in range(WRITERS)]
    assert first.audit.verify(first.backend).ok


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[], Backend]:
    if request.param == "local":
        root = tmp_path / "trail"
        root.mkdir()
        return lambda: open_backend(str(root))
    moto = request.getfixturevalue("moto_s3")
    bucket = moto.create_bucket()
    return lambda: open_backend(f"s3://{bucket}/t", moto.storage_options())


def test_eight_trails_race_on_the_store_s_create_only(store: Callable[[], Backend]) -> None:
    """Each writer its own trail object (its own next number, as a process has): every
    append races; the store's create-only decides, the loser reads the winner."""
    trails = [AuditTrail(store(), FOLDER) for _ in range(WRITERS)]

    def work(i: int) -> None:
        for r in range(ROUNDS):
            trails[i].append({"owner": f"w{i}", "call_id": f"{i}.{r}", "tool": "write",
                              "path": f"/{i}.txt", "branch": None, "action": "write",
                              "precondition": "overwrite", "version_before": None,
                              "version_after": None, "sha256": None})

    together(work)
    got = AuditTrail(store(), FOLDER)
    entries = got.entries()
    assert [e.seq for e in entries] == list(range(WRITERS * ROUNDS))
    assert sorted(e.call_id or "" for e in entries) == sorted(
        f"{i}.{r}" for i in range(WRITERS) for r in range(ROUNDS))
    for before, after in itertools.pairwise(entries):
        assert after.prev == before.hash
    report = got.verify()
    assert report.ok, [p.text for p in report.problems]


PROCESSES = 4


def _append_from_a_process(root: str, i: int, start: Any) -> None:
    """One process: its own workspace over ``root`` (so its own next number), started
    with the others."""
    ws = Workspace(root, audit=True, load_entry_points=False, policy=False)
    start.wait()
    for r in range(ROUNDS):
        ws.context(f"p{i}").fs.write(f"/p{i}/{r}.txt", f"{i} {r}\n")


def test_processes_lose_no_entry(tmp_path: Path) -> None:
    """Real processes on local disk: every append races on the exclusive create."""
    import multiprocessing

    root = tmp_path / "root"
    root.mkdir()
    spawn = multiprocessing.get_context("spawn")
    start = spawn.Barrier(PROCESSES)
    procs = [spawn.Process(target=_append_from_a_process, args=(str(root), i, start))
             for i in range(PROCESSES)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0] * PROCESSES
    trail = AuditTrail.of_workspace(str(root))
    made = trail.entries()
    assert [e.seq for e in made] == list(range(PROCESSES * ROUNDS))
    assert sorted(e.path for e in made) == sorted(
        f"/p{i}/{r}.txt" for i in range(PROCESSES) for r in range(ROUNDS))
    assert trail.verify(open_backend(str(root))).ok
