"""ObjectStoreBackend: the fsseam Backend protocol over any object store's client.

Everything an object store needs beyond its own requests lives here, once: key mapping
under ``bucket/prefix``, the root guard, directories inferred from prefixes (and from
``dir/`` marker objects), the rule that a path is a file or a directory but never both,
write-id recovery after a lost answer, the guard against versions minted by another store,
the pinned ranged-read stream, and the translation of store errors (see ``errors.py``).

Request budget (the client's requests, counted at the server by each store's tests):
  read                  1 GET (bytes and version from one response)
  write, IfMatch        1 upload with the condition
  write, create path    1 listing of ``key/`` (+ 1 HEAD per parent directory below the
                        root, sent at the same time), then 1 upload (CreateOnly, Overwrite)
  delete, IfMatch       1 DELETE with the condition
  walk                  1 flat listing per page (1,000 keys), never one per directory
  read_version          1 GET of that version (a version without the store's own id,
                        such as a GCS generation, costs one bucket look the first time)
  versions              1 listing page of versions per 1,000 listed, at most
                        ``max_versions_listed`` (10,000) in all (+ 1 bucket look the
                        first time, unless the listing itself proves the bucket keeps
                        versions: S3 VersionIds, or more than one version);
                        ``history_owners`` adds 1 HEAD per version listed whose owner
                        the listing lacks
  read_version_id       1 GET of the version a full id names (no listing)
Extra requests happen on error paths only: a 404 costs one listing to tell a directory
(or a missing bucket) from a missing object; a failed write costs one HEAD that reads back
the write id and tells a changed object from a vanished one.
"""

from __future__ import annotations

import builtins
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import Any, ClassVar, Self, cast

from ...errors import Conflict, ErrorCode, FsError
from ...messages import Reason
from ...versions import Capabilities, CreateOnly, IfMatch, Precondition, Version
from ..base import ANY_VERSION, Blob, Entry, Stat, VersionInfo, WriteMeta
from . import copying, history, landed, listing, messages, plain, ranged, started
from .client import (
    MAX_VERSIONS_LISTED,
    NoVersion,
    ObjectClient,
    ObjectHead,
    Resent,
    TellsResends,
    VersionsById,
)
from .errors import Action, Fault, ObjectErrorMapper, Op, StoreError, translate
from .keys import KeySpace, normalize, parents
from .parallel import READ_MANY_CONCURRENCY, READ_MANY_WINDOW_BYTES, concurrently, read_many
from .store import COMMON_OPTIONS, StoreFacts, split_options
from .stream import PinnedRangeStream

__all__ = ["READ_MANY_CONCURRENCY", "READ_MANY_WINDOW_BYTES", "ObjectStoreBackend"]


class ObjectStoreBackend:
    """A workspace rooted at ``bucket/prefix`` of one object store.

    A store's subclass declares ``facts`` and ``store_options``, and supplies
    ``parse_url``, ``make_filesystem`` and an ``__init__(fs, root, **options)`` that builds
    its :class:`~.client.ObjectClient` and :class:`~.errors.ObjectErrorMapper` and calls
    this constructor; ``from_url`` is the template's.
    """

    facts: ClassVar[StoreFacts]
    """What the store guarantees; a subclass that declares it gets its ``capabilities``
    built from it."""
    capabilities: Capabilities
    root: str
    store_options: ClassVar[tuple[str, ...]] = ()
    """The options of ``storage_options`` this store's backend reads itself, beyond
    :data:`~.store.COMMON_OPTIONS`; the rest go to its fsspec filesystem."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "facts" in cls.__dict__:
            cls.capabilities = cls.facts.capabilities()

    @classmethod
    def backend_options(cls) -> tuple[str, ...]:
        return (*cls.store_options, *COMMON_OPTIONS)

    @classmethod
    def split_options(
        cls, storage_options: Mapping[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(options for the store's fsspec filesystem, options for the backend)."""
        return split_options(storage_options, cls.backend_options())

    # -- what a store supplies to be opened from a URL ------------------------------
    @classmethod
    def parse_url(cls, url: str) -> str:
        """``bucket/prefix`` of ``url`` (a store may refuse a URL without a bucket here,
        before any filesystem is made)."""
        raise NotImplementedError

    @classmethod
    def make_filesystem(cls, fs_options: dict[str, Any], url: str) -> Any:
        """The store's fsspec filesystem, of its own (credentials it cannot use raise
        :func:`~.store.unusable_credentials`)."""
        raise NotImplementedError

    @classmethod
    def from_root(cls, fs: Any, root: str, options: dict[str, Any]) -> Self:
        # A store's own constructor takes (fs, root, **options), not the template's.
        make: Callable[..., Self] = cls
        return make(fs, root, **options)

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> Self:
        """The registry's constructor: ``storage_options`` split between the filesystem
        and the backend, the filesystem made unless given."""
        root = cls.parse_url(url)
        fs_options, options = cls.split_options(storage_options)
        if fs is None:
            fs = cls.make_filesystem(fs_options, url)
        return cls.from_root(fs, root, options)

    def __init__(
        self,
        client: ObjectClient,
        mapper: ObjectErrorMapper,
        keys: KeySpace,
        *,
        server_side_copy: bool,
        list_page_size: int | None = None,
        history_owners: bool = False,
        max_versions_listed: int = MAX_VERSIONS_LISTED,
    ) -> None:
        if list_page_size is not None and list_page_size < 1:
            raise messages.not_positive("list_page_size")
        if max_versions_listed < 1:
            raise messages.not_positive("max_versions_listed")
        self.max_versions_listed = max_versions_listed
        """The most versions ``versions`` lists (pages followed up to it); a restore by a
        full version id reads that version without listing, so older ones stay reachable."""
        self._client = client
        self._mapper = mapper
        self._keys = keys
        self.bucket = keys.bucket
        self.prefix = keys.prefix
        self.root = keys.root
        self.server_side_copy = server_side_copy
        self.list_page_size = list_page_size
        self._keeps_versions: bool | None = None
        self._keeps_owner = type(client).keeps_owner
        by_id = issubclass(type(client), VersionsById)
        self._by_id = cast(VersionsById, client) if by_id else None
        tells = issubclass(type(client), TellsResends)
        self._tells_resends = cast(TellsResends, client) if tells else None
        self.history_owners = history_owners and self._keeps_owner
        """``versions`` asks each listed version whose owner the listing lacks (S3 lists
        no metadata): one HEAD per version shown, so off by default."""
        self.capabilities = type(self).capabilities.model_copy(
            update={"copy_create_only_atomic": server_side_copy,
                    "write_meta": self._keeps_owner}
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(root={self.root!r})"

    # -- errors ------------------------------------------------------------------
    def _classify(self, exc: BaseException, op: Op) -> StoreError:
        err = self._mapper.classify(exc, op)
        if err.fault is Fault.NOT_FOUND and op in ("list", "bucket"):
            # A listing or the bucket itself has no object to miss: the bucket is missing.
            return StoreError(Fault.BUCKET_MISSING, err.detail)
        return err

    def _error(
        self,
        exc: BaseException,
        op: Op,
        key: str,
        action: Action,
        precondition: Precondition | None = None,
        exists: bool | None = None,
    ) -> FsError:
        if isinstance(exc, FsError):
            return exc
        if isinstance(exc, NoVersion):
            return messages.no_version(self._mapper.store, key)
        return translate(
            self._classify(exc, op),
            self._mapper,
            bucket=self.bucket,
            key=key,
            action=action,
            precondition=precondition,
            exists=exists,
        )

    def _fault(self, exc: BaseException, op: Op) -> Fault | None:
        if isinstance(exc, (FsError, NoVersion)):
            return None
        return self._classify(exc, op).fault

    def _missing_or_directory(
        self, exc: BaseException, op: Op, key: str, action: Action
    ) -> FsError:
        """A 404 for a key may be a "directory" (a prefix with children): only on this error
        path does it cost one listing, which also says whether the bucket is there."""
        err = self._error(exc, op, key, action)
        if err.code is not ErrorCode.FS_NOT_FOUND or err.reason == Reason.bucket_missing:
            return err
        try:
            is_dir = self._has_children(key, action)
        except FsError as probe:
            return probe if probe.reason == Reason.bucket_missing else err
        return messages.is_directory(key) if is_dir else err

    # -- probes ------------------------------------------------------------------
    def _has_children(self, key: str, action: Action) -> bool:
        try:
            page = self._client.list_objects(self._keys.dir_prefix(key), delimiter=None, limit=1)
        except Exception as e:
            raise self._error(e, "list", key, action) from e
        return bool(page.objects or page.prefixes)

    def _head(self, key: str, action: Action) -> ObjectHead | None:
        """The object at ``key``, or None when there is none."""
        try:
            return self._client.head(self._keys.name(key))
        except Exception as e:
            if self._fault(e, "head") is Fault.NOT_FOUND:
                return None
            raise self._error(e, "head", key, action) from e

    def _look(self, key: str) -> tuple[bool | None, ObjectHead | None]:
        """After a failure: (whether an object is at ``key``, its head); (None, None) when
        the look failed too (it only refines an error we already have)."""
        try:
            head = self._head(key, "stat")
        except FsError:
            return None, None
        return head is not None, head

    def _is_object(self, key: str, action: Action) -> bool:
        return self._head(key, action) is not None

    def _check_free(self, key: str, action: Action) -> None:
        """A path is a file or a directory, never both: a new object may not sit where
        objects live under ``key/``, nor below an object. Checked on the create path only
        (an IfMatch write replaces a file that exists); the probes go out together."""
        checks: list[Callable[[], bool]] = [partial(self._has_children, key, action)]
        checks += [partial(self._is_object, parent, action) for parent in parents(key)]
        found = concurrently(checks)
        if found[0]:
            raise messages.is_directory(key)
        if any(found[1:]):
            raise messages.parent_is_file(key, action)

    def _file_key(self, key: str, action: Action) -> str:
        key = normalize(key)
        if not key:
            raise messages.root_is_directory(action)
        return key

    def _expected(self, key: str, precondition: Precondition) -> Version | None:
        if not isinstance(precondition, IfMatch):
            return None
        if precondition.version.kind != self._client.version_kind:
            # A version minted by another storage can never match this store's versions.
            raise messages.changed_since_read(key)
        return precondition.version

    # -- reads -------------------------------------------------------------------
    def resolve(self, key: str) -> str:
        # Object stores have no links: resolving is normalizing.
        return normalize(key)

    def read(self, key: str) -> Blob:
        key = self._file_key(key, "read")
        try:
            got = self._client.get(self._keys.name(key))
        except Exception as e:
            raise self._missing_or_directory(e, "get", key, "read") from e
        return Blob(data=got.data, version=got.version)

    def read_many(
        self, entries: Iterable[Entry], *, concurrency: int = READ_MANY_CONCURRENCY,
        window_bytes: int = READ_MANY_WINDOW_BYTES,
    ) -> Iterator[tuple[Entry, Blob | FsError]]:
        """Whole objects, one GET each, ``concurrency`` in flight, in the order given, at
        most ``window_bytes`` of known size fetched ahead (see :func:`.parallel.read_many`)."""
        return read_many(self.read, entries, concurrency=concurrency, window_bytes=window_bytes,
                         start=self.start_read)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> PinnedRangeStream:
        return ranged.open_read(self, key, chunk_size)

    def stat(self, key: str) -> Stat:
        key = normalize(key)
        if not key:
            self._has_children("", "stat")  # the root exists iff the bucket does
            return Stat(key="", kind="directory")
        try:
            head = self._client.head(self._keys.name(key))
        except Exception as e:
            err = self._missing_or_directory(e, "head", key, "stat")
            if err.code is ErrorCode.FS_IS_DIRECTORY:
                return Stat(key=key, kind="directory")
            raise err from e
        return Stat(key=key, kind="file", size=head.size)

    def list(self, key: str) -> builtins.list[Entry]:
        return sorted(self.list_lazy(key), key=lambda e: (e.name, e.kind))

    def list_lazy(self, key: str) -> Iterator[Entry]:
        """The children of ``key``, page by page as the store returns them."""
        return listing.children(self, key)

    def walk(self, key: str) -> Iterator[Entry]:
        return listing.walk(self, key)

    def walk_versioned(self, key: str) -> Iterator[tuple[Entry, Version | None]]:
        return listing.walk_versioned(self, key)

    start_read = started.start_read  # a grep's reads in flight without a thread each
    get_plain = plain.get_plain  # objects kept beside files (observation shards)
    put_plain = plain.put_plain

    # -- writes ------------------------------------------------------------------
    def write(
        self, key: str, data: bytes, precondition: Precondition, *, meta: WriteMeta | None = None
    ) -> Version:
        key = self._file_key(key, "write")
        expected = self._expected(key, precondition)
        if expected is None:
            self._check_free(key, "write")
        return self._put(key, data, precondition, expected, "write",
                         meta.owner if meta is not None else None)

    def _put(
        self,
        key: str,
        data: bytes,
        precondition: Precondition,
        expected: Version | None,
        action: Action,
        owner: str | None = None,
    ) -> Version:
        write_id = secrets.token_hex(12)
        # The owner goes only to a client that keeps it (an optional part of its contract).
        extra = {"owner": owner} if self._keeps_owner and owner is not None else {}
        put: Callable[..., Version] = self._client.put
        try:
            return put(
                self._keys.name(key),
                data,
                if_match=expected,
                if_absent=isinstance(precondition, CreateOnly),
                write_id=write_id,
                **extra,
            )
        except Exception as e:
            outcome = landed.after_failed_write(self, e, "put", key, action, precondition,
                                                write_id)
            if isinstance(outcome, Version):
                return outcome
            raise outcome from e

    def writer_of(self, key: str) -> tuple[Version, str | None] | None:
        """The object's version and the owner its metadata names (one HEAD); None on a
        store whose client keeps no owner."""
        if not self._keeps_owner:
            return None
        key = self._file_key(key, "read")
        head = self._head(key, "read")
        if head is None:
            raise messages.not_found(key)
        return head.version, head.owner

    def delete(self, key: str, precondition: Precondition = ANY_VERSION) -> None:
        key = self._file_key(key, "delete")
        if isinstance(precondition, CreateOnly):
            raise messages.create_only_delete(key)
        expected = self._expected(key, precondition)
        name = self._keys.name(key)
        if expected is None and self._client.silent_delete_of_missing:
            # The store deletes a missing object without a word; only a look can say so.
            try:
                self._client.head(name)
            except Exception as e:
                raise self._missing_or_directory(e, "head", key, "delete") from e
        tells = self._tells_resends
        try:
            if tells is not None:
                tells.delete_telling_resends(name, if_match=expected)
            else:
                self._client.delete(name, if_match=expected)
        except Exception as failed:
            cause = failed.__cause__ if isinstance(failed, Resent) else None
            store_error = cause if isinstance(cause, Exception) else failed
            if expected is None:
                raise self._missing_or_directory(store_error, "delete", key, "delete") from (
                    store_error)
            exists = None
            if self._fault(store_error, "delete") is Fault.PRECONDITION:
                exists, _ = self._look(key)
            err = self._error(store_error, "delete", key, "delete", precondition, exists)
            if isinstance(err, Conflict):
                # A refusal answering the only request sent is another writer's change; one
                # answering a resend may have met our own delete, landed unanswered.
                err.resent = isinstance(failed, Resent) or tells is None
            raise err from store_error

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        return copying.copy(self, src, dst, source)

    # -- history -----------------------------------------------------------------
    def _require_history(self, key: str, action: Action) -> None:
        history.require_history(self, key, action)

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        return history.versions(self, key, limit)

    def read_version(self, key: str, version: Version) -> Blob:
        return history.read_version(self, key, version)

    def read_version_id(self, key: str, version_id: str) -> Blob:
        """The version the store's own id names (an S3 VersionId, a GCS generation, an
        Azure version id), read directly: one GET, whatever the number of versions kept.
        FS_NOT_FOUND (``version_not_kept``) when it names no kept version of ``key``."""
        return history.read_version_id(self, key, version_id)
