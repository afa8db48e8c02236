"""Fixtures: one Azurite (blob service) for the session behind a counting proxy, a fresh
container per test.

Azurite is an npm package (``npm install --prefix .ci/node azurite@3``; the fixture runs
that itself when npm is on the machine and Azurite is not found);
``fsseam.testing.azurite`` starts it on 127.0.0.1 on a port the kernel picks, with its
output in a file, and stops it by PID at the end of the session.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# A core-only checkout (pip install -e ".[test]") has none of this directory's packages:
# every test module here is then reported as skipped, with the install command. (This
# conftest is loaded before collection, where pytest.importorskip would abort the run.)
NEEDED = ("fsseam_azure", "adlfs")
MISSING = [m for m in NEEDED if importlib.util.find_spec(m) is None]
if MISSING:
    REASON = f"{', '.join(MISSING)} not installed: pip install -e . -e 'backends/azure[test]'"

    class _Skipped(pytest.File):
        def collect(self) -> Iterator[pytest.Item]:
            raise pytest.skip.Exception(REASON, allow_module_level=True)

    def pytest_pycollect_makemodule(module_path: Path, parent: pytest.Collector) -> Any:
        return _Skipped.from_parent(parent, path=module_path)

HERE = Path(__file__).parent

# The SDK's single Put Blob hands aiohttp the blob as ``bytes`` (upload_blob reads any
# stream into bytes first), and aiohttp advises (ResourceWarning) a BytesIO above 1 MiB. It
# is advice to the SDK, on the filesystem's own event-loop thread; every other warning in
# these tests is still an error.
_SDK_RAW_BYTES = "ignore:Sending a large body directly with raw bytes:ResourceWarning"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.filterwarnings(_SDK_RAW_BYTES))


_STARTED = time.time()


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Say so when the Azure fixture installed Azurite during this run."""
    from fsseam.testing.azurite import say_installed

    say_installed(terminalreporter, _STARTED)


@pytest.fixture(scope="session")
def azurite(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Azurite's blob service behind a counting proxy (``fsseam.testing.azurite``); skips
    the test, with the install command, when Azurite (or Node.js) is missing."""
    from fsseam.testing.azurite import AzuriteNotFound, azurite_server, ensure_azurite

    try:
        ensure_azurite()  # installs it into .ci/node when npm is there (once)
    except AzuriteNotFound as e:
        pytest.skip(str(e))
    with azurite_server(tmp_path_factory.mktemp("azurite")) as endpoint:
        yield endpoint


@pytest.fixture
def container(azurite: Any) -> str:
    """A fresh, empty container for one test (made on the server directly: not counted)."""
    name: str = azurite.create_container()
    azurite.take()
    return name


@pytest.fixture
def az_options(azurite: Any) -> dict[str, Any]:
    """storage_options for Azurite (requests counted); each backend makes its own adlfs
    filesystem."""
    options: dict[str, Any] = azurite.storage_options()
    return options


@pytest.fixture
def requests(azurite: Any, container: str) -> Any:
    """Requests to this test's container, counted at the server (``take()``)."""
    from fsseam_azure.testing import ContainerRequests

    return ContainerRequests(azurite, container)


@pytest.fixture
def store(azurite: Any, container: str) -> Any:
    """The shared store suites' rig (fsseam.testing.stores): this test's container."""
    from fsseam_azure.testing import AzureRig

    return AzureRig(azurite, container)
