"""fsseam.testing.proxy and fsseam.testing.azurite: the helpers other packages reuse."""

from __future__ import annotations

import http.client
import socket
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from fsseam.testing.proxy import counting_proxy, serve_http


class _Upstream(BaseHTTPRequestHandler):
    """Echoes what it received: method, the body's length and its first bytes."""

    protocol_version = "HTTP/1.1"
    body = b"0123456789" * 10

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.send_header("X-Seen", "get")
        self.end_headers()
        self.wfile.write(self.body)

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()

    def do_PUT(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        got = self.rfile.read(length)
        reply = b"%d:%s" % (len(got), got[:20])
        self.send_response(201)
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _request(url: str, method: str, path: str, **kwargs: Any) -> tuple[int, dict[str, str], bytes]:
    host, port = url.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    try:
        conn.request(method, path, **kwargs)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_proxy_forwards_and_counts_head_get_and_chunked_put() -> None:
    with serve_http(_Upstream) as upstream, counting_proxy(upstream) as proxy:
        status, headers, body = _request(proxy.url, "HEAD", "/k?x=1")
        # A HEAD answer keeps the length of the object, not of its (empty) body.
        assert (status, headers["content-length"], body) == (200, "100", b"")
        status, headers, body = _request(proxy.url, "GET", "/k")
        assert (status, headers["x-seen"], body) == (200, "get", _Upstream.body)
        chunks = iter([b"abc", b"defgh"])
        status, _, body = _request(
            proxy.url, "PUT", "/k", body=chunks, encode_chunked=True,
            headers={"Transfer-Encoding": "chunked"},
        )
        assert (status, body) == (201, b"8:abcdefgh")
        assert proxy.counts() == {"HEAD": 1, "GET": 1, "PUT": 1}
        records = proxy.take_records()
        assert [(r.method, r.path, r.query, r.status) for r in records] == [
            ("HEAD", "/k", "x=1", 200), ("GET", "/k", "", 200), ("PUT", "/k", "", 201),
        ]
        assert [(r.request_bytes, r.response_bytes) for r in records] == [
            (0, 0), (0, 100), (8, 10),
        ]
        assert proxy.take() == []


class _Counting(_Upstream):
    """Answers each GET with a body naming how many requests it has served."""

    served = 0

    def do_GET(self) -> None:
        type(self).served += 1
        self.body = b"answer %d" % type(self).served
        super().do_GET()

    def do_HEAD(self) -> None:
        type(self).served += 1
        super().do_HEAD()


def test_replaying_answers_again_without_the_upstream_and_still_counts() -> None:
    """While replaying, a method and path answered once are answered the same again with
    no request upstream; another path, or a method not seen, goes upstream; ending
    replaying forwards again, and a new replay forgets the old answers."""
    _Counting.served = 0
    with serve_http(_Counting) as upstream, counting_proxy(upstream) as proxy:
        assert _request(proxy.url, "GET", "/k")[2] == b"answer 1"
        proxy.replay(True)
        assert _request(proxy.url, "GET", "/k")[2] == b"answer 2"  # kept from here on
        assert _request(proxy.url, "GET", "/k?x=9")[2] == b"answer 2"  # by path: replayed
        assert _request(proxy.url, "GET", "/other")[2] == b"answer 3"
        status, headers, body = _request(proxy.url, "HEAD", "/k")
        assert (status, headers["content-length"], body) == (200, "100", b"")
        status, headers, body = _request(proxy.url, "HEAD", "/k")  # replayed HEAD
        assert (status, headers["content-length"], body) == (200, "100", b"")
        assert _Counting.served == 4
        assert [(r.method, r.path, r.query) for r in proxy.take_records()] == [
            ("GET", "/k", ""), ("GET", "/k", ""), ("GET", "/k", "x=9"),
            ("GET", "/other", ""), ("HEAD", "/k", ""), ("HEAD", "/k", ""),
        ]
        proxy.replay(False)
        assert _request(proxy.url, "GET", "/k")[2] == b"answer 5"
        proxy.replay(True)
        assert _request(proxy.url, "GET", "/k")[2] == b"answer 6"
        assert _request(proxy.url, "GET", "/k")[2] == b"answer 6"


def test_the_proxy_process_is_controlled_by_its_control_url() -> None:
    """``python -m fsseam.testing.proxy``: its control URL starts and ends replaying,
    takes the counts, refuses a malformed request, and closing stdin ends it."""
    import json
    import subprocess
    import sys

    with serve_http(_Counting) as upstream:
        _Counting.served = 0
        proc = subprocess.Popen([sys.executable, "-m", "fsseam.testing.proxy", upstream],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        try:
            assert proc.stdout is not None
            hello = json.loads(proc.stdout.readline())
            control = hello["control"]
            assert _request(control, "PUT", "/replay?on=yes")[0] == 400
            status, _, body = _request(control, "PUT", "/replay?on=1")
            assert (status, json.loads(body)) == (200, {"replaying": True})
            bodies = [_request(hello["url"], "GET", "/k")[2] for _ in range(3)]
            assert bodies == [b"answer 1"] * 3
            assert json.loads(_request(control, "GET", "/take")[2]) == {
                "count": 3, "methods": {"GET": 3}}
            assert _request(control, "PUT", "/replay?on=0")[0] == 200
            assert _request(hello["url"], "GET", "/k")[2] == b"answer 2"
        finally:
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.close()
            assert proc.wait(10) == 0
            proc.stdout.close()


def _port_open(url: str) -> bool:
    host, port = url.removeprefix("http://").split(":")
    with socket.socket() as s:
        s.settimeout(1)
        return s.connect_ex((host, int(port))) == 0


def test_azurite_server_serves_adlfs_counts_requests_and_stops(tmp_path: Path) -> None:
    pytest.importorskip("adlfs", reason="adlfs is not installed (pip install -e '.[test]')")
    from fsseam.testing.azurite import AzuriteNotFound, azurite_server, ensure_azurite

    try:
        ensure_azurite()
    except AzuriteNotFound as e:
        pytest.skip(str(e))
    with azurite_server(tmp_path) as az:
        assert az.server_url.startswith("http://127.0.0.1:")
        assert az.blob_endpoint.startswith(az.proxy.url if az.proxy else "?")
        assert f"BlobEndpoint={az.blob_endpoint};" in az.connection_string
        container = az.create_container()
        assert az.take() == []  # made on the server directly, not counted
        fs = az.filesystem()
        fs.pipe_file(f"{container}/k.txt", b"hello")
        az.take()
        assert fs.cat_file(f"{container}/k.txt") == b"hello"
        assert az.take() == [("GET", f"/devstoreaccount1/{container}/k.txt")]
        server = az.server_url
    assert not _port_open(server)
    assert (tmp_path / "azurite.log").exists()


def test_azurite_missing_binary_names_the_install_command(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from fsseam.testing.azurite import AzuriteNotFound, find_azurite

    monkeypatch.setenv("FSSEAM_AZURITE", str(tmp_path / "no-such-azurite"))
    with pytest.raises(AzuriteNotFound) as info:
        find_azurite()
    assert "npm install --prefix .ci/node azurite@3" in str(info.value)
    fake = tmp_path / "azurite"
    fake.write_text("")
    (tmp_path / "azurite-blob").write_text("")
    monkeypatch.setenv("FSSEAM_AZURITE", str(fake))
    # All services would bind fixed ports: the blob-only command next to it is used.
    assert find_azurite() == tmp_path / "azurite-blob"
