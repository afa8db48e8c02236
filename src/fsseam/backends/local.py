"""Local disk: content-digest versions, and a compare-and-swap that survives crashes.

Why a digest and not (mtime, size, inode): all three repeat (one clock tick for many writes,
same-size rewrites, inode numbers reused at once after ``os.replace``). The stat cache only
spares re-hashing a file whose stat signature (which includes ctime, so ``os.utime`` cannot
hide a change) is unchanged and was already old when it was hashed, as git treats "racy"
index entries.

Every operation walks from the root to the parent directory one component at a time with
``O_NOFOLLOW`` directory descriptors and acts relative to them, so a directory swapped for
a symlink after the seam checked the path cannot lead a read or a write outside the root.
Only regular files are opened, and never in a way that can block: a FIFO or a device is
refused from its ``lstat``, before any ``open``.

A write first prepares its bytes: a temp file in the same directory, written and fsynced
with no lock held. Only then does it take an exclusive ``flock`` on the parent directory
(no lock files left around), re-check the precondition against the digest of what is on
disk, check that the file did not change since that digest (same stat signature), and
publish at once with ``os.replace`` (update) or ``os.link`` (create-only, which fails if
the name exists). So the span in which a writer that does not take the lock can be
overwritten is the few system calls between that last check and the rename, not the time
to write and fsync the data. A writer killed at any point leaves the old or the new bytes
at the path, never a mix.

Temp files are named ``.NAME.fsseam-<nonce><tag>.tmp``, where the tag is a keyed digest of
the nonce and the name, and each is ``flock``-ed by its writer while it lives. The sweep of
temp files left by killed writers removes only names whose tag checks and whose lock is
free, so it never removes a user's file nor a live writer's temp file; fsseam refuses to
create a file under such a name.
"""

from __future__ import annotations

import builtins
import contextlib
import errno
import fcntl
import hashlib
import hmac
import os
import re
import secrets
import stat as stat_mod
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from fsspec.implementations.local import LocalFileSystem

from ..errors import Conflict, ErrorCode, FsError
from ..messages import Part
from ..oserrors import map_os_error, mapped
from ..paths import MAX_PATH_DEPTH, display
from ..versions import Capabilities, CreateOnly, IfMatch, Precondition, Version
from ._digest import KnownDigests, digest_version, hasher, version_of
from ._fsspec import check_precondition
from .base import ANY_VERSION, Blob, Entry, Stat, VersionInfo

# Files modified this recently before they were hashed are not trusted from the cache:
# coarse clocks and FAT/NFS stamp several writes within one tick with one mtime.
RACY_WINDOW_NS = 2_000_000_000  # module default; tests may lower it
TEMP_MARK = ".fsseam-"
HASH_CHUNK = 1 << 20

_TEMP_KEY = b"fsseam temp file v1"
_TEMP_RE = re.compile(r"\.(.*)\.fsseam-([0-9a-f]{16})([0-9a-f]{16})\.tmp", re.DOTALL)
_TEMP_NAME_BYTES = 100
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
_READ_FLAGS = os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK

_Sig = tuple[int, int, int, int, int]
_S_ISREG = stat_mod.S_ISREG


def _sig(st: os.stat_result) -> _Sig:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _is_dir(d: os.DirEntry[str]) -> bool:
    """A directory, not through a link (from the entry's type; an entry removed meanwhile
    is not one)."""
    try:
        return d.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _temp_tag(nonce: str, stem: str) -> str:
    msg = f"{nonce}/{stem}".encode("utf-8", "surrogateescape")
    return hmac.new(_TEMP_KEY, msg, hashlib.sha256).hexdigest()[:16]


def _temp_name(name: str) -> str:
    """A fresh temp name for ``name``: hidden, unguessable, and recognisable as ours."""
    raw = os.fsencode(name)
    # A name near NAME_MAX would make the temp name too long: keep a prefix of it.
    stem = os.fsdecode(raw[:_TEMP_NAME_BYTES]) if len(raw) > _TEMP_NAME_BYTES else name
    nonce = secrets.token_hex(8)
    return f".{stem}{TEMP_MARK}{nonce}{_temp_tag(nonce, stem)}.tmp"


def is_temp_name(name: str) -> bool:
    """True for names this backend generates for its temp files (the tag checks)."""
    m = _TEMP_RE.fullmatch(name)
    return m is not None and hmac.compare_digest(m.group(3), _temp_tag(m.group(2), m.group(1)))


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


def _changed_while_read(key: str) -> FsError:
    return FsError(ErrorCode.FS_STALE, path=display(key), reason="changed_while_read")


def _kept_changing(key: str, doing: str) -> FsError:
    return FsError(
        ErrorCode.FS_BACKEND, path=display(key), reason="kept_changing", details={"doing": doing}
    )


def _root_is_directory() -> FsError:
    return FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason="root_is_directory")


class _LocalStream:
    def __init__(self, fd: int, st: os.stat_result, cached: Version | None, chunk_size: int,
                 key: str, on_done: Any, known: KnownDigests) -> None:
        self._fd = fd
        self._st = st
        self._chunk_size = chunk_size
        self._version = cached
        self._key = key
        self._on_done = on_done
        self._known = known
        self.size: int | None = st.st_size

    @property
    def version(self) -> Version | None:
        return self._version

    def chunks(self) -> Iterator[bytes]:
        # No version from the stat cache: a file small enough to keep is compared whole with
        # the bytes last read or written here (digested only if they differ); a bigger one
        # is hashed as it passes.
        kept: list[bytes] | None = None
        h = None
        if self._version is None:
            if self._known.keeps(self._st.st_size):
                kept = []
            else:
                h = hasher()
        started = time.time_ns()
        seen = 0
        sig = _sig(self._st)
        while True:
            # os.read allocates the full request up front: ask for what the file holds (plus
            # slack for growth), not a 64 MiB edit-sized chunk for an 80 KB file.
            want = min(self._chunk_size, max(self._st.st_size - seen, 0) + (1 << 16))
            with mapped(self._key, "read"):
                chunk = os.read(self._fd, want)
                unchanged = self._version is None or _sig(os.fstat(self._fd)) == sig
            if not unchanged:
                # The version came from the stat cache: it names these bytes only while the
                # file is untouched. Checked before every chunk is handed out, so a reader
                # that stops early has only verified bytes too.
                raise _changed_while_read(self._key)
            if not chunk:
                break
            seen += len(chunk)
            if h is not None:
                h.update(chunk)
            elif kept is not None:
                kept.append(chunk)
            yield chunk
        if h is not None or kept is not None:
            if kept is not None:
                data = kept[0] if len(kept) == 1 else b"".join(kept)
                self._version = self._known.version(self._key, data)
            else:
                assert h is not None
                self._version = version_of(h)
            with mapped(self._key, "read"):
                if _sig(os.fstat(self._fd)) == sig:
                    self._on_done(self._st, self._version, started)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def _outside(key: str) -> FsError:
    return FsError(ErrorCode.FS_OUTSIDE_ROOT, path=display(key), reason="path_symlink_escapes")


_KINDS = {
    stat_mod.S_IFIFO: Part("_fifo"),
    stat_mod.S_IFCHR: Part("_char_device"),
    stat_mod.S_IFBLK: Part("_block_device"),
    stat_mod.S_IFSOCK: Part("_socket"),
}


def _special(key: str, mode: int) -> FsError:
    kind = _KINDS.get(stat_mod.S_IFMT(mode), Part("_special"))
    return FsError(
        ErrorCode.FS_UNSUPPORTED, path=display(key), reason="special_file", details={"kind": kind}
    )


def _check_kind(key: str, st: os.stat_result) -> None:
    """Refuse a symlink (only a swap after ``resolve`` can put one here), a directory, and
    anything that is not a regular file."""
    mode = st.st_mode
    if stat_mod.S_ISREG(mode):
        return
    if stat_mod.S_ISLNK(mode):
        raise _outside(key)
    if stat_mod.S_ISDIR(mode):
        raise map_os_error(IsADirectoryError(key), key, "use")
    raise _special(key, mode)


def _process_umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def _lstat(dfd: int, name: str) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=dfd, follow_symlinks=False)
    except FileNotFoundError:
        return None


def _check_writable(dfd: int, name: str, st: os.stat_result, key: str, action: str) -> bool:
    """Respect a write-protected file: renaming over it needs only the directory's write
    permission, and root bypasses the file's mode, so both would replace a 0444 file.

    False when ``name`` is no longer the entry ``st`` describes (moved away, deleted or
    replaced since that lstat): the caller decides again on what is there now. Access is
    asked by name, so a vanished file is "not writable" to the kernel; that is a change
    under us, never a mode to report."""
    if st.st_mode & 0o222 and os.access(
        name, os.W_OK, dir_fd=dfd, effective_ids=True, follow_symlinks=False
    ):
        return True
    now = _lstat(dfd, name)
    if now is None or _sig(now) != _sig(st):
        return False
    if os.fstatvfs(dfd).f_flag & os.ST_RDONLY:
        raise map_os_error(OSError(errno.EROFS, os.strerror(errno.EROFS)), key, action)
    raise FsError(
        ErrorCode.FS_PERMISSION_DENIED,
        path=display(key),
        reason="write_protected",
        details={"mode": f"{stat_mod.S_IMODE(st.st_mode):04o}", "action": action},
    )


def _keep_owner_and_mode(tfd: int, old: os.stat_result | None) -> None:
    """Give the temp file the replaced file's owner, group and mode where this process may.

    A file whose owner (or group) could not be kept loses its setuid (or setgid) bit: the
    bit must never grant the privileges of a new owner.
    """
    if old is None:
        os.fchmod(tfd, 0o666 & ~_process_umask())
        return
    mine = os.fstat(tfd)
    if (mine.st_uid, mine.st_gid) != (old.st_uid, old.st_gid):
        try:
            os.fchown(tfd, old.st_uid, old.st_gid)
        except PermissionError:
            # Not root: the group may still be kept when this user is a member of it.
            with contextlib.suppress(PermissionError):
                os.fchown(tfd, -1, old.st_gid)
        mine = os.fstat(tfd)
    mode = stat_mod.S_IMODE(old.st_mode)
    if mine.st_uid != old.st_uid:
        mode &= ~(stat_mod.S_ISUID | stat_mod.S_ISGID)
    if mine.st_gid != old.st_gid:
        mode &= ~stat_mod.S_ISGID
    # After fchown: the kernel clears setuid/setgid on chown, so the mode is set last.
    os.fchmod(tfd, mode)


def _meta(st: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if st is None else (st.st_uid, st.st_gid, stat_mod.S_IMODE(st.st_mode))


class _DirGone(Exception):
    """The parent directory was removed after we opened it (a failed writer's cleanup)."""


class _Temp:
    """A temp file being prepared in a directory: created under a shared directory lock and
    flock-ed at once, so a sweep (which holds the exclusive lock) never sees it unlocked."""

    def __init__(self, dfd: int, name: str, key: str) -> None:
        self.dfd = dfd
        self.name = _temp_name(name)
        self.fd = -1
        fcntl.flock(dfd, fcntl.LOCK_SH)
        try:
            try:
                self.fd = os.open(
                    self.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                    dir_fd=dfd,
                )
            except FileNotFoundError as e:
                raise _DirGone() from e
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except BaseException:
            self.discard()
            raise
        finally:
            fcntl.flock(dfd, fcntl.LOCK_UN)

    def write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.fd, view)
            view = view[n:]

    def discard(self) -> None:
        """Remove the temp file (if it is still there) and close it; never raises."""
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.unlink(self.name, dir_fd=self.dfd)
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


class LocalBackend:
    capabilities = Capabilities(
        create_only_atomic=True,
        if_match_atomic=True,
        version_kind="sha256",
        ranged_reads=True,
        delete_if_match_atomic=True,
        copy_create_only_atomic=True,
        history=False,
        note="fsync'd temp file, then flock on the parent directory + digest re-check + "
        "rename/link",
    )

    def __init__(self, root: str) -> None:
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            raise FsError(
                ErrorCode.FS_NOT_FOUND, reason="root_not_directory", details={"root": root}
            )
        self.root = real
        self._root_slash = real.rstrip(os.sep) + os.sep
        self._given = os.path.abspath(root)
        self._cache = _StatCache()
        self._known = KnownDigests()
        self._swept: set[str] = set()

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> LocalBackend:
        path = LocalFileSystem._strip_protocol(url)
        return cls(os.path.abspath(path))

    # -- paths -------------------------------------------------------------
    def path(self, key: str) -> str:
        # Keys are canonical and relative: joining is concatenation.
        return f"{self._root_slash}{key}" if key else self.root

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

    def _realpath(self, key: str, strict: bool = False) -> str:
        # realpath lstat()s, then readlink()s: a link replaced in between makes it raise
        # (EINVAL, ENOENT). Another try sees the new state.
        for attempt in range(20):
            try:
                return os.path.realpath(self.path(key), strict=strict)
            except OSError as e:
                if strict or attempt == 19:
                    raise map_os_error(e, key, "resolve") from e
        raise AssertionError("unreachable")  # pragma: no cover

    def resolve(self, key: str) -> str:
        below = self._below(self._realpath(key), self.root)
        if below is None:
            raise _outside(key)
        return below

    def _link_target(self, key: str) -> str | None:
        """The canonical key a symlink at ``key`` points to, if that exists inside the root."""
        try:
            real = self._realpath(key, strict=True)
        except FsError:
            return None  # dangling, a loop, or gone meanwhile
        return self._below(real, self.root)

    # -- descriptor walk ---------------------------------------------------
    def _walk(
        self, key: str, action: str, created: list[tuple[int, str]] | None = None
    ) -> tuple[int, str]:
        """An O_NOFOLLOW descriptor of the parent directory of ``key``, and the last name.

        With ``created`` (a list), missing directories are made on the way and recorded as
        (descriptor of their parent, name), so a failed write can remove them again. A
        symlink met on the way (the key is canonical, so one can only appear by a swap after
        ``resolve``) is FS_OUTSIDE_ROOT. The caller closes the descriptor.
        """
        parts = key.split("/") if key else []
        with mapped(key, action):
            fd = os.open(self.root, _DIR_FLAGS)
        try:
            with mapped(key, action):
                for i, part in enumerate(parts[:-1]):
                    while True:
                        try:
                            nfd = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                            break
                        except FileNotFoundError:
                            if created is None:
                                raise
                            try:
                                os.mkdir(part, 0o777, dir_fd=fd)
                            except FileExistsError:
                                continue
                            created.append((os.dup(fd), part))
                        except (NotADirectoryError, OSError) as e:
                            if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                                raise
                            st = os.stat(part, dir_fd=fd, follow_symlinks=False)
                            if stat_mod.S_ISLNK(st.st_mode):
                                raise _outside("/".join(parts[: i + 1])) from e
                            raise NotADirectoryError(errno.ENOTDIR, "Not a directory") from e
                    os.close(fd)
                    fd = nfd
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1] if parts else ""

    @staticmethod
    def _undo_dirs(created: list[tuple[int, str]], keep: bool) -> None:
        """Close the records of directories made by ``_walk``; unless ``keep``, remove them
        (innermost first, and only while empty: another writer may be using one)."""
        for pfd, name in reversed(created):
            if not keep:
                with contextlib.suppress(OSError):
                    os.rmdir(name, dir_fd=pfd)
            os.close(pfd)
        created.clear()

    # -- reads -------------------------------------------------------------
    def _open(self, key: str, action: str = "read") -> tuple[int, os.stat_result]:
        """A read-only descriptor of the regular file ``key`` and its stat.

        The kind is checked from ``lstat`` before opening, and the open itself cannot block
        (O_NONBLOCK), so a FIFO or a device is never waited on.
        """
        if not key:
            raise map_os_error(IsADirectoryError(key), key, action)
        dfd, name = self._walk(key, action)
        try:
            with mapped(key, action):
                pre = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                _check_kind(key, pre)
                try:
                    fd = os.open(name, _READ_FLAGS, dir_fd=dfd)
                except OSError as e:
                    if e.errno == errno.ELOOP:
                        raise _outside(key) from e
                    raise
        finally:
            os.close(dfd)
        try:
            with mapped(key, action):
                st = os.fstat(fd)
                _check_kind(key, st)  # swapped between the lstat and the open
        except BaseException:
            os.close(fd)
            raise
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
            version = self._known.version(key, data)
            self._cache.put(path, st, version, started)
        return Blob(data=data, version=version)

    def _digest_fd(self, fd: int, st: os.stat_result, key: str) -> Version | None:
        """The version of an open file, from the cache, from a comparison with the bytes
        last read or written here (a small file, read whole), or hashed in chunks (never
        held whole in memory); None if it changed meanwhile."""
        path = self.path(key)
        cached = self._cache.get(path, st)
        if cached is not None:
            return cached
        started = time.time_ns()
        if self._known.keeps(st.st_size):
            parts = []
            while True:
                chunk = os.read(fd, max(st.st_size, 1 << 16) + 1)
                if not chunk:
                    break
                parts.append(chunk)
            if _sig(os.fstat(fd)) != _sig(st):
                return None
            version = self._known.version(key, b"".join(parts))
        else:
            h = hasher()
            while True:
                chunk = os.read(fd, HASH_CHUNK)
                if not chunk:
                    break
                h.update(chunk)
            if _sig(os.fstat(fd)) != _sig(st):
                return None
            version = version_of(h)
        self._cache.put(path, st, version, started)
        return version

    def read(self, key: str) -> Blob:
        for _ in range(5):
            fd, st = self._open(key)
            try:
                with mapped(key, "read"):
                    blob = self._read_fd(fd, st, key)
            finally:
                os.close(fd)
            if blob is not None:
                return blob
        raise _kept_changing(key, "read")

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        """Whole files, in the order given. Consecutive files of one directory share one
        descriptor of it: a search reads thousands of small files, and walking each path
        from the root again costs more than reading the file."""
        for entry, got in self.read_many_unhashed(entries):
            if isinstance(got, bytes):
                yield entry, Blob(data=got, version=digest_version(got))
            else:
                yield entry, got

    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, bytes | FsError]]:
        """``read_many`` without the versions: each file's bytes, read whole and unchanged
        while read, whose version is their ``digest_version``. A search that shows few of
        the files it reads hashes only those (sha256 and its Version cost more than the
        read of a small file)."""
        dir_key: str | None = None
        dfd = -1
        try:
            for entry in entries:
                parent, _, name = entry.key.rpartition("/")
                if parent != dir_key:
                    if dfd >= 0:
                        os.close(dfd)
                        dfd = -1
                    dir_key = parent
                    try:
                        dfd = self._open_dir(parent, "read")
                    except FsError as err:
                        dir_key = None
                        yield entry, err
                        continue
                try:
                    yield entry, self._read_in(dfd, entry.key, name)[0]
                except FsError as err:
                    yield entry, err
        finally:
            if dfd >= 0:
                os.close(dfd)

    def _read_in(
        self, dfd: int, key: str, name: str, regular: bool = False, max_bytes: int = -1,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> tuple[bytes, bool]:
        """``read`` of a file whose directory is already open (``dfd``), without its
        version; the lean path of a search, which reads thousands of small files: no stat
        cache (a file read once is hashed anyway), one read when the size holds.

        ``regular``: the caller's directory entry has just said this is a regular file, so
        no ``lstat`` is taken before the open (a file swapped since is met by the open's
        O_NOFOLLOW | O_NONBLOCK and the ``fstat`` after it, as after an ``lstat``). A file
        over ``max_bytes`` (when not -1) is not read: FS_TOO_LARGE.

        ``wanted``: whether these bytes matter to the caller, asked while the file is still
        open; only then is it checked not to have changed while read (and read again if
        it did). Returns the bytes and that answer (True without ``wanted``)."""
        for _ in range(5):
            try:
                # S_ISREG inline: the call to _check_kind costs more than the test, and
                # nearly every file of a search is regular.
                if not regular:
                    pre = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                    if not _S_ISREG(pre.st_mode):
                        _check_kind(key, pre)
                try:
                    fd = os.open(name, _READ_FLAGS, dir_fd=dfd)
                except OSError as e:
                    if e.errno == errno.ELOOP:
                        raise _outside(key) from e
                    raise
                try:
                    st = os.fstat(fd)
                    if not _S_ISREG(st.st_mode):
                        _check_kind(key, st)
                    if st.st_size > max_bytes >= 0:
                        raise FsError(ErrorCode.FS_TOO_LARGE, path=display(key),
                                      reason="edit_too_large",
                                      details={"size": st.st_size, "cap": max_bytes})
                    data = os.read(fd, st.st_size + 1)
                    if len(data) > st.st_size:  # it grew: read to the end
                        parts = [data]
                        while parts[-1]:
                            parts.append(os.read(fd, 1 << 16))
                        data = b"".join(parts)
                    keep = wanted is None or wanted(data)
                    # The descriptor's file (dev, ino) cannot change: its times and size
                    # say whether it was written while read.
                    after = os.fstat(fd) if keep else st
                    same = (after.st_ctime_ns == st.st_ctime_ns
                            and after.st_mtime_ns == st.st_mtime_ns
                            and after.st_size == st.st_size)
                finally:
                    os.close(fd)
            except OSError as e:
                raise map_os_error(e, key, "read") from e
            if same:
                return data, keep
        raise _kept_changing(key, "read")

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> _LocalStream:
        fd, st = self._open(key)
        path = self.path(key)

        def done(st_: os.stat_result, version: Version, started: int) -> None:
            self._cache.put(path, st_, version, started)

        return _LocalStream(fd, st, self._cache.get(path, st), chunk_size, key, done,
                            self._known)

    def stat(self, key: str) -> Stat:
        if not key:
            return Stat(key=key, kind="directory")
        dfd, name = self._walk(key, "stat")
        try:
            with mapped(key, "stat"):
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        finally:
            os.close(dfd)
        if stat_mod.S_ISLNK(st.st_mode):
            raise _outside(key)
        if stat_mod.S_ISDIR(st.st_mode):
            return Stat(key=key, kind="directory")
        return Stat(key=key, kind="file", size=st.st_size)

    def _open_dir(self, key: str, action: str) -> int:
        """An O_NOFOLLOW descriptor of the directory ``key`` (the caller closes it)."""
        dfd, name = self._walk(key, action)
        try:
            with mapped(key, action):
                if not name:
                    return os.dup(dfd)
                try:
                    return os.open(name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=dfd)
                except OSError as e:
                    if e.errno not in (errno.ENOTDIR, errno.ELOOP):
                        raise
                    st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
                    if stat_mod.S_ISLNK(st.st_mode):
                        raise _outside(key) from e
                    raise FsError(
                        ErrorCode.FS_INVALID_ARGUMENT, path=display(key), reason="not_directory"
                    ) from e
        finally:
            os.close(dfd)

    def _entry(self, child: str, d: os.DirEntry[str]) -> Entry:
        """The directory entry ``d`` of the key ``child``, links reported as links (never
        followed)."""
        try:
            if d.is_symlink():
                return Entry(key=child, name=d.name, kind="symlink",
                             target=self._link_target(child))
            if d.is_dir(follow_symlinks=False):
                return Entry(key=child, name=d.name, kind="directory")
            st = d.stat(follow_symlinks=False)
            size = st.st_size if stat_mod.S_ISREG(st.st_mode) else None
        except OSError:
            size = None  # removed while listed
        return Entry(key=child, name=d.name, kind="file", size=size)

    def list(self, key: str) -> list[Entry]:
        return sorted(self.list_lazy(key), key=lambda e: e.name)

    def list_lazy(self, key: str) -> Iterator[Entry]:
        """The children of ``key`` in the directory's own order, one entry per
        ``readdir`` result as it comes (the directory stays open until the last)."""
        fd = self._open_dir(key, "list")
        try:
            with mapped(key, "list"), os.scandir(fd) as it:
                for d in it:
                    yield self._entry(f"{key}/{d.name}" if key else d.name, d)
        finally:
            os.close(fd)

    def walk(self, key: str) -> Iterator[Entry]:
        """Every file below ``key`` in ascending key order, by descriptors that never follow
        a link nor leave the root; directories deeper than paths may go are not entered, and
        one that cannot be opened (no permission, removed meanwhile) is skipped."""
        for _, child, d in self._walk_dirents(key):
            yield self._entry(child, d)

    def read_tree_unhashed(
        self, key: str, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]]:
        """The walk and ``read_many_unhashed`` of its files in one pass, for a search: the
        key and bytes (or the FsError) of each file below ``key`` that ``accept`` takes, in
        the walk's order, and whether ``wanted`` took those bytes; symlinks are left out,
        as a search leaves them. Each file is opened in the directory the walk holds open,
        and a directory entry that says "regular file" stands for the ``lstat`` that
        ``walk`` and ``read`` would each take. A file over ``max_bytes`` is not read
        (FS_TOO_LARGE).

        Only the bytes ``wanted`` takes (all, without it) are checked not to have changed
        while read: a search needs that of the files it may show, whose version it
        records, and a file that a writer changes during the search may be searched before
        or after the change either way. Of the five system calls a small file costs here,
        that check is one, as each ``lstat`` saved would be."""
        for dfd, child, d in self._walk_dirents(key):
            try:
                regular = d.is_file(follow_symlinks=False)
                if not regular and d.is_symlink():
                    continue
            except OSError:
                regular = False  # the lstat in _read_in says what became of it
            if not accept(child):
                continue
            try:
                data, keep = self._read_in(dfd, child, d.name, regular, max_bytes, wanted)
            except FsError as err:
                yield child, err, False
                continue
            yield child, data, keep

    def _walk_dirents(self, key: str) -> Iterator[tuple[int, str, os.DirEntry[str]]]:
        """The walk's order and rules, as directory entries: each entry that is not a
        directory, with its key and a descriptor of its directory (open while the entry
        is yielded)."""
        def sorted_dirents(fd: int, prefix: str) -> Iterator[tuple[str, os.DirEntry[str], bool]]:
            with mapped(prefix, "walk"), os.scandir(fd) as it:
                found = [(f"{prefix}/{d.name}" if prefix else d.name, d, _is_dir(d))
                         for d in it]
            # Keys sort as strings: everything below "a" starts with "a/", which sorts
            # after "a.txt" and "a-b" but before "a0"; so a directory sorts as name + "/".
            found.sort(key=lambda f: f[0] + "/" if f[2] else f[0])
            return iter(found)

        # A generator: the top directory is opened at the first next(), so a walk that is
        # never iterated holds no descriptor.
        top = self._open_dir(key, "walk")
        try:
            first = sorted_dirents(top, key)
        except BaseException:
            os.close(top)
            raise
        stack: list[tuple[int, Iterator[tuple[str, os.DirEntry[str], bool]]]] = [(top, first)]
        try:
            while stack:
                fd, it = stack[-1]
                for child, d, is_dir in it:
                    if not is_dir:
                        yield fd, child, d
                        continue
                    if child.count("/") + 1 >= MAX_PATH_DEPTH:
                        continue
                    try:
                        sub = os.open(d.name, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
                    except OSError:
                        continue
                    try:
                        children = sorted_dirents(sub, child)
                    except FsError:
                        os.close(sub)
                        continue
                    stack.append((sub, children))
                    break  # into it; this directory's iterator resumes after it
                else:
                    os.close(fd)
                    stack.pop()
        finally:
            for fd, _ in stack:
                os.close(fd)

    # -- writes ------------------------------------------------------------
    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        if not key:
            raise _root_is_directory()
        self._refuse_temp_name(key)
        for _ in range(3):
            created: list[tuple[int, str]] = []
            dfd, name = self._walk(key, "write", created)
            ok = False
            try:
                with mapped(key, "write"):
                    self._write_at(dfd, key, name, data, precondition)
                ok = True
                version = digest_version(data)
                self._known.remember(key, data, version)
                return version
            except _DirGone:
                continue
            finally:
                self._undo_dirs(created, keep=ok)
                os.close(dfd)
        raise map_os_error(FileNotFoundError(key), key, "write")

    @staticmethod
    def _refuse_temp_name(key: str) -> None:
        if is_temp_name(key.rsplit("/", 1)[-1]):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(key), reason="reserved_name")

    def _check_target(
        self, dfd: int, name: str, key: str, st: os.stat_result | None, pre: Precondition
    ) -> os.stat_result | None:
        """What can be decided from the target's lstat alone; the lstat decided on (a newer
        one when the entry changed while it was checked)."""
        for _ in range(5):
            if st is None:
                if isinstance(pre, IfMatch):
                    raise Conflict("missing", path=display(key))
                return None
            if stat_mod.S_ISLNK(st.st_mode) or stat_mod.S_ISDIR(st.st_mode):
                _check_kind(key, st)
            if isinstance(pre, CreateOnly):
                # Only existence matters: never open (a FIFO) or read (a huge file) it.
                raise Conflict("exists", path=display(key))
            _check_kind(key, st)
            if _check_writable(dfd, name, st, key, "write"):
                return st
            st = _lstat(dfd, name)
        raise _kept_changing(key, "checked")

    def _current(self, dfd: int, name: str, key: str) -> tuple[Version, os.stat_result] | None:
        """The version on disk now and the stat it belongs to (the directory lock is held);
        None if the file is gone."""
        for _ in range(5):
            try:
                fd = os.open(name, _READ_FLAGS, dir_fd=dfd)
            except FileNotFoundError:
                return None
            try:
                st = os.fstat(fd)
                _check_kind(key, st)
                version = self._digest_fd(fd, st, key)
            finally:
                os.close(fd)
            if version is not None:
                return version, st
        raise _kept_changing(key, "checked")

    def _write_at(
        self, dfd: int, key: str, name: str, data: bytes, pre: Precondition
    ) -> None:
        old = self._check_target(dfd, name, key, _lstat(dfd, name), pre)
        temp = _Temp(dfd, name, key)
        try:
            # The slow part (data and fsync) happens before the lock is taken.
            temp.write_all(data)
            _keep_owner_and_mode(temp.fd, old)
            os.fsync(temp.fd)
            fcntl.flock(dfd, fcntl.LOCK_EX)
            try:
                self._publish_locked(dfd, key, name, temp, old, pre)
                self._sweep_orphans(dfd, os.path.dirname(key))
            finally:
                fcntl.flock(dfd, fcntl.LOCK_UN)
            with contextlib.suppress(OSError):
                os.fsync(dfd)
        finally:
            temp.discard()

    def _publish_locked(
        self, dfd: int, key: str, name: str, temp: _Temp, old: os.stat_result | None,
        pre: Precondition,
    ) -> None:
        for _ in range(5):
            st = self._check_target(dfd, name, key, _lstat(dfd, name), pre)
            if st is not None and _meta(st) != _meta(old):
                _keep_owner_and_mode(temp.fd, st)  # chmod/chown meanwhile: take the new
                os.fsync(temp.fd)
                old = st
            if isinstance(pre, CreateOnly):
                self._link_create(dfd, key, temp.name, name)
                return
            if isinstance(pre, IfMatch):
                current = self._current(dfd, name, key)
                check_precondition(key, pre, None if current is None else current[0])
                assert current is not None
                # The last look: the file must still be the one whose version was checked.
                # A program that does not take the lock can only slip in between this
                # lstat and the rename, a few system calls.
                now = _lstat(dfd, name)
                if now is None or _sig(now) != _sig(current[1]):
                    continue
            os.replace(temp.name, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            return
        raise _kept_changing(key, "checked")

    def _sweep_orphans(self, dfd: int, parent: str) -> None:
        """Remove temp files of writers killed mid-write, once per directory per backend.

        Only names whose tag checks (ours, never a user's file) and whose writer's flock is
        free (the writer is dead: a live one holds it from creation to publication).
        """
        if parent in self._swept:
            return
        self._swept.add(parent)
        with contextlib.suppress(OSError), os.scandir(dfd) as it:
            names = [e.name for e in it if TEMP_MARK in e.name and is_temp_name(e.name)]
        for tmp in names:
            with contextlib.suppress(OSError):
                fd = os.open(tmp, _READ_FLAGS, dir_fd=dfd)
                try:
                    if not stat_mod.S_ISREG(os.fstat(fd).st_mode):
                        continue
                    try:
                        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    except BlockingIOError:
                        continue  # a live writer's
                    os.unlink(tmp, dir_fd=dfd)
                finally:
                    os.close(fd)

    @staticmethod
    def _link_create(dfd: int, key: str, tmp: str, name: str) -> None:
        try:
            os.link(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd, follow_symlinks=False)
        except FileExistsError as e:
            raise Conflict("exists", path=display(key)) from e
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            # No hard links here (FAT, some network mounts): we hold the directory lock,
            # so check-then-rename excludes every fsseam writer.
            if _lstat(dfd, name) is None:
                os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
                return
            raise Conflict("exists", path=display(key)) from e

    def delete(self, key: str, precondition: Precondition = ANY_VERSION) -> None:
        if not key:
            raise map_os_error(IsADirectoryError(key), key, "delete")
        if isinstance(precondition, CreateOnly):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, path=display(key), reason="create_only_delete"
            )
        dfd, name = self._walk(key, "delete")
        try:
            with mapped(key, "delete"):
                fcntl.flock(dfd, fcntl.LOCK_EX)
                for _ in range(5):
                    st = _lstat(dfd, name)
                    if st is None:
                        if isinstance(precondition, IfMatch):
                            raise Conflict("missing", path=display(key))
                        raise map_os_error(FileNotFoundError(key), key, "delete")
                    _check_kind(key, st)
                    if not _check_writable(dfd, name, st, key, "delete"):
                        continue
                    if isinstance(precondition, IfMatch):
                        current = self._current(dfd, name, key)
                        check_precondition(
                            key, precondition, None if current is None else current[0]
                        )
                        assert current is not None
                        now = _lstat(dfd, name)
                        if now is None or _sig(now) != _sig(current[1]):
                            continue
                    os.unlink(name, dir_fd=dfd)
                    self._known.forget(key)
                    break
                else:
                    raise _kept_changing(key, "checked")
                fcntl.flock(dfd, fcntl.LOCK_UN)
                with contextlib.suppress(OSError):
                    os.fsync(dfd)
        finally:
            os.close(dfd)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        """Stream ``src`` into a temp file beside ``dst`` while hashing it, check the
        source's version against what was copied, then publish create-only (a hard link)."""
        if isinstance(source, CreateOnly):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, path=display(src), reason="create_only_copy"
            )
        if not dst:
            raise _root_is_directory()
        self._refuse_temp_name(dst)
        try:
            sfd, sst = self._open(src, "copy")
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND and isinstance(source, IfMatch):
                raise Conflict("missing", path=display(src)) from e
            raise
        try:
            if isinstance(source, IfMatch):
                cached = self._cache.get(self.path(src), sst)
                if cached is not None and cached != source.version:
                    raise Conflict("mismatch", path=display(src))
            for _ in range(3):
                created: list[tuple[int, str]] = []
                dfd, name = self._walk(dst, "copy to", created)
                ok = False
                try:
                    with mapped(dst, "copy to"):
                        version = self._copy_into(sfd, sst, src, source, dfd, dst, name)
                    ok = True
                    return version
                except _DirGone:
                    continue
                finally:
                    self._undo_dirs(created, keep=ok)
                    os.close(dfd)
            raise map_os_error(FileNotFoundError(dst), dst, "copy")
        finally:
            os.close(sfd)

    def _copy_into(
        self, sfd: int, sst: os.stat_result, src: str, source: Precondition, dfd: int,
        dst: str, name: str,
    ) -> Version:
        existing = _lstat(dfd, name)
        if existing is not None:
            if stat_mod.S_ISDIR(existing.st_mode):
                raise map_os_error(IsADirectoryError(dst), dst, "copy to")
            raise Conflict("exists", path=display(dst))
        temp = _Temp(dfd, name, dst)
        try:
            started = time.time_ns()
            h = hasher()
            with mapped(src, "copy"):
                while True:
                    chunk = os.read(sfd, HASH_CHUNK)
                    if not chunk:
                        break
                    h.update(chunk)
                    temp.write_all(chunk)
                if _sig(os.fstat(sfd)) != _sig(sst):
                    raise _changed_while_read(src)
            version = version_of(h)
            self._cache.put(self.path(src), sst, version, started)
            if isinstance(source, IfMatch) and version != source.version:
                raise Conflict("mismatch", path=display(src))
            os.fchmod(temp.fd, stat_mod.S_IMODE(sst.st_mode) & 0o777 & ~_process_umask())
            os.fsync(temp.fd)
            fcntl.flock(dfd, fcntl.LOCK_EX)
            try:
                self._link_create(dfd, dst, temp.name, name)
                self._sweep_orphans(dfd, os.path.dirname(dst))
            finally:
                fcntl.flock(dfd, fcntl.LOCK_UN)
            with contextlib.suppress(OSError):
                os.fsync(dfd)
            return version
        finally:
            temp.discard()

    # -- history -----------------------------------------------------------
    @staticmethod
    def _no_history(key: str) -> FsError:
        return FsError(ErrorCode.FS_UNSUPPORTED, path=display(key), reason="no_history")

    def read_version(self, key: str, version: Version) -> Blob:
        raise self._no_history(key)

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        raise self._no_history(key)
