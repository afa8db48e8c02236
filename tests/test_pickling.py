"""A Workspace and a Context sent to another process: pickled as their spec, opened there.

In-process round trips cover each kind of workspace (local, memory, mounts, S3 on the moto
server, fsseam's own history); one subprocess unpickles contexts and edits, for the
scenarios that need a process of its own. The refusals say what to do instead.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from fsseam import (
    Context,
    ErrorCode,
    FsError,
    History,
    Limits,
    Workspace,
    hookimpl,
    open_backend,
)
from fsseam.messages import Reason
from fsseam.observations import Ledger, MemoryObservations, ObservationEntry
from fsseam.observations.file import FileObservations
from fsseam.spec import ContextSpec, WorkspaceSpec


def reopen(ws: Workspace, **kw: Any) -> Workspace:
    """The workspace another process would open (a fresh one, not this process's)."""
    spec = pickle.loads(pickle.dumps(ws.spec(**kw)))
    assert isinstance(spec, WorkspaceSpec)
    return Workspace.from_spec(spec, shared=False)


class PicklableStore:
    """A store object that pickles with its entries (it stands in for one every process
    reaches; a plain dict, no lock)."""

    def __init__(self) -> None:
        self.kept: dict[str, dict[str, ObservationEntry]] = {}

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        return self.kept.get(owner, {}).get(key)

    def put(self, owner: str, entries: Any) -> None:
        self.kept.setdefault(owner, {}).update(entries)


class Tagging:
    """A plugin that pickles (its state travels with it)."""

    def __init__(self, tag: str) -> None:
        self.tag = tag


# -- round trips in this process ------------------------------------------------------------


def test_local_keeps_its_arguments(root: Path) -> None:
    limits = Limits(default_read_lines=7, max_edit_bytes=1000)
    ws = Workspace(str(root), limits=limits, history=History(max_versions=3),
                   plugins=[Tagging("t")], load_entry_points=False)
    ctx = ws.context("a")
    ctx.fs.write("/f.txt", "one\n")
    assert ctx.fs.read("/f.txt").lines == ["one"]
    again = reopen(ws, snapshot=True)
    assert again.url == str(root) and again.limits == limits
    assert [p.tag for p in again.gate.pm.get_plugins() if isinstance(p, Tagging)] == ["t"]
    other = again.context("a")
    # The copy of what "a" read lets it edit; the history kept by fsseam lives with it.
    other.fs.replace("/f.txt", "one", "two")
    assert (root / "f.txt").read_bytes() == b"two\n"
    assert other.tools.execute("history", {"file_path": "/f.txt"}).ok
    assert other.tools.execute("edit", {"file_path": "/f.txt", "old_string": "two",
                                        "new_string": "x" * 2000}).error.code == (
        ErrorCode.FS_TOO_LARGE)


def test_memory_snapshot_carries_reads_and_still_refuses_a_changed_file() -> None:
    ws = Workspace("memory://pickling-snapshot")
    ctx = ws.context("a")
    ctx.fs.write("/a.txt", "a\n")
    ctx.fs.write("/b.txt", "b\n")
    again = reopen(ws, snapshot=True)
    outside = Workspace("memory://pickling-snapshot", policy=False).context("outside")
    outside.fs.write("/b.txt", "B\n")
    other = again.context("a")
    other.fs.replace("/a.txt", "a", "A")
    res = other.tools.execute("edit", {"file_path": "/b.txt", "old_string": "B",
                                       "new_string": "x"})
    assert res.error is not None and res.error.code == ErrorCode.FS_STALE
    # A copy is a copy: what the reopened workspace records never reaches this one.
    assert not ws.context("a").tools.execute("edit", {
        "file_path": "/a.txt", "old_string": "A", "new_string": "z"}).ok


def test_mounts_keep_each_mount(root: Path, tmp_path: Path) -> None:
    (root / "r.txt").write_text("r\n")
    ws = Workspace.mount({"/": "memory://pickling-mounts", "/repo": str(root)},
                         read_only=iter(["/repo"]), history={"/": History(max_versions=2)},
                         observations=str(tmp_path / "mounts.json"))
    ws.context("a").fs.write("/before.txt", "b\n")
    again = reopen(ws)
    assert again.spec().mounts == {"/": "memory://pickling-mounts", "/repo": str(root)}
    assert again.spec().read_only == ("/repo",)
    ctx = again.context("a")
    ctx.fs.replace("/before.txt", "b", "B")  # what "a" wrote there, it may edit here
    assert ctx.fs.read("/repo/r.txt").lines == ["r"]
    res = ctx.tools.execute("write", {"file_path": "/repo/r.txt", "content": "x"})
    assert res.error is not None and res.error.code == ErrorCode.FS_READ_ONLY
    ctx.fs.write("/m.txt", "1\n")
    ctx.fs.write("/m.txt", "2\n")
    assert len(ctx.fs.history("/m.txt").entries) >= 2
    assert (root / "r.txt").read_bytes() == b"r\n"


def test_s3_on_the_moto_server_with_observations_in_the_bucket(moto_s3: Any) -> None:
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/p", storage_options=moto_s3.storage_options(),
                   observations=f"s3://{bucket}/.fsseam-observations/")
    ws.context("a").fs.write("/s.txt", "s3\n")
    spec = pickle.loads(pickle.dumps(ws)).spec()
    assert spec == ws.spec() and spec.observations == f"s3://{bucket}/.fsseam-observations/"
    assert WorkspaceSpec.model_validate_json(spec.model_dump_json()) == spec  # JSON queues
    again = Workspace.from_spec(spec, shared=False)
    # What "a" wrote here is in the bucket: the other workspace lets it edit, and only it.
    again.context("a").fs.replace("/s.txt", "s3", "S3")
    res = again.context("b").tools.execute("edit", {"file_path": "/s.txt", "old_string": "S3",
                                                    "new_string": "x"})
    assert res.error is not None and res.error.code == ErrorCode.FS_NOT_OBSERVED
    body = moto_s3.client().get_object(Bucket=bucket, Key="p/s.txt")["Body"].read()
    assert body == b"S3\n"


def test_a_store_object_at_a_url_travels_as_what_it_opens(root: Path, tmp_path: Path) -> None:
    ledger = FileObservations(str(tmp_path / "obs.json"))
    ws = Workspace(str(root), observations=ledger)
    ws.context("a").fs.write("/f.txt", "f\n")
    again = pickle.loads(pickle.dumps(ws.context("a")))
    assert isinstance(again.workspace.policy.store, FileObservations)  # type: ignore[union-attr]
    again.fs.replace("/f.txt", "f", "g")
    assert (root / "f.txt").read_bytes() == b"g\n"


def test_one_process_opens_a_spec_once() -> None:
    spec = Workspace("memory://pickling-once", policy=False).spec()
    assert Workspace.from_spec(spec) is Workspace.from_spec(spec)
    assert Workspace.from_spec(spec, shared=False) is not Workspace.from_spec(spec)


def test_context_pickles_as_spec_owner_and_bound_store() -> None:
    ws = Workspace("memory://pickling-ctx", observations=PicklableStore())
    store = PicklableStore()
    ctx = ws.context("thread-1", observations=store)
    ctx.fs.write("/c.txt", "c\n")
    assert list(store.kept) == ["thread-1"]  # the bound store, not the workspace's
    spec = ctx.spec()
    assert isinstance(spec, ContextSpec) and spec.owner == "thread-1"
    again = pickle.loads(pickle.dumps(ctx))
    assert isinstance(again, Context) and again.owner == "thread-1"
    # The owner's observations came along with its store: the edit is allowed.
    again.fs.replace("/c.txt", "c", "C")


# -- refusals ---------------------------------------------------------------------------


def refusal(make: Any) -> FsError:
    with pytest.raises(FsError) as caught:
        make()
    assert caught.value.code == ErrorCode.FS_INVALID_ARGUMENT
    return caught.value


def test_in_process_observations_are_refused_with_the_fix() -> None:
    ws = Workspace("memory://pickling-refused")
    err = refusal(lambda: pickle.dumps(ws))
    assert err.reason == Reason.ship_in_process_observations
    assert "observations=" in err.message and "snapshot=True" in err.message
    assert refusal(lambda: pickle.dumps(ws.context("a"))).reason == (
        Reason.ship_in_process_observations)
    ledger_ws = Workspace("memory://pickling-refused", ledger=Ledger())
    assert refusal(lambda: ledger_ws.spec()).reason == Reason.ship_in_process_observations
    bound = Workspace("memory://pickling-refused", observations=PicklableStore())
    ctx = bound.context("t", observations=MemoryObservations())
    assert refusal(lambda: pickle.dumps(ctx)).reason == Reason.ship_in_process_observations


def test_a_backend_instance_is_refused() -> None:
    ws = Workspace("memory://x", backend=open_backend("memory://pickling-instance"),
                   policy=False)
    err = refusal(lambda: pickle.dumps(ws))
    assert err.reason == Reason.ship_backend_instance and "MemoryBackend" in err.message
    mounted = Workspace.mount({"/": open_backend("memory://pickling-instance")},
                              policy=False)
    assert refusal(lambda: mounted.spec()).reason == Reason.ship_backend_instance


class Locked:
    def __init__(self) -> None:
        self.lock = threading.Lock()

    @hookimpl
    def fs_read(self, event: Any) -> None:
        return None


def test_an_unpicklable_plugin_is_refused_naming_it() -> None:
    ws = Workspace("memory://pickling-plugin", plugins=[Locked()], policy=False)
    err = refusal(lambda: pickle.dumps(ws))
    assert err.reason == Reason.ship_unpicklable and "plugins" in err.message


# -- another process --------------------------------------------------------------------

CHILD = """
import json, pickle, sys
from fsseam import Context
out = []
for blob in sys.argv[1:]:
    with open(blob, "rb") as f:
        ctx, calls = pickle.load(f)
    if not isinstance(ctx, Context):  # a spec (a copy of the observations)
        ctx = Context.from_spec(ctx)
    for tool, args in calls:
        res = ctx.tools.execute(tool, args)
        out.append([ctx.owner, tool, res.ok, None if res.error is None else str(res.error.code)])
print(json.dumps(out))
"""


def run_child(*blobs: Path) -> list[list[Any]]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run([sys.executable, "-c", CHILD, *map(str, blobs)],
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    out: list[list[Any]] = json.loads(done.stdout)
    return out


def test_a_new_process_unpickles_and_edits(root: Path, tmp_path: Path) -> None:
    edit = {"old_string": "old", "new_string": "new"}
    # A context whose observations are in a ledger file: it travels as it is.
    shared = Workspace(str(root), observations=str(tmp_path / "observations.json"))
    ctx = shared.context("a")
    ctx.fs.write("/shared.txt", "old\n")
    ctx.fs.write("/changed.txt", "old\n")
    (root / "changed.txt").write_text("old, changed outside\n")  # after the read
    direct = tmp_path / "direct.pickle"
    direct.write_bytes(pickle.dumps((ctx, [
        ("edit", {"file_path": "/shared.txt", **edit}),
        ("edit", {"file_path": "/changed.txt", **edit}),
    ])))
    stranger = tmp_path / "stranger.pickle"
    stranger.write_bytes(pickle.dumps((shared.context("b"), [
        ("edit", {"file_path": "/shared.txt", "old_string": "new", "new_string": "b"}),
    ])))
    # A workspace whose observations are in this process: a copy travels, when asked for.
    ws = Workspace(str(root))
    mine = ws.context("c")
    mine.fs.write("/copy.txt", "old\n")
    copy = tmp_path / "copy.pickle"
    copy.write_bytes(pickle.dumps((mine.spec(snapshot=True), [
        ("edit", {"file_path": "/copy.txt", **edit}),
        ("edit", {"file_path": "/never.txt", **edit}),
    ])))
    assert run_child(direct, stranger, copy) == [
        ["a", "edit", True, None],
        ["a", "edit", False, "FS_STALE"],
        ["b", "edit", False, "FS_NOT_OBSERVED"],
        ["c", "edit", True, None],
        ["c", "edit", False, "FS_NOT_FOUND"],
    ]
    assert (root / "shared.txt").read_bytes() == b"new\n"
    assert (root / "changed.txt").read_bytes() == b"old, changed outside\n"
    assert (root / "copy.txt").read_bytes() == b"new\n"
    # What the other process recorded came back through the file: "a" edits on.
    ctx.fs.replace("/shared.txt", "new", "newer")
    assert (root / "shared.txt").read_bytes() == b"newer\n"
    # A copy is not kept in step: here "c" never saw its own edit made there.
    res = mine.tools.execute("edit", {"file_path": "/copy.txt", "old_string": "new",
                                      "new_string": "x"})
    assert res.error is not None and res.error.code == ErrorCode.FS_STALE


def test_an_error_whose_details_hold_catalogue_sentences_pickles() -> None:
    """A refusal's details may nest catalogue sentences, whose own details are read-only
    mappings (which do not pickle): the error crosses processes with the same text."""
    from types import MappingProxyType

    from fsseam import ErrorCode, FsError
    from fsseam.messages import Sentence, Sentences

    inner = Sentence("target_gone", MappingProxyType({"which": "old_string"}))
    err = FsError(ErrorCode.FS_NOT_FOUND, path="/a.txt", reason="missing",
                  details={"story": Sentences([inner]), "nested": MappingProxyType({"s": inner})})
    again = pickle.loads(pickle.dumps(err))
    assert type(again) is FsError and again.code is ErrorCode.FS_NOT_FOUND
    assert again.details["story"] == Sentences([Sentence("target_gone", {"which": "old_string"})])
    assert isinstance(again.details["story"], Sentences)
    assert str(again) == str(err)
