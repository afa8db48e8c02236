"""The shipped conformance suites against Azurite: under a prefix of a container, at the
container's root through abfs://, with the copy made by reading and creating, and with
versioning declared (which Azurite cannot keep)."""

from __future__ import annotations

from typing import Any

import pytest
from fsseam_azure import AzureBackend
from fsseam_azure.testing import EMULATOR_KEEPS_NO_VERSIONS

from fsseam import Workspace
from fsseam.backends import Backend, open_backend
from fsseam.testing import BackendConformance, ProcessConformance, ToolsConformance


class TestAzure(BackendConformance, ProcessConformance):
    # Azurite keeps no blob versions: history is FS_UNSUPPORTED, as on an account
    # without versioning.
    keeps_history = False

    @pytest.fixture
    def backend_spec(
        self, container: str, az_options: dict[str, Any]
    ) -> tuple[str, dict[str, Any]]:
        return (f"az://{container}/work/space", dict(az_options))

    @pytest.fixture
    def backend(self, backend_spec: tuple[str, dict[str, Any]]) -> Backend:
        b = open_backend(*backend_spec)
        assert isinstance(b, AzureBackend)
        assert b.root == backend_spec[0].removeprefix("az://")
        assert b.server_side_copy is True  # Azurite decides Copy Blob's conditions too
        # The suite's large object (8 MiB) stays below the block threshold: one Put Blob.
        assert BackendConformance.large_size < b.block_threshold
        return b


class TestAzureBlocksAtContainerRoot(BackendConformance):
    """The same suite at the container's root, through abfs://, with every write above
    64 KiB sent as staged blocks and one conditional Put Block List, and copies made by
    reading the source and creating the destination."""

    keeps_history = False
    large_size = 3 * (1 << 20) + 3

    @pytest.fixture
    def backend(self, container: str, az_options: dict[str, Any]) -> Backend:
        options = {
            **az_options,
            "block_threshold": 64 * 1024,
            "block_size": 256 * 1024,
            "server_side_copy": False,
        }
        b = open_backend(f"abfs://{container}", options)
        assert isinstance(b, AzureBackend)
        assert b.root == container
        assert b.capabilities.copy_create_only_atomic is False
        return b


class TestAzureVersioningDeclared(BackendConformance):
    """``versioning=True`` says the account keeps versions: what Azure then does, Azurite
    cannot (the history test is a strict xfail naming that); everything else still holds."""

    keeps_history = True

    @pytest.fixture
    def backend(self, container: str, az_options: dict[str, Any]) -> Backend:
        return open_backend(f"az://{container}/v", {**az_options, "versioning": True})

    @pytest.mark.xfail(strict=True, reason=EMULATOR_KEEPS_NO_VERSIONS)
    def test_history_kept_or_unsupported(self, backend: Backend) -> None:
        super().test_history_kept_or_unsupported(backend)


class TestAzureTools(ToolsConformance):
    @pytest.fixture
    def workspace(self, container: str, az_options: dict[str, Any]) -> Workspace:
        ws = Workspace(f"az://{container}/proj", storage_options=dict(az_options))
        assert isinstance(ws.backend, AzureBackend)
        return ws
