"""One moto server for the session (loopback, free port), a fresh bucket per test.

The server itself comes from ``fsseam_s3.testing.moto_server`` (shared with the benchmark
and demos); this file only adapts it to pytest fixtures.

Most tests talk HTTP to a ``ThreadedMotoServer`` (test_s3_mock_aws.py covers moto's
in-process ``mock_aws``). Its WSGI app is wrapped to record every request, so request
counts are measured at the server, not inferred from client hooks.

The wrapper also runs one request at a time. moto checks ``If-Match``/``If-None-Match`` and
then stores the object in separate steps with no lock (moto 5.2.5, s3/responses.py), and a
concurrent overwrite can close the buffer of a key whose response is still being built
(500 ``I/O operation on closed file`` after the write landed; the client's retry then
gets 412 for its own write). Real S3 decides a conditional write atomically; serializing
requests gives the tests that S3 behaviour. It does not hide client-side races: a backend
that checked with one request and wrote with another would still lose updates here.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A core-only checkout (pip install -e ".[test]") has none of this directory's packages:
# every test module here is then reported as skipped, with the install command. (This
# conftest is loaded before collection, where pytest.importorskip would abort the run.)
NEEDED = ("fsseam_s3", "moto")
MISSING = [m for m in NEEDED if importlib.util.find_spec(m) is None]
if MISSING:
    REASON = f"{', '.join(MISSING)} not installed: pip install -e . -e 'backends/s3[test]'"

    class _Skipped(pytest.File):
        def collect(self) -> Iterator[pytest.Item]:
            raise pytest.skip.Exception(REASON, allow_module_level=True)

    def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Any:
        return _Skipped.from_parent(parent, path=module_path)
else:
    from fsseam_s3.testing import CREDENTIALS, MotoEndpoint, RequestLog, moto_server

__all__ = ["CREDENTIALS", "MotoEndpoint", "RequestLog"]


@pytest.fixture(scope="session")
def moto() -> Iterator[MotoEndpoint]:
    with moto_server(serialize=True) as endpoint:
        yield endpoint


@pytest.fixture
def s3_options(moto: MotoEndpoint) -> dict[str, Any]:
    """The convenience keys (endpoint_url, key, secret); the backend turns them into s3fs
    options."""
    return moto.storage_options()


@pytest.fixture
def s3(moto: MotoEndpoint) -> Any:
    """A boto3 client for arranging and inspecting state behind the backend's back."""
    return moto.client()


class DirectPuts:
    """``put_object`` straight into the moto backend the session's server serves (it runs
    in this process), with boto3's keyword names: for a test that arranges thousands of
    objects, which over HTTP, one request at a time, took most of that test's time. What
    the test measures still goes over HTTP."""

    def put_object(self, *, Bucket: str, Key: str, Body: bytes) -> dict[str, Any]:
        from moto.core import DEFAULT_ACCOUNT_ID
        from moto.s3.models import s3_backends

        stored = s3_backends[DEFAULT_ACCOUNT_ID]["aws"].put_object(Bucket, Key, Body)
        return {"VersionId": stored.version_id, "ETag": stored.etag}


@pytest.fixture
def s3_direct(moto: MotoEndpoint) -> DirectPuts:
    return DirectPuts()


@pytest.fixture
def bucket(s3: Any, moto: MotoEndpoint) -> str:
    return moto.create_bucket(client=s3)


@pytest.fixture
def versioned_bucket(s3: Any, moto: MotoEndpoint) -> str:
    return moto.create_bucket(versioned=True, client=s3)


@pytest.fixture
def store(moto: MotoEndpoint, bucket: str) -> Any:
    """The shared store suites' rig (fsseam.testing.stores): this test's bucket."""
    from fsseam_s3.testing import S3Rig

    moto.log.clear()
    return S3Rig(moto, bucket)
