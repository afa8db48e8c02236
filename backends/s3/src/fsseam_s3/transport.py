"""S3 object requests (GetObject, HeadObject, PutObject) sent from the calling thread.

Through s3fs a request goes to its event loop's thread (``fsspec.asyncio.sync``) and then
through aiobotocore's pipeline: event hooks, parameter validation, serialisation, the
response parser. For one small GET or PUT that cost about 2.3 ms of client CPU, ten times
the request's own work. Here the request is built and sent from the caller's thread with
:mod:`fsseam.backends.objectstore.direct`, from the pieces of the filesystem's own
aiobotocore client, so it is the request botocore would send:

* the URL: the client's endpoint ruleset, resolved once for the bucket (path or virtual
  host style as botocore chooses it, accelerate, dual-stack, FIPS); the key percent-encoded
  as botocore encodes a greedy label;
* the signature: SigV4 as botocore's ``S3SigV4Auth`` computes it (:mod:`fsseam_s3.sigv4`,
  compared with botocore's by the tests) with the client's credentials (refreshable ones
  refreshed through the loop when they are due), region and signing name. Over plain HTTP
  the payload is SHA-256 signed, over HTTPS with a checksum it is not, as botocore
  decides;
* the checksums: a PutObject carries ``x-amz-checksum-crc32`` (botocore's default since
  1.36, ``request_checksum_calculation="when_supported"``). botocore moves it into an
  aws-chunked trailer over HTTPS; here it stays a header on both (the same CRC32 for S3 to
  check, and a body sent as it is). A GET asks ``x-amz-checksum-mode: ENABLED`` and checks
  the checksum of a whole object's answer with botocore's checksum classes;
* errors: an answer >= 300 is parsed by botocore's REST-XML parser into the ``ClientError``
  subclass the client raises (``client.exceptions.from_code``), retried by the client's own
  ``needs-retry`` handlers (its retry mode and attempts, and the region redirector) with
  its own backoff, then by s3fs's ``_error_wrapper`` rules (its retries, SlowDown,
  transport errors, ``s3fs.core.CUSTOM_ERROR_HANDLER``) and translated by
  ``s3fs.errors.translate_boto_error``: the exception ``fs._call_s3`` raises, with the
  ``ClientError`` as its cause. Transport errors become botocore's (``EndpointConnectionError``,
  ``ConnectionClosedError``, ``ReadTimeoutError``) as aiobotocore maps aiohttp's. Waits go
  through the filesystem's loop (``AioEndpoint._sleep``, s3fs's ``asyncio.sleep``).

A client this module cannot speak for is not used: :func:`usable` is conservative (any
request hook that is not botocore's, aiobotocore's or the in-process moto bridge; proxies,
client certificates, unverified TLS, a signature other than SigV4, anonymous access,
``s3_additional_kwargs`` or requester pays, adaptive retries, endpoint headers). While
moto's ``mock_aws`` is active each request takes the old path (``mock_active``).
"""

from __future__ import annotations

import base64
import socket
import ssl
import urllib.parse
import urllib.request
import uuid
import zlib
from collections.abc import Mapping
from typing import Any

import botocore.auth
from botocore.credentials import ReadOnlyCredentials, RefreshableCredentials
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    FlexibleChecksumError,
    HTTPClientError,
    ReadTimeoutError,
    SSLError,
)
from botocore.hooks import first_non_none_response
from botocore.parsers import create_parser
from botocore.utils import percent_encode, percent_encode_sequence

from fsseam.backends.objectstore.direct import Answer, Broken, Connections

from ._moto import BRIDGE_MODULE, mock_active
from .sigv4 import SigV4, payload_signing

__all__ = ["DirectS3", "Unsendable", "usable"]

_OWN_MODULES = ("botocore.", "aiobotocore.", "s3fs.", BRIDGE_MODULE)
"""Where the request hooks of a client this module speaks for come from: the libraries'
own (their effects reproduced here) and the in-process moto bridge (idle without a mock)."""
_META = "x-amz-meta-"
_SLOWDOWN = ("SlowDown", "reduce your request rate", "XAmzContentSHA256Mismatch")
"""What s3fs's ``_error_wrapper`` retries of a ClientError by its text."""
_UA_MARK = " md/fsseam#direct"
"""Appended to botocore's User-Agent: tells at the server which path sent a request."""


class Unsendable(Exception):
    """The request cannot go this way: botocore's redirector found the bucket in another
    region (and keeps it for the client's own requests). The caller sends it, and the
    bucket's next requests, through ``fs._call_s3``."""


def _handler_modules(client: Any) -> set[str]:
    """The modules of every handler registered on the client's events."""
    emitter = getattr(client.meta.events, "_emitter", client.meta.events)
    modules: set[str] = set()
    stack = [emitter._handlers._root]
    while stack:
        node = stack.pop()
        for part in node.get("values") or ():
            for handler in part:
                target = getattr(handler, "func", handler)
                modules.add(str(getattr(target, "__module__", None) or ""))
        stack.extend((node.get("children") or {}).values())
    return modules


def _ssl_context(client: Any) -> ssl.SSLContext | None:
    """The TLS context aiobotocore verifies with (None: it does not verify)."""
    verify = getattr(client._endpoint.http_session, "_verify", True)
    if verify is False:
        return None
    if isinstance(verify, str):
        return ssl.create_default_context(cafile=verify)
    return ssl.create_default_context()


def usable(fs: Any, client: Any) -> bool:
    """Whether the requests of ``fs``'s aiobotocore ``client`` can be sent from here as
    botocore would send them."""
    config = client.meta.config
    if (getattr(fs, "anon", False) or fs.s3_additional_kwargs or fs.req_kw
            or config.signature_version not in (None, "s3v4", "v4")
            or config.proxies or config.client_cert
            or (config.retries or {}).get("mode") == "adaptive"
            or client._request_signer._credentials is None):
        return False
    if not all(m.startswith(_OWN_MODULES) for m in _handler_modules(client)):
        return False
    url = urllib.parse.urlsplit(str(client.meta.endpoint_url))
    if url.scheme not in ("http", "https"):
        return False
    if url.scheme == "https" and _ssl_context(client) is None:
        return False
    proxies = urllib.request.getproxies()
    return not (proxies.get(url.scheme) or proxies.get("all")) or bool(
        urllib.request.proxy_bypass(url.hostname or ""))


_CHECKSUM_HEADER = "x-amz-checksum-crc32"
"""The checksum header a PutObject carries (botocore's default algorithm, CRC32)."""


class _HttpResponse:
    """What botocore's retry handlers and redirector read of an answer."""

    def __init__(self, url: str, answer: Answer) -> None:
        self.url = url
        self.status_code = answer.status
        self.headers = answer.headers
        self.content = answer.body
        self.text = answer.body.decode("utf-8", "replace")


def _transport_error(broken: Broken, url: str) -> Exception:
    """The botocore exception aiobotocore raises for this transport failure."""
    error = broken.error
    mapped: Exception
    if isinstance(error, ssl.SSLError):
        mapped = SSLError(endpoint_url=url, error=error)
    elif isinstance(error, (TimeoutError, socket.timeout)):
        mapped = ReadTimeoutError(endpoint_url=url, error=error)
    elif isinstance(error, (ConnectionResetError, BrokenPipeError)) and not broken.fresh:
        # A reused connection the server dropped: aiohttp's ServerDisconnectedError.
        mapped = ConnectionClosedError(endpoint_url=url, error=error)
    elif isinstance(error, OSError) and not broken.answered:
        mapped = EndpointConnectionError(endpoint_url=url, error=error)
    elif isinstance(error, OSError) or error.__class__.__module__ == "http.client":
        mapped = ConnectionClosedError(endpoint_url=url, error=error)
    else:
        mapped = HTTPClientError(error=error)
    return mapped


class DirectS3:
    """The hot requests of one bucket through one aiobotocore client, sent from the
    calling thread (see the module's notes)."""

    def __init__(self, fs: Any, client: Any, bucket: str, base_url: str,
                 signing: Mapping[str, Any]) -> None:
        from fsspec.asyn import sync

        self.fs = fs
        self.client = client
        self.bucket = bucket
        self.base_url = base_url.rstrip("/")
        # The Host header as botocore derives it (sent as signed): derived once, not twice
        # per request by the signer.
        self._host = str(botocore.auth._host_from_url(self.base_url))
        self._sync = sync
        config = client.meta.config
        self._config = config
        self._region = str(signing.get("region") or client.meta.region_name)
        self._signing_name = str(signing.get("signing_name") or "s3")
        self._credentials = client._request_signer._credentials
        self._signer = SigV4(self._region, self._signing_name,
                             sign_payload=payload_signing(config))
        self._frozen: ReadOnlyCredentials | None = None
        self._agent = client._user_agent_creator.to_string() + _UA_MARK
        retries = config.retries or {}
        # botocore's standard mode says its most attempts in the header too; legacy not.
        self._most = (f"; max={retries.get('total_max_attempts', 3)}"
                      if retries.get("mode") == "standard" else "")
        self._send_checksum = config.request_checksum_calculation == "when_supported"
        self._check_answers = config.response_checksum_validation == "when_supported"
        self._parser = create_parser("rest-xml")
        self._model = client.meta.service_model
        timeout = float(config.read_timeout or 60)
        scheme = urllib.parse.urlsplit(self.base_url).scheme
        self._connections = Connections(
            timeout, context=_ssl_context(client) if scheme == "https" else None)

    @classmethod
    async def resolve(cls, fs: Any, bucket: str) -> DirectS3 | None:
        """A transport for ``bucket`` of ``fs`` (on the filesystem's loop), or None when
        its requests cannot go this way."""
        await fs.set_session()
        client = await fs.get_s3(bucket)
        if not usable(fs, client):
            return None
        operation = client.meta.service_model.operation_model("GetObject")
        context: dict[str, Any] = {}
        # Key does not pick the endpoint (only the bucket and the client's settings do).
        url, headers, properties = await client._resolve_endpoint_ruleset(
            operation, {"Bucket": bucket, "Key": "k"}, context)
        schemes = properties.get("authSchemes") or [{"name": "sigv4"}]
        if headers or context.get("auth_type") not in (None, "v4") or (
                schemes[0].get("name") != "sigv4"):
            return None
        return cls(fs, client, bucket, str(url), context.get("signing") or {})

    def current(self) -> bool:
        """Still the filesystem's client (s3fs makes a new one on ``set_session(refresh)``),
        and no in-process mock to answer instead of the network."""
        return self.fs.s3 is self.client and not mock_active()

    # -- the requests ------------------------------------------------------------------
    def get(self, key: str, headers: Mapping[str, str], version_id: str | None
            ) -> dict[str, Any]:
        sent = dict(headers)
        if self._check_answers:
            sent["x-amz-checksum-mode"] = "ENABLED"
        query = {"versionId": version_id} if version_id else None
        answer = self._call("GetObject", "GET", key, sent, None, query)
        if self._check_answers:
            self._check(answer)
        return self._fields(answer, body=True)

    def head(self, key: str, version_id: str | None) -> dict[str, Any]:
        query = {"versionId": version_id} if version_id else None
        answer = self._call("HeadObject", "HEAD", key, {}, None, query)
        out = self._fields(answer, body=False)
        out["Metadata"] = {name[len(_META):]: value for name, value in answer.headers.items()
                           if name.startswith(_META)}
        return out

    def put(self, key: str, data: bytes, headers: Mapping[str, str],
            metadata: Mapping[str, str]) -> dict[str, Any]:
        sent = dict(headers)
        for name, value in metadata.items():
            sent[_META + name] = value
        if self._send_checksum:
            crc = zlib.crc32(data).to_bytes(4, "big")
            sent[_CHECKSUM_HEADER] = base64.b64encode(crc).decode()
            sent["x-amz-sdk-checksum-algorithm"] = "CRC32"
        return self._fields(self._call("PutObject", "PUT", key, sent, data, None), body=False)

    @staticmethod
    def _fields(answer: Answer, *, body: bool) -> dict[str, Any]:
        """The answer's fields the client reads, named as botocore parses them."""
        h = answer.headers
        out: dict[str, Any] = {"ETag": h.get("etag"), "VersionId": h.get("x-amz-version-id"),
                               "ContentLength": int(h.get("content-length") or 0)}
        if "content-range" in h:
            out["ContentRange"] = h["content-range"]
        if body:
            out["Body"] = answer.body
        return out

    def _check(self, answer: Answer) -> None:
        """A whole object's checksum against the one S3 sent, as botocore checks it (the
        first algorithm of its priority list that is there and installed)."""
        from botocore import httpchecksum

        kinds: Any = getattr(httpchecksum, "_CHECKSUM_CLS", {})
        for algorithm in getattr(httpchecksum, "_ALGORITHMS_PRIORITY_LIST", ()):
            expected = answer.headers.get(f"x-amz-checksum-{algorithm}")
            if expected is None or algorithm not in kinds:
                continue
            if "-" in expected:
                return  # of the parts' checksums: botocore cannot check it either
            checksum = kinds[algorithm]()
            checksum.update(answer.body)
            if checksum.digest() != base64.b64decode(expected):
                raise FlexibleChecksumError(
                    error_msg=f"Expected checksum {expected} did not match calculated "
                              f"checksum: {checksum.b64digest()}")
            return

    # -- sending, botocore's retries, s3fs's retries -----------------------------------
    def _call(self, operation: str, method: str, key: str, headers: dict[str, str],
              body: bytes | None, query: dict[str, str] | None) -> Answer:
        """One operation with s3fs's ``_error_wrapper`` around botocore's attempts."""
        import s3fs.core
        from s3fs.errors import translate_boto_error

        url = f"{self.base_url}/{percent_encode(key, safe='/~')}"
        if query:
            url = f"{url}?{percent_encode_sequence(query)}"
        error: BaseException | None = None
        for attempt in range(self.fs.retries):
            wait = min(1.7**attempt * 0.1, 15)
            try:
                return self._attempts(operation, method, url, headers, body)
            except s3fs.core.S3_RETRYABLE_ERRORS as e:
                error = e
            except ClientError as e:
                error = e
                if not any(p in str(e) for p in _SLOWDOWN) and not (
                        s3fs.core.CUSTOM_ERROR_HANDLER(e)):
                    break
            except (Unsendable, FlexibleChecksumError):
                raise
            except Exception as e:
                error = e
                if not s3fs.core.CUSTOM_ERROR_HANDLER(e):
                    break
            self._sync(self.fs.loop, s3fs.core.asyncio.sleep, wait)
        raise translate_boto_error(error)

    def _attempts(self, operation: str, method: str, url: str, headers: dict[str, str],
                  body: bytes | None) -> Answer:
        """The request and botocore's retries of it (its ``needs-retry`` handlers)."""
        model = self._model.operation_model(operation)
        # What botocore's retry handlers and its region redirector read of a request.
        request_dict: dict[str, Any] = {"url": url, "method": method, "context": {
            "client_config": self._config, "retries": {}, "operation_name": operation,
            "client_region": self.client.meta.region_name, "signing": {
                "bucket": self.bucket, "region": self._region,
                "signing_name": self._signing_name}}}
        attempts = 1
        while True:
            response: tuple[_HttpResponse, dict[str, Any]] | None = None
            caught: Exception | None = None
            try:
                answer = self._send(method, url, headers, body, attempts)
            except Broken as e:
                caught = _transport_error(e, url)
            else:
                if answer.status < 300:
                    return answer
                response = (_HttpResponse(url, answer), self._error(model, answer, attempts))
            delay = first_non_none_response(self._sync(
                self.fs.loop, self.client.meta.events.emit,
                f"needs-retry.s3.{operation}", response=response,
                endpoint=self.client._endpoint, operation=model, attempts=attempts,
                caught_exception=caught, request_dict=request_dict))
            if request_dict["url"] != url:
                raise Unsendable(request_dict["url"])
            if delay is None:
                if caught is not None:
                    raise caught
                assert response is not None
                parsed = response[1]
                raise self.client.exceptions.from_code(parsed["Error"].get("Code"))(
                    parsed, operation)
            self._sync(self.fs.loop, self.client._endpoint._sleep, delay)
            attempts += 1

    def _error(self, model: Any, answer: Answer, attempts: int) -> dict[str, Any]:
        parsed: dict[str, Any] = self._parser.parse(
            {"status_code": answer.status, "headers": answer.headers, "body": answer.body,
             "context": {"operation_name": model.name}}, model.output_shape)
        parsed.setdefault("ResponseMetadata", {})["RetryAttempts"] = attempts - 1
        return parsed

    def _send(self, method: str, url: str, headers: dict[str, str], body: bytes | None,
              attempt: int) -> Answer:
        sent = {"host": self._host, **headers}
        credentials = self._frozen_credentials()
        sent.update(self._signer.headers(
            method, url, sent, body, access_key=credentials.access_key,
            secret_key=credentials.secret_key, token=credentials.token,
            checksum_header=_CHECKSUM_HEADER if method == "PUT" else None))
        sent["User-Agent"] = self._agent
        sent["amz-sdk-invocation-id"] = str(uuid.uuid4())
        sent["amz-sdk-request"] = f"attempt={attempt}{self._most}"
        return self._connections.exchange(method, url, sent, body,
                                          resend=method in ("GET", "HEAD"))

    def _frozen_credentials(self) -> ReadOnlyCredentials:
        credentials = self._credentials
        if isinstance(credentials, RefreshableCredentials):
            if self._frozen is None or credentials.refresh_needed():
                self._frozen = self._sync(self.fs.loop, credentials.get_frozen_credentials)
        elif self._frozen is None:
            self._frozen = ReadOnlyCredentials(credentials.access_key, credentials.secret_key,
                                               credentials.token)
        return self._frozen
