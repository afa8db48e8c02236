"""ObjectStoreBackend: the fsseam Backend base class over any object store's client.

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
import posixpath
import secrets
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import partial
from typing import Any, ClassVar, Literal, Self

from ...errors import Conflict, ErrorCode, FsError
from ...messages import Reason
from ...versions import Capabilities, CreateOnly, IfMatch, Precondition, Version
from ..base import ANY_VERSION, Backend, Blob, Entry, Stat, VersionInfo, WriteMeta
from . import landed, messages, ranges
from .client import (
    MAX_VERSIONS_LISTED,
    ListedObject,
    NoVersion,
    ObjectClient,
    ObjectData,
    ObjectHead,
    Resent,
)
from .errors import AMBIGUOUS, ObjectErrorMapper, Op, StoreAction, StoreError, StoreFault, translate
from .keys import KeySpace, normalize, parents
from .parallel import READ_MANY_CONCURRENCY, READ_MANY_WINDOW_BYTES, concurrently, read_many
from .store import COMMON_OPTIONS, StoreFacts, split_options
from .stream import PinnedRangeStream

__all__ = ["READ_MANY_CONCURRENCY", "READ_MANY_WINDOW_BYTES", "ObjectStoreBackend"]


class ObjectStoreBackend(Backend):
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
        # Reads are started on the store's loop where ``read`` is the template's own (a
        # subclass that reads its own way keeps every read on it) and the client can.
        self._may_start_reads = _owner(type(self), "read") is _owner(type(self), "start_read")
        self.history_owners = history_owners and client.keeps_owner
        """``versions`` asks each listed version whose owner the listing lacks (S3 lists
        no metadata): one HEAD per version shown, so off by default."""
        self.capabilities = type(self).capabilities.model_copy(
            update={"copy_create_only_atomic": server_side_copy,
                    "write_meta": client.keeps_owner}
        )

    def __repr__(self) -> str:
        return f"{type(self).__name__}(root={self.root!r})"

    # -- errors ------------------------------------------------------------------
    def _classify(self, exc: BaseException, op: Op) -> StoreError:
        err = self._mapper.classify(exc, op)
        if err.fault is StoreFault.NOT_FOUND and op in ("list", "bucket"):
            # A listing or the bucket itself has no object to miss: the bucket is missing.
            return StoreError(StoreFault.BUCKET_MISSING, err.detail)
        return err

    def error_of(
        self,
        exc: BaseException,
        op: Op,
        key: str,
        action: StoreAction,
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

    def fault_of(self, exc: BaseException, op: Op) -> StoreFault | None:
        if isinstance(exc, (FsError, NoVersion)):
            return None
        return self._classify(exc, op).fault

    def _missing_or_directory(
        self, exc: BaseException, op: Op, key: str, action: StoreAction
    ) -> FsError:
        """A 404 for a key may be a "directory" (a prefix with children): only on this error
        path does it cost one listing, which also says whether the bucket is there."""
        err = self.error_of(exc, op, key, action)
        if err.code is not ErrorCode.FS_NOT_FOUND or err.reason == Reason.bucket_missing:
            return err
        try:
            is_dir = self._has_children(key, action)
        except FsError as probe:
            return probe if probe.reason == Reason.bucket_missing else err
        return messages.is_directory(key) if is_dir else err

    # -- probes ------------------------------------------------------------------
    def _has_children(self, key: str, action: StoreAction) -> bool:
        try:
            page = self._client.list_objects(self._keys.dir_prefix(key), delimiter=None, limit=1)
        except Exception as e:
            raise self.error_of(e, "list", key, action) from e
        return bool(page.objects or page.prefixes)

    def _head(self, key: str, action: StoreAction) -> ObjectHead | None:
        """The object at ``key``, or None when there is none."""
        try:
            return self._client.head(self._keys.name(key))
        except Exception as e:
            if self.fault_of(e, "head") is StoreFault.NOT_FOUND:
                return None
            raise self.error_of(e, "head", key, action) from e

    def look(self, key: str) -> tuple[bool | None, ObjectHead | None]:
        """After a failure: (whether an object is at ``key``, its head); (None, None) when
        the look failed too (it only refines an error we already have)."""
        try:
            head = self._head(key, "stat")
        except FsError:
            return None, None
        return head is not None, head

    def _is_object(self, key: str, action: StoreAction) -> bool:
        return self._head(key, action) is not None

    def _check_free(self, key: str, action: StoreAction) -> None:
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

    def _file_key(self, key: str, action: StoreAction) -> str:
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

    def start_read(self, key: str) -> Callable[[], Blob] | None:
        """``read(key)`` started now: calling the answer waits for it and returns or raises
        what ``read`` would. None where the client cannot start a read without a thread, or
        where the backend's class reads its own way (the caller then reads as it would
        otherwise). A bad key raises here, as ``read`` would.

        A grep through the content index keeps some 64 reads in flight. Run as threads,
        each one blocked in ``sync()`` on the store library's event loop, every read also
        costs a thread hand-off there and back (about a third of the client's CPU per read,
        measured on gcsfs); a client that offers ``start_get`` lets the read wait on the
        loop itself."""
        if not self._may_start_reads:
            return None
        key = self._file_key(key, "read")
        future = self._client.start_get(self._keys.name(key))
        if future is None:
            return None

        def result() -> Blob:
            try:
                got = future.result()
            except Exception as e:
                # On the caller's thread, not the loop's: telling a missing object from a
                # "directory" may take a listing request of its own.
                raise self._missing_or_directory(e, "get", key, "read") from e
            return Blob(data=got.data, version=got.version)

        return result

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> PinnedRangeStream:
        """A stream of ``key`` read by ranges, every range pinned to the version of the
        first: a change of the object while it is read fails the read, never mixes two
        versions."""
        key = self._file_key(key, "read")
        if chunk_size < 1:
            raise messages.not_positive("chunk_size")
        name = self._keys.name(key)
        try:
            first = self._first_range(name, chunk_size)
        except Exception as e:
            raise self._missing_or_directory(e, "get", key, "read") from e
        version = first.version

        def get_range(start: int, end: int) -> bytes:
            try:
                return self._client.get(name, start=start, end=end, pin=version).data
            except Exception as e:
                if self.fault_of(e, "get") in (StoreFault.PRECONDITION, StoreFault.NOT_FOUND):
                    raise messages.changed_while_read(key) from e
                raise self.error_of(e, "get", key, "read") from e

        return PinnedRangeStream(key, version, first.size, first.data, chunk_size, get_range)

    def _first_range(self, name: str, chunk_size: int) -> ObjectData:
        try:
            return self._client.get(name, start=0, end=chunk_size)
        except Exception as e:
            if self.fault_of(e, "get") is not StoreFault.BAD_RANGE:
                raise
        # Stores refuse every range of an empty object; a plain GET returns it whole.
        return self._client.get(name)

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

    # -- listings ----------------------------------------------------------------
    # Directories exist only as prefixes (and ``dir/`` markers): a key with nothing under
    # it is missing unless an object has that name, and listing that object is refused.
    def list(self, key: str) -> builtins.list[Entry]:
        return sorted(self.list_lazy(key), key=lambda e: (e.name, e.kind))

    def list_lazy(self, key: str) -> Iterator[Entry]:
        """The children of ``key``, page by page as the store returns them."""
        key = normalize(key)
        prefix = self._keys.dir_prefix(key)
        # Some stores repeat a prefix on every page whose objects fall under it
        # (fake-gcs-server): a directory is still given once. Object names are unique.
        dirs: set[str] = set()
        found = marker = False
        token: str | None = None
        while True:
            try:
                page = self._client.list_objects(
                    prefix, delimiter="/", token=token, limit=self.list_page_size
                )
            except Exception as e:
                raise self.error_of(e, "list", key, "list") from e
            for obj in page.objects:
                name = obj.name[len(prefix) :]
                if not name:
                    marker = True  # "dir/" itself: a directory marker some tools create
                    continue
                found = True
                yield _entry(key, name, "file", obj.size)
            for sub in page.prefixes:
                name = sub[len(prefix) :].rstrip("/")
                if name and name not in dirs:  # "d//x" makes an empty-named prefix
                    dirs.add(name)
                    found = True
                    yield _entry(key, name, "directory", None)
            token = page.next_token
            if not token:
                break
        if key and not found and not marker:
            if self._head(key, "list") is not None:
                raise messages.not_a_directory(key)
            raise messages.not_found(key)

    def walk(self, key: str) -> Iterator[Entry]:
        """Every file under ``key``, by flat listings (one per page, never one per
        directory), the pages one after the other: a request per 1,000 names."""
        return (e for e, _ in self.walk_versioned(key, split=False))

    def walk_versioned(self, key: str, *, split: bool = True
                       ) -> Iterator[tuple[Entry, Version | None]]:
        """``walk`` with the version the listing gives each file (None where the store's
        listing does not say it). With ``split`` and a client that lists from a place in the
        name order, a walk longer than a page lists the rest as several ranges at once
        (:mod:`.ranges`): the same names in the same order, a few more requests."""
        key = normalize(key)
        prefix = self._keys.dir_prefix(key)
        found = False
        token: str | None = None
        while True:
            try:
                page = self._client.list_objects(
                    prefix, delimiter=None, token=token, limit=self.list_page_size
                )
            except Exception as e:
                raise self.error_of(e, "list", key, "walk") from e
            for obj in page.objects:
                found = True
                yield from _listed(key, prefix, obj)
            token = page.next_token
            if token and page.objects and split and self._client.lists_after:
                yield from self._walk_ranges(key, prefix, page.objects[-1].name)
                return
            if not token:
                break
        if key and not found:
            if self._head(key, "walk") is not None:
                raise messages.not_a_directory(key)
            raise messages.not_found(key)

    def _walk_ranges(self, key: str, prefix: str, after: str
                     ) -> Iterator[tuple[Entry, Version | None]]:
        client = self._client
        try:
            cuts = ranges.boundaries(client, prefix, after)
            for obj in ranges.listed_after(client, prefix, after, cuts, self.list_page_size):
                yield from _listed(key, prefix, obj)
        except Exception as e:
            raise self.error_of(e, "list", key, "walk") from e

    # -- plain objects -----------------------------------------------------------
    # A file write on an object store first makes sure no "directory" sits at the key, and
    # a read that misses looks whether the key is one; a store that keeps objects of its
    # own (the observation shards, which never share a prefix with files) needs neither,
    # and each probe is a request.
    def get_plain(self, key: str) -> Blob | None:
        """The object at ``key`` and its version (one GET), or None when there is none."""
        key = self._file_key(key, "read")
        try:
            got = self._client.get(self._keys.name(key))
        except Exception as e:
            err = self.error_of(e, "get", key, "read")
            if err.code is ErrorCode.FS_NOT_FOUND and err.reason != Reason.bucket_missing:
                return None
            raise err from e
        return Blob(data=got.data, version=got.version)

    def put_plain(self, key: str, data: bytes, precondition: Precondition) -> Version:
        """Store ``data`` at ``key`` iff ``precondition`` holds (one PUT)."""
        key = self._file_key(key, "write")
        return self._put(key, data, precondition, self._expected(key, precondition), "write")

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
        action: StoreAction,
        owner: str | None = None,
    ) -> Version:
        write_id = secrets.token_hex(12)
        # The owner goes only to a client that keeps it (an optional part of its contract).
        extra = {"owner": owner} if self._client.keeps_owner and owner is not None else {}
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
        if not self._client.keeps_owner:
            return None
        key = self._file_key(key, "read")
        head = self._head(key, "read")
        if head is None:
            raise messages.not_found(key)
        return head.version, head.owner

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
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
        try:
            self._client.delete_telling_resends(name, if_match=expected)
        except Exception as failed:
            cause = failed.__cause__ if isinstance(failed, Resent) else None
            store_error = cause if isinstance(cause, Exception) else failed
            if expected is None:
                raise self._missing_or_directory(store_error, "delete", key, "delete") from (
                    store_error)
            exists = None
            if self.fault_of(store_error, "delete") is StoreFault.PRECONDITION:
                exists, _ = self.look(key)
            err = self.error_of(store_error, "delete", key, "delete", precondition, exists)
            if isinstance(err, Conflict):
                # A refusal answering the only request sent is another writer's change; one
                # answering a resend may have met our own delete, landed unanswered.
                err.resent = isinstance(failed, Resent)
            raise err from store_error

    # -- copies ------------------------------------------------------------------
    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        """In the store when it guards both sides of a copy in the request, else as a read
        of the source and a create-only write of the destination."""
        src = self._file_key(src, "copy")
        dst = self._file_key(dst, "copy")
        if isinstance(source, CreateOnly):
            raise messages.create_only_source(src)
        expected = self._expected(src, source)
        self._check_free(dst, "copy")
        if self.server_side_copy:
            return self._copy_in_store(src, dst, expected)
        # The store does not guard a copy's conditions: read the source (its version comes
        # with its bytes), then write the destination create-only, which the store guards.
        try:
            got = self._client.get(self._keys.name(src))
        except Exception as e:
            if expected is not None and self.fault_of(e, "get") is StoreFault.NOT_FOUND:
                raise messages.no_longer_exists(src) from e
            raise self._missing_or_directory(e, "get", src, "copy") from e
        if expected is not None and got.version != expected:
            raise messages.changed_since_read(src)
        return self._put(dst, got.data, CreateOnly(), None, "copy")

    def _copy_in_store(self, src: str, dst: str, expected: Version | None) -> Version:
        write_id = secrets.token_hex(12)
        try:
            return self._client.copy(
                self._keys.name(src),
                self._keys.name(dst),
                source_match=expected,
                write_id=write_id,
            )
        except Exception as e:
            fault = self.fault_of(e, "copy")
            if fault is StoreFault.NOT_FOUND:
                if expected is not None:
                    raise messages.no_longer_exists(src) from e
                raise self._missing_or_directory(e, "copy", src, "copy") from e
            if fault not in AMBIGUOUS:
                raise self.error_of(e, "copy", dst, "copy") from e
            dst_exists, head = self.look(dst)
            if head is not None and head.write_id == write_id:
                return head.version  # our copy landed; only its answer was lost
            if fault is StoreFault.PRECONDITION and dst_exists is False:
                # Not the destination's absence: the source's version failed.
                src_exists, _ = self.look(src)
                if src_exists is False:
                    raise messages.no_longer_exists(src) from e
                raise messages.changed_since_read(src) from e
            raise self.error_of(e, "copy", dst, "copy", CreateOnly(), dst_exists) from e

    # -- history -----------------------------------------------------------------
    # S3 versioning, GCS object versioning, Azure blob versions. Whether the bucket keeps
    # versions is asked once per backend, and not at all when a listing or a version
    # already proves it.
    def _require_history(self, key: str, action: StoreAction) -> None:
        if self._keeps_versions is None:
            try:
                self._keeps_versions = self._client.keeps_versions()
            except Exception as e:
                raise self.error_of(e, "bucket", key, action) from e
            if self._keeps_versions is None:
                return  # not known yet: the request that follows answers for this key
        if not self._keeps_versions:
            raise messages.history_off(self._mapper.store, self.bucket, key)

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        key = self._file_key(key, "read")
        if limit is not None and limit < 1:
            raise messages.not_positive("limit")
        if self._keeps_versions is False:
            raise messages.history_off(self._mapper.store, self.bucket, key)
        wanted = self.max_versions_listed if limit is None else min(
            limit, self.max_versions_listed)
        try:
            kept = self._client.list_versions(self._keys.name(key), wanted)
        except Exception as e:
            raise self.error_of(e, "versions", key, "read") from e
        if self._keeps_versions is None and _proves_history(kept):
            # The listing itself shows a kept version: no need to ask the bucket.
            self._keeps_versions = True
        self._require_history(key, "read")
        if not kept:
            if self._has_children(key, "read"):
                raise messages.is_directory(key)
            raise messages.not_found(key)
        kept = kept[:limit] if limit is not None else kept
        return self._with_owners(key, kept) if self.history_owners else kept

    def _with_owners(self, key: str, kept: builtins.list[VersionInfo]
                     ) -> builtins.list[VersionInfo]:
        """Each listed version whose owner the listing did not say, asked with one HEAD of
        that version (all at once); a version that cannot be asked keeps owner None."""
        head: Callable[..., ObjectHead] = self._client.head
        name = self._keys.name(key)

        def owner_of(info: VersionInfo) -> VersionInfo:
            if info.owner is not None or info.deleted:
                return info
            try:
                found = head(name, version=info.version)
            except Exception:
                return info
            return info.model_copy(update={"owner": found.owner})

        return concurrently([partial(owner_of, info) for info in kept])

    def read_version(self, key: str, version: Version) -> Blob:
        key = self._file_key(key, "read")
        if not _has_store_id(version):
            # A version carrying the store's own id of a kept version (an S3 VersionId)
            # proves the bucket keeps versions; any other is checked once per backend.
            self._require_history(key, "read")
        if version.kind != self._client.version_kind:
            raise messages.version_not_kept(key, str(version))
        try:
            got = self._client.get(self._keys.name(key), version=version)
        except Exception as e:
            if self.fault_of(e, "get") in (StoreFault.NOT_FOUND, StoreFault.INVALID):
                raise messages.version_not_kept(key, str(version)) from e
            raise self.error_of(e, "get", key, "read") from e
        return Blob(data=got.data, version=got.version)

    def read_version_id(self, key: str, version_id: str) -> Blob:
        """The version the store's own id names (an S3 VersionId, a GCS generation, an
        Azure version id), read directly: one GET, whatever the number of versions kept.
        FS_NOT_FOUND (``version_not_kept``) when it names no kept version of ``key``."""
        version = self._client.version_of_id(version_id)
        if version is None:
            raise messages.version_not_kept(self._file_key(key, "read"), version_id)
        return self.read_version(key, version)


def _has_store_id(version: Version) -> bool:
    return version.detail is not None and version.detail != "null"


def _proves_history(kept: Iterable[VersionInfo]) -> bool:
    """A listing that shows a kept version: more than one, or one with the store's id
    (S3 names versions of an unversioned bucket ``null``)."""
    listed = list(kept)
    return len(listed) > 1 or any(_has_store_id(k.version) for k in listed)


def _listed(key: str, prefix: str, obj: ListedObject
            ) -> Iterator[tuple[Entry, Version | None]]:
    rel = obj.name[len(prefix) :]
    if _addressable(rel):  # not a "dir/" marker, not "a//b"
        yield _entry(key, rel, "file", obj.size), obj.version


def _entry(
    parent: str, name: str, kind: Literal["file", "directory"], size: int | None
) -> Entry:
    key = posixpath.join(parent, name) if parent else name
    return Entry(key=key, name=name.rsplit("/", 1)[-1], kind=kind, size=size)


def _addressable(rel: str) -> bool:
    """A name a key can reach: no empty, ``.`` or ``..`` segment (so no ``dir/`` marker)."""
    return bool(rel) and all(part not in ("", ".", "..") for part in rel.split("/"))


def _owner(cls: type, name: str) -> type | None:
    """The class in ``cls``'s method order whose own body defines ``name``."""
    return next((c for c in cls.__mro__ if name in vars(c)), None)
