"""History where the account keeps blob versions. Azurite keeps none (Azure/Azurite#665),
so the listing Azure gives such an account is injected at a proxy, in Azure's own XML
(List Blobs with ``include=versions``): the SDK parses it, the client orders it, and a read
of an older version asks Azure for that ``versionid``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fsseam_azure import AzureBackend
from fsseam_azure.testing import AzureFaultProxy, fault_proxy

from fsseam import CreateOnly, ErrorCode, FsError, Version, open_backend
from fsseam.testing.azurite import ACCOUNT_NAME

# Three versions of p/h.txt (oldest first) and one of another blob the prefix also matches.
VERSIONS = [
    ("p/h.txt", "2026-11-30T10:00:00.1000000Z", "0x8DC11110000000A", 3, False),
    ("p/h.txt", "2026-11-30T10:05:00.2000000Z", "0x8DC11110000000B", 5, False),
    ("p/h.txt", "2026-11-30T10:09:00.3000000Z", "0x8DC11110000000C", 4, True),
    ("p/h.txt.bak", "2026-11-30T10:01:00.0000000Z", "0x8DC11110000000D", 9, True),
]


def _listing(container: str, versions: list[tuple[str, str, str, int, bool]] = VERSIONS,
             marker: str = "") -> bytes:
    blobs = "".join(
        f"<Blob><Name>{name}</Name><VersionId>{vid}</VersionId>"
        + ("<IsCurrentVersion>true</IsCurrentVersion>" if current else "")
        + "<Properties><Creation-Time>Mon, 30 Nov 2026 10:00:00 GMT</Creation-Time>"
        f"<Last-Modified>Mon, 30 Nov 2026 10:0{i}:00 GMT</Last-Modified>"
        f"<Etag>{etag}</Etag><Content-Length>{size}</Content-Length>"
        "<Content-Type>application/octet-stream</Content-Type><BlobType>BlockBlob</BlobType>"
        "</Properties></Blob>"
        for i, (name, vid, etag, size, current) in enumerate(versions)
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        f'<EnumerationResults ServiceEndpoint="http://127.0.0.1/{ACCOUNT_NAME}/" '
        f'ContainerName="{container}"><Prefix>p/h.txt</Prefix><Blobs>{blobs}</Blobs>'
        + (f"<NextMarker>{marker}</NextMarker>" if marker else "<NextMarker />")
        + "</EnumerationResults>"
    ).encode()


@pytest.fixture
def proxy(azurite: Any, container: str) -> Iterator[AzureFaultProxy]:
    with fault_proxy(azurite) as p:
        body = _listing(container)
        p.error_body = lambda status, path: ("application/xml", body)
        yield p


def _backend(proxy: AzureFaultProxy, container: str) -> AzureBackend:
    b = open_backend(f"az://{container}/p", proxy.storage_options(versioning=True))
    assert isinstance(b, AzureBackend)
    return b


def test_versions_are_listed_newest_first_with_their_version_ids(
    proxy: AzureFaultProxy, container: str
) -> None:
    backend = _backend(proxy, container)
    proxy.inject("GET", f"/{container}", "200", 1, query="include=versions")

    kept = backend.versions("h.txt")

    assert [(k.version.value, k.version.detail, k.size, k.latest) for k in kept] == [
        ('"0x8DC11110000000C"', "2026-11-30T10:09:00.3000000Z", 4, True),
        ('"0x8DC11110000000B"', "2026-11-30T10:05:00.2000000Z", 5, False),
        ('"0x8DC11110000000A"', "2026-11-30T10:00:00.1000000Z", 3, False),
    ]
    assert [k.modified.minute for k in kept if k.modified] == [2, 1, 0]
    assert proxy.seen("GET", f"/{container}", "prefix=p/h.txt&include=versions") == 1


def test_an_older_version_is_read_by_its_version_id(proxy: AzureFaultProxy, container: str) -> None:
    backend = _backend(proxy, container)
    backend.write("h.txt", b"now", CreateOnly())
    path = f"/{ACCOUNT_NAME}/{container}/p/h.txt"
    with_id = Version(kind="etag", value='"0x8DC11110000000A"',
                      detail="2026-11-30T10:00:00.1000000Z")
    without_id = Version(kind="etag", value='"0x8DC11110000000B"')  # from a read, say

    backend.read_version("h.txt", with_id)
    proxy.inject("GET", f"/{container}", "200", 1, query="include=versions")
    backend.read_version("h.txt", without_id)

    # Azurite ignores versionid (and serves the current bytes): what is checked here is
    # that each read asked Azure for the right version, the second after one listing.
    assert proxy.seen("GET", path, "versionid=2026-11-30T10:00:00.1000000Z") == 1
    assert proxy.seen("GET", path, "versionid=2026-11-30T10:05:00.2000000Z") == 1
    assert proxy.seen("GET", f"/{container}", "include=versions") == 1


def test_a_version_no_listing_has_is_not_kept(proxy: AzureFaultProxy, container: str) -> None:
    backend = _backend(proxy, container)
    proxy.inject("GET", f"/{container}", "200", 1, query="include=versions")
    with pytest.raises(FsError) as info:
        backend.read_version("h.txt", Version(kind="etag", value='"0x8DC0000000000FF"'))
    assert info.value.code is ErrorCode.FS_NOT_FOUND
    assert "is not kept" in info.value.message
    assert proxy.seen("GET", f"/{ACCOUNT_NAME}/{container}/p/h.txt") == 0


def test_versions_on_later_listing_pages_are_listed_and_the_listing_stops_past_the_name(
    proxy: AzureFaultProxy, container: str
) -> None:
    """A listing of versions that continues on a second page (NextMarker): the versions
    there are listed too (only the first page was read before). The second page moves on to
    p/h.txt.bak, so no third page is asked for, though it says there is one."""
    pages = [_listing(container, VERSIONS[:2], marker="page-2"),
             _listing(container, VERSIONS[2:], marker="page-3")]
    proxy.error_body = lambda status, path: ("application/xml", pages.pop(0))
    backend = _backend(proxy, container)
    proxy.inject("GET", f"/{container}", "200", 2, query="include=versions")

    kept = backend.versions("h.txt")

    assert [k.version.detail for k in kept] == [
        "2026-11-30T10:09:00.3000000Z", "2026-11-30T10:05:00.2000000Z",
        "2026-11-30T10:00:00.1000000Z"]
    assert proxy.seen("GET", f"/{container}", "include=versions") == 2
    assert proxy.seen("GET", f"/{container}", "marker=page-2") == 1
    assert pages == []


def test_a_full_version_id_is_read_without_a_listing(proxy: AzureFaultProxy, container: str
                                                     ) -> None:
    backend = _backend(proxy, container)
    backend.write("h.txt", b"now", CreateOnly())
    blob = backend.read_version_id("h.txt", "2026-11-30T10:00:00.1000000Z")
    assert blob.data == b"now"  # Azurite serves the current bytes whatever the versionid
    path = f"/{ACCOUNT_NAME}/{container}/p/h.txt"
    assert proxy.seen("GET", path, "versionid=2026-11-30T10:00:00.1000000Z") == 1
    assert proxy.seen("GET", f"/{container}", "include=versions") == 0
    with pytest.raises(FsError) as info:
        backend.read_version_id("h.txt", "abc123")  # a prefix of an id, no id at all
    assert info.value.code is ErrorCode.FS_NOT_FOUND
