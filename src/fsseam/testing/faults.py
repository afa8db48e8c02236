"""Fault injection and request counting for tests of remote backends (shipped in the wheel).

A :class:`FaultPlan` makes the next N requests that match (method, a substring of the path,
a substring of the query) fail in one of these ways:

- an HTTP status (``"500"``, ``"503"``, ``"401"``, ``"403"``, ...): an error answer in the
  store's own format (``error_body``); the request never reaches the store;
- ``"reset"``: the store gets the headers and the first ``cut_after`` body bytes, then the
  connection is reset (RST, no answer): the store sees its body stream break;
- ``"lost"``: the store handles the request completely (a write lands), then the client's
  connection is reset instead of answering.

Two ways to put a plan in front of a store, both counting every request at the server side:
:func:`fault_proxy` (an HTTP proxy, for any server, such as fake-gcs-server) and
:meth:`FaultPlan.wsgi` (a WSGI middleware, for servers in this process, such as moto's
``ThreadedMotoServer``). :func:`counting_proxy` is a proxy without faults. Retries that
sleep between attempts can be sped up with :func:`shorten_sleeps`; retry *decisions* and
counts stay what the client library does.

Everything binds 127.0.0.1 on a free port and stops on exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import socket
import struct
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import ModuleType
from typing import Any, TypeVar
from urllib.parse import urlsplit

__all__ = [
    "CountingProxy",
    "CutBody",
    "ErrorBody",
    "Fault",
    "FaultPlan",
    "FaultProxy",
    "ProxiedRequest",
    "abort",
    "counting_proxy",
    "fault_proxy",
    "serve_http",
    "shorten_sleeps",
]

ErrorBody = Callable[[int, str], tuple[str, bytes]]
"""(status, request path) -> (Content-Type, body) of an error answer in the store's format."""

WsgiApp = Callable[[dict[str, Any], Any], Iterable[bytes]]

_REASONS = {401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 500: "Internal Server "
            "Error", 503: "Service Unavailable"}


@dataclass
class Fault:
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

    faults: list[Fault] = field(default_factory=list)
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
            self.faults.append(Fault(method, path, kind, times, query, cut_after))

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

    def take(self, method: str, path: str, query: str) -> Fault | None:
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
                        f"{status} {_REASONS.get(status, 'Error')}",
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


# -- an HTTP proxy: the server-side view of every request -------------------------------


@dataclass(frozen=True)
class ProxiedRequest:
    method: str
    path: str
    status: int
    request_bytes: int
    response_bytes: int
    query: str = ""


@dataclass
class CountingProxy:
    """Forwards every request to its upstream and records it. ``requests``: the
    ``(method, path)`` of each request since the last :meth:`take`; ``records``: the same
    with query, status and body sizes, in completion order."""

    url: str = ""
    requests: list[tuple[str, str]] = field(default_factory=list)
    records: list[ProxiedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> list[tuple[str, str]]:
        """The (method, path) of every request since the last take, in order."""
        with self.lock:
            out, self.requests = self.requests, []
            self.records = []
        return out

    def take_records(self) -> list[ProxiedRequest]:
        """The full records since the last take, in completion order (and reset)."""
        with self.lock:
            out, self.records = self.records, []
            self.requests = []
        return out


@dataclass
class FaultProxy(CountingProxy):
    """A counting proxy that also injects the faults of ``plan``."""

    plan: FaultPlan = field(default_factory=FaultPlan)
    error_body: ErrorBody = field(default=lambda status, path: ("text/plain", b"injected"))

    def inject(self, method: str, path: str, kind: str, times: int, **kw: Any) -> None:
        self.plan.inject(method, path, kind, times, **kw)

    def clear(self) -> None:
        self.plan.clear()
        self.take()

    def seen(self, method: str, path: str, query: str = "", *, forwarded: bool = False) -> int:
        return self.plan.seen(method, path, query, forwarded=forwarded)

    @property
    def cut_bodies(self) -> list[int]:
        return self.plan.cut_bodies


P = TypeVar("P", bound=CountingProxy)


def _handler(upstream: str, proxy: CountingProxy) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)
    host, port = target.hostname or "127.0.0.1", target.port
    plan = proxy.plan if isinstance(proxy, FaultProxy) else None

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the client expects

        def _answer(self, status: int, reason: str, headers: list[tuple[str, str]],
                    data: bytes) -> None:
            self.send_response(status, reason)
            for k, v in headers:
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _record(self, path: str, query: str, status: int, sent: int, got: int) -> None:
            with proxy.lock:
                proxy.records.append(ProxiedRequest(self.command, path, status, sent, got,
                                                    query))

        def _forward(self) -> None:
            if "chunked" in self.headers.get("Transfer-Encoding", ""):
                raise RuntimeError("the proxy does not forward chunked bodies")
            path, _, query = self.path.partition("?")
            length = int(self.headers.get("Content-Length") or 0)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
            with proxy.lock:
                proxy.requests.append((self.command, path))
            fault = plan.take(self.command, path, query) if plan is not None else None

            if fault is not None and fault.kind == "reset":
                part = self.rfile.read(min(length, fault.cut_after)) if length else b""
                conn = http.client.HTTPConnection(host, port, timeout=10)
                with contextlib.suppress(OSError):
                    conn.putrequest(self.command, self.path, skip_accept_encoding=True)
                    for k, v in headers.items():
                        conn.putheader(k, v)
                    conn.endheaders()
                    conn.send(part)
                    if conn.sock is not None:
                        abort(conn.sock)
                conn.close()
                assert plan is not None
                with plan.lock:
                    plan.cut_bodies.append(len(part))
                abort(self.connection)
                self.close_connection = True
                return

            body = self.rfile.read(length) if length else None
            if fault is not None and fault.kind.isdigit():
                status = int(fault.kind)
                assert isinstance(proxy, FaultProxy)
                content_type, data = proxy.error_body(status, path)
                self._answer(status, _REASONS.get(status, "Error"),
                             [("Content-Type", content_type)], data)
                self._record(path, query, status, length, len(data))
                return

            conn = http.client.HTTPConnection(host, port, timeout=60)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            finally:
                conn.close()
            if plan is not None:
                plan.forwarded_whole(self.command, path, query)
            if fault is not None:  # "lost": it landed, the answer never arrives
                abort(self.connection)
                self.close_connection = True
                return
            self._answer(resp.status, resp.reason, resp.getheaders(), data)
            self._record(path, query, resp.status, length, len(data))

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _forward

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Forward


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) in a thread; yields the base URL and
    stops the server on exit."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextmanager
def serve_proxy(upstream: str, proxy: P) -> Iterator[P]:
    """Run ``proxy`` (a :class:`CountingProxy` or :class:`FaultProxy`, or a subclass) in
    front of ``upstream``; its ``url`` is set while it runs."""
    with serve_http(_handler(upstream, proxy)) as url:
        proxy.url = url
        yield proxy


@contextmanager
def counting_proxy(upstream: str) -> Iterator[CountingProxy]:
    """An HTTP proxy on 127.0.0.1 (free port) that records every request to ``upstream``."""
    with serve_proxy(upstream, CountingProxy()) as proxy:
        yield proxy


@contextmanager
def fault_proxy(upstream: str, error_body: ErrorBody) -> Iterator[FaultProxy]:
    """An HTTP proxy in front of ``upstream`` that injects the faults of its ``plan``."""
    with serve_proxy(upstream, FaultProxy(error_body=error_body)) as proxy:
        yield proxy


# -- retries without the wait ----------------------------------------------------------


class _FastSleepAsyncio:
    """``asyncio`` with ``sleep`` capped at 1 ms; everything else delegated."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    async def sleep(delay: float, result: Any = None) -> Any:
        await asyncio.sleep(min(delay, 0.001))
        return result


def shorten_sleeps(monkeypatch: Any, *modules: ModuleType) -> None:
    """Make each module's ``asyncio.sleep`` (a retry loop's backoff) last at most 1 ms, for
    the test using ``monkeypatch``."""
    for module in modules:
        monkeypatch.setattr(module, "asyncio", _FastSleepAsyncio())
