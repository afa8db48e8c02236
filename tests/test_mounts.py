"""Mounts: one workspace over memory, local and S3 (moto) stores.

The shared suites run on a mounted workspace three times, each store taking its turn at
``/`` with the other two mounted at ``/data`` and ``/repo``; then what only mounts do:
routing, listings and walks across mount points, moves between stores (guarded, and made
stale by another agent), read-only mounts, capabilities per path, errors in the
workspace's paths, and the mistakes a mount table can hold.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import Conflict, CreateOnly, ErrorCode, FsError, IfMatch, Overwrite, Workspace
from fsseam.backends import Backend, MemoryBackend, Mount, MountBackend, open_backend
from fsseam.testing import BackendConformance, ToolsConformance
from fsseam.versions import Capabilities

from .budget import size

Spec = tuple[str, dict[str, Any] | None]


@pytest.fixture
def s3_spec(moto_s3: Any) -> Spec:
    return (f"s3://{moto_s3.create_bucket()}/ws", moto_s3.storage_options())


@pytest.fixture
def local_spec(tmp_path: Path) -> Spec:
    d = tmp_path / "local-store"
    d.mkdir()
    return (str(d), None)


@pytest.fixture
def memory_spec() -> Spec:
    return (f"memory://mnt-{uuid.uuid4().hex}", {"global_store": False})


def _mount(specs: dict[str, Spec], **kw: Any) -> Workspace:
    return Workspace.mount(
        {p: url for p, (url, _) in specs.items()},
        storage_options={p: o for p, (_, o) in specs.items() if o is not None},
        **kw,
    )


@pytest.fixture
def layout(
    request: pytest.FixtureRequest, s3_spec: Spec, local_spec: Spec, memory_spec: Spec
) -> dict[str, Spec]:
    """The mount table of the class's ``root_store`` at ``/``, the others below it."""
    stores = {"memory": memory_spec, "s3": s3_spec, "local": local_spec}
    root = request.cls.root_store
    others = [s for s in ("memory", "s3", "local") if s != root]
    return {"/": stores[root], "/data": stores[others[0]], "/repo": stores[others[1]]}


# -- the shared suites, on a mounted workspace --------------------------------------------


class _Mounted:
    root_store: str
    mount_points = ("data", "repo")
    # A smaller lost-update smoke (4 threads x 10) than the suite's default (x 25), which
    # each store's own conformance module runs on the same emulator; the full profile
    # (tests/budget.py) runs this one at full size too.
    increments = size(25, 10)

    @pytest.fixture
    def workspace(self, layout: dict[str, Spec]) -> Workspace:
        ws = _mount(layout)
        assert isinstance(ws.backend, MountBackend)
        return ws

    @pytest.fixture
    def backend(self, workspace: Workspace) -> Backend:
        return workspace.backend


class TestMountedMemoryRoot(_Mounted, BackendConformance):
    root_store = "memory"


class TestMountedS3Root(_Mounted, BackendConformance):
    root_store = "s3"


class TestMountedLocalRoot(_Mounted, BackendConformance):
    root_store = "local"


class TestMountedMemoryRootTools(_Mounted, ToolsConformance):
    root_store = "memory"


class TestMountedS3RootTools(_Mounted, ToolsConformance):
    root_store = "s3"


class TestMountedLocalRootTools(_Mounted, ToolsConformance):
    root_store = "local"


# -- what the issue checks: memory, local and S3 through the tools ---------------------------


@pytest.fixture
def three(memory_spec: Spec, local_spec: Spec, s3_spec: Spec) -> dict[str, Spec]:
    return {"/": memory_spec, "/repo": local_spec, "/data": s3_spec}


def test_a_mounted_workspace_through_the_tools(three: dict[str, Spec], moto_s3: Any) -> None:
    ws = _mount(three)
    a, b = ws.context("a"), ws.context("b")
    bucket = three["/data"][0].removeprefix("s3://").split("/")[0]

    def run(ctx: Any, tool: str, **args: Any) -> Any:
        res = ctx.tools.execute(tool, args)
        assert res.ok, res.text
        return res

    run(a, "write", file_path="/notes.md", content="plan\n")
    run(a, "write", file_path="/data/results.csv", content="x,y\n1,2\n")
    run(a, "write", file_path="/repo/src/app.py", content="print('hi')\n")
    assert run(a, "ls", path="/").text == "/data/\n/notes.md  (5 bytes)\n/repo/"
    assert run(a, "glob", pattern="**/*").text.splitlines() == [
        "/data/results.csv", "/notes.md", "/repo/src/app.py",
    ]
    res = run(a, "grep", pattern="1,2|hi|plan", output_mode="files_with_matches")
    assert res.text.splitlines()[:3] == ["/data/results.csv", "/notes.md", "/repo/src/app.py"]
    # Each store holds its own files, under its own root.
    assert ws.backend.mount_of("/data/results.csv").backend.read("results.csv").data == (
        b"x,y\n1,2\n"
    )
    assert Path(three["/repo"][0], "src", "app.py").read_bytes() == b"print('hi')\n"
    s3 = moto_s3.client()
    assert s3.get_object(Bucket=bucket, Key="ws/results.csv")["Body"].read() == b"x,y\n1,2\n"

    # A move from S3 to local that another agent's edit makes stale: refused, nothing moved.
    run(a, "read", file_path="/data/results.csv")
    run(b, "read", file_path="/data/results.csv")
    run(b, "edit", file_path="/data/results.csv", old_string="1,2", new_string="3,4")
    res = a.tools.execute("move", {"source_path": "/data/results.csv",
                                   "destination_path": "/repo/results.csv"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert res.text.startswith("Error [FS_STALE]: /data/results.csv has changed"), res.text
    assert s3.get_object(Bucket=bucket, Key="ws/results.csv")["Body"].read() == b"x,y\n3,4\n"
    assert not Path(three["/repo"][0], "results.csv").exists()

    # Read again, and the move goes through: a guarded copy, then a guarded delete.
    run(a, "read", file_path="/data/results.csv")
    res = run(a, "move", source_path="/data/results.csv", destination_path="/repo/results.csv")
    assert res.text == "Moved /data/results.csv to /repo/results.csv."
    assert Path(three["/repo"][0], "results.csv").read_bytes() == b"x,y\n3,4\n"
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="ws/results.csv")
    # The mover observed the destination at its new version on the local store.
    run(a, "edit", file_path="/repo/results.csv", old_string="3,4", new_string="5,6")


def test_a_cross_mount_move_whose_source_changes_after_the_copy_is_taken_back(
    three: dict[str, Spec], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other agent's edit lands between the copy and the guarded delete: S3 refuses
    the delete (If-Match), the copy on the local store is removed again (guarded by its own
    version), and the source keeps the other agent's bytes."""
    ws = _mount(three)
    a, b = ws.context("a"), ws.context("b")
    assert a.tools.execute("write", {"file_path": "/data/r.txt", "content": "one\n"}).ok
    assert b.tools.execute("read", {"file_path": "/data/r.txt"}).ok
    s3_mount = ws.backend.mount_of("/data/r.txt")
    assert s3_mount is not None
    real_delete = s3_mount.backend.delete

    def delete_after_the_other_edit(key: str, precondition: Any = None, **kw: Any) -> None:
        if key == "r.txt":
            assert b.tools.execute("edit", {"file_path": "/data/r.txt", "old_string": "one",
                                            "new_string": "theirs"}).ok
        real_delete(key, precondition)

    monkeypatch.setattr(s3_mount.backend, "delete", delete_after_the_other_edit)
    res = a.tools.execute("move", {"source_path": "/data/r.txt",
                                   "destination_path": "/repo/r.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert not Path(three["/repo"][0], "r.txt").exists()
    assert ws.backend.read("data/r.txt").data == b"theirs\n"


def test_a_cross_mount_move_onto_an_existing_file_changes_nothing(
    three: dict[str, Spec],
) -> None:
    ws = _mount(three)
    a = ws.context("a")
    assert a.tools.execute("write", {"file_path": "/notes.md", "content": "mine\n"}).ok
    assert a.tools.execute("write", {"file_path": "/data/notes.md", "content": "theirs\n"}).ok
    res = a.tools.execute("move", {"source_path": "/notes.md",
                                   "destination_path": "/data/notes.md"})
    assert res.error is not None and res.error.code is ErrorCode.FS_ALREADY_EXISTS, res.text
    assert ws.backend.read("notes.md").data == b"mine\n"
    assert ws.backend.read("data/notes.md").data == b"theirs\n"


def test_requests_through_a_mount_are_the_stores_own(
    three: dict[str, Spec], moto_s3: Any
) -> None:
    """The router adds no request: read 1 GET, edit 1 GET + 1 PUT on the S3 mount."""
    bucket = three["/data"][0].removeprefix("s3://").split("/")[0]
    ws = _mount(three)
    ctx = ws.context("a")
    assert ctx.tools.execute("write", {"file_path": "/data/f.md", "content": "a\nb\n"}).ok
    moto_s3.log.clear()
    assert ctx.tools.execute("read", {"file_path": "/data/f.md"}).ok
    assert [m for m, _ in moto_s3.log.to_bucket(bucket)] == ["GET"]
    moto_s3.log.clear()
    assert ctx.tools.execute("edit", {"file_path": "/data/f.md", "old_string": "b",
                                      "new_string": "B"}).ok
    assert [m for m, _ in moto_s3.log.to_bucket(bucket)] == ["GET", "PUT"]


# -- read-only mounts -----------------------------------------------------------------------


def test_a_read_only_mount_refuses_every_change_before_asking_its_store(
    three: dict[str, Spec], moto_s3: Any
) -> None:
    bucket = three["/data"][0].removeprefix("s3://").split("/")[0]
    _mount(three).backend.write("data/ref.txt", b"reference\n", CreateOnly())  # S3 is shared
    ws = _mount(three, read_only={"/data"})
    ws.backend.write("scratch.txt", b"scratch\n", CreateOnly())
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": "/data/ref.txt"}).ok
    moto_s3.log.clear()
    attempts: list[tuple[str, dict[str, Any]]] = [
        ("write", {"file_path": "/data/ref.txt", "content": "x"}),
        ("write", {"file_path": "/data/new.txt", "content": "x"}),
        ("edit", {"file_path": "/data/ref.txt", "old_string": "reference", "new_string": "x"}),
        ("str_replace_editor", {"command": "create", "path": "/data/c.txt", "file_text": "x"}),
        ("delete", {"file_path": "/data/ref.txt"}),
        ("move", {"source_path": "/data/ref.txt", "destination_path": "/moved.txt"}),
        ("move", {"source_path": "/scratch.txt", "destination_path": "/data/moved.txt"}),
    ]
    for tool, args in attempts:
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_READ_ONLY, res.text
        assert "which is mounted read-only" in res.text and "/data" in res.text
    assert moto_s3.log.to_bucket(bucket) == []  # refused before any request
    assert ws.backend.read("data/ref.txt").data == b"reference\n"
    assert ws.backend.read("scratch.txt").data == b"scratch\n"
    with pytest.raises(FsError) as info:
        ws.backend.read("moved.txt")
    assert info.value.code is ErrorCode.FS_NOT_FOUND
    # The rest of the workspace is writable.
    assert ctx.tools.execute("write", {"file_path": "/other.txt", "content": "ok\n"}).ok


def test_read_only_may_name_one_mount_point(three: dict[str, Spec]) -> None:
    ws = _mount(three, read_only="/repo")
    assert isinstance(ws.backend, MountBackend)
    assert [m.point for m in ws.backend.mounts if m.read_only] == ["/repo"]


def test_read_only_true_makes_the_whole_mounted_workspace_read_only(
    three: dict[str, Spec],
) -> None:
    ws = _mount(three, read_only=True)
    res = ws.context("a").tools.execute("write", {"file_path": "/x.txt", "content": "x"})
    assert res.error is not None and res.error.code is ErrorCode.FS_READ_ONLY
    assert res.text.endswith("this workspace is read-only; files can be read but not changed.")


# -- routing, listings, walks ---------------------------------------------------------------


def _mem() -> MemoryBackend:
    b = open_backend("memory://m", {"global_store": False})
    assert isinstance(b, MemoryBackend)
    return b


def test_the_longest_mount_point_wins_and_listings_show_mount_points() -> None:
    root, data, raw = _mem(), _mem(), _mem()
    ws = Workspace.mount({"/": root, "/data": data, "/data/raw": raw})
    b = ws.backend
    b.write("data/a.csv", b"a", CreateOnly())
    b.write("data/raw/x.bin", b"x", CreateOnly())
    b.write("data/rawish.txt", b"r", CreateOnly())  # a prefix of a mount point, not in it
    b.write("top.txt", b"t", CreateOnly())
    assert data.read("a.csv").data == b"a" and data.read("rawish.txt").data == b"r"
    assert raw.read("x.bin").data == b"x"
    assert root.read("top.txt").data == b"t"
    assert [(e.key, e.kind) for e in b.list("")] == [
        ("data", "directory"), ("top.txt", "file"),
    ]
    assert [(e.key, e.kind) for e in b.list("data")] == [
        ("data/a.csv", "file"), ("data/raw", "directory"), ("data/rawish.txt", "file"),
    ]
    assert [e.key for e in b.walk("")] == [
        "data/a.csv", "data/raw/x.bin", "data/rawish.txt", "top.txt",
    ]
    assert [e.key for e in b.walk("data")] == ["data/a.csv", "data/raw/x.bin", "data/rawish.txt"]
    assert [e.key for e in b.walk("data/raw")] == ["data/raw/x.bin"]


def test_a_mount_point_hides_what_its_parent_store_holds_there() -> None:
    root, data = _mem(), _mem()
    root.write("data/hidden.txt", b"in the parent store", CreateOnly())
    ws = Workspace.mount({"/": root, "/data": data})
    data.write("shown.txt", b"in the mounted store", CreateOnly())
    assert [e.key for e in ws.backend.list("data")] == ["data/shown.txt"]
    assert [e.key for e in ws.backend.walk("")] == ["data/shown.txt"]
    with pytest.raises(FsError) as info:
        ws.backend.read("data/hidden.txt")
    assert info.value.code is ErrorCode.FS_NOT_FOUND
    for call in (lambda: ws.backend.read("data"), lambda: ws.backend.write("data", b"x",
                                                                           Overwrite())):
        with pytest.raises(FsError) as directory:
            call()
        assert directory.value.code is ErrorCode.FS_IS_DIRECTORY


def test_without_a_root_mount_other_paths_are_outside_the_workspace() -> None:
    ws = Workspace.mount({"/data/raw": _mem(), "/repo": _mem()})
    b = ws.backend
    b.write("data/raw/x.txt", b"x", CreateOnly())
    assert [(e.key, e.kind) for e in b.list("")] == [("data", "directory"), ("repo", "directory")]
    assert [e.key for e in b.list("data")] == ["data/raw"]
    assert b.stat("data").kind == "directory" and b.stat("").kind == "directory"
    assert [e.key for e in b.walk("")] == ["data/raw/x.txt"]
    ctx = ws.context("a")
    for tool, args in [("read", {"file_path": "/elsewhere.txt"}),
                       ("write", {"file_path": "/elsewhere.txt", "content": "x"}),
                       ("write", {"file_path": "/data/other.txt", "content": "x"}),
                       ("ls", {"path": "/nowhere"})]:
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, res.text
        assert "is not under any mounted store" in res.text
        assert res.text.endswith("the mounts: /data/raw, /repo."), res.text
    res = ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/"})
    assert res.text.splitlines()[1:] == ["/data/", "/data/raw/", "/repo/"]  # two levels


def test_errors_name_the_workspace_path(three: dict[str, Spec]) -> None:
    ws = _mount(three)
    b = ws.backend
    v = b.write("data/x.txt", b"1", CreateOnly())
    b.write("data/x.txt", b"2", IfMatch(v))
    with pytest.raises(Conflict) as stale:
        b.write("data/x.txt", b"3", IfMatch(v))
    assert stale.value.message == "/data/x.txt has changed since it was read."
    with pytest.raises(FsError) as missing:
        b.read("data/nope.txt")
    assert missing.value.message.startswith("/data/nope.txt does not exist.")
    b.write("repo/f", b"f", CreateOnly())
    with pytest.raises(FsError) as below:
        b.write("repo/f/x", b"x", CreateOnly())
    assert below.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "/repo/f/x" in below.value.message, below.value.message


def test_a_link_in_a_local_mount_cannot_leave_it(three: dict[str, Spec]) -> None:
    local = Path(three["/repo"][0])
    os.symlink("/etc", local / "escape")
    ctx = _mount(three).context("a")
    res = ctx.tools.execute("read", {"file_path": "/repo/escape/passwd"})
    assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, res.text
    assert "/repo/escape/passwd" in res.text


def test_a_link_into_a_path_another_mount_hides_is_refused(
    local_spec: Spec, memory_spec: Spec
) -> None:
    """A link in the local store at / that points at its own data/ directory, where another
    store is mounted: following it would reach that store, so it is refused."""
    local = Path(local_spec[0])
    (local / "data").mkdir()
    (local / "data" / "x.txt").write_bytes(b"hidden by the mount\n")
    os.symlink("data/x.txt", local / "link.txt")
    ws = _mount({"/": local_spec, "/data": memory_spec})
    ws.backend.write("data/x.txt", b"in the mounted store\n", CreateOnly())
    res = ws.context("a").tools.execute("read", {"file_path": "/link.txt"})
    assert res.error is not None and res.error.code is ErrorCode.FS_OUTSIDE_ROOT, res.text
    assert "/link.txt" in res.text
    assert ws.backend.read("data/x.txt").data == b"in the mounted store\n"


def test_a_real_path_under_a_local_mount_names_its_file(three: dict[str, Spec]) -> None:
    local = Path(three["/repo"][0])
    (local / "real.txt").write_bytes(b"on disk\n")
    ctx = _mount(three).context("a")
    res = ctx.tools.execute("read", {"file_path": str(local / "real.txt")})
    assert res.ok and res.text == "     1\ton disk", res.text
    assert res.value.path == "/repo/real.txt"


# -- capabilities ------------------------------------------------------------------------


def test_capabilities_are_the_weakest_and_per_path(three: dict[str, Spec]) -> None:
    ws = _mount(three)
    b = ws.backend
    assert isinstance(b, MountBackend)
    caps = b.capabilities
    assert caps.history is False  # neither memory nor local disk keeps versions
    assert caps.version_kind == "mixed"
    assert caps.create_only_atomic and caps.if_match_atomic
    assert b.capabilities_for("/data/x.csv").version_kind == "etag"
    assert b.capabilities_for("/data/x.csv").note.startswith("PutObject")
    assert b.capabilities_for("/repo/a.py").version_kind == "sha256"
    root = b.mount_of("/")
    assert root is not None and b.capabilities_for("/notes.md") is root.backend.capabilities
    generic = Workspace.mount({"/": _mem(), "/g": "memory://g"}, backend={"/g": "generic"})
    assert generic.backend.capabilities.create_only_atomic is False
    assert isinstance(generic.backend, MountBackend)
    assert generic.backend.capabilities_for("/x").create_only_atomic is True


def test_a_mount_table_of_stores_without_owner_metadata_keeps_none(tmp_path: Path) -> None:
    """The repro: memory and local disk both say write_meta=False, so the table must too."""
    ws = Workspace.mount({"/": f"memory://wm-{uuid.uuid4().hex}", "/repo": str(tmp_path)},
                         load_entry_points=False)
    assert isinstance(ws.backend, MountBackend)
    assert [m.backend.capabilities.write_meta for m in ws.backend.mounts] == [False, False]
    assert ws.backend.capabilities.write_meta is False
    # and a write still goes through (no meta handed to a store that takes none)
    assert ws.context("a").tools.execute("write", {"file_path": "/repo/a.txt",
                                                   "content": "x\n"}).ok
    assert (tmp_path / "a.txt").read_bytes() == b"x\n"


def test_every_capability_of_a_mount_table_is_the_weakest_of_its_mounts() -> None:
    """Over every field of Capabilities, so a flag added later is covered without a change
    here; a new field that is not yes/no fails the first assert until its rule is decided."""
    fields = Capabilities.model_fields
    flags = [name for name, f in fields.items() if f.annotation is bool]
    assert set(fields) - set(flags) == {"version_kind", "note"}
    strong = MemoryBackend.capabilities.model_copy(update=dict.fromkeys(flags, True))
    for flag in flags:
        for first, second in ((True, True), (True, False), (False, True), (False, False)):
            a, b = _mem(), _mem()
            a.capabilities = strong.model_copy(update={flag: first})  # type: ignore[misc]
            b.capabilities = strong.model_copy(update={flag: second})  # type: ignore[misc]
            table = MountBackend([Mount("", a), Mount("x", b)]).capabilities
            assert getattr(table, flag) is (first and second), (flag, first, second)
            assert all(getattr(table, f) for f in flags if f != flag), flag
    a, b = _mem(), _mem()
    b.capabilities = strong.model_copy(update={"version_kind": "etag"})  # type: ignore[misc]
    assert MountBackend([Mount("", a), Mount("x", a)]).capabilities.version_kind == "sha256"
    mixed = MountBackend([Mount("", a), Mount("x", b)]).capabilities
    assert mixed.version_kind == "mixed"
    assert mixed.note.startswith("mounts: each flag holds on every mount")


def test_versions_stay_each_stores_own(three: dict[str, Spec]) -> None:
    ws = _mount(three)
    ctx = ws.context("a")
    for path in ("/a.txt", "/data/a.txt", "/repo/a.txt"):
        assert ctx.tools.execute("write", {"file_path": path, "content": "same\n"}).ok
    assert ws.policy is not None
    owned = ws.policy.ledger.model_dump()["owners"]["a"]
    kinds = {k: v["kind"] for k, v in owned.items()}
    assert kinds == {"a.txt": "sha256", "data/a.txt": "etag", "repo/a.txt": "sha256"}


# -- a mount table's mistakes ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "reason"),
    [
        (lambda: Workspace.mount({}), "mounts_empty"),
        (lambda: Workspace.mount({"data": "memory://x"}), "mount_path_invalid"),
        (lambda: Workspace.mount({"/a/../b": "memory://x"}), "mount_path_invalid"),
        (lambda: Workspace.mount({"/data": "memory://x", "/data/": "memory://y"}),
         "mount_duplicate"),
        (lambda: Workspace.mount({"/": "memory://x"}, storage_options={"/nope": {}}),
         "mount_unknown"),
        (lambda: Workspace.mount({"/": "memory://x"}, read_only={"/nope"}), "mount_unknown"),
        (lambda: Workspace.mount({"/": _mem()}, storage_options={"/": {"global_store": False}}),
         "mount_options_for_backend"),
        (lambda: open_backend("mount://x", backend="mount-table-test"), None),
    ],
)
def test_a_wrong_mount_table_raises(call: Callable[[], Any], reason: str | None) -> None:
    with pytest.raises(FsError) as info:
        call()
    if reason is None:
        assert info.value.code is ErrorCode.FS_UNSUPPORTED
        return
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert info.value.reason == reason
    assert info.value.message  # every reason has its sentence


def test_a_backend_instance_is_used_as_it_is() -> None:
    mem = _mem()
    ws = Workspace("label", backend=mem)
    assert ws.backend is mem
    with pytest.raises(FsError) as info:
        Workspace("label", storage_options={"x": 1}, backend=mem)
    assert info.value.reason == "backend_given_with_options"


def test_history_is_each_mounts_own(tmp_path: Path) -> None:
    """The workspace's capabilities are what every mount guarantees; history, restore and
    undo ask the mount holding the file, and owners reach a mounted store that keeps them."""
    from fsseam import History

    kept = Workspace(str(tmp_path), history=History(path=str(tmp_path.parent / "kept-h")),
                     load_entry_points=False).backend
    ws = Workspace.mount({"/": f"memory://plain-{uuid.uuid4().hex}", "/kept": kept},
                         load_entry_points=False)
    assert not ws.backend.capabilities.history
    a = ws.context("alice")
    for path in ("/kept/notes.md", "/notes.md"):
        assert a.tools.execute("write", {"file_path": path, "content": "one\n"}).ok
        assert a.tools.execute("edit", {"file_path": path, "old_string": "one",
                                        "new_string": "two"}).ok
    res = a.tools.execute("history", {"file_path": "/kept/notes.md"})
    assert res.ok, res.text
    entries = res.value.entries
    assert [e.owner for e in entries] == ["alice", "alice"] and entries[0].latest
    res = a.tools.execute("str_replace_editor", {"command": "undo_edit",
                                                 "path": "/kept/notes.md"})
    assert res.ok, res.text
    assert (tmp_path / "notes.md").read_bytes() == b"one\n"
    res = a.tools.execute("history", {"file_path": "/notes.md"})
    assert res.error is not None and res.error.code is ErrorCode.FS_UNSUPPORTED, res.text
    assert ws.backend.read("notes.md").data == b"two\n"
