"""Several agents on one storage: the observation policy and the compare-and-swap keep
every update (docs/concepts.md, "The observation policy")."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from fsspec.implementations.memory import MemoryFileSystem

from fsseam import Context, ErrorCode, FsError, Workspace


@dataclass
class Setup:
    """Two agents (a, b) and raw access to the shared storage."""

    a: Context
    b: Context
    make: Callable[[str], Context]  # another agent, alternating between the workspaces
    put: Callable[[str, bytes], None]
    get: Callable[[str], bytes | None]
    delete: Callable[[str], None]


def _memory_raw(fs: MemoryFileSystem, root: str) -> tuple[Any, Any, Any]:
    def path(key: str) -> str:
        return f"{root}/{key}"

    def put(key: str, data: bytes) -> None:
        fs.pipe_file(path(key), data)

    def get(key: str) -> bytes | None:
        return bytes(fs.cat_file(path(key))) if fs.exists(path(key)) else None

    def delete(key: str) -> None:
        fs.rm_file(path(key))

    return put, get, delete


def _local_raw(d: Path) -> tuple[Any, Any, Any]:
    def put(key: str, data: bytes) -> None:
        (d / key).write_bytes(data)

    def get(key: str) -> bytes | None:
        p = d / key
        return p.read_bytes() if p.exists() else None

    def delete(key: str) -> None:
        (d / key).unlink()

    return put, get, delete


SETUPS = ["one-ws-memory", "one-ws-local", "two-ws-memory", "two-ws-local"]


@pytest.fixture(params=SETUPS)
def setup(request: pytest.FixtureRequest, root: Path) -> Setup:
    kind: str = request.param
    if kind.endswith("memory"):
        fs = MemoryFileSystem(global_store=False, skip_instance_cache=True)
        name = f"ma-{uuid.uuid4().hex}"
        url = f"memory://{name}"
        ws1 = Workspace(url, fs=fs, load_entry_points=False)
        ws2 = Workspace(url, fs=fs, load_entry_points=False) if kind.startswith("two") else ws1
        put, get, delete = _memory_raw(fs, ws1.backend.root)
    else:
        ws1 = Workspace(str(root), load_entry_points=False)
        ws2 = Workspace(str(root), load_entry_points=False) if kind.startswith("two") else ws1
        put, get, delete = _local_raw(root)
    counter = [0]

    def make(owner: str) -> Context:
        counter[0] += 1
        return (ws1 if counter[0] % 2 else ws2).context(owner=owner)

    return Setup(ws1.context(owner="a"), ws2.context(owner="b"), make, put, get, delete)


def code_of(call: Callable[[], Any]) -> ErrorCode:
    with pytest.raises(FsError) as info:
        call()
    return info.value.code


def test_two_memory_workspaces_on_one_store_see_each_other() -> None:
    fs = MemoryFileSystem(global_store=False, skip_instance_cache=True)
    w1 = Workspace("memory://shared", fs=fs, load_entry_points=False)
    w2 = Workspace("memory://shared", fs=fs, load_entry_points=False)
    w1.context().fs.write("/x.txt", "from w1\n")
    assert w2.context().fs.read("/x.txt").lines == ["from w1"]
    # and a workspace on another store does not
    w3 = Workspace("memory://shared", {"global_store": False}, load_entry_points=False)
    assert code_of(lambda: w3.context().fs.read("/x.txt")) is ErrorCode.FS_NOT_FOUND


def test_stale_edit_is_refused_and_keeps_the_other_agents_bytes(setup: Setup) -> None:
    a, b = setup.a, setup.b
    setup.put("f.txt", b"one\r\ntwo\r\nthree\r\n")
    calls = (
        ("edit", {"file_path": "/f.txt", "old_string": "one", "new_string": "ONE (a)"}),
        ("write", {"file_path": "/f.txt", "content": "a wins\n"}),
        ("str_replace_editor",
         {"command": "str_replace", "path": "/f.txt", "old_str": "three", "new_str": "3"}),
        ("str_replace_editor",
         {"command": "insert", "path": "/f.txt", "insert_line": 0, "new_str": "zero"}),
    )
    # One agent per call, each having read the file before b changed it.
    agents = [a, *(setup.make(f"a{i}") for i in range(1, len(calls)))]
    for agent in agents:
        agent.fs.read("/f.txt")
    b.fs.read("/f.txt")
    b.fs.replace("/f.txt", "two", "TWO (b)")
    after_b = b"one\r\nTWO (b)\r\nthree\r\n"
    assert setup.get("f.txt") == after_b
    for agent, (name, args) in zip(agents, calls, strict=True):
        res = agent.tools.execute(name, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, (name, res.text)
        assert "\n-two\n+TWO (b)\n" in res.text, (name, res.text)  # what b changed
        assert setup.get("f.txt") == after_b
    # a saw the whole of b's change in its refusal: its edit goes ahead without a re-read,
    # and both changes are kept
    res = a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "one",
                                   "new_string": "ONE (a)"})
    assert res.ok, res.text
    assert setup.get("f.txt") == b"ONE (a)\r\nTWO (b)\r\nthree\r\n"
    # and now b is the stale one
    assert code_of(lambda: b.fs.replace("/f.txt", "three", "3")) is ErrorCode.FS_STALE
    assert setup.get("f.txt") == b"ONE (a)\r\nTWO (b)\r\nthree\r\n"


def test_windowed_read_is_enough_to_edit_and_to_go_stale(setup: Setup) -> None:
    a, b = setup.a, setup.b
    setup.put("f.txt", b"1\n2\n3\n4\n")
    a.fs.read("/f.txt", 3, 1)
    b.fs.read("/f.txt", 4, 1)
    b.fs.replace("/f.txt", "4\n", "four\n")
    assert code_of(lambda: a.fs.replace("/f.txt", "1\n", "one\n")) is ErrorCode.FS_STALE
    assert setup.get("f.txt") == b"1\n2\n3\nfour\n"


def test_own_consecutive_edits_never_go_stale(setup: Setup) -> None:
    a = setup.a
    setup.put("f.txt", b"\xef\xbb\xbfa\r\nb\r\n")
    a.fs.read("/f.txt")
    a.fs.replace("/f.txt", "a", "A")
    a.fs.insert("/f.txt", 2, "c\n")
    a.fs.replace("/f.txt", "b", "B")
    a.fs.write("/f.txt", "x\ny\n")
    a.fs.replace("/f.txt", "y", "Y")
    a.fs.insert("/f.txt", 0, "w\n")
    res = a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "Y", "new_string": "z"})
    assert res.ok, res.text
    assert setup.get("f.txt") == b"\xef\xbb\xbfw\r\nx\r\nz\r\n"


def test_other_agents_identical_rewrite_is_not_a_change(setup: Setup) -> None:
    """Equal versions mean equal content: rewriting the same bytes does not make a stale."""
    a, b = setup.a, setup.b
    setup.put("f.txt", b"same\n")
    a.fs.read("/f.txt")
    b.fs.read("/f.txt")
    b.fs.write("/f.txt", "same\n")
    a.fs.replace("/f.txt", "same", "changed")
    assert setup.get("f.txt") == b"changed\n"


def test_write_without_read_of_existing_file_is_not_observed(setup: Setup) -> None:
    a = setup.a
    setup.put("f.txt", b"precious\n")
    res = a.tools.execute("write", {"file_path": "/f.txt", "content": "clobber\n"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_OBSERVED
    for call in (
        lambda: a.fs.replace("/f.txt", "precious", "x"),
        lambda: a.fs.insert("/f.txt", 0, "x"),
    ):
        assert code_of(call) is ErrorCode.FS_NOT_OBSERVED
    assert code_of(lambda: a.fs.create("/f.txt", "x")) is ErrorCode.FS_ALREADY_EXISTS
    assert setup.get("f.txt") == b"precious\n"
    # another agent's read does not authorize a
    setup.b.fs.read("/f.txt")
    assert code_of(lambda: a.fs.write("/f.txt", "x")) is ErrorCode.FS_NOT_OBSERVED
    assert setup.get("f.txt") == b"precious\n"


def test_write_of_a_new_file_needs_no_read(setup: Setup) -> None:
    a = setup.a
    out = a.fs.write("/new.txt", "fresh\n")
    assert out.created is True
    assert setup.get("new.txt") == b"fresh\n"
    # and a's own write authorizes the next write and edit
    a.fs.write("/new.txt", "fresher\n")
    a.fs.replace("/new.txt", "fresher", "freshest")
    assert setup.get("new.txt") == b"freshest\n"


def test_create_after_missing_by_someone_else_is_stale_not_an_overwrite(setup: Setup) -> None:
    a, b = setup.a, setup.b
    res = a.tools.execute("read", {"file_path": "/n.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
    b.fs.write("/n.txt", "b was first\n")
    res = a.tools.execute("write", {"file_path": "/n.txt", "content": "a\n"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert code_of(lambda: a.fs.replace("/n.txt", "b", "a")) is ErrorCode.FS_STALE
    assert code_of(lambda: a.fs.insert("/n.txt", 0, "a")) is ErrorCode.FS_STALE
    assert code_of(lambda: a.fs.create("/n.txt", "a")) is ErrorCode.FS_ALREADY_EXISTS
    assert setup.get("n.txt") == b"b was first\n"
    a.fs.read("/n.txt")
    a.fs.write("/n.txt", "a after reading\n")
    assert setup.get("n.txt") == b"a after reading\n"


def test_missing_observed_authorizes_a_write(setup: Setup) -> None:
    a = setup.a
    assert code_of(lambda: a.fs.read("/n.txt")) is ErrorCode.FS_NOT_FOUND
    a.fs.write("/n.txt", "mine\n")
    assert setup.get("n.txt") == b"mine\n"


def test_absence_never_authorizes_an_edit(setup: Setup) -> None:
    a = setup.a
    assert code_of(lambda: a.fs.read("/n.txt")) is ErrorCode.FS_NOT_FOUND
    assert code_of(lambda: a.fs.replace("/n.txt", "x", "y")) is ErrorCode.FS_NOT_FOUND
    assert code_of(lambda: a.fs.insert("/n.txt", 0, "y")) is ErrorCode.FS_NOT_FOUND
    assert setup.get("n.txt") is None


def test_external_deletion_after_read(setup: Setup) -> None:
    a = setup.a
    setup.put("f.txt", b"doomed\n")
    a.fs.read("/f.txt")
    setup.delete("f.txt")
    res = a.tools.execute("write", {"file_path": "/f.txt", "content": "resurrect\n"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert setup.get("f.txt") is None  # not silently recreated
    res = a.tools.execute("edit", {"file_path": "/f.txt", "old_string": "doomed",
                                   "new_string": "x"})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND
    assert setup.get("f.txt") is None
    # the edit confirmed absence: a write (or create) now recreates the file
    a.fs.write("/f.txt", "recreated\n")
    assert setup.get("f.txt") == b"recreated\n"


def test_external_deletion_after_read_edit_first(setup: Setup) -> None:
    a = setup.a
    setup.put("f.txt", b"doomed\n")
    a.fs.read("/f.txt")
    setup.delete("f.txt")
    for name, args in (
        ("edit", {"file_path": "/f.txt", "old_string": "doomed", "new_string": "x"}),
        ("str_replace_editor",
         {"command": "insert", "path": "/f.txt", "insert_line": 0, "new_str": "x"}),
    ):
        res = a.tools.execute(name, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND, name
    assert setup.get("f.txt") is None
    res = a.tools.execute("str_replace_editor",
                          {"command": "create", "path": "/f.txt", "file_text": "again\n"})
    assert res.ok, res.text
    assert setup.get("f.txt") == b"again\n"


def test_external_replacement_after_read(setup: Setup) -> None:
    setup.put("f.txt", b"v1\n")
    agents = [setup.a, setup.make("a2"), setup.make("a3")]
    for agent in agents:
        agent.fs.read("/f.txt")
    setup.put("f.txt", b"v2 by a human\n")
    for agent, call in zip(agents, (
        lambda fs: fs.write("/f.txt", "a\n"),
        lambda fs: fs.replace("/f.txt", "v2", "x"),
        lambda fs: fs.insert("/f.txt", 1, "x"),
    ), strict=True):
        assert code_of(lambda: call(agent.fs)) is ErrorCode.FS_STALE  # noqa: B023
    assert setup.get("f.txt") == b"v2 by a human\n"


@pytest.mark.timeout(120)
def test_threads_lose_no_update(setup: Setup) -> None:
    agents = 4
    cycles = 20
    setup.put("log.txt", b"header\n")
    contexts = [setup.make(f"agent-{i}") for i in range(agents)]
    errors: list[BaseException] = []
    stale = [0] * agents
    barrier = threading.Barrier(agents)

    def work(i: int) -> None:
        ctx = contexts[i]
        try:
            barrier.wait()
            for j in range(cycles):
                line = f"agent {i} cycle {j}"
                for _attempt in range(10_000):
                    out = ctx.fs.read("/log.txt")
                    if not out.lines or out.lines[0] != "header":
                        raise AssertionError(
                            f"agent {i}: a read returned {out.lines[:3]!r} "
                            f"(total {out.total}), not the file"
                        )
                    try:
                        if j % 2:
                            ctx.fs.insert("/log.txt", out.total or 0, line + "\n")
                        else:
                            last = out.lines[-1]
                            ctx.fs.replace("/log.txt", last + "\n", f"{last}\n{line}\n")
                        break
                    except FsError as e:
                        if e.code is not ErrorCode.FS_STALE:
                            raise
                        stale[i] += 1
                else:
                    raise AssertionError(f"agent {i} never got its edit in")
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(agents)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    data = setup.get("log.txt")
    assert data is not None
    lines = data.decode().split("\n")
    assert lines[0] == "header" and lines[-1] == ""
    body = lines[1:-1]
    expected = {f"agent {i} cycle {j}" for i in range(agents) for j in range(cycles)}
    assert len(body) == agents * cycles
    assert set(body) == expected
    # each agent's own lines are in its order
    for i in range(agents):
        mine = [ln for ln in body if ln.startswith(f"agent {i} ")]
        assert mine == [f"agent {i} cycle {j}" for j in range(cycles)]


def test_external_deletion_after_a_window_of_a_large_local_file_is_stale(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same as test_external_deletion_after_read, on the path where the write has no cached
    copy of the text (a window of a file larger than ``count_budget_bytes`` whose version
    came from the stat cache, so the read stopped early): the write must still be FS_STALE
    and must not turn into FS_NOT_FOUND (which also records absence, so that a blind retry
    silently recreates the file)."""
    import fsseam.backends.digests as digests_mod
    from fsseam import Limits

    monkeypatch.setattr(digests_mod, "RACY_WINDOW_NS", 0)  # trust the stat cache at once
    (root / "big.txt").write_bytes(b"line\n" * 50)
    ws = Workspace(str(root), limits=Limits(count_budget_bytes=1, read_chunk_bytes=16),
                   load_entry_points=False)
    ws.backend.read("big.txt")  # an earlier load warmed the stat cache
    a = ws.context(owner="a")
    out = a.fs.read("/big.txt", 1, 1)
    assert out.lines == ["line"]
    (root / "big.txt").unlink()
    res = a.tools.execute("write", {"file_path": "/big.txt", "content": "resurrect\n"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert not (root / "big.txt").exists()


def test_interleaved_reads_of_one_memory_file_each_see_the_whole_file() -> None:
    """Two open reads of one file in one memory store must not share a file position.
    (fsspec's MemoryFileSystem hands every "rb" open the same BytesIO and seeks it to 0.)"""
    ws = Workspace(f"memory://il-{uuid.uuid4().hex}", load_entry_points=False)
    data = b"".join(b"line %03d\n" % i for i in range(40))
    ws.context().fs.write("/f.txt", data.decode())
    s1 = ws.backend.open_read("f.txt", 16)
    it1 = s1.chunks()
    got1 = [next(it1), next(it1)]
    s2 = ws.backend.open_read("f.txt", 16)
    got2 = list(s2.chunks())
    got1 += list(it1)
    s1.close()
    s2.close()
    assert b"".join(got2) == data
    assert b"".join(got1) == data
    assert s1.version == s2.version


@pytest.mark.timeout(120)
def test_concurrent_reads_of_one_memory_file_return_the_file() -> None:
    from fsseam import Limits

    ws = Workspace(f"memory://cr-{uuid.uuid4().hex}", limits=Limits(read_chunk_bytes=8),
                   load_entry_points=False)
    lines = [f"line {i:03d}" for i in range(200)]
    ws.context().fs.write("/f.txt", "\n".join(lines) + "\n")
    bad: list[str] = []
    barrier = threading.Barrier(4)

    def work(i: int) -> None:
        ctx = ws.context(owner=f"r{i}")
        barrier.wait()
        for _ in range(30):
            out = ctx.fs.read("/f.txt")
            if out.lines != lines:
                bad.append(f"reader {i}: {out.total} lines, starting {out.lines[:2]!r}")

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert bad == []
