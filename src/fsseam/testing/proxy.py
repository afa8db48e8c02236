"""A counting HTTP proxy: how many requests a call costs, as the server sees them.

    from fsseam.testing.proxy import counting_proxy

    with counting_proxy("http://127.0.0.1:10000") as proxy:
        ...                                   # point the client at proxy.url
        proxy.take()                          # [("HEAD", "/acct/c/k"), ("GET", ...)]
        proxy.counts()                        # Counter({"GET": 1, "HEAD": 1})

It forwards every request to one upstream on a keep-alive connection per client
connection, records method, path, status and body sizes, and speaks HTTP/1.1 to the
client (chunked request bodies are forwarded with a Content-Length). For emulators with no
request log of their own (Azurite, fake-gcs-server); binds 127.0.0.1 on a free port and
stops with the ``with`` block.

``python -m fsseam.testing.proxy UPSTREAM`` runs one in a process of its own (a benchmark's
proxy then takes no interpreter lock from the client it measures): it prints a line of JSON
with its ``url`` and a ``control`` URL, and serves until its standard input closes. On
the control URL, ``GET /take`` answers the requests forwarded since the last take (a JSON
object of ``count`` and ``methods``) and resets them, and ``PUT /latency?seconds=S`` sets
the latency, and ``PUT /replay?on=1`` (``on=0``) starts (ends) replaying.

While replaying, a request whose method and path the proxy answered since replaying began
gets that answer again, at once, without the upstream: what a client spends on a request
measured with no server's work beside it (an emulator on the client's own cores makes the
same client code cost up to three times the CPU: docs/performance.md). Its conditions are
not evaluated, so only calls whose answers do not depend on them repeat truthfully.
"""

from __future__ import annotations

import argparse
import http.client
import json
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

__all__ = ["ForwardingProxy", "ProxiedRequest", "counting_proxy", "forwarding_handler",
           "main", "serve_http"]

# Hop-by-hop headers (RFC 9110 7.6.1) are the proxy's own business on each side.
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade",
     "proxy-connection", "content-length"}
)


@dataclass(frozen=True)
class ProxiedRequest:
    """One request a proxy forwarded (or answered itself, with an injected fault)."""

    method: str
    path: str
    """The request path without the query string."""
    query: str
    status: int
    request_bytes: int
    response_bytes: int


@dataclass(frozen=True)
class _Answer:
    """An upstream's answer as the proxy passes it on (or replays it)."""

    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes


@dataclass
class ForwardingProxy:
    """Where the proxy listens (``url``) and what it forwarded since the last take."""

    url: str
    upstream: str
    latency: float = 0.0
    """Seconds each request waits before it is forwarded: a network round trip to the
    store, for measuring what concurrency buys (emulators answer in microseconds)."""
    records: list[ProxiedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    replaying: bool = False
    """Whether answers are replayed (the module's text): set by :meth:`replay`."""
    _answers: dict[tuple[str, str], _Answer] = field(default_factory=dict)

    def replay(self, on: bool) -> None:
        """Start (with the answers of earlier replaying forgotten) or end replaying."""
        with self.lock:
            self.replaying = on
            self._answers.clear()

    def replayed(self, method: str, path: str) -> _Answer | None:
        """The answer to replay for ``method`` on ``path``, if replaying and it has one."""
        with self.lock:
            return self._answers.get((method, path)) if self.replaying else None

    def answered(self, method: str, path: str, answer: _Answer) -> None:
        """Keep ``answer`` to replay, while replaying (else nothing is kept)."""
        with self.lock:
            if self.replaying:
                self._answers.setdefault((method, path), answer)

    def take(self) -> list[tuple[str, str]]:
        """The (method, path) of every request since the last take, in order (and reset)."""
        return [(r.method, r.path) for r in self.take_records()]

    def take_records(self) -> list[ProxiedRequest]:
        """The full records since the last take, in completion order (and reset)."""
        with self.lock:
            out, self.records = self.records, []
        return out

    def counts(self) -> Counter[str]:
        """Requests per HTTP method since the last take (without resetting)."""
        with self.lock:
            return Counter(r.method for r in self.records)

    def clear(self) -> None:
        with self.lock:
            self.records = []


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if "chunked" in handler.headers.get("Transfer-Encoding", "").lower():
        parts = []
        while True:
            size = int(handler.rfile.readline().split(b";", 1)[0].strip(), 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                break
            parts.append(handler.rfile.read(size))
            handler.rfile.readline()
        return b"".join(parts)
    length = int(handler.headers.get("Content-Length") or 0)
    return handler.rfile.read(length) if length else b""


class _Forward(BaseHTTPRequestHandler):
    """Forwards to ``proxy.upstream`` and records; :func:`forwarding_handler` binds it to
    one proxy."""

    protocol_version = "HTTP/1.1"  # keep-alive, as the clients expect
    # Headers and body go out in two writes: with Nagle's algorithm the body waits
    # for the client's delayed ACK of the headers (40 ms on Linux) on small answers.
    disable_nagle_algorithm = True
    upstream_conn: http.client.HTTPConnection | None = None
    proxy: ForwardingProxy
    host: str
    port: int | None

    def _upstream(self) -> http.client.HTTPConnection:
        if self.upstream_conn is None:
            self.upstream_conn = http.client.HTTPConnection(self.host, self.port, timeout=120)
        return self.upstream_conn

    def _exchange(
        self, body: bytes, headers: dict[str, str]
    ) -> tuple[http.client.HTTPResponse, bytes]:
        # A kept-alive upstream connection may have been closed by the server while
        # idle: one fresh connection is tried before giving up.
        for attempt in (0, 1):
            conn = self._upstream()
            try:
                conn.request(self.command, self.path, body=body or None, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                if resp.will_close:
                    conn.close()
                    self.upstream_conn = None
                return resp, data
            except (http.client.HTTPException, ConnectionError):
                conn.close()
                self.upstream_conn = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def _forward(self) -> None:
        proxy = self.proxy
        body = _read_body(self)
        path, _, query = self.path.partition("?")
        answer = proxy.replayed(self.command, path)
        if answer is None:
            answer = self._upstream_answer(body)
            proxy.answered(self.command, path, answer)
        # Recorded before the client sees the answer, so a count taken right after a
        # call includes all of its requests.
        with proxy.lock:
            proxy.records.append(ProxiedRequest(
                self.command, path, query, answer.status, len(body), len(answer.body)))
        self._answer(answer)

    def _upstream_answer(self, body: bytes) -> _Answer:
        if self.proxy.latency:
            time.sleep(self.proxy.latency)
        headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP}
        headers.pop("Host", None)
        if body or self.command in ("POST", "PUT", "PATCH"):
            headers["Content-Length"] = str(len(body))
        resp, data = self._exchange(body, headers)
        kept = [(k, v) for k, v in resp.getheaders() if k.lower() not in _HOP_BY_HOP]
        if self.command == "HEAD":
            # A HEAD answer carries the length the GET would have, and no body.
            length = resp.getheader("Content-Length")
            if length is not None:
                kept.append(("Content-Length", length))
        return _Answer(resp.status, resp.reason, kept, data)

    def _answer(self, answer: _Answer) -> None:
        self.send_response(answer.status, answer.reason)
        for k, v in answer.headers:
            self.send_header(k, v)
        if self.command != "HEAD":
            self.send_header("Content-Length", str(len(answer.body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(answer.body)

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _forward

    def finish(self) -> None:
        super().finish()
        if self.upstream_conn is not None:
            self.upstream_conn.close()

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


def forwarding_handler(proxy: ForwardingProxy) -> type[BaseHTTPRequestHandler]:
    """The request handler class of ``proxy`` (forward to ``proxy.upstream``, record).
    Subclass it to alter answers (a fault or a misbehaving intermediary) and serve it with
    :func:`serve_http`."""
    target = urlsplit(proxy.upstream)
    bound = {"proxy": proxy, "host": target.hostname or "127.0.0.1", "port": target.port}
    return type("Forward", (_Forward,), bound)


class _Server(ThreadingHTTPServer):
    # socketserver's backlog is 5: a client opening many connections at once (64 reads
    # in flight) overflows it, the kernel drops the extra SYNs, and each of those
    # connections waits a second for its retry, which the benchmark would time.
    request_queue_size = 128


@contextmanager
def serve_http(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """Serve ``handler`` on 127.0.0.1 (a free port) in a thread; yields the base URL and
    stops the server on exit."""
    server = _Server(("127.0.0.1", 0), handler)
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
def counting_proxy(upstream: str, *, latency: float = 0.0) -> Iterator[ForwardingProxy]:
    """An HTTP proxy on 127.0.0.1 (free port) that records every request to ``upstream``
    (each delayed by ``latency`` seconds, if given)."""
    proxy = ForwardingProxy(url="", upstream=upstream.rstrip("/"), latency=latency)
    with serve_http(forwarding_handler(proxy)) as url:
        proxy.url = url
        yield proxy


class _Control(BaseHTTPRequestHandler):
    """The control URL of a proxy run by :func:`main`."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    proxy: ForwardingProxy

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if urlsplit(self.path).path != "/take":
            self._reply(404, {"error": "GET /take"})
            return
        records = self.proxy.take_records()
        self._reply(200, {"count": len(records),
                          "methods": dict(Counter(r.method for r in records))})

    def do_PUT(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/replay":
            on = parse_qs(parts.query).get("on", [""])[0]
            if on not in ("0", "1"):
                self._reply(400, {"error": "PUT /replay?on=1 (or on=0)"})
                return
            self.proxy.replay(on == "1")
            self._reply(200, {"replaying": on == "1"})
            return
        seconds = parse_qs(parts.query).get("seconds", [""])[0]
        try:
            latency = float(seconds)
        except ValueError:
            latency = -1.0
        if parts.path != "/latency" or not 0 <= latency < 60:
            self._reply(400, {"error": "PUT /latency?seconds=S, 0 <= S < 60"})
            return
        self.proxy.latency = latency
        self._reply(200, {"latency": latency})

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass


def main(argv: list[str] | None = None) -> int:
    """Serve a counting proxy to ``UPSTREAM`` until standard input closes (see the
    module's text)."""
    ap = argparse.ArgumentParser(prog="python -m fsseam.testing.proxy",
                                 description="A counting HTTP proxy in its own process.")
    ap.add_argument("upstream", help="the server to forward to, e.g. http://127.0.0.1:9000")
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added per request")
    args = ap.parse_args(argv)
    with counting_proxy(args.upstream, latency=args.latency) as proxy:
        control = type("Control", (_Control,), {"proxy": proxy})
        with serve_http(control) as control_url:
            print(json.dumps({"url": proxy.url, "control": control_url}), flush=True)
            # The parent holds the pipe: its exit (even a crash) ends this process too.
            sys.stdin.read()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
