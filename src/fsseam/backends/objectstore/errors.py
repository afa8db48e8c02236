"""The error contract of object stores: the mapper classifies, the template decides.

    store exception ──mapper.classify(exc, op)──> StoreError(fault, detail)
    StoreError ──translate(...)──> FsError / Conflict (facts: a reason and details)

The words are the message catalogue's (:mod:`fsseam.messages`), rendered at the tools layer.

A store's mapper only says *what happened*, as one of the :class:`StoreFault` values, with a short
``detail`` naming the store's own error (``AccessDenied``, ``HttpError: ...``) for the
message. What that means for the caller (a conflict, a missing file, a missing bucket,
"configure credentials") is decided here, once, for every store; ``op`` tells the mapper
which request failed, because some stores answer the same status for different things (a
GCS 404 on an upload or a listing is the bucket, on a GET the object).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal, Protocol

from ...errors import FsError
from ...versions import CreateOnly, IfMatch, Precondition
from . import messages

__all__ = [
    "AMBIGUOUS",
    "HTTP_RUNGS",
    "ObjectErrorMapper",
    "Op",
    "Rung",
    "StatusLadder",
    "StoreAction",
    "StoreError",
    "StoreFault",
    "rung",
    "translate",
]

Op = Literal["get", "head", "put", "delete", "copy", "list", "versions", "bucket"]
"""The client call that failed."""

StoreAction = Literal["read", "stat", "list", "write", "delete", "copy", "walk"]
"""What the backend was doing, as the message says it."""


class StoreFault(StrEnum):
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


AMBIGUOUS = frozenset({StoreFault.PRECONDITION, StoreFault.BUSY, StoreFault.UNAVAILABLE})
"""Failures after which our own write may have landed: a 412 can answer a resend of our
landed write (its first answer was lost), and an unknown failure is just that. One HEAD on
that error path reads the write id back."""


@dataclass(frozen=True)
class StoreError:
    fault: StoreFault
    detail: str
    """The store's own words, short: ``AccessDenied``, ``HttpError: Not Found``."""


@dataclass(frozen=True)
class Rung:
    """One rung of a store's ladder: its answer is ``fault`` if its error code is one of
    ``codes`` or its HTTP status one of ``statuses``."""

    fault: StoreFault
    codes: frozenset[str] = frozenset()
    statuses: frozenset[int] = frozenset()


def rung(fault: StoreFault, *codes: str, statuses: Iterable[int] = ()) -> Rung:
    return Rung(fault, frozenset(codes), frozenset(statuses))


HTTP_RUNGS: tuple[Rung, ...] = (
    rung(StoreFault.PRECONDITION, statuses=[412]),
    rung(StoreFault.NOT_FOUND, statuses=[404]),
    rung(StoreFault.UNAUTHENTICATED, statuses=[401]),
    rung(StoreFault.DENIED, statuses=[403]),
    rung(StoreFault.BAD_RANGE, statuses=[416]),
    rung(StoreFault.TOO_LARGE, statuses=[413]),
    rung(StoreFault.INVALID, statuses=[400]),
)
"""What each HTTP status means, for a store whose answers carry no error code of their own."""

# Timeouts and throttling are worth retrying: never "the request was malformed".
_RETRYABLE_CLIENT_STATUSES = (408, 429)


@dataclass(frozen=True)
class StatusLadder:
    """A store's answer (its HTTP status, its own error code) -> the :class:`StoreFault`, by one
    ladder for every store; each store supplies only its table.

    ``rungs`` are tried in order, the first that matches answers (a store's error code says
    more than its status: S3 answers 400 both for ``EntityTooLarge`` and
    ``InvalidArgument``). A 404 on one of ``bucket_ops`` can only be the bucket (GCS's 404
    on an upload has no body to say which). ``client_errors``: what any other 4xx is (None:
    nothing, the store goes on).
    """

    rungs: tuple[Rung, ...] = HTTP_RUNGS
    bucket_ops: frozenset[str] = frozenset()
    client_errors: StoreFault | None = None

    def fault(self, status: int | None, code: str, op: Op) -> StoreFault | None:
        """The fault, or None when no rung knows the answer."""
        found = next((r.fault for r in self.rungs
                      if (code and code in r.codes) or status in r.statuses), None)
        if (found is None and self.client_errors is not None and status is not None
                and 400 <= status < 500 and status not in _RETRYABLE_CLIENT_STATUSES):
            found = self.client_errors
        if found is StoreFault.NOT_FOUND and op in self.bucket_ops:
            return StoreFault.BUCKET_MISSING
        return found


class ObjectErrorMapper(Protocol):
    """What a store supplies to turn its exceptions into FsError, through :func:`translate`."""

    store: str
    """The store's name in messages: ``S3``, ``GCS``."""
    configure: str
    """The catalogue clause (``_s3_configure``) that tells what to configure when
    credentials are missing or refused."""
    grant: str
    """The catalogue clause (``_s3_grant``) that tells what to grant when valid credentials
    lack a permission."""

    def classify(self, exc: BaseException, op: Op) -> StoreError: ...


def translate(
    err: StoreError,
    mapper: ObjectErrorMapper,
    *,
    bucket: str,
    key: str,
    action: StoreAction,
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
    if fault is StoreFault.PRECONDITION:
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
    if fault is StoreFault.NOT_FOUND:
        if isinstance(precondition, IfMatch):
            return messages.no_longer_exists(key)
        return messages.not_found(key)
    if fault is StoreFault.BUCKET_MISSING:
        return messages.bucket_missing(bucket, key, action)
    if fault is StoreFault.UNAUTHENTICATED:
        return messages.no_credentials(mapper.store, key, action, err.detail, mapper.configure)
    if fault is StoreFault.DENIED:
        return messages.denied(mapper.store, key, action, err.detail, mapper.grant)
    if fault is StoreFault.TOO_LARGE:
        return messages.too_large(mapper.store, key, err.detail)
    if fault is StoreFault.BUSY:
        return messages.busy(mapper.store, key, action, err.detail)
    if fault is StoreFault.INVALID:
        return messages.invalid_request(mapper.store, key, action, err.detail)
    return messages.storage_failed(key, action, err.detail)

