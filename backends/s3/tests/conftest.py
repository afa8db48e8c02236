"""One moto server for the session (loopback, free port), a fresh bucket per test.

moto's in-process ``mock_aws`` cannot serve s3fs (aiobotocore awaits a bytes body), so the
tests talk HTTP to a ``ThreadedMotoServer``. Its WSGI app is wrapped to record every
request, so request counts are measured at the server, not inferred from client hooks.

The wrapper also runs one request at a time. moto checks ``If-Match``/``If-None-Match`` and
then stores the object in separate steps with no lock (moto 5.2.5, s3/responses.py), and a
concurrent overwrite can close the buffer of a key whose response is still being built
(500 ``I/O operation on closed file`` after the write landed; the client's retry then
gets 412 for its own write). Real S3 decides a conditional write atomically; serializing
requests gives the tests that S3 behaviour. It does not hide client-side races: a backend
that checked with one request and wrote with another would still lose updates here.
"""

from __future__ import annotations

import logging
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

CREDENTIALS = {"key": "testing", "secret": "testing"}


@dataclass
class RequestLog:
    """(method, path) of every request the server received, in order."""

    requests: list[tuple[str, str]] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _serial: threading.Lock = field(default_factory=threading.Lock)

    def wrap(self, app: Callable[..., Iterable[bytes]]) -> Callable[..., Iterable[bytes]]:
        def counting(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
            with self._lock:
                self.requests.append((environ["REQUEST_METHOD"], environ.get("PATH_INFO", "")))
            with self._serial:
                return list(app(environ, start_response))

        return counting

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def to_bucket(self, bucket: str) -> list[tuple[str, str]]:
        with self._lock:
            return [
                r for r in self.requests if r[1] == f"/{bucket}" or r[1].startswith(f"/{bucket}/")
            ]


@dataclass(frozen=True)
class MotoEndpoint:
    url: str
    log: RequestLog

    def client(self) -> Any:
        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id=CREDENTIALS["key"],
            aws_secret_access_key=CREDENTIALS["secret"],
        )


@pytest.fixture(scope="session")
def moto() -> Iterator[MotoEndpoint]:
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        log = RequestLog()
        wsgi = server._server
        assert wsgi is not None, "moto changed ThreadedMotoServer internals"
        wsgi.app = log.wrap(wsgi.app)
        host, port = server.get_host_and_port()
        yield MotoEndpoint(url=f"http://{host}:{port}", log=log)
    finally:
        server.stop()


@pytest.fixture
def s3_options(moto: MotoEndpoint) -> dict[str, Any]:
    """DESIGN.md's convenience keys; the backend turns them into s3fs options."""
    return {"endpoint_url": moto.url, **CREDENTIALS}


@pytest.fixture
def s3(moto: MotoEndpoint) -> Any:
    """A boto3 client for arranging and inspecting state behind the backend's back."""
    return moto.client()


@pytest.fixture
def bucket(s3: Any) -> str:
    name = f"fsseam-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=name)
    return name


@pytest.fixture
def versioned_bucket(s3: Any) -> str:
    name = f"fsseam-v-{uuid.uuid4().hex[:16]}"
    s3.create_bucket(Bucket=name)
    s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name
