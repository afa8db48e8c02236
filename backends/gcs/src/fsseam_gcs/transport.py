"""GCS JSON-API requests sent from the calling thread, with gcsfs's retry rules.

gcsfs sends every request from its event loop on a thread of its own; a synchronous caller
hands each request over and waits (``fsspec.asyn.sync``). For one 80 KB read that bridge
cost more client CPU than the request itself: two threads woken per request, and the
caller's work on the answer (a read's lines, an edit's splice) interleaved with the loop
thread finishing the request, on two cores' caches. Sent from the caller's own thread by
``http.client``, a request costs about a third of the CPU.

What stays gcsfs's, so the requests and their failures are the same as through ``_call``:
the URL and query (``_format_path``, ``_get_params``: requester pays), the headers
(``_get_headers``: User-Agent and the credentials, refreshed when due), the statuses as
exceptions (``gcsfs.retry.validate_response``) and the retry policy of
``gcsfs.retry.retry_request``: 6 attempts for 5xx, 408, 429, an expired token and transport
errors, backoff ``min(random() + 2 ** (n - 1), 32)`` seconds, slept through gcsfs's retry
module (on the filesystem's loop) so whatever shortens gcsfs's backoff shortens this one.
A kept connection the server has closed while it was idle is not used again (one poll
before each request: an event loop would have seen the close as it happened); a GET whose
reused connection broke before any answer all the same is resent once on a new connection
at once, as aiohttp does for an idempotent request; an upload never is.

A filesystem this module cannot speak for (its own aiohttp ``session_kwargs``, client
certificates, an endpoint that is not plain http(s)) is not used here: ``usable`` says so
and the client keeps the loop bridge.
"""

from __future__ import annotations

import http.client
import json as jsonlib
import os
import random
import select
import socket
import threading
import urllib.parse
from collections.abc import Mapping
from typing import Any

import gcsfs.retry as gcs_retry
import requests.exceptions
from google.auth.exceptions import GoogleAuthError

__all__ = ["RETRIES", "DirectTransport", "Response", "usable"]

RETRIES = 6
"""Attempts per request: gcsfs's ``retry_request`` default."""
MAX_IDLE = 32
"""Idle connections kept per host; more at once (a burst of parallel requests) are closed
when their answers are read."""
DEFAULT_TIMEOUT = 300.0
"""Seconds a socket operation may block when gcsfs has no ``requests_timeout``: aiohttp's
default total timeout, the bound gcsfs's own requests have then."""

Response = tuple[Any, bytes]
"""(headers with a case-insensitive ``get``, body) of a request that succeeded."""

_TRANSPORT_ERRORS = (OSError, http.client.HTTPException)
"""What a connection, a send or a receive raises (resets, refusals, timeouts, a broken
status line); gcsfs retries aiohttp's equivalents."""


def usable(fs: Any) -> bool:
    """Whether requests of ``fs`` (a GCSFileSystem) can be sent from the caller's thread
    as gcsfs would send them."""
    if getattr(fs, "session_kwargs", None) or getattr(fs, "_use_client_cert", False):
        return False
    scheme = urllib.parse.urlsplit(str(fs._location)).scheme
    return scheme in ("http", "https")


class _Kept(http.client.HTTPConnection):
    """A kept-alive connection, closed when it is dropped (a socket left to the garbage
    collector makes it warn)."""

    def __del__(self) -> None:
        self.close()


class _KeptTls(http.client.HTTPSConnection):
    """:class:`_Kept` over TLS."""

    def __del__(self) -> None:
        self.close()


Host = tuple[str, str]
"""(scheme, host:port) of a connection."""


class _Idle:
    """Kept-alive connections not in use, by host, shared by every thread: a request takes
    the one used last (or opens one) and gives it back once its answer is read whole, so a
    thread that lives for one call (a pool made for a burst of requests) finds the
    connections earlier threads opened, as requests through gcsfs's one session did.
    Those of another process (before a fork) are never handed out."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._free: dict[Host, list[http.client.HTTPConnection]] = {}

    def take(self, host: Host) -> http.client.HTTPConnection | None:
        with self._lock:
            if self._pid != os.getpid():
                self._pid, self._free = os.getpid(), {}
            free = self._free.get(host)
            return free.pop() if free else None

    def give_back(self, host: Host, conn: http.client.HTTPConnection) -> None:
        with self._lock:
            free = self._free.setdefault(host, [])
            if self._pid == os.getpid() and len(free) < MAX_IDLE:
                free.append(conn)
                return
        conn.close()


def _closed_by_server(sock: socket.socket | None) -> bool:
    """Whether a kept connection can no longer carry a request: the server closed it while
    it was idle (an idle timeout; or it sent bytes nobody asked for). An event loop sees
    that as it happens; a connection used from a thread learns it only by looking, which
    is one poll with no wait. An upload sent on it would fail and be retried only after
    gcsfs's backoff (uploads are never resent at once)."""
    if sock is None:
        return False  # not connected yet: http.client connects on the first request
    try:
        if hasattr(select, "poll"):
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


class _Broken(Exception):
    """A transport error of one attempt; ``fresh``: on a connection opened for it."""

    def __init__(self, error: BaseException, fresh: bool, answered: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.fresh = fresh
        self.answered = answered


class DirectTransport:
    """Sends gcsfs-shaped requests of one filesystem from the calling thread, on kept-alive
    connections shared by the threads (one per request in flight)."""

    def __init__(self, fs: Any) -> None:
        self.fs = fs
        timeout = getattr(fs, "requests_timeout", None)
        self.timeout = float(timeout) if timeout else DEFAULT_TIMEOUT
        self._idle = _Idle()

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
                status, answer, content = self._exchange(method, url, extra, body)
                gcs_retry.validate_response(status, content, path, args)
                return answer, content
            except (_Broken, gcs_retry.HttpError, GoogleAuthError,
                    requests.exceptions.RequestException) as e:
                error = e.error if isinstance(e, _Broken) else e
                if isinstance(e, gcs_retry.HttpError) and e.code == 400 and (
                        "requester pays" in str(e.message)):
                    raise ValueError(
                        "Bucket is requester pays. Set `requester_pays=True` when "
                        "creating the GCSFileSystem.") from e
                retriable = isinstance(e, _Broken) or gcs_retry.is_retriable(e)
                if attempt == RETRIES - 1 or not retriable:
                    raise error from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _backoff(self, seconds: float) -> None:
        from fsspec.asyn import sync

        sync(self.fs.loop, gcs_retry.asyncio.sleep, seconds)

    def _exchange(
        self, method: str, url: str, extra: dict[str, str], body: bytes | memoryview | None
    ) -> tuple[int, Any, bytes]:
        """One request (and, for a GET whose reused connection broke unanswered, its one
        resend on a new connection): (status, headers, body)."""
        headers = self.fs._get_headers(extra)
        try:
            return self._once(method, url, headers, body)
        except _Broken as e:
            if e.fresh or e.answered or method != "GET":
                raise
        return self._once(method, url, headers, body)

    def _once(self, method: str, url: str, headers: dict[str, str],
              body: bytes | memoryview | None) -> tuple[int, Any, bytes]:
        parts = urllib.parse.urlsplit(url)
        host = (parts.scheme, parts.netloc)
        conn, fresh = self._connection(host)
        target = parts.path + (f"?{parts.query}" if parts.query else "")
        answered = False
        try:
            conn.request(method, target, body=body, headers=headers)
            resp = conn.getresponse()
            answered = True
            content = resp.read()
        except _TRANSPORT_ERRORS as e:
            conn.close()
            raise _Broken(e, fresh, answered) from e
        except BaseException:
            conn.close()  # interrupted mid-exchange: what is left on it is unknown
            raise
        if resp.will_close:
            conn.close()
        else:
            self._idle.give_back(host, conn)
        return resp.status, resp.headers, content

    def _connection(self, host: Host) -> tuple[http.client.HTTPConnection, bool]:
        """An idle kept connection to ``host`` the server has not closed, or a new one
        (True: new)."""
        while (kept := self._idle.take(host)) is not None:
            if not _closed_by_server(kept.sock):
                return kept, False
            kept.close()
        scheme, netloc = host
        if scheme == "https":
            return _KeptTls(netloc, timeout=self.timeout), True
        return _Kept(netloc, timeout=self.timeout), True
