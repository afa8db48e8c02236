"""Azurite for tests, benchmarks and demos: counting and fault-injecting proxies that speak
Azure's error format.

    from fsseam.testing.azurite import azurite_server
    from fsseam_azure.testing import fault_proxy

    with azurite_server() as az:                     # counted: az.take() after each call
        container = az.create_container()
        ws = Workspace(f"az://{container}/p", storage_options=az.storage_options())
        with fault_proxy(az) as proxy:               # 500 / 503 / reset / lost answers
            proxy.inject("PUT", f"/{container}/p/f.txt", "503", 2)
            ws2 = Workspace(f"az://{container}/p", storage_options=proxy.storage_options())

Azurite itself comes from npm (``npm install --prefix .ci/node azurite@3``);
:mod:`fsseam.testing.azurite` starts it on 127.0.0.1 and stops it by PID.

What Azurite 3.35 does and does not do, measured (each has a test):

- it decides ``If-Match`` and ``If-None-Match: *`` on Put Blob, Put Block List, Delete Blob
  and Get Blob (412 ``ConditionNotMet``; 409 ``BlobAlreadyExists`` for a create), and both
  conditions of Copy Blob (``If-None-Match: *`` on the target, ``x-ms-source-if-match``);
- it refuses metadata names that are not C# identifiers (``fsseam-write``), as Azure does;
- it keeps no blob versions (no ``x-ms-version-id``; ``versionid=`` on a GET is ignored):
  blob versioning is an account setting of Azure's management plane, which Azurite does not
  emulate (Azure/Azurite#665).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from uuid import uuid4
from xml.sax.saxutils import escape

from fsseam.testing import faults as _faults
from fsseam.testing.azurite import ACCOUNT_NAME, AzuriteEndpoint, connection_string
from fsseam.testing.stores import agent_edits

__all__ = [
    "EMULATOR_KEEPS_NO_VERSIONS",
    "AzureFaultProxy",
    "AzureFaultRig",
    "AzureRig",
    "ContainerRequests",
    "agent_edits",
    "azure_error_body",
    "fault_proxy",
    "shorten_retries",
]

EMULATOR_KEEPS_NO_VERSIONS = (
    "Azurite 3.35 keeps no blob versions (an account setting of Azure's management plane "
    "that it does not emulate, Azure/Azurite#665); Azure lists and serves them"
)
"""Reason for a strict xfail: a test of kept history against the emulator."""

_CODES = {
    401: ("NoAuthenticationInformation", "Server failed to authenticate the request. Please "
          "refer to the information in the www-authenticate header."),
    403: ("AuthorizationPermissionMismatch", "This request is not authorized to perform this "
          "operation using this permission."),
    404: ("BlobNotFound", "The specified blob does not exist."),
    409: ("BlobAlreadyExists", "The specified blob already exists."),
    412: ("ConditionNotMet", "The condition specified using HTTP conditional header(s) is not "
          "met."),
    500: ("InternalError", "Server encountered an internal error. Please try again after "
          "some time."),
    503: ("ServerBusy", "The server is currently unable to receive requests. Please retry "
          "your request."),
}


def azure_error_body(status: int, path: str = "") -> tuple[str, bytes]:
    """An Azure Storage error answer with ``status``, as the service words it."""
    code, message = _CODES.get(status, ("InternalError", f"injected HTTP {status}"))
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f0Z")
    text = f"{message}\nRequestId:{uuid4()}\nTime:{stamp}"
    body = (
        '<?xml version="1.0" encoding="utf-8"?>'
        f"<Error><Code>{code}</Code><Message>{escape(text)}</Message></Error>"
    )
    return "application/xml", body.encode()


class ContainerRequests:
    """The requests one container received through Azurite's counting proxy, as (method,
    path below the container): ``("GET", "/p/a.txt")``; a listing is ``("GET", "/")``."""

    def __init__(self, azurite: AzuriteEndpoint, container: str) -> None:
        self.azurite = azurite
        self.prefix = f"/{ACCOUNT_NAME}/{container}"

    def take(self) -> list[tuple[str, str]]:
        """Every request to the container since the last take, in order (and reset)."""
        out = []
        for method, path in self.azurite.take():
            if path == self.prefix or path.startswith(self.prefix + "/"):
                out.append((method, path[len(self.prefix) :] or "/"))
        return out

    def methods(self) -> list[str]:
        return [m for m, _ in self.take()]


@dataclass
class AzureFaultProxy(_faults.FaultProxy):
    """A fault-injecting proxy (see :mod:`fsseam.testing.faults`) answering Azure errors.
    Paths it sees are ``/devstoreaccount1/CONTAINER/BLOB``."""

    error_body: _faults.ErrorBody = field(default=azure_error_body)

    @property
    def blob_endpoint(self) -> str:
        return f"{self.url}/{ACCOUNT_NAME}"

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        """Workspace ``storage_options`` that send every request through this proxy."""
        return {"connection_string": connection_string(self.blob_endpoint), **extra}


def shorten_retries(monkeypatch: Any) -> None:
    """Make the SDK's retry backoff (15 s, then 18 s, 24 s, ...) and the downloader's own
    1 s pause last 1 ms, for the test using ``monkeypatch``. Whether and how often the SDK
    retries is unchanged."""
    from azure.storage.blob._shared import policies_async
    from azure.storage.blob.aio import _download_async

    monkeypatch.setattr(
        policies_async.ExponentialRetry, "get_backoff_time", lambda self, settings: 0.001
    )
    _faults.shorten_sleeps(monkeypatch, _download_async)


@contextmanager
def fault_proxy(azurite: AzuriteEndpoint) -> Iterator[AzureFaultProxy]:
    """A proxy on 127.0.0.1 (free port) in front of the Azurite server itself (not its
    counting proxy), injecting the faults of its ``plan``."""
    with _faults.serve_proxy(azurite.server_url, AzureFaultProxy()) as proxy:
        yield proxy


@dataclass
class AzureRig:
    """One container of Azurite, requests counted at its proxy, for the shared store suites
    (:mod:`fsseam.testing.stores`)."""

    azurite: AzuriteEndpoint
    bucket: str
    scheme: str = "az"
    # Azurite decides a Copy Blob's conditions: the listing, one guarded copy, the DELETE.
    move_requests: list[str] = field(default_factory=lambda: ["GET", "PUT", "DELETE"])

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        options: dict[str, Any] = self.azurite.storage_options()
        return {**options, **extra}

    def take(self) -> list[str]:
        return ContainerRequests(self.azurite, self.bucket).methods()

    def fill(self, objects: Mapping[str, bytes]) -> None:
        # Straight to Azurite (not through the counting proxy), several at a time.
        container = _admin_container(self.azurite, self.bucket)
        with ThreadPoolExecutor(8) as pool:
            list(pool.map(lambda item: container.get_blob_client(item[0]).upload_blob(
                item[1], overwrite=True), objects.items()))


def _admin_container(azurite: AzuriteEndpoint, container: str) -> Any:
    """A sync ContainerClient straight to Azurite: seeds and inspects, never counted."""
    from azure.storage.blob import BlobServiceClient

    url = f"{azurite.server_url}/{ACCOUNT_NAME}"
    return BlobServiceClient.from_connection_string(connection_string(url)).get_container_client(
        container)


@dataclass
class AzureFaultRig:
    """One container of Azurite behind a fault proxy (:func:`fault_proxy`), for the shared
    fault suites (:mod:`fsseam.testing.stores`); seeds and reads straight from Azurite."""

    proxy: AzureFaultProxy
    azurite: AzuriteEndpoint
    bucket: str
    scheme: str = "az"
    content_versions: bool = False  # every write is a new ETag
    read_attempts: int = 4  # the SDK's first try and its three retries
    reset_read_attempts: tuple[int, int] = (4, 1_000)
    write_attempts: int = 4
    transient_faults: int = 2
    error_words: dict[str, str] = field(
        default_factory=lambda: {"500": "InternalError", "503": "ServerBusy"})

    def fail_writes(self, name: str, kind: str, times: int) -> None:
        self.proxy.inject("PUT", self._path(name), kind, times)

    def _path(self, name: str) -> str:
        return f"/{ACCOUNT_NAME}/{self.bucket}/{name}"

    def fail_reads(self, name: str, kind: str, times: int) -> None:
        self.proxy.inject("GET", self._path(name), kind, times)

    def seen(self, name: str, method: str, *, forwarded: bool = False) -> int:
        return self.proxy.seen(method, self._path(name), forwarded=forwarded)

    @property
    def plan(self) -> _faults.FaultPlan:
        return self.proxy.plan

    def fail_deletes(self, name: str, kind: str, times: int) -> None:
        self.proxy.inject("DELETE", self._path(name), kind, times)

    def fail_looks(self, name: str, kind: str, times: int) -> None:
        self.proxy.inject("HEAD", self._path(name), kind, times)

    def looks_seen(self, name: str) -> int:
        return self.seen(name, "HEAD")

    def state(self, name: str) -> tuple[bytes, str] | None:
        blob = self._container().get_blob_client(name)
        if not blob.exists():
            return None
        got = blob.download_blob()
        return got.readall(), str(got.properties.etag)

    def storage_options(self, **extra: Any) -> dict[str, Any]:
        return self.proxy.storage_options(**extra)

    def _container(self) -> Any:
        return _admin_container(self.azurite, self.bucket)

    def fill(self, objects: Mapping[str, bytes]) -> None:
        container = self._container()
        for name, data in objects.items():
            container.get_blob_client(name).upload_blob(data, overwrite=True)

    def fail(self, name: str, op: str) -> None:
        method = "DELETE" if op == "delete" else "PUT"
        self.proxy.inject(method, self._path(name), "500", 1000)

    def clear(self) -> None:
        self.proxy.clear()

    def stored(self, prefix: str) -> dict[str, bytes]:
        container = self._container()
        return {
            blob.name[len(prefix) + 1 :]: container.download_blob(blob.name).readall()
            for blob in container.list_blobs(name_starts_with=f"{prefix}/")
        }
