"""Local disk: content-digest versions, and a compare-and-swap that survives crashes.

Why a digest and not (mtime, size, inode): all three repeat (one clock tick for many writes,
same-size rewrites, inode numbers reused at once after ``os.replace``). The stat cache only
spares re-hashing a file whose stat signature (which includes ctime, so ``os.utime`` cannot
hide a change) is unchanged and was already old when it was hashed, as git treats "racy"
index entries.

Every operation walks from the root to the parent directory one component at a time with
``O_NOFOLLOW`` directory descriptors and acts relative to them, so a directory swapped for
a symlink after the seam checked the path cannot lead a read or a write outside the root.

A write takes an exclusive ``flock`` on the parent directory (no lock files left around),
re-checks the precondition against the digest of what is on disk, writes a temp file in the
same directory, fsyncs it, and publishes it with ``os.replace`` (update) or ``os.link``
(create-only, which fails if the name exists), then fsyncs the directory. A writer killed at
any point leaves the old or the new bytes at the path, never a mix.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import secrets
import stat as stat_mod
import threading
import time
from collections.abc import Iterator
from typing import Any

from fsspec.implementations.local import LocalFileSystem

from ..errors import Conflict, ErrorCode, FsError
from ..versions import Capabilities, CreateOnly, Overwrite, Precondition, Version
from ._digest import digest_version, hasher, version_of
from ._fsspec import check_precondition
from ._oserrors import map_os_error
from .base import Blob, Entry, Stat

# Files modified this recently before they were hashed are not trusted from the cache:
# coarse clocks and FAT/NFS stamp several writes within one tick with one mtime.
RACY_WINDOW_NS = 2_000_000_000  # module default; tests may lower it
TEMP_MARK = ".fsseam-"

_Sig = tuple[int, int, int, int, int]


def _sig(st: os.stat_result) -> _Sig:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class _StatCache:
    def __init__(self) -> None:
        self._entries: dict[str, tuple[_Sig, Version]] = {}
        self._lock = threading.Lock()

    def get(self, path: str, st: os.stat_result) -> Version | None:
        with self._lock:
            hit = self._entries.get(path)
        if hit is not None and hit[0] == _sig(st):
            return hit[1]
        return None

    def put(self, path: str, st: os.stat_result, version: Version, hashed_at_ns: int) -> None:
        racy = max(st.st_mtime_ns, st.st_ctime_ns) >= hashed_at_ns - RACY_WINDOW_NS
        with self._lock:
            if racy:
                self._entries.pop(path, None)
            else:
                self._entries[path] = (_sig(st), version)


class _LocalStream:
    def __init__(self, fd: int, st: os.stat_result, cached: Version | None, chunk_size: int,
                 on_done: Any) -> None:
        self._fd = fd
        self._st = st
        self._chunk_size = chunk_size
        self._version = cached
        self._on_done = on_done
        self.size: int | None = st.st_size

    @property
    def version(self) -> Version | None:
        return self._version

    def chunks(self) -> Iterator[bytes]:
        h = hasher() if self._version is None else None
        started = time.time_ns()
        seen = 0
        while True:
            # os.read allocates the full request up front: ask for what the file holds (plus
            # slack for growth), not a 64 MiB edit-sized chunk for an 80 KB file.
            want = min(self._chunk_size, max(self._st.st_size - seen, 0) + (1 << 16))
            chunk = os.read(self._fd, want)
            if not chunk:
                break
            seen += len(chunk)
            if h is not None:
                h.update(chunk)
            yield chunk
        if h is not None:
            self._version = version_of(h)
            self._on_done(self._st, self._version, started)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _outside(key: str) -> FsError:
    return FsError(
        ErrorCode.FS_OUTSIDE_ROOT,
        f"/{key} leads outside the workspace (through a symbolic link). Only paths inside "
        "the workspace can be used.",
        path=key,
    )


def _process_umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


class LocalBackend:
    capabilities = Capabilities(
        create_only_atomic=True,
        if_match_atomic=True,
        version_kind="sha256",
        ranged_reads=True,
        note="flock on the parent directory + digest re-check + fsync'd temp file + rename/link",
    )

    def __init__(self, root: str) -> None:
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            raise FsError(
                ErrorCode.FS_NOT_FOUND,
                f"the workspace root {root} is not an existing directory; create it first.",
            )
        self.root = real
        self._given = os.path.abspath(root)
        self._cache = _StatCache()
        self._swept: set[str] = set()

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> LocalBackend:
        path = LocalFileSystem._strip_protocol(url)
        return cls(os.path.abspath(path))

    # -- paths -------------------------------------------------------------
    def path(self, key: str) -> str:
        return os.path.join(self.root, key) if key else self.root

    @staticmethod
    def _below(path: str, base: str) -> str | None:
        """``path`` relative to ``base`` when it is ``base`` or below it."""
        if path == base:
            return ""
        prefix = base if base.endswith(os.sep) else base + os.sep
        return path[len(prefix) :] if path.startswith(prefix) else None

    def native_key(self, path: str) -> str | None:
        """The part below the root of a real absolute path under it (None otherwise), so a
        model may use the paths it sees elsewhere on this machine."""
        for base in (self.root, self._given):
            below = self._below(path, base)
            if below is not None:
                return below
        return None

    def resolve(self, key: str) -> str:
        below = self._below(os.path.realpath(self.path(key)), self.root)
        if below is None:
            raise _outside(key)
        return below

    # -- descriptor walk ---------------------------------------------------
    def _walk(self, key: str, action: str, create: bool = False) -> tuple[int, str]:
        """An O_NOFOLLOW descriptor of the parent directory of ``key``, and the last name.

        With ``create``, missing directories are made on the way. A symlink met on the way
        (the key is canonical, so one can only appear by a swap after ``resolve``) is
        FS_OUTSIDE_ROOT. The caller closes the descriptor.
        """
        parts = key.split("/") if key else []
        flags = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
        try:
            fd = os.open(self.root, flags)
        except OSError as e:
            raise map_os_error(e, key, action) from e
        try:
            for i, part in enumerate(parts[:-1]):
                while True:
                    try:
                        nfd = os.open(part, flags | os.O_NOFOLLOW, dir_fd=fd)
                        break
                    except FileNotFoundError:
                        if not create:
                            raise
                        with contextlib.suppress(FileExistsError):
                            os.mkdir(part, 0o777, dir_fd=fd)
                    except NotADirectoryError as e:
                        st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                        if stat_mod.S_ISLNK(st.st_mode):
                            raise _outside("/".join(parts[: i + 1])) from e
                        raise
                os.close(fd)
                fd = nfd
        except FsError:
            os.close(fd)
            raise
        except OSError as e:
            os.close(fd)
            raise map_os_error(e, key, action) from e
        return fd, parts[-1] if parts else ""

    # -- reads -------------------------------------------------------------
    def _open(self, key: str) -> tuple[int, os.stat_result]:
        if not key:
            raise map_os_error(IsADirectoryError(key), key, "read")
        dfd, name = self._walk(key, "read")
        try:
            fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW, dir_fd=dfd)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise _outside(key) from e
            raise map_os_error(e, key, "read") from e
        finally:
            os.close(dfd)
        st = os.fstat(fd)
        if stat_mod.S_ISDIR(st.st_mode):
            os.close(fd)
            raise map_os_error(IsADirectoryError(key), key, "read")
        return fd, st

    def _read_fd(self, fd: int, st: os.stat_result, key: str) -> Blob | None:
        """All bytes of an open file and their version; None if it changed while read."""
        started = time.time_ns()
        parts = []
        while True:
            chunk = os.read(fd, max(st.st_size, 1 << 16) + 1)
            if not chunk:
                break
            parts.append(chunk)
        if _sig(os.fstat(fd)) != _sig(st):
            return None  # written in place while we read
        data = b"".join(parts)
        path = self.path(key)
        version = self._cache.get(path, st)
        if version is None:
            version = digest_version(data)
            self._cache.put(path, st, version, started)
        return Blob(data=data, version=version)

    def read(self, key: str) -> Blob:
        for _ in range(5):
            fd, st = self._open(key)
            try:
                blob = self._read_fd(fd, st, key)
            except OSError as e:
                raise map_os_error(e, key, "read") from e
            finally:
                os.close(fd)
            if blob is not None:
                return blob
        raise FsError(
            ErrorCode.FS_BACKEND,
            f"/{key} kept changing while it was read; nothing was changed. Retry later.",
            path=key,
        )

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> _LocalStream:
        fd, st = self._open(key)
        path = self.path(key)

        def done(st_: os.stat_result, version: Version, started: int) -> None:
            self._cache.put(path, st_, version, started)

        return _LocalStream(fd, st, self._cache.get(path, st), chunk_size, done)

    def stat(self, key: str) -> Stat:
        if not key:
            return Stat(key=key, kind="directory")
        dfd, name = self._walk(key, "stat")
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError as e:
            raise map_os_error(e, key, "stat") from e
        finally:
            os.close(dfd)
        if stat_mod.S_ISLNK(st.st_mode):
            raise _outside(key)
        if stat_mod.S_ISDIR(st.st_mode):
            return Stat(key=key, kind="directory")
        return Stat(key=key, kind="file", size=st.st_size)

    def list(self, key: str) -> list[Entry]:
        dfd, name = self._walk(key, "list")
        try:
            if name:
                try:
                    fd = os.open(
                        name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                        dir_fd=dfd,
                    )
                except NotADirectoryError as e:
                    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                    if stat_mod.S_ISLNK(st.st_mode):
                        raise _outside(key) from e
                    raise FsError(
                        ErrorCode.FS_INVALID_ARGUMENT,
                        f"/{key} is a file, not a directory. Read it instead.",
                        path=key,
                    ) from e
            else:
                fd = os.dup(dfd)
            entries = []
            with os.scandir(fd) as it:
                for d in it:
                    try:
                        is_dir = d.is_dir()
                        size = None if is_dir else d.stat().st_size
                    except OSError:
                        is_dir, size = False, None  # dangling link: show it as a file
                    child = f"{key}/{d.name}" if key else d.name
                    entries.append(
                        Entry(key=child, name=d.name, kind="directory" if is_dir else "file",
                              size=size)
                    )
            os.close(fd)
        except FsError:
            raise
        except OSError as e:
            raise map_os_error(e, key, "list") from e
        finally:
            os.close(dfd)
        return sorted(entries, key=lambda e: e.name)

    # -- writes ------------------------------------------------------------
    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        if not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, "/ is the workspace root directory.")
        dfd, name = self._walk(key, "write", create=True)
        try:
            fcntl.flock(dfd, fcntl.LOCK_EX)
            try:
                st: os.stat_result | None = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                st = None
            except OSError as e:
                raise map_os_error(e, key, "write") from e
            if st is not None and stat_mod.S_ISLNK(st.st_mode):
                raise _outside(key)
            if st is not None and stat_mod.S_ISDIR(st.st_mode):
                raise map_os_error(IsADirectoryError(key), key, "write")
            if not isinstance(precondition, Overwrite):
                current = self._current_at(dfd, name, key) if st is not None else None
                check_precondition(key, precondition, current)
            mode = stat_mod.S_IMODE(st.st_mode) if st is not None else None
            self._publish(dfd, key, name, data, mode, isinstance(precondition, CreateOnly))
        finally:
            os.close(dfd)  # closing the descriptor releases the flock
        return digest_version(data)

    def _current_at(self, dfd: int, name: str, key: str) -> Version | None:
        """The version on disk now (we hold the directory lock)."""
        for _ in range(5):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW, dir_fd=dfd)
            except FileNotFoundError:
                return None
            except OSError as e:
                raise map_os_error(e, key, "write") from e
            try:
                blob = self._read_fd(fd, os.fstat(fd), key)
            except OSError as e:
                raise map_os_error(e, key, "write") from e
            finally:
                os.close(fd)
            if blob is not None:
                return blob.version
        raise FsError(
            ErrorCode.FS_BACKEND,
            f"/{key} kept changing while it was checked; nothing was changed. Retry later.",
            path=key,
        )

    def _sweep_orphans(self, dfd: int, parent: str) -> None:
        """Remove temp files of writers killed mid-write, once per directory per backend.

        Called under the exclusive directory lock, so no live fsseam writer owns a temp file
        here; any found was left by a crash (and can be large, or a second hard link).
        """
        if parent in self._swept:
            return
        self._swept.add(parent)
        with contextlib.suppress(OSError), os.scandir(dfd) as it:
            for entry in it:
                if entry.name.startswith(".") and TEMP_MARK in entry.name and \
                        entry.name.endswith(".tmp"):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.name, dir_fd=dfd)

    def _publish(self, dfd: int, key: str, name: str, data: bytes, mode: int | None,
                 create_only: bool) -> None:
        self._sweep_orphans(dfd, os.path.dirname(key))
        tmp = f".{name}{TEMP_MARK}{secrets.token_hex(6)}.tmp"
        try:
            try:
                fd = os.open(
                    tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666, dir_fd=dfd
                )
            except OSError as e:
                raise map_os_error(e, key, "write") from e
            try:
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]
                os.fchmod(fd, mode if mode is not None else 0o666 & ~_process_umask())
                os.fsync(fd)
            except OSError as e:
                raise map_os_error(e, key, "write") from e
            finally:
                os.close(fd)
            try:
                if create_only:
                    self._link_create(dfd, key, tmp, name)
                else:
                    os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            except FsError:
                raise
            except OSError as e:
                raise map_os_error(e, key, "write") from e
            with contextlib.suppress(OSError):
                os.fsync(dfd)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp, dir_fd=dfd)

    @staticmethod
    def _link_create(dfd: int, key: str, tmp: str, name: str) -> None:
        try:
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        except FileExistsError as e:
            raise Conflict("exists", f"/{key} already exists.", path=key) from e
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            # No hard links here (FAT, some network mounts): we hold the directory lock,
            # so check-then-rename excludes every fsseam writer.
            try:
                os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
                return
            raise Conflict("exists", f"/{key} already exists.", path=key) from e

    def delete(self, key: str) -> None:
        if not key:
            raise map_os_error(IsADirectoryError(key), key, "delete")
        dfd, name = self._walk(key, "delete")
        try:
            fcntl.flock(dfd, fcntl.LOCK_EX)
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            if stat_mod.S_ISDIR(st.st_mode):
                raise map_os_error(IsADirectoryError(key), key, "delete")
            os.unlink(name, dir_fd=dfd)
        except FsError:
            raise
        except OSError as e:
            raise map_os_error(e, key, "delete") from e
        finally:
            os.close(dfd)
