"""Requests sent from the calling thread (``fsseam_gcs.transport``): the same requests as
through gcsfs's event loop, no aiohttp session opened for them; kept connections shared by
threads that come and go, and one the server closed while it was idle never carrying an
upload."""

from __future__ import annotations

import gc
import json
import re
import threading
import warnings
from typing import Any
from urllib.parse import parse_qsl

import gcsfs.retry
import pytest
from fsseam_gcs.client import GcsClient, make_filesystem
from fsseam_gcs.testing import GcsCountingProxy

from fsseam.backends.objectstore import OWNER_KEY, WRITE_ID_KEY
from fsseam.testing.stub_server import StubHandler, StubServer, serving
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


class _Handler(StubHandler):
    """Answers a media GET and an upload as GCS does, over HTTP/1.1 kept-alive; with the
    server's ``close_after``, closes the connection after answering without saying so in
    the answer: a server's idle timeout, met at once."""

    def _answer(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("X-Goog-Generation", "5")
        self.end_headers()
        self.wfile.write(body)
        self.close_connection = self.server.close_after

    def do_GET(self) -> None:
        self._answer(b"media bytes", "application/octet-stream")

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.server.seen.append(self.path)
        count = str(len(self.server.seen))
        self._answer(json.dumps({"name": "a.txt", "generation": count}).encode(),
                     "application/json")

def _client_of(server: StubServer) -> GcsClient:
    return GcsClient(make_filesystem({"endpoint_url": server.url, "token": "anon",
                                      "project": "test"}), "bkt")


def _reads_in_short_threads(server: StubServer, count: int) -> list[bytes]:
    """``count`` reads by one client, each in a thread of its own, one after the other
    (as a pool made for one call starts them); the client is dropped on return."""
    client = _client_of(server)
    got: list[bytes] = []
    for _ in range(count):
        worker = threading.Thread(target=lambda: got.append(client.get_media("a").data))
        worker.start()
        worker.join()
    return got


def test_threads_that_live_for_one_request_share_one_kept_connection() -> None:
    with serving(_Handler, close_after=False) as server:
        got = _reads_in_short_threads(server, 8)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gc.collect()
    assert got == [b"media bytes"] * 8
    assert server.connections == 1
    # The kept connection was closed when its client went, not left to the collector.
    assert [str(w.message) for w in caught if issubclass(w.category, ResourceWarning)] == []


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
    with serving(_Handler, close_after=True) as server:
        client = _client_of(server)
        first = client.upload_multipart("a.txt", b"one", None)
        assert server.closed.wait(10)  # the kept connection is closed, the client idle
        second = client.upload_multipart("a.txt", b"two", None)
    assert (first["generation"], second["generation"]) == ("1", "2")
    # Each upload sent once, the second not after a failed attempt and a backoff.
    assert server.seen == ["/upload/storage/v1/b/bkt/o?uploadType=multipart"] * 2
    assert server.connections == 2
    assert sleeps.slept == []
