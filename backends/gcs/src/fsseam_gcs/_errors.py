"""gcsfs / HTTP exceptions -> FsError, in this one function.

gcsfs flattens HTTP statuses into Python exceptions before we see them (gcsfs.retry.
validate_response): 404 -> FileNotFoundError, 412 -> FileExistsError (for *every* failed
precondition, not just create-only), 403 -> OSError("Forbidden: ..."), 400 with "invalid"
-> ValueError, anything else -> HttpError(code). Two of these are ambiguous, and only the
error path pays for telling them apart:

- 412 under IfMatch: GCS answers 412 both when the generation moved on and when the object
  is gone. ``object_exists`` (one metadata GET) decides "mismatch" vs "missing".
- 404 on read/delete of a key: a "directory" (a prefix with children) has no object.
  ``is_directory`` (one one-item listing) decides FS_IS_DIRECTORY vs FS_NOT_FOUND.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from fsseam.errors import Conflict, ErrorCode, FsError
from fsseam.versions import CreateOnly, IfMatch, Precondition

__all__ = ["map_error"]


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return code
    if isinstance(code, str) and code.isdigit():
        return int(code)
    status = getattr(exc, "status", None)  # aiohttp.ClientResponseError
    return status if isinstance(status, int) else None


def map_error(
    exc: BaseException,
    key: str,
    action: str,
    *,
    precondition: Precondition | None = None,
    object_exists: Callable[[], bool] | None = None,
    is_directory: Callable[[], bool] | None = None,
) -> FsError:
    """Translate ``exc``, raised while doing ``action`` on ``key``."""
    if isinstance(exc, FsError):
        return exc
    shown = "/" + key
    status = _status(exc)

    if isinstance(exc, FileExistsError) or status == 412:
        if isinstance(precondition, CreateOnly):
            return Conflict("exists", f"{shown} already exists.", path=key)
        if isinstance(precondition, IfMatch):
            if object_exists is not None and not _safe(object_exists, default=True):
                return Conflict("missing", f"{shown} no longer exists.", path=key)
            return Conflict("mismatch", f"{shown} has changed since it was read.", path=key)
        # A 412 without a precondition of ours (Overwrite) is not a conflict we can name.
    elif isinstance(exc, FileNotFoundError) or status == 404:
        if is_directory is not None and _safe(is_directory, default=False):
            return FsError(
                ErrorCode.FS_IS_DIRECTORY,
                f"{shown} is a directory, not a file. List it, or give a file path.",
                path=key,
            )
        return FsError(
            ErrorCode.FS_NOT_FOUND,
            f"{shown} does not exist (or the bucket does not). Check the path, or list the "
            "parent directory.",
            path=key,
        )
    elif isinstance(exc, PermissionError) or status in (401, 403) or (
        isinstance(exc, OSError) and str(exc).startswith("Forbidden")
    ):
        return FsError(
            ErrorCode.FS_PERMISSION_DENIED,
            f"permission denied to {action} {shown}. Check the GCS credentials, or ask the "
            "user.",
            path=key,
        )
    elif (isinstance(exc, ValueError) and str(exc).startswith("Bad Request")) or status == 400:
        return FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            f"GCS rejected the request to {action} {shown}: {_first_line(exc)}",
            path=key,
        )
    detail = _first_line(exc) or type(exc).__name__
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        detail = "timed out"
    return FsError(
        ErrorCode.FS_BACKEND,
        f"storage failed to {action} {shown} ({type(exc).__name__}: {detail}); nothing was "
        "changed. Retry later.",
        path=key,
    )


def _safe(probe: Callable[[], bool], *, default: bool) -> bool:
    # The probe only refines the message of an error we already have; if it fails too,
    # report the original error with the default reading.
    try:
        return probe()
    except Exception:
        return default


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else ""
