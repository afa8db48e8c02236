"""Object-store requests sent from the calling thread, on kept connections.

The async fsspec stores send every request from an event loop on a thread of their own; a
synchronous caller hands each request over and waits (``fsspec.asyn.sync``). For one small
read that bridge, with the libraries' request pipelines, costs more client CPU than the
request itself. A store whose request can be built and signed by its own library's pieces
(the URL, the headers, the credentials) sends it from the caller's thread here, on a
socket of its own, the answer read by ``http.client``'s response:

* :class:`Connections` keeps connections by host, shared by every thread: a request takes
  the one used last (or opens one) and gives it back once its answer is read whole, so a
  thread living for one call (a pool made for a burst of requests) finds the connections
  earlier threads opened, as requests through one aiohttp session did. Those of another
  process (before a fork) are never handed out;
* a kept connection the server closed while it was idle is not used again (one poll before
  each request: an event loop would have seen the close as it happened); a request whose
  reused connection broke before any answer is resent once on a new connection at once
  when the caller says it may be (an idempotent request: a GET, a HEAD), as aiohttp does;
* a request is written whole (:func:`request_head`, with ``http.client``'s defaults and
  refusals) and sent with its body in one send: ``http.client``'s own request writing
  (a check per header, two sends) cost a third of an exchange;
* an answer's headers are split into :class:`Headers` in one regex pass:
  ``http.client`` hands them to :mod:`email.parser`, which cost more CPU than the rest
  of a small request's client side together;
* a plain answer (HTTP/1.1, a final status, a ``Content-Length``) is read in one receive
  or two, its body taken by its length; any other (chunks, up to the close, a 1xx,
  HTTP/1.0, a broken status line) by ``http.client``'s response over the same bytes
  (:class:`SplitHeadersResponse`), with its rules and its errors.

Retries after an answer (5xx, throttling) stay the store's: its library's policy, in the
store's transport.
"""

from __future__ import annotations

import http.client
import io
import os
import re
import select
import socket
import ssl
import sys
import threading
import urllib.parse
import weakref
from collections.abc import Mapping
from typing import Any, NamedTuple

__all__ = [
    "DEFAULT_TIMEOUT",
    "MAX_IDLE",
    "TRANSPORT_ERRORS",
    "Answer",
    "Broken",
    "Connections",
    "Headers",
]

MAX_IDLE = 32
"""Idle connections kept per host; more at once (a burst of parallel requests) are closed
when their answers are read."""
DEFAULT_TIMEOUT = 300.0
"""Seconds a socket operation may block when the store's library names no timeout:
aiohttp's default total timeout."""
TRANSPORT_ERRORS = (OSError, http.client.HTTPException)
"""What a connection, a send or a receive raises (resets, refusals, timeouts, a broken
status line): the equivalents of what the stores' libraries retry."""

_HEADER_LINE = re.compile(r"([^:\r\n]*):[ \t]*([^\r\n]*?)[ \t]*\r?\n")
"""One header line: its name and its value without the white space around it."""
_MAX_LINE = 65536
_MAX_HEADERS = 100
"""``http.client``'s own bounds on one header line and on the number of headers."""


class Headers(dict[str, str]):
    """An answer's headers by lower-cased name, looked up whatever the case; a name sent
    more than once keeps its first value (as :meth:`email.message.Message.get`), all of
    them in :meth:`get_all`. ``reason_phrase``: the status line's, where a store may say
    what went wrong when the answer has no body (Azure, to a HEAD)."""

    def __init__(self) -> None:
        super().__init__()
        self.repeated: dict[str, list[str]] = {}
        self.reason_phrase = ""

    def get(self, name: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return super().get(name.lower(), default)

    def __getitem__(self, name: str) -> str:
        return super().__getitem__(name.lower())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and super().__contains__(name.lower())

    def get_all(self, name: str, default: list[str] | None = None) -> list[str] | None:
        key = name.lower()
        if key in self.repeated:
            return list(self.repeated[key])
        value = super().get(key)
        return default if value is None else [value]

    def add(self, name: str, value: str) -> None:
        key = name.lower()
        if not super().__contains__(key):
            self[key] = value
            return
        self.repeated.setdefault(key, [super().__getitem__(key)]).append(value)


def _read_headers(fp: object) -> Headers:
    """The header block up to its empty line, split into names and values (a folded line
    continues the value before it)."""
    readline = fp.readline  # type: ignore[attr-defined]
    lines: list[bytes] = []
    while True:
        line: bytes = readline(_MAX_LINE + 1)
        if len(line) > _MAX_LINE:
            raise http.client.LineTooLong("header line")
        if line in (b"\r\n", b"\n", b""):
            break
        lines.append(line)
        if len(lines) > _MAX_HEADERS:
            raise http.client.HTTPException(f"got more than {_MAX_HEADERS} headers")
    return _parse_block(b"".join(lines).decode("iso-8859-1"))


def _parse_block(text: str) -> Headers:
    """A header block's lines (each ended by its newline) split into names and values."""
    if "\n " not in text and "\n\t" not in text and text[:1] not in (" ", "\t"):
        # The common block, no folded line: one regex pass, a dict of its pairs.
        pairs = _HEADER_LINE.findall(text)
        # Reversed: a name sent more than once keeps its first value.
        plain = {name.strip().lower(): value for name, value in reversed(pairs)}
        headers = Headers()
        dict.update(headers, plain)
        if len(plain) != len(pairs):  # a proxy's Server and Date beside the server's
            every: dict[str, list[str]] = {}
            for name, value in pairs:
                every.setdefault(name.strip().lower(), []).append(value)
            headers.repeated = {k: v for k, v in every.items() if len(v) > 1}
        return headers
    return _split_lines(text)


def _split_lines(text: str) -> Headers:
    """A header block line by line: folded lines, names sent more than once."""
    headers = Headers()
    last = ""
    for line in text.split("\n"):
        if not line:
            continue  # after the last line's newline
        if line[0] in " \t" and last:
            if last in headers.repeated:  # continues the latest of the name's values
                values = headers.repeated[last]
                values[-1] = f"{values[-1]} {line.strip()}"
            else:
                headers[last] = f"{dict.__getitem__(headers, last)} {line.strip()}"
            continue
        name, sep, value = line.partition(":")
        if not sep:
            last = ""  # not a header line, dropped; nor is what a fold would add to it
            continue
        last = name.strip().lower()
        headers.add(last, value.strip())
    return headers


class SplitHeadersResponse(http.client.HTTPResponse):
    """``http.client``'s response, its headers read by :func:`_read_headers`. ``begin`` is
    ``http.client``'s own but for that one line: it parses the status and decides how the
    body ends (length, chunks or the connection's close)."""

    def begin(self) -> None:
        if self.headers is not None:
            return
        while True:
            version, status, reason = self._read_status()
            if status != http.client.CONTINUE:
                break
            _read_headers(self.fp)
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        headers = _read_headers(self.fp)
        headers.reason_phrase = self.reason
        self.headers = self.msg = headers
        encoding = headers.get("transfer-encoding")
        self.chunked = bool(encoding and encoding.lower() == "chunked")
        self.chunk_left = None
        self.will_close = self._check_close()
        self.length = None
        length = headers.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            else:
                if self.length < 0:
                    self.length = None
        if (status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED)
                or 100 <= status < 200 or self._method == "HEAD"):
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True


class _Received(io.RawIOBase):
    """A socket's bytes with those already received first: what ``http.client``'s
    response, or a buffered read of a body, takes over from :func:`_read_answer`."""

    def __init__(self, first: bytes | memoryview, sock: socket.socket) -> None:
        self._first = memoryview(first)
        self._sock = sock

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._first:
            n = min(len(buffer), len(self._first))
            buffer[:n] = self._first[:n]
            self._first = self._first[n:]
            return n
        return self._sock.recv_into(buffer)

    def makefile(self, mode: str) -> io.BufferedReader:
        """What ``http.client``'s response asks of its socket."""
        return io.BufferedReader(self)


_FIRST_READ = 65536
"""Bytes asked of the first receive: a small answer whole, or a large one's head."""
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_FINAL_STATUS = re.compile(rb"HTTP/1\.1 ([2-9][0-9][0-9])(?: ([^\r\n]*))?\r?\n")
"""The status line a plain answer starts with; any other goes to ``http.client``."""


class _Read(NamedTuple):
    status: int
    headers: Headers
    body: bytes
    will_close: bool


def _read_answer(sock: socket.socket, method: str, answered: list[bool]) -> _Read:
    """One answer off ``sock``. A plain one (HTTP/1.1, a final status, a Content-Length or
    no body, its head within 64 KiB) is read here: the head split, the body taken by its
    length, in one receive or two, where ``http.client`` takes three and builds a reader
    and a response for it. Any other (chunks, up to the close, a 1xx, HTTP/1.0, a broken
    status line) is read by ``http.client``'s response over the same bytes, with its own
    rules and errors. ``answered`` gets True once the head is read."""
    data = sock.recv(_FIRST_READ)
    end = _HEAD_END.search(data)
    while end is None and data and len(data) <= _MAX_LINE:
        more = sock.recv(_FIRST_READ)
        if not more:
            break
        data += more
        end = _HEAD_END.search(data)
    first = _FINAL_STATUS.match(data) if end is not None else None
    if end is None or first is None or end.start() - first.end() >= _MAX_LINE:
        return _read_by_http_client(data, sock, method, answered)
    block = data[first.end() : end.start()]
    if block.count(b"\n") >= _MAX_HEADERS:
        return _read_by_http_client(data, sock, method, answered)
    headers = _parse_block(block.decode("iso-8859-1") + "\n") if block else Headers()
    status = int(first.group(1))
    length_text = headers.get("content-length")
    if "transfer-encoding" in headers:
        return _read_by_http_client(data, sock, method, answered)
    if method == "HEAD" or status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED):
        length = 0
    elif length_text is not None and length_text.isascii() and length_text.isdigit():
        length = int(length_text)
    else:
        return _read_by_http_client(data, sock, method, answered)  # no length: to the close
    reason = (first.group(2) or b"").decode("iso-8859-1").strip()
    headers.reason_phrase = reason
    answered[0] = True
    connection = headers.get("connection")
    will_close = bool(connection and "close" in connection.lower())
    start = end.end()
    if len(data) - start >= length:
        # Bytes past the answer belong to no request: the connection is not used again.
        return _Read(status, headers, data[start : start + length],
                     will_close or len(data) - start > length)
    # The rest straight into the body's bytes (a buffered read of more than its buffer
    # receives into the result itself): one copy, as ``http.client``'s read makes.
    body = io.BufferedReader(_Received(memoryview(data)[start:], sock)).read(length)
    if len(body) < length:
        raise http.client.IncompleteRead(body, length - len(body))
    return _Read(status, headers, body, will_close)


def _read_by_http_client(data: bytes, sock: socket.socket, method: str,
                         answered: list[bool]) -> _Read:
    resp = SplitHeadersResponse(_Received(data, sock), method=method)  # type: ignore[arg-type]
    try:
        resp.begin()
        answered[0] = True
        content = resp.read()
    finally:
        resp.close()  # the reader over the socket, not the socket
    return _Read(resp.status, resp.headers, content, resp.will_close)  # type: ignore[arg-type]


Host = tuple[str, str]
"""(scheme, host:port) of a connection."""


class Answer(NamedTuple):
    """A request's answer, read whole."""

    status: int
    headers: Headers
    body: bytes


class Broken(Exception):
    """A transport error of one request: ``error`` what was raised; ``fresh``: on a
    connection opened for it; ``answered``: after the answer's status line arrived."""

    def __init__(self, error: BaseException, fresh: bool, answered: bool) -> None:
        super().__init__(str(error))
        self.error = error
        self.fresh = fresh
        self.answered = answered


_HAS_POLL = sys.platform != "win32"
"""``select.poll`` (not on Windows, whose ``select`` takes sockets too)."""


def _closed_by_server(sock: socket.socket) -> bool:
    """Whether a kept connection can no longer carry a request: the server closed it while
    it was idle (an idle timeout; or it sent bytes nobody asked for)."""
    try:
        if _HAS_POLL:
            poller = select.poll()
            poller.register(sock, select.POLLIN)
            return bool(poller.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


_UNSENDABLE = re.compile("[\x00-\x20\x7f]")
"""What a request target may not hold (``http.client`` refuses the same)."""
_BODY_EXPECTED = frozenset({"PATCH", "POST", "PUT"})
"""Methods that say ``Content-Length: 0`` without a body, as ``http.client`` does."""
_JOINED_BODY = 1 << 20
"""Bodies up to this size go out in one send with the request's head (one copy of at most
1 MiB against a second system call and segment)."""


def request_head(method: str, target: str, netloc: str, headers: Mapping[str, str],
                 body_size: int | None) -> bytes:
    """An HTTP/1.1 request's head as ``http.client`` writes it for ``request()``: the
    request line, ``Host`` and ``Accept-Encoding: identity`` unless given, the headers in
    their order, ``Content-Length`` of a body (or 0 for a method that expects one). A line
    break in a value, or a space or control character in the target, is refused (header
    injection), as ``http.client`` refuses them."""
    if _UNSENDABLE.search(target) or _UNSENDABLE.search(method):
        raise http.client.InvalidURL(f"can't send {method} {target!r}")
    lower = {name.lower() for name in headers}
    lines = [f"{method} {target} HTTP/1.1"]
    if "host" not in lower:
        lines.append(f"Host: {netloc}")
    if "accept-encoding" not in lower:
        lines.append("Accept-Encoding: identity")
    for name, value in headers.items():
        if "\r" in value or "\n" in value or "\r" in name or "\n" in name or ":" in name:
            raise ValueError(f"Invalid header {name!r}: {value!r}")
        lines.append(f"{name}: {value}")
    if "content-length" not in lower and "transfer-encoding" not in lower:
        if body_size is not None:
            lines.append(f"Content-Length: {body_size}")
        elif method in _BODY_EXPECTED:
            lines.append("Content-Length: 0")
    lines.append("\r\n")
    return "\r\n".join(lines).encode("iso-8859-1")


def _close_all(free: dict[Host, list[socket.socket]]) -> None:
    for kept in free.values():
        for sock in kept:
            sock.close()
    free.clear()


class Connections:
    """Kept-alive connections by host, shared by the threads (one per request in flight),
    and the exchange of one request on them."""

    def __init__(self, timeout: float = DEFAULT_TIMEOUT, max_idle: int = MAX_IDLE, *,
                 context: ssl.SSLContext | None = None) -> None:
        self.timeout = timeout
        self.max_idle = max_idle
        self.context = context
        """How TLS connections verify the server (None: as ``http.client`` would, with the
        system's certificates): a store library's own CA bundle."""
        self._lock = threading.Lock()
        self._pid = os.getpid()
        self._free: dict[Host, list[socket.socket]] = {}
        # Kept sockets left to the garbage collector would each warn; a finalizer (run
        # before any object's __del__ when a cycle is collected) closes them first.
        weakref.finalize(self, _close_all, self._free)

    def exchange(
        self, method: str, url: str, headers: Mapping[str, str],
        body: bytes | memoryview | None = None, *, resend: bool = False,
    ) -> Answer:
        """One request, its answer read whole; :class:`Broken` when the transport failed.
        With ``resend`` (an idempotent request), one whose reused connection broke before
        any answer is sent again at once on a new connection."""
        parts = urllib.parse.urlsplit(url)
        host = (parts.scheme, parts.netloc)
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        try:
            return self._once(host, method, target, headers, body)
        except Broken as e:
            if e.fresh or e.answered or not resend:
                raise
        return self._once(host, method, target, headers, body)

    def _once(self, host: Host, method: str, target: str, headers: Mapping[str, str],
              body: bytes | memoryview | None) -> Answer:
        head = request_head(method, target, host[1], headers,
                            None if body is None else memoryview(body).nbytes)
        sock, fresh = None, True
        answered = [False]
        try:
            sock, fresh = self._connection(host)
            if body is not None and memoryview(body).nbytes <= _JOINED_BODY:
                sock.sendall(head + body)
            else:
                sock.sendall(head)
                if body is not None:
                    sock.sendall(body)
            read = _read_answer(sock, method, answered)
        except TRANSPORT_ERRORS as e:
            if sock is not None:
                sock.close()
            raise Broken(e, fresh, answered[0]) from e
        except BaseException:
            if sock is not None:
                sock.close()  # interrupted mid-exchange: what is left on it is unknown
            raise
        if read.will_close:
            sock.close()
        else:
            self._give_back(host, sock)
        return Answer(read.status, read.headers, read.body)

    def _connection(self, host: Host) -> tuple[socket.socket, bool]:
        """An idle kept connection to ``host`` the server has not closed, or a new one
        (True: new)."""
        while (kept := self._take(host)) is not None:
            if not _closed_by_server(kept):
                return kept, False
            kept.close()
        scheme, netloc = host
        parts = urllib.parse.urlsplit(f"{scheme}://{netloc}")
        hostname = parts.hostname or ""
        port = parts.port or (443 if scheme == "https" else 80)
        sock = socket.create_connection((hostname, port), self.timeout)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if scheme == "https":
                sock = self._tls().wrap_socket(sock, server_hostname=hostname)
        except BaseException:
            sock.close()
            raise
        return sock, True

    def _tls(self) -> ssl.SSLContext:
        """The context TLS connections verify with: the store library's, else one as
        ``http.client`` makes it (the system's certificates, ALPN http/1.1)."""
        if self.context is None:
            context = ssl.create_default_context()
            context.set_alpn_protocols(["http/1.1"])
            self.context = context
        return self.context

    def _take(self, host: Host) -> socket.socket | None:
        with self._lock:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                self._free.clear()  # another process's: never used, never closed here
            free = self._free.get(host)
            return free.pop() if free else None

    def _give_back(self, host: Host, conn: socket.socket) -> None:
        with self._lock:
            free = self._free.setdefault(host, [])
            if self._pid == os.getpid() and len(free) < self.max_idle:
                free.append(conn)
                return
        conn.close()
