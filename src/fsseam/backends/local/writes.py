"""Local writes, deletes and copies: a compare-and-swap that survives crashes.

A write first prepares its bytes: a temp file in the same directory, written and fsynced
with no lock held. Only then does it take an exclusive ``flock`` on the parent directory
(no lock files left around), re-check the precondition against the digest of what is on
disk, check that the file did not change since that digest (same stat signature), and
publish at once with ``os.replace`` (update) or ``os.link`` (create-only, which fails if
the name exists). So the span in which a writer that does not take the lock can be
overwritten is the few system calls between that last check and the rename, not the time
to write and fsync the data. A writer killed at any point leaves the old or the new bytes
at the path, never a mix.

``sync=False`` (the ``"rename"`` durability) drops the fsyncs of the temp file and of the
directory, and nothing else: the lock, the digest re-check and the conditional rename stay,
so a process crash still leaves old or new bytes, but a power loss may lose the write.

The temp files are named ``.NAME.fsseam-<nonce><tag>.tmp``, where the tag is a keyed digest
of the nonce and the name, and each is ``flock``-ed by its writer while it lives. The sweep
of temp files left by killed writers removes only names whose tag checks and whose lock is
free, so it never removes a user's file nor a live writer's temp file; fsseam refuses to
create a file under such a name.

A replacement keeps the replaced file's owner and mode where this process may, and a
write-protected file is not replaced (a rename would bypass its protection).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import hmac
import os
import re
import secrets
import stat as stat_mod
import time

from ...errors import Conflict, ErrorCode, FsError
from ...messages import Part, Reason
from ...oserrors import map_os_error
from ...paths import display
from ...versions import CreateOnly, IfMatch, Precondition, Version
from ..base import ANY_VERSION
from ..digests import (
    HASH_CHUNK,
    Digests,
    KnownDigests,
    changed_while_read,
    check_precondition,
    digest_version,
    hasher,
    signature,
    version_of,
)
from .tree import READ_FLAGS, Tree, check_kind, kept_changing

__all__ = ["TEMP_MARK", "Writes", "is_temp", "is_temp_name", "temp_name"]

# The action at a copy's destination, as errors say it ("cannot copy to /a/b: ..."): a
# write there, so a file on the way is a mistake in the path rather than a missing file.
_COPY_TO = Part("_copy_to")


# -- temp files ------------------------------------------------------------

TEMP_MARK = ".fsseam-"

_TEMP_KEY = b"fsseam temp file v1"
_TEMP_RE = re.compile(r"\.(.*)\.fsseam-([0-9a-f]{16})([0-9a-f]{16})\.tmp", re.DOTALL)
_TEMP_NAME_BYTES = 100


# Keyed once: a copy of it costs a third of a fresh hmac.new, once per write.
_TAG_KEYED = hmac.new(_TEMP_KEY, digestmod=hashlib.sha256)


def _temp_tag(nonce: str, stem: str) -> str:
    h = _TAG_KEYED.copy()
    h.update(f"{nonce}/{stem}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()[:16]


def temp_name(name: str) -> str:
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


def is_temp(name: str) -> bool:
    """A temp file of a write in progress, or of a writer killed before it published: not
    a file of the workspace, so no listing, walk or search shows it."""
    return TEMP_MARK in name and is_temp_name(name)


class _DirGone(Exception):
    """The parent directory was removed after we opened it (a failed writer's cleanup)."""


class _Temp:
    """A temp file being prepared in a directory: created under a shared directory lock and
    flock-ed at once, so a sweep (which holds the exclusive lock) never sees it unlocked."""

    def __init__(self, dfd: int, name: str, key: str) -> None:
        self.dfd = dfd
        self.name = temp_name(name)
        self.fd = -1
        self.renamed = False  # published by rename: its name is gone, nothing to unlink
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
            if not self.renamed:
                with contextlib.suppress(OSError):
                    os.unlink(self.name, dir_fd=self.dfd)
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


def _sweep_orphans(dfd: int, parent: str, swept: set[str]) -> None:
    """Remove temp files of writers killed mid-write, once per directory (``swept``).

    Only names whose tag checks (ours, never a user's file) and whose writer's flock is
    free (the writer is dead: a live one holds it from creation to publication).
    """
    if parent in swept:
        return
    swept.add(parent)
    with contextlib.suppress(OSError), os.scandir(dfd) as it:
        names = [e.name for e in it if TEMP_MARK in e.name and is_temp_name(e.name)]
    for tmp in names:
        with contextlib.suppress(OSError):
            fd = os.open(tmp, READ_FLAGS, dir_fd=dfd)
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


# -- the file replaced -----------------------------------------------------

def _root_is_directory() -> FsError:
    return FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason=Reason.root_is_directory)


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
    if now is None or signature(now) != signature(st):
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


def _process_umask() -> int:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def _meta(st: os.stat_result | None) -> tuple[int, int, int] | None:
    return None if st is None else (st.st_uid, st.st_gid, stat_mod.S_IMODE(st.st_mode))


# -- directories a write made ----------------------------------------------

def _undo_dirs(created: list[tuple[int, str]], keep: bool) -> None:
    """Close the records of directories made by ``Tree.parent``; unless ``keep``, remove them
    (innermost first, and only while empty: another writer may be using one)."""
    for pfd, name in reversed(created):
        if not keep:
            with contextlib.suppress(OSError):
                os.rmdir(name, dir_fd=pfd)
        os.close(pfd)
    created.clear()


class Writes:
    """Changes to the files of one tree (see the module docstring)."""

    def __init__(
        self, tree: Tree, digests: Digests, known: KnownDigests, *, sync: bool = True
    ) -> None:
        self.tree = tree
        self.digests = digests
        self.known = known
        self.sync = sync
        self._swept: set[str] = set()

    def _sync_dir(self, dfd: int) -> None:
        # A directory that cannot be fsynced (some network filesystems) still published.
        if self.sync:
            with contextlib.suppress(OSError):
                os.fsync(dfd)

    def _sync_created(self, created: list[tuple[int, str]]) -> None:
        """Directories a write made: each one's entry in its parent, innermost first, so a
        file in a new directory survives a power loss as a file in an old one does."""
        for pfd, _ in reversed(created):
            self._sync_dir(pfd)

    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        if not key:
            raise _root_is_directory()
        self._refuse_temp_name(key)
        for _ in range(3):
            created: list[tuple[int, str]] = []
            dfd, name = self.tree.parent(key, "write", created)
            ok = False
            try:
                try:
                    self._write_at(dfd, key, name, data, precondition)
                except OSError as e:
                    raise map_os_error(e, key, "write") from e
                ok = True
                self._sync_created(created)
                version = digest_version(data)
                self.known.remember(key, data, version)
                return version
            except _DirGone:
                continue
            finally:
                if created:  # most writes go into a directory that is there already
                    _undo_dirs(created, keep=ok)
                os.close(dfd)
        raise map_os_error(FileNotFoundError(key), key, "write")

    @staticmethod
    def _refuse_temp_name(key: str) -> None:
        if is_temp_name(key.rsplit("/", 1)[-1]):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(key),
                          reason=Reason.reserved_name)

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
                check_kind(key, st)
            if isinstance(pre, CreateOnly):
                # Only existence matters: never open (a FIFO) or read (a huge file) it.
                raise Conflict("exists", path=display(key))
            if not stat_mod.S_ISREG(st.st_mode):  # the call only to refuse it
                check_kind(key, st)
            if _check_writable(dfd, name, st, key, "write"):
                return st
            st = _lstat(dfd, name)
        raise kept_changing(key, "checked")

    def _current(self, dfd: int, name: str, key: str) -> tuple[Version, os.stat_result] | None:
        """The version on disk now and the stat it belongs to (the directory lock is held);
        None if the file is gone."""
        for _ in range(5):
            try:
                fd = os.open(name, READ_FLAGS, dir_fd=dfd)
            except FileNotFoundError:
                return None
            try:
                st = os.fstat(fd)
                if not stat_mod.S_ISREG(st.st_mode):
                    check_kind(key, st)
                version = self.digests.digest_fd(fd, st, key)
            finally:
                os.close(fd)
            if version is not None:
                return version, st
        raise kept_changing(key, "checked")

    def _write_at(
        self, dfd: int, key: str, name: str, data: bytes, pre: Precondition
    ) -> None:
        old = self._check_target(dfd, name, key, _lstat(dfd, name), pre)
        temp = _Temp(dfd, name, key)
        try:
            # The slow part (data and fsync) happens before the lock is taken.
            temp.write_all(data)
            _keep_owner_and_mode(temp.fd, old)
            if self.sync:
                os.fsync(temp.fd)
            fcntl.flock(dfd, fcntl.LOCK_EX)
            try:
                self._publish_locked(dfd, key, name, temp, old, pre)
                _sweep_orphans(dfd, os.path.dirname(key), self._swept)
            finally:
                fcntl.flock(dfd, fcntl.LOCK_UN)
            self._sync_dir(dfd)
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
                if self.sync:
                    os.fsync(temp.fd)
                old = st
            if isinstance(pre, CreateOnly):
                _link_create(dfd, key, temp.name, name)
                return
            if isinstance(pre, IfMatch):
                current = self._current(dfd, name, key)
                check_precondition(key, pre, None if current is None else current[0])
                assert current is not None
                # The last look: the file must still be the one whose version was checked.
                # A program that does not take the lock can only slip in between this
                # lstat and the rename, a few system calls.
                now = _lstat(dfd, name)
                if now is None or signature(now) != signature(current[1]):
                    continue
            os.replace(temp.name, name, src_dir_fd=dfd, dst_dir_fd=dfd)
            temp.renamed = True
            return
        raise kept_changing(key, "checked")


    def delete(self, key: str, precondition: Precondition = ANY_VERSION) -> None:
        if not key:
            raise map_os_error(IsADirectoryError(key), key, "delete")
        if isinstance(precondition, CreateOnly):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, path=display(key), reason=Reason.create_only_delete
            )
        dfd, name = self.tree.parent(key, "delete")
        try:
            fcntl.flock(dfd, fcntl.LOCK_EX)
            for _ in range(5):
                st = _lstat(dfd, name)
                if st is None:
                    if isinstance(precondition, IfMatch):
                        raise Conflict("missing", path=display(key))
                    raise map_os_error(FileNotFoundError(key), key, "delete")
                check_kind(key, st)
                if not _check_writable(dfd, name, st, key, "delete"):
                    continue
                if isinstance(precondition, IfMatch):
                    current = self._current(dfd, name, key)
                    check_precondition(
                        key, precondition, None if current is None else current[0]
                    )
                    assert current is not None
                    now = _lstat(dfd, name)
                    if now is None or signature(now) != signature(current[1]):
                        continue
                os.unlink(name, dir_fd=dfd)
                self.known.forget(key)
                break
            else:
                raise kept_changing(key, "checked")
            fcntl.flock(dfd, fcntl.LOCK_UN)
            self._sync_dir(dfd)
        except OSError as e:
            raise map_os_error(e, key, "delete") from e
        finally:
            os.close(dfd)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        """Stream ``src`` into a temp file beside ``dst`` while hashing it, check the
        source's version against what was copied, then publish create-only (a hard link)."""
        if isinstance(source, CreateOnly):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, path=display(src), reason=Reason.create_only_copy
            )
        if not dst:
            raise _root_is_directory()
        self._refuse_temp_name(dst)
        try:
            sfd, sst = self.tree.open_file(src, "copy")
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND and isinstance(source, IfMatch):
                raise Conflict("missing", path=display(src)) from e
            raise
        try:
            if isinstance(source, IfMatch):
                cached = self.digests.cache.get(src, sst)
                if cached is not None and cached != source.version:
                    raise Conflict("mismatch", path=display(src))
            for _ in range(3):
                created: list[tuple[int, str]] = []
                dfd, name = self.tree.parent(dst, _COPY_TO, created)
                ok = False
                try:
                    try:
                        version = self._copy_into(sfd, sst, src, source, dfd, dst, name)
                    except OSError as e:
                        raise map_os_error(e, dst, _COPY_TO) from e
                    ok = True
                    self._sync_created(created)
                    return version
                except _DirGone:
                    continue
                finally:
                    _undo_dirs(created, keep=ok)
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
                raise map_os_error(IsADirectoryError(dst), dst, _COPY_TO)
            raise Conflict("exists", path=display(dst))
        temp = _Temp(dfd, name, dst)
        try:
            started = time.time_ns()
            h = hasher()
            try:
                while True:
                    chunk = os.read(sfd, HASH_CHUNK)
                    if not chunk:
                        break
                    h.update(chunk)
                    temp.write_all(chunk)
                if signature(os.fstat(sfd)) != signature(sst):
                    raise changed_while_read(src)
            except OSError as e:
                raise map_os_error(e, src, "copy") from e
            version = version_of(h)
            self.digests.cache.put(src, sst, version, started)
            if isinstance(source, IfMatch) and version != source.version:
                raise Conflict("mismatch", path=display(src))
            os.fchmod(temp.fd, stat_mod.S_IMODE(sst.st_mode) & 0o777 & ~_process_umask())
            if self.sync:
                os.fsync(temp.fd)
            fcntl.flock(dfd, fcntl.LOCK_EX)
            try:
                _link_create(dfd, dst, temp.name, name)
                _sweep_orphans(dfd, os.path.dirname(dst), self._swept)
            finally:
                fcntl.flock(dfd, fcntl.LOCK_UN)
            self._sync_dir(dfd)
            return version
        finally:
            temp.discard()
