"""The S3 requests of the object-store template, through s3fs's raw client.

GetObject, HeadObject and a single PutObject go from the calling thread
(:class:`~fsseam_s3.transport.DirectS3`: the request botocore would send, without the
event loop's round trip and aiobotocore's pipeline) when the client allows it; everything
else, and every request of a client that transport cannot speak for, goes through
``fs._call_s3``, not s3fs's file API: ``cat_file`` and
``open("rb")`` cost a HEAD before the GET and return no ETag, and ``pipe_file`` drops
``IfMatch`` on its multipart path. ``_call_s3`` still gives s3fs's credentials, session,
endpoint handling and retries. Exceptions are raised unchanged for ``errors.S3ErrorMapper``.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from functools import partial
from typing import Any, ClassVar, TypeVar
from urllib.parse import quote, unquote

from botocore.exceptions import ClientError

from fsseam.backends.base import VersionInfo
from fsseam.backends.objectstore import (
    MAX_VERSIONS_LISTED,
    OWNER_KEY,
    WRITE_ID_KEY,
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
from fsseam.versions import Version

from ._moto import mock_active
from .errors import is_conditional_conflict
from .transport import DirectS3, Unsendable

__all__ = [
    "DEFAULT_MULTIPART_THRESHOLD",
    "DEFAULT_PART_SIZE",
    "MAX_PART_COUNT",
    "MAX_PUT_SIZE",
    "MIN_PART_SIZE",
    "S3Client",
]

MiB = 1 << 20
MAX_PUT_SIZE = 5 * 1024 * MiB
"""S3's limit for one PutObject (and for one CopyObject)."""
MIN_PART_SIZE = 5 * MiB
"""S3's smallest part (all but the last)."""
MAX_PART_COUNT = 10_000
DEFAULT_MULTIPART_THRESHOLD = 64 * MiB
"""Below this one PutObject: a single request is atomic with its condition and needs no
cleanup; above it a failed network request would resend too much at once."""
DEFAULT_PART_SIZE = 16 * MiB
_PART_CONCURRENCY = 4
PAGE = 1000
"""The most keys one ListObjectVersions answer holds (S3's own cap)."""

T = TypeVar("T")


def _watch(client: Any) -> bool:
    """Count the sends of an aiobotocore client's aiohttp sessions (made by its first
    request; a move has read before it deletes): False when there are none to watch."""
    sessions = getattr(getattr(getattr(client, "_endpoint", None), "http_session", None),
                       "_sessions", None)
    if not isinstance(sessions, dict) or not sessions:
        return False
    return all(watch(session) for session in sessions.values())


def _conflict_wait(attempt: int) -> float:
    """Seconds before retry ``attempt`` of a 409 ConditionalRequestConflict: bounded,
    exponential, jittered."""
    return min(0.05 * 2.0**attempt, 1.0) * (0.5 + random.random())


def _version(resp: dict[str, Any]) -> Version:
    etag = resp.get("ETag")
    if not etag:
        raise NoVersion("ETag")
    version_id = resp.get("VersionId")
    return Version(kind="etag", value=str(etag), detail=str(version_id) if version_id else None)


def total_size(resp: dict[str, Any]) -> int:
    """The object's full size: Content-Range's total for a 206, else Content-Length."""
    content_range = resp.get("ContentRange")
    if isinstance(content_range, str) and "/" in content_range:
        total = content_range.rsplit("/", 1)[1]
        if total.isdigit():
            return int(total)
    return int(resp.get("ContentLength") or 0)


MAX_OWNER_CHARS = 128
"""An owner is stored percent-encoded (S3 metadata travels in HTTP headers, which carry
ASCII only) and cut to this many characters, so all of an object's user metadata stays far
below S3's 2 KB limit whatever the owner's script."""


def _owner_value(owner: str) -> str:
    return quote(owner[:MAX_OWNER_CHARS], safe="")


def _owner_of(resp: dict[str, Any]) -> str | None:
    value = (resp.get("Metadata") or {}).get(OWNER_KEY)
    return unquote(value) if isinstance(value, str) else None


def _no_such_version(name: str, version: Version) -> ClientError:
    return ClientError(
        {
            "Error": {"Code": "NoSuchVersion", "Message": f"no version of {name} has {version}"},
            "ResponseMetadata": {"HTTPStatusCode": 404},
        },
        "GetObject",
    )


class S3Client(ObjectClient):
    """One bucket of one ``s3fs.S3FileSystem``."""

    version_kind: ClassVar[str] = "etag"
    silent_delete_of_missing: ClassVar[bool] = True
    keeps_owner: ClassVar[bool] = True
    lists_after: ClassVar[bool] = True

    def __init__(
        self,
        fs: Any,
        bucket: str,
        *,
        multipart_threshold: int = DEFAULT_MULTIPART_THRESHOLD,
        multipart_part_size: int = DEFAULT_PART_SIZE,
        conflict_retries: int = 5,
        direct_requests: bool = True,
    ) -> None:
        self.fs = fs
        self.bucket = bucket
        self.multipart_threshold = multipart_threshold
        self.multipart_part_size = multipart_part_size
        self.conflict_retries = conflict_retries
        self._run = SyncBridge(fs)
        self._transport: DirectS3 | None = None
        self._resolved = not direct_requests  # off: never looked for, always None

    # -- plumbing ----------------------------------------------------------------
    async def _call(self, method: str, **kwargs: Any) -> dict[str, Any]:
        resp: dict[str, Any] = await self.fs._call_s3(method, Bucket=self.bucket, **kwargs)
        return resp

    async def _retrying_conflicts(self, request: Callable[[], Awaitable[T]]) -> T:
        """A conditional request, retrying S3's 409 ConditionalRequestConflict (another
        conditional request to the key was in flight) with bounded, jittered backoff."""
        attempt = 0
        while True:
            try:
                return await request()
            except Exception as e:
                if attempt >= self.conflict_retries or not is_conditional_conflict(e):
                    raise
            await asyncio.sleep(_conflict_wait(attempt))
            attempt += 1

    def _retrying_conflicts_here(self, request: Callable[[], T]) -> T:
        """:meth:`_retrying_conflicts` of a request sent from the calling thread."""
        attempt = 0
        while True:
            try:
                return request()
            except Exception as e:
                if attempt >= self.conflict_retries or not is_conditional_conflict(e):
                    raise
            time.sleep(_conflict_wait(attempt))
            attempt += 1

    def _direct(self) -> DirectS3 | None:
        """The transport sending from the calling thread, when it may send this request:
        made for the filesystem's client of the moment (once, and again when s3fs made a
        new one), never while moto's in-process mock answers instead of the network, and
        no more once botocore redirected a request of it to another region."""
        direct = self._transport
        if not self._resolved or (direct is not None and self.fs.s3 is not direct.client):
            try:
                direct = self._run(DirectS3.resolve, self.fs, self.bucket)
            except Exception:
                direct = None  # the loop's path raises whatever made this fail, mapped
            self._transport, self._resolved = direct, True
        return None if direct is None or mock_active() else direct

    async def _get(self, **kwargs: Any) -> ObjectData:
        resp = await self._call("get_object", **kwargs)
        body = resp.pop("Body")
        async with body:
            data: bytes = await body.read()
        return ObjectData(data=data, version=_version(resp), size=total_size(resp))

    # -- the client contract ---------------------------------------------------
    def get(
        self,
        name: str,
        *,
        start: int | None = None,
        end: int | None = None,
        pin: Version | None = None,
        version: Version | None = None,
    ) -> ObjectData:
        kwargs: dict[str, Any] = {"Key": name}
        if start is not None:
            kwargs["Range"] = f"bytes={start}-{(end or 0) - 1}"
        if pin is not None:
            kwargs["IfMatch"] = pin.value
        if version is not None:
            kwargs["VersionId"] = version.detail or self._version_id(name, version)
        direct = self._direct()
        if direct is not None:
            headers = {"Range": kwargs["Range"]} if "Range" in kwargs else {}
            if pin is not None:
                headers["If-Match"] = pin.value
            try:
                resp = direct.get(name, headers, kwargs.get("VersionId"))
            except Unsendable:
                self._transport = None
            else:
                return ObjectData(data=resp["Body"], version=_version(resp),
                                  size=total_size(resp))
        return self._run(self._get, **kwargs)

    def start_get(self, name: str) -> Future[ObjectData]:
        return self._run.start(partial(self._get, Key=name))

    def _version_id(self, name: str, version: Version) -> str:
        """The VersionId of a version known only by its ETag: the newest one with it."""
        for kept in self.list_versions(name, None):
            if kept.version == version and kept.version.detail and not kept.deleted:
                return kept.version.detail
        raise _no_such_version(name, version)

    def head(self, name: str, *, version: Version | None = None) -> ObjectHead:
        kwargs: dict[str, Any] = {"Key": name}
        if version is not None:
            kwargs["VersionId"] = version.detail or self._version_id(name, version)
        resp = self._head(kwargs)
        return ObjectHead(
            version=_version(resp),
            size=int(resp.get("ContentLength") or 0),
            write_id=(resp.get("Metadata") or {}).get(WRITE_ID_KEY),
            owner=_owner_of(resp),
        )

    def _head(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        direct = self._direct()
        if direct is not None:
            try:
                return direct.head(kwargs["Key"], kwargs.get("VersionId"))
            except Unsendable:
                self._transport = None
        resp: dict[str, Any] = self._run(self._call, "head_object", **kwargs)
        return resp

    def put(
        self,
        name: str,
        data: bytes,
        *,
        if_match: Version | None,
        if_absent: bool,
        write_id: str,
        owner: str | None = None,
    ) -> Version:
        condition: dict[str, str] = {}
        if if_absent:
            condition["IfNoneMatch"] = "*"
        if if_match is not None:
            condition["IfMatch"] = if_match.value
        meta = {WRITE_ID_KEY: write_id}
        if owner is not None:
            meta[OWNER_KEY] = _owner_value(owner)
        direct = self._direct() if len(data) <= self.multipart_threshold else None
        if direct is not None:
            headers = {("If-None-Match" if k == "IfNoneMatch" else "If-Match"): v
                       for k, v in condition.items()}
            try:
                return _version(self._retrying_conflicts_here(
                    partial(direct.put, name, data, headers, meta)))
            except Unsendable:
                self._transport = None
        if len(data) <= self.multipart_threshold:

            async def upload() -> dict[str, Any]:
                return await self._call(
                    "put_object", Key=name, Body=data, Metadata=meta, **condition
                )
        else:

            async def upload() -> dict[str, Any]:
                return await self._multipart(name, data, condition, meta)

        return _version(self._run(self._retrying_conflicts, upload))

    async def _multipart(
        self, name: str, data: bytes, condition: dict[str, str], meta: dict[str, str]
    ) -> dict[str, Any]:
        """Parts in parallel, then CompleteMultipartUpload with the condition: the object
        appears (or the 412 comes) only at that last request, so a conflict or a crash
        before it leaves the old bytes in place. The upload is aborted on any failure."""
        part_size = max(self.multipart_part_size, -(-len(data) // MAX_PART_COUNT))
        created = await self._call("create_multipart_upload", Key=name, Metadata=meta)
        upload_id = created["UploadId"]
        limit = asyncio.Semaphore(_PART_CONCURRENCY)

        async def part(number: int, offset: int) -> dict[str, Any]:
            async with limit:
                resp = await self._call(
                    "upload_part",
                    Key=name,
                    UploadId=upload_id,
                    PartNumber=number,
                    Body=data[offset : offset + part_size],
                )
            return {"PartNumber": number, "ETag": resp["ETag"]}

        try:
            parts = await asyncio.gather(
                *(
                    part(i, offset)
                    for i, offset in enumerate(range(0, len(data), part_size), start=1)
                )
            )
            return await self._call(
                "complete_multipart_upload",
                Key=name,
                UploadId=upload_id,
                MultipartUpload={"Parts": list(parts)},
                **condition,
            )
        except BaseException:
            # The original failure is what the caller needs; a failed abort only leaves
            # parts for the bucket's lifecycle rule to expire.
            with contextlib.suppress(Exception):
                await self._call("abort_multipart_upload", Key=name, UploadId=upload_id)
            raise

    def delete(self, name: str, *, if_match: Version | None) -> None:
        condition = {} if if_match is None else {"IfMatch": if_match.value}

        async def delete() -> dict[str, Any]:
            return await self._call("delete_object", Key=name, **condition)

        self._run(self._retrying_conflicts, delete)

    def delete_telling_resends(self, name: str, *, if_match: Version | None) -> None:
        """``delete``, raising :class:`Resent` when its failure answered a request sent more
        than once (by aiohttp, botocore or s3fs, after an earlier answer was lost), or when
        the sends cannot be counted."""
        condition = {} if if_match is None else {"IfMatch": if_match.value}

        async def delete() -> dict[str, Any]:
            await self.fs.set_session()
            watched = _watch(await self.fs.get_s3(self.bucket))
            # Counted per attempt of the 409 loop: a ConditionalRequestConflict is S3
            # deciding not to act, so a resend after it is no ambiguity.
            with counting() as sends:
                try:
                    return await self._call("delete_object", Key=name, **condition)
                except Exception as e:
                    if not watched or sends[0] != 1:
                        raise Resent(sends[0] if watched else 0) from e
                    raise

        self._run(self._retrying_conflicts, delete)

    def copy(
        self, source: str, target: str, *, source_match: Version | None, write_id: str
    ) -> Version:
        condition: dict[str, str] = {"IfNoneMatch": "*"}
        if source_match is not None:
            condition["CopySourceIfMatch"] = source_match.value

        async def copy() -> dict[str, Any]:
            return await self._call(
                "copy_object",
                Key=target,
                CopySource={"Bucket": self.bucket, "Key": source},
                # REPLACE: the copy names itself with its own write id, not the source's.
                MetadataDirective="REPLACE",
                Metadata={WRITE_ID_KEY: write_id},
                **condition,
            )

        resp = self._run(self._retrying_conflicts, copy)
        result = dict(resp.get("CopyObjectResult") or {})
        result["VersionId"] = resp.get("VersionId")
        return _version(result)

    def list_objects(
        self,
        prefix: str,
        *,
        delimiter: str | None,
        token: str | None = None,
        limit: int | None = None,
    ) -> ListPage:
        kwargs: dict[str, Any] = {"Prefix": prefix}
        if delimiter is not None:
            kwargs["Delimiter"] = delimiter
        return self._list(kwargs, token, limit)

    def list_objects_after(
        self,
        prefix: str,
        *,
        after: str,
        end: str | None,
        token: str | None = None,
        limit: int | None = None,
    ) -> ListPage:
        # StartAfter is exclusive, and S3 has no upper bound: the caller stops at ``end``
        # (a page past it costs at most its own transfer). With a token it is ignored.
        return self._list({"Prefix": prefix, "StartAfter": after}, token, limit)

    def _list(self, kwargs: dict[str, Any], token: str | None, limit: int | None
              ) -> ListPage:
        if token is not None:
            kwargs["ContinuationToken"] = token
        if limit is not None:
            kwargs["MaxKeys"] = limit
        resp = self._run(self._call, "list_objects_v2", **kwargs)
        truncated = resp.get("IsTruncated") and resp.get("NextContinuationToken")
        return ListPage(
            objects=[
                # ListObjectsV2 gives the ETag a GET returns, quoted the same way (a
                # multipart upload's "<md5>-<parts>" too).
                ListedObject(str(c["Key"]), int(c.get("Size") or 0),
                             Version(kind="etag", value=str(c["ETag"])) if c.get("ETag")
                             else None)
                for c in resp.get("Contents") or []
            ],
            prefixes=[str(p["Prefix"]) for p in resp.get("CommonPrefixes") or []],
            next_token=str(resp["NextContinuationToken"]) if truncated else None,
        )

    def list_versions(self, name: str, limit: int | None) -> list[VersionInfo]:
        wanted = MAX_VERSIONS_LISTED if limit is None else limit
        kwargs: dict[str, Any] = {"Prefix": name}
        kept: list[tuple[Any, int, VersionInfo]] = []
        # botocore parses versions and delete markers into two lists, each newest first;
        # they are merged by time (the order within each list, counted across pages,
        # breaks ties).
        orders = [0, 0]
        while True:
            kwargs["MaxKeys"] = min(PAGE, wanted - len(kept))
            resp = self._run(self._call, "list_object_versions", **kwargs)
            for which, (field, deleted) in enumerate(
                    (("Versions", False), ("DeleteMarkers", True))):
                for item in resp.get(field) or []:
                    orders[which] += 1
                    if item.get("Key") == name:
                        kept.append((item.get("LastModified"), -orders[which],
                                     _info(item, deleted=deleted)))
            # Keys come in order, and ``name`` is the first with itself as prefix: once
            # the listing moves past it, what follows is other keys' versions.
            if (not resp.get("IsTruncated") or len(kept) >= wanted
                    or resp.get("NextKeyMarker") != name):
                break
            kwargs["KeyMarker"] = name
            kwargs["VersionIdMarker"] = resp.get("NextVersionIdMarker")
        kept.sort(key=lambda k: (k[2].latest, k[0], k[1]), reverse=True)
        return [info for _, _, info in kept[:wanted]]

    def version_of_id(self, version_id: str) -> Version | None:
        # "null" names the version written while versioning was off: not an id of one
        # kept version to read by, and what history shows for it is its ETag instead.
        if not version_id or version_id == "null":
            return None
        return Version(kind="etag", value="", detail=version_id)

    def keeps_versions(self) -> bool:
        resp = self._run(self._call, "get_bucket_versioning")
        return resp.get("Status") == "Enabled"


def _info(item: dict[str, Any], *, deleted: bool) -> VersionInfo:
    etag = item.get("ETag")
    return VersionInfo(
        version=Version(
            kind="etag", value=str(etag) if etag else "", detail=str(item.get("VersionId"))
        ),
        size=None if deleted else int(item.get("Size") or 0),
        modified=item.get("LastModified"),
        latest=bool(item.get("IsLatest")),
        deleted=deleted,
    )
