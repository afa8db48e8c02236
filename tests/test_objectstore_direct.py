"""Requests from the calling thread (``fsseam.backends.objectstore.direct``) against a real
socket server that answers exactly the bytes each test scripts: headers split as
``http.client`` and :mod:`email` would (case, repeats, folded lines), bodies by length, by
chunks and to the close, HEAD's empty body, kept connections reused, one the server closed
while idle never used, and the one resend of a request whose reused connection broke."""

from __future__ import annotations

import http.client
import io
import socket
import struct
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsseam.backends.objectstore.direct import Broken, Connections, SplitHeadersResponse

from .budget import examples

Script = Callable[[socket.socket, int], None]
"""Serves one accepted connection (its number, from 0)."""


def _request(conn: socket.socket) -> bytes:
    """One request's head and body (by Content-Length), as the server read it; b"" when the
    client closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            return b""
        data += piece
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(rest) < length:
        rest += conn.recv(65536)
    return head + b"\r\n\r\n" + rest


@contextmanager
def _server(script: Script) -> Iterator[str]:
    """A server on 127.0.0.1 running ``script`` on each connection, in a thread each;
    yields its base URL."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    threads: list[threading.Thread] = []
    accepted: list[socket.socket] = []

    def serve(conn: socket.socket, number: int) -> None:
        with conn:
            script(conn, number)

    def accept() -> None:
        number = 0
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            if stop.is_set():
                conn.close()
                return
            accepted.append(conn)
            thread = threading.Thread(target=serve, args=(conn, number), daemon=True)
            threads.append(thread)
            thread.start()
            number += 1

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        socket.create_connection(listener.getsockname(), timeout=5).close()  # wakes accept
        listener.close()
        acceptor.join(5)
        for conn in accepted:  # the client's kept connections: end the scripts' reads
            with suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(5)


def _answering(answers: list[bytes], seen: list[bytes] | None = None) -> Script:
    """Answers each request on a connection with the next of ``answers`` (shared by every
    connection), until the client closes or the answers run out."""
    lock = threading.Lock()

    def script(conn: socket.socket, number: int) -> None:
        while True:
            request = _request(conn)
            if not request:
                return
            with lock:
                if seen is not None:
                    seen.append(request)
                if not answers:
                    return
                answer = answers.pop(0)
            conn.sendall(answer)

    return script


def test_headers_are_split_as_email_parser_splits_them() -> None:
    answer = (b"HTTP/1.1 200 OK\r\n"
              b"Content-Length: 5\r\n"
              b"X-Goog-Hash: crc32c=AAAA\r\n"
              b"x-goog-hash: md5=BBBB\r\n"
              b"ETag:   \"e1\"  \r\n"
              b"X-Folded: first\r\n"
              b"\tsecond\r\n"
              b"X-Latin: caf\xe9\r\n"
              b"\r\n"
              b"hello")
    seen: list[bytes] = []
    with _server(_answering([answer], seen)) as url:
        got = Connections(timeout=5).exchange("GET", f"{url}/b/o?alt=media", {"X-A": "1"})
    assert got.status == 200 and got.body == b"hello"
    headers = got.headers
    assert headers.get("etag") == headers.get("ETAG") == headers["Etag"] == '"e1"'
    assert headers.get("x-goog-hash") == "crc32c=AAAA"  # the first, as Message.get
    assert headers.get_all("X-Goog-Hash") == ["crc32c=AAAA", "md5=BBBB"]
    assert headers.get("x-folded") == "first second"
    assert headers.get("x-latin") == "caf\u00e9"
    assert headers.get("missing") is None and "Content-Length" in headers
    assert seen[0].startswith(b"GET /b/o?alt=media HTTP/1.1\r\n")
    assert b"\r\nX-A: 1\r\n" in seen[0]


def test_http_client_reads_the_same_headers() -> None:
    """The same answer read by http.client's own parser gives the same values."""
    answer = (b"HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-1/9\r\n"
              b"Content-Length: 2\r\nX-Goog-Generation: 17\r\nx-goog-hash: a\r\n"
              b"X-Goog-Hash: b\r\n\r\nab")
    with _server(_answering([answer, answer])) as url:
        ours = Connections(timeout=5).exchange("GET", f"{url}/x", {})
        conn = http.client.HTTPConnection(url.removeprefix("http://"), timeout=5)
        conn.request("GET", "/x")
        theirs = conn.getresponse()
        body = theirs.read()
        conn.close()
    assert (ours.status, ours.body) == (theirs.status, body)
    for name in ("content-range", "Content-Length", "x-goog-generation", "X-Goog-Hash"):
        assert ours.headers.get(name) == theirs.headers.get(name)
        assert ours.headers.get_all(name) == theirs.headers.get_all(name)


def test_bodies_by_chunks_to_the_close_and_none_for_head() -> None:
    chunked = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
               b"3\r\nabc\r\n4\r\ndefg\r\n0\r\n\r\n")
    head = b"HTTP/1.1 200 OK\r\nContent-Length: 123\r\n\r\n"
    to_close = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end"
    connections = Connections(timeout=5)
    served: list[int] = []

    def script(conn: socket.socket, number: int) -> None:
        served.append(number)
        for answer in (chunked, head):
            if not _request(conn):
                return
            conn.sendall(answer)
        if _request(conn):
            conn.sendall(to_close)

    with _server(script) as url:
        assert connections.exchange("GET", f"{url}/c", {}).body == b"abcdefg"
        got = connections.exchange("HEAD", f"{url}/h", {})
        assert (got.status, got.body, got.headers.get("content-length")) == (200, b"", "123")
        assert connections.exchange("GET", f"{url}/z", {}).body == b"until the end"
    assert served == [0]  # the chunked and the HEAD answer left the connection reusable


def test_a_kept_connection_closed_by_the_server_is_not_used() -> None:
    """The server answers one request per connection and then closes it without saying so
    (an idle timeout): the next request goes out on a new connection, not resent after a
    failure, so even a PUT (never resent) succeeds."""
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    closed = threading.Event()
    served: list[int] = []

    def script(conn: socket.socket, number: int) -> None:
        served.append(number)
        if _request(conn):
            conn.sendall(answer)
        conn.shutdown(socket.SHUT_RDWR)
        closed.set()

    connections = Connections(timeout=5)
    with _server(script) as url:
        assert connections.exchange("GET", f"{url}/a", {}).body == b"ok"
        assert closed.wait(5)
        got = connections.exchange("PUT", f"{url}/a", {}, b"data", resend=False)
        assert got.body == b"ok"
    assert served == [0, 1]


def test_a_reused_connection_that_breaks_unanswered_is_resent_once_if_allowed() -> None:
    """The second request on a kept connection meets a reset before any answer (the server
    reads it and drops the connection, after the idle poll saw nothing): with ``resend``
    it goes again at once on a new connection; without, the caller gets ``Broken``."""
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    requests: list[tuple[int, bytes]] = []

    def script(conn: socket.socket, number: int) -> None:
        served = 0
        while request := _request(conn):
            requests.append((number, request.split(b"\r\n", 1)[0]))
            if number % 2 == 0 and served == 1:
                conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return  # a reset, no answer
            conn.sendall(answer)
            served += 1

    with _server(script) as url:
        connections = Connections(timeout=5)
        assert connections.exchange("GET", f"{url}/1", {}).body == b"ok"
        assert connections.exchange("GET", f"{url}/2", {}, resend=True).body == b"ok"
        assert [r for _, r in requests] == [b"GET /1 HTTP/1.1", b"GET /2 HTTP/1.1",
                                           b"GET /2 HTTP/1.1"]
        assert [n for n, _ in requests] == [0, 0, 1]
        requests.clear()
        # connection 1 is kept: its second request is answered; a third connection (2)
        # breaks on its second request, which is not resent
        assert connections.exchange("GET", f"{url}/3", {}).body == b"ok"
        fresh = Connections(timeout=5)
        assert fresh.exchange("GET", f"{url}/4", {}).body == b"ok"
        with pytest.raises(Broken) as broken:
            fresh.exchange("PUT", f"{url}/5", {}, b"x")
        assert not broken.value.fresh and not broken.value.answered
    assert [r for _, r in requests] == [b"GET /3 HTTP/1.1", b"GET /4 HTTP/1.1",
                                       b"PUT /5 HTTP/1.1"]


def test_a_broken_status_line_is_a_transport_error() -> None:
    with _server(_answering([b"garbage\r\n\r\n"])) as url, pytest.raises(Broken) as broken:
        Connections(timeout=5).exchange("GET", f"{url}/x", {}, resend=True)
    assert broken.value.fresh
    assert isinstance(broken.value.error, http.client.HTTPException)


def test_connections_are_shared_by_threads() -> None:
    """Threads that each live for one request find the connection the one before them
    gave back."""
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nk"
    served: list[int] = []

    def script(conn: socket.socket, number: int) -> None:
        served.append(number)
        while _request(conn):
            conn.sendall(answer)

    connections = Connections(timeout=5)
    with _server(script) as url:
        for i in range(4):
            thread = threading.Thread(
                target=lambda i=i: connections.exchange("GET", f"{url}/{i}", {}))
            thread.start()
            thread.join()
    assert served == [0]


class _Bytes:
    """Bytes an answer is read from, as a socket hands them to ``makefile``."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(io.BytesIO(self.data))


def _spaced(values: list[str] | None) -> list[str] | None:
    """Values with their runs of white space as one space (email.parser keeps a folded
    line's own, this module makes it one)."""
    return None if values is None else [" ".join(v.split()) for v in values]


_name = st.text("abcXYZ-_0", min_size=1, max_size=6)
_value = st.text(st.characters(min_codepoint=32, max_codepoint=255), max_size=10)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.one_of(
    st.tuples(_name, _value).map(lambda p: f"{p[0]}:{p[1]}"),
    st.tuples(_name, _value).map(lambda p: f"{p[0]}: {p[1]} "),
    _value.map(lambda v: f"\t{v}"),  # a folded line
), max_size=8))
def test_any_header_block_reads_as_email_parser_reads_it(lines: list[str]) -> None:
    """Names, values, repeats and folded lines: the same ``get`` and ``get_all`` as
    ``http.client``'s own parse. (A line that is no header makes email.parser take the
    rest of the block for a body; here it is dropped alone.)"""
    block = "".join(f"{line}\r\n" for line in lines).encode("iso-8859-1")
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n" + block + b"\r\n"
    ours = SplitHeadersResponse(_Bytes(answer), method="GET")  # type: ignore[arg-type]
    ours.begin()
    theirs = http.client.parse_headers(io.BytesIO(answer.split(b"\r\n", 1)[1]))
    names = {line.partition(":")[0].strip() for line in lines} | {"Content-Length"}
    for name in names:
        if not name or name[0] in " \t":
            continue
        want = theirs.get_all(name)
        got = ours.headers.get_all(name)
        assert _spaced(got) == _spaced(want), (name, lines)


_framing = st.sampled_from(["length", "chunked", "close", "bad-length", "http10"])


def _answer_bytes(status: int, lines: list[str], body: bytes, framing: str,
                  method: str) -> bytes:
    head = "HTTP/1.0" if framing == "http10" else "HTTP/1.1"
    if status in (204, 304) and framing == "chunked":
        framing = "length"  # chunked with no chunk at all: http.client refuses it too
    block = "".join(f"{line}\r\n" for line in lines)
    if framing == "chunked":
        block += "Transfer-Encoding: chunked\r\n"
        payload = b"".join(b"%x;x=1\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7])
                           for i in range(0, len(body), 7)) + b"0\r\nTrailer: t\r\n\r\n"
    elif framing in ("close", "http10"):
        block += "Connection: close\r\n"
        payload = body
    elif framing == "bad-length":  # not a length http.client takes as a plain number
        block += f"Content-Length: +{len(body)}\r\n"
        payload = body
    else:
        block += f"Content-Length: {len(body)}\r\n"
        payload = body
    if method == "HEAD" or status in (204, 304):
        payload = b""
    return f"{head} {status} Some Reason\r\n{block}\r\n".encode("iso-8859-1") + payload


@settings(max_examples=examples(150), deadline=None)
@given(
    status=st.sampled_from([200, 201, 204, 206, 304, 404, 412, 503]),
    lines=st.lists(st.one_of(
        st.tuples(_name, _value).map(lambda p: f"{p[0]}: {p[1]}"),
        _value.map(lambda v: f"\t{v}"),  # a folded line
    ), max_size=6),
    body=st.one_of(
        st.binary(max_size=300),
        st.integers(300, 70_000).map(lambda n: bytes(range(256)) * (n // 256) + b"end"),
        st.just(b"z" * 150_000),
    ),
    framing=_framing,
    method=st.sampled_from(["GET", "HEAD"]),
    cuts=st.lists(st.integers(1, 40_000), max_size=4),
)
def test_any_answer_reads_as_http_client_reads_it(
    status: int, lines: list[str], body: bytes, framing: str, method: str,
    cuts: list[int],
) -> None:
    """Any status, headers, body, framing (a length, chunks, up to the close, HTTP/1.0, a
    length http.client reads its own way) and any cutting of the bytes on the wire: the
    exchange's status, headers and body are what ``http.client`` reads from the same
    bytes, and a kept connection stays usable after it."""
    answer = _answer_bytes(status, lines, body, framing, method)
    reference = http.client.HTTPResponse(_Bytes(answer), method=method)  # type: ignore[arg-type]
    reference.begin()
    want_body = reference.read()

    def script(conn: socket.socket, number: int) -> None:
        if number == 0:
            if not _request(conn):
                return
            at = 0
            for cut in sorted(cuts):
                if at < cut < len(answer):
                    conn.sendall(answer[at:cut])
                    at = cut
            conn.sendall(answer[at:])
            if framing in ("close", "http10"):
                return  # closed: the body's end
        if _request(conn):  # the connection kept, or a new one: a second request
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")

    connections = Connections(timeout=5)
    with _server(script) as url:
        got = connections.exchange(method, f"{url}/k", {})
        assert (got.status, got.body) == (reference.status, want_body)
        names = {line.partition(":")[0].strip() for line in lines if line[0] not in " \t"}
        for name in names | {"Content-Length", "Transfer-Encoding", "Connection"}:
            assert _spaced(got.headers.get_all(name)) == _spaced(
                reference.headers.get_all(name)), name
        assert got.headers.reason_phrase == "Some Reason"
        again = connections.exchange("GET", f"{url}/k", {})
        assert (again.status, again.body) == (200, b"ok")
