"""An HTTP proxy in front of any server (such as fake-gcs-server): it counts every request
and injects the faults of a :class:`~fsseam.testing.faults.FaultPlan`."""

from __future__ import annotations

import contextlib
import http.client
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any, TypeVar
from urllib.parse import urlsplit

from ..proxy import ProxiedRequest, serve_http
from .plan import REASON_PHRASES, ErrorBody, FaultPlan, PlannedFault, abort


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


class _Forward(BaseHTTPRequestHandler):
    """Forwards to one upstream, records, and meets the plan's faults; :func:`_handler`
    binds it to one proxy."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the client expects
    proxy: CountingProxy
    plan: FaultPlan | None
    host: str
    port: int | None

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
        with self.proxy.lock:
            self.proxy.records.append(ProxiedRequest(
                method=self.command, path=path, query=query, status=status,
                request_bytes=sent, response_bytes=got))

    def _forward(self) -> None:
        if "chunked" in self.headers.get("Transfer-Encoding", ""):
            raise RuntimeError("the proxy does not forward chunked bodies")
        path, _, query = self.path.partition("?")
        length = int(self.headers.get("Content-Length") or 0)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
        with self.proxy.lock:
            self.proxy.requests.append((self.command, path))
        fault = self.plan.take(self.command, path, query) if self.plan is not None else None
        if fault is not None and fault.kind == "reset":
            self._reset(fault, length, headers)
            return
        body = self.rfile.read(length) if length else None
        if fault is not None and fault.kind.isdigit():
            status = int(fault.kind)
            assert isinstance(self.proxy, FaultProxy)
            content_type, data = self.proxy.error_body(status, path)
            self._answer(status, REASON_PHRASES.get(status, "Error"),
                         [("Content-Type", content_type)], data)
            self._record(path, query, status, length, len(data))
            return
        self._pass(path, query, body, length, headers, lost=fault is not None)

    def _reset(self, fault: PlannedFault, length: int, headers: dict[str, str]) -> None:
        """The upstream gets the headers and the first bytes of the body, then both
        connections are reset."""
        part = self.rfile.read(min(length, fault.cut_after)) if length else b""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        with contextlib.suppress(OSError):
            conn.putrequest(self.command, self.path, skip_accept_encoding=True)
            for k, v in headers.items():
                conn.putheader(k, v)
            conn.endheaders()
            conn.send(part)
            if conn.sock is not None:
                abort(conn.sock)
        conn.close()
        assert self.plan is not None
        with self.plan.lock:
            self.plan.cut_bodies.append(len(part))
        abort(self.connection)
        self.close_connection = True

    def _pass(self, path: str, query: str, body: bytes | None, length: int,
              headers: dict[str, str], *, lost: bool) -> None:
        """Forward whole; with ``lost`` the request lands and the answer never arrives."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=60)
        try:
            conn.request(self.command, self.path, body=body, headers=headers)
            resp = conn.getresponse()
            data = resp.read()
        finally:
            conn.close()
        if self.plan is not None:
            self.plan.forwarded_whole(self.command, path, query)
        if lost:
            abort(self.connection)
            self.close_connection = True
            return
        self._answer(resp.status, resp.reason, resp.getheaders(), data)
        self._record(path, query, resp.status, length, len(data))

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _forward

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


def _handler(upstream: str, proxy: CountingProxy) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)
    plan = proxy.plan if isinstance(proxy, FaultProxy) else None
    bound = {"proxy": proxy, "plan": plan, "host": target.hostname or "127.0.0.1",
             "port": target.port}
    return type("Forward", (_Forward,), bound)


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


