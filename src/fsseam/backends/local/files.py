"""Local files, one system call at a time: the rules every operation shares.

A file's stat signature, the kinds of entry refused (links met after ``resolve``, FIFOs,
devices), the write protection a rename would bypass, and the owner and mode a
replacement keeps.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as stat_mod

from ...errors import ErrorCode, FsError
from ...messages import Part, Reason
from ...oserrors import map_os_error
from ...paths import display

HASH_CHUNK = 1 << 20
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


def _changed_while_read(key: str) -> FsError:
    return FsError(ErrorCode.FS_STALE, path=display(key), reason=Reason.changed_while_read)


def _kept_changing(key: str, doing: str) -> FsError:
    return FsError(
        ErrorCode.FS_BACKEND, path=display(key),
        reason=Reason.kept_changing, details={"doing": doing}
    )


def _root_is_directory() -> FsError:
    return FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason=Reason.root_is_directory)


def _outside(key: str) -> FsError:
    return FsError(ErrorCode.FS_OUTSIDE_ROOT, path=display(key), reason=Reason.path_symlink_escapes)


_KINDS = {
    stat_mod.S_IFIFO: Part("_fifo"),
    stat_mod.S_IFCHR: Part("_char_device"),
    stat_mod.S_IFBLK: Part("_block_device"),
    stat_mod.S_IFSOCK: Part("_socket"),
}


def _special(key: str, mode: int) -> FsError:
    kind = _KINDS.get(stat_mod.S_IFMT(mode), Part("_special"))
    return FsError(
        ErrorCode.FS_UNSUPPORTED, path=display(key), reason=Reason.special_file,
        details={"kind": kind},
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
        reason=Reason.write_protected,
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

