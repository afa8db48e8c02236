"""Local-disk facts that the generic conformance suite cannot show."""

from __future__ import annotations

import multiprocessing
import os
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import fsseam.backends.local.digests as digests_mod
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
    import sys
    from fsseam import Overwrite
    from fsseam.backends import LocalBackend
    b = LocalBackend(sys.argv[1])
    size = int(sys.argv[2])
    b.write("big.bin", b"N" * size, Overwrite())
    """
)


@pytest.mark.parametrize("delay", [0.05, 0.2, 0.5])
def test_sigkill_during_large_write_leaves_old_or_new(root: Path, delay: float) -> None:
    size = 300 << 20
    target = root / "big.bin"
    target.write_bytes(b"O" * 1024)
    proc = subprocess.Popen([sys.executable, "-c", _KILL_WRITER, str(root), str(size)])
    deadline = time.monotonic() + 30
    # Wait until the temp file is being written, then kill mid-write.
    while time.monotonic() < deadline:
        temps = [p for p in root.iterdir() if p.name != "big.bin"]
        if temps and temps[0].stat().st_size > 0:
            break
        time.sleep(0.005)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    data = target.read_bytes()
    assert data in (b"O" * 1024, b"N" * size)
    assert proc.returncode == -signal.SIGKILL


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
