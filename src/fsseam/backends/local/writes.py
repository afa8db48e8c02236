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
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat as stat_mod
import time

from ...errors import Conflict, ErrorCode, FsError
from ...messages import Part, Reason
from ...oserrors import map_os_error, mapped
from ...paths import display
from ...versions import CreateOnly, IfMatch, Precondition, Version
from .._digest import KnownDigests, check_precondition, digest_version, hasher, version_of
from ..base import ANY_VERSION
from .digests import Digests
from .files import (
    _READ_FLAGS,
    HASH_CHUNK,
    _changed_while_read,
    _check_kind,
    _check_writable,
    _keep_owner_and_mode,
    _kept_changing,
    _lstat,
    _meta,
    _process_umask,
    _root_is_directory,
    _sig,
)
from .temps import _DirGone, _Temp, is_temp_name, link_create, sweep_orphans
from .tree import Tree, undo_dirs

__all__ = ["Writes"]

# The action at a copy's destination, as errors say it ("cannot copy to /a/b: ..."): a
# write there, so a file on the way is a mistake in the path rather than a missing file.
_COPY_TO = Part("_copy_to")


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
                with mapped(key, "write"):
                    self._write_at(dfd, key, name, data, precondition)
                ok = True
                self._sync_created(created)
                version = digest_version(data)
                self.known.remember(key, data, version)
                return version
            except _DirGone:
                continue
            finally:
                undo_dirs(created, keep=ok)
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
                version = self.digests.digest_fd(fd, st, key)
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
            if self.sync:
                os.fsync(temp.fd)
            fcntl.flock(dfd, fcntl.LOCK_EX)
            try:
                self._publish_locked(dfd, key, name, temp, old, pre)
                sweep_orphans(dfd, os.path.dirname(key), self._swept)
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
                link_create(dfd, key, temp.name, name)
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
            temp.renamed = True
            return
        raise _kept_changing(key, "checked")


    def delete(self, key: str, precondition: Precondition = ANY_VERSION) -> None:
        if not key:
            raise map_os_error(IsADirectoryError(key), key, "delete")
        if isinstance(precondition, CreateOnly):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, path=display(key), reason=Reason.create_only_delete
            )
        dfd, name = self.tree.parent(key, "delete")
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
                    self.known.forget(key)
                    break
                else:
                    raise _kept_changing(key, "checked")
                fcntl.flock(dfd, fcntl.LOCK_UN)
                self._sync_dir(dfd)
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
                cached = self.digests.cache.get(self.tree.path(src), sst)
                if cached is not None and cached != source.version:
                    raise Conflict("mismatch", path=display(src))
            for _ in range(3):
                created: list[tuple[int, str]] = []
                dfd, name = self.tree.parent(dst, _COPY_TO, created)
                ok = False
                try:
                    with mapped(dst, _COPY_TO):
                        version = self._copy_into(sfd, sst, src, source, dfd, dst, name)
                    ok = True
                    self._sync_created(created)
                    return version
                except _DirGone:
                    continue
                finally:
                    undo_dirs(created, keep=ok)
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
            self.digests.cache.put(self.tree.path(src), sst, version, started)
            if isinstance(source, IfMatch) and version != source.version:
                raise Conflict("mismatch", path=display(src))
            os.fchmod(temp.fd, stat_mod.S_IMODE(sst.st_mode) & 0o777 & ~_process_umask())
            if self.sync:
                os.fsync(temp.fd)
            fcntl.flock(dfd, fcntl.LOCK_EX)
            try:
                link_create(dfd, dst, temp.name, name)
                sweep_orphans(dfd, os.path.dirname(dst), self._swept)
            finally:
                fcntl.flock(dfd, fcntl.LOCK_UN)
            self._sync_dir(dfd)
            return version
        finally:
            temp.discard()
