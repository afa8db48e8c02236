"""ctx.filesystem(): the guarded fsspec filesystem, in process, on memory and local disk.

Every refusal is checked for its type, code and path, and for the bytes on the storage
being exactly what they were.
"""

from __future__ import annotations

import pickle
import uuid
from pathlib import Path
from typing import Any

import fsspec
import pytest

from fsseam import Context, ErrorCode, FsError, GuardRefused, ReadEvent, Workspace, hookimpl
from fsseam.filesystem import GuardedFileSystem
from fsseam.observations import open_observations


def _ws(**kw: Any) -> Workspace:
    return Workspace(f"memory://fs-{uuid.uuid4().hex[:10]}", **kw)


def _raw(ws: Workspace, path: str) -> bytes:
    """The bytes on the storage, read behind fsseam's back."""
    data: bytes = fsspec.filesystem("memory").cat_file(ws.url.removeprefix("memory:/") + path)
    return data


class Reads:
    """A plugin recording every read event."""

    def __init__(self) -> None:
        self.events: list[ReadEvent] = []

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        self.events.append(event)


def test_is_an_fsspec_filesystem_rooted_at_the_workspace() -> None:
    ws = _ws()
    fs = ws.context("me").filesystem()
    assert isinstance(fs, fsspec.AbstractFileSystem) and isinstance(fs, GuardedFileSystem)
    fs.pipe_file("/a/b.csv", b"x,y\n1,2\n")
    for name in ("/a/b.csv", "a/b.csv", "fsseam:///a/b.csv", "fsseam://a/b.csv"):
        assert fs.cat_file(name) == b"x,y\n1,2\n"
    assert _raw(ws, "/a/b.csv") == b"x,y\n1,2\n"
    assert fs.ls("/", detail=False) == ["/a"]
    assert fs.find("") == ["/a/b.csv"]
    info = fs.info("a/b.csv")
    assert info["name"] == "/a/b.csv" and info["size"] == 8 and info["type"] == "file"
    assert info["version"] == ws.context("x").fs.read_bytes("/a/b.csv")[1].value


def test_outside_the_root_is_refused_as_the_tools_refuse_it() -> None:
    fs = _ws().context("me").filesystem()
    for name in ("/../x", "../x", "fsseam:///a/../../x"):
        with pytest.raises(GuardRefused) as caught:
            fs.pipe_file(name, b"data")
        assert caught.value.code is ErrorCode.FS_OUTSIDE_ROOT
    assert fs.find("") == []


def test_a_write_needs_a_read_of_the_current_version_and_nothing_is_written() -> None:
    ws = _ws()
    ws.context("agent").fs.write_bytes("/data.csv", b"agent's\n")
    fs = ws.context("person").filesystem()
    with pytest.raises(GuardRefused) as caught, fs.open("/data.csv", "wb") as f:
        f.write(b"person's\n")
    err = caught.value
    assert isinstance(err, PermissionError) and isinstance(err, OSError)
    assert err.code is ErrorCode.FS_NOT_OBSERVED and err.path == "/data.csv"
    assert isinstance(err.error, FsError) and err.diff is None
    assert "read" in str(err).lower()
    assert _raw(ws, "/data.csv") == b"agent's\n"
    with fs.open("/data.csv") as f:  # a read is an observation of that version
        assert f.read() == b"agent's\n"
    fs.pipe_file("/data.csv", b"person's\n")
    assert _raw(ws, "/data.csv") == b"person's\n"


def test_the_agents_change_since_the_persons_read_is_refused_with_its_diff() -> None:
    ws = _ws()
    person, agent = ws.context("person").filesystem(), ws.context("agent")
    person.pipe_file("/notes.txt", b"one\ntwo\n")
    assert agent.fs.read("/notes.txt").lines == ["one", "two"]
    agent.fs.replace("/notes.txt", "two", "TWO")
    with pytest.raises(GuardRefused) as caught:
        person.pipe_file("/notes.txt", b"one\ntwo\nthree\n")
    err = caught.value
    assert err.code is ErrorCode.FS_STALE and err.path == "/notes.txt"
    assert err.diff is not None and "-two" in err.diff and "+TWO" in err.diff
    assert err.diff in str(err)
    assert _raw(ws, "/notes.txt") == b"one\nTWO\n"
    again = pickle.loads(pickle.dumps(err))
    assert isinstance(again, GuardRefused) and again.code is ErrorCode.FS_STALE
    assert again.diff == err.diff and again.path == err.path
    # Read again, keep the agent's change, write: it goes through.
    person.pipe_file("/notes.txt", person.cat_file("/notes.txt") + b"three\n")
    assert _raw(ws, "/notes.txt") == b"one\nTWO\nthree\n"


def test_the_filesystems_writes_make_the_agents_next_edit_stale() -> None:
    ws = _ws()
    agent, person = ws.context("agent"), ws.context("person").filesystem()
    agent.fs.write("/plan.md", "step 1\n")
    assert person.cat_file("/plan.md") == b"step 1\n"
    person.pipe_file("/plan.md", b"step 1\nstep 2\n")
    result = agent.tools.execute("edit", {"file_path": "/plan.md", "old_string": "step 1",
                                          "new_string": "step one"})
    assert not result.ok and result.error is not None
    assert result.error.code == ErrorCode.FS_STALE
    assert "+step 2" in result.text
    assert _raw(ws, "/plan.md") == b"step 1\nstep 2\n"


def test_a_ranged_read_is_a_partial_read_and_an_observation() -> None:
    reads = Reads()
    ws = _ws(plugins=[reads])
    ws.context("agent").fs.write_bytes("/big.bin", bytes(range(200)))
    fs = ws.context("person").filesystem()
    assert fs.cat_file("/big.bin", 10, 20) == bytes(range(10, 20))
    assert fs.cat_file("/big.bin", -5) == bytes(range(195, 200))
    mine = [e for e in reads.events if e.owner == "person"]
    assert [e.partial for e in mine] == [True, True]
    fs.pipe_file("/big.bin", b"whole")  # the range's version was observed
    assert _raw(ws, "/big.bin") == b"whole"
    assert fs.cat_file("/big.bin") == b"whole"
    assert reads.events[-1].partial is False


def test_an_exception_in_the_with_block_writes_nothing() -> None:
    ws = _ws()
    fs = ws.context("me").filesystem()
    fs.pipe_file("/kept.txt", b"kept\n")
    fs.cat_file("/kept.txt")
    for mode in ("wb", "w", "ab"):
        with pytest.raises(KeyError), fs.open("/kept.txt", mode) as f:
            f.write(b"half" if "b" in mode else "half")
            raise KeyError(mode)
        with pytest.raises(KeyError), fs.open("/new.txt", mode) as f:
            raise KeyError(mode)
    with fs.open("/kept.gz", "wb", compression="gzip") as f:  # the codec closes the file
        f.write(b"zipped")
    with pytest.raises(KeyError), fs.open("/kept.gz", "wb", compression="gzip") as f:
        f.write(b"half")
        raise KeyError("gzip")
    with fs.open("/kept.gz", "rb", compression="gzip") as f:
        assert f.read() == b"zipped"
    dropped = fs.open("/dropped.txt", "wb")
    dropped.write(b"never")
    del dropped
    assert _raw(ws, "/kept.txt") == b"kept\n"
    assert fs.find("") == ["/kept.gz", "/kept.txt"]


def test_create_only_modes_raise_file_exists() -> None:
    ws = _ws()
    fs = ws.context("me").filesystem()
    with fs.open("/x.bin", "xb") as f:
        f.write(b"first")
    with pytest.raises(FileExistsError) as caught:
        fs.open("/x.bin", "xb")
    assert isinstance(caught.value, GuardRefused)
    assert caught.value.code is ErrorCode.FS_ALREADY_EXISTS
    with pytest.raises(FileExistsError):
        fs.pipe_file("/x.bin", b"first", mode="create")
    # Created by another owner between open and close: the create still refuses.
    late = fs.open("/y.bin", "xb")
    late.write(b"mine")
    ws.context("other").fs.write_bytes("/y.bin", b"theirs")
    with pytest.raises(FileExistsError):
        late.close()
    assert _raw(ws, "/x.bin") == b"first" and _raw(ws, "/y.bin") == b"theirs"


def test_append_is_a_guarded_rewrite() -> None:
    ws = _ws()
    fs = ws.context("me").filesystem()
    with fs.open("/log.txt", "ab") as f:  # absent: created
        f.write(b"a\n")
    with fs.open("/log.txt", "ab") as f:
        f.write(b"b\n")
    assert _raw(ws, "/log.txt") == b"a\nb\n"
    f = fs.open("/log.txt", "ab")
    f.write(b"c\n")
    other = ws.context("other").fs
    other.read_bytes("/log.txt")
    other.write_bytes("/log.txt", b"a\nb\nX\n")  # after the open's read
    with pytest.raises(GuardRefused) as caught:
        f.close()
    assert caught.value.code is ErrorCode.FS_STALE and "+X" in (caught.value.diff or "")
    assert _raw(ws, "/log.txt") == b"a\nb\nX\n"


def test_rm_mv_and_copy_are_guarded_like_delete_and_move() -> None:
    ws = _ws()
    agent = ws.context("agent").fs
    for name in ("/a.txt", "/b.txt", "/dst.txt"):
        agent.write_bytes(name, name.encode())
    fs = ws.context("person").filesystem()
    refused = [
        lambda: fs.rm("/a.txt"),
        lambda: fs.mv("/b.txt", "/c.txt"),
        lambda: fs.cp_file("/a.txt", "/dst.txt"),  # onto a destination never read
    ]
    for call in refused:
        with pytest.raises(GuardRefused) as caught:
            call()
        assert caught.value.code is ErrorCode.FS_NOT_OBSERVED
    assert sorted(fs.find("")) == ["/a.txt", "/b.txt", "/dst.txt"]
    assert [_raw(ws, n) for n in ("/a.txt", "/b.txt", "/dst.txt")] == [
        b"/a.txt", b"/b.txt", b"/dst.txt"]
    fs.cat_file("/dst.txt")
    fs.cp_file("/a.txt", "/dst.txt")
    fs.cat_file("/b.txt")
    fs.mv("/b.txt", "/c.txt")
    fs.rm("/a.txt")
    assert fs.find("") == ["/c.txt", "/dst.txt"]
    assert _raw(ws, "/dst.txt") == b"/a.txt" and _raw(ws, "/c.txt") == b"/b.txt"


def test_plain_io_errors_are_the_builtin_ones(tmp_path: Path) -> None:
    fs = Workspace(str(tmp_path)).context("me").filesystem()
    with pytest.raises(FileNotFoundError):
        fs.open("/missing.csv")
    with pytest.raises(FileNotFoundError):
        fs.info("/missing.csv")
    fs.pipe_file("/dir/f.txt", b"f")
    with pytest.raises(IsADirectoryError):
        fs.cat_file("/dir")
    assert not fs.exists("/missing.csv") and fs.isdir("/dir") and fs.isfile("/dir/f.txt")
    assert (tmp_path / "dir" / "f.txt").read_bytes() == b"f"
    with pytest.raises(ValueError, match="rb"):
        fs.open("/dir/f.txt", "r+b")


def test_observations_follow_the_workspaces_store() -> None:
    obs = f"memory://fs-obs-{uuid.uuid4().hex[:8]}"
    ws = _ws(observations=obs)
    ws.context("agent").fs.write_bytes("/t.txt", b"t")
    fs = ws.context("person").filesystem()
    fs.cat_file("/t.txt")
    # Another workspace over the same store (as Context.from_spec opens in another
    # process) knows the person's read: its write is conditional, not refused.
    again = Context.from_spec(ws.context("person").spec())
    again.fs.write_bytes("/t.txt", b"t2")
    store = open_observations(obs, workspace_url=ws.url)
    entry = store.get("person", "t.txt")
    assert entry is not None and entry.version is not None


def test_observations_follow_the_contexts_own_store() -> None:
    ws = _ws()
    ws.context("agent").fs.write_bytes("/t.txt", b"t")
    own = open_observations(f"memory://fs-own-{uuid.uuid4().hex[:8]}", workspace_url=ws.url)
    fs = ws.context("person", observations=own).filesystem()
    fs.cat_file("/t.txt")
    entry = own.get("person", "t.txt")
    assert entry is not None and entry.version is not None


def test_listings_hide_the_reserved_observation_keys() -> None:
    name = f"memory://fs-r-{uuid.uuid4().hex[:8]}"
    ws = Workspace(name, observations=f"{name}/.fsseam-observations/")
    fs = ws.context("me").filesystem()
    fs.pipe_file("/data.txt", b"d")
    fs.cat_file("/data.txt")
    assert fs.find("", withdirs=True) == ["/data.txt"]
    assert fs.ls("/", detail=False) == ["/data.txt"]
    with pytest.raises(GuardRefused) as caught:
        fs.pipe_file("/.fsseam-observations/x.json", b"{}")
    assert caught.value.code is ErrorCode.FS_PERMISSION_DENIED
