"""The one error tree of fsseam.

    FsError                      every failure a tool call can report; carries an ErrorCode
    └── Conflict                 a precondition failed at the storage (CAS lost, object exists,
                                 object missing for IfMatch); the seam maps it to FS_STALE,
                                 FS_NOT_OBSERVED, FS_ALREADY_EXISTS or FS_NOT_FOUND

Backends translate their storage's exceptions (OSError, botocore codes, HTTP statuses) into
this tree in one function each; nothing above the backend sees a storage exception.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

__all__ = ["Conflict", "ConflictReason", "ErrorCode", "FsError"]


class ErrorCode(StrEnum):
    """Stable codes a caller (or a model) can branch on."""

    FS_NOT_FOUND = "FS_NOT_FOUND"
    FS_NOT_OBSERVED = "FS_NOT_OBSERVED"
    FS_STALE = "FS_STALE"
    FS_ALREADY_EXISTS = "FS_ALREADY_EXISTS"
    FS_IS_DIRECTORY = "FS_IS_DIRECTORY"
    FS_NOT_TEXT = "FS_NOT_TEXT"
    FS_TOO_LARGE = "FS_TOO_LARGE"
    FS_NO_MATCH = "FS_NO_MATCH"
    FS_MULTIPLE_MATCHES = "FS_MULTIPLE_MATCHES"
    FS_INVALID_ARGUMENT = "FS_INVALID_ARGUMENT"
    FS_OUTSIDE_ROOT = "FS_OUTSIDE_ROOT"
    FS_PERMISSION_DENIED = "FS_PERMISSION_DENIED"
    FS_READ_ONLY = "FS_READ_ONLY"
    FS_UNSUPPORTED = "FS_UNSUPPORTED"
    FS_BACKEND = "FS_BACKEND"


class FsError(Exception):
    """A failure with a code and a message that says what to do next."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        path: str | None = None,
        reason: str | None = None,
    ) -> None:
        super().__init__(f"{code.value}: {message}")
        self.code = code
        self.message = message
        self.path = path
        self.reason = reason
        """A finer cause than the code, for code that must tell cases apart (e.g.
        ``"bucket_missing"`` for an FS_NOT_FOUND whose bucket does not exist)."""

    def __repr__(self) -> str:
        return f"FsError({self.code.value!r}, {self.message!r})"


ConflictReason = Literal["exists", "mismatch", "missing"]
"""Why a precondition failed: CreateOnly met an object, IfMatch met another version,
IfMatch met no object at all."""


_DEFAULT_CODE: dict[str, ErrorCode] = {
    "exists": ErrorCode.FS_ALREADY_EXISTS,
    "mismatch": ErrorCode.FS_STALE,
    "missing": ErrorCode.FS_NOT_FOUND,
}


class Conflict(FsError):
    """A storage-side precondition failed; nothing was written."""

    def __init__(self, reason: ConflictReason, message: str, *, path: str | None = None) -> None:
        super().__init__(_DEFAULT_CODE[reason], message, path=path)
        self.reason: ConflictReason = reason
