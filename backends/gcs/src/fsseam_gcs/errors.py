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

from fsseam.backends.objectstore import Fault, Op, StoreError

__all__ = ["MAPPER", "GcsErrorMapper"]

_BUCKET_OPS = frozenset({"put", "list", "versions", "bucket"})


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


class GcsErrorMapper:
    store = "GCS"
    configure = (
        'pass storage_options={"token": "/path/to/service-account.json"} (or '
        '{"token": "google_default"} after `gcloud auth application-default login`), or set '
        'GOOGLE_APPLICATION_CREDENTIALS; a public bucket can be read with {"token": "anon"}.'
    )
    grant = (
        "grant them roles/storage.objectUser on the bucket (storage.objects.get, create, "
        "delete and list; storage.buckets.get for history), or use other credentials."
    )

    def classify(self, exc: BaseException, op: Op) -> StoreError:
        status = _status(exc)
        detail = f"{type(exc).__name__}: {_words(exc) or type(exc).__name__}"
        if isinstance(exc, FileExistsError) or status == 412:
            return StoreError(Fault.PRECONDITION, detail)
        if isinstance(exc, FileNotFoundError) or status == 404:
            fault = Fault.BUCKET_MISSING if op in _BUCKET_OPS else Fault.NOT_FOUND
            return StoreError(fault, detail)
        if isinstance(exc, GoogleAuthError) or status == 401:
            return StoreError(Fault.UNAUTHENTICATED, detail)
        if (
            isinstance(exc, PermissionError)
            or status == 403
            or (isinstance(exc, OSError) and str(exc).startswith("Forbidden"))
        ):
            return StoreError(Fault.DENIED, detail)
        if status == 416:
            return StoreError(Fault.BAD_RANGE, detail)
        if status == 413:
            return StoreError(Fault.TOO_LARGE, detail)
        if (isinstance(exc, ValueError) and str(exc).startswith("Bad Request")) or status == 400:
            return StoreError(Fault.INVALID, _words(exc))
        if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
            detail = f"{type(exc).__name__}: timed out"
        return StoreError(Fault.UNAVAILABLE, detail)


MAPPER = GcsErrorMapper()
