"""S3Backend: ETag versions and storage-side compare-and-swap through S3 conditional writes.

Every storage call goes through s3fs's raw client (``fs._call_s3``), not its file API:
``cat_file`` and ``open("rb")`` cost a HEAD before the GET and return no ETag, and
``pipe_file`` drops ``IfMatch`` on its multipart path (docs/decisions.md, storage facts).

Request budget (no HEAD on either path):
  read    one GetObject, which returns the bytes and their ETag together
  write   one PutObject carrying If-Match / If-None-Match, for up to
          ``multipart_threshold`` bytes (default 64 MiB); above it a multipart upload with
          the condition on CompleteMultipartUpload.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
import secrets
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, TypeVar

from fsspec.asyn import sync

from fsseam.backends.base import Blob, Entry, Stat
from fsseam.errors import Conflict, ErrorCode, FsError
from fsseam.paths import to_key
from fsseam.versions import Capabilities, CreateOnly, IfMatch, Precondition, Version

from ._errors import Action, client_error_info, is_conditional_conflict, map_s3_error
from ._filesystem import make_filesystem, split_options
from ._stream import S3ReadStream, total_size

__all__ = ["MAX_PART_COUNT", "MAX_PUT_SIZE", "MIN_PART_SIZE", "S3Backend"]

MiB = 1 << 20
MAX_PUT_SIZE = 5 * 1024 * MiB
"""S3's limit for one PutObject."""
MIN_PART_SIZE = 5 * MiB
"""S3's smallest part (all but the last)."""
MAX_PART_COUNT = 10_000
DEFAULT_MULTIPART_THRESHOLD = 64 * MiB
"""Below this one PutObject: a single request is atomic with its condition and needs no
cleanup; above it a failed network request would resend too much at once."""
DEFAULT_PART_SIZE = 16 * MiB
_PART_CONCURRENCY = 4

T = TypeVar("T")
def _normalize(key: str) -> str:
    """``a//b/./c/`` -> ``a/b/c``; a key escaping the root is FS_OUTSIDE_ROOT."""
    return to_key(key) if key.strip() else ""


WRITE_ID_KEY = "fsseam-write"
"""User metadata (``x-amz-meta-fsseam-write``) naming the write that stored an object."""


def _ambiguous(err: FsError) -> bool:
    """Might our own write have landed although the call failed?

    A 412 may answer a resend of our own landed write (its first answer was lost; botocore
    and aiohttp both resend, and aiohttp's resend is not counted in RetryAttempts), and a
    storage failure without a clear answer (5xx after retries, a dropped connection) leaves
    the outcome unknown. Both cost one HEAD on this error path.
    """
    return isinstance(err, Conflict) or err.code is ErrorCode.FS_BACKEND


def _condition(key: str, precondition: Precondition) -> dict[str, str]:
    if isinstance(precondition, CreateOnly):
        return {"IfNoneMatch": "*"}
    if isinstance(precondition, IfMatch):
        if precondition.version.kind != "etag":
            # A version minted by another storage can never match an ETag.
            raise Conflict("mismatch", f"/{key} has changed since it was read.", path=key)
        return {"IfMatch": precondition.version.value}
    return {}


def _version(resp: dict[str, Any], key: str) -> Version:
    etag = resp.get("ETag")
    if not etag:
        raise FsError(
            ErrorCode.FS_BACKEND,
            f"S3 returned no ETag for /{key}; this storage cannot version it.",
            path=key,
        )
    version_id = resp.get("VersionId")
    return Version(kind="etag", value=str(etag), detail=str(version_id) if version_id else None)


class S3Backend:
    """A workspace rooted at ``bucket/prefix`` of an S3 (or S3-compatible) store."""

    capabilities: ClassVar[Capabilities] = Capabilities(
        create_only_atomic=True,
        if_match_atomic=True,
        version_kind="etag",
        ranged_reads=True,
        note=(
            "PutObject / CompleteMultipartUpload with If-None-Match: * (create-only) or "
            "If-Match: <ETag>; decided by S3 in the write request"
        ),
    )

    def __init__(
        self,
        fs: Any,
        root: str,
        *,
        multipart_threshold: int = DEFAULT_MULTIPART_THRESHOLD,
        multipart_part_size: int = DEFAULT_PART_SIZE,
        conflict_retries: int = 5,
    ) -> None:
        bucket, _, prefix = root.strip("/").partition("/")
        if not bucket:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                "an S3 workspace needs a bucket: s3://bucket or s3://bucket/prefix.",
            )
        if not 0 < multipart_threshold <= MAX_PUT_SIZE:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                f"multipart_threshold must be between 1 and {MAX_PUT_SIZE} bytes.",
            )
        if multipart_part_size < MIN_PART_SIZE:
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT,
                f"multipart_part_size must be at least {MIN_PART_SIZE} bytes (S3's minimum).",
            )
        self.fs = fs
        self.bucket = bucket
        self.prefix = _normalize(prefix)
        self.root = f"{bucket}/{self.prefix}" if self.prefix else bucket
        self.multipart_threshold = multipart_threshold
        self.multipart_part_size = multipart_part_size
        self.conflict_retries = conflict_retries

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> S3Backend:
        fs_options, backend_options = split_options(storage_options)
        if fs is None:
            fs = make_filesystem(fs_options)
        # Both s3:// and s3a:// name a bucket; strip either scheme.
        root = re.sub(r"^[a-zA-Z0-9]+://", "", url)
        return cls(fs, root, **backend_options)

    # -- plumbing ----------------------------------------------------------
    def _obj(self, key: str) -> str:
        """The S3 object key for a normalized backend key."""
        if not key:
            return self.prefix
        return f"{self.prefix}/{key}" if self.prefix else key

    def _dir_prefix(self, key: str) -> str:
        base = self._obj(key)
        return base + "/" if base else ""

    def _run(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        # s3fs owns an event loop on its own thread; every call is submitted there.
        result: T = sync(self.fs.loop, fn, *args, **kwargs)
        return result

    async def _call(self, method: str, **kwargs: Any) -> dict[str, Any]:
        resp: dict[str, Any] = await self.fs._call_s3(method, Bucket=self.bucket, **kwargs)
        return resp

    async def _retrying_conflicts(self, fn: Callable[[], Awaitable[T]]) -> T:
        """Run a conditional write, retrying S3's 409 ConditionalRequestConflict (another
        conditional write to the key was in flight) with bounded, jittered backoff."""
        attempt = 0
        while True:
            try:
                return await fn()
            except Exception as e:
                if attempt >= self.conflict_retries or not is_conditional_conflict(e):
                    raise
            await asyncio.sleep(min(0.05 * 2**attempt, 1.0) * (0.5 + random.random()))
            attempt += 1

    async def _get(self, obj: str, **kwargs: Any) -> tuple[dict[str, Any], bytes]:
        resp = await self._call("get_object", Key=obj, **kwargs)
        body = resp.pop("Body")
        async with body:
            data: bytes = await body.read()
        return resp, data

    async def _has_children(self, key: str) -> bool:
        resp = await self._call("list_objects_v2", Prefix=self._dir_prefix(key), MaxKeys=1)
        return bool(resp.get("KeyCount") or resp.get("Contents"))

    def _map(
        self,
        exc: BaseException,
        key: str,
        action: Action,
        precondition: Precondition | None = None,
    ) -> FsError:
        return map_s3_error(exc, key, action, precondition, bucket=self.bucket)

    def _missing_or_directory(self, exc: BaseException, key: str, action: Action) -> FsError:
        """A 404 for an object key may be a "directory" (a prefix with children): only on
        this error path does it cost one LIST."""
        err = self._map(exc, key, action)
        info = client_error_info(exc)
        if err.code is not ErrorCode.FS_NOT_FOUND or (info and info.code == "NoSuchBucket"):
            return err
        try:
            is_dir = self._run(self._has_children, key)
        except Exception as list_exc:
            # A HEAD's 404 has no body, so only the LIST can tell that the bucket is missing.
            list_err = self._map(list_exc, key, action)
            return list_err if list_err.code is ErrorCode.FS_NOT_FOUND else err
        if is_dir:
            return FsError(
                ErrorCode.FS_IS_DIRECTORY,
                f"/{key} is a directory, not a file. List it, or give a file path.",
                path=key,
            )
        return err

    @staticmethod
    def _root_is_directory(action: str) -> FsError:
        return FsError(
            ErrorCode.FS_IS_DIRECTORY,
            f"cannot {action} /: it is the workspace root directory.",
            path="",
        )

    # -- the protocol --------------------------------------------------------
    def resolve(self, key: str) -> str:
        # S3 has no symlinks: resolving is normalizing.
        return _normalize(key)

    def read(self, key: str) -> Blob:
        key = _normalize(key)
        if not key:
            raise self._root_is_directory("read")
        try:
            resp, data = self._run(self._get, self._obj(key))
        except Exception as e:
            raise self._missing_or_directory(e, key, "read") from e
        return Blob(data=data, version=_version(resp, key))

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> S3ReadStream:
        key = _normalize(key)
        if not key:
            raise self._root_is_directory("read")
        if chunk_size < 1:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, "chunk_size must be positive.")
        obj = self._obj(key)
        try:
            try:
                resp, data = self._run(self._get, obj, Range=f"bytes=0-{chunk_size - 1}")
            except Exception as e:
                info = client_error_info(e)
                if info is None or info.code != "InvalidRange":
                    raise
                # S3 refuses any range of an empty object; a plain GET returns it whole.
                resp, data = self._run(self._get, obj)
        except Exception as e:
            raise self._missing_or_directory(e, key, "read") from e

        def get_range(first: int, last: int, etag: str) -> tuple[dict[str, Any], bytes]:
            try:
                return self._run(self._get, obj, Range=f"bytes={first}-{last}", IfMatch=etag)
            except Exception as e:
                raise self._map(e, key, "read") from e

        return S3ReadStream(key, _version(resp, key), total_size(resp), data, chunk_size, get_range)

    def stat(self, key: str) -> Stat:
        key = _normalize(key)
        if not key:
            # The root exists iff the bucket does; listing it says so (NoSuchBucket).
            try:
                self._run(self._call, "list_objects_v2", Prefix=self._dir_prefix(""), MaxKeys=1)
            except Exception as e:
                raise self._map(e, key, "stat") from e
            return Stat(key="", kind="directory")
        try:
            resp = self._run(self._call, "head_object", Key=self._obj(key))
        except Exception as e:
            err = self._missing_or_directory(e, key, "stat")
            if err.code is ErrorCode.FS_IS_DIRECTORY:
                return Stat(key=key, kind="directory")
            raise err from e
        return Stat(key=key, kind="file", size=int(resp.get("ContentLength") or 0))

    async def _list_all(self, prefix: str) -> tuple[list[str], list[dict[str, Any]]]:
        prefixes: list[str] = []
        contents: list[dict[str, Any]] = []
        token: dict[str, str] = {}
        while True:
            resp = await self._call("list_objects_v2", Prefix=prefix, Delimiter="/", **token)
            prefixes.extend(p["Prefix"] for p in resp.get("CommonPrefixes") or [])
            contents.extend(resp.get("Contents") or [])
            if not resp.get("IsTruncated") or not resp.get("NextContinuationToken"):
                return prefixes, contents
            token = {"ContinuationToken": resp["NextContinuationToken"]}

    def list(self, key: str) -> list[Entry]:
        key = _normalize(key)
        prefix = self._dir_prefix(key)
        try:
            prefixes, contents = self._run(self._list_all, prefix)
        except Exception as e:
            raise self._map(e, key, "list") from e

        def child(name: str) -> str:
            return f"{key}/{name}" if key else name

        entries: list[Entry] = []
        for p in prefixes:
            name = p[len(prefix) :].rstrip("/")
            if name:  # a key like "d//x" makes an empty-named prefix: not addressable
                entries.append(Entry(key=child(name), name=name, kind="directory"))
        for c in contents:
            name = c["Key"][len(prefix) :]
            if name:  # "d/" itself: a directory marker some tools create
                entries.append(
                    Entry(key=child(name), name=name, kind="file", size=int(c.get("Size", 0)))
                )
        if key and not prefixes and not contents:
            # No such prefix: a file, or nothing at all.
            st = self.stat(key)
            if st.kind == "file":
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    f"/{key} is a file, not a directory. Read it instead.",
                    path=key,
                )
        return sorted(entries, key=lambda e: (e.name, e.kind))

    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        key = _normalize(key)
        if not key:
            raise self._root_is_directory("write")
        condition = _condition(key, precondition)
        obj = self._obj(key)
        # Names this write in the object's metadata, so that after an ambiguous failure we
        # can tell whether the object is our write (see _own_write_landed).
        write_id = secrets.token_hex(12)
        meta = {"Metadata": {WRITE_ID_KEY: write_id}}
        if len(data) <= self.multipart_threshold:

            async def upload() -> dict[str, Any]:
                return await self._call("put_object", Key=obj, Body=data, **meta, **condition)
        else:

            async def upload() -> dict[str, Any]:
                return await self._multipart(obj, data, condition, meta)

        try:
            resp = self._run(self._retrying_conflicts, upload)
        except Exception as e:
            err = self._map(e, key, "write", precondition)
            if _ambiguous(err):
                landed = self._own_write_landed(obj, key, write_id)
                if landed is not None:
                    return landed
            raise err from e
        return _version(resp, key)

    def _own_write_landed(self, obj: str, key: str, write_id: str) -> Version | None:
        """After an ambiguous failure: is the object now the write named ``write_id``?

        botocore resends a request whose answer was lost: a conditional resend then meets
        our own landed write (412), and a dropped connection leaves the outcome unknown.
        One HEAD, on that error path only, reads the write id back. (Equal bytes are not
        enough: two agents incrementing "5" both write "6", and the loser must hear it
        lost.)
        """

        async def head() -> dict[str, Any]:
            return await self._call("head_object", Key=obj)

        try:
            resp = self._run(head)
        except Exception:
            return None
        if (resp.get("Metadata") or {}).get(WRITE_ID_KEY) != write_id:
            return None
        return _version(resp, key)

    async def _multipart(
        self, obj: str, data: bytes, condition: dict[str, str], meta: dict[str, Any]
    ) -> dict[str, Any]:
        """Parts in parallel, then CompleteMultipartUpload with the condition: the object
        appears (or the 412 comes) only at that last request, so a conflict or a crash
        before it leaves the old bytes in place. The upload is aborted on any failure."""
        part_size = max(self.multipart_part_size, -(-len(data) // MAX_PART_COUNT))
        created = await self._call("create_multipart_upload", Key=obj, **meta)
        upload_id = created["UploadId"]
        limit = asyncio.Semaphore(_PART_CONCURRENCY)

        async def part(number: int, offset: int) -> dict[str, Any]:
            async with limit:
                resp = await self._call(
                    "upload_part",
                    Key=obj,
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
                Key=obj,
                UploadId=upload_id,
                MultipartUpload={"Parts": list(parts)},
                **condition,
            )
        except BaseException:
            # The original failure is what the caller needs; a failed abort only leaves
            # parts for the bucket's lifecycle rule to expire.
            with contextlib.suppress(Exception):
                await self._call("abort_multipart_upload", Key=obj, UploadId=upload_id)
            raise

    def delete(self, key: str) -> None:
        key = _normalize(key)
        if not key:
            raise self._root_is_directory("delete")
        obj = self._obj(key)
        # DeleteObject succeeds on a missing key; the HEAD is what reports FS_NOT_FOUND.
        try:
            self._run(self._call, "head_object", Key=obj)
        except Exception as e:
            raise self._missing_or_directory(e, key, "delete") from e
        try:
            self._run(self._call, "delete_object", Key=obj)
        except Exception as e:
            raise self._map(e, key, "delete") from e
