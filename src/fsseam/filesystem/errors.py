"""What the guarded filesystem raises: the builtin OSError subclasses fsspec and its users
rely on for plain I/O answers (not found, a directory, too large), and one type,
:class:`GuardRefused`, for every refusal of the guard (the file changed since this owner
read it, it was never read, a create-only path is taken, read-only, outside the root, the
observation store's reserved keys)."""

from __future__ import annotations

import errno
from typing import Any

from ..errors import ErrorCode, FsError
from ..messages import Reason, Sentence

__all__ = ["GuardExists", "GuardRefused", "os_error"]


class GuardRefused(PermissionError):
    """The guard refused a change (or a path); nothing was written.

    A :class:`PermissionError` (so an :class:`OSError`), which code around fsspec already
    catches. ``code``: the :class:`~fsseam.ErrorCode` (``FS_STALE``, ``FS_NOT_OBSERVED``,
    ``FS_ALREADY_EXISTS``, ``FS_READ_ONLY``, ``FS_OUTSIDE_ROOT``,
    ``FS_PERMISSION_DENIED``); ``path``: the file, as the filesystem names it; ``diff``: for
    ``FS_STALE``, what changed since this owner's read (a unified diff, possibly cut
    short), else None; ``error``: the :class:`~fsseam.FsError` itself. The message says
    what to do next."""

    def __init__(self, error: FsError, path: str | None = None) -> None:
        self.error = error
        self.code: ErrorCode = error.code
        self.path = path if path is not None else error.path
        self.diff: str | None = _diff_of(error)
        super().__init__(self._errno, str(error), self.path)

    _errno = errno.EACCES

    def __str__(self) -> str:
        return str(self.error)

    def __reduce__(self) -> tuple[Any, ...]:
        # Crosses processes as the facts it carries (FsError pickles its own).
        return (type(self), (self.error, self.path))


class GuardExists(GuardRefused, FileExistsError):
    """A create-only change met a file already there (``FS_ALREADY_EXISTS``): a
    :class:`GuardRefused` that is also the :class:`FileExistsError` fsspec expects from
    ``open(path, "xb")`` and ``pipe_file(..., mode="create")``."""

    _errno = errno.EEXIST


def _diff_of(error: FsError) -> str | None:
    changes = error.details.get("changes")
    if isinstance(changes, Sentence):
        diff = changes.details.get("diff")
        return diff if isinstance(diff, str) else None
    return None


# The guard's refusals: whatever the reason, these codes mean "the guard said no".
_REFUSALS = frozenset({ErrorCode.FS_STALE, ErrorCode.FS_NOT_OBSERVED, ErrorCode.FS_READ_ONLY,
                       ErrorCode.FS_OUTSIDE_ROOT})

# Plain I/O answers: the builtin type fsspec (and pandas, pyarrow) branch on, and its errno.
_PLAIN: dict[ErrorCode, tuple[type[OSError], int]] = {
    ErrorCode.FS_NOT_FOUND: (FileNotFoundError, errno.ENOENT),
    ErrorCode.FS_IS_DIRECTORY: (IsADirectoryError, errno.EISDIR),
    ErrorCode.FS_PERMISSION_DENIED: (PermissionError, errno.EACCES),
    ErrorCode.FS_TOO_LARGE: (OSError, errno.EFBIG),
    ErrorCode.FS_INVALID_ARGUMENT: (OSError, errno.EINVAL),
    ErrorCode.FS_UNSUPPORTED: (OSError, errno.ENOTSUP),
    ErrorCode.FS_NOT_TEXT: (OSError, errno.EINVAL),
}


def os_error(error: FsError, path: str | None = None) -> OSError:
    """The exception the filesystem raises for ``error`` (``path``: as the filesystem names
    the file); its ``__cause__`` is set by the caller's ``raise ... from``."""
    code = error.code
    if code is ErrorCode.FS_ALREADY_EXISTS:
        return GuardExists(error, path)
    if code in _REFUSALS or error.reason == Reason.reserved_observations:
        return GuardRefused(error, path)
    kind: type[OSError]
    if error.reason in (Reason.parent_is_file, Reason.not_directory):
        kind, number = NotADirectoryError, errno.ENOTDIR
    else:
        kind, number = _PLAIN.get(code, (OSError, errno.EIO))
    return kind(number, str(error), path if path is not None else error.path)
