"""Local-disk facts that the generic conformance suite cannot show."""

from __future__ import annotations

import multiprocessing
import os
import signal
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import fsseam.backends.digests as digests_mod
from fsseam import Conflict, CreateOnly, ErrorCode, FsError, IfMatch, Overwrite
from fsseam.backends import LocalBackend, open_backend
from fsseam.testing import increment_worker


def test_four_processes_two_hundred_increments_each_end_at_800(root: Path) -> None:
    backend = open_backend(str(root))
    backend.write("counter", b"0", CreateOnly())
    with multiprocessing.get_context("spawn").Pool(4) as pool:
        results = pool.starmap(increment_worker, [((str(root), {}), "counter", 200)] * 4)
    assert sum(r[0] for r in results) == 800
    assert (root / "counter").read_bytes() == b"800"
    assert [p.name for p in root.iterdir()] == ["counter"]  # no temp files left behind


def test_same_size_external_write_with_restored_mtime_is_a_new_version(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digests_mod, "RACY_WINDOW_NS", 0)  # let the stat cache trust everything
    f = root / "a.txt"
    f.write_bytes(b"AAAA")
    backend = LocalBackend(str(root))
    v1 = backend.read("a.txt").version
    before = os.stat(f)
    f.write_bytes(b"BBBB")
    os.utime(f, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(f)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )
    blob = backend.read("a.txt")
    assert blob.data == b"BBBB"
    assert blob.version != v1
    with pytest.raises(Conflict):
        backend.write("a.txt", b"CCCC", IfMatch(v1))
    assert f.read_bytes() == b"BBBB"


def _count_verified(backend: LocalBackend, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Sizes of the bytes whose version a read had to establish from the bytes themselves
    (digested, or compared with the bytes last seen): every read the stat cache did not
    answer."""
    calls: list[int] = []
    real = backend._known.version

    def counting(key: str, data: bytes) -> object:
        calls.append(len(data))
        return real(key, data)

    monkeypatch.setattr(backend._known, "version", counting)
    return calls


def test_stat_cache_spares_rehash_of_unchanged_file(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(digests_mod, "RACY_WINDOW_NS", 0)
    (root / "a.txt").write_bytes(b"x" * 1000)
    backend = LocalBackend(str(root))
    calls = _count_verified(backend, monkeypatch)
    v = backend.read("a.txt").version
    assert backend.read("a.txt").version == v
    assert backend.read("a.txt").version == v
    assert calls == [1000]


def test_recently_modified_file_is_rehashed(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (root / "a.txt").write_bytes(b"fresh")
    backend = LocalBackend(str(root))
    calls = _count_verified(backend, monkeypatch)
    backend.read("a.txt")
    backend.read("a.txt")
    assert len(calls) == 2  # mtime within the racy window: the cache is not trusted


_KILL_WRITER = textwrap.dedent(
    """
    import os
    import stat
    import sys
    from fsseam import Overwrite
    from fsseam.backends import LocalBackend

    root, size, point = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ready, hold = int(sys.argv[4]), int(sys.argv[5])
    chunk = int(sys.argv[6])
    real_write, real_replace = os.write, os.replace

    def pause():
        # Tell the parent where this writer stands, then wait for a byte that never comes:
        # only the parent's SIGKILL ends this process.
        real_write(ready, point.encode())
        os.read(hold, 1)
        raise SystemExit("the parent let the writer go on")

    def write(fd, data):
        if fd == ready or not stat.S_ISREG(os.fstat(fd).st_mode):
            return real_write(fd, data)
        # The temp file: its first chunk only (a short write, which the writer's loop
        # continues), then the pause, mid-write.
        n = real_write(fd, memoryview(data)[:chunk])
        if point == "mid_write":
            pause()
        return n

    def replace(*args, **kwargs):
        if point == "before_publish":
            pause()
        real_replace(*args, **kwargs)
        if point == "after_publish":
            pause()

    os.write, os.replace = write, replace
    LocalBackend(root).write("big.bin", b"N" * size, Overwrite())
    """
)


@pytest.mark.parametrize("point", ["mid_write", "before_publish", "after_publish"])
def test_sigkill_during_large_write_leaves_old_or_new(root: Path, point: str) -> None:
    """A writer killed at each step of a write (its temp file partly written; written and
    synced but not yet renamed; renamed) leaves the old bytes or the new ones, never a
    mix. The writer stops itself at that step and says so; the kill follows its word, not
    a clock."""
    size, chunk = 8 << 20, 1 << 20
    target = root / "big.bin"
    target.write_bytes(b"O" * 1024)
    ready_r, ready_w = os.pipe()
    hold_r, hold_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_WRITER, str(root), str(size), point, str(ready_w),
         str(hold_r), str(chunk)],
        pass_fds=(ready_w, hold_r), stderr=subprocess.PIPE,
    )
    os.close(ready_w)
    os.close(hold_r)
    try:
        # EOF (b"") if the writer died before its pause point: its stderr says why.
        said = os.read(ready_r, 64)
        assert said == point.encode(), proc.stderr.read() if proc.stderr else b""
        temps = [p for p in root.iterdir() if p.name != "big.bin"]
        if point == "after_publish":
            assert temps == []
            assert target.read_bytes() == b"N" * size
        else:
            assert len(temps) == 1
            assert temps[0].stat().st_size == (chunk if point == "mid_write" else size)
            assert target.read_bytes() == b"O" * 1024
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
        os.close(ready_r)
        os.close(hold_w)
    assert proc.returncode == -signal.SIGKILL
    assert target.read_bytes() == (b"N" * size if point == "after_publish" else b"O" * 1024)
    # What the killed writer left is no file of the workspace.
    assert [e.key for e in LocalBackend(str(root)).list("")] == ["big.bin"]


def test_mode_kept_on_update_and_umask_on_create(root: Path) -> None:
    backend = LocalBackend(str(root))
    f = root / "script.sh"
    f.write_bytes(b"#!/bin/sh\n")
    os.chmod(f, 0o751)
    v = backend.read("script.sh").version
    backend.write("script.sh", b"#!/bin/sh\necho\n", IfMatch(v))
    assert stat.S_IMODE(os.stat(f).st_mode) == 0o751
    old = os.umask(0o027)
    try:
        backend.write("new.txt", b"n", CreateOnly())
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(root / "new.txt").st_mode) == 0o640


def test_parents_created(root: Path) -> None:
    LocalBackend(str(root)).write("a/b/c.txt", b"deep", CreateOnly())
    assert (root / "a" / "b" / "c.txt").read_bytes() == b"deep"


def test_parent_is_a_file(root: Path) -> None:
    (root / "f").write_bytes(b"file")
    backend = LocalBackend(str(root))
    with pytest.raises(FsError) as info:
        backend.write("f/x.txt", b"x", Overwrite())
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    with pytest.raises(FsError) as info2:
        backend.read("f/x.txt")
    assert info2.value.code in (ErrorCode.FS_INVALID_ARGUMENT, ErrorCode.FS_NOT_FOUND)
    assert (root / "f").read_bytes() == b"file"
    assert sorted(p.name for p in root.iterdir()) == ["f"]


def test_write_onto_directory(root: Path) -> None:
    (root / "d").mkdir()
    with pytest.raises(FsError) as info:
        LocalBackend(str(root)).write("d", b"x", Overwrite())
    assert info.value.code is ErrorCode.FS_IS_DIRECTORY
    assert (root / "d").is_dir()


def test_permission_denied_is_mapped_and_changes_nothing(tmp_path: Path) -> None:
    """A file the process may not read: FS_PERMISSION_DENIED for read and write."""
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="fsseam-perm-", dir="/tmp"))
    try:
        os.chmod(base, 0o755)
        f = base / "secret.txt"
        f.write_bytes(b"s")
        os.chmod(f, 0o600 if os.geteuid() == 0 else 0)
        # As root permission bits do not apply: drop to 'nobody' after importing.
        code = textwrap.dedent(
            f"""
            import os
            from fsseam import FsError, Overwrite
            from fsseam.backends import LocalBackend
            b = LocalBackend({str(base)!r})
            if os.geteuid() == 0:
                os.setgid(65534); os.setuid(65534)
            out = []
            for op in (lambda: b.read("secret.txt"),
                       lambda: b.write("secret.txt", b"x", Overwrite())):
                try:
                    op(); out.append("ok")
                except FsError as e:
                    out.append(e.code.value)
            print(",".join(out))
            """
        )
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert res.stdout.strip() == "FS_PERMISSION_DENIED,FS_PERMISSION_DENIED", res.stderr
        os.chmod(f, 0o600)
        assert f.read_bytes() == b"s"
        assert [p.name for p in base.iterdir()] == ["secret.txt"]
    finally:
        import shutil

        shutil.rmtree(base)


def test_missing_root_raises(tmp_path: Path) -> None:
    with pytest.raises(FsError) as info:
        LocalBackend(str(tmp_path / "nope"))
    assert info.value.code is ErrorCode.FS_NOT_FOUND


def test_create_only_never_replaces_racing_file(root: Path) -> None:
    backend = LocalBackend(str(root))
    (root / "a.txt").write_bytes(b"theirs")
    with pytest.raises(Conflict):
        backend.write("a.txt", b"mine", CreateOnly())
    assert (root / "a.txt").read_bytes() == b"theirs"
    assert [p.name for p in root.iterdir()] == ["a.txt"]
