"""AzureBackend: ETag versions and storage-side compare-and-swap on Azure Blob Storage.

The object-store template (``fsseam.backends.objectstore``) does the work; this module only
says what Azure guarantees and builds the client from a URL and storage options (adlfs makes
the connection: connection string, account key, SAS, or Entra ID through azure-identity).

Request budget (counted at a proxy in front of Azurite by tests/test_azure_requests.py):
  read    one Get Blob, which returns the bytes and their ETag together (through the SDK,
          whose first GET asks for a range, an empty blob takes two: Azure refuses that
          range with 416 and the SDK asks again without it)
  write   one Put Blob carrying If-Match / If-None-Match: *, for up to ``block_threshold``
          bytes (default 64 MiB); above it Put Block per block and Put Block List with the
          condition. A create (CreateOnly, Overwrite) first lists ``key/`` (and gets the
          properties of each parent): a path is a file or a directory.
  delete  one Delete Blob, with If-Match when a version is given
  copy    one listing of ``dst/`` and one Copy Blob with If-None-Match: * and
          x-ms-source-if-match
  walk    one List Blobs per 5,000 blobs (``list_page_size``)
"""

from __future__ import annotations

from typing import Any

from fsspec.core import split_protocol

from fsseam.backends.objectstore import (
    MAX_VERSIONS_LISTED,
    KeySpace,
    ObjectStoreBackend,
    StoreFacts,
    unusable_credentials,
)
from fsseam.errors import ErrorCode, FsError
from fsseam.messages import Reason

from .client import (
    DEFAULT_BLOCK_SIZE,
    DEFAULT_BLOCK_THRESHOLD,
    MAX_BLOCK_SIZE,
    VERSION_KIND,
    AzureClient,
)
from .errors import MAPPER

__all__ = ["BACKEND_OPTIONS", "AzureBackend", "parse_url"]

def parse_url(url: str) -> tuple[str, str, str | None]:
    """(scheme, ``container/prefix``, account or None) of ``az://container/prefix``,
    ``abfs://container/prefix`` or ``abfs[s]://container@account.dfs.core.windows.net/prefix``
    (the form Azure's own tools print)."""
    scheme, path = split_protocol(url)
    first, _, rest = path.strip("/").partition("/")
    account = None
    if "@" in first:
        first, _, host = first.partition("@")
        account = host.split(".", 1)[0] or None
    return scheme or "az", f"{first}/{rest}" if rest else first, account


def _in_range(name: str, value: int, low: int, high: int) -> None:
    if not low <= value <= high:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.limit_out_of_range,
            details={"arg": name, "low": low, "high": high, "value": value},
        )


class AzureBackend(ObjectStoreBackend):
    """A workspace rooted at ``container/prefix`` of an Azure storage account.

    ``server_side_copy`` (default true): copy with one Copy Blob carrying
    ``If-None-Match: *`` and ``x-ms-source-if-match``, which Azure (and Azurite) decide; set
    it false for credentials that cannot authorize a copy's source (a copy then reads the
    source and writes the destination create-only). ``versioning``: whether the account
    keeps blob versions (default: read off the first listing of versions).
    """

    facts = StoreFacts(
        version_kind=VERSION_KIND,
        note=(
            "Put Blob / Put Block List with If-None-Match: * (create-only) or If-Match: "
            "<ETag>, Delete Blob with If-Match, Copy Blob with If-None-Match: * and "
            "x-ms-source-if-match: decided by Azure in the request; history where the "
            "account keeps blob versions"
        ),
    )
    store_options = ("block_threshold", "block_size", "versioning")

    def __init__(
        self,
        fs: Any,
        root: str,
        *,
        block_threshold: int = DEFAULT_BLOCK_THRESHOLD,
        block_size: int = DEFAULT_BLOCK_SIZE,
        server_side_copy: bool = True,
        list_page_size: int | None = None,
        versioning: bool | None = None,
        max_versions_listed: int = MAX_VERSIONS_LISTED,
    ) -> None:
        keys = KeySpace.parse(root, "az")
        _in_range("block_threshold", block_threshold, 1, DEFAULT_BLOCK_THRESHOLD)
        _in_range("block_size", block_size, 1, MAX_BLOCK_SIZE)
        self.fs = fs
        self._azure = AzureClient(
            fs,
            keys.bucket,
            block_threshold=block_threshold,
            block_size=block_size,
            versioning=versioning,
        )
        super().__init__(
            self._azure,
            MAPPER,
            keys,
            server_side_copy=server_side_copy,
            list_page_size=list_page_size,
            max_versions_listed=max_versions_listed,
        )

    @property
    def container(self) -> str:
        return self.bucket

    @property
    def block_threshold(self) -> int:
        """Blobs larger than this go as staged blocks and one Put Block List."""
        return self._azure.block_threshold

    @property
    def block_size(self) -> int:
        return self._azure.block_size

    @classmethod
    def parse_url(cls, url: str) -> str:
        """``az://container/prefix`` (or ``abfs://``, ``abfss://``). ``storage_options`` go
        to ``adlfs.AzureBlobFileSystem`` (``connection_string``, ``account_name`` with
        ``account_key`` / ``sas_token`` / ``credential`` / ``anon``, ...), except the
        backend's options."""
        scheme, root, _ = parse_url(url)
        KeySpace.parse(root, scheme)  # a container is named before anything is built
        return root

    @classmethod
    def make_filesystem(cls, fs_options: dict[str, Any], url: str) -> Any:
        """An ``adlfs.AzureBlobFileSystem`` of its own (no instance cache: tests and users
        pass different accounts and credentials in one process). adlfs connects when it is
        made, so credentials it cannot use fail here, as a misconfigured workspace."""
        import adlfs  # imported here so that the registry can list the entry point cheaply

        account = parse_url(url)[2]
        if account is not None and "connection_string" not in fs_options:
            fs_options.setdefault("account_name", account)
        try:
            return adlfs.AzureBlobFileSystem(**fs_options, skip_instance_cache=True)
        except ValueError as e:
            raise unusable_credentials("Azure", e, MAPPER.configure) from e


BACKEND_OPTIONS = AzureBackend.backend_options()
"""Options read by AzureBackend itself; everything else goes to adlfs.AzureBlobFileSystem."""
