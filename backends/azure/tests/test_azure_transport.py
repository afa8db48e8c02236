"""Get Blob, Get Blob Properties and Put Blob sent from the calling thread
(``fsseam_azure.transport``): the same answers and the same exceptions as through the SDK,
the same signature as the SDK's for the same request, a kept connection the server closed
while it was idle never carrying a request, and the SDK kept for what the transport cannot
speak for."""

from __future__ import annotations

import gzip
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import adlfs
import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import HttpResponseError
from azure.core.pipeline.transport import AioHttpTransport
from azure.storage.blob import ContainerSasPermissions, ContentSettings, generate_container_sas
from azure.storage.blob._shared import policies_async
from azure.storage.blob._shared.authentication import SharedKeyCredentialPolicy
from fsseam_azure import WRITE_ID_KEY
from fsseam_azure.client import AzureClient
from fsseam_azure.transport import SharedKey, usable

from fsseam.backends.objectstore import ObjectData, ObjectHead
from fsseam.testing.azurite import ACCOUNT_KEY, ACCOUNT_NAME, connection_string
from fsseam.testing.stub_server import StubHandler, StubServer, serving
from fsseam.versions import Version

NAME = "dir/ä b+c%.txt"  # quoted in the path: non-ASCII, a space, "+" and "%"
STALE = Version(kind="etag", value='"0x8DC000000000000"')


def _fs(azurite: Any) -> Any:
    return adlfs.AzureBlobFileSystem(connection_string=azurite.connection_string,
                                     skip_instance_cache=True)


@pytest.fixture
def pair(azurite: Any, container: str) -> tuple[AzureClient, AzureClient]:
    """(direct, through the SDK) clients of one container, on one filesystem."""
    fs = _fs(azurite)
    direct, sdk = AzureClient(fs, container), AzureClient(fs, container)
    sdk._direct = None
    assert direct._direct is not None
    return direct, sdk


def _outcome(call: Callable[[], Any]) -> Any:
    """What a call gave: its answer, or its exception's type, status, Azure error code and
    first line (what the error mapping reads)."""
    try:
        return call()
    except Exception as e:
        lines = str(e).splitlines()
        return (type(e).__name__, getattr(e, "status_code", None),
                str(getattr(e, "error_code", None)), lines[0] if lines else "")


def _same(pair: tuple[AzureClient, AzureClient], call: Callable[[AzureClient], Any]) -> Any:
    direct, sdk = (_outcome(lambda c=c: call(c)) for c in pair)  # type: ignore[misc]
    assert direct == sdk
    return direct


def test_reads_and_properties_answer_as_through_the_sdk(
    pair: tuple[AzureClient, AzureClient], requests: Any
) -> None:
    direct, _ = pair
    version = direct.put(NAME, b"hello world", if_match=None, if_absent=True, write_id="w1")
    direct.put("empty", b"", if_match=None, if_absent=True, write_id="w2")
    requests.take()
    whole = _same(pair, lambda c: c.get(NAME))
    assert whole == ObjectData(data=b"hello world", version=version, size=11)
    assert _same(pair, lambda c: c.get(NAME, start=2, end=5, pin=version)) == ObjectData(
        data=b"llo", version=version, size=11)
    assert _same(pair, lambda c: c.get(NAME, start=6)).data == b"world"
    assert _same(pair, lambda c: c.get("empty")).data == b""
    head = _same(pair, lambda c: c.head(NAME))
    assert head == ObjectHead(version=version, size=11, write_id="w1")
    assert _same(pair, lambda c: c.head("empty")).size == 0
    # Direct: one GET a read (the SDK's downloader: two for the empty blob, 416 first).
    quoted = "/dir/%C3%A4%20b%2Bc%25.txt"
    assert requests.take() == [
        ("GET", quoted), ("GET", quoted), ("GET", quoted), ("GET", quoted),
        ("GET", quoted), ("GET", quoted), ("GET", "/empty"), ("GET", "/empty"),
        ("GET", "/empty"), ("HEAD", quoted), ("HEAD", quoted), ("HEAD", "/empty"),
        ("HEAD", "/empty"),
    ]


def test_refusals_are_the_sdks_exceptions(
    pair: tuple[AzureClient, AzureClient], azurite: Any
) -> None:
    direct, _ = pair
    direct.put(NAME, b"x", if_match=None, if_absent=True, write_id="w1")
    modified = ("ResourceModifiedError", 412, "StorageErrorCode.CONDITION_NOT_MET",
                "The condition specified using HTTP conditional header(s) is not met.")
    assert _same(pair, lambda c: c.get(NAME, pin=STALE)) == modified
    assert _same(pair, lambda c: c.put(NAME, b"y", if_match=STALE, if_absent=False,
                                       write_id="w2")) == modified
    assert _same(pair, lambda c: c.put(NAME, b"y", if_match=None, if_absent=True,
                                       write_id="w2")) == (
        "ResourceExistsError", 409, "BlobAlreadyExists", "The specified blob already exists.")
    assert _same(pair, lambda c: c.get(NAME, start=5)) == (
        "HttpResponseError", 416, "StorageErrorCode.INVALID_RANGE",
        "The range specified is invalid for the current size of the resource.")
    assert _same(pair, lambda c: c.get("nope")) == (
        "ResourceNotFoundError", 404, "BlobNotFound", "The specified blob does not exist.")
    # A HEAD's answer has no body: Azure's words are in the status line.
    assert _same(pair, lambda c: c.head("nope")) == (
        "ResourceNotFoundError", 404, "BlobNotFound",
        "Operation returned an invalid status 'The specified blob does not exist.'")
    fs = _fs(azurite)
    gone = (AzureClient(fs, "no-such-container"), AzureClient(fs, "no-such-container"))
    gone[1]._direct = None
    assert _same(gone, lambda c: c.head("a"))[2] == "ContainerNotFound"
    assert _same(gone, lambda c: c.put("a", b"1", if_match=None, if_absent=False,
                                       write_id="w"))[2] == "ContainerNotFound"
    # Nothing was changed by the refused writes.
    assert direct.get(NAME).data == b"x"


def test_a_blob_stored_encoded_is_read_through_the_sdk(
    pair: tuple[AzureClient, AzureClient], azurite: Any, container: str, requests: Any
) -> None:
    """The SDK decodes a blob stored with a Content-Encoding; the direct GET gives it
    back to the SDK rather than answer otherwise."""
    admin = _fs(azurite).service_client.get_container_client(container)
    blob = admin.get_blob_client("z.txt")
    packed = gzip.compress(b"unpacked bytes")
    AzureClient(_fs(azurite), container)._run(
        blob.upload_blob, packed, content_settings=ContentSettings(content_encoding="gzip"))
    requests.take()
    got = _same(pair, lambda c: c.get("z.txt"))
    assert got.data == b"unpacked bytes"
    # The direct GET, then the SDK's; the SDK's alone.
    assert requests.take() == [("GET", "/z.txt")] * 3


def test_a_version_id_is_asked_for_as_the_sdk_asks(
    pair: tuple[AzureClient, AzureClient], requests: Any
) -> None:
    direct, _ = pair
    direct.put("v.txt", b"now", if_match=None, if_absent=True, write_id="w")
    requests.take()
    old = Version(kind="etag", value='"0x1"', detail="2026-11-30T10:00:00.1000000Z")
    # Azurite keeps no versions and serves the current bytes: the query is what is checked.
    _same(pair, lambda c: c.get("v.txt", version=old))
    records = requests.azurite.take_records()
    assert [(r.method, r.query) for r in records] == [
        ("GET", "versionid=2026-11-30T10:00:00.1000000Z")] * 2


def test_the_write_id_round_trips_through_the_sdk_both_ways(
    pair: tuple[AzureClient, AzureClient], azurite: Any, container: str
) -> None:
    direct, sdk = pair
    direct.put(NAME, b"a", if_match=None, if_absent=True, write_id="w-direct")
    sdk.put("other", b"b", if_match=None, if_absent=True, write_id="w-sdk")
    assert sdk.head(NAME).write_id == "w-direct"
    assert direct.head("other").write_id == "w-sdk"
    # The metadata as the SDK reads it (Azure keeps no owner: the write id is all).
    blob = _fs(azurite).service_client.get_container_client(container).get_blob_client(NAME)
    props = AzureClient(_fs(azurite), container)._run(blob.get_blob_properties)
    assert props.metadata == {WRITE_ID_KEY: "w-direct"}


class _Recorder:
    """The SDK's requests as aiohttp was handed them: method, URL and headers."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, str]]] = []

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        send = AioHttpTransport.send

        async def recorded(transport: Any, request: Any, **kwargs: Any) -> Any:
            self.sent.append((request.method, request.url, dict(request.headers)))
            return await send(transport, request, **kwargs)

        monkeypatch.setattr(AioHttpTransport, "send", recorded)


def test_the_signature_is_the_sdks(
    pair: tuple[AzureClient, AzureClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, sdk = pair
    recorder = _Recorder()
    recorder.install(monkeypatch)
    version = sdk.put(NAME, b"hello", if_match=None, if_absent=True, write_id="w1")
    version = sdk.put(NAME, b"hello", if_match=version, if_absent=False, write_id="w2")
    sdk.get(NAME, start=1, end=3, pin=version)
    sdk.head(NAME)
    sdk.get(NAME, version=Version(kind="etag", value='"0x1"',
                                  detail="2026-11-30T10:00:00.1000000Z"))
    key = SharedKey(ACCOUNT_NAME, ACCOUNT_KEY)
    assert len(recorder.sent) == 5
    for method, url, headers in recorder.sent:
        parts = urlsplit(url)
        unsigned = {k: v for k, v in headers.items() if k != "Authorization"}
        assert key.authorization(method, parts.path, unsigned, dict(parse_qsl(parts.query))
                                 ) == headers["Authorization"], (method, url)


def test_metadata_names_are_signed_in_the_sdks_collation() -> None:
    """Names whose order differs between the SDK's collation ("-" and "_" count as
    nothing) and a plain sort: the SDK's own policy on the same request."""
    headers = {"x-ms-date": "Sun, 06 Dec 2026 20:00:00 GMT", "x-ms-version": "2026-10-06",
               "Content-Length": "3", "If-Match": '"0x1"'}
    for name in ("a_c", "A1", "aa", "ab", "a-d", "b"):
        headers[f"x-ms-meta-{name}"] = name
    url = f"http://127.0.0.1/{ACCOUNT_NAME}/c/%C3%A4.txt?versionid=2026-11-30T10:00:00Z"
    request = SimpleNamespace(
        http_request=SimpleNamespace(method="PUT", url=url, headers=dict(headers),
                                     query={"versionid": "2026-11-30T10:00:00Z"}),
        context=SimpleNamespace(transport=None))
    SharedKeyCredentialPolicy(ACCOUNT_NAME, ACCOUNT_KEY).on_request(request)  # type: ignore[no-untyped-call]
    mine = SharedKey(ACCOUNT_NAME, ACCOUNT_KEY).authorization(
        "PUT", f"/{ACCOUNT_NAME}/c/%C3%A4.txt", headers, {"versionid": "2026-11-30T10:00:00Z"})
    assert mine == request.http_request.headers["Authorization"]


def test_a_wrong_key_is_refused_as_through_the_sdk(azurite: Any, container: str) -> None:
    wrong = azurite.connection_string.replace(ACCOUNT_KEY, "d3Jvbmc=" * 11)
    fs = adlfs.AzureBlobFileSystem(connection_string=wrong, skip_instance_cache=True)
    pair = (AzureClient(fs, container), AzureClient(fs, container))
    pair[1]._direct = None
    refused = _same(pair, lambda c: c.head("a"))
    assert refused[:2] == ("HttpResponseError", 403)
    assert _same(pair, lambda c: c.get("a"))[1] == 403


# -- a stub server: kept connections and retries ------------------------------------------


class _Handler(StubHandler):
    """Answers Put Blob and Get Blob as Azure does, kept-alive; the server's ``answers``
    lists the statuses to give first (500: an Azure error answer); with ``close_after``
    the connection is closed after each answer without saying so (an idle timeout, met at
    once)."""

    def _answer(self) -> None:
        status = self.server.answers.pop(0) if self.server.answers else 201
        body = b"" if status < 300 else (
            b'<?xml version="1.0" encoding="utf-8"?><Error><Code>InternalError</Code>'
            b"<Message>The server encountered an internal error.</Message></Error>")
        self.send_response(status if self.command == "PUT" or status >= 300 else 200)
        self.send_header("ETag", f'"0x{len(self.server.seen)}"')
        if status >= 300:
            self.send_header("x-ms-error-code", "InternalError")
            self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = self.server.close_after

    def do_PUT(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append(("PUT", self.path))
        self._answer()

    def do_GET(self) -> None:
        self.server.seen.append(("GET", self.path))
        self._answer()

def _stub_client(server: StubServer) -> AzureClient:
    endpoint = f"{server.url}/{ACCOUNT_NAME}"
    fs = adlfs.AzureBlobFileSystem(connection_string=connection_string(endpoint),
                                   skip_instance_cache=True)
    client = AzureClient(fs, "c")
    assert client._direct is not None
    return client


@pytest.fixture
def backoffs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The retry policy's backoffs, by retry count, none slept."""
    counts: list[int] = []

    def backoff(policy: Any, settings: dict[str, Any]) -> float:
        counts.append(settings["count"])
        return 0

    monkeypatch.setattr(policies_async.ExponentialRetry, "get_backoff_time", backoff)
    return counts


def test_an_upload_after_the_server_closed_the_kept_connection_goes_on_a_new_one(
    backoffs: list[int],
) -> None:
    with serving(_Handler, close_after=True) as server:
        client = _stub_client(server)
        first = client.put("a.txt", b"one", if_match=None, if_absent=False, write_id="w")
        assert server.closed.wait(10)  # the kept connection is closed, the client idle
        second = client.put("a.txt", b"two", if_match=None, if_absent=False, write_id="w")
    assert (first.value, second.value) == ('"0x1"', '"0x2"')
    # Each upload sent once, the second not after a failed attempt and a backoff.
    assert server.seen == [("PUT", f"/{ACCOUNT_NAME}/c/a.txt")] * 2
    assert server.connections == 2
    assert backoffs == []


def test_5xx_is_retried_by_the_sdks_policy_then_raised(backoffs: list[int]) -> None:
    with serving(_Handler, answers=[500, 503]) as server:
        client = _stub_client(server)
        assert client.get("a.txt").data == b""
        assert len(server.seen) == 3
    assert backoffs == [1, 2]
    with serving(_Handler, answers=[500] * 4) as server:
        client = _stub_client(server)
        with pytest.raises(HttpResponseError) as caught:
            client.put("a.txt", b"x", if_match=None, if_absent=False, write_id="w")
        assert len(server.seen) == 4  # the first try and the policy's three retries
    assert type(caught.value) is HttpResponseError
    assert (caught.value.status_code, str(getattr(caught.value, "error_code", None))) == (
        500, "StorageErrorCode.INTERNAL_ERROR")


def test_a_refused_connection_is_retried_then_raised_as_the_sdk_does(
    backoffs: list[int],
) -> None:
    with serving(_Handler) as server:
        client = _stub_client(server)
    # The server is gone: every try is refused.
    with pytest.raises(Exception) as caught:
        client.get("a.txt")
    assert type(caught.value).__name__ == "ServiceRequestError"
    assert backoffs == [1, 2, 3]


# -- what stays with the SDK --------------------------------------------------------------


class _Token:
    def get_token(self, *scopes: str, **kwargs: Any) -> AccessToken:
        return AccessToken("t", 2**31)


def test_token_credentials_and_anonymous_access_keep_the_sdk(
    azurite: Any, container: str
) -> None:
    token = adlfs.AzureBlobFileSystem(account_name="acct", credential=_Token(),
                                      skip_instance_cache=True)
    assert not usable(token)
    assert AzureClient(token, container)._direct is None
    anonymous = adlfs.AzureBlobFileSystem(account_name="acct", anon=True,
                                          skip_instance_cache=True)
    assert not usable(anonymous)
    assert usable(_fs(azurite))


def test_a_sas_goes_in_the_query_as_the_sdk_puts_it(
    azurite: Any, container: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sas = generate_container_sas(
        ACCOUNT_NAME, container, account_key=ACCOUNT_KEY,
        permission=ContainerSasPermissions(read=True, write=True),
        expiry=datetime.now(UTC) + timedelta(hours=1))
    fs = adlfs.AzureBlobFileSystem(
        connection_string=f"BlobEndpoint={azurite.blob_endpoint};SharedAccessSignature={sas}",
        skip_instance_cache=True)
    assert usable(fs)
    pair = (AzureClient(fs, container), AzureClient(fs, container))
    pair[1]._direct = None
    first = pair[0].put(NAME, b"sas", if_match=None, if_absent=True, write_id="w")
    assert pair[1].head(NAME).version == first
    old = Version(kind="etag", value='"0x1"', detail="2026-11-30T10:00:00.1000000Z")
    recorder = _Recorder()
    recorder.install(monkeypatch)
    assert _same(pair, lambda c: c.get(NAME, version=old)).data == b"sas"
    assert _same(pair, lambda c: c.head(NAME)).write_id == "w"
    assert _same(pair, lambda c: c.get("nope"))[1] == 404
    # The SDK's URLs (versionid first, then the token): the direct ones are the same.
    sdk_urls = [url for _, url, _ in recorder.sent]
    assert all("Authorization" not in headers for _, _, headers in recorder.sent)
    direct_url = pair[0]._url(NAME)
    assert sdk_urls[1] == direct_url
    assert sdk_urls[0].replace("%3A", ":", 2) == direct_url.replace(
        "?", "?versionid=2026-11-30T10:00:00.1000000Z&", 1)
    # A SAS that may not write: Azure's refusal, as through the SDK.
    read_only = generate_container_sas(
        ACCOUNT_NAME, container, account_key=ACCOUNT_KEY,
        permission=ContainerSasPermissions(read=True),
        expiry=datetime.now(UTC) + timedelta(hours=1))
    fs = adlfs.AzureBlobFileSystem(
        connection_string=(f"BlobEndpoint={azurite.blob_endpoint};"
                           f"SharedAccessSignature={read_only}"), skip_instance_cache=True)
    pair = (AzureClient(fs, container), AzureClient(fs, container))
    pair[1]._direct = None
    assert _same(pair, lambda c: c.put(NAME, b"no", if_match=None, if_absent=False,
                                       write_id="w"))[1] == 403


def test_a_proxy_from_the_environment_keeps_the_sdk(
    azurite: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("http_proxy", "http://proxy.invalid:3128")
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    assert not usable(_fs(azurite))


def test_an_sdk_the_transport_cannot_import_keeps_the_backend(
    azurite: Any, container: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The transport borrows private pieces of the SDK; an SDK release that moves one makes
    its import fail. The client then sends everything through the SDK, and works."""
    import sys

    import fsseam_azure

    monkeypatch.setitem(sys.modules, "fsseam_azure.transport", None)  # import fails
    monkeypatch.delattr(fsseam_azure, "transport", raising=False)
    client = AzureClient(_fs(azurite), container)
    assert client._direct is None
    version = client.put("kept.txt", b"still here\n", if_match=None, if_absent=True,
                         write_id="w1")
    got = client.get("kept.txt")
    assert (got.data, got.version) == (b"still here\n", version)
