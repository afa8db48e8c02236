"""SigV4 of the direct S3 requests (``fsseam_s3.sigv4``) against botocore's own
``S3SigV4Auth``: the same request signed both ways gives the same headers, whatever the
method, scheme, key, query, headers, body, session token and payload-signing setting."""

from __future__ import annotations

from typing import Any

from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from fsseam_s3.sigv4 import EMPTY_SHA256, UNSIGNED_PAYLOAD, SigV4, payload_signing
from hypothesis import given, settings
from hypothesis import strategies as st

CHECKSUM = "x-amz-checksum-crc32"


def _botocore(method: str, url: str, headers: dict[str, str], body: bytes | None,
              credentials: Credentials, config: Config, region: str) -> dict[str, str]:
    """The headers botocore's signer sets, with the request context the S3 client gives
    these operations (as the transport used to pass it)."""
    request = AWSRequest(method=method, url=url, headers=dict(headers), data=body)
    request.context.update(client_config=config, has_streaming_input=method == "PUT",
                           checksum={"request_algorithm": {"in": "header", "name": CHECKSUM}})
    S3SigV4Auth(credentials, "s3", region).add_auth(request)
    names = ("X-Amz-Date", "X-Amz-Content-SHA256", "X-Amz-Security-Token", "Authorization")
    return {name: str(request.headers[name]) for name in names if name in request.headers}


def _ours(method: str, url: str, headers: dict[str, str], body: bytes | None,
          credentials: Credentials, config: Config, region: str, stamp: str
          ) -> dict[str, str]:
    signer = SigV4(region, "s3", sign_payload=payload_signing(config))
    return signer.headers(method, url, headers, body, access_key=credentials.access_key,
                          secret_key=credentials.secret_key, token=credentials.token,
                          checksum_header=CHECKSUM if method == "PUT" else None,
                          timestamp=stamp)


def _same(method: str, url: str, headers: dict[str, str], body: bytes | None, *,
          token: str | None = None, config: Config | None = None,
          region: str = "us-east-1") -> dict[str, str]:
    credentials = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token)
    config = config or Config()
    theirs = _botocore(method, url, headers, body, credentials, config, region)
    ours = _ours(method, url, headers, body, credentials, config, region,
                 theirs["X-Amz-Date"])
    assert ours == theirs
    return ours


def test_a_get_with_range_condition_and_version() -> None:
    signed = _same(
        "GET", "http://127.0.0.1:5000/bucket/dir/a%20b.txt?versionId=3%2Fx",
        {"host": "127.0.0.1:5000", "Range": "bytes=0-99", "If-Match": '"abc"',
         "x-amz-checksum-mode": "ENABLED", "User-Agent": "not signed"}, None)
    assert signed["X-Amz-Content-SHA256"] == EMPTY_SHA256
    assert "SignedHeaders=host;if-match;range;x-amz-checksum-mode;x-amz-content-sha256;" \
           "x-amz-date," in signed["Authorization"]


def test_a_put_over_http_signs_its_payload_and_over_https_with_a_checksum_not() -> None:
    headers = {"host": "bucket.s3.amazonaws.com", "If-None-Match": "*",
               "x-amz-meta-fsseam-owner": "%C3%A9t%C3%A9", CHECKSUM: "AAAAAA=="}
    plain = _same("PUT", "http://bucket.s3.amazonaws.com/k", headers, b"data\n")
    assert plain["X-Amz-Content-SHA256"] not in (EMPTY_SHA256, UNSIGNED_PAYLOAD)
    secure = _same("PUT", "https://bucket.s3.amazonaws.com/k", headers, b"data\n")
    assert secure["X-Amz-Content-SHA256"] == UNSIGNED_PAYLOAD
    without = {k: v for k, v in headers.items() if k != CHECKSUM}
    assert _same("PUT", "https://bucket.s3.amazonaws.com/k", without, b"data\n")[
        "X-Amz-Content-SHA256"] not in (EMPTY_SHA256, UNSIGNED_PAYLOAD)


def test_the_config_decides_payload_signing_first() -> None:
    headers = {"host": "b.s3.eu-west-1.amazonaws.com", CHECKSUM: "AAAAAA=="}
    on = Config(s3={"payload_signing_enabled": True})
    off = Config(s3={"payload_signing_enabled": False})
    assert _same("PUT", "https://b.s3.eu-west-1.amazonaws.com/k", headers, b"x", config=on,
                 region="eu-west-1")["X-Amz-Content-SHA256"] != UNSIGNED_PAYLOAD
    assert _same("PUT", "http://b.s3.eu-west-1.amazonaws.com/k", headers, b"x", config=off,
                 region="eu-west-1")["X-Amz-Content-SHA256"] == UNSIGNED_PAYLOAD


def test_a_session_token_is_sent_and_signed() -> None:
    signed = _same("HEAD", "https://s3.amazonaws.com/bucket/k", {"host": "s3.amazonaws.com"},
                   None, token="FwoGZXIvYXdzEXAMPLE//token")
    assert signed["X-Amz-Security-Token"] == "FwoGZXIvYXdzEXAMPLE//token"
    assert "x-amz-security-token" in signed["Authorization"]


def test_the_signing_key_follows_the_secret_and_the_day() -> None:
    """The key kept for a day is not used for another secret or another day."""
    signer = SigV4("us-east-1", "s3")
    common: dict[str, Any] = {"access_key": "A", "timestamp": "20261206T101010Z"}
    headers = {"host": "h"}
    first = signer.headers("GET", "http://h/b/k", headers, None, secret_key="s1", **common)
    other = signer.headers("GET", "http://h/b/k", headers, None, secret_key="s2", **common)
    again = signer.headers("GET", "http://h/b/k", headers, None, secret_key="s1", **common)
    later = signer.headers("GET", "http://h/b/k", headers, None, secret_key="s1",
                           access_key="A", timestamp="20261207T101010Z")
    assert first == again
    assert len({first["Authorization"], other["Authorization"],
                later["Authorization"]}) == 3
    assert later == SigV4("us-east-1", "s3").headers(
        "GET", "http://h/b/k", headers, None, secret_key="s1", access_key="A",
        timestamp="20261207T101010Z")


_text = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=12)
_segment = st.text("abcXYZ09-_.~%20", min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(
    method=st.sampled_from(["GET", "HEAD", "PUT"]),
    scheme=st.sampled_from(["http", "https"]),
    path=st.lists(_segment, min_size=1, max_size=4).map("/".join),
    query=st.dictionaries(st.sampled_from(["versionId", "partNumber", "x-id"]), _segment,
                          max_size=2),
    extra=st.dictionaries(
        st.sampled_from(["Range", "If-Match", "If-None-Match", "x-amz-meta-a",
                         "x-amz-meta-B", "Content-Type", "User-Agent", "Expect"]),
        _text.map(lambda v: f" {v}  {v} "), max_size=4),
    body=st.one_of(st.none(), st.binary(max_size=40)),
    checksum=st.booleans(),
    token=st.one_of(st.none(), st.just("tok")),
)
def test_any_request_is_signed_as_botocore_signs_it(
    method: str, scheme: str, path: str, query: dict[str, str], extra: dict[str, str],
    body: bytes | None, checksum: bool, token: str | None,
) -> None:
    url = f"{scheme}://127.0.0.1:9000/bucket/{path}"
    if query:
        url += "?" + "&".join(f"{k}={v}" for k, v in query.items())
    headers = {"host": "127.0.0.1:9000", **extra}
    if checksum:
        headers[CHECKSUM] = "AAAAAA=="
    _same(method, url, headers, body if method == "PUT" else None, token=token)
