"""gcsfs / HTTP exceptions -> the object-store faults, in one mapper.

gcsfs flattens HTTP statuses into Python exceptions before we see them (gcsfs.retry.
validate_response): 404 -> FileNotFoundError, 412 -> FileExistsError (for *every* failed
precondition, not just create-only), 403 -> OSError("Forbidden: ..."), 400 with "invalid"
-> ValueError, anything else -> HttpError(code). A 404 carries no body, so which request
failed says what is missing: an upload, a listing or the bucket's own metadata can only
miss the bucket; a GET or a DELETE misses the object (the template's one listing on that
error path then tells a directory, or a missing bucket, from a missing object).
"""

from __future__ import annotations

import asyncio

from google.auth.exceptions import GoogleAuthError

from fsseam.backends.objectstore import Op, StatusLadder, StoreError, StoreFault
from fsseam.messages import render

__all__ = ["MAPPER", "GcsErrorMapper"]

# GCS's statuses mean what HTTP says; a 404 carries no body, so on an upload, a listing or
# the bucket's own metadata it can only be the bucket.
LADDER = StatusLadder(bucket_ops=frozenset({"put", "list", "versions", "bucket"}))


def _status(exc: BaseException) -> int | None:
    code = getattr(exc, "code", None)
    if isinstance(code, int):
        return code
    if isinstance(code, str) and code.isdigit():
        return int(code)
    status = getattr(exc, "status", None)  # aiohttp.ClientResponseError
    return status if isinstance(status, int) else None


def _words(exc: BaseException) -> str:
    """What GCS said. gcsfs words a 403 or 400 as "Forbidden: <url>\n<GCS's message>": the
    message (which permission is missing) is what helps, the URL is not."""
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return ""
    head = lines[0].split(":", 1)[0]
    if len(lines) > 1 and head in ("Forbidden", "Bad Request"):
        return f"{head}: {' '.join(lines[1:])}"
    return lines[0]


def _status_of_type(exc: BaseException) -> int | None:
    """The status gcsfs's flattening lost (validate_response raises a builtin per status)."""
    if isinstance(exc, FileExistsError):
        return 412
    if isinstance(exc, FileNotFoundError):
        return 404
    if isinstance(exc, GoogleAuthError):
        return 401
    if isinstance(exc, PermissionError) or (
        isinstance(exc, OSError) and str(exc).startswith("Forbidden")
    ):
        return 403
    if isinstance(exc, ValueError) and str(exc).startswith("Bad Request"):
        return 400
    return None


class GcsErrorMapper:
    store = "GCS"
    configure = "_gcs_configure"
    grant = "_gcs_grant"

    def classify(self, exc: BaseException, op: Op) -> StoreError:
        status = _status_of_type(exc) or _status(exc)
        fault = LADDER.fault(status, "", op) or StoreFault.UNAVAILABLE
        if fault is StoreFault.INVALID:
            return StoreError(fault, _words(exc))
        timed_out = isinstance(exc, (asyncio.TimeoutError, TimeoutError))
        if timed_out and fault is StoreFault.UNAVAILABLE:
            return StoreError(fault, render("_timed_out", details={"kind": type(exc).__name__}))
        return StoreError(fault, f"{type(exc).__name__}: {_words(exc) or type(exc).__name__}")


MAPPER = GcsErrorMapper()
