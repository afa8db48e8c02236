"""botocore / s3fs exceptions -> FsError, in this one function.

s3fs translates every botocore ``ClientError`` into a builtin exception and loses the
distinctions that matter here: a 412 from ``If-Match`` becomes ``OSError(EINVAL)`` (the
same as a bad request), a 412 from ``If-None-Match`` becomes ``FileExistsError``, a 404
``NoSuchKey`` and a 404 ``NoSuchBucket`` are both ``FileNotFoundError``. It keeps the
original ``ClientError`` as ``__cause__``, so the mapping reads the S3 error code from
there and only falls back to the builtin type when there is no ClientError at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from fsseam.errors import Conflict, ErrorCode, FsError
from fsseam.versions import CreateOnly, IfMatch, Precondition

__all__ = ["S3ErrorInfo", "client_error_info", "is_conditional_conflict", "map_s3_error"]

Action = Literal["read", "stat", "list", "write", "delete"]

# Real S3 answers 409 when two conditional writes to one key race; the loser may retry.
CONDITIONAL_CONFLICT = "ConditionalRequestConflict"
_DENIED = {
    "AccessDenied",
    "AllAccessDisabled",
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidToken",
    "AccountProblem",
}


@dataclass(frozen=True)
class S3ErrorInfo:
    """What S3 said: the error code, the HTTP status and (for 412) the failed condition."""

    code: str
    status: int | None
    condition: str | None
    message: str


def client_error_info(exc: BaseException | None) -> S3ErrorInfo | None:
    """The S3 error carried by ``exc`` or anything in its cause/context chain."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        response: Any = getattr(exc, "response", None)
        if isinstance(response, dict) and isinstance(response.get("Error"), dict):
            err = response["Error"]
            meta = response.get("ResponseMetadata") or {}
            status = meta.get("HTTPStatusCode")
            code = str(err.get("Code") or status or "")
            return S3ErrorInfo(
                code=code,
                status=int(status) if status is not None else None,
                condition=err.get("Condition"),
                message=str(err.get("Message") or exc),
            )
        exc = exc.__cause__ or exc.__context__
    return None


def is_conditional_conflict(exc: BaseException) -> bool:
    """A 409 that S3 documents as retryable: a concurrent conditional write to the same key
    (other 409s, such as BucketNotEmpty, are not)."""
    info = client_error_info(exc)
    return info is not None and info.code == CONDITIONAL_CONFLICT


def map_s3_error(
    exc: BaseException,
    key: str,
    action: Action,
    precondition: Precondition | None = None,
    *,
    bucket: str | None = None,
) -> FsError:
    """Translate any exception raised by an S3 call made while doing ``action`` on ``key``.

    ``precondition`` is the one the failed write carried: it decides what a 412 or a 404
    means (someone else wrote first, the object exists, the object is gone).
    """
    if isinstance(exc, FsError):
        return exc
    shown = "/" + key
    info = client_error_info(exc)
    code = info.code if info else ""
    status = info.status if info else None

    if code == "PreconditionFailed" or status == 412:
        if isinstance(precondition, CreateOnly):
            return Conflict("exists", f"{shown} already exists.", path=key)
        if isinstance(precondition, IfMatch):
            return Conflict("mismatch", f"{shown} has changed since it was read.", path=key)
        # A pinned ranged read: the object was replaced between two ranges.
        return FsError(
            ErrorCode.FS_STALE,
            f"{shown} changed while it was being read; read it again.",
            path=key,
        )
    if code == "NoSuchBucket":
        return FsError(
            ErrorCode.FS_NOT_FOUND,
            f"the bucket {bucket or ''} does not exist (while trying to {action} {shown}); "
            "create it or fix the workspace URL.",
            path=key,
        )
    if code in ("NoSuchKey", "404", "NotFound") or (
        info is None and isinstance(exc, FileNotFoundError)
    ):
        if action == "write" and isinstance(precondition, IfMatch):
            return Conflict("missing", f"{shown} no longer exists.", path=key)
        return FsError(
            ErrorCode.FS_NOT_FOUND,
            f"{shown} does not exist. Check the path, or list the parent directory.",
            path=key,
        )
    if code in _DENIED or status == 403 or (info is None and isinstance(exc, PermissionError)):
        return FsError(
            ErrorCode.FS_PERMISSION_DENIED,
            f"permission denied to {action} {shown} ({code or type(exc).__name__}). "
            "Choose another path or ask the user.",
            path=key,
        )
    if code == "EntityTooLarge":
        return FsError(ErrorCode.FS_TOO_LARGE, f"{shown} is too large for S3 to store.", path=key)
    if code == CONDITIONAL_CONFLICT or status == 409:
        return FsError(
            ErrorCode.FS_BACKEND,
            f"S3 kept rejecting the write of {shown} because other conditional writes to it "
            "were in progress (409 ConditionalRequestConflict); nothing was changed. "
            "Retry later.",
            path=key,
        )
    detail = f"{code}: {info.message}" if info else f"{type(exc).__name__}: {exc}"
    return FsError(
        ErrorCode.FS_BACKEND,
        f"storage failed to {action} {shown} ({detail}); nothing was changed. Retry later.",
        path=key,
    )
