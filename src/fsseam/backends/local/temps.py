"""Temp files: where a write prepares its bytes before it publishes them.

Temp files are named ``.NAME.fsseam-<nonce><tag>.tmp``, where the tag is a keyed digest of
the nonce and the name, and each is ``flock``-ed by its writer while it lives. The sweep of
temp files left by killed writers removes only names whose tag checks and whose lock is
free, so it never removes a user's file nor a live writer's temp file; fsseam refuses to
create a file under such a name.
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

from ...errors import Conflict
from ...paths import display
from .files import _READ_FLAGS, _lstat

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
        self.name = _temp_name(name)
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



def sweep_orphans(dfd: int, parent: str, swept: set[str]) -> None:
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

def link_create(dfd: int, key: str, tmp: str, name: str) -> None:
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
