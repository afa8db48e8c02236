"""OSError -> FsError, in one place for every backend that speaks OSError.

Backends wrap every storage call in :func:`mapped`, or catch OSError and raise
:func:`map_os_error` of it (the local backend, whose edit path would otherwise enter a context
manager a dozen times), so no OSError (EIO from a disk, ENOLCK from a network mount, EROFS,
EINVAL from a path that changed mid-call) leaves a backend.
"""

from __future__ import annotations

import errno
from types import TracebackType

from .errors import ErrorCode, FsError
from .messages import Reason
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

    def fact(kind: ErrorCode, reason: str, **details: object) -> FsError:
        return FsError(kind, path=shown, reason=reason, details={"action": action, **details})

    if isinstance(exc, FileNotFoundError):
        return fact(ErrorCode.FS_NOT_FOUND, Reason.missing)
    if isinstance(exc, IsADirectoryError):
        return fact(ErrorCode.FS_IS_DIRECTORY, Reason.is_directory)
    if isinstance(exc, NotADirectoryError) or code == errno.ENOTDIR:
        if action in _LOOKING:
            return fact(ErrorCode.FS_NOT_FOUND, Reason.missing_below_file)
        return fact(ErrorCode.FS_INVALID_ARGUMENT, Reason.parent_is_file)
    if code == errno.EROFS:
        return fact(ErrorCode.FS_READ_ONLY, Reason.mounted_read_only)
    if isinstance(exc, PermissionError):
        return fact(ErrorCode.FS_PERMISSION_DENIED, Reason.permission_denied)
    if code == errno.EFBIG:
        assert isinstance(exc, OSError)
        return fact(ErrorCode.FS_TOO_LARGE, Reason.too_large_for_storage, detail=exc.strerror)
    if code in (errno.ENOSPC, errno.EDQUOT):
        return fact(ErrorCode.FS_BACKEND, Reason.no_space)
    if code == errno.ENAMETOOLONG:
        return fact(ErrorCode.FS_INVALID_ARGUMENT, Reason.name_too_long)
    if code == errno.ELOOP:
        return fact(ErrorCode.FS_OUTSIDE_ROOT, Reason.symlink_unfollowable)
    return fact(ErrorCode.FS_BACKEND, Reason.storage_failed, detail=f"{type(exc).__name__}: {exc}")


class mapped:  # lower case: used as a function, ``with mapped(...):``
    """Run a block of storage calls; any OSError leaves it as the FsError it maps to.

    A class rather than a generator context manager: each generator-based entry costs
    several times more."""

    __slots__ = ("action", "key")

    def __init__(self, key: str, action: str) -> None:
        self.key = key
        self.action = action

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        if isinstance(e, OSError):
            raise map_os_error(e, self.key, self.action) from e
