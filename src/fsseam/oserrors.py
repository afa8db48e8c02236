"""OSError -> FsError, in one place for every backend that speaks OSError.

Backends wrap every storage call in :func:`mapped`, so no OSError (EIO from a disk, ENOLCK
from a network mount, EROFS, EINVAL from a path that changed mid-call) leaves a backend.
"""

from __future__ import annotations

import contextlib
import errno
from collections.abc import Iterator

from .errors import ErrorCode, FsError
from .paths import display

# Actions that only look: a path through a file names nothing there, so it is "not found"
# (as POSIX tools say "No such file"); for a write it is a mistake in the path.
_LOOKING = frozenset({"read", "stat", "list", "walk", "delete", "copy", "resolve"})


def map_os_error(exc: BaseException, key: str, action: str) -> FsError:
    """Translate a storage OSError raised while doing ``action`` on ``key``."""
    if isinstance(exc, FsError):
        return exc
    shown = display(key)
    code = exc.errno if isinstance(exc, OSError) else None
    if isinstance(exc, FileNotFoundError):
        return FsError(
            ErrorCode.FS_NOT_FOUND,
            f"{shown} does not exist. Check the path, or list the parent directory.",
            path=key,
        )
    if isinstance(exc, IsADirectoryError):
        return FsError(
            ErrorCode.FS_IS_DIRECTORY,
            f"{shown} is a directory, not a file. List it, or give a file path.",
            path=key,
        )
    if isinstance(exc, NotADirectoryError) or code == errno.ENOTDIR:
        if action in _LOOKING:
            return FsError(
                ErrorCode.FS_NOT_FOUND,
                f"{shown} does not exist: a parent of this path is a file, not a directory.",
                path=key,
            )
        return FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            f"cannot {action} {shown}: a parent of this path is a file, not a directory.",
            path=key,
        )
    if code == errno.EROFS:
        return FsError(
            ErrorCode.FS_READ_ONLY,
            f"cannot {action} {shown}: the storage is mounted read-only; nothing was changed.",
            path=key,
        )
    if isinstance(exc, PermissionError):
        return FsError(
            ErrorCode.FS_PERMISSION_DENIED,
            f"permission denied to {action} {shown}. Choose another path or ask the user.",
            path=key,
        )
    if code == errno.EFBIG:
        assert isinstance(exc, OSError)
        return FsError(
            ErrorCode.FS_TOO_LARGE,
            f"{shown} would be larger than this storage allows for one file "
            f"({exc.strerror}); nothing was written.",
            path=key,
        )
    if code in (errno.ENOSPC, errno.EDQUOT):
        return FsError(
            ErrorCode.FS_BACKEND,
            f"no space left on the device (or the disk quota is reached) to {action} "
            f"{shown}; nothing was changed. Free some space or ask the user.",
            path=key,
        )
    if code == errno.ENAMETOOLONG:
        return FsError(ErrorCode.FS_INVALID_ARGUMENT, f"the path {shown} is too long.", path=key)
    if code == errno.ELOOP:
        return FsError(
            ErrorCode.FS_OUTSIDE_ROOT,
            f"{shown} leads through a symbolic link that cannot be followed here. Only "
            "paths inside the workspace can be used.",
            path=key,
        )
    return FsError(
        ErrorCode.FS_BACKEND,
        f"storage failed to {action} {shown} ({type(exc).__name__}: {exc}); nothing was "
        "changed. Retry later.",
        path=key,
    )


@contextlib.contextmanager
def mapped(key: str, action: str) -> Iterator[None]:
    """Run a block of storage calls; any OSError leaves it as the FsError it maps to."""
    try:
        yield
    except FsError:
        raise
    except OSError as e:
        raise map_os_error(e, key, action) from e
