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

from fsseam.backends.objectstore import Fault, Op, StoreError

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


class AzureErrorMapper:
    store = "Azure"
    configure = (
        'pass storage_options={"connection_string": "..."} (or {"account_name": "...", '
        '"account_key": "..."}, or {"account_name": "...", "sas_token": "..."}, or '
        '{"account_name": "...", "anon": False} to sign in with DefaultAzureCredential), or '
        "set AZURE_STORAGE_CONNECTION_STRING; a public container can be read with "
        '{"account_name": "...", "anon": True}.'
    )
    grant = (
        "grant them the Storage Blob Data Contributor role on the container (read, write, "
        "delete and list blobs), use a SAS with those permissions, or use other credentials."
    )

    def classify(self, exc: BaseException, op: Op) -> StoreError:
        code = error_code(exc)
        status = _status(exc)
        detail = f"{code or status or type(exc).__name__}: {_words(exc)}"
        if status == 412 or code == "ConditionNotMet":
            if code in _LEASED:
                return StoreError(Fault.DENIED, detail)
            return StoreError(Fault.PRECONDITION, detail)
        if code == "BlobAlreadyExists":
            return StoreError(Fault.PRECONDITION, detail)
        if status == 404 or (status is None and isinstance(exc, ResourceNotFoundError)):
            if code == "ContainerNotFound" or op in ("list", "versions", "bucket"):
                return StoreError(Fault.BUCKET_MISSING, detail)
            return StoreError(Fault.NOT_FOUND, detail)
        if (
            code in _UNAUTHENTICATED
            or status == 401
            or (status is None and isinstance(exc, ClientAuthenticationError))
            # Azurite answers a bad signature with 403 AuthorizationFailure, where Azure
            # says AuthenticationFailed; both word it the same.
            or _words(exc).startswith("Server failed to authenticate")
        ):
            return StoreError(Fault.UNAUTHENTICATED, detail)
        if status == 403 or code in _LEASED:
            return StoreError(Fault.DENIED, detail)
        if status == 416 or code == "InvalidRange":
            return StoreError(Fault.BAD_RANGE, detail)
        if status == 413 or code in ("RequestBodyTooLarge", "BlockCountExceedsLimit"):
            return StoreError(Fault.TOO_LARGE, detail)
        if code in _BUSY:
            return StoreError(Fault.BUSY, detail)
        if status is not None and 400 <= status < 500 and status not in (408, 429):
            return StoreError(Fault.INVALID, detail)
        if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
            detail = f"{type(exc).__name__}: timed out"
        elif not isinstance(exc, HttpResponseError):
            detail = f"{type(exc).__name__}: {_words(exc)}"
        return StoreError(Fault.UNAVAILABLE, detail)


MAPPER = AzureErrorMapper()
