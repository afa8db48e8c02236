"""Fault injection against GCS (issue 9), through a fault-injecting proxy in front of
fake-gcs-server.

The proxy forwards like conftest.py's counting proxy, and can be told to make the next N
matching requests (method, path, optional query substring) fail:

- ``500`` / ``503``: a GCS JSON error answer; the request never reaches the server;
- ``reset``: the server gets the headers and the first ``cut_after`` body bytes, then both
  connections are reset (the client's with SO_LINGER 0): no answer, a broken body upstream;
- ``lost``: the request is forwarded whole (the write lands), then the client's connection
  is reset instead of answering.

Counts are taken at the proxy. gcsfs's retry (``retry_request``: 6 attempts for 5xx, 408,
429 and aiohttp client errors) sleeps 1 s, 2 s, 4 s, 8 s, 16 s (+ jitter) between tries; the
sleeps are shortened here, the decisions and counts are not. Uploads are POSTs, so aiohttp
never resends them on its own; a media GET may be resent once by aiohttp when its
connection breaks.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import http.client
import json
import socket
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

import gcsfs.retry
import pytest
from fsseam_gcs.client import GcsClient
from fsseam_gcs.testing import serve_http

from fsseam import ErrorCode, FsError, Workspace
from fsseam.versions import CreateOnly, IfMatch

NAME = "doc.txt"
PATH = "/doc.txt"
OLD = "old line 1\nold line 2\n"
NEW = "new line 1\nnew line 2\nnew line 3\n"
UPLOAD = "/upload/storage/v1/b/"
MEDIA = "/download/storage/v1/b/"


@dataclass
class Fault:
    method: str
    path: str  # substring of the path
    kind: str  # "500" | "503" | "reset" | "lost"
    times: int
    query: str = ""
    cut_after: int = 32 * 1024


@dataclass
class FaultProxy:
    upstream: str
    url: str = ""
    faults: list[Fault] = field(default_factory=list)
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    forwarded: list[tuple[str, str, str]] = field(default_factory=list)
    """Requests that reached fake-gcs-server complete (a cut one does not count)."""
    cut_bodies: list[int] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def inject(self, method: str, path: str, kind: str, times: int, *, query: str = "",
               cut_after: int = 32 * 1024) -> None:
        with self.lock:
            self.faults.append(Fault(method, path, kind, times, query, cut_after))

    def clear(self) -> None:
        with self.lock:
            self.faults.clear()
            self.requests.clear()
            self.forwarded.clear()
            self.cut_bodies.clear()

    def seen(self, method: str, path: str, *, forwarded: bool = False) -> int:
        with self.lock:
            rows = self.forwarded if forwarded else self.requests
            return sum(1 for m, p, _ in rows if m == method and path in p)

    def take_fault(self, method: str, path: str, query: str) -> Fault | None:
        with self.lock:
            self.requests.append((method, path, query))
            for f in self.faults:
                if f.times > 0 and f.method == method and f.path in path and f.query in query:
                    f.times -= 1
                    return f
        return None


def _abort(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.shutdown(socket.SHUT_RDWR)


def _handler(proxy: FaultProxy) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(proxy.upstream)

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _answer(self, status: int, reason: str, headers: list[tuple[str, str]],
                    data: bytes) -> None:
            self.send_response(status, reason)
            for k, v in headers:
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _forward(self) -> None:
            assert "chunked" not in self.headers.get("Transfer-Encoding", "")
            path, _, query = self.path.partition("?")
            fault = proxy.take_fault(self.command, path, query)
            length = int(self.headers.get("Content-Length") or 0)
            headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}

            if fault is not None and fault.kind == "reset":
                part = self.rfile.read(min(length, fault.cut_after)) if length else b""
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
                with contextlib.suppress(OSError):
                    conn.putrequest(self.command, self.path, skip_accept_encoding=True)
                    for k, v in headers.items():
                        conn.putheader(k, v)
                    conn.endheaders()
                    conn.send(part)
                    if conn.sock is not None:
                        _abort(conn.sock)
                conn.close()
                with proxy.lock:
                    proxy.cut_bodies.append(len(part))
                _abort(self.connection)
                self.close_connection = True
                return

            body = self.rfile.read(length) if length else None
            if fault is not None and fault.kind in ("500", "503"):
                status = int(fault.kind)
                reason = "Internal Server Error" if status == 500 else "Service Unavailable"
                error = {"error": {"code": status, "message": f"injected {reason}",
                                   "errors": [{"reason": "backendError",
                                               "message": f"injected {reason}"}]}}
                self._answer(status, reason, [("Content-Type", "application/json")],
                             json.dumps(error).encode())
                return

            conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
            try:
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            finally:
                conn.close()
            with proxy.lock:
                proxy.forwarded.append((self.command, path, query))
            if fault is not None:  # "lost": it landed, the answer never arrives
                _abort(self.connection)
                self.close_connection = True
                return
            self._answer(resp.status, resp.reason, resp.getheaders(), data)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Forward


@pytest.fixture(scope="module")
def fault_proxy(gcs_endpoint: str) -> Iterator[FaultProxy]:
    proxy = FaultProxy(upstream=gcs_endpoint)
    with serve_http(_handler(proxy)) as url:
        proxy.url = url
        yield proxy


class _FastSleepAsyncio:
    """``asyncio`` for gcsfs.retry with sleeps capped at 1 ms."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    async def sleep(delay: float, result: Any = None) -> Any:
        await asyncio.sleep(min(delay, 0.001))
        return result


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gcsfs.retry, "asyncio", _FastSleepAsyncio())


@dataclass
class Env:
    proxy: FaultProxy
    admin: GcsClient
    bucket: str

    def workspace(self, **kw: Any) -> Workspace:
        options = {"endpoint_url": self.proxy.url, "token": "anon", "project": "test"}
        return Workspace(f"gs://{self.bucket}", storage_options=options, **kw)

    def seed(self, data: bytes) -> str:
        generation = str(self.admin.upload_multipart(NAME, data, None)["generation"])
        return generation

    def state(self) -> tuple[bytes, str | None] | None:
        """(bytes, generation) of the object now, straight from the emulator."""
        try:
            media = self.admin.get_media(NAME)
        except FileNotFoundError:
            return None
        return media.data, media.generation

    def inject(self, method: str, kind: str, times: int, **kw: Any) -> None:
        path = UPLOAD + self.bucket if method == "POST" else f"{MEDIA}{self.bucket}/o/{NAME}"
        self.proxy.inject(method, path, kind, times, **kw)

    def uploads(self, *, forwarded: bool = False) -> int:
        return self.proxy.seen("POST", UPLOAD + self.bucket, forwarded=forwarded)

    def media_gets(self) -> int:
        return self.proxy.seen("GET", f"{MEDIA}{self.bucket}/o/{NAME}")


@pytest.fixture
def env(fault_proxy: FaultProxy, gcs_admin: Any, gcs_bucket: str) -> Iterator[Env]:
    fault_proxy.clear()
    yield Env(fault_proxy, GcsClient(gcs_admin, gcs_bucket), gcs_bucket)
    fault_proxy.clear()


def _ledger(ws: Workspace) -> dict[str, Any]:
    assert ws.policy is not None
    return ws.policy.ledger.model_dump()


def _code(res: Any) -> ErrorCode:
    assert not res.ok, res.text
    assert res.error is not None
    code: ErrorCode = res.error.code
    assert res.text.startswith(f"Error [{code.value}]: "), res.text
    return code


def _observe(env: Env, ws: Workspace) -> Any:
    ctx = ws.context("a")
    assert ctx.tools.execute("read", {"file_path": PATH}).ok
    env.proxy.clear()
    return ctx


# -- 500 / 503 on the upload -----------------------------------------------------------------


@pytest.mark.parametrize("status", ["500", "503"])
def test_upload_5xx_transient_is_retried_by_gcsfs_and_writes_once(env: Env, status: str) -> None:
    old_gen = env.seed(OLD.encode())
    ws = env.workspace()
    ctx = _observe(env, ws)
    env.inject("POST", status, 3)

    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})

    assert res.ok, res.text
    assert env.uploads() == 4
    assert env.uploads(forwarded=True) == 1  # exactly one write reached the storage
    state = env.state()
    assert state is not None and state[0] == NEW.encode() and state[1] != old_gen
    assert _ledger(ws)["owners"]["a"][NAME]["value"] == state[1]


@pytest.mark.parametrize("status", ["500", "503"])
@pytest.mark.parametrize("tool", ["write", "edit"])
def test_upload_5xx_persistent_is_fs_backend_and_changes_nothing(
    env: Env, status: str, tool: str
) -> None:
    old_gen = env.seed(OLD.encode())
    ws = env.workspace()
    ctx = _observe(env, ws)
    before = _ledger(ws)
    env.inject("POST", status, 1000)

    if tool == "write":
        res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})
    else:
        res = ctx.tools.execute(
            "edit", {"file_path": PATH, "old_string": "old line 2", "new_string": "X"}
        )

    assert _code(res) is ErrorCode.FS_BACKEND
    assert "HttpError" in res.text and "nothing was changed" in res.text
    assert env.uploads() == 6  # gcsfs: 6 attempts
    assert env.uploads(forwarded=True) == 0
    assert env.media_gets() == (1 if tool == "edit" else 0)
    assert env.state() == (OLD.encode(), old_gen)
    assert _ledger(ws) == before

    env.proxy.clear()
    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})
    assert res.ok, res.text
    state = env.state()
    assert state is not None and state[0] == NEW.encode()


def test_backend_upload_500_persistent_on_create(env: Env) -> None:
    backend = env.workspace().backend
    env.inject("POST", "500", 1000)

    with pytest.raises(FsError) as info:
        backend.write(NAME, b"created", CreateOnly())

    assert info.value.code is ErrorCode.FS_BACKEND
    assert env.uploads() == 6
    assert env.state() is None


# -- a connection reset mid-upload -----------------------------------------------------------


def test_upload_reset_mid_body_transient_succeeds_once(env: Env) -> None:
    old_gen = env.seed(OLD.encode())
    ws = env.workspace()
    ctx = _observe(env, ws)
    env.inject("POST", "reset", 1, cut_after=20_000)
    content = "line\n" * 50_000  # 250 kB

    res = ctx.tools.execute("write", {"file_path": PATH, "content": content})

    assert res.ok, res.text
    assert env.uploads() == 2
    assert env.proxy.cut_bodies == [20_000]
    assert env.uploads(forwarded=True) == 1
    state = env.state()
    assert state is not None and state[0] == content.encode() and state[1] != old_gen


def test_upload_reset_mid_body_persistent_is_fs_backend(env: Env) -> None:
    old = ("keep\n" * 50_000 + "target\n").encode()
    old_gen = env.seed(old)
    ws = env.workspace()
    ctx = _observe(env, ws)
    before = _ledger(ws)
    env.inject("POST", "reset", 1000, cut_after=20_000)

    res = ctx.tools.execute(
        "edit", {"file_path": PATH, "old_string": "target", "new_string": "changed"}
    )

    assert _code(res) is ErrorCode.FS_BACKEND
    assert "nothing was changed" in res.text
    assert env.uploads() == 6
    assert env.proxy.cut_bodies == [20_000] * 6
    # fake-gcs-server got six truncated bodies and stored none of them.
    assert env.state() == (old, old_gen)
    assert _ledger(ws) == before


def test_backend_reset_before_any_body_byte(env: Env) -> None:
    old_gen = env.seed(OLD.encode())
    backend = env.workspace().backend
    version = backend.read(NAME).version
    env.proxy.clear()
    env.inject("POST", "reset", 1000, cut_after=0)

    with pytest.raises(FsError) as info:
        backend.write(NAME, NEW.encode(), IfMatch(version))

    assert info.value.code is ErrorCode.FS_BACKEND
    assert env.uploads() == 6
    assert env.state() == (OLD.encode(), old_gen)


# -- the upload landed, its answer was lost --------------------------------------------------


def test_lost_answer_of_conditional_upload_is_recognised_as_our_write(env: Env) -> None:
    """gcsfs resends the upload with the same ifGenerationMatch; the first one already made
    a new generation, so the resend gets 412. The one metadata GET on that error path finds
    our bytes (md5Hash), so the call succeeds with the generation our write made."""
    env.seed(OLD.encode())
    ws = env.workspace()
    ctx = _observe(env, ws)
    env.inject("POST", "lost", 1)

    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})

    assert res.ok, res.text
    assert env.uploads() == 2
    assert env.uploads(forwarded=True) == 2  # the resend reached the server: 412
    assert env.proxy.seen("GET", f"/storage/v1/b/{env.bucket}/o/{NAME}") == 1  # the probe
    state = env.state()
    assert state is not None and state[0] == NEW.encode()
    assert _ledger(ws)["owners"]["a"][NAME]["value"] == state[1]
    res = ctx.tools.execute(
        "edit", {"file_path": PATH, "old_string": "new line 3", "new_string": "final"}
    )
    assert res.ok, res.text


def test_lost_answer_of_create_is_recognised_as_our_write(env: Env) -> None:
    ws = env.workspace()
    ctx = ws.context("a")
    env.inject("POST", "lost", 1)

    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})

    assert res.ok, res.text
    assert env.uploads() == 2
    state = env.state()
    assert state is not None and state[0] == NEW.encode()
    assert _ledger(ws)["owners"]["a"][NAME]["value"] == state[1]


def test_conflict_with_other_content_is_still_a_conflict(env: Env) -> None:
    """The md5Hash of the object is not ours: the 412 stands and nothing is written."""
    env.seed(OLD.encode())
    backend = env.workspace().backend
    version = backend.read(NAME).version
    env.seed(b"theirs\n")

    with pytest.raises(FsError) as info:
        backend.write(NAME, NEW.encode(), IfMatch(version))

    assert info.value.code is ErrorCode.FS_STALE
    state = env.state()
    assert state is not None and state[0] == b"theirs\n"
    meta = env.admin.get_metadata(NAME)
    assert meta["md5Hash"] == base64.b64encode(hashlib.md5(b"theirs\n").digest()).decode()


# -- 500 / reset on the media GET ------------------------------------------------------------


def test_media_get_500_persistent_is_fs_backend_and_records_nothing(env: Env) -> None:
    env.seed(OLD.encode())
    ws = env.workspace()
    ctx = ws.context("a")
    env.inject("GET", "500", 1000)

    res = ctx.tools.execute("read", {"file_path": PATH})

    assert _code(res) is ErrorCode.FS_BACKEND
    assert env.media_gets() == 6
    assert _ledger(ws) == {"format": 1, "owners": {}}
    env.proxy.clear()
    res = ctx.tools.execute("write", {"file_path": PATH, "content": NEW})
    assert _code(res) is ErrorCode.FS_NOT_OBSERVED
    state = env.state()
    assert state is not None and state[0] == OLD.encode()


def test_media_get_500_transient_read_succeeds(env: Env) -> None:
    gen = env.seed(OLD.encode())
    ws = env.workspace()
    ctx = ws.context("a")
    env.inject("GET", "500", 2)

    res = ctx.tools.execute("read", {"file_path": PATH})

    assert res.ok, res.text
    assert env.media_gets() == 3
    assert _ledger(ws)["owners"]["a"][NAME]["value"] == gen


def test_media_get_reset_persistent_is_fs_backend(env: Env) -> None:
    env.seed(OLD.encode())
    ws = env.workspace()
    ctx = ws.context("a")
    env.inject("GET", "reset", 1000)

    res = ctx.tools.execute("read", {"file_path": PATH})

    assert _code(res) is ErrorCode.FS_BACKEND
    assert 6 <= env.media_gets() <= 12  # aiohttp may resend a GET once per gcsfs try
    assert _ledger(ws) == {"format": 1, "owners": {}}


def test_edit_media_get_500_changes_nothing(env: Env) -> None:
    old_gen = env.seed(OLD.encode())
    ws = env.workspace()
    ctx = _observe(env, ws)
    before = _ledger(ws)
    env.inject("GET", "500", 1000)

    res = ctx.tools.execute(
        "edit", {"file_path": PATH, "old_string": "old line 1", "new_string": "X"}
    )

    assert _code(res) is ErrorCode.FS_BACKEND
    assert env.media_gets() == 6 and env.uploads() == 0
    assert env.state() == (OLD.encode(), old_gen)
    assert _ledger(ws) == before
