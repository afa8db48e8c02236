"""Credentials and permissions Azurite refuses: errors that say what to do next (the shared
:class:`~fsseam.testing.stores.CredentialsSuite`). Azurite checks Shared Key signatures
(a wrong account key is refused) and the permissions of a SAS (a read-only SAS may not
write)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from azure.storage.blob import ContainerSasPermissions, generate_container_sas

from fsseam import Workspace, open_backend
from fsseam.testing.azurite import ACCOUNT_KEY, ACCOUNT_NAME
from fsseam.testing.stores import CredentialsSuite, Refusal

CONFIGURE = ("storage_options", "AZURE_STORAGE_CONNECTION_STRING")


def _nothing_written(azurite: Any, container: str) -> None:
    assert azurite.filesystem().ls(container) == []


@pytest.fixture
def refused_credentials(azurite: Any, container: str) -> Refusal:
    """A connection string with a key that is not the account's."""
    wrong = azurite.connection_string.replace(ACCOUNT_KEY, "d3Jvbmc=" * 11)
    ws = Workspace(f"az://{container}/p", storage_options={"connection_string": wrong})
    return Refusal(says="Server failed to authenticate", hints=CONFIGURE, workspace=ws,
                   check=lambda: _nothing_written(azurite, container))


@pytest.fixture
def missing_permission(azurite: Any, container: str) -> Refusal:
    """A SAS that may read and list the container, not write to it."""
    sas = generate_container_sas(
        ACCOUNT_NAME, container, account_key=ACCOUNT_KEY,
        permission=ContainerSasPermissions(read=True, list=True),
        expiry=datetime.now(UTC) + timedelta(hours=1),
    )
    options = {"connection_string": f"BlobEndpoint={azurite.blob_endpoint};"
                                    f"SharedAccessSignature={sas}"}
    backend = open_backend(f"az://{container}/p", options)
    return Refusal(says="AuthorizationPermissionMismatch",
                   hints=("Storage Blob Data Contributor",), backend=backend,
                   ops=("write",), check=lambda: _nothing_written(azurite, container))


class TestCredentials(CredentialsSuite):
    pass
