"""Fault plans: which requests fail and how, and what the server saw."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

ErrorBody = Callable[[int, str], tuple[str, bytes]]
"""(status, request path) -> (Content-Type, body) of an error answer in the store's format."""

WsgiApp = Callable[[dict[str, Any], Any], Iterable[bytes]]

REASON_PHRASES = {401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
                  500: "Internal Server Error", 503: "Service Unavailable"}
"""The reason phrase of an injected status (``Error`` for any other)."""


@dataclass
class PlannedFault:
    method: str
    path: str
    """A substring of the request path."""
    kind: str
    """An HTTP status (``"500"``), ``"reset"`` or ``"lost"``."""
    times: int
    query: str = ""
    """A substring of the query string."""
    cut_after: int = 32 * 1024
    """For ``reset``: body bytes the store gets before the connection breaks."""


@dataclass
class FaultPlan:
    """Faults to inject, and what was seen. Thread-safe."""

    faults: list[PlannedFault] = field(default_factory=list)
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    """(method, path, query) of every request, in arrival order."""
    forwarded: list[tuple[str, str, str]] = field(default_factory=list)
    """Requests that reached the store whole (a cut one does not count)."""
    cut_bodies: list[int] = field(default_factory=list)
    """For each ``reset``: how many body bytes the store got before the connection broke."""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def inject(
        self,
        method: str,
        path: str,
        kind: str,
        times: int,
        *,
        query: str = "",
        cut_after: int = 32 * 1024,
    ) -> None:
        with self.lock:
            self.faults.append(PlannedFault(method, path, kind, times, query, cut_after))

    def clear(self) -> None:
        """Forget every fault and every request seen."""
        with self.lock:
            self.faults.clear()
            self.requests.clear()
            self.forwarded.clear()
            self.cut_bodies.clear()

    def seen(self, method: str, path: str, query: str = "", *, forwarded: bool = False) -> int:
        """Requests (or, with ``forwarded``, requests that reached the store) that match."""
        with self.lock:
            rows = self.forwarded if forwarded else self.requests
            return sum(1 for m, p, q in rows if m == method and path in p and query in q)

    def remaining(self) -> int:
        with self.lock:
            return sum(f.times for f in self.faults)

    def take(self, method: str, path: str, query: str) -> PlannedFault | None:
        """Record a request; the fault it meets, if any (used up by one)."""
        with self.lock:
            self.requests.append((method, path, query))
            for f in self.faults:
                if f.times > 0 and f.method == method and f.path in path and f.query in query:
                    f.times -= 1
                    return f
        return None

    def forwarded_whole(self, method: str, path: str, query: str) -> None:
        with self.lock:
            self.forwarded.append((method, path, query))

    def wsgi(self, app: WsgiApp, error_body: ErrorBody, *, serialize: bool = True) -> WsgiApp:
        """``app`` behind this plan. ``serialize``: one request at a time (moto checks a
        condition and stores the object in two unlocked steps; a real store decides a
        conditional write atomically)."""
        serial = threading.Lock() if serialize else contextlib.nullcontext()

        def middleware(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
            method = str(environ["REQUEST_METHOD"])
            path = str(environ.get("PATH_INFO", ""))
            query = str(environ.get("QUERY_STRING", ""))
            fault = self.take(method, path, query)
            with serial:
                if fault is None:
                    body = list(app(environ, start_response))
                    self.forwarded_whole(method, path, query)
                    return body
                if fault.kind.isdigit():
                    length = int(environ.get("CONTENT_LENGTH") or 0)
                    if length:
                        environ["wsgi.input"].read(length)
                    status = int(fault.kind)
                    content_type, data = error_body(status, path)
                    start_response(
                        f"{status} {REASON_PHRASES.get(status, 'Error')}",
                        [("Content-Type", content_type), ("Content-Length", str(len(data)))],
                    )
                    return [data]
                if fault.kind == "reset":
                    cut = CutBody(environ["wsgi.input"], fault.cut_after)
                    environ["wsgi.input"] = cut
                    with contextlib.suppress(Exception):
                        list(app(environ, lambda *a, **k: None))
                    with self.lock:
                        self.cut_bodies.append(cut.delivered)
                else:  # "lost": the request is handled whole; only the answer is lost
                    list(app(environ, lambda *a, **k: None))
                    self.forwarded_whole(method, path, query)
                abort(environ["werkzeug.socket"])
                raise ConnectionResetError("fault injected: connection reset")

        return middleware


class CutBody:
    """A WSGI request body that breaks after ``limit`` bytes, as when the connection does."""

    def __init__(self, inner: Any, limit: int) -> None:
        self._inner = inner
        self._left = limit
        self.delivered = 0

    def read(self, size: int | None = -1) -> bytes:
        if self._left <= 0:
            raise ConnectionResetError("fault injected: connection reset by peer")
        want = self._left if size is None or size < 0 else min(size, self._left)
        data: bytes = self._inner.read(want)
        self._left -= len(data)
        self.delivered += len(data)
        return data

    def readline(self, size: int | None = -1) -> bytes:
        return self.read(size)


def abort(sock: socket.socket) -> None:
    """Reset a connection: no answer, RST instead of FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)


