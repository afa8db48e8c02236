"""What is particular to Azure: URLs, options, credentials, the metadata name, ETag
spelling, leases, and the errors that say what to do next."""

from __future__ import annotations

from typing import Any

import pytest
from azure.storage.blob import BlobServiceClient
from fsseam_azure import WRITE_ID_KEY, AzureBackend
from fsseam_azure.backend import parse_url
from fsseam_azure.testing import fault_proxy

from fsseam import CreateOnly, ErrorCode, FsError, IfMatch, Overwrite, Workspace, open_backend
from fsseam.testing.azurite import ACCOUNT_KEY, ACCOUNT_NAME, connection_string


def _admin(azurite: Any, container: str) -> Any:
    """A sync ContainerClient straight to Azurite (not counted)."""
    svc = BlobServiceClient.from_connection_string(
        connection_string(f"{azurite.server_url}/{ACCOUNT_NAME}")
    )
    return svc.get_container_client(container)


@pytest.mark.parametrize(
    ("url", "parsed"),
    [
        ("az://c/p/q", ("az", "c/p/q", None)),
        ("abfs://c", ("abfs", "c", None)),
        ("abfss://c@acct.dfs.core.windows.net/p", ("abfss", "c/p", "acct")),
        ("az://c@acct.blob.core.windows.net", ("az", "c", "acct")),
    ],
)
def test_url_forms(url: str, parsed: tuple[str, str, str | None]) -> None:
    assert parse_url(url) == parsed


def test_workspace_picks_the_adapter_and_says_what_azure_decides(
    container: str, az_options: dict[str, Any]
) -> None:
    for scheme in ("az", "abfs"):
        ws = Workspace(f"{scheme}://{container}/p", storage_options=az_options)
        assert isinstance(ws.backend, AzureBackend)
        assert ws.backend.root == f"{container}/p"
        caps = ws.backend.capabilities
        assert (caps.create_only_atomic, caps.if_match_atomic, caps.delete_if_match_atomic,
                caps.copy_create_only_atomic, caps.history) == (True, True, True, True, True)
        assert caps.version_kind == "etag"


def test_a_url_without_a_container_is_invalid(az_options: dict[str, Any]) -> None:
    with pytest.raises(FsError) as info:
        open_backend("az://", az_options)
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "az://bucket/prefix" in info.value.message


@pytest.mark.parametrize(
    ("option", "value"), [("block_threshold", 0), ("block_threshold", (64 << 20) + 1),
                          ("block_size", 0)],
)
def test_block_options_out_of_range_are_refused(
    container: str, az_options: dict[str, Any], option: str, value: int
) -> None:
    with pytest.raises(FsError) as info:
        open_backend(f"az://{container}", {**az_options, option: value})
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert info.value.message.startswith(f"{option} must be between 1 and ")


def test_the_write_id_is_a_valid_azure_metadata_name(
    container: str, az_options: dict[str, Any], azurite: Any
) -> None:
    """Azure metadata names are C# identifiers: ``fsseam-write`` is refused (400
    InvalidMetadata, by Azurite too), so the write id goes under ``fsseam_write``."""
    assert WRITE_ID_KEY == "fsseam_write" and WRITE_ID_KEY.isidentifier()
    backend = open_backend(f"az://{container}/p", az_options)
    backend.write("a.txt", b"x", CreateOnly())
    backend.copy("a.txt", "b.txt")
    admin = _admin(azurite, container)
    ids = [admin.get_blob_client(n).get_blob_properties().metadata[WRITE_ID_KEY]
           for n in ("p/a.txt", "p/b.txt")]
    assert all(len(i) == 24 for i in ids) and ids[0] != ids[1]


def test_versions_from_listings_and_reads_are_spelled_alike(
    container: str, az_options: dict[str, Any]
) -> None:
    """Responses quote the ETag, listings do not: both become one quoted spelling."""
    backend = open_backend(f"az://{container}/p", {**az_options, "versioning": True})
    v = backend.write("a.txt", b"x", CreateOnly())
    assert v.value.startswith('"0x') and v.value.endswith('"')
    (listed,) = backend.versions("a.txt")
    assert listed.version == v == backend.read("a.txt").version
    assert listed.size == 1


def test_no_credentials_fail_when_the_workspace_is_made(
    monkeypatch: pytest.MonkeyPatch, container: str
) -> None:
    for name in ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME",
                 "AZURE_STORAGE_ACCOUNT_KEY", "AZURE_STORAGE_SAS_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(FsError) as info:
        Workspace(f"az://{container}/p")
    assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
    assert "no usable Azure credentials" in info.value.message
    assert "connection_string" in info.value.message


def test_a_wrong_account_key_is_permission_denied_saying_what_to_configure(
    azurite: Any, container: str
) -> None:
    wrong = ACCOUNT_KEY[:10] + ("A" if ACCOUNT_KEY[10] != "A" else "B") + ACCOUNT_KEY[11:]
    options = {"connection_string": connection_string(azurite.blob_endpoint).replace(
        ACCOUNT_KEY, wrong)}
    ctx = Workspace(f"az://{container}/p", storage_options=options).context("a")
    for tool, args in [("read", {"file_path": "/a.txt"}),
                       ("write", {"file_path": "/a.txt", "content": "x"})]:
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_PERMISSION_DENIED
        assert "did not accept the credentials" in res.text
        # Azure's code is AuthenticationFailed, Azurite's AuthorizationFailure; both say:
        assert "Server failed to authenticate the request" in res.text, res.text
        assert "connection_string" in res.text and "Retrying will not help" in res.text


def test_a_missing_permission_is_permission_denied_saying_what_to_grant(
    azurite: Any, container: str
) -> None:
    with fault_proxy(azurite) as proxy:
        proxy.inject("PUT", f"/{container}/p/a.txt", "403", 100)
        backend = open_backend(f"az://{container}/p", proxy.storage_options())
        with pytest.raises(FsError) as info:
            backend.write("a.txt", b"x", Overwrite())
        assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
        assert "AuthorizationPermissionMismatch" in info.value.message
        assert "Storage Blob Data Contributor" in info.value.message
        assert proxy.seen("PUT", f"/{container}/p/a.txt") == 1  # a 403 is not retried


def test_a_leased_blob_is_refused_and_kept(
    container: str, az_options: dict[str, Any], azurite: Any
) -> None:
    """A lease is another client's lock on the blob: a write without the lease id is
    refused (412 LeaseIdMissing), which is not a stale version."""
    backend = open_backend(f"az://{container}/p", az_options)
    v = backend.write("a.txt", b"mine", CreateOnly())
    lease = _admin(azurite, container).get_blob_client("p/a.txt").acquire_lease(15)
    try:
        with pytest.raises(FsError) as info:
            backend.write("a.txt", b"new", IfMatch(v))
        assert info.value.code is ErrorCode.FS_PERMISSION_DENIED
        assert "LeaseIdMissing" in info.value.message
        assert backend.read("a.txt").data == b"mine"
    finally:
        lease.release()
