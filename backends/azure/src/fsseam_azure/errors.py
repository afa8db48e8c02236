"""azure-storage-blob exceptions -> the object-store faults, in one mapper.

The SDK raises ``azure.core.exceptions``: an ``HttpResponseError`` (or a subclass the SDK
picks from the error code: ``ResourceModifiedError`` for ``ConditionNotMet``,
``ResourceExistsError`` for ``BlobAlreadyExists``, ``ResourceNotFoundError``,
``ClientAuthenticationError``) carrying ``status_code`` and ``error_code`` (Azure's
``x-ms-error-code``), or a ``ServiceRequestError`` / ``ServiceResponseError`` when no answer
came. The mapper reads the status and the error code, never the subclass alone: the SDK files
a 404 ``CannotVerifyCopySource`` (a copy's missing source) under "not found" and the same
code with 403 (a source the credentials may not read) under nothing in particular.

Azure answers a failed ``If-None-Match: *`` with 409 ``BlobAlreadyExists`` (not 412): it is
the same fault, a condition that did not hold.
"""

from __future__ import annotations

import asyncio
from enum import Enum

from azure.core.exceptions import (
    ClientAuthenticationError,
    HttpResponseError,
    ResourceNotFoundError,
)

from fsseam.backends.objectstore import Op, StatusLadder, StoreError, StoreFault, rung
from fsseam.messages import render

__all__ = ["MAPPER", "AzureErrorMapper", "error_code"]

_UNAUTHENTICATED = frozenset(
    {"AuthenticationFailed", "InvalidAuthenticationInfo", "NoAuthenticationInformation"}
)
# A lease is someone else's lock on the blob: only its holder may change it.
_LEASED = frozenset(
    {
        "LeaseIdMissing",
        "LeaseNotPresentWithBlobOperation",
        "LeaseIdMismatchWithBlobOperation",
        "LeaseIdMismatchWithLeaseOperation",
    }
)
# Another commit to the same blob dropped the blocks this write staged; "PendingCopy": a copy
# into the blob is still running.
_BUSY = frozenset({"InvalidBlockList", "PendingCopyOperation", "ServerBusy"})

# In the order Azure's answers are told apart: a lease's 412 is a refusal, not a changed
# blob; a failed If-None-Match: * is 409 BlobAlreadyExists; any other 4xx but a timeout or
# throttling is a request Azure refused as such.
LADDER = StatusLadder(
    rungs=(
        rung(StoreFault.DENIED, *_LEASED),
        rung(StoreFault.PRECONDITION, "ConditionNotMet", "BlobAlreadyExists", statuses=[412]),
        rung(StoreFault.BUCKET_MISSING, "ContainerNotFound"),
        rung(StoreFault.NOT_FOUND, statuses=[404]),
        rung(StoreFault.UNAUTHENTICATED, *_UNAUTHENTICATED, statuses=[401]),
        rung(StoreFault.DENIED, statuses=[403]),
        rung(StoreFault.BAD_RANGE, "InvalidRange", statuses=[416]),
        rung(StoreFault.TOO_LARGE, "RequestBodyTooLarge", "BlockCountExceedsLimit", statuses=[413]),
        rung(StoreFault.BUSY, *_BUSY),
    ),
    bucket_ops=frozenset({"list", "versions", "bucket"}),
    client_errors=StoreFault.INVALID,
)


def error_code(exc: BaseException) -> str:
    """Azure's error code (``x-ms-error-code``) of ``exc``, or ``""``."""
    code = getattr(exc, "error_code", None)
    if isinstance(code, Enum):
        code = code.value
    return str(code) if code else ""


def _status(exc: BaseException) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _words(exc: BaseException) -> str:
    """What Azure said, on one line: the SDK prefixes a HEAD's error (which has no body)
    with "Operation returned an invalid status", and appends request ids and XML."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    first = lines[0].removeprefix("Operation returned an invalid status").strip(" '\"")
    return first or type(exc).__name__


def _status_of_type(exc: BaseException) -> int | None:
    """The status of an SDK error that came without one (the subclass says it)."""
    if isinstance(exc, ResourceNotFoundError):
        return 404
    if isinstance(exc, ClientAuthenticationError):
        return 401
    return None


class AzureErrorMapper:
    store = "Azure"
    configure = "_azure_configure"
    grant = "_azure_grant"

    def classify(self, exc: BaseException, op: Op) -> StoreError:
        code = error_code(exc)
        status = _status(exc)
        detail = f"{code or status or type(exc).__name__}: {_words(exc)}"
        if _words(exc).startswith("Server failed to authenticate"):
            # Azurite answers a bad signature with 403 AuthorizationFailure, where Azure
            # says AuthenticationFailed; both word it the same.
            return StoreError(StoreFault.UNAUTHENTICATED, detail)
        fault = LADDER.fault(status if status is not None else _status_of_type(exc), code, op)
        if fault is not None:
            return StoreError(fault, detail)
        if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
            detail = render("_timed_out", details={"kind": type(exc).__name__})
        elif not isinstance(exc, HttpResponseError):
            detail = f"{type(exc).__name__}: {_words(exc)}"
        return StoreError(StoreFault.UNAVAILABLE, detail)


MAPPER = AzureErrorMapper()
