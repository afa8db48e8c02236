"""A moto S3 server for tests, benchmarks and demos (loopback, free port, counted requests).

    from fsseam_s3.testing import moto_server

    with moto_server() as s3:
        bucket = s3.create_bucket()
        ws = Workspace(f"s3://{bucket}/p", storage_options=s3.storage_options())
        ...
        s3.log.counts()          # {"GET": 3, "PUT": 2}

moto's in-process ``mock_aws`` serves S3 workspaces too (see ``fsseam_s3._moto``); a
server is for what the mock cannot show: requests counted on the wire, several processes
on one store, a real HTTP stack. This talks HTTP to a ``ThreadedMotoServer`` bound to
127.0.0.1 (its default is 0.0.0.0). Its WSGI app is wrapped to record every request
(method, path, status, body sizes), so request counts and bytes transferred are measured
at the server, not inferred from client hooks.

``serialize=True`` (the default) also runs one request at a time. moto checks
``If-Match``/``If-None-Match`` and then stores the object in separate steps with no lock
(moto 5.2.5, s3/responses.py), and a concurrent overwrite can close the buffer of a key
whose response is still being built (500 ``I/O operation on closed file`` after the write
landed; the client's retry then gets 412 for its own write). Real S3 decides a
conditional write atomically; serializing requests gives moto that S3 behaviour. It does
not hide client-side races: a backend that checked with one request and wrote with
another would still lose updates. ``serialize=False`` lets requests overlap (closer to a
real server's parallelism, but moto's conditional writes are then not atomic).

``faults=`` puts a :class:`fsseam.testing.faults.FaultPlan` in front of moto: the requests it
names fail with S3-style errors (:func:`s3_error_body`), cut connections or lost answers.

moto (and the boto3 it brings) is in the test extra (``pip install 'fsseam-s3[test]'``,
from a clone ``pip install './backends/s3[test]'``), imported only when a server is started
or a client made.
"""

from __future__ import annotations

import importlib
import logging
import threading
import uuid
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fsseam.testing.faults import FaultPlan, WsgiApp

__all__ = [
    "CREDENTIALS",
    "MotoEndpoint",
    "Request",
    "RequestLog",
    "S3FaultRig",
    "S3Rig",
    "moto_server",
    "s3_error_body",
]

CREDENTIALS = {"key": "testing", "secret": "testing"}
"""Any key/secret works with moto; these are the ones the helpers use."""

@dataclass(frozen=True)
class Request:
    """One request as the server saw it."""

    method: str
    path: str
    query: str
    status: int
    request_bytes: int
    """The request body's Content-Length (0 when absent)."""
    response_bytes: int
    """Bytes of the response body the server sent."""
    headers: Mapping[str, str] = field(default_factory=dict)
    """The request's headers, by lower-cased name."""


@dataclass
class RequestLog:
    """Every request the server received, in arrival order.

    ``requests`` keeps ``(method, path)`` pairs (what most tests compare); ``records``
    keeps the full :class:`Request` of each finished request.
    """

    serialize: bool = True
    requests: list[tuple[str, str]] = field(default_factory=list)
    records: list[Request] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _serial: threading.Lock = field(default_factory=threading.Lock)

    def wrap(self, app: WsgiApp) -> WsgiApp:
        """The WSGI app that records (and, with ``serialize``, serializes) requests."""

        def counting(environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
            method = str(environ["REQUEST_METHOD"])
            path = str(environ.get("PATH_INFO", ""))
            with self._lock:
                self.requests.append((method, path))
            status: list[int] = []

            def recording_start(status_line: str, headers: Any, *exc: Any) -> Any:
                status.append(int(status_line.split(" ", 1)[0]))
                return start_response(status_line, headers, *exc)

            if self.serialize:
                with self._serial:
                    body = list(app(environ, recording_start))
            else:
                body = list(app(environ, recording_start))
            record = Request(
                method=method,
                path=path,
                query=str(environ.get("QUERY_STRING", "")),
                status=status[-1] if status else 0,
                request_bytes=int(environ.get("CONTENT_LENGTH") or 0),
                response_bytes=sum(len(chunk) for chunk in body),
                headers={k[5:].replace("_", "-").lower(): str(v)
                         for k, v in environ.items() if k.startswith("HTTP_")},
            )
            with self._lock:
                self.records.append(record)
            return body

        return counting

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()
            self.records.clear()

    def to_bucket(self, bucket: str) -> list[tuple[str, str]]:
        """``(method, path)`` of the requests that addressed ``bucket`` or its objects."""
        with self._lock:
            return [r for r in self.requests if _in_bucket(r[1], bucket)]

    def records_to(self, bucket: str | None = None) -> list[Request]:
        """Finished requests, all or only those addressing ``bucket``."""
        with self._lock:
            return [r for r in self.records if bucket is None or _in_bucket(r.path, bucket)]

    def counts(self, bucket: str | None = None) -> Counter[str]:
        """Requests per HTTP method, all or only those addressing ``bucket``."""
        with self._lock:
            return Counter(m for m, p in self.requests if bucket is None or _in_bucket(p, bucket))

    def response_bytes(self, bucket: str | None = None) -> int:
        """Total response body bytes sent (for GETs: the bytes a client fetched)."""
        return sum(r.response_bytes for r in self.records_to(bucket))


def _in_bucket(path: str, bucket: str) -> bool:
    return path == f"/{bucket}" or path.startswith(f"/{bucket}/")


@dataclass(frozen=True)
class MotoEndpoint:
    """A running moto server: where it listens and what it received."""

    url: str
    log: RequestLog

    def client(self) -> Any:
        """A boto3 S3 client, for arranging and inspecting state behind a backend's back."""
        # boto3 ships no type information; import_module keeps mypy --strict quiet either way.
        boto3: Any = importlib.import_module("boto3")
        return boto3.client(
            "s3",
            endpoint_url=self.url,
            region_name="us-east-1",
            aws_access_key_id=CREDENTIALS["key"],
            aws_secret_access_key=CREDENTIALS["secret"],
        )

    def storage_options(self) -> dict[str, Any]:
        """Workspace ``storage_options`` for this server (``endpoint_url``, ``key``,
        ``secret``: the convenience keys the backend turns into s3fs options)."""
        return {"endpoint_url": self.url, **CREDENTIALS}

    def s3fs_options(self) -> dict[str, Any]:
        """Keyword arguments for a plain ``s3fs.S3FileSystem`` against this server."""
        return {
            "key": CREDENTIALS["key"],
            "secret": CREDENTIALS["secret"],
            "client_kwargs": {"endpoint_url": self.url, "region_name": "us-east-1"},
            "skip_instance_cache": True,
        }

    def create_bucket(
        self, versioned: bool = False, *, name: str | None = None, client: Any = None
    ) -> str:
        """A new bucket (random name unless given); returns its name. ``client``: a boto3
        client to reuse (making one costs tens of milliseconds)."""
        prefix = "fsseam-v-" if versioned else "fsseam-"
        bucket = name or f"{prefix}{uuid.uuid4().hex[:16]}"
        s3 = client if client is not None else self.client()
        s3.create_bucket(Bucket=bucket)
        if versioned:
            s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        return bucket


@dataclass
class S3Rig:
    """One bucket of a moto server of this process, for the shared store suites
    (:mod:`fsseam.testing.stores`): requests counted at the server."""

    moto: MotoEndpoint
    bucket: str
    scheme: str = "s3"
    # moto ignores CopyObject's conditions: a move reads the observed version and uploads
    # create-only (after the listing), then deletes the source with its condition.
    move_requests: list[str] = field(default_factory=lambda: ["GET", "GET", "PUT", "DELETE"])

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        return {**self.moto.storage_options(), **extra}

    def take(self) -> list[str]:
        out = [m for m, _ in self.moto.log.to_bucket(self.bucket)]
        self.moto.log.clear()
        return out

    def fill(self, objects: Mapping[str, bytes]) -> None:
        # Straight into the moto backend the server serves (in this process): arranging
        # thousands of objects over HTTP, one at a time, took most of a test's time.
        account = importlib.import_module("moto.core").DEFAULT_ACCOUNT_ID
        backends: Any = importlib.import_module("moto.s3.models").s3_backends
        store = backends[account]["aws"]
        for name, data in objects.items():
            store.put_object(self.bucket, name, data)


@dataclass
class S3FaultRig(S3Rig):
    """One bucket of a moto server with a fault plan (``moto_server(faults=plan)``), for
    the shared fault suites (:mod:`fsseam.testing.stores`)."""

    plan: FaultPlan = field(default_factory=FaultPlan)
    content_versions: bool = True  # ETags are MD5s of the bytes
    # botocore's legacy mode: 5 attempts; s3fs adds none for InternalError. A reset GET may
    # be resent by aiohttp and retried by s3fs's own wrapper too.
    read_attempts: int = 5
    reset_read_attempts: tuple[int, int] = (5, 50)
    write_attempts: int = 5
    transient_faults: int = 2
    error_words: dict[str, str] = field(default_factory=lambda: {"500": "InternalError"})

    def fail_writes(self, name: str, kind: str, times: int) -> None:
        self.plan.inject("PUT", f"/{self.bucket}/{name}", kind, times)

    def fail_reads(self, name: str, kind: str, times: int) -> None:
        self.plan.inject("GET", f"/{self.bucket}/{name}", kind, times)

    def seen(self, name: str, method: str, *, forwarded: bool = False) -> int:
        return self.plan.seen(method, f"/{self.bucket}/{name}", forwarded=forwarded)

    def fail_deletes(self, name: str, kind: str, times: int) -> None:
        self.plan.inject("DELETE", f"/{self.bucket}/{name}", kind, times)

    def fail_looks(self, name: str, kind: str, times: int) -> None:
        self.plan.inject("HEAD", f"/{self.bucket}/{name}", kind, times)

    def looks_seen(self, name: str) -> int:
        return self.seen(name, "HEAD")

    def state(self, name: str) -> tuple[bytes, str] | None:
        self.plan.faults.clear()  # the look goes through the same server
        s3 = self.moto.client()
        try:
            got = s3.get_object(Bucket=self.bucket, Key=name)
        except s3.exceptions.NoSuchKey:
            return None
        return got["Body"].read(), str(got["ETag"])

    def fail(self, name: str, op: str) -> None:
        method = "DELETE" if op == "delete" else "PUT"
        self.plan.inject(method, f"/{self.bucket}/{name}", "500", 1000)

    def clear(self) -> None:
        self.plan.clear()

    def stored(self, prefix: str) -> dict[str, bytes]:
        self.plan.faults.clear()
        s3 = self.moto.client()
        listed = s3.list_objects_v2(Bucket=self.bucket, Prefix=f"{prefix}/").get("Contents", [])
        return {o["Key"][len(prefix) + 1 :]: s3.get_object(Bucket=self.bucket, Key=o["Key"])[
            "Body"].read() for o in listed}


_ERRORS = {
    401: ("InvalidAccessKeyId", "The AWS Access Key Id you provided does not exist in our "
          "records."),
    403: ("AccessDenied", "Access Denied"),
    409: ("ConditionalRequestConflict", "A conflicting conditional operation is currently "
          "in progress against this resource. Please try again."),
    412: ("PreconditionFailed", "At least one of the pre-conditions you specified did not "
          "hold"),
    500: ("InternalError", "We encountered an internal error. Please try again."),
    503: ("SlowDown", "Please reduce your request rate."),
}


def s3_error_body(status: int, path: str = "") -> tuple[str, bytes]:
    """An S3 XML error answer with ``status`` (500 InternalError, 503 SlowDown, ...)."""
    code, message = _ERRORS.get(status, ("InternalError", f"injected HTTP {status}"))
    body = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<Error><Code>{code}</Code><Message>{message}</Message>"
        f"<Resource>{path}</Resource><RequestId>FAULT{uuid.uuid4().hex[:12]}</RequestId>"
        "</Error>"
    )
    return "application/xml", body.encode()


@contextmanager
def moto_server(
    serialize: bool = True, *, faults: FaultPlan | None = None
) -> Iterator[MotoEndpoint]:
    """Start a ``ThreadedMotoServer`` on 127.0.0.1 (free port); stop it on exit. ``faults``:
    a plan whose faults the server injects (see :mod:`fsseam.testing.faults`)."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one log line per request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        log = RequestLog(serialize=serialize)
        wsgi = server._server
        if wsgi is None:
            raise RuntimeError("moto changed ThreadedMotoServer internals (no _server)")
        app = wsgi.app
        if faults is not None:
            # Inside the log: its lock already serializes, and a faulted request is counted.
            app = faults.wsgi(app, s3_error_body, serialize=False)
        wsgi.app = log.wrap(app)
        host, port = server.get_host_and_port()
        yield MotoEndpoint(url=f"http://{host}:{port}", log=log)
    finally:
        server.stop()
