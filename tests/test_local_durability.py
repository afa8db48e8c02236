"""Local durability: the ``durability`` storage option of the local backend.

``"fsync"`` (the default) fsyncs the temp file before it is published and the directory
after; ``"rename"`` publishes by rename alone, as most editors do. Both keep the guard
(the directory lock, the digest re-check, the conditional rename or link), so a stale
write is refused and a writer killed before its rename leaves the old bytes, in both.
"""

from __future__ import annotations

import json
import os
import pickle
import selectors
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsseam import Conflict, CreateOnly, ErrorCode, FsError, IfMatch, Workspace
from fsseam.backends import LocalBackend
from fsseam.backends.history import History
from fsseam.backends.local import is_temp_name, writes
from fsseam.messages import Reason

MODES = ("fsync", "rename")
OLD = b"old bytes\n"
NEW = b"new bytes\n"


def _workspace(root: Path, mode: str, **kwargs: object) -> Workspace:
    return Workspace(str(root), storage_options={"durability": mode}, **kwargs)  # type: ignore[arg-type]


def _names(root: Path) -> list[str]:
    return sorted(os.listdir(root))


# -- the setting reaches the backend, and travels ----------------------------------------------


def test_default_is_fsync_and_the_option_reaches_the_backend(root: Path) -> None:
    default = Workspace(str(root)).backend
    assert isinstance(default, LocalBackend) and default.durability == "fsync"
    assert "fsync of the directory" in default.capabilities.note
    fast = _workspace(root, "rename").backend
    assert isinstance(fast, LocalBackend) and fast.durability == "rename"
    assert "no fsync" in fast.capabilities.note
    # The class keeps the default's note: one backend's choice is not another's.
    assert LocalBackend.capabilities.note == default.capabilities.note
    assert LocalBackend(str(root), durability="rename").durability == "rename"


@pytest.mark.parametrize("value", ["none", "FSYNC", "", 1])
def test_other_values_are_refused(root: Path, value: object) -> None:
    with pytest.raises(FsError) as e:
        Workspace(str(root), storage_options={"durability": value})
    assert e.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert e.value.reason == Reason.local_durability
    assert repr(value) in str(e.value)


def test_the_setting_survives_pickling(root: Path, tmp_path: Path) -> None:
    ws = _workspace(root, "rename", observations=str(tmp_path / "observations.json"))
    again = pickle.loads(pickle.dumps(ws))
    assert again is not ws
    assert again.backend.durability == "rename"
    ctx = pickle.loads(pickle.dumps(ws.context("agent")))
    assert ctx.workspace.backend.durability == "rename"
    snap = pickle.loads(pickle.dumps(_workspace(root, "rename").spec(snapshot=True)))
    assert Workspace.from_spec(snap, shared=False).backend.durability == "rename"
    assert Workspace.from_spec(Workspace(str(root)).spec(snapshot=True),
                               shared=False).backend.durability == "fsync"


def test_each_mount_takes_its_own(root: Path, tmp_path: Path) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    ws = Workspace.mount({"/": str(root), "/scratch": str(scratch)},
                         storage_options={"/scratch": {"durability": "rename"}})
    assert "no fsync" in ws.backend.capabilities_for("scratch/x").note  # type: ignore[attr-defined]
    assert "no fsync" not in ws.backend.capabilities_for("x").note  # type: ignore[attr-defined]
    shipped = Workspace.from_spec(pickle.loads(pickle.dumps(ws.spec(snapshot=True))),
                                  shared=False)
    assert "no fsync" in shipped.backend.capabilities_for("scratch/x").note  # type: ignore[attr-defined]


# -- which fsyncs happen ----------------------------------------------------------------------


@pytest.fixture
def fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What each os.fsync of the test was given: "file" or "dir"."""
    seen: list[str] = []
    real = os.fsync

    def counted(fd: int) -> None:
        seen.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real(fd)

    monkeypatch.setattr(os, "fsync", counted)
    return seen


# Each step's fsyncs with the default; "rename" makes none of them.
SYNCED = {
    "create in new directories": ["file", "dir", "dir", "dir"],  # file, b/, a/ in root
    "write after read": ["file", "dir"],
    "edit": ["file", "dir"],
    "move": ["file", "dir", "dir"],  # copy: file, its directory; delete: the source's
    "delete": ["dir"],
}


@pytest.mark.parametrize("mode", MODES)
def test_fsyncs_of_every_write_path(root: Path, mode: str, fsyncs: list[str]) -> None:
    fs = _workspace(root, mode).context("agent").fs
    seen: dict[str, list[str]] = {}

    def step(name: str) -> None:
        seen[name] = list(fsyncs)
        fsyncs.clear()

    fs.create("/a/b/new.txt", "one\n")
    step("create in new directories")
    fs.read("/a/b/new.txt")
    fs.write("/a/b/new.txt", "two\n")
    step("write after read")
    fs.replace("/a/b/new.txt", "two", "three")
    step("edit")
    fs.move("/a/b/new.txt", "/moved.txt")
    step("move")
    fs.delete("/moved.txt")
    step("delete")
    assert seen == (SYNCED if mode == "fsync" else {k: [] for k in SYNCED})
    assert _names(root) == ["a"] and _names(root / "a" / "b") == []


@pytest.mark.parametrize("mode", MODES)
def test_kept_history_follows_the_setting(
    root: Path, tmp_path: Path, mode: str, fsyncs: list[str]
) -> None:
    (root / "f.txt").write_bytes(OLD)
    ws = _workspace(root, mode, history=History(path=str(tmp_path / "history")))
    fs = ws.context("agent").fs
    fs.read("/f.txt")
    fsyncs.clear()
    fs.write("/f.txt", NEW.decode())
    if mode == "fsync":
        # The copies and the index (file and directory each), then the write itself.
        assert fsyncs.count("file") >= 3 and fsyncs.count("dir") >= 3
        assert fsyncs[-2:] == ["file", "dir"]
    else:
        assert fsyncs == []
    assert (root / "f.txt").read_bytes() == NEW
    assert len(fs.history("/f.txt").entries) == 2  # the replaced version was kept


# -- the guard stays in both modes -----------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_a_stale_edit_is_refused_and_the_file_unchanged(root: Path, mode: str) -> None:
    (root / "f.txt").write_bytes(OLD)
    tools = _workspace(root, mode).context("agent").tools
    assert tools.execute("read", {"file_path": "/f.txt"}).ok
    (root / "f.txt").write_bytes(b"theirs\n")
    res = tools.execute("edit", {"file_path": "/f.txt", "old_string": "old",
                                 "new_string": "mine"})
    assert not res.ok and res.error is not None and res.error.code == ErrorCode.FS_STALE
    assert (root / "f.txt").read_bytes() == b"theirs\n"
    assert _names(root) == ["f.txt"]


@pytest.fixture
def outsider_during_write(monkeypatch: pytest.MonkeyPatch, root: Path) -> None:
    """Another program writes f.txt just after fsseam wrote its temp file: after the first
    check, before the lock and the re-check."""
    real = writes._Temp.write_all

    def write_all(self: writes._Temp, data: bytes) -> None:
        real(self, data)
        (root / "f.txt").write_bytes(b"theirs, meanwhile\n")

    monkeypatch.setattr(writes._Temp, "write_all", write_all)


@pytest.mark.parametrize("mode", MODES)
def test_a_change_during_the_write_is_caught_by_the_recheck(
    root: Path, mode: str, outsider_during_write: None
) -> None:
    (root / "f.txt").write_bytes(OLD)
    b = LocalBackend(str(root), durability=mode)  # type: ignore[arg-type]
    with pytest.raises(Conflict) as e:
        b.write("f.txt", NEW, IfMatch(b.read("f.txt").version))
    assert e.value.reason == "mismatch"
    assert (root / "f.txt").read_bytes() == b"theirs, meanwhile\n"
    assert _names(root) == ["f.txt"]


@pytest.mark.parametrize("mode", MODES)
def test_a_create_raced_by_another_is_refused(
    root: Path, mode: str, outsider_during_write: None
) -> None:
    b = LocalBackend(str(root), durability=mode)  # type: ignore[arg-type]
    with pytest.raises(Conflict) as e:
        b.write("f.txt", NEW, CreateOnly())
    assert e.value.reason == "exists"
    assert (root / "f.txt").read_bytes() == b"theirs, meanwhile\n"
    assert _names(root) == ["f.txt"]


# -- a writer killed between its temp file and the rename ------------------------------------

# One process, four writers (each mode, an update and a create, each in a directory of its
# own) that all stop after their temp file is written and before the rename; when all four
# are there the process says so and waits to be killed.
_KILLED_WRITERS = textwrap.dedent(
    """
    import json, os, sys, threading
    from fsseam import CreateOnly, IfMatch
    from fsseam.backends import LocalBackend
    from fsseam.backends.local import writes

    base = sys.argv[1]
    arrived = threading.Barrier(5)
    synced = {}
    real_fsync = os.fsync

    def fsync(fd):
        name = threading.current_thread().name
        synced[name] = synced.get(name, 0) + 1
        real_fsync(fd)

    def stop_before_publishing(self, *args, **kwargs):
        arrived.wait()
        threading.Event().wait()  # until the parent kills the process

    os.fsync = fsync
    writes.Writes._publish_locked = stop_before_publishing

    def writer(mode, kind):
        b = LocalBackend(os.path.join(base, mode + "-" + kind), durability=mode)
        pre = IfMatch(b.read("f.txt").version) if kind == "update" else CreateOnly()
        b.write("f.txt", b"new bytes\\n", pre)

    for mode in ("fsync", "rename"):
        for kind in ("update", "create"):
            threading.Thread(target=writer, args=(mode, kind), name=mode + "-" + kind,
                             daemon=True).start()
    arrived.wait(timeout=30)
    print(json.dumps(synced), flush=True)
    threading.Event().wait()
    """
)


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, dict[str, int]]]:
    base = tmp_path_factory.mktemp("killed")
    for mode in MODES:
        (base / f"{mode}-update").mkdir()
        (base / f"{mode}-update" / "f.txt").write_bytes(OLD)
        (base / f"{mode}-create").mkdir()
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_WRITERS, str(base)],
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            assert sel.select(timeout=60), "the writers never reached the rename"
        synced = json.loads(proc.stdout.readline())
        # The kill lands where it is meant to: every temp file complete, nothing published.
        for d in base.iterdir():
            [temp] = [p for p in d.iterdir() if is_temp_name(p.name)]
            assert temp.read_bytes() == NEW
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    yield base, synced


@pytest.mark.parametrize("kind", ["update", "create"])
@pytest.mark.parametrize("mode", MODES)
def test_killed_before_the_rename_leaves_the_old_bytes_and_no_visible_temp(
    killed: tuple[Path, dict[str, int]], mode: str, kind: str
) -> None:
    base, synced = killed
    d = base / f"{mode}-{kind}"
    # Up to the rename the default has fsynced the temp file once; "rename" never.
    assert synced.get(f"{mode}-{kind}", 0) == (1 if mode == "fsync" else 0)
    [temp] = [p.name for p in d.iterdir() if is_temp_name(p.name)]
    if kind == "update":
        assert (d / "f.txt").read_bytes() == OLD
    else:
        assert not (d / "f.txt").exists()
    tools = _workspace(d, mode).context("viewer").tools
    ls = tools.execute("ls", {"path": "/"})
    assert ls.ok and "fsseam" not in ls.text and ".tmp" not in ls.text
    # Dot files named in the pattern are searched: the temp file still is not there.
    found = tools.execute("glob", {"pattern": "**/.*"})
    assert found.ok and "fsseam" not in found.text and "hidden" not in found.text
    grep = tools.execute("grep", {"pattern": "new bytes", "glob": "**/.*"})
    assert grep.ok and "fsseam" not in grep.text and "No matches" in grep.text
    res = tools.execute("write", {"file_path": "/f.txt", "content": "after\n"})
    if kind == "update":  # an update needs a read first
        assert not res.ok
        assert tools.execute("read", {"file_path": "/f.txt"}).ok
        res = tools.execute("write", {"file_path": "/f.txt", "content": "after\n"})
    assert res.ok, res.text
    assert (d / "f.txt").read_bytes() == b"after\n"
    assert temp not in _names(d) and _names(d) == ["f.txt"]  # the next write swept it
