"""Issue 13 on local disk: each test replays one way an adversarial review broke fsseam.

Real parts throughout: FIFOs and device nodes made with mkfifo/mknod, a tmpfs remounted
read-only, a file bind-mounted over a process's memory for a real EIO, processes that
append, swap links or run as another user, and memory capped with RLIMIT_AS.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import importlib.util
import json
import os
import stat
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import fsseam.backends.digests as digests_mod
import fsseam.backends.local.writes as writes_mod
from fsseam import Conflict, CreateOnly, ErrorCode, FsError, IfMatch, Overwrite, Workspace
from fsseam.backends import LocalBackend

from .helpers import call, fails, ok

MiB = 1 << 20
BENCH = Path(__file__).resolve().parent.parent / "bench" / "hardening.py"


def _tree(root: Path) -> dict[str, Any]:
    """Every entry under ``root``: bytes of files, targets of links, modes, kinds."""
    out: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            st = p.lstat()
            if p.is_symlink():
                out[str(p.relative_to(root))] = ("link", os.readlink(p))
            elif stat.S_ISREG(st.st_mode):
                out[str(p.relative_to(root))] = ("file", p.read_bytes(), st.st_mode)
            else:
                out[str(p.relative_to(root))] = ("other", stat.S_IFMT(st.st_mode), st.st_mode)
    return out


def _mount(*args: str) -> None:
    try:
        subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.CalledProcessError) as e:
        pytest.skip(f"mount {' '.join(args)} is not possible on this machine: {e}")


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], check=False, capture_output=True, timeout=30)


# -- item 1: another program's write inside the publish window -------------------------------

_PAUSED_WRITER = textwrap.dedent(
    """
    import os, sys
    from fsseam import Conflict, IfMatch
    from fsseam.backends import LocalBackend

    b = LocalBackend(sys.argv[1])
    v = b.read("f.txt").version
    real, calls = os.fsync, []

    def fsync(fd):
        real(fd)
        calls.append(fd)
        if len(calls) == 1:  # the new bytes are on disk in the temp file, not published
            print("synced", flush=True)
            sys.stdin.readline()

    os.fsync = fsync
    try:
        b.write("f.txt", b"agent\\n", IfMatch(v))
        print("written", flush=True)
    except Conflict as c:
        print("conflict " + c.reason, flush=True)
    """
)


@contextlib.contextmanager
def _paused_writer(root: Path) -> Iterator[subprocess.Popen[str]]:
    with subprocess.Popen(
        [sys.executable, "-c", _PAUSED_WRITER, str(root)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    ) as proc:
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def test_external_append_while_new_bytes_are_synced_is_not_overwritten(root: Path) -> None:
    target = root / "f.txt"
    target.write_bytes(b"one\n")
    with _paused_writer(root) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline() == "synced\n"
        with open(target, "a") as f:  # a program that knows nothing of fsseam's lock
            f.write("external\n")
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "conflict mismatch\n"
        assert proc.wait(timeout=30) == 0
    assert target.read_bytes() == b"one\nexternal\n"
    assert [p.name for p in root.iterdir()] == ["f.txt"]


def _bench() -> Any:
    spec = importlib.util.spec_from_file_location("fsseam_bench_hardening", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_external_appender_racing_an_agent_loses_almost_nothing(tmp_path: Path) -> None:
    """The smoke version of the benchmark: an appender process, 1 ms apart, while an agent
    edits. Before the fix about a fifth of the appends were overwritten."""
    result = _bench().bench_appender(tmp_path, seconds=2.0, agents=1)
    assert result["errors"] == []
    assert result["agent_edits_lost"] == 0
    assert result["appended"] > 200
    assert result["agent_edits_ok"] + result["agent_edits_stale"] > 10
    assert result["loss_rate"] < 0.03, result


# -- item 2: a read-only filesystem --------------------------------------------------------


@pytest.fixture
def ro_root(tmp_path: Path) -> Iterator[Path]:
    mnt = tmp_path / "ro"
    mnt.mkdir()
    _mount("-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mnt))
    try:
        (mnt / "notes.md").write_bytes(b"alpha\nbeta\n")
        (mnt / "d").mkdir()
        _mount("-o", "remount,ro", str(mnt))
        yield mnt
    finally:
        _umount(mnt)


def test_read_only_mount_refuses_every_change_with_a_code(ro_root: Path) -> None:
    before = _tree(ro_root)
    ctx = Workspace(str(ro_root), load_entry_points=False).context("a")
    editor = "str_replace_editor"
    assert ok(ctx.tools.execute("read", {"file_path": "/notes.md"})).value.lines == [
        "alpha", "beta"]
    for tool, args in [
        ("edit", {"file_path": "/notes.md", "old_string": "beta", "new_string": "B"}),
        ("write", {"file_path": "/notes.md", "content": "new\n"}),
        ("write", {"file_path": "/new.md", "content": "new\n"}),
        ("write", {"file_path": "/n1/n2/new.md", "content": "new\n"}),
        (editor, {"command": "create", "path": "/d/c.md", "file_text": "c"}),
        (editor, {"command": "insert", "path": "/notes.md", "insert_line": 0, "new_str": "x"}),
    ]:
        res = ctx.tools.execute(tool, args)
        fails(res, ErrorCode.FS_READ_ONLY)
        assert "read-only" in res.text
    assert _tree(ro_root) == before


# -- item 4: FIFOs and devices never block ---------------------------------------------------

_CALLS = textwrap.dedent(
    """
    import json, sys
    from fsseam import Workspace
    ctx = Workspace(sys.argv[1], load_entry_points=False).context("a")
    out = []
    for tool, args in json.loads(sys.argv[2]):
        r = ctx.tools.execute(tool, args)
        out.append([r.error.code.value if r.error else "ok", r.text])
    print(json.dumps(out))
    """
)


def _calls_in_child(root: Path, calls: list[tuple[str, dict[str, Any]]]) -> list[list[str]]:
    """Run tool calls in a child process: one that hangs is killed, and the test fails."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", _CALLS, str(root), json.dumps(calls)],
            capture_output=True, text=True, timeout=30, check=True,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the calls {calls} did not return within 30 s")
    result: list[list[str]] = json.loads(out.stdout)
    return result


def test_fifo_is_refused_without_blocking_anyone(root: Path) -> None:
    os.mkfifo(root / "pipe")
    (root / "f.txt").write_bytes(b"x\n")
    editor = "str_replace_editor"
    got = _calls_in_child(root, [
        ("read", {"file_path": "/pipe"}),
        (editor, {"command": "view", "path": "/pipe"}),
        (editor, {"command": "create", "path": "/pipe", "file_text": "x"}),
        ("write", {"file_path": "/pipe", "content": "x"}),
        # Writers to the same directory are not held up by the calls above.
        ("write", {"file_path": "/other.txt", "content": "o\n"}),
        ("read", {"file_path": "/f.txt"}),
    ])
    codes = [c for c, _ in got]
    assert codes == ["FS_UNSUPPORTED", "FS_UNSUPPORTED", "FS_ALREADY_EXISTS",
                     "FS_NOT_OBSERVED", "ok", "ok"], got
    assert "FIFO" in got[0][1]
    assert stat.S_ISFIFO((root / "pipe").lstat().st_mode)
    assert (root / "other.txt").read_bytes() == b"o\n"


def test_blocking_character_device_is_refused(root: Path) -> None:
    try:
        os.mknod(root / "kmsg", 0o600 | stat.S_IFCHR, os.makedev(1, 11))  # /dev/kmsg
    except PermissionError as e:
        pytest.skip(f"mknod is not permitted here: {e}")
    got = _calls_in_child(root, [
        ("read", {"file_path": "/kmsg"}),
        ("str_replace_editor", {"command": "view", "path": "/kmsg"}),
        ("write", {"file_path": "/kmsg", "content": "x"}),
    ])
    assert [c for c, _ in got] == ["FS_UNSUPPORTED", "FS_UNSUPPORTED", "FS_NOT_OBSERVED"]
    assert "character device" in got[0][1]


# -- item 5: memory bounded by the output, whatever the file -------------------------------

_CAPPED = textwrap.dedent(
    """
    import json, resource, sys
    from fsseam import Workspace

    root, cap = sys.argv[1], int(sys.argv[2])
    tool, args = json.loads(sys.argv[3])
    ctx = Workspace(root, load_entry_points=False).context("a")
    with open("/proc/self/status") as f:
        vm = next(int(l.split()[1]) * 1024 for l in f if l.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (vm + cap, vm + cap))
    try:
        r = ctx.tools.execute(tool, args)
        print(json.dumps([r.error.code.value if r.error else "ok", len(r.text), r.text[-300:]]))
    except MemoryError:
        print(json.dumps(["MemoryError", 0, ""]))
    """
)

CAP = 96 * MiB


def _capped(root: Path, tool: str, args: dict[str, Any]) -> list[Any]:
    """One call in a child whose address space may grow by at most CAP bytes."""
    out = subprocess.run(
        [sys.executable, "-c", _CAPPED, str(root), str(CAP), json.dumps([tool, args])],
        capture_output=True, text=True, timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    result: list[Any] = json.loads(out.stdout)
    return result


@pytest.fixture(scope="module")
def short_lines(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """24 MiB of 19-byte lines: every line costs far more as a Python string than on disk."""
    root = tmp_path_factory.mktemp("short")
    block = "".join(f"{i:07d} short line\n" for i in range(65536)).encode()
    with open(root / "short.txt", "wb") as f:
        for _ in range(24 * MiB // len(block)):
            f.write(block)
    return root


def test_view_to_the_end_of_a_big_file_of_short_lines_stays_small(short_lines: Path) -> None:
    code, chars, tail = _capped(
        short_lines, "str_replace_editor",
        {"command": "view", "path": "/short.txt", "view_range": [1, -1]},
    )
    assert code == "ok", tail
    assert chars <= 16_000 + 200  # the output cap, and the notice after it
    assert tail.endswith("view with view_range [614, 1310720].>"), tail


def test_read_with_a_huge_limit_of_a_big_file_stays_small(short_lines: Path) -> None:
    code, chars, tail = _capped(
        short_lines, "read", {"file_path": "/short.txt", "limit": 10**9}
    )
    assert code == "ok", tail
    assert chars <= 100_000 + 200
    assert tail.endswith("Use offset=3847 to continue.)"), tail


def test_create_over_a_huge_existing_file_does_not_read_it(root: Path) -> None:
    with open(root / "sparse.txt", "wb") as f:
        f.truncate(1 << 30)  # 1 GiB, sparse: costs no disk
    code, _, text = _capped(
        root, "str_replace_editor", {"command": "create", "path": "/sparse.txt",
                                     "file_text": "x"},
    )
    assert code == "FS_ALREADY_EXISTS", text
    assert (root / "sparse.txt").stat().st_size == 1 << 30


def test_view_of_one_huge_line_is_linear_and_small(root: Path) -> None:
    size = 48 * MiB
    with open(root / "line.txt", "wb") as f:
        for _ in range(size // MiB):
            f.write(b"x" * MiB)
    code, _, text = _capped(root, "str_replace_editor", {"command": "view", "path": "/line.txt"})
    assert code == "ok", text
    assert text.endswith(f"x... [line truncated: {size - 2000} more characters]\n")


# -- item 6: every OSError becomes a coded result -------------------------------------------


def test_lock_failure_is_a_result_and_changes_nothing(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (root / "a.txt").write_bytes(b"alpha\n")
    ws = Workspace(str(root), load_entry_points=False)
    ok(call(ws, "a", "read", file_path="/a.txt"))
    real = fcntl.flock

    def no_locks(fd: int, op: int) -> None:
        if op & (fcntl.LOCK_EX | fcntl.LOCK_SH) and stat.S_ISDIR(os.fstat(fd).st_mode):
            raise OSError(errno.ENOLCK, "No locks available")  # as on NFS without lockd
        real(fd, op)

    monkeypatch.setattr(fcntl, "flock", no_locks)
    for tool, args in [
        ("edit", {"file_path": "/a.txt", "old_string": "alpha", "new_string": "A"}),
        ("write", {"file_path": "/a.txt", "content": "w\n"}),
        ("write", {"file_path": "/new/b.txt", "content": "b\n"}),
    ]:
        res = fails(ws.context("a").tools.execute(tool, args), ErrorCode.FS_BACKEND)
        assert "No locks available" in res.text
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]
    assert (root / "a.txt").read_bytes() == b"alpha\n"


def test_io_error_while_reading_is_a_result(root: Path) -> None:
    """A real EIO: the file is a bind mount of this process's memory, whose first page is
    unmapped."""
    target = root / "eio.txt"
    target.write_bytes(b"")
    _mount("--bind", f"/proc/{os.getpid()}/mem", str(target))
    try:
        ws = Workspace(str(root), load_entry_points=False)
        for tool, args in [
            ("read", {"file_path": "/eio.txt"}),
            ("str_replace_editor", {"command": "view", "path": "/eio.txt"}),
            ("edit", {"file_path": "/eio.txt", "old_string": "a", "new_string": "b"}),
        ]:
            res = fails(ws.context("a").tools.execute(tool, args), ErrorCode.FS_BACKEND)
            assert "Input/output error" in res.text
    finally:
        _umount(target)


_FLIPPER = textwrap.dedent(
    """
    import os, sys, time
    root = sys.argv[1]
    end = time.monotonic() + 30
    while time.monotonic() < end:
        os.symlink("d", root + "/.l")
        os.rename(root + "/.l", root + "/flip")
        open(root + "/.f", "w").close()
        os.rename(root + "/.f", root + "/flip")
    """
)


def test_link_replaced_while_resolved_is_a_result(root: Path) -> None:
    """realpath() raises EINVAL when a link it is about to read became a file."""
    (root / "d").mkdir()
    (root / "d" / "x.txt").write_bytes(b"x\n")
    proc = subprocess.Popen([sys.executable, "-c", _FLIPPER, str(root)])
    try:
        ctx = Workspace(str(root), load_entry_points=False).context("a")
        codes = set()
        for _ in range(1500):
            res = ctx.tools.execute("read", {"file_path": "/flip/x.txt"})
            codes.add(res.error.code if res.error else "ok")
    finally:
        proc.kill()
        proc.wait()
    assert codes <= {"ok", ErrorCode.FS_NOT_FOUND, ErrorCode.FS_OUTSIDE_ROOT}, codes
    assert "ok" in codes


# -- item 7: links in listings ----------------------------------------------------------------


@pytest.fixture
def linked(root: Path, tmp_path: Path) -> Path:
    (root / "d").mkdir()
    (root / "d" / "f.txt").write_bytes(b"f\n")
    (root / "a.txt").write_bytes(b"a\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"secret\n")
    os.symlink("d", root / "dir_link")
    os.symlink("a.txt", root / "file_link")
    os.symlink(outside, root / "out_link")
    os.symlink("missing", root / "dangling")
    os.symlink(".", root / "d" / "loop")
    return root


def test_view_of_a_tree_with_directory_links_lists_them_as_links(linked: Path) -> None:
    ctx = Workspace(str(linked), load_entry_points=False).context("a")
    res = ok(ctx.tools.execute("str_replace_editor", {"command": "view", "path": "/"}))
    assert res.text.splitlines()[1:] == [
        "/a.txt",
        "/d/",
        "/d/f.txt",
        "/d/loop -> /d",
        "/dangling@",
        "/dir_link -> /d",
        "/file_link -> /a.txt",
        "/out_link@",
    ]
    listing = ctx.fs.list("/", depth=3)
    kinds = {e.path: (e.type, e.target) for e in listing.entries}
    assert kinds["/dir_link"] == ("symlink", "/d")
    assert kinds["/out_link"] == ("symlink", None)
    assert "secret" not in json.dumps(listing.model_dump(mode="json"))


def test_walk_reports_links_and_never_follows_them(linked: Path) -> None:
    backend = LocalBackend(str(linked))
    got = [(e.key, e.kind, e.target, e.size) for e in backend.walk("")]
    assert got == [
        ("a.txt", "file", None, 2),
        ("d/f.txt", "file", None, 2),
        ("d/loop", "symlink", "d", None),
        ("dangling", "symlink", None, None),
        ("dir_link", "symlink", "d", None),
        ("file_link", "symlink", "a.txt", None),
        ("out_link", "symlink", None, None),
    ]


# -- item 8: a read mints the version of exactly the bytes it returned ------------------------


def test_stream_with_cached_version_never_returns_newer_bytes(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digests_mod, "RACY_WINDOW_NS", 0)
    target = root / "f.txt"
    target.write_bytes(b"o" * (256 * 1024))
    backend = LocalBackend(str(root))
    v_old = backend.read("f.txt").version  # now in the stat cache
    stream = backend.open_read("f.txt", chunk_size=64 * 1024)
    assert stream.version == v_old
    got: list[bytes] = []
    try:
        chunks = stream.chunks()
        got.append(next(chunks))
        with open(target, "r+b") as f:  # in place: same inode, same size
            f.write(b"n" * (256 * 1024))
        with pytest.raises(FsError) as info:
            got.extend(chunks)
        assert info.value.code is ErrorCode.FS_STALE
    finally:
        stream.close()
    assert b"".join(got) == b"o" * (64 * 1024)


def test_read_tool_never_reports_a_version_for_bytes_it_did_not_return(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The version comes from the stat cache when the read opens the file; the file is
    rewritten in place before its bytes are read. The read must not return the new bytes
    under the old version (it stops after its window, so it never reaches the end)."""
    monkeypatch.setattr(digests_mod, "RACY_WINDOW_NS", 0)
    target = root / "f.txt"
    target.write_bytes(b"o" * 99 + b"\n" + b"k" * 99 * 40_000)  # 4 MB: the read stops early
    ws = Workspace(str(root), load_entry_points=False)
    v_old = ws.backend.read("f.txt").version  # now in the stat cache
    real = os.read
    rewritten: list[bool] = []

    def rewrite_then_read(fd: int, n: int) -> bytes:
        if not rewritten:
            rewritten.append(True)
            with open(target, "r+b") as f:
                f.write(b"n" * 99)
        return real(fd, n)

    monkeypatch.setattr(os, "read", rewrite_then_read)
    res = ws.context("a").tools.execute("read", {"file_path": "/f.txt", "limit": 1})
    monkeypatch.setattr(os, "read", real)
    assert rewritten
    assert not (res.ok and res.value.version == v_old), res.text[:200]
    fails(res, ErrorCode.FS_STALE)
    assert "Read it again" in res.text


# -- item 9: the temp-file sweep never removes a user's file --------------------------------


def test_sweep_keeps_files_named_like_temp_files(root: Path) -> None:
    ws = Workspace(str(root), load_entry_points=False)
    ok(call(ws, "a", "write", file_path="/.notes.fsseam-draft.tmp", content="mine\n"))
    forged = ".notes.fsseam-0123456789abcdef0123456789abcdef.tmp"
    (root / forged).write_bytes(b"also mine\n")
    other = Workspace(str(root), load_entry_points=False)  # another workspace, first write
    ok(call(other, "b", "write", file_path="/x.txt", content="x\n"))
    assert (root / ".notes.fsseam-draft.tmp").read_bytes() == b"mine\n"
    assert (root / forged).read_bytes() == b"also mine\n"


def test_names_of_fsseam_temp_files_are_reserved(root: Path) -> None:
    name = writes_mod.temp_name("notes.md")
    assert writes_mod.is_temp_name(name)
    assert not writes_mod.is_temp_name(name.replace(".tmp", ".txt"))
    ws = Workspace(str(root), load_entry_points=False)
    fails(call(ws, "a", "write", file_path="/" + name, content="x"),
          ErrorCode.FS_INVALID_ARGUMENT)
    assert list(root.iterdir()) == []


def test_sweep_spares_a_live_writers_temp_file(root: Path) -> None:
    target = root / "f.txt"
    target.write_bytes(b"one\n")
    with _paused_writer(root) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        assert proc.stdout.readline() == "synced\n"
        errors: list[BaseException] = []

        def other_writer() -> None:
            try:  # a fresh backend: its first write into the directory sweeps it
                LocalBackend(str(root)).write("g.txt", b"g\n", CreateOnly())
            except BaseException as e:  # pragma: no cover - reported below
                errors.append(e)

        t = threading.Thread(target=other_writer)
        t.start()
        t.join(timeout=30)
        assert not t.is_alive(), "a writer to the same directory was blocked"
        assert errors == []
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline() == "written\n"
        assert proc.wait(timeout=30) == 0
    assert target.read_bytes() == b"agent\n"
    assert sorted(p.name for p in root.iterdir()) == ["f.txt", "g.txt"]


# -- item 10: owner, group and set-id bits ----------------------------------------------------

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to own files as others")


@root_only
def test_edit_as_root_keeps_owner_group_and_mode(root: Path) -> None:
    target = root / "tool.sh"
    target.write_bytes(b"#!/bin/sh\necho one\n")
    os.chown(target, 1000, 1000)
    os.chmod(target, 0o4755)
    ws = Workspace(str(root), load_entry_points=False)
    ok(call(ws, "a", "read", file_path="/tool.sh"))
    ok(call(ws, "a", "edit", file_path="/tool.sh", old_string="one", new_string="two"))
    st = target.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (1000, 1000, 0o4755)
    assert target.read_bytes() == b"#!/bin/sh\necho two\n"


_AS_USER = textwrap.dedent(
    """
    import os, sys
    from fsseam import Workspace
    ctx = Workspace(sys.argv[1], load_entry_points=False).context("a")
    # Everything is imported while still root (the interpreter may live under /root).
    assert ctx.tools.execute("read", {"file_path": "/warm.txt"}).ok
    assert ctx.tools.execute("edit", {"file_path": "/warm.txt", "old_string": "w",
                                      "new_string": "W"}).ok
    os.setgroups([])
    os.setgid(1000)
    os.setuid(1000)
    assert ctx.tools.execute("read", {"file_path": "/tool.sh"}).ok
    r = ctx.tools.execute("edit", {"file_path": "/tool.sh", "old_string": "one",
                                   "new_string": "two"})
    print(r.text)
    """
)


@root_only
def test_setid_bits_are_dropped_when_the_owner_cannot_be_kept() -> None:
    work = Path(tempfile.mkdtemp(dir="/tmp", prefix="fsseam-setid-"))
    try:
        work.chmod(0o777)
        (work / "warm.txt").write_bytes(b"w\n")
        target = work / "tool.sh"
        target.write_bytes(b"#!/bin/sh\necho one\n")
        os.chown(target, 1001, 1001)
        os.chmod(target, 0o6777)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        out = subprocess.run([sys.executable, "-c", _AS_USER, str(work)], env=env,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stdout.startswith("Edited /tool.sh"), out.stdout
        st = target.stat()
        assert (st.st_uid, st.st_gid) == (1000, 1000)
        assert stat.S_IMODE(st.st_mode) == 0o777  # setuid and setgid dropped
        assert target.read_bytes() == b"#!/bin/sh\necho two\n"
    finally:
        for p in work.iterdir():
            p.unlink()
        work.rmdir()


def test_write_protected_file_is_not_changed(root: Path) -> None:
    target = root / "ro.txt"
    target.write_bytes(b"keep\n")
    target.chmod(0o444)
    ws = Workspace(str(root), load_entry_points=False)
    ok(call(ws, "a", "read", file_path="/ro.txt"))
    for tool, args in [
        ("edit", {"file_path": "/ro.txt", "old_string": "keep", "new_string": "lose"}),
        ("write", {"file_path": "/ro.txt", "content": "lose\n"}),
        ("str_replace_editor", {"command": "insert", "path": "/ro.txt", "insert_line": 0,
                                "new_str": "lose"}),
    ]:
        res = fails(ws.context("a").tools.execute(tool, args), ErrorCode.FS_PERMISSION_DENIED)
        assert "write-protected" in res.text
    with pytest.raises(FsError) as info:
        ws.backend.delete("ro.txt")
    assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
    assert target.read_bytes() == b"keep\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o444
    assert sorted(p.name for p in root.iterdir()) == ["ro.txt"]


def _pause_at_access(monkeypatch: pytest.MonkeyPatch, nth: int, name: str
                     ) -> tuple[threading.Event, threading.Event]:
    """Hold the ``nth`` writability check of ``name`` made by a thread other than the
    test's (the edit's), between the write's lstat and its ``access``, until released."""
    real = os.access
    reached, release = threading.Event(), threading.Event()
    main = threading.get_ident()
    seen = 0

    def access(path: Any, mode: int, **kw: Any) -> bool:
        nonlocal seen
        if threading.get_ident() != main and path == name:
            seen += 1
            if seen == nth:
                reached.set()
                assert release.wait(30)
        return real(path, mode, **kw)

    monkeypatch.setattr(os, "access", access)
    return reached, release


@pytest.mark.parametrize(
    ("mover", "nth"),
    [("move tool", 1), ("mv", 1), ("mv", 2)],
    ids=["agent-move-before-temp", "mv-before-temp", "mv-under-directory-lock"],
)
def test_edit_racing_a_move_is_told_the_file_is_gone_not_write_protected(
    root: Path, monkeypatch: pytest.MonkeyPatch, mover: str, nth: int
) -> None:
    """A writable file moved away between the edit's lstat and its access check: the edit
    says the file was deleted since read (FS_STALE, deleted_since_read), never
    "write-protected (mode 0644), ask the user". The move is made while the edit waits at
    that check (the 1st, before the temp file, or the 2nd, under the directory lock)."""
    (root / "a.txt").write_bytes(b"one\n")
    (root / "a.txt").chmod(0o644)
    ws = Workspace(str(root), load_entry_points=False)
    a, b = ws.context("a"), ws.context("b")
    ok(a.tools.execute("read", {"file_path": "/a.txt"}))
    ok(b.tools.execute("read", {"file_path": "/a.txt"}))
    reached, release = _pause_at_access(monkeypatch, nth, "a.txt")
    results: list[Any] = []
    edit = threading.Thread(target=lambda: results.append(a.tools.execute(
        "edit", {"file_path": "/a.txt", "old_string": "one", "new_string": "ONE"})))
    edit.start()
    try:
        assert reached.wait(30)
        if mover == "mv":
            os.rename(root / "a.txt", root / "moved.txt")
        else:
            ok(b.tools.execute("move", {"source_path": "/a.txt",
                                                "destination_path": "/moved.txt"}))
    finally:
        release.set()
        edit.join(30)
    res = fails(results[0], ErrorCode.FS_STALE)
    assert "/a.txt no longer exists. It was deleted since you last read it" in res.text
    assert "write-protected" not in res.text and "Ask the user" not in res.text
    assert sorted(p.name for p in root.iterdir()) == ["moved.txt"]
    assert (root / "moved.txt").read_bytes() == b"one\n"


def test_file_replaced_by_a_protected_one_during_the_check_is_still_protected(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The other side: a writable file swapped for a 0444 one at the same moment is
    refused for its mode (the entry is decided again, not assumed gone)."""
    (root / "a.txt").write_bytes(b"one\n")
    (root / "a.txt").chmod(0o644)
    ws = Workspace(str(root), load_entry_points=False)
    a = ws.context("a")
    ok(a.tools.execute("write", {"file_path": "/a.txt", "content": "one\n"}))
    reached, release = _pause_at_access(monkeypatch, 1, "a.txt")
    results: list[Any] = []
    write = threading.Thread(target=lambda: results.append(a.tools.execute(
        "write", {"file_path": "/a.txt", "content": "two\n"})))
    write.start()
    try:
        assert reached.wait(30)
        (root / "b.tmp").write_bytes(b"one\n")
        (root / "b.tmp").chmod(0o444)
        os.rename(root / "b.tmp", root / "a.txt")
    finally:
        release.set()
        write.join(30)
    res = fails(results[0], ErrorCode.FS_PERMISSION_DENIED)
    assert "write-protected (mode 0444)" in res.text
    assert (root / "a.txt").read_bytes() == b"one\n"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt"]


# -- item 12: a failed write leaves no directories behind -----------------------------------


def test_failed_precondition_on_a_new_nested_path_creates_no_directories(root: Path) -> None:
    backend = LocalBackend(str(root))
    v = backend.write("a.txt", b"a", CreateOnly())
    (root / "n1").mkdir()
    with pytest.raises(Conflict) as info:
        backend.write("n1/n2/n3/f.txt", b"x", IfMatch(v))
    assert info.value.reason == "missing"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "n1"]
    assert list((root / "n1").iterdir()) == []


_LIMITED = textwrap.dedent(
    """
    import json, resource, signal, sys
    from fsseam import Workspace
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death
    resource.setrlimit(resource.RLIMIT_FSIZE, (1 << 20, 1 << 20))
    ctx = Workspace(sys.argv[1], load_entry_points=False).context("a")
    r = ctx.tools.execute("write", {"file_path": "/n1/n2/n3/f.txt", "content": "x" * (2 << 20)})
    print(r.error.code.value if r.error else "ok")
    """
)


def test_write_failing_on_disk_limits_removes_the_directories_it_made(root: Path) -> None:
    out = subprocess.run([sys.executable, "-c", _LIMITED, str(root)], capture_output=True,
                         text=True, timeout=60, check=True)
    assert out.stdout.strip() == "FS_TOO_LARGE"
    assert list(root.iterdir()) == []


# -- item 14 and path limits -------------------------------------------------------------


@pytest.mark.parametrize("url", ["local", "memory"])
def test_path_through_a_file_reads_as_not_found(root: Path, url: str) -> None:
    ws = Workspace(str(root) if url == "local" else "memory://hardening-14",
                   load_entry_points=False)
    ws.backend.write("file.txt", b"f\n", Overwrite())
    fails(call(ws, "a", "read", file_path="/file.txt/child"), ErrorCode.FS_NOT_FOUND)
    fails(call(ws, "a", "str_replace_editor", command="view", path="/file.txt/child"),
          ErrorCode.FS_NOT_FOUND)
    fails(call(ws, "a", "write", file_path="/file.txt/child", content="x"),
          ErrorCode.FS_INVALID_ARGUMENT)
    assert ws.backend.read("file.txt").data == b"f\n"


def test_deep_path_is_refused_before_anything_is_made(root: Path) -> None:
    ws = Workspace(str(root), load_entry_points=False)
    res = fails(call(ws, "a", "write", file_path="a/" * 3000 + "x", content="x"),
                ErrorCode.FS_INVALID_ARGUMENT)
    assert "at most 128 levels" in res.text
    fails(call(ws, "a", "write", file_path="/" + "n" * 5000, content="x"),
          ErrorCode.FS_INVALID_ARGUMENT)
    assert list(root.iterdir()) == []
    ok(call(ws, "a", "write", file_path="a/" * 127 + "x", content="x"))


# -- the widened protocol on local disk: edges the shared conformance cases do not reach ----


def test_local_copy_and_delete_refuse_special_files_and_leave_no_directories(
    root: Path,
) -> None:
    backend = LocalBackend(str(root))
    v = backend.write("a.txt", b"a\n", CreateOnly())
    other = backend.write("b.txt", b"b\n", CreateOnly())
    os.mkfifo(root / "pipe")
    with pytest.raises(FsError) as info:
        backend.copy("a.txt", "a.txt/c.txt")
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    with pytest.raises(FsError) as info:
        backend.copy("pipe", "c.txt")
    assert info.value.code is ErrorCode.FS_UNSUPPORTED
    with pytest.raises(Conflict) as conflict:
        backend.copy("a.txt", "pipe")
    assert conflict.value.reason == "exists"
    with pytest.raises(FsError) as info:
        backend.delete("pipe")
    assert info.value.code is ErrorCode.FS_UNSUPPORTED
    with pytest.raises(Conflict) as conflict:
        backend.copy("a.txt", "m1/m2/c.txt", IfMatch(other))
    assert conflict.value.reason == "mismatch"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "b.txt", "pipe"]
    assert backend.copy("a.txt", "n1/n2/c.txt", IfMatch(v)) == v
    assert (root / "n1" / "n2" / "c.txt").read_bytes() == b"a\n"
    assert stat.S_ISFIFO((root / "pipe").lstat().st_mode)
