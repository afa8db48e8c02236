"""Observation stores where features meet: one failure rule for every change, a damaged
ledger, the stores' own objects out of the agent's reach, and entries dated ahead."""

from __future__ import annotations

import os
import socket
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import Workspace
from fsseam.backends.registry import open_backend
from fsseam.cli import main
from fsseam.errors import ErrorCode, FsError
from fsseam.events import DeleteIntent, EditIntent, WriteIntent
from fsseam.gate import hookimpl
from fsseam.observations import (
    MemoryObservations,
    ObservationEntry,
    ShardedObservations,
    open_observations,
)
from fsseam.versions import Version


def ok(res: Any) -> Any:
    assert res.ok, res.text
    return res


def code(res: Any) -> ErrorCode:
    assert not res.ok and res.error is not None, res.text
    return res.error.code  # type: ignore[no-any-return]


UNREACHABLE = "could not be reached or written"
NOT_SAVED = "was changed, but the observation store at"


# -- one rule for every change when the store cannot be reached ------------------------------

NEW_FILE_CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("write", "w.txt", {"file_path": "/w.txt", "content": "x\n"}),
    ("apply_patch", "p.txt",
     {"patch": "*** Begin Patch\n*** Add File: p.txt\n+x\n*** End Patch\n"}),
    ("str_replace_editor", "e.txt", {"command": "create", "path": "/e.txt", "file_text": "x\n"}),
    ("memory", "memories/m.txt",
     {"command": "create", "path": "/memories/m.txt", "file_text": "x\n"}),
]


@pytest.mark.parametrize(("tool", "key", "args"), NEW_FILE_CALLS,
                         ids=[c[0] for c in NEW_FILE_CALLS])
def test_every_new_file_is_refused_alike_when_the_observation_bucket_is_missing(
        moto_s3: Any, tool: str, key: str, args: dict[str, Any]) -> None:
    bucket = moto_s3.create_bucket()
    missing = f"fsseam-gone-{uuid.uuid4().hex[:12]}"
    ws = Workspace(f"s3://{bucket}/r", storage_options=moto_s3.storage_options(),
                   observations=f"s3://{missing}/obs/")
    res = ws.context().tools.execute(tool, args)
    assert code(res) is ErrorCode.FS_BACKEND
    assert UNREACHABLE in res.text and "nothing was changed" in res.text
    listed = moto_s3.client().list_objects_v2(Bucket=bucket)
    assert listed.get("Contents", []) == [], (tool, key)


def stopped_endpoint(moto: Any) -> dict[str, Any]:
    """Options of an S3 endpoint where no server answers (a stopped one), asked once."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return {**moto.storage_options(), "endpoint_url": f"http://127.0.0.1:{port}",
            "config_kwargs": {"retries": {"max_attempts": 1}, "connect_timeout": 2}}


@pytest.mark.parametrize(("tool", "key", "args"), NEW_FILE_CALLS,
                         ids=[c[0] for c in NEW_FILE_CALLS])
def test_every_new_file_is_refused_alike_when_the_observation_server_is_stopped(
        moto_s3: Any, tool: str, key: str, args: dict[str, Any]) -> None:
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/r", storage_options=moto_s3.storage_options(),
                   observations=(f"s3://{bucket}/obs/", stopped_endpoint(moto_s3)))
    res = ws.context().tools.execute(tool, args)
    assert code(res) is ErrorCode.FS_BACKEND
    assert UNREACHABLE in res.text and "nothing was changed" in res.text
    listed = moto_s3.client().list_objects_v2(Bucket=bucket)
    assert listed.get("Contents", []) == [], (tool, key)


class Failing(MemoryObservations):
    """A real in-process store that stops answering when told (a store gone away)."""

    def __init__(self) -> None:
        super().__init__()
        self.down = False

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        if self.down:
            raise FsError(ErrorCode.FS_BACKEND, reason="observations_unreachable",
                          details={"store": "failing", "detail": "down"})
        return super().get(owner, key, fresh=fresh)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        if self.down:
            raise FsError(ErrorCode.FS_BACKEND, reason="observations_unreachable",
                          details={"store": "failing", "detail": "down"})
        super().put(owner, entries)


class DownAfterTheCheck:
    """Takes the store down once the policy has checked a change (its hooks run first),
    so the change lands and only its recording meets the failure."""

    def __init__(self, store: Failing) -> None:
        self.store = store

    @hookimpl
    def fs_write_intent(self, event: WriteIntent) -> None:
        self.store.down = True

    @hookimpl
    def fs_delete_intent(self, event: DeleteIntent) -> None:
        self.store.down = True


def test_a_change_that_landed_but_could_not_be_recorded_says_it_changed() -> None:
    url = f"memory://obs-landed-{uuid.uuid4().hex[:8]}"
    store = Failing()
    ws = Workspace(url, observations=store, plugins=[DownAfterTheCheck(store)])
    ctx = ws.context()
    res = ctx.tools.execute("str_replace_editor",
                            {"command": "create", "path": "/e.txt", "file_text": "x\n"})
    assert code(res) is ErrorCode.FS_BACKEND
    assert f"/e.txt {NOT_SAVED}" in res.text and "nothing was changed" not in res.text
    mem = fsspec.filesystem("memory")
    assert mem.cat_file(f"{url.removeprefix('memory://')}/e.txt") == b"x\n"
    store.down = False
    ok(ctx.tools.execute("read", {"file_path": "/e.txt"}))
    res = ctx.tools.execute("delete", {"file_path": "/e.txt"})
    # Deleted, and answered so (it used to answer "nothing was changed").
    assert code(res) is ErrorCode.FS_BACKEND
    assert f"/e.txt {NOT_SAVED}" in res.text and "nothing was changed" not in res.text
    store.down = False
    assert not mem.exists(f"{url.removeprefix('memory://')}/e.txt")


class Overflowing(MemoryObservations):
    """A real in-process store whose saving overflows the interpreter's depth when told
    (what a store reading a deeply nested file of its own does)."""

    armed = False

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        if self.armed:
            raise RecursionError("maximum recursion depth exceeded")
        super().put(owner, entries)


def test_a_store_that_fails_its_own_way_after_an_edit_landed_still_says_it_changed() -> None:
    url = f"memory://obs-overflow-{uuid.uuid4().hex[:8]}"
    store = Overflowing()
    ctx = Workspace(url, observations=store).context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    store.armed = True
    res = ctx.tools.execute("edit", {"file_path": "/a.txt", "old_string": "one",
                                     "new_string": "two"})
    assert code(res) is ErrorCode.FS_BACKEND
    assert f"/a.txt {NOT_SAVED}" in res.text and "RecursionError" in res.text
    assert "nested too deeply" not in res.text
    mem = fsspec.filesystem("memory")
    assert mem.cat_file(f"{url.removeprefix('memory://')}/a.txt") == b"two\n"


# -- a damaged ledger file --------------------------------------------------------------------

DEEP = b"[" * 100_000 + b"]" * 100_000


def test_the_cli_refuses_a_deeply_nested_ledger_with_a_clear_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "a.txt").write_bytes(b"one\n")
    ledger = tmp_path / "obs.json"
    ledger.write_bytes(DEEP)
    argv = ["call", str(tmp_path / "root"), "write",
            '{"file_path": "/b.txt", "content": "x\\n"}', "--ledger", str(ledger)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{ledger} is not one this fsseam can use (it is nested too deeply to read)" in err
    assert "Ask the user to repair or remove it" in err
    assert ledger.read_bytes() == DEEP
    assert sorted(p.name for p in (tmp_path / "root").iterdir()) == ["a.txt"]


def replace_atomically(path: Path, data: bytes) -> None:
    """What another process's write of the ledger looks like (a new file renamed over)."""
    tmp = path.with_name(path.name + ".other")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def test_a_ledger_damaged_under_an_open_workspace_refuses_the_edit_before_it_lands(
        tmp_path: Path) -> None:
    root, ledger = tmp_path / "root", tmp_path / "obs.json"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\n")
    ctx = Workspace(str(root), observations=str(ledger)).context()
    ok(ctx.tools.execute("read", {"file_path": "/a.txt"}))
    replace_atomically(ledger, DEEP)
    res = ctx.tools.execute("edit", {"file_path": "/a.txt", "old_string": "one",
                                     "new_string": "two"})
    assert code(res) is ErrorCode.FS_BACKEND
    assert "nested too deeply to read" in res.text and "nothing was changed" in res.text
    assert (root / "a.txt").read_bytes() == b"one\n"
    assert ledger.read_bytes() == DEEP


class DamageAfterTheCheck:
    """Another process damages the ledger once the policy has checked the edit."""

    def __init__(self, ledger: Path) -> None:
        self.ledger = ledger

    @hookimpl
    def fs_edit_intent(self, event: EditIntent) -> None:
        replace_atomically(self.ledger, DEEP)


def test_a_ledger_damaged_while_an_edit_lands_is_answered_as_changed(tmp_path: Path) -> None:
    root, ledger = tmp_path / "root", tmp_path / "obs.json"
    root.mkdir()
    (root / "a.txt").write_bytes(b"one\n")
    ws = Workspace(str(root), observations=str(ledger), plugins=[DamageAfterTheCheck(ledger)])
    ctx = ws.context()
    ok(ctx.tools.execute("read", {"file_path": "/a.txt"}))
    res = ctx.tools.execute("edit", {"file_path": "/a.txt", "old_string": "one",
                                     "new_string": "two"})
    assert code(res) is ErrorCode.FS_BACKEND
    assert f"/a.txt {NOT_SAVED}" in res.text and "nested too deeply to read" in res.text
    assert (root / "a.txt").read_bytes() == b"two\n"
    assert ledger.read_bytes() == DEEP


# -- an entry dated ahead (a worker whose clock runs fast) ------------------------------------


def planted_ahead(kind: str, url: str, version: Version) -> Any:
    """The workspace's store after another worker, its clock an hour ahead, recorded a read
    of ``version`` of a.txt."""
    entry = ObservationEntry(version=version, at=time.time() + 3600)
    if kind == "memory":
        store = MemoryObservations()
        store.put("agent", {"a.txt": entry})
        return store
    obs = f"memory://obs-ahead-{uuid.uuid4().hex[:8]}"
    open_observations(obs, workspace_url=url).put("agent", {"a.txt": entry})
    return open_observations(obs, workspace_url=url)  # a worker with nothing cached


@pytest.mark.parametrize("kind", ["memory", "shards"])
def test_an_entry_dated_ahead_never_outlives_the_owners_next_read(kind: str) -> None:
    url = f"memory://ahead-{uuid.uuid4().hex[:8]}"
    plain = Workspace(url, policy=False)
    ok(plain.context().tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    old = plain.backend.read("a.txt").version
    ok(plain.context().tools.execute("write", {"file_path": "/a.txt", "content": "two\n"}))
    ctx = Workspace(url, observations=planted_ahead(kind, url, old)).context()
    ok(ctx.tools.execute("read", {"file_path": "/a.txt"}))
    ok(ctx.tools.execute("edit", {"file_path": "/a.txt", "old_string": "two",
                                  "new_string": "three"}))
    ok(ctx.tools.execute("edit", {"file_path": "/a.txt", "old_string": "three",
                                  "new_string": "four"}))
    mem = fsspec.filesystem("memory")
    assert mem.cat_file(f"{url.removeprefix('memory://')}/a.txt") == b"four\n"


# -- the store's own objects are out of the agent's reach ------------------------------------


def shard_paths(list_keys: Any, prefix: str) -> list[str]:
    """The agent's paths of the shard objects under ``prefix`` (keys of the root)."""
    return ["/" + k for k in list_keys() if k.startswith(prefix) and k.endswith(".json")]


def assert_unreachable(ctx: Any, shards: list[str], read_all: Any) -> None:
    """Every tool refuses the shards (FS_PERMISSION_DENIED) or hides them, and they keep
    their bytes."""
    assert shards
    before = read_all()
    top = shards[0].split("/")[1]
    assert top not in ok(ctx.tools.execute("ls", {"path": "/"})).text
    assert top not in ok(ctx.tools.execute("glob", {"pattern": "**/*"})).text
    assert ".json" not in ctx.tools.execute("grep", {"pattern": "agent"}).text
    for shard in shards:
        for tool, args in [
            ("read", {"file_path": shard}),
            ("write", {"file_path": shard, "content": "{}"}),
            ("history", {"file_path": shard}),
            ("restore", {"file_path": shard, "version": "0"}),
            ("str_replace_editor", {"command": "view", "path": shard}),
            ("delete", {"file_path": shard}),
        ]:
            res = ctx.tools.execute(tool, args)
            assert code(res) is ErrorCode.FS_PERMISSION_DENIED, (tool, shard, res.text)
            assert "where fsseam keeps what agents have read" in res.text
    assert read_all() == before


def memory_tree(url: str) -> tuple[Any, Any]:
    mem, base = fsspec.filesystem("memory"), url.removeprefix("memory://")

    def keys() -> list[str]:
        return [k.removeprefix("/").removeprefix(base + "/") for k in mem.find(base)]

    def read_all() -> dict[str, bytes]:
        return {k: mem.cat_file(k) for k in mem.find(base)}

    return keys, read_all


def test_a_store_opened_inside_the_root_is_reserved_however_it_was_made() -> None:
    url = f"memory://res-{uuid.uuid4().hex[:8]}"
    store = open_observations(f"{url}/settings-obs/", workspace_url=url, shards=4)
    ctx = Workspace(url, observations=store).context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    keys, read_all = memory_tree(url)
    assert_unreachable(ctx, shard_paths(keys, "settings-obs/"), read_all)



def test_a_store_built_over_a_backend_inside_the_root_is_reserved() -> None:
    url = f"memory://res-{uuid.uuid4().hex[:8]}"
    built = ShardedObservations(open_backend(f"{url}/built-obs"), scope=url, name="built",
                                shards=4)
    ctx = Workspace(url, observations=built).context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    keys, read_all = memory_tree(url)
    assert_unreachable(ctx, shard_paths(keys, "built-obs/"), read_all)


def test_a_store_given_to_one_context_inside_the_root_is_reserved() -> None:
    url = f"memory://res-{uuid.uuid4().hex[:8]}"
    ws = Workspace(url)
    ctx = ws.context("person", observations=open_observations(f"{url}/own-obs",
                                                              workspace_url=url, shards=2))
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    keys, read_all = memory_tree(url)
    assert_unreachable(ctx, shard_paths(keys, "own-obs/"), read_all)
    assert_unreachable(ws.context("other"), shard_paths(keys, "own-obs/"), read_all)
    with pytest.raises(FsError) as err:
        ws.context("x", observations=open_observations(url, workspace_url=url))
    assert err.value.code is ErrorCode.FS_INVALID_ARGUMENT


def test_a_ledger_object_spelled_another_way_is_reserved(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub").mkdir(parents=True)
    (tmp_path / "link").symlink_to(root)
    store = open_observations(str(tmp_path / "link" / "sub" / ".." / "obs.json"),
                              workspace_url=str(root))
    ctx = Workspace(str(root), observations=store).context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    before = (root / "obs.json").read_bytes()
    for tool, args in [("read", {"file_path": "/obs.json"}),
                       ("write", {"file_path": "/obs.json", "content": "{}"}),
                       ("history", {"file_path": "/obs.json"})]:
        res = ctx.tools.execute(tool, args)
        assert code(res) is ErrorCode.FS_PERMISSION_DENIED, (tool, res.text)
    assert "obs.json" not in ok(ctx.tools.execute("ls", {"path": "/"})).text
    assert (root / "obs.json").read_bytes() == before


@pytest.mark.parametrize("spelling", ["{url}", "{url}/", "{url}//"])
def test_observations_at_the_root_itself_are_refused_when_the_workspace_is_made(
        spelling: str) -> None:
    url = f"memory://res-{uuid.uuid4().hex[:8]}"
    with pytest.raises(FsError) as err:
        Workspace(url, observations=spelling.format(url=url))
    assert err.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "is the workspace root" in err.value.message
    assert ".fsseam-observations/" in err.value.message
    assert fsspec.filesystem("memory").find(url.removeprefix("memory://")) == []


@pytest.mark.parametrize("spelling", ["file://{root}", "{root}/.", "{root}/sub/..",
                                      "local://{root}"])
def test_a_local_root_spelled_another_way_is_refused_and_nothing_is_made(
        root: Path, spelling: str) -> None:
    (root / "a.txt").write_bytes(b"one\n")
    with pytest.raises(FsError) as err:
        Workspace(str(root), observations=spelling.format(root=root))
    assert err.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "is the workspace root" in err.value.message
    assert sorted(os.listdir(root)) == ["a.txt"]


def test_an_s3a_store_on_an_s3_workspace_is_reserved(moto_s3: Any) -> None:
    bucket = moto_s3.create_bucket(versioned=True)
    options = moto_s3.storage_options()
    ws = Workspace(f"s3://{bucket}", storage_options=options,
                   observations=(f"s3a://{bucket}//obs/", options))
    ctx = ws.context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    client = moto_s3.client()

    def keys() -> list[str]:
        return [o["Key"] for o in client.list_objects_v2(Bucket=bucket).get("Contents", [])]

    def read_all() -> dict[str, bytes]:  # the shards (grep keeps its index beside them)
        return {k: client.get_object(Bucket=bucket, Key=k)["Body"].read() for k in keys()
                if k.startswith("obs/")}

    assert_unreachable(ctx, shard_paths(keys, "obs/"), read_all)
    with pytest.raises(FsError) as err:
        Workspace(f"s3://{bucket}/r/", storage_options=options,
                  observations=(f"s3a://{bucket}/r", options))
    assert err.value.code is ErrorCode.FS_INVALID_ARGUMENT


def test_a_gcs_store_on_a_gs_workspace_is_reserved(fake_gcs: Any) -> None:
    endpoint, _ = fake_gcs
    bucket = endpoint.create_bucket()
    options = endpoint.storage_options()
    store = open_observations((f"gcs://{bucket}/ws/obs", options),
                              workspace_url=f"gs://{bucket}/ws", shards=2)
    ctx = Workspace(f"gs://{bucket}/ws/", storage_options=options, observations=store,
                    content_index=False).context()
    ok(ctx.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    admin = endpoint.filesystem()

    def keys() -> list[str]:
        return [k.removeprefix(f"{bucket}/ws/") for k in admin.find(f"{bucket}/ws")]

    def read_all() -> dict[str, bytes]:
        return {k: admin.cat_file(f"{bucket}/ws/{k}") for k in keys() if k.startswith("obs/")}

    assert_unreachable(ctx, shard_paths(keys, "obs/"), read_all)
