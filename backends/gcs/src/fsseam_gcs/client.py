"""The GCS JSON-API requests of the object-store template, sent through gcsfs's ``_call``.

Why not gcsfs's own methods: ``cat_file`` drops the response headers (so the generation
would cost a second request), ``pipe_file`` cannot send ``ifGenerationMatch=G``, and
``info``/``ls`` answer from a listings cache that can be stale. ``_call`` still gives us
gcsfs's auth, session, endpoint handling and retries of transient failures.

Every method here raises gcsfs's exceptions unchanged (404 -> FileNotFoundError,
412 -> FileExistsError, 403 -> OSError, others HttpError); ``errors.GcsErrorMapper`` is the
one place that classifies them.
"""

from __future__ import annotations

import contextlib
import io
import json as jsonlib
from concurrent.futures import Future
from typing import Any, ClassVar

from fsseam.backends.base import VersionInfo
from fsseam.backends.objectstore import (
    MAX_VERSIONS_LISTED,
    WRITE_ID_KEY,
    ListPage,
    ObjectClient,
    ObjectData,
    ObjectHead,
    Resent,
    SyncBridge,
)
from fsseam.backends.objectstore.sends import counting, watch
from fsseam.messages import Reason, render
from fsseam.versions import Version

from ._wire import (
    MAX_OWNER_CHARS,
    RESUMABLE_CHUNK,
    RESUMABLE_THRESHOLD,
    VERSION_KIND,
    Media,
    list_page_of,
    make_filesystem,
    media_of,
    object_data_of,
)
from ._wire import boundary_for as _boundary
from ._wire import header as _header
from ._wire import object_resource as _object_resource
from ._wire import owner_of as _owner_of
from ._wire import time_of as _time
from ._wire import version_of as _version
from .transport import DirectTransport, usable

__all__ = [
    "MAX_OWNER_CHARS",
    "RESUMABLE_CHUNK",
    "RESUMABLE_THRESHOLD",
    "VERSION_KIND",
    "GcsClient",
    "Media",
    "make_filesystem",
]


class GcsClient(ObjectClient):
    """Synchronous wrappers around ``fs._call`` for one bucket: the raw requests
    (``get_media``, ``upload_multipart``, ...) and, on top of them, the object-store client
    contract (``get``, ``put``, ``delete``, ``copy``, ...).

    Requests go from the calling thread (:class:`~fsseam_gcs.transport.DirectTransport`:
    gcsfs's URLs, headers, errors and retries, without handing each request to gcsfs's
    event loop and waiting for it), unless the filesystem is one that transport cannot
    speak for; then through ``fs._call`` on gcsfs's loop. There, request bodies go in as
    BytesIO: aiohttp warns (ResourceWarning) that a large raw ``bytes`` body may block its
    event loop, and gcsfs rewinds a seekable body before each retry, so a retried upload
    resends the same bytes. The reads a grep starts (``start_get``) and the deletes whose
    sends are counted stay on the loop: those need it.
    """

    version_kind: ClassVar[str] = VERSION_KIND
    keeps_owner: ClassVar[bool] = True
    lists_after: ClassVar[bool] = True

    def __init__(
        self, fs: Any, bucket: str, *, resumable_threshold: int = RESUMABLE_THRESHOLD
    ) -> None:
        self.fs = fs
        self.bucket = bucket
        self.resumable_threshold = resumable_threshold
        self._run = SyncBridge(fs)
        self._direct = DirectTransport(fs) if usable(fs) else None

    def _call(self, method: str, path: str, *args: Any, json_out: bool = False,
              data: bytes | memoryview | None = None, **kwargs: Any) -> Any:
        """``fs._call``'s answer: the parsed JSON with ``json_out``, else (headers, body)."""
        if self._direct is not None:
            headers, body = self._direct.call(method, path, *args, data=data, **kwargs)
            return jsonlib.loads(body) if json_out else (headers, body)
        return self._run(self.fs._call, method, path, *args, json_out=json_out,
                         data=None if data is None else io.BytesIO(data), **kwargs)

    @property
    def _location(self) -> str:
        return str(self.fs._location)

    # -- reads -----------------------------------------------------------------
    def get_media(
        self, name: str, *, start: int | None = None, end: int | None = None,
        generation: str | None = None,
    ) -> Media:
        """One media GET. ``end`` is exclusive. ``generation`` pins the object state: GCS
        answers 404 if that generation is no longer live."""
        if self._direct is None:
            media: Media = self._run(self._media, name, start, end, generation)
            return media
        headers = {} if start is None else {"Range": f"bytes={start}-{(end or 0) - 1}"}
        resp_headers, body = self._call(
            "GET", f"{self._location}/download/storage/v1/b/{{}}/o/{{}}", self.bucket, name,
            alt="media", generation=generation, headers=headers,
        )
        return media_of(resp_headers, body)

    async def _media(self, name: str, start: int | None, end: int | None,
                     generation: str | None) -> Media:
        headers = {} if start is None else {"Range": f"bytes={start}-{(end or 0) - 1}"}
        resp_headers, body = await self.fs._call(
            "GET",
            f"{self._location}/download/storage/v1/b/{{}}/o/{{}}",
            self.bucket,
            name,
            alt="media",
            generation=generation,
            headers=headers,
        )
        return media_of(resp_headers, body)

    def get_metadata(self, name: str, generation: str | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = self._call(
            "GET", "b/{}/o/{}", self.bucket, name, generation=generation, json_out=True
        )
        return meta

    def list_page(
        self, prefix: str, *, delimiter: str | None = "/", max_results: int | None = None,
        page_token: str | None = None, start: str | None = None, end: str | None = None,
    ) -> dict[str, Any]:
        page: dict[str, Any] = self._call(
            "GET",
            "b/{}/o",
            self.bucket,
            prefix=prefix or None,
            delimiter=delimiter,
            maxResults=max_results,
            pageToken=page_token,
            startOffset=start,
            endOffset=end,
            json_out=True,
        )
        return page

    # -- writes ----------------------------------------------------------------
    def upload_multipart(
        self, name: str, data: bytes, if_generation_match: str | None,
        write_id: str | None = None, owner: str | None = None,
    ) -> dict[str, Any]:
        """One ``uploadType=multipart`` POST: metadata and bytes in a single request, the
        precondition checked by the storage with the write."""
        boundary = _boundary(data)
        meta = jsonlib.dumps(_object_resource(name, write_id, owner))
        head = (
            f"--{boundary}\r\n"
            "Content-Type: application/json; charset=UTF-8\r\n\r\n"
            f"{meta}\r\n"
            f"--{boundary}\r\n"
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        body = b"".join((head, data, f"\r\n--{boundary}--\r\n".encode()))
        result: dict[str, Any] = self._call(
            "POST",
            f"{self._location}/upload/storage/v1/b/{{}}/o",
            self.bucket,
            uploadType="multipart",
            ifGenerationMatch=if_generation_match,
            headers={"Content-Type": f'multipart/related; boundary="{boundary}"'},
            data=body,
            json_out=True,
        )
        return result

    def upload_resumable(
        self, name: str, data: bytes, if_generation_match: str | None,
        write_id: str | None = None, owner: str | None = None,
    ) -> dict[str, Any]:
        """A resumable upload for objects too large for one request. The precondition goes
        on the initiation request; GCS checks it again when the upload is finalized."""
        headers, _ = self._call(
            "POST",
            f"{self._location}/upload/storage/v1/b/{{}}/o",
            self.bucket,
            uploadType="resumable",
            ifGenerationMatch=if_generation_match,
            json=_object_resource(name, write_id, owner),
            headers={"X-Upload-Content-Type": "application/octet-stream"},
        )
        location = _header(headers, "Location")
        if not location:
            raise OSError(render(Reason.gcs_upload_no_location))
        try:
            return self._send_chunks(location, data)
        except BaseException:
            self._cancel(location)
            raise

    def _send_chunks(self, location: str, data: bytes) -> dict[str, Any]:
        size = len(data)
        view = memoryview(data)
        offset = 0
        stalls = 0
        while True:
            end = min(offset + RESUMABLE_CHUNK, size)
            headers, body = self._call(
                "PUT",
                location,
                headers={
                    "Content-Range": f"bytes {offset}-{end - 1}/{size}",
                    "Content-Length": str(end - offset),
                    "Content-Type": "application/octet-stream",
                },
                data=view[offset:end],
            )
            if end == size and body:
                final: dict[str, Any] = jsonlib.loads(body)
                if "generation" in final:
                    return final
            # Intermediate answer (real GCS: 308): "Range: bytes=0-N" says what persisted;
            # no Range means nothing did. Resume from there.
            persisted = _header(headers, "Range")
            next_offset = int(persisted.rsplit("-", 1)[1]) + 1 if persisted else 0
            stalls = stalls + 1 if next_offset <= offset else 0
            if stalls >= 3:
                raise OSError(render(Reason.gcs_upload_stalled, details={"offset": offset}))
            offset = next_offset

    def _cancel(self, location: str) -> None:
        # Best effort: an abandoned session expires on its own after a week anyway.
        with contextlib.suppress(Exception):
            self._call("DELETE", location)

    def delete(self, name: str, *, if_match: Version | None = None) -> None:
        self._call(
            "DELETE",
            "b/{}/o/{}",
            self.bucket,
            name,
            ifGenerationMatch=None if if_match is None else if_match.value,
        )

    def delete_telling_resends(self, name: str, *, if_match: Version | None) -> None:
        """``delete``, raising :class:`Resent` when its failure answered a request sent more
        than once (by aiohttp or gcsfs, after an earlier answer was lost), or when the
        sends cannot be counted."""
        self._run(self._delete_counted, name, if_match)

    async def _delete_counted(self, name: str, if_match: Version | None) -> None:
        await self.fs._set_session()
        watched = watch(self.fs.session)
        generation = None if if_match is None else if_match.value
        with counting() as sends:
            try:
                await self.fs._call("DELETE", "b/{}/o/{}", self.bucket, name,
                                    ifGenerationMatch=generation)
            except Exception as e:
                if not watched or sends[0] != 1:
                    raise Resent(sends[0] if watched else 0) from e
                raise

    # -- the object-store client contract ----------------------------------------
    def get(
        self,
        name: str,
        *,
        start: int | None = None,
        end: int | None = None,
        pin: Version | None = None,
        version: Version | None = None,
    ) -> ObjectData:
        # generation=G answers 404 once G is no longer live (or, in a versioned bucket,
        # serves G itself): either way a pinned range never mixes two versions.
        wanted = pin or version
        media = self.get_media(
            name, start=start, end=end, generation=None if wanted is None else wanted.value
        )
        return object_data_of(media)

    def start_get(self, name: str) -> Future[ObjectData]:
        return self._run.start(self._whole, name)

    async def _whole(self, name: str) -> ObjectData:
        return object_data_of(await self._media(name, None, None, None))

    def head(self, name: str, *, version: Version | None = None) -> ObjectHead:
        meta = self.get_metadata(name, None if version is None else version.value)
        return ObjectHead(
            version=_version(meta.get("generation")),
            size=int(meta.get("size", 0)),
            write_id=(meta.get("metadata") or {}).get(WRITE_ID_KEY),
            owner=_owner_of(meta),
        )

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
        generation = "0" if if_absent else None if if_match is None else if_match.value
        if len(data) > self.resumable_threshold:
            result = self.upload_resumable(name, data, generation, write_id, owner)
        else:
            result = self.upload_multipart(name, data, generation, write_id, owner)
        return _version(result.get("generation"))

    def copy(
        self, source: str, target: str, *, source_match: Version | None, write_id: str
    ) -> Version:
        """``rewriteTo`` with ``ifGenerationMatch=0`` (the target must not exist) and
        ``ifSourceGenerationMatch``; large objects take several calls (rewrite tokens)."""
        token: str | None = None
        while True:
            result: dict[str, Any] = self._call(
                "POST",
                "b/{}/o/{}/rewriteTo/b/{}/o/{}",
                self.bucket,
                source,
                self.bucket,
                target,
                ifGenerationMatch="0",
                ifSourceGenerationMatch=None if source_match is None else source_match.value,
                rewriteToken=token,
                # The target's own metadata: the copy names itself with its write id.
                json={"metadata": {WRITE_ID_KEY: write_id}},
                json_out=True,
            )
            if result.get("done"):
                return _version((result.get("resource") or {}).get("generation"))
            token = result.get("rewriteToken")
            if not token:
                raise OSError(render(Reason.gcs_rewrite_no_token))

    def list_objects(
        self,
        prefix: str,
        *,
        delimiter: str | None,
        token: str | None = None,
        limit: int | None = None,
    ) -> ListPage:
        page = self.list_page(prefix, delimiter=delimiter, max_results=limit, page_token=token)
        return list_page_of(page)

    def list_objects_after(
        self,
        prefix: str,
        *,
        after: str,
        end: str | None,
        token: str | None = None,
        limit: int | None = None,
    ) -> ListPage:
        # startOffset is inclusive (``after`` itself may come back) and endOffset
        # exclusive; a page token is used with the same offsets it was given with.
        page = self.list_page(prefix, delimiter=None, max_results=limit, page_token=token,
                              start=after, end=end)
        return list_page_of(page)

    def list_versions(self, name: str, limit: int | None) -> list[VersionInfo]:
        # The order of one name's generations within a listing is not documented, so the
        # newest are only known once all of them are read: pages are followed until the
        # listing moves past the name (names come in order, and ``name`` is the first
        # that starts with itself), up to MAX_VERSIONS_LISTED generations; then sorted,
        # and the first ``limit`` kept.
        by_generation: dict[str, dict[str, Any]] = {}
        token: str | None = None
        while True:
            page: dict[str, Any] = self._call(
                "GET", "b/{}/o", self.bucket, prefix=name, versions="true",
                pageToken=token, json_out=True,
            )
            listed = page.get("items", [])
            known = len(by_generation)
            for item in listed:
                if item.get("name") == name:
                    by_generation.setdefault(str(item.get("generation")), item)
            token = page.get("nextPageToken") or None
            # A page that brings nothing new ends it too: a server whose token repeats a
            # page (fake-gcs-server names the object in it) must not be asked again.
            if (token is None or len(by_generation) >= MAX_VERSIONS_LISTED
                    or len(by_generation) == known
                    or any(item.get("name") != name for item in listed)):
                break
        items = list(by_generation.values())
        items.sort(key=lambda item: int(item.get("generation", 0)), reverse=True)
        items = items[:MAX_VERSIONS_LISTED if limit is None else limit]
        return [
            VersionInfo(
                version=_version(item.get("generation")),
                size=int(item.get("size", 0)),
                modified=_time(item.get("updated") or item.get("timeCreated")),
                # GCS keeps no deletion markers: a deleted object's versions are all
                # noncurrent (timeDeleted set), and none is latest.
                latest="timeDeleted" not in item,
                # The listing carries each version's metadata: the owner costs nothing.
                owner=_owner_of(item),
            )
            for item in items
        ]

    def version_of_id(self, version_id: str) -> Version | None:
        # A generation is a number; anything else cannot name one.
        return _version(version_id) if version_id.isdigit() else None

    def keeps_versions(self) -> bool:
        meta: dict[str, Any] = self._call("GET", "b/{}", self.bucket, json_out=True)
        return bool((meta.get("versioning") or {}).get("enabled"))

