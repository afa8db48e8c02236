"""The Azure Blob requests of the object-store template, through azure-storage-blob.

adlfs makes the connection (credentials, account URL, the aio ``BlobServiceClient`` and the
event loop it runs on); every request here is the SDK's own conditional call on that
client's ``ContainerClient``, never adlfs's file API: ``cat_file`` asks for the blob's
properties before its bytes and returns no ETag, and ``pipe_file`` sends no condition.

    get        Get Blob (``download_blob``): bytes, ETag and size from one response;
               ``If-Match`` to pin a later range, ``versionid`` for an older version
    put        Put Blob (``upload_blob``) with ``If-Match`` / ``If-None-Match: *``; above
               ``block_threshold`` Put Block for each block, then Put Block List with the
               condition: the blob changes only at that last request
    delete     Delete Blob with ``If-Match``
    copy       Copy Blob (``start_copy_from_url``) with ``If-None-Match: *`` on the
               destination and ``x-ms-source-if-match`` on the source
    list       List Blobs, flat or with ``delimiter=/`` (``walk_blobs``), one page a call

``get``, ``head`` and a single Put Blob go from the calling thread
(:class:`~fsseam_azure.transport.AzureTransport`: the SDK's headers, signature, retry policy
and exceptions, without the pipeline and the hand-over to adlfs's event loop) when the
filesystem is one that transport can speak for (an account key or a SAS); everything else,
and every request of other filesystems, goes through the SDK.

Every method raises the SDK's exceptions unchanged (``azure.core.exceptions``);
``errors.AzureErrorMapper`` is the one place that classifies them. The SDK's retry policy
(``ExponentialRetry``: 3 retries after 5xx, 408 and connection errors) stays what it is.
"""

from __future__ import annotations

import asyncio
import base64
import re
import urllib.parse
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from azure.core import MatchConditions
from azure.core.exceptions import ResourceNotFoundError
from azure.storage.blob import BlobBlock

from fsseam.backends.base import VersionInfo
from fsseam.backends.objectstore import (
    MAX_VERSIONS_LISTED,
    ListedObject,
    ListPage,
    NoVersion,
    ObjectClient,
    ObjectData,
    ObjectHead,
    Resent,
    SyncBridge,
)
from fsseam.backends.objectstore.sends import counting, watch
from fsseam.messages import Reason, render
from fsseam.versions import Version

if TYPE_CHECKING:
    from .transport import AzureTransport

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "DEFAULT_BLOCK_THRESHOLD",
    "MAX_BLOCK_COUNT",
    "MAX_BLOCK_SIZE",
    "VERSION_KIND",
    "WRITE_ID_KEY",
    "AzureClient",
]

MiB = 1 << 20
DEFAULT_BLOCK_THRESHOLD = 64 * MiB
"""Up to this size one Put Blob; above it staged blocks and one Put Block List. It is also the
SDK's own limit for a single Put Blob (``max_single_put_size``): above it ``upload_blob``
splits the upload into blocks of its own (4 MiB each, ids it picks), so the blocks are
staged here instead, where their size, their ids and the commit's condition are ours."""
DEFAULT_BLOCK_SIZE = 16 * MiB
MAX_BLOCK_SIZE = 4000 * MiB
"""Azure's largest block (service version 2019-12-12 and later)."""
MAX_BLOCK_COUNT = 50_000
"""Azure's limit of committed blocks per blob."""
_STAGE_CONCURRENCY = 4
_COPY_POLL_SECONDS = (0.05, 0.1, 0.2, 0.5, 1.0)

VERSION_KIND = "etag"
WRITE_ID_KEY = "fsseam_write"
"""The blob metadata name that carries the write id. Azure metadata names must be C#
identifiers (Azurite refuses ``fsseam-write`` with 400 InvalidMetadata, as Azure does), so
the template's ``fsseam-write`` is spelled with an underscore here."""

T = TypeVar("T")

_RANGE_TOTAL = re.compile(r"/(\d+)\s*$")


def _version(etag: object, version_id: object = None) -> Version:
    # Responses quote the ETag ("0x8DC..."), listings do not (0x8DC...): one spelling, the
    # quoted one, which is what If-Match takes.
    bare = str(etag or "").strip('"')
    if not bare:
        raise NoVersion("ETag")
    return Version(
        kind=VERSION_KIND, value=f'"{bare}"', detail=str(version_id) if version_id else None
    )


def _range_total(content_range: str | None, fallback: int) -> int:
    """The blob's whole size: the total of ``Content-Range``, else the bytes received (an
    answer without a range)."""
    match = _RANGE_TOTAL.search(content_range or "")
    return int(match.group(1)) if match else fallback


def _total_size(properties: Any, fallback: int) -> int:
    """The blob's whole size from the SDK's downloader, which sets ``content_range`` on
    every download, ranged or not."""
    return _range_total(str(getattr(properties, "content_range", "") or ""), fallback)


def _direct_transport(fs: Any) -> AzureTransport | None:
    """The transport sending from the calling thread (:mod:`fsseam_azure.transport`), or
    None: a filesystem it cannot speak for, or an SDK that moved one of the private pieces
    the transport borrows (imported here, so such an SDK costs speed, not the backend)."""
    try:
        from . import transport
    except ImportError:
        return None
    return transport.AzureTransport(fs.service_client) if transport.usable(fs) else None


def _condition(if_match: Version | None, if_absent: bool) -> dict[str, Any]:
    """The SDK's keywords for ``If-Match: <etag>`` or ``If-None-Match: *``."""
    if if_absent:
        return {"match_condition": MatchConditions.IfMissing}
    if if_match is not None:
        return {"etag": if_match.value, "match_condition": MatchConditions.IfNotModified}
    return {}


def block_id(write_id: str, index: int) -> str:
    """The id of block ``index`` of one write: base64, the same length for every block of a
    blob (Azure's rule), and unique to the write, so two writers staging blocks for one blob
    at once never commit each other's."""
    return base64.b64encode(f"{write_id}-{index:06d}".encode()).decode()


def _watch_transport(client: Any) -> bool:
    """Count the sends of the aiohttp session under an SDK client's pipeline (the
    transport adlfs's service client opened for its first request, wrapped once per
    sub-client): False when there is none to watch."""
    transport = getattr(getattr(client, "_pipeline", None), "_transport", None)
    for _ in range(4):
        session = getattr(transport, "session", None)
        if session is not None:
            return watch(session)
        transport = getattr(transport, "_transport", None)
    return False


class AzureClient(ObjectClient):
    """One container of one ``adlfs.AzureBlobFileSystem``."""

    version_kind: ClassVar[str] = VERSION_KIND
    # Owners would need metadata on every listed version; Azure's history names no writer.
    keeps_owner: ClassVar[bool] = False

    def __init__(
        self,
        fs: Any,
        container: str,
        *,
        block_threshold: int = DEFAULT_BLOCK_THRESHOLD,
        block_size: int = DEFAULT_BLOCK_SIZE,
        versioning: bool | None = None,
    ) -> None:
        self.fs = fs
        self.bucket = container
        self.block_threshold = block_threshold
        self.block_size = block_size
        self.versioning = versioning
        self._run = SyncBridge(fs)
        # Shares adlfs's pipeline (credentials, retry policy, aiohttp session).
        self._container: Any = fs.service_client.get_container_client(container)
        self._direct = _direct_transport(fs)
        # The blob URL as BlobClient.url spells it, without making a BlobClient (its own
        # pipeline wrapper) for each request.
        base, _, sas = str(self._container.url).partition("?")
        self._container_url = base.rstrip("/")
        self._sas = f"?{sas}" if sas else ""

    # -- plumbing ----------------------------------------------------------------
    def _blob(self, name: str) -> Any:
        return self._container.get_blob_client(name)

    def _url(self, name: str) -> str:
        return f"{self._container_url}/{urllib.parse.quote(name, safe='~/')}{self._sas}"

    async def _download(self, name: str, **kwargs: Any) -> ObjectData:
        downloader = await self._blob(name).download_blob(max_concurrency=1, **kwargs)
        data: bytes = await downloader.readall()
        props = downloader.properties
        return ObjectData(data=data, version=_version(props.etag, props.version_id),
                          size=_total_size(props, len(data)))

    # -- reads -------------------------------------------------------------------
    def get(
        self,
        name: str,
        *,
        start: int | None = None,
        end: int | None = None,
        pin: Version | None = None,
        version: Version | None = None,
    ) -> ObjectData:
        version_id = None
        if version is not None:
            version_id = version.detail or self._version_id(name, version)
        if self._direct is not None:
            answer = self._direct.get(
                self._url(name), start=start, end=end,
                if_match=None if pin is None else pin.value, version_id=version_id)
            if answer is not None:  # None: encoded, the SDK decodes it
                headers = answer.headers
                return ObjectData(
                    data=answer.body,
                    version=_version(headers.get("etag"), headers.get("x-ms-version-id")),
                    size=_range_total(headers.get("content-range"), len(answer.body)))
        kwargs: dict[str, Any] = {}
        if start is not None:
            kwargs["offset"] = start
            if end is not None:
                kwargs["length"] = end - start
        if pin is not None:
            kwargs.update(_condition(pin, False))
        if version_id is not None:
            kwargs["version_id"] = version_id
        return self._run(self._download, name, **kwargs)

    def start_get(self, name: str) -> Future[ObjectData]:
        return self._run.start(self._download, name)

    def _version_id(self, name: str, version: Version) -> str:
        """The version id of a version known only by its ETag: the newest one with it."""
        for kept in self.list_versions(name, None):
            if kept.version == version and kept.version.detail:
                return kept.version.detail
        raise ResourceNotFoundError(f"no kept version of {name} has the ETag {version.value}")

    def head(self, name: str) -> ObjectHead:
        if self._direct is not None:
            headers = self._direct.head(self._url(name)).headers
            return ObjectHead(
                version=_version(headers.get("etag"), headers.get("x-ms-version-id")),
                size=int(headers.get("content-length") or 0),
                write_id=headers.get(f"x-ms-meta-{WRITE_ID_KEY}"),
            )
        props = self._run(self._blob(name).get_blob_properties)
        return ObjectHead(
            version=_version(props.etag, props.version_id),
            size=int(props.size or 0),
            write_id=(props.metadata or {}).get(WRITE_ID_KEY),
        )

    # -- writes ------------------------------------------------------------------
    def put(
        self,
        name: str,
        data: bytes,
        *,
        if_match: Version | None,
        if_absent: bool,
        write_id: str,
    ) -> Version:
        condition = _condition(if_match, if_absent)
        meta = {WRITE_ID_KEY: write_id}
        if len(data) <= self.block_threshold and self._direct is not None:
            headers = self._direct.put(
                self._url(name), data, if_match=None if if_match is None else if_match.value,
                if_absent=if_absent, metadata=meta).headers
            return _version(headers.get("etag"), headers.get("x-ms-version-id"))
        if len(data) <= self.block_threshold:
            resp = self._run(self._put_blob, name, data, meta, condition)
        else:
            resp = self._run(self._put_blocks, name, data, meta, condition, write_id)
        return _version(resp.get("etag"), resp.get("version_id"))

    async def _put_blob(
        self, name: str, data: bytes, meta: dict[str, str], condition: dict[str, Any]
    ) -> dict[str, Any]:
        # overwrite=True: the SDK would otherwise add If-None-Match: * of its own.
        resp: dict[str, Any] = await self._blob(name).upload_blob(
            data,
            blob_type="BlockBlob",
            length=len(data),
            overwrite=True,
            metadata=meta,
            max_concurrency=1,
            **condition,
        )
        return resp

    async def _put_blocks(
        self,
        name: str,
        data: bytes,
        meta: dict[str, str],
        condition: dict[str, Any],
        write_id: str,
    ) -> dict[str, Any]:
        """Blocks in parallel, then Put Block List with the condition: the blob changes (or
        the 412 comes) only at that last request, so a conflict or a crash before it leaves
        the old bytes. Staged blocks that are never committed need no cleanup: Azure drops
        them after a week, or at the blob's next commit."""
        size = max(self.block_size, -(-len(data) // MAX_BLOCK_COUNT))
        blob = self._blob(name)
        limit = asyncio.Semaphore(_STAGE_CONCURRENCY)
        view = memoryview(data)

        async def stage(index: int, offset: int) -> str:
            bid = block_id(write_id, index)
            chunk = bytes(view[offset : offset + size])
            async with limit:
                await blob.stage_block(bid, chunk, length=len(chunk))
            return bid

        ids = await asyncio.gather(
            *(stage(i, off) for i, off in enumerate(range(0, len(data), size)))
        )
        resp: dict[str, Any] = await blob.commit_block_list(
            [BlobBlock(block_id=bid) for bid in ids], metadata=meta, **condition
        )
        return resp

    def delete(self, name: str, *, if_match: Version | None) -> None:
        self._run(self._blob(name).delete_blob, **_condition(if_match, False))

    def delete_telling_resends(self, name: str, *, if_match: Version | None) -> None:
        """``delete``, raising :class:`Resent` when its failure answered a request sent more
        than once (by aiohttp or the SDK's retry policy, after an earlier answer was lost),
        or when the sends cannot be counted."""
        self._run(self._delete_counted, name, if_match)

    async def _delete_counted(self, name: str, if_match: Version | None) -> None:
        blob = self._blob(name)
        watched = _watch_transport(blob)
        with counting() as sends:
            try:
                await blob.delete_blob(**_condition(if_match, False))
            except Exception as e:
                if not watched or sends[0] != 1:
                    raise Resent(sends[0] if watched else 0) from e
                raise

    def copy(
        self, source: str, target: str, *, source_match: Version | None, write_id: str
    ) -> Version:
        """Copy Blob with ``If-None-Match: *`` (the target must not exist) and, with
        ``source_match``, ``x-ms-source-if-match``. A copy inside one account usually
        completes in the request; one still pending is waited for."""
        return self._run(self._copy, source, target, source_match, write_id)

    async def _copy(
        self, source: str, target: str, source_match: Version | None, write_id: str
    ) -> Version:
        kwargs: dict[str, Any] = {"match_condition": MatchConditions.IfMissing}
        if source_match is not None:
            kwargs["source_etag"] = source_match.value
            kwargs["source_match_condition"] = MatchConditions.IfNotModified
        blob = self._blob(target)
        # The target's own metadata: the copy names itself with its write id.
        resp: dict[str, Any] = await blob.start_copy_from_url(
            self._blob(source).url, metadata={WRITE_ID_KEY: write_id}, **kwargs
        )
        if resp.get("copy_status") in (None, "success"):
            return _version(resp.get("etag"), resp.get("version_id"))
        for delay in (*_COPY_POLL_SECONDS, *[1.0] * 600):
            await asyncio.sleep(delay)
            props = await blob.get_blob_properties()
            status = props.copy.status
            if status == "success":
                return _version(props.etag, props.version_id)
            if status != "pending":
                raise OSError(render(Reason.azure_copy_failed, details={
                    "status": status, "description": props.copy.status_description}))
        raise TimeoutError(render(Reason.azure_copy_pending, details={"source": source}))

    # -- listings ----------------------------------------------------------------
    def list_objects(
        self,
        prefix: str,
        *,
        delimiter: str | None,
        token: str | None = None,
        limit: int | None = None,
    ) -> ListPage:
        return self._run(self._list_page, prefix, delimiter, token, limit)

    async def _list_page(
        self, prefix: str, delimiter: str | None, token: str | None, limit: int | None
    ) -> ListPage:
        if delimiter is None:
            paged = self._container.list_blobs(
                name_starts_with=prefix or None, results_per_page=limit
            )
        else:
            paged = self._container.walk_blobs(
                name_starts_with=prefix or None, delimiter=delimiter, results_per_page=limit
            )
        pages = paged.by_page(continuation_token=token)
        objects: list[ListedObject] = []
        prefixes: list[str] = []
        try:
            page = await pages.__anext__()
        except StopAsyncIteration:
            return ListPage()
        async for item in page:
            # walk_blobs yields BlobPrefix items (a "directory", named with the delimiter)
            # beside BlobProperties; only blobs have a blob type.
            if getattr(item, "blob_type", None) is None:
                prefixes.append(str(item.name))
            else:
                # Listings give the ETag unquoted: _version quotes it as a read does.
                etag = getattr(item, "etag", None)
                objects.append(ListedObject(str(item.name), int(item.size or 0),
                                            _version(etag) if etag else None))
        return ListPage(objects, prefixes, pages.continuation_token or None)

    def list_versions(self, name: str, limit: int | None) -> list[VersionInfo]:
        # The listing holds every blob that starts with the name, in name order: pages are
        # followed until it moves past the name (up to MAX_VERSIONS_LISTED versions), then
        # the versions are sorted and the first ``limit`` kept.
        items = self._run(self._versions, name)
        items.sort(key=lambda item: str(item.version_id or ""), reverse=True)
        items = items[:MAX_VERSIONS_LISTED if limit is None else limit]
        return [
            VersionInfo(
                version=_version(item.etag, item.version_id),
                size=int(item.size or 0),
                modified=item.last_modified,
                # Azure keeps no deletion markers: a deleted blob's versions are all
                # noncurrent, and none is latest.
                latest=bool(item.is_current_version),
            )
            for item in items
        ]

    async def _versions(self, name: str) -> list[Any]:
        found: list[Any] = []
        paged = self._container.list_blobs(name_starts_with=name, include=["versions"])
        async for page in paged.by_page():
            past = False
            async for item in page:
                if item.name == name:
                    found.append(item)
                else:
                    past = True
            if past or len(found) >= MAX_VERSIONS_LISTED:
                break
        return found

    def version_of_id(self, version_id: str) -> Version | None:
        # A version id is the time the version was made (2024-01-02T03:04:05.1234567Z).
        if not version_id or not version_id[0].isdigit():
            return None
        return Version(kind=VERSION_KIND, value="", detail=version_id)

    def keeps_versions(self) -> bool | None:
        """Whether the account keeps blob versions. It is an account setting of Azure's
        management plane, not visible to the blob API, so it is read off the blobs: one
        listing page of the container with versions, where every blob written since
        versioning was enabled carries a version id. None when the container holds no blob
        yet (ask again later); ``versioning=`` says it outright."""
        if self.versioning is not None:
            return self.versioning
        return self._run(self._any_version_id)

    async def _any_version_id(self) -> bool | None:
        paged = self._container.list_blobs(include=["versions"], results_per_page=100)
        page = await paged.by_page().__anext__()
        seen = False
        async for item in page:
            if item.version_id:
                return True
            seen = True
        return False if seen else None

