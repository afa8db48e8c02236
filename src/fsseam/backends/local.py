"""Local disk: content-digest versions, and a compare-and-swap that survives crashes.

Why a digest and not (mtime, size, inode): all three repeat (one clock tick for many writes,
same-size rewrites, inode numbers reused at once after ``os.replace``). The stat cache only
spares re-hashing a file whose stat signature (which includes ctime, so ``os.utime`` cannot
hide a change) is unchanged and was already old when it was hashed, as git treats "racy"
index entries.

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
        while True:
            chunk = os.read(self._fd, self._chunk_size)
            if not chunk:
                break
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

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> LocalBackend:
        path = LocalFileSystem._strip_protocol(url)
        return cls(os.path.abspath(path))

    # -- paths -------------------------------------------------------------
    def path(self, key: str) -> str:
        return os.path.join(self.root, key) if key else self.root

    def native_key(self, path: str) -> str | None:
        """The part below the root of a real absolute path under it (None otherwise), so a
        model may use the paths it sees elsewhere on this machine."""
        for base in (self.root, self._given):
            if path == base:
                return ""
            if path.startswith(base + os.sep):
                return path[len(base) + 1 :]
        return None

    def resolve(self, key: str) -> str:
        real = os.path.realpath(self.path(key))
        if real == self.root:
            return ""
        if not real.startswith(self.root + os.sep):
            raise FsError(
                ErrorCode.FS_OUTSIDE_ROOT,
                f"/{key} leads outside the workspace (through a symbolic link). Only paths "
                "inside the workspace can be used.",
                path=key,
            )
        return real[len(self.root) + 1 :]

    # -- reads -------------------------------------------------------------
    def _open(self, key: str) -> tuple[int, os.stat_result]:
        path = self.path(key)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except OSError as e:
            raise map_os_error(e, key, "read") from e
        st = os.fstat(fd)
        if stat_mod.S_ISDIR(st.st_mode):
            os.close(fd)
            raise map_os_error(IsADirectoryError(key), key, "read")
        return fd, st

    def read(self, key: str) -> Blob:
        for _ in range(5):
            fd, st = self._open(key)
            try:
                started = time.time_ns()
                parts = []
                while True:
                    chunk = os.read(fd, max(st.st_size, 1 << 16) + 1)
                    if not chunk:
                        break
                    parts.append(chunk)
                after = os.fstat(fd)
            except OSError as e:
                raise map_os_error(e, key, "read") from e
            finally:
                os.close(fd)
            data = b"".join(parts)
            if _sig(after) != _sig(st):
                continue  # written in place while we read: read again
            version = self._cache.get(self.path(key), st)
            if version is None:
                version = digest_version(data)
                self._cache.put(self.path(key), st, version, started)
            return Blob(data=data, version=version)
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

    def _current(self, key: str) -> Version | None:
        try:
            return self.read(key).version
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise

    def stat(self, key: str) -> Stat:
        try:
            st = os.stat(self.path(key))
        except OSError as e:
            raise map_os_error(e, key, "stat") from e
        if stat_mod.S_ISDIR(st.st_mode):
            return Stat(key=key, kind="directory")
        return Stat(key=key, kind="file", size=st.st_size)

    def list(self, key: str) -> list[Entry]:
        path = self.path(key)
        try:
            with os.scandir(path) as it:
                entries = []
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
        except NotADirectoryError as e:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                f"/{key} is a file, not a directory. Read it instead.",
                path=key,
            ) from e
        except OSError as e:
            raise map_os_error(e, key, "list") from e
        return sorted(entries, key=lambda e: e.name)

    # -- writes ------------------------------------------------------------
    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        if not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, "/ is the workspace root directory.")
        path = self.path(key)
        parent = os.path.dirname(path)
        try:
            os.makedirs(parent, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as e:
            raise map_os_error(NotADirectoryError(key), key, "write") from e
        except OSError as e:
            raise map_os_error(e, key, "write") from e
        with self._dir_lock(parent, key):
            try:
                st: os.stat_result | None = os.stat(path)
            except FileNotFoundError:
                st = None
            except OSError as e:
                raise map_os_error(e, key, "write") from e
            if st is not None and stat_mod.S_ISDIR(st.st_mode):
                raise map_os_error(IsADirectoryError(key), key, "write")
            if not isinstance(precondition, Overwrite):
                check_precondition(key, precondition, self._current(key))
            mode = stat_mod.S_IMODE(st.st_mode) if st is not None else None
            self._publish(key, path, parent, data, mode, isinstance(precondition, CreateOnly))
        return digest_version(data)

    def _publish(self, key: str, path: str, parent: str, data: bytes, mode: int | None,
                 create_only: bool) -> None:
        tmp = os.path.join(
            parent, f".{os.path.basename(path)}{TEMP_MARK}{secrets.token_hex(6)}.tmp"
        )
        try:
            try:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
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
                    self._link_create(key, tmp, path)
                else:
                    os.replace(tmp, path)
            except FsError:
                raise
            except OSError as e:
                raise map_os_error(e, key, "write") from e
            self._fsync_dir(parent)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)

    def _link_create(self, key: str, tmp: str, path: str) -> None:
        try:
            os.link(tmp, path)
        except FileExistsError as e:
            raise Conflict("exists", f"/{key} already exists.", path=key) from e
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            # No hard links here (FAT, some network mounts): we hold the directory lock,
            # so check-then-rename excludes every fsseam writer.
            if os.path.lexists(path):
                raise Conflict("exists", f"/{key} already exists.", path=key) from e
            os.replace(tmp, path)

    @staticmethod
    def _fsync_dir(parent: str) -> None:
        try:
            dfd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return
        try:
            os.fsync(dfd)
        except OSError:
            pass
        finally:
            os.close(dfd)

    def _dir_lock(self, parent: str, key: str) -> _DirLock:
        return _DirLock(parent, key)

    def delete(self, key: str) -> None:
        path = self.path(key)
        with self._dir_lock(os.path.dirname(path), key):
            try:
                if os.path.isdir(path):
                    raise map_os_error(IsADirectoryError(key), key, "delete")
                os.unlink(path)
            except OSError as e:
                raise map_os_error(e, key, "delete") from e


class _DirLock:
    """An exclusive flock on a directory: serialises fsseam writers across processes."""

    def __init__(self, parent: str, key: str) -> None:
        self._parent = parent
        self._key = key
        self._fd = -1

    def __enter__(self) -> _DirLock:
        try:
            self._fd = os.open(self._parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as e:
            raise map_os_error(e, self._key, "write") from e
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
