"""The client contract: the storage calls one object store makes for the template.

A client is bound to one bucket and speaks in object *names* (the full name inside the
bucket) and in :class:`~fsseam.versions.Version` values it mints itself. It knows nothing of
keys, roots, directories, preconditions or FsError: it makes one request (or the fewest its
store needs for the call, such as a multipart upload) and raises the store library's own
exceptions unchanged, for the :class:`~.errors.ObjectErrorMapper` to classify.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import ClassVar

from ...versions import Version
from ..base import VersionInfo

__all__ = [
    "MAX_VERSIONS_LISTED",
    "OWNER_KEY",
    "WRITE_ID_KEY",
    "ListPage",
    "ListedObject",
    "NoVersion",
    "ObjectClient",
    "ObjectData",
    "ObjectHead",
    "Resent",
]

WRITE_ID_KEY = "fsseam-write"
"""The user metadata key (S3 ``x-amz-meta-fsseam-write``, GCS ``metadata.fsseam-write``) that
names the write which stored an object, so that a write whose answer was lost can be
recognised as ours by one look at the object."""

OWNER_KEY = "fsseam-owner"
"""The user metadata key, beside :data:`WRITE_ID_KEY`, that names the owner whose write made
the object (kept by clients with ``keeps_owner``), for history to say who wrote a version."""


MAX_VERSIONS_LISTED = 10_000
"""The most versions one listing of a name gathers, across as many pages as that takes
(10 on S3 and GCS, whose pages hold 1,000): the bound on what ``history`` and a restore by
a prefix of an id can cost. A full version id is read directly, past this bound too."""


class NoVersion(Exception):
    """The store answered without the version of what it returned or stored."""


class Resent(Exception):
    """The store's refusal (its exception is the ``__cause__``) of a request the client
    sent more than once, or may have been: an earlier attempt, whose answer was lost, may
    have done what was asked, so a 404 or a 412 may answer our own landed request rather
    than another writer's change. ``sends``: how many times it went out (0: not known)."""

    def __init__(self, sends: int) -> None:
        super().__init__(sends)
        self.sends = sends


@dataclass(frozen=True)
class ObjectData:
    """Bytes of one GET and what the same response said about them."""

    data: bytes
    version: Version
    size: int
    """The object's whole size (a ranged GET returns part of it)."""


@dataclass(frozen=True)
class ObjectHead:
    """An object's metadata, without its bytes."""

    version: Version
    size: int
    write_id: str | None = None
    """The value of :data:`WRITE_ID_KEY` in its metadata, if any."""
    owner: str | None = None
    """The value of :data:`OWNER_KEY` in its metadata, if any."""


@dataclass(frozen=True)
class ListedObject:
    name: str
    size: int
    version: Version | None = None
    """The version a read of the object would return now, where the listing says it (S3's
    ETag, GCS's generation, Azure's ETag): what a content index is keyed by."""


@dataclass(frozen=True)
class ListPage:
    """One page of a prefix listing, in ascending name order."""

    objects: Sequence[ListedObject] = ()
    prefixes: Sequence[str] = ()
    """With a delimiter: the "subdirectory" prefixes, each ending with the delimiter."""
    next_token: str | None = None


class ObjectClient:
    """What a store supplies to :class:`~.backend.ObjectStoreBackend`: one class naming
    every operation, as fsspec's ``AbstractFileSystem`` does. A store's client subclasses
    it, sets its facts and overrides the required operations (the base raises
    ``NotImplementedError`` for those) and whichever optional ones its store offers (the
    base's defaults work, or answer "not offered" without a request).

    Conditions are passed as the version the caller holds (``if_match``) or as
    "nothing may be there" (``if_absent``); the store must decide them in the request itself.
    A failed condition raises whatever the store library raises for HTTP 412.

    A client with ``keeps_owner`` stores ``owner`` in ``put`` (under :data:`OWNER_KEY`
    beside the write id), reads the metadata of a stored ``version`` in ``head``, and says
    ``owner`` in the :class:`~fsseam.backends.base.VersionInfo` of ``list_versions`` where
    its listing carries metadata. The template passes neither keyword to other clients.
    """

    # -- facts ---------------------------------------------------------------------
    version_kind: ClassVar[str]
    """The :attr:`Version.kind` this client mints (``etag``, ``generation``): required."""
    silent_delete_of_missing: ClassVar[bool] = False
    """An unconditional delete of a missing object succeeds (S3) rather than failing (GCS);
    the template then looks before it deletes, to report FS_NOT_FOUND."""
    keeps_owner: ClassVar[bool] = False
    """``put`` takes ``owner`` and ``head`` takes ``version`` (see above): history can say
    who wrote each version."""
    lists_after: ClassVar[bool] = False
    """The client overrides :meth:`list_objects_after`: a long walk is then listed as
    several ranges at once (:mod:`.ranges`). A fact rather than an answer of the call,
    since the walk asks for the ranges' boundaries before it lists from any place."""
    bucket: str

    # -- required operations -------------------------------------------------------
    def get(
        self,
        name: str,
        *,
        start: int | None = None,
        end: int | None = None,
        pin: Version | None = None,
        version: Version | None = None,
    ) -> ObjectData:
        """One GET of bytes ``[start, end)`` (all without ``start``). ``pin``: fail unless the
        object is still at that version (a later range of a stream). ``version``: read that
        stored version, current or not."""
        raise NotImplementedError

    def head(self, name: str) -> ObjectHead:
        """The object's metadata (one request)."""
        raise NotImplementedError

    def put(
        self,
        name: str,
        data: bytes,
        *,
        if_match: Version | None,
        if_absent: bool,
        write_id: str,
    ) -> Version:
        """Store ``data`` under ``name``, with ``write_id`` in its metadata, iff the condition
        holds; return the new version."""
        raise NotImplementedError

    def delete(self, name: str, *, if_match: Version | None) -> None:
        """Remove the object; with ``if_match``, only while it is at that version."""
        raise NotImplementedError

    def copy(
        self, source: str, target: str, *, source_match: Version | None, write_id: str
    ) -> Version:
        """A copy made by the store: ``target`` must not exist, ``source`` must be at
        ``source_match`` (when given). Only called when the backend is told the store
        guards both conditions (``server_side_copy``)."""
        raise NotImplementedError

    def list_objects(
        self,
        prefix: str,
        *,
        delimiter: str | None,
        token: str | None = None,
        limit: int | None = None,
    ) -> ListPage:
        """One page of the names starting with ``prefix``; ``limit`` caps the page (``None``:
        the store's default, 1,000 on S3 and GCS)."""
        raise NotImplementedError

    def list_versions(self, name: str, limit: int | None) -> list[VersionInfo]:
        """The versions the store keeps of exactly ``name``, newest first: the first
        ``limit`` of them (``None``: :data:`MAX_VERSIONS_LISTED`), following the listing's
        pages as far as needed to gather them and no further."""
        raise NotImplementedError

    def keeps_versions(self) -> bool | None:
        """Whether the bucket keeps older versions (versioning enabled); None when the store
        cannot tell yet (Azure reads it off the blobs, and an empty container has none): the
        template then asks again at the next history call."""
        raise NotImplementedError

    # -- optional operations, each with its default ------------------------------------
    def version_of_id(self, version_id: str) -> Version | None:
        """The version that the store's own id ``version_id`` (as history shows it) names,
        readable with ``get(name, version=...)`` without a listing, so that a restore by that
        id is one GET; None when the string cannot be such an id. The default names none:
        a restore by id then says the version is not kept, and asks nothing."""
        return None

    def delete_telling_resends(self, name: str, *, if_match: Version | None) -> None:
        """``delete``, raising :class:`Resent` from the store's exception when the failure
        answered a request sent more than once; the store's exception unchanged when it
        answered the only one sent.

        The default cannot count sends: every failure may answer a resend (``Resent(0)``),
        so a move never takes back its copy on such an answer, since the source may be
        gone by its own delete. A client whose store library's retries are counted
        (:mod:`.sends`) overrides it."""
        try:
            self.delete(name, if_match=if_match)
        except Exception as e:
            raise Resent(0) from e

    def list_objects_after(
        self,
        prefix: str,
        *,
        after: str,
        end: str | None,
        token: str | None = None,
        limit: int | None = None,
    ) -> ListPage:
        """One page of the names starting with ``prefix`` that sort after ``after``, with
        no delimiter; ``token`` (from the last page, asked with the same ``after`` and
        ``end``) goes on. The store may also return ``after`` itself (GCS's bound is
        inclusive, S3's exclusive) and names from ``end`` on (where the caller stops; a
        store that can bound its pages by it does): the caller drops them. Called only on
        a client with :attr:`lists_after`; the default is not offered."""
        raise NotImplementedError

    def start_get(self, name: str) -> Future[ObjectData] | None:
        """``get(name)`` started now, not waited on: the future holds what it would return
        or raise, and may be waited on from any thread but the loop's own. For a client
        whose store library runs its requests on an event loop of its own (s3fs, gcsfs),
        so a grep keeps its reads in flight without a thread for each. The default starts
        nothing (None, no request): the caller reads on a thread of its own."""
        return None
