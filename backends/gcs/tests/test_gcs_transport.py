"""Requests sent from the calling thread (``fsseam_gcs.transport``): the same requests as
through gcsfs's event loop, no aiohttp session opened for them, and a thread's connection
closed when the thread ends, and a kept connection the server closed while it was idle
never carrying an upload."""

from __future__ import annotations

import gc
import json
import re
import threading
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar
from urllib.parse import parse_qsl

import gcsfs.retry
import pytest
from fsseam_gcs.client import GcsClient, make_filesystem
from fsseam_gcs.testing import GcsCountingProxy

from fsseam.backends.objectstore import OWNER_KEY, WRITE_ID_KEY
from fsseam.versions import Version

# aiohttp session options of the caller's own: a filesystem the transport cannot speak for,
# so its requests go through gcsfs's loop (the comparison in the first test).
OWN_SESSION = {"session_kwargs": {"trust_env": False}}


def _client(proxy: GcsCountingProxy, bucket: str, **options: Any) -> GcsClient:
    return GcsClient(make_filesystem({**proxy.storage_options(), **options}), bucket,
                     resumable_threshold=1000)


def _every_request(client: GcsClient, prefix: str) -> list[Any]:
    """Each request kind of the client once; what each answered, without the parts that
    differ between runs (generations, times)."""
    name, copy = f"{prefix}/a.txt", f"{prefix}/b.txt"
    first = client.upload_multipart(name, b"hello\n", "0", "w1", "owner")
    generation = str(first["generation"])
    media = client.get_media(name, start=0, end=4, generation=generation)
    meta = client.get_metadata(name)
    big = client.upload_resumable(f"{prefix}/big.bin", b"x" * 3000, None, "w2")
    listed = client.list_page(f"{prefix}/", delimiter="/")
    ranged = client.list_page(prefix, delimiter=None, start=f"{prefix}/a", end=f"{prefix}/c")
    client.copy(name, copy, source_match=Version(kind="generation", value=generation),
                write_id="w3")
    client.delete(copy)
    with pytest.raises(FileNotFoundError):
        client.get_media(copy)
    return [media.data, media.total_size, meta["metadata"], big["size"],
            sorted(i["name"] for i in listed["items"]),
            sorted(i["name"] for i in ranged["items"])]


def _query(query: str) -> list[tuple[str, str]]:
    """A query's decoded pairs, in order, generations (which differ by run) as G."""
    return [(k, re.sub(r"^\d{6,}$", "G", v)) for k, v in parse_qsl(query)]


def test_the_same_requests_as_through_gcsfs_and_no_aiohttp_session(
    counting_proxy: GcsCountingProxy, gcs_bucket: str
) -> None:
    bridged = _client(counting_proxy, gcs_bucket, **OWN_SESSION)
    direct = _client(counting_proxy, gcs_bucket)
    counting_proxy.take_records()
    via_loop = _every_request(bridged, "loop")
    loop_requests = counting_proxy.take_records()
    via_thread = _every_request(direct, "thread")
    thread_requests = counting_proxy.take_records()

    assert via_thread == [x if not isinstance(x, list) else [n.replace("loop", "thread")
                                                             for n in x] for x in via_loop]
    assert via_thread[:3] == [b"hell", 6, {WRITE_ID_KEY: "w1", OWNER_KEY: "owner"}]
    # The resumable upload's chunk goes to the Location the emulator names (itself, not
    # the proxy): 9 requests seen of 10.
    assert [r.method for r in thread_requests] == [
        "POST", "GET", "GET", "POST", "GET", "GET", "POST", "DELETE", "GET"]
    for ours, theirs in zip(thread_requests, loop_requests, strict=True):
        assert (ours.method, ours.path.replace("thread", "loop"), ours.status) == (
            theirs.method, theirs.path, theirs.status)
        assert _query(ours.query.replace("thread", "loop")) == _query(theirs.query)
    # gcsfs's loop never opened a session for the direct client; it did for the other.
    assert direct.fs._session is None
    assert bridged.fs._session is not None


def test_a_thread_that_ends_closes_its_connection(
    gcs_server: Any, gcs_bucket: str
) -> None:
    client = GcsClient(make_filesystem(gcs_server.storage_options()), gcs_bucket)
    client.upload_multipart("t.txt", b"data", None)
    got: list[bytes] = []
    worker = threading.Thread(target=lambda: got.append(client.get_media("t.txt").data))
    worker.start()
    worker.join()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        del worker
        gc.collect()
    assert got == [b"data"]
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


class _ClosesWhenIdle(BaseHTTPRequestHandler):
    """Answers an upload as GCS does, keeps the connection open in what it says (HTTP/1.1,
    no ``Connection: close``), then closes it: a server's idle timeout, met at once."""

    protocol_version = "HTTP/1.1"
    uploads: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.uploads.append(self.path)
        body = json.dumps({"name": "a.txt", "generation": str(len(self.uploads))}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    """Says when it has closed a connection."""

    closed = threading.Event()

    def shutdown_request(self, request: Any) -> None:
        super().shutdown_request(request)
        self.closed.set()


class _Sleeps:
    """gcsfs's retry module's ``asyncio`` for a test: no wait, every backoff recorded."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def test_an_upload_after_the_server_closed_the_kept_connection_goes_on_a_new_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sleeps = _Sleeps()
    monkeypatch.setattr(gcsfs.retry, "asyncio", sleeps)
    _ClosesWhenIdle.uploads = []
    server = _Server(("127.0.0.1", 0), _ClosesWhenIdle)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}"
        client = GcsClient(make_filesystem({"endpoint_url": url, "token": "anon",
                                            "project": "test"}), "bkt")
        first = client.upload_multipart("a.txt", b"one", None)
        assert server.closed.wait(10)  # the kept connection is closed, the client idle
        second = client.upload_multipart("a.txt", b"two", None)
    finally:
        server.shutdown()
        server.server_close()
    assert (first["generation"], second["generation"]) == ("1", "2")
    # Each upload sent once, the second not after a failed attempt and a backoff.
    assert _ClosesWhenIdle.uploads == ["/upload/storage/v1/b/bkt/o?uploadType=multipart"] * 2
    assert sleeps.slept == []
