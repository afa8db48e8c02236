"""GCSBackend: the fsseam Backend protocol over Google Cloud Storage (through gcsfs).

Version = the object's generation. GCS gives every write a new generation (even for
identical bytes), returns it with the bytes of a media GET (``X-Goog-Generation``) and with
every upload, and checks ``ifGenerationMatch`` on the upload itself, so both CreateOnly
(``ifGenerationMatch=0``) and IfMatch are decided by the storage, atomically, in the same
request as the write.

Request budget (checked by tests/test_gcs_requests.py against a counting proxy):
read = 1 GET; write = 1 POST (below ``resumable_threshold``); stat = 1 GET for a file;
list = 1 GET per 1000 children. Extra requests happen only on error paths (telling a
directory from a missing key, a vanished object from a moved-on one).
"""

from __future__ import annotations

import posixpath
import secrets
from typing import Any, ClassVar, Literal

from fsspec.core import split_protocol

from fsseam.backends.base import Blob, Entry, Stat
from fsseam.errors import Conflict, ErrorCode, FsError
from fsseam.versions import Capabilities, CreateOnly, IfMatch, Precondition, Version

from ._client import WRITE_ID_KEY, GcsClient, Media, make_filesystem
from ._errors import map_error
from ._stream import GcsReadStream

__all__ = ["RESUMABLE_THRESHOLD", "GCSBackend"]

MiB = 1 << 20

RESUMABLE_THRESHOLD = 32 * MiB
"""Objects larger than this are sent by resumable upload (several requests, 8 MiB each)
instead of one multipart request. 32 MiB keeps a single request short enough to retry
cheaply, and keeps typical agent-edited files (far smaller) on the one-request path."""

VERSION_KIND = "generation"


def _version(generation: object, key: str) -> Version:
    if generation is None or not str(generation).isdigit():
        raise FsError(
            ErrorCode.FS_BACKEND,
            f"storage did not report a generation for /{key}; cannot version it.",
            path=key,
        )
    return Version(kind=VERSION_KIND, value=str(generation))


class GCSBackend:
    """Generation-versioned GCS objects under ``bucket/prefix``."""

    capabilities: ClassVar[Capabilities] = Capabilities(
        create_only_atomic=True,
        if_match_atomic=True,
        version_kind=VERSION_KIND,
        ranged_reads=True,
        note="ifGenerationMatch on the upload request (0 = create only)",
    )

    resumable_threshold: int = RESUMABLE_THRESHOLD

    def __init__(self, fs: Any, bucket: str, prefix: str = "") -> None:
        if not bucket:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, "a gs:// URL needs a bucket name.")
        self.fs = fs
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        self.root = f"{bucket}/{self.prefix}" if self.prefix else bucket
        self._client = GcsClient(fs, bucket)

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> GCSBackend:
        """``gs://bucket/prefix`` (or ``gcs://``). ``storage_options`` go to GCSFileSystem
        (``endpoint_url``, ``token``, ``project``, ...)."""
        _, path = split_protocol(url)
        parts = [p for p in path.split("/") if p]
        if not parts:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, f"{url!r} names no bucket.")
        if fs is None:
            fs = make_filesystem(storage_options)
        return cls(fs, parts[0], "/".join(parts[1:]))

    # -- names -----------------------------------------------------------------
    def _name(self, key: str) -> str:
        """The object name of ``key`` inside the bucket."""
        if not self.prefix:
            return key
        return f"{self.prefix}/{key}" if key else self.prefix

    def _dir_prefix(self, key: str) -> str:
        name = self._name(key)
        return f"{name}/" if name else ""

    def resolve(self, key: str) -> str:
        # Object storage has no links: every key is its own canonical spelling.
        return key

    # -- probes used on error paths and by stat/list ---------------------------
    def _is_directory(self, key: str) -> bool:
        page = self._client.list_page(self._dir_prefix(key), max_results=1)
        return bool(page.get("items") or page.get("prefixes"))

    def _object_exists(self, key: str) -> bool:
        try:
            self._client.get_metadata(self._name(key))
        except FileNotFoundError:
            return False
        return True

    def _error(
        self, exc: BaseException, key: str, action: str,
        precondition: Precondition | None = None,
    ) -> FsError:
        return map_error(
            exc,
            key,
            action,
            precondition=precondition,
            object_exists=lambda: self._object_exists(key),
            is_directory=lambda: self._is_directory(key),
        )

    @staticmethod
    def _root_is_directory(key: str, action: str) -> None:
        if not key:
            raise FsError(
                ErrorCode.FS_IS_DIRECTORY,
                f"/ is the workspace root directory; cannot {action} it.",
            )

    # -- reads -----------------------------------------------------------------
    def read(self, key: str) -> Blob:
        self._root_is_directory(key, "read")
        try:
            media = self._client.get_media(self._name(key))
        except Exception as e:
            raise self._error(e, key, "read") from e
        return Blob(data=media.data, version=_version(media.generation, key))

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> GcsReadStream:
        self._root_is_directory(key, "read")
        if chunk_size <= 0:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, "chunk_size must be positive.")
        name = self._name(key)
        try:
            first = self._first_range(name, chunk_size)
        except Exception as e:
            raise self._error(e, key, "read") from e
        return GcsReadStream(
            self._client,
            name,
            key,
            first,
            chunk_size,
            _version(first.generation, key),
            on_error=lambda exc: self._error(exc, key, "read"),
        )

    def _first_range(self, name: str, chunk_size: int) -> Media:
        try:
            return self._client.get_media(name, start=0, end=chunk_size)
        except Exception as e:
            # 416: the range starts at or past the end, i.e. the object is empty. A plain
            # GET of an empty object costs nothing and still carries the generation.
            if getattr(e, "code", None) != 416:
                raise
        return self._client.get_media(name)

    def stat(self, key: str) -> Stat:
        if not key:
            return Stat(key="", kind="directory")
        try:
            meta = self._client.get_metadata(self._name(key))
        except FileNotFoundError as e:
            try:
                is_dir = self._is_directory(key)
            except Exception as e2:
                raise self._error(e2, key, "stat") from e2
            if is_dir:
                return Stat(key=key, kind="directory")
            raise self._error(e, key, "stat") from e
        except Exception as e:
            raise self._error(e, key, "stat") from e
        return Stat(key=key, kind="file", size=int(meta.get("size", 0)))

    def list(self, key: str) -> list[Entry]:
        prefix = self._dir_prefix(key)
        # Keyed by (key, kind): fake-gcs-server repeats a prefix on every page whose items
        # fall under it; a directory must still be listed once.
        entries: dict[tuple[str, str], Entry] = {}
        marker = False
        token: str | None = None
        try:
            while True:
                # Straight from the JSON API, never gcsfs's listings cache: a listing must
                # show what is there now, including other writers' objects.
                page = self._client.list_page(prefix, page_token=token)
                for item in page.get("items", []):
                    rel = str(item["name"])[len(prefix) :]
                    if not rel:
                        marker = True  # a "folder" placeholder object named "dir/"
                        continue
                    entry = self._entry(key, rel, "file", int(item.get("size", 0)))
                    entries[(entry.key, entry.kind)] = entry
                for sub in page.get("prefixes", []):
                    rel = str(sub)[len(prefix) :].rstrip("/")
                    if rel:
                        entry = self._entry(key, rel, "directory", None)
                        entries[(entry.key, entry.kind)] = entry
                token = page.get("nextPageToken")
                if not token:
                    break
            if not entries and key and not marker:
                if self._object_exists(key):
                    raise FsError(
                        ErrorCode.FS_INVALID_ARGUMENT,
                        f"/{key} is a file, not a directory. Read it instead.",
                        path=key,
                    )
                raise FileNotFoundError(key)
        except Exception as e:
            raise self._error(e, key, "list") from e
        return sorted(entries.values(), key=lambda e: (e.name, e.kind))

    @staticmethod
    def _entry(
        parent: str, name: str, kind: Literal["file", "directory"], size: int | None
    ) -> Entry:
        key = posixpath.join(parent, name) if parent else name
        return Entry(key=key, name=name, kind=kind, size=size)

    # -- writes ----------------------------------------------------------------
    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        self._root_is_directory(key, "write")
        if_generation_match: str | None = None
        if isinstance(precondition, CreateOnly):
            if_generation_match = "0"
        elif isinstance(precondition, IfMatch):
            expected = precondition.version
            if expected.kind != VERSION_KIND or not expected.value.isdigit():
                # A version minted by another storage can never match a generation.
                raise Conflict("mismatch", f"/{key} has changed since it was read.", path=key)
            if_generation_match = expected.value
        name = self._name(key)
        write_id = secrets.token_hex(12)
        try:
            if len(data) > self.resumable_threshold:
                result = self._client.upload_resumable(name, data, if_generation_match, write_id)
            else:
                result = self._client.upload_multipart(name, data, if_generation_match, write_id)
        except Exception as e:
            landed, err = self._after_failed_upload(e, key, name, write_id, precondition)
            if landed is not None:
                return landed
            raise err from e
        return _version(result.get("generation"), key)

    def _after_failed_upload(
        self, exc: BaseException, key: str, name: str, write_id: str,
        precondition: Precondition,
    ) -> tuple[Version | None, FsError]:
        """Map a failed upload, after one metadata GET (this error path only).

        gcsfs retries an upload whose answer was lost; the retry meets our own write (412)
        or the outcome is unknown (connection dropped). If the object carries this write's
        id, our write landed and its version is returned with the error. (Equal bytes are
        not enough: two agents incrementing "5" both write "6", and the loser must hear it
        lost.) The same GET tells a changed object from a deleted one.
        """
        try:
            meta: dict[str, Any] | None = self._client.get_metadata(name)
        except FileNotFoundError:
            meta = None
        except Exception:
            return None, self._error(exc, key, "write", precondition)
        err = map_error(
            exc,
            key,
            "write",
            precondition=precondition,
            object_exists=lambda: meta is not None,
            is_directory=lambda: self._is_directory(key),
        )
        if meta is not None and (meta.get("metadata") or {}).get(WRITE_ID_KEY) == write_id:
            return _version(meta.get("generation"), key), err
        return None, err

    def delete(self, key: str) -> None:
        self._root_is_directory(key, "delete")
        try:
            self._client.delete(self._name(key))
        except Exception as e:
            raise self._error(e, key, "delete") from e

    def __repr__(self) -> str:
        return f"GCSBackend(root={self.root!r})"
