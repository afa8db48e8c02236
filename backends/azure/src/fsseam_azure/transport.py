"""Get Blob, Get Blob Properties and Put Blob sent from the calling thread, as the SDK sends
them.

adlfs's client is azure-storage-blob's aio one: a request passes about fifteen pipeline
policies (headers, signing, retry, logging, the response hook, content decoding), aiohttp,
and the hand-over to adlfs's event-loop thread (``fsspec.asyn.sync``) and back. For one
small read that is about 2.8 ms of the client's CPU, ten times what the request itself
needs. The three requests a read, a stat and a write make are sent here from the caller's
thread (:mod:`fsseam.backends.objectstore.direct`), built from the SDK's own pieces so
that they are the SDK's requests and their failures the SDK's exceptions:

* the headers the SDK sends (``x-ms-version`` of the service client, ``x-ms-date``, a
  ``x-ms-client-request-id`` per try, its ``User-Agent``, ``Accept: application/xml``,
  ``x-ms-blob-type``, ``x-ms-meta-*``, the conditions), signed for each try with the
  account key of the service client's ``SharedKeyCredentialPolicy`` by :class:`SharedKey`:
  the documented string-to-sign, the x-ms headers in the SDK's own collation (its
  ``compare``). The SDK's policy takes three to four times as long (18 µs a request on a
  quiet moment: it sorts the headers with a Python comparison function for each request);
  the two give the same ``Authorization`` (``tests/test_azure_transport.py``). A SAS
  client's requests carry the token in the query instead, where the SDK puts it;
* an answer the SDK would refuse becomes the exception the SDK raises: the generated
  layer's ``map_error`` (401, 404, 409) and ``HttpResponseError``, then the storage layer's
  ``process_storage_error`` (``ResourceModifiedError`` for ``ConditionNotMet``, the error
  code from ``x-ms-error-code`` or the XML body, the message Azure gave);
* retries by the service client's own retry policy object (``ExponentialRetry``: 3 retries
  after 408, 5xx but 501 and 505, and transport errors, for a PUT too; its backoff, 15 s
  then 18 s and 24 s, with its jitter), slept on the calling thread. A GET or HEAD whose
  reused connection broke before any answer is also sent again at once, as aiohttp does.

Where this differs from the SDK: a whole read is one GET without a range, where the SDK's
downloader asks for the first 32 MiB and then 4 MiB chunks pinned by ``If-Match`` (one
request also for an empty blob, where the SDK's ranged GET is refused with 416 and sent
again); an answer with a ``Content-Encoding`` (which the SDK would decompress) is not
taken (``get`` answers None) and the client reads through the SDK instead. ``usable``
keeps the SDK for everything this module cannot reproduce: credentials other than an
account key or a SAS (Entra ID tokens, anonymous access), an endpoint that is not plain
http(s), a proxy, a secondary location, a retry policy or transport of the user's own. An
SDK release that moves one of the private pieces imported here makes this module's import
fail; the client then sends everything through the SDK (``client._direct_transport``).
"""

from __future__ import annotations

import base64
import functools
import hmac
import socket
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from types import SimpleNamespace
from typing import Any, NoReturn
from wsgiref.handlers import format_date_time

from azure.core.exceptions import (
    AzureError,
    ClientAuthenticationError,
    HttpResponseError,
    ResourceExistsError,
    ResourceNotFoundError,
    ResourceNotModifiedError,
    ServiceRequestError,
    ServiceResponseError,
    map_error,
)
from azure.core.pipeline.transport import AioHttpTransport
from azure.core.rest import HttpRequest
from azure.core.rest._http_response_impl import HttpResponseImpl
from azure.core.utils import CaseInsensitiveDict
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy, compare
from azure.storage.blob._shared.models import LocationMode
from azure.storage.blob._shared.policies import is_retry
from azure.storage.blob._shared.policies_async import ExponentialRetry, LinearRetry
from azure.storage.blob._shared.response_handlers import process_storage_error

from fsseam.backends.objectstore.direct import Answer, Broken, Connections

__all__ = ["READ_TIMEOUT", "AzureTransport", "SharedKey", "usable"]

READ_TIMEOUT = 60.0
"""Seconds a socket operation may block: the SDK's ``read_timeout`` (its connect timeout is
20 s; ``http.client`` has one timeout for both)."""

_ERROR_MAP = {
    401: ClientAuthenticationError,
    404: ResourceNotFoundError,
    409: ResourceExistsError,
    304: ResourceNotModifiedError,
}
"""The generated operations' ``error_map`` for Get Blob, Get Blob Properties, Put Blob."""
_RETRY_POLICIES = (ExponentialRetry, LinearRetry)
_CONNECT_ERRORS = (ConnectionRefusedError, socket.gaierror)
_is_retry: Callable[[Any, str], bool] = is_retry
"""The storage retry policy's rule for an answer (408, 5xx but 501 and 505)."""


def _config(service_client: Any) -> Any:
    # The pipeline's configuration (its retry policy, user agent, proxies, transport) has
    # no public spelling on an SDK client.
    return getattr(service_client, "_config", None)


def usable(fs: Any) -> bool:
    """Whether the requests of ``fs`` (an ``adlfs.AzureBlobFileSystem``) can be sent from the
    caller's thread as its service client sends them."""
    client = getattr(fs, "service_client", None)
    config = _config(client)
    if client is None or config is None:
        return False
    parts = urllib.parse.urlsplit(str(client.url))
    if type(client.credential) is SharedKeyCredentialPolicy:
        if parts.query:
            return False
    elif client.credential is not None or "sig=" not in parts.query:
        return False  # a token credential, anonymous
    if parts.scheme not in ("http", "https"):
        return False
    if getattr(client, "location_mode", LocationMode.PRIMARY) != LocationMode.PRIMARY:
        return False
    retry: Any = getattr(config, "retry_policy", None)
    if type(retry) not in _RETRY_POLICIES or retry.retry_to_secondary:
        return False
    if getattr(config.proxy_policy, "proxies", None):
        return False
    transport = getattr(config, "transport", None)
    if transport is not None and type(transport) is not AioHttpTransport:
        return False
    # aiohttp under the SDK honours the *_proxy environment variables; http.client not.
    proxy = urllib.request.getproxies().get(parts.scheme)
    return not proxy or bool(urllib.request.proxy_bypass(parts.hostname or ""))


_SIGNED_HEADERS = (
    "content-encoding", "content-language", "content-length", "content-md5", "content-type",
    "date", "if-modified-since", "if-match", "if-none-match", "if-unmodified-since",
)
"""The standard headers of the string-to-sign, in its order (the SDK's list also names
"byte_range", which no request carries: one more empty line)."""


@functools.lru_cache(maxsize=64)
def _collated(names: tuple[str, ...]) -> tuple[str, ...]:
    """x-ms header names in the order the SDK signs them (its culture-aware ``compare``,
    which sorts "-" and "_" as nothing): computed once per set of names."""
    return tuple(sorted(names, key=functools.cmp_to_key(compare)))


class SharedKey:
    """Shared Key signing of one account, as the SDK's ``SharedKeyCredentialPolicy`` does
    it: ``Authorization: SharedKey <account>:<base64 HMAC-SHA256 of the string-to-sign>``."""

    def __init__(self, account_name: str, account_key: str) -> None:
        self.account_name = account_name
        self._key = base64.b64decode(account_key)

    def authorization(self, method: str, path: str, headers: Mapping[str, str],
                      query: Mapping[str, str]) -> str:
        """The header for ``method`` on ``path`` (as sent: quoted) with ``headers`` and the
        unquoted ``query``."""
        lower = {name.lower(): value for name, value in headers.items() if value}
        if lower.get("content-length") == "0":
            del lower["content-length"]
        parts = [method]
        parts.extend(lower.get(name, "") for name in _SIGNED_HEADERS)
        parts.append("")  # byte_range
        parts.extend(f"{name}:{lower[name]}"
                     for name in _collated(tuple(n for n in lower if n.startswith("x-ms-"))))
        resource = f"/{self.account_name}{path}"
        for name, value in sorted(query.items()):
            resource += f"\n{name.lower()}:{value}"
        parts.append(resource)
        digest = hmac.digest(self._key, "\n".join(parts).encode("utf-8"), "sha256")
        return f"SharedKey {self.account_name}:{base64.b64encode(digest).decode()}"


class _Failed(HttpResponseImpl):
    """A refused answer as an azure-core response, read whole, for the SDK's error
    handling."""

    def __init__(self, request: HttpRequest, answer: Answer) -> None:
        headers = CaseInsensitiveDict(answer.headers)
        super().__init__(
            request=request, internal_response=None, status_code=answer.status,
            reason=getattr(answer.headers, "reason_phrase", ""),
            content_type=headers.get("content-type"), headers=headers,
            stream_download_generator=None,
        )
        self._content = answer.body
        self._is_stream_consumed = True
        self._is_closed = True


def _raise_refused(method: str, url: str, headers: dict[str, str], answer: Answer
                   ) -> NoReturn:
    """The exception the SDK raises for ``answer``: the generated operation's, then the
    storage layer's ``process_storage_error``."""
    request = HttpRequest(method, url, headers=headers)
    response = _Failed(request, answer)
    try:
        map_error(status_code=answer.status, response=response, error_map=_ERROR_MAP)
        raise HttpResponseError(response=response)
    except HttpResponseError as error:
        process_storage_error(error)


def _retriable(answer: Answer) -> bool:
    if answer.status < 300:
        return False
    response = SimpleNamespace(http_response=SimpleNamespace(
        status_code=answer.status, headers=answer.headers))
    return _is_retry(response, LocationMode.PRIMARY)


def _transport_error(broken: Broken) -> AzureError:
    """The SDK's exception for a transport error: ``ServiceRequestError`` when no connection
    was made (the request cannot have arrived), else ``ServiceResponseError``."""
    error = broken.error
    if broken.fresh and not broken.answered and isinstance(error, _CONNECT_ERRORS):
        return ServiceRequestError(error, error=error)
    return ServiceResponseError(error, error=error)


class AzureTransport:
    """Sends Get Blob, Get Blob Properties and Put Blob of one service client from the
    calling thread, on kept-alive connections shared by the threads."""

    def __init__(self, service_client: Any) -> None:
        config = _config(service_client)
        credential = service_client.credential
        # None: a SAS, which the URLs carry (see ``url``).
        self.signer = None if credential is None else SharedKey(
            credential.account_name, credential.account_key)
        self.retry: Any = config.retry_policy
        self.fixed = {
            "x-ms-version": str(service_client.api_version),
            "Accept": "application/xml",
            "User-Agent": str(config.user_agent_policy.user_agent),
        }
        self._connections = Connections(READ_TIMEOUT)

    # -- the three requests (``url``: a blob's, with the SAS of a SAS client) ----------
    def get(self, url: str, *, start: int | None = None, end: int | None = None,
            if_match: str | None = None, version_id: str | None = None) -> Answer | None:
        """Get Blob: the whole blob, or bytes ``start`` to ``end`` (exclusive, open when
        None); ``if_match`` an ETag; ``version_id`` an older version. None when the answer
        carries a ``Content-Encoding``: the SDK would decode it; read it through the SDK."""
        headers: dict[str, str] = {}
        if start is not None:
            last = "" if end is None else str(end - 1)
            headers["x-ms-range"] = f"bytes={start}-{last}"
        if if_match is not None:
            headers["If-Match"] = if_match
        answer = self._send("GET", url, headers, None, version_id)
        encoding = answer.headers.get("content-encoding")
        if encoding and encoding.lower() != "identity":
            return None
        return answer

    def head(self, url: str, *, version_id: str | None = None) -> Answer:
        """Get Blob Properties."""
        return self._send("HEAD", url, {}, None, version_id)

    def put(self, url: str, data: bytes, *, if_match: str | None, if_absent: bool,
            metadata: Mapping[str, str]) -> Answer:
        """Put Blob of a block blob, with ``If-Match`` or ``If-None-Match: *``."""
        headers = {"Content-Length": str(len(data))}
        for key, value in metadata.items():
            headers[f"x-ms-meta-{key}"] = value
        headers["x-ms-blob-type"] = "BlockBlob"
        if if_absent:
            headers["If-None-Match"] = "*"
        elif if_match is not None:
            headers["If-Match"] = if_match
        headers["Content-Type"] = "application/octet-stream"
        return self._send("PUT", url, headers, data, None)

    # -- sending ---------------------------------------------------------------------
    def signed(self, method: str, path: str, headers: Mapping[str, str],
               query: Mapping[str, str]) -> dict[str, str]:
        """``headers`` with the SDK's per-try headers and the Shared Key ``Authorization``
        for ``method`` on ``path`` (quoted) whose query is ``query`` (unquoted). The
        request id is a random UUID (the SDK takes a time-based one, at twice the cost:
        Azure only logs it)."""
        sent = {**headers, **self.fixed}
        sent["x-ms-date"] = format_date_time(time.time())
        sent["x-ms-client-request-id"] = str(uuid.uuid4())
        if self.signer is not None:
            sent["Authorization"] = self.signer.authorization(method, path, sent, query)
        return sent

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes | None,
              version_id: str | None) -> Answer:
        """One request after the retry policy's retries: its answer when it succeeded,
        else the SDK's exception."""
        query: dict[str, str] = {}
        url, _, sas = url.partition("?")
        path = urllib.parse.urlsplit(url).path
        params = [sas] if sas else []
        if version_id:
            query["versionid"] = version_id
            # First, as the SDK puts it, and quoted as aiohttp sends it (yarl leaves ":" of
            # a query as it is).
            params.insert(0, f"versionid={urllib.parse.quote(version_id, safe=':')}")
        if params:
            url = f"{url}?{'&'.join(params)}"
        settings: dict[str, Any] | None = None
        while True:
            sent = self.signed(method, path, headers, query)
            try:
                answer = self._connections.exchange(
                    method, url, sent, body, resend=method in ("GET", "HEAD"))
            except Broken as broken:
                error = _transport_error(broken)
                settings = settings or self._settings()
                if not self._again(settings, method, url, sent, error=error):
                    raise error from None
                continue
            if answer.status < 300:
                return answer
            if _retriable(answer):
                settings = settings or self._settings()
                if self._again(settings, method, url, sent, answer=answer):
                    continue
            _raise_refused(method, url, sent, answer)

    def _settings(self) -> dict[str, Any]:
        """The retry policy's counters for one request, as its ``configure_retries`` makes
        them for a request without options."""
        policy = self.retry
        return {
            "total": policy.total_retries, "connect": policy.connect_retries,
            "read": policy.read_retries, "status": policy.status_retries,
            "retry_secondary": False, "mode": LocationMode.PRIMARY, "hosts": None,
            "hook": None, "body_position": None, "count": 0, "history": [],
        }

    def _again(self, settings: dict[str, Any], method: str, url: str,
               headers: dict[str, str], *, answer: Answer | None = None,
               error: Exception | None = None) -> bool:
        """Whether the retry policy sends the request again (after its backoff, slept
        here)."""
        request = HttpRequest(method, url, headers=headers)
        response = None if answer is None else _Failed(request, answer)
        if not self.retry.increment(settings, request=request, response=response,
                                    error=error):
            return False
        backoff = self.retry.get_backoff_time(settings)
        if backoff and backoff > 0:
            time.sleep(backoff)
        return True
