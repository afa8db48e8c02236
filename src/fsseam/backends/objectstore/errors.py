"""The error contract of object stores: the mapper classifies, the template decides.

    store exception ──mapper.classify(exc, op)──> StoreError(fault, detail)
    StoreError ──translate(...)──> FsError / Conflict (facts: a reason and details)

The words are the message catalogue's (:mod:`fsseam.messages`), rendered at the tools layer.

A store's mapper only says *what happened*, as one of the :class:`Fault` values, with a short
``detail`` naming the store's own error (``AccessDenied``, ``HttpError: ...``) for the
message. What that means for the caller (a conflict, a missing file, a missing bucket,
"configure credentials") is decided here, once, for every store; ``op`` tells the mapper
which request failed, because some stores answer the same status for different things (a
GCS 404 on an upload or a listing is the bucket, on a GET the object).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol

from ...errors import FsError
from ...versions import CreateOnly, IfMatch, Precondition
from . import messages

__all__ = ["Action", "Fault", "ObjectErrorMapper", "Op", "StoreError", "translate"]

Op = Literal["get", "head", "put", "delete", "copy", "list", "versions", "bucket"]
"""The client call that failed."""

Action = Literal["read", "stat", "list", "write", "delete", "copy", "walk"]
"""What the backend was doing, as the message says it."""


class Fault(StrEnum):
    """What went wrong, in the terms every object store shares."""

    PRECONDITION = "precondition"
    """A condition of the request did not hold (HTTP 412)."""
    NOT_FOUND = "not_found"
    """No such object (or no such version of it)."""
    BUCKET_MISSING = "bucket_missing"
    UNAUTHENTICATED = "unauthenticated"
    """No credentials, or credentials the store does not accept (HTTP 401, an unknown key,
    a bad signature, an expired token)."""
    DENIED = "denied"
    """Valid credentials without the permission (HTTP 403)."""
    TOO_LARGE = "too_large"
    BUSY = "busy"
    """Concurrent conditional requests to one object kept the store from deciding (S3's 409
    ConditionalRequestConflict, still there after the client's retries)."""
    BAD_RANGE = "bad_range"
    """A range the object does not have (HTTP 416: any range of an empty object)."""
    INVALID = "invalid"
    """The store refused the request itself as malformed (HTTP 400)."""
    UNAVAILABLE = "unavailable"
    """Anything else: the outcome of the request is unknown."""


@dataclass(frozen=True)
class StoreError:
    fault: Fault
    detail: str
    """The store's own words, short: ``AccessDenied``, ``HttpError: Not Found``."""


class ObjectErrorMapper(Protocol):
    """What a store supplies to turn its exceptions into FsError, through :func:`translate`."""

    store: str
    """The store's name in messages: ``S3``, ``GCS``."""
    configure: str
    """The sentence that tells what to configure when credentials are missing or refused."""
    grant: str
    """The sentence that tells what to grant when valid credentials lack a permission."""

    def classify(self, exc: BaseException, op: Op) -> StoreError: ...


def translate(
    err: StoreError,
    mapper: ObjectErrorMapper,
    *,
    bucket: str,
    key: str,
    action: Action,
    precondition: Precondition | None = None,
    exists: bool | None = None,
) -> FsError:
    """The FsError for ``err``, raised while doing ``action`` on ``key``.

    ``precondition`` is the one the failed request carried: it decides what a 412 or a 404
    means. ``exists`` is what a look at the object after the failure showed (None: no look),
    which tells an IfMatch on a vanished object from one on a changed object for stores that
    answer 412 to both.
    """
    fault = err.fault
    if fault is Fault.PRECONDITION:
        if isinstance(precondition, CreateOnly):
            return messages.already_exists(key)
        if isinstance(precondition, IfMatch):
            if exists is False:
                return messages.no_longer_exists(key)
            return messages.changed_since_read(key)
        if precondition is None:
            # Only a pinned read carries a condition of its own: the object was replaced.
            return messages.changed_while_read(key)
        return messages.storage_failed(key, action, err.detail)
    if fault is Fault.NOT_FOUND:
        if isinstance(precondition, IfMatch):
            return messages.no_longer_exists(key)
        return messages.not_found(key)
    if fault is Fault.BUCKET_MISSING:
        return messages.bucket_missing(bucket, key, action)
    if fault is Fault.UNAUTHENTICATED:
        return messages.no_credentials(mapper.store, key, action, err.detail, mapper.configure)
    if fault is Fault.DENIED:
        return messages.denied(mapper.store, key, action, err.detail, mapper.grant)
    if fault is Fault.TOO_LARGE:
        return messages.too_large(mapper.store, key, err.detail)
    if fault is Fault.BUSY:
        return messages.busy(mapper.store, key, action, err.detail)
    if fault is Fault.INVALID:
        return messages.invalid_request(mapper.store, key, action, err.detail)
    return messages.storage_failed(key, action, err.detail)

