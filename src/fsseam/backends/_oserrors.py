"""OSError -> FsError, in one place for every backend that speaks OSError."""

from __future__ import annotations

import errno

from ..errors import ErrorCode, FsError


def map_os_error(exc: BaseException, key: str, action: str) -> FsError:
    """Translate a storage OSError raised while doing ``action`` on ``key``."""
    if isinstance(exc, FsError):
        return exc
    shown = "/" + key
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
    if isinstance(exc, NotADirectoryError) or (
        isinstance(exc, OSError) and exc.errno == errno.ENOTDIR
    ):
        return FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            f"cannot {action} {shown}: a parent of this path is a file, not a directory.",
            path=key,
        )
    if isinstance(exc, PermissionError):
        return FsError(
            ErrorCode.FS_PERMISSION_DENIED,
            f"permission denied to {action} {shown}. Choose another path or ask the user.",
            path=key,
        )
    if isinstance(exc, OSError) and exc.errno == errno.EFBIG:
        return FsError(
            ErrorCode.FS_TOO_LARGE,
            f"{shown} would be larger than this storage allows for one file "
            f"({exc.strerror}); nothing was written.",
            path=key,
        )
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return FsError(
            ErrorCode.FS_BACKEND,
            f"no space left on the device (or the disk quota is reached) to {action} "
            f"{shown}; nothing was changed. Free some space or ask the user.",
            path=key,
        )
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return FsError(ErrorCode.FS_INVALID_ARGUMENT, f"the path {shown} is too long.", path=key)
    return FsError(
        ErrorCode.FS_BACKEND,
        f"storage failed to {action} {shown} ({type(exc).__name__}: {exc}); nothing was "
        "changed. Retry later.",
        path=key,
    )
