"""botocore / s3fs exceptions -> the object-store faults, in one mapper.

s3fs translates every botocore ``ClientError`` into a builtin exception and loses the
distinctions that matter here: a 412 from ``If-Match`` becomes ``OSError(EINVAL)`` (the
same as a bad request), a 412 from ``If-None-Match`` becomes ``FileExistsError``, a 404
``NoSuchKey`` and a 404 ``NoSuchBucket`` are both ``FileNotFoundError``. It keeps the
original ``ClientError`` as ``__cause__``, so the mapper reads the S3 error code from there
and only falls back to the builtin type when there is no ClientError at all. Missing
credentials never reach S3: botocore raises ``NoCredentialsError`` before sending.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from botocore.exceptions import NoCredentialsError, PartialCredentialsError

from fsseam.backends.objectstore import (
    ObjectErrorMapper,
    Op,
    StatusLadder,
    StoreAction,
    StoreError,
    StoreFault,
    rung,
    translate,
)
from fsseam.errors import FsError
from fsseam.versions import Precondition

__all__ = [
    "S3ErrorInfo",
    "S3ErrorMapper",
    "client_error_info",
    "is_conditional_conflict",
    "map_s3_error",
]

# Real S3 answers 409 when two conditional requests to one key race; the loser may retry.
CONDITIONAL_CONFLICT = "ConditionalRequestConflict"
_UNAUTHENTICATED = (
    "InvalidAccessKeyId",
    "SignatureDoesNotMatch",
    "ExpiredToken",
    "InvalidToken",
    "TokenRefreshRequired",
    "MissingSecurityHeader",
)
_DENIED = ("AccessDenied", "AllAccessDisabled", "AccountProblem")
# MethodNotAllowed (405): a GET of a delete marker by its VersionId.
_NOT_FOUND = ("NoSuchKey", "NoSuchVersion", "404", "NotFound", "MethodNotAllowed")
_INVALID = ("InvalidArgument", "InvalidRequest", "KeyTooLongError")

# S3's error codes say what happened; of the statuses only these are read on their own (a
# 400 or a 404 with a code not listed here is not known to be the request's fault).
LADDER = StatusLadder(
    rungs=(
        rung(StoreFault.PRECONDITION, "PreconditionFailed", statuses=[412]),
        rung(StoreFault.BUCKET_MISSING, "NoSuchBucket"),
        rung(StoreFault.NOT_FOUND, *_NOT_FOUND),
        rung(StoreFault.UNAUTHENTICATED, *_UNAUTHENTICATED, statuses=[401]),
        rung(StoreFault.DENIED, *_DENIED, statuses=[403]),
        rung(StoreFault.TOO_LARGE, "EntityTooLarge"),
        rung(StoreFault.BUSY, CONDITIONAL_CONFLICT),
        rung(StoreFault.BAD_RANGE, "InvalidRange", statuses=[416]),
        rung(StoreFault.INVALID, *_INVALID),
    )
)


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
    """A 409 that S3 documents as retryable: a concurrent conditional request to the same
    key (other 409s, such as BucketNotEmpty, are not)."""
    info = client_error_info(exc)
    return info is not None and info.code == CONDITIONAL_CONFLICT


def _credentials_error(exc: BaseException | None) -> BaseException | None:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, (NoCredentialsError, PartialCredentialsError)):
            found: BaseException = exc
            return found
        exc = exc.__cause__ or exc.__context__
    return None


class S3ErrorMapper:
    store = "S3"
    configure = "_s3_configure"
    grant = "_s3_grant"

    def classify(self, exc: BaseException, op: Op) -> StoreError:
        missing = _credentials_error(exc)
        if missing is not None:
            return StoreError(StoreFault.UNAUTHENTICATED, f"{type(missing).__name__}: {missing}")
        info = client_error_info(exc)
        if info is None:
            return _builtin(exc)
        fault = LADDER.fault(info.status, info.code, op) or StoreFault.UNAVAILABLE
        if fault is StoreFault.BUSY:
            return StoreError(fault, f"409 {info.code}")
        if fault in (StoreFault.INVALID, StoreFault.UNAVAILABLE):
            return StoreError(fault, f"{info.code}: {info.message}")
        return StoreError(fault, info.code)


def _builtin(exc: BaseException) -> StoreError:
    """An exception without an S3 error in its chain (connection errors, s3fs's own)."""
    detail = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, FileNotFoundError):
        return StoreError(StoreFault.NOT_FOUND, detail)
    if isinstance(exc, PermissionError):
        return StoreError(StoreFault.DENIED, detail)
    return StoreError(StoreFault.UNAVAILABLE, detail)


MAPPER: ObjectErrorMapper = S3ErrorMapper()


def map_s3_error(
    exc: BaseException,
    key: str,
    action: StoreAction,
    precondition: Precondition | None = None,
    *,
    bucket: str | None = None,
) -> FsError:
    """Translate any exception raised by an S3 call made while doing ``action`` on ``key``.

    ``precondition`` is the one the failed request carried: it decides what a 412 or a 404
    means (someone else wrote first, the object exists, the object is gone).
    """
    if isinstance(exc, FsError):
        return exc
    op: Op = "put" if action == "write" else "get"
    return translate(
        MAPPER.classify(exc, op),
        MAPPER,
        bucket=bucket or "",
        key=key,
        action=action,
        precondition=precondition,
    )
