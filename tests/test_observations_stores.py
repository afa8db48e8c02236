"""Observation stores at a URL: a ledger file and shard objects in any store (here memory
and local disk), their merge, bounds, failures, reserved keys and the shared default."""

from __future__ import annotations

import json
import threading
import uuid
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import Workspace
from fsseam.backends.base import Backend
from fsseam.cli import main
from fsseam.errors import Conflict, ErrorCode, FsError
from fsseam.messages import Reason
from fsseam.observations import (
    FileObservations,
    Ledger,
    MemoryObservations,
    ObservationEntry,
    ShardedObservations,
    open_observations,
)
from fsseam.versions import Version


def fresh(name: str) -> str:
    return f"memory://{name}-{uuid.uuid4().hex[:8]}"


def ok(res: Any) -> Any:
    assert res.ok, res.text
    return res


def code(res: Any) -> ErrorCode:
    assert not res.ok and res.error is not None, res.text
    return res.error.code  # type: ignore[no-any-return]


def edit(ctx: Any, old: str, new: str, path: str = "/a.txt") -> Any:
    return ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new})


def mem_bytes(url: str, key: str) -> bytes:
    return fsspec.filesystem("memory").cat_file(f"{url.removeprefix('memory://')}/{key}")


# -- the ledger file ------------------------------------------------------------------------


def test_a_ledger_file_keeps_reads_across_workspaces_and_the_old_format_reads(
        tmp_path: Path) -> None:
    url, ledger = fresh("file"), tmp_path / "obs.json"
    seed = Workspace(url, policy=False).context()
    ok(seed.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    ok(Workspace(url, observations=str(ledger)).context().tools.execute(
        "read", {"file_path": "/a.txt"}))
    stored = Ledger.model_validate_json(ledger.read_text())  # the CLI's format, as before
    assert list(stored.owners["agent"]) == ["a.txt"]
    ok(edit(Workspace(url, observations=f"file://{ledger}").context(), "one", "two"))
    assert mem_bytes(url, "a.txt") == b"two\n"
    # A change made meanwhile by someone else: refused, the file unchanged.
    ok(seed.tools.execute("write", {"file_path": "/a.txt", "content": "three\n"}))
    assert code(edit(Workspace(url, observations=str(ledger)).context(), "three", "x")) \
        is ErrorCode.FS_STALE
    assert mem_bytes(url, "a.txt") == b"three\n"


@pytest.mark.parametrize("content", [b"{not json", b"[]", b'{"owners": {}}',
                                     b'{"format": 99}', b'{"format": 1, "owners": {"a": 3}}'])
def test_a_ledger_that_is_not_one_is_refused_and_left_alone(tmp_path: Path,
                                                             content: bytes) -> None:
    ledger = tmp_path / "obs.json"
    ledger.write_bytes(content)
    with pytest.raises(FsError) as err:
        open_observations(str(ledger), workspace_url="memory://x")
    assert err.value.code is ErrorCode.FS_BACKEND
    assert err.value.reason == Reason.observations_corrupt
    assert str(ledger) in err.value.message
    assert ledger.read_bytes() == content


def test_two_processes_updating_one_ledger_file_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "obs.json"
    a, b = FileObservations(path), FileObservations(path)
    v = Version(kind="sha256", value="1")
    a.put("agent", {"x": ObservationEntry(version=v, at=1.0)})
    b.put("agent", {"y": ObservationEntry(version=v, at=2.0)})  # b had read the file before a wrote
    again = FileObservations(path)
    assert again.get("agent", "x") is not None and again.get("agent", "y") is not None
    assert a.get("agent", "y", fresh=True) is not None


def test_the_cli_takes_observations_at_any_url(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "n.md").write_text("old\n")
    obs = str(tmp_path / "obs")
    argv = ["call", str(tmp_path / "root")]
    assert main([*argv, "read", '{"file_path": "/n.md"}', "--observations", obs]) == 0
    assert main([*argv, "write", '{"file_path": "/n.md", "content": "new\\n"}',
                 "--observations", obs]) == 0
    assert (tmp_path / "root" / "n.md").read_text() == "new\n"
    assert main([*argv, "write", '{"file_path": "/n.md", "content": "lost\\n"}',
                 "--observations", obs, "--owner", "other"]) == 1
    assert "FS_NOT_OBSERVED" in capsys.readouterr().out
    assert (tmp_path / "root" / "n.md").read_text() == "new\n"


# -- shard objects in a store ---------------------------------------------------------------


def test_shards_keep_reads_for_a_new_workspace_and_owners_and_scopes_apart() -> None:
    url, other, obs = fresh("ws"), fresh("ws2"), fresh("obs")
    ok(Workspace(url, observations=obs).context().tools.execute(
        "write", {"file_path": "/a.txt", "content": "one\n"}))
    ok(Workspace(other, observations=obs, policy=False).context().tools.execute(
        "write", {"file_path": "/a.txt", "content": "one\n"}))
    assert code(edit(Workspace(url, observations=obs).context("b"), "one", "x")) \
        is ErrorCode.FS_NOT_OBSERVED
    assert code(edit(Workspace(other, observations=obs).context(), "one", "x")) \
        is ErrorCode.FS_NOT_OBSERVED  # same owner and key, another workspace
    ok(edit(Workspace(url, observations=obs).context(), "one", "two"))
    objects = fsspec.filesystem("memory").find(obs.removeprefix("memory://"))
    assert len(objects) == 1 and objects[0].endswith(".json")
    body = json.loads(fsspec.filesystem("memory").cat_file(objects[0]))
    assert body["format"] == "fsseam-observations/1" and body["owner"] == "agent"
    assert list(body["entries"]) == ["a.txt"]


def test_two_workers_updating_one_shard_merge_and_lose_nothing() -> None:
    url, obs = fresh("ws"), fresh("obs")
    one = open_observations(obs, workspace_url=url, shards=1)
    two = open_observations(obs, workspace_url=url, shards=1)
    assert isinstance(one, ShardedObservations) and isinstance(two, ShardedObservations)
    v = Version(kind="sha256", value="1")
    assert one.get("agent", "x") is None and two.get("agent", "y") is None  # both cached
    start = threading.Barrier(2)

    def put(store: ShardedObservations, key: str) -> None:
        start.wait()
        store.put("agent", {key: ObservationEntry(version=v, at=1.0)})

    threads = [threading.Thread(target=put, args=(s, k)) for s, k in ((one, "x"), (two, "y"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert set(open_observations(obs, workspace_url=url, shards=1)
               .entries("agent")) == {"x", "y"}  # type: ignore[attr-defined]
    # The same key from two workers: the later recording wins, whoever writes last.
    one.put("agent", {"x": ObservationEntry(version=Version(kind="sha256", value="2"), at=5.0)})
    two.put("agent", {"x": ObservationEntry(version=Version(kind="sha256", value="3"), at=4.0)})
    won = one.get("agent", "x", fresh=True)
    assert won is not None and won.version == Version(kind="sha256", value="2")


def test_shards_are_bounded_and_expired_entries_read_as_not_read() -> None:
    url, obs = fresh("ws"), fresh("obs")
    ws = Workspace(url, observations=open_observations(
        obs, workspace_url=url, shards=1, max_per_shard=2))
    ctx = ws.context()
    for name in ("a", "b", "c"):
        ok(ctx.tools.execute("write", {"file_path": f"/{name}.txt", "content": "one\n"}))
    assert code(edit(ctx, "one", "two", "/a.txt")) is ErrorCode.FS_NOT_OBSERVED
    ok(edit(ctx, "one", "two", "/c.txt"))
    aged = open_observations(obs, workspace_url=url, shards=1, max_age=0.0)
    assert aged.get("agent", "c.txt") is None


class Flaky:
    """A backend whose reads or writes fail on demand (a store gone away)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.fail_reads = self.fail_writes = self.lose_races = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def read(self, key: str) -> Any:
        if self.fail_reads:
            raise FsError(ErrorCode.FS_BACKEND, reason="store_rejected", details={
                "store": "flaky", "action": "read", "path": key, "detail": "down"})
        return self.inner.read(key)

    def write(self, key: str, data: bytes, precondition: Any, **kw: Any) -> Any:
        if self.lose_races:
            raise Conflict("mismatch")
        if self.fail_writes:
            raise FsError(ErrorCode.FS_BACKEND, reason="store_rejected", details={
                "store": "flaky", "action": "write", "path": key, "detail": "down"})
        return self.inner.write(key, data, precondition)

    def get_plain(self, key: str) -> Any:
        # The shards are read by this backend's read, so that its failures reach them.
        return Backend.get_plain(self, key)  # type: ignore[arg-type]

    def put_plain(self, key: str, data: bytes, precondition: Any) -> Any:
        return self.write(key, data, precondition)


def flaky_workspace() -> tuple[str, Flaky, Any, Any]:
    url, obs = fresh("ws"), fresh("obs")
    store = open_observations(obs, workspace_url=url)
    assert isinstance(store, ShardedObservations)
    flaky = Flaky(store.backend)
    store.backend = flaky  # type: ignore[assignment]
    ctx = Workspace(url, observations=store).context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    return url, flaky, store, ctx


def test_an_unreachable_store_refuses_the_write_and_changes_nothing() -> None:
    url, flaky, _, _ = flaky_workspace()
    flaky.fail_reads = True
    cold = Workspace(url, observations=open_observations(
        (f"memory://{flaky.inner.root.strip('/')}", {}), workspace_url=url))
    cold.policy.store.backend = flaky  # type: ignore[union-attr]
    res = edit(cold.context(), "one", "two")
    assert code(res) is ErrorCode.FS_BACKEND
    assert "could not be reached or written" in res.text and "nothing was changed" in res.text
    assert mem_bytes(url, "a.txt") == b"one\n"


def test_a_write_whose_observation_cannot_be_saved_says_the_file_changed() -> None:
    url, flaky, _, ctx = flaky_workspace()
    flaky.fail_writes = True
    res = edit(ctx, "one", "two")
    assert code(res) is ErrorCode.FS_BACKEND
    assert "/a.txt was changed" in res.text and "Read /a.txt again" in res.text
    assert mem_bytes(url, "a.txt") == b"two\n"
    flaky.fail_writes = False
    flaky.lose_races = True
    res = ctx.tools.execute("read", {"file_path": "/a.txt"})
    assert code(res) is ErrorCode.FS_BACKEND and "kept changing" in res.text


@pytest.mark.parametrize("body", [
    b"{oops", b'{"format": "fsseam-observations/9", "scope": "", "owner": "", "shard": 0}',
    "foreign",
])
def test_a_corrupt_or_foreign_shard_is_refused_not_reset(body: Any) -> None:
    url, obs = fresh("ws"), fresh("obs")
    store = open_observations(obs, workspace_url=url, shards=1)
    assert isinstance(store, ShardedObservations)
    ok(Workspace(url, observations=store).context().tools.execute(
        "write", {"file_path": "/a.txt", "content": "one\n"}))
    key = store.object_key("agent", 0)
    if body == "foreign":
        body = mem_bytes(obs, key).replace(b'"owner":"agent"', b'"owner":"someone"')
    fsspec.filesystem("memory").pipe_file(f"{obs.removeprefix('memory://')}/{key}", body)
    again = open_observations(obs, workspace_url=url, shards=1)
    res = edit(Workspace(url, observations=again).context(), "one", "two")
    assert code(res) is ErrorCode.FS_BACKEND
    assert "is not one this fsseam can use" in res.text and key in res.text
    assert mem_bytes(obs, key) == body and mem_bytes(url, "a.txt") == b"one\n"


# -- reserved keys inside the root ----------------------------------------------------------


def test_observations_inside_the_root_are_hidden_and_refused_by_every_tool() -> None:
    url = fresh("ws")
    ws = Workspace(url, observations=f"{url}/.fsseam-observations/")
    ctx = ws.context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    found = fsspec.filesystem("memory").find(url.removeprefix("memory://"))
    shard = next(k for k in found if "/.fsseam-observations/" in k)
    shard_path = shard[shard.index("/.fsseam-observations/"):]
    before = {k: fsspec.filesystem("memory").cat_file(k) for k in found}
    assert ".fsseam" not in ok(ctx.tools.execute("ls", {"path": "/"})).text
    assert ".fsseam" not in ok(ctx.tools.execute("glob", {"pattern": "**/*"})).text
    assert ".fsseam" not in ctx.tools.execute("grep", {"pattern": "agent"}).text
    denied = [
        ("read", {"file_path": shard_path}),
        ("write", {"file_path": shard_path, "content": "{}"}),
        ("write", {"file_path": "/.fsseam-observations/new.json", "content": "{}"}),
        ("edit", {"file_path": shard_path, "old_string": "agent", "new_string": "x"}),
        ("str_replace_editor", {"command": "view", "path": shard_path}),
        ("delete", {"file_path": shard_path}),
        ("move", {"source_path": shard_path, "destination_path": "/b.json"}),
        ("move", {"source_path": "/a.txt", "destination_path": "/.fsseam-observations/a"}),
        ("apply_patch", {"patch": f"*** Begin Patch\n*** Delete File: {shard_path[1:]}\n"
                                  "*** End Patch\n"}),
        ("apply_patch", {"patch": "*** Begin Patch\n*** Add File: .fsseam-observations/x\n"
                                  "+x\n*** End Patch\n"}),
    ]
    for tool, args in denied:
        if tool == "move" and args["source_path"] == "/a.txt":
            ok(ctx.tools.execute("read", {"file_path": "/a.txt"}))
        res = ctx.tools.execute(tool, args)
        assert code(res) is ErrorCode.FS_PERMISSION_DENIED, (tool, args, res.text)
    assert {k: fsspec.filesystem("memory").cat_file(k)
            for k in fsspec.filesystem("memory").find(url.removeprefix("memory://"))} == before


def test_a_ledger_file_inside_the_root_hides_its_lock_and_temp_files_too(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path), observations=str(tmp_path / "obs.json"))
    ctx = ws.context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    (tmp_path / ".obs.json.x1.tmp").write_bytes(b"{}")  # a temp file a crash left behind
    assert {p.name for p in tmp_path.iterdir()} >= {"obs.json", "obs.json.lock"}
    assert ok(ctx.tools.execute("ls", {"path": "/"})).text.count("obs.json") == 0
    for name in ("/obs.json", "/obs.json.lock", "/.obs.json.x1.tmp"):
        before = (tmp_path / name[1:]).read_bytes()
        assert code(ctx.tools.execute("read", {"file_path": name})) is \
            ErrorCode.FS_PERMISSION_DENIED, name
        assert code(ctx.tools.execute("write", {"file_path": name, "content": "x"})) is \
            ErrorCode.FS_PERMISSION_DENIED, name
        assert (tmp_path / name[1:]).read_bytes() == before
    # Names that only begin like the ledger's are files like any other.
    ok(ctx.tools.execute("write", {"file_path": "/obs.json.bak", "content": "b\n"}))


# -- the shared in-process default ----------------------------------------------------------


def test_a_new_workspace_on_one_url_keeps_the_reads_unless_given_a_ledger() -> None:
    url = fresh("nb")
    ok(Workspace(url).context().tools.execute(
        "write", {"file_path": "/a.txt", "content": "one\n"}))
    ok(edit(Workspace(url).context(), "one", "two"))  # the cell run again
    assert code(edit(Workspace(url, ledger=Ledger()).context(), "two", "x")) \
        is ErrorCode.FS_NOT_OBSERVED
    private = Workspace(url, storage_options={"global_store": False})
    assert isinstance(private.policy.store, MemoryObservations)  # type: ignore[union-attr]
    assert private.policy.store is not Workspace(url).policy.store  # type: ignore[union-attr]


def test_stores_at_a_url_are_sent_to_another_process_as_what_they_open(
        tmp_path: Path) -> None:
    import pickle

    url = fresh("ws")
    for spec in (str(tmp_path / "obs.json"), fresh("obs")):
        store = open_observations(spec, workspace_url=url)
        store.put("agent", {"k": ObservationEntry(at=1.0)})
        again = pickle.loads(pickle.dumps(store))
        assert type(again) is type(store) and again is not store
        kept = again.get("agent", "k")
        assert kept is not None and kept.seen and kept.version is None


def test_a_mounted_workspace_keeps_observations_at_a_url() -> None:
    mounts, obs = {"/": fresh("m1"), "/data": fresh("m2")}, fresh("obs")
    ok(Workspace.mount(mounts, observations=obs).context().tools.execute(
        "write", {"file_path": "/data/a.txt", "content": "one\n"}))
    again = Workspace.mount(mounts, observations=obs).context()
    ok(edit(again, "one", "two", "/data/a.txt"))
    assert code(edit(Workspace.mount(mounts).context("b"), "two", "x", "/data/a.txt")) \
        is ErrorCode.FS_NOT_OBSERVED


def test_the_in_process_store_drops_its_oldest_tenth_at_the_bound() -> None:
    ledger = Ledger()
    store = MemoryObservations(ledger, max_entries=20)
    for i in range(20):
        version = Version(kind="sha256", value=str(i))
        store.put("a", {f"f{i}": ObservationEntry(version=version, at=i)})
    assert len(store.entries("a")) == 20
    store.put("a", {"new": ObservationEntry(version=None, at=100)})
    kept = store.entries("a")
    assert sorted(kept) == sorted(["new", *(f"f{i}" for i in range(3, 20))])
    assert set(ledger.owners["a"]) == set(kept)  # the mirrored ledger forgets them too
    ws = Workspace(fresh("bound"), observations=store)
    ok(ws.context("b").tools.execute("write", {"file_path": "/f0", "content": "x\n"}))
    res = ws.context("a").tools.execute("edit", {"file_path": "/f0", "old_string": "x",
                                                 "new_string": "y"})
    assert code(res) is ErrorCode.FS_NOT_OBSERVED  # expired reads as not read yet
