"""GCS JSON-API requests sent from the calling thread, with gcsfs's retry rules.

gcsfs sends every request from its event loop on a thread of its own; a synchronous caller
hands each request over and waits (``fsspec.asyn.sync``). For one 80 KB read that bridge
cost more client CPU than the request itself: two threads woken per request, and the
caller's work on the answer (a read's lines, an edit's splice) interleaved with the loop
thread finishing the request, on two cores' caches. Sent from the caller's own thread
(:mod:`fsseam.backends.objectstore.direct`), a request costs about a third of the CPU.

What stays gcsfs's, so the requests and their failures are the same as through ``_call``:
the URL and query (``_format_path``, ``_get_params``: requester pays), the headers
(``_get_headers``: User-Agent and the credentials, refreshed when due), the statuses as
exceptions (``gcsfs.retry.validate_response``) and the retry policy of
``gcsfs.retry.retry_request``: 6 attempts for 5xx, 408, 429, an expired token and transport
errors, backoff ``min(random() + 2 ** (n - 1), 32)`` seconds, slept through gcsfs's retry
module (on the filesystem's loop) so whatever shortens gcsfs's backoff shortens this one.
A GET whose reused connection broke before any answer is resent once at once, as aiohttp
does for an idempotent request; an upload never is.

A filesystem this module cannot speak for (its own aiohttp ``session_kwargs``, client
certificates, an endpoint that is not plain http(s)) is not used here: ``usable`` says so
and the client keeps the loop bridge.
"""

from __future__ import annotations

import json as jsonlib
import random
import urllib.parse
from collections.abc import Mapping
from typing import Any

import gcsfs.retry as gcs_retry
import requests.exceptions
from google.auth.exceptions import GoogleAuthError

from fsseam.backends.objectstore.direct import DEFAULT_TIMEOUT, Broken, Connections, Headers

__all__ = ["RETRIES", "DirectTransport", "Response", "usable"]

RETRIES = 6
"""Attempts per request: gcsfs's ``retry_request`` default."""

Response = tuple[Headers, bytes]
"""(headers with a case-insensitive ``get``, body) of a request that succeeded."""


def usable(fs: Any) -> bool:
    """Whether requests of ``fs`` (a GCSFileSystem) can be sent from the caller's thread
    as gcsfs would send them."""
    if getattr(fs, "session_kwargs", None) or getattr(fs, "_use_client_cert", False):
        return False
    scheme = urllib.parse.urlsplit(str(fs._location)).scheme
    return scheme in ("http", "https")


class DirectTransport:
    """Sends gcsfs-shaped requests of one filesystem from the calling thread, on kept-alive
    connections shared by the threads (one per request in flight)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs
        timeout = getattr(fs, "requests_timeout", None)
        self.timeout = float(timeout) if timeout else DEFAULT_TIMEOUT
        self._connections = Connections(self.timeout)

    def call(
        self, method: str, path: str, *args: str, headers: Mapping[str, str] | None = None,
        json: Any = None, data: bytes | memoryview | None = None, **params: Any,
    ) -> Response:
        """``fs._call(method, path, *args, ...)`` without ``json_out``: (headers, body),
        or gcsfs's exception for the status, after gcsfs's retries."""
        url = self.fs._format_path(path, args)
        query = urllib.parse.urlencode(self.fs._get_params(params),
                                       quote_via=urllib.parse.quote)
        if query:
            url = f"{url}{'&' if '?' in url else '?'}{query}"
        body = data
        extra = dict(headers or {})
        if json is not None:
            body = jsonlib.dumps(json).encode()
            extra["Content-Type"] = "application/json"
        for attempt in range(RETRIES):
            if attempt:
                self._backoff(min(random.random() + 2 ** (attempt - 1), 32))
            try:
                status, answer, content = self._connections.exchange(
                    method, url, self.fs._get_headers(extra), body, resend=method == "GET")
                gcs_retry.validate_response(status, content, path, args)
                return answer, content
            except (Broken, gcs_retry.HttpError, GoogleAuthError,
                    requests.exceptions.RequestException) as e:
                error = e.error if isinstance(e, Broken) else e
                if isinstance(e, gcs_retry.HttpError) and e.code == 400 and (
                        "requester pays" in str(e.message)):
                    raise ValueError(
                        "Bucket is requester pays. Set `requester_pays=True` when "
                        "creating the GCSFileSystem.") from e
                retriable = isinstance(e, Broken) or gcs_retry.is_retriable(e)
                if attempt == RETRIES - 1 or not retriable:
                    raise error from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, seconds: float) -> None:
        from fsspec.asyn import sync

        sync(self.fs.loop, gcs_retry.asyncio.sleep, seconds)
