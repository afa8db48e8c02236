"""A scripted HTTP/1.1 server on 127.0.0.1 for the object stores' transport tests.

A test writes the handler (what a store answers); the server counts the connections it
accepts, says when it has closed one (an idle timeout met at once, with the handler's
``close_connection``), and holds what the handler records (``seen``) and the statuses a
test wants answered first (``answers``).

    class Handler(StubHandler):
        def do_GET(self) -> None:
            self.server.seen.append(self.path)
            ...
    with serving(Handler, close_after=True) as server:
        ...server.url, server.connections, server.closed.wait(10)
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["StubHandler", "StubServer", "serving"]


class StubServer(ThreadingHTTPServer):
    """Counts the connections it accepts, and says when it has closed one."""

    daemon_threads = True

    def __init__(self, handler: type[StubHandler], *, close_after: bool = False,
                 answers: list[int] | None = None) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.close_after = close_after
        """The handler closes each connection after its answer, without saying so."""
        self.answers = list(answers or [])
        """Statuses to answer first, in order (the handler pops them)."""
        self.connections = 0
        self.seen: list[Any] = []
        self.closed = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_port}"

    def verify_request(self, request: Any, client_address: Any) -> bool:
        self.connections += 1
        return True

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.closed.set()


class StubHandler(BaseHTTPRequestHandler):
    """HTTP/1.1 kept alive, quiet; ``server`` is the :class:`StubServer`."""

    protocol_version = "HTTP/1.1"
    server: StubServer

    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def serving(handler: type[StubHandler], *, close_after: bool = False,
            answers: list[int] | None = None) -> Iterator[StubServer]:
    """A :class:`StubServer` serving on a thread of its own, stopped on exit."""
    server = StubServer(handler, close_after=close_after, answers=answers)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
