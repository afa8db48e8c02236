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
from typing import ClassVar, Protocol, runtime_checkable

from ...versions import Version
from ..base import VersionInfo

__all__ = [
    "MAX_VERSIONS_LISTED",
    "OWNER_KEY",
    "WRITE_ID_KEY",
    "ListPage",
    "ListedObject",
    "ListsAfter",
    "NoVersion",
    "ObjectClient",
    "ObjectData",
    "ObjectHead",
    "Resent",
    "StartsGets",
    "TellsResends",
    "VersionsById",
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
    sent more than once: an earlier attempt, whose answer was lost, may have done what was
    asked, so a 404 or a 412 may answer our own landed request rather than another
    writer's change. ``sends``: how many times it went out (0: not known)."""

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


class ObjectClient(Protocol):
    """What a store supplies to :class:`~.backend.ObjectStoreBackend`.

    Conditions are passed as the version the caller holds (``if_match``) or as
    "nothing may be there" (``if_absent``); the store must decide them in the request itself.
    A failed condition raises whatever the store library raises for HTTP 412.

    A client whose class sets ``keeps_owner = True`` also takes ``owner: str | None`` in
    ``put`` (stored under :data:`OWNER_KEY` beside the write id) and ``version: Version |
    None`` in ``head`` (the metadata of that stored version), and says ``owner`` in the
    :class:`~fsseam.backends.base.VersionInfo` of ``list_versions`` where its listing
    carries metadata. The template passes neither keyword to other clients. A client that
    can name a version by the store's own id also satisfies :class:`VersionsById`.
    """

    version_kind: ClassVar[str]
    """The :attr:`Version.kind` this client mints (``etag``, ``generation``)."""
    silent_delete_of_missing: ClassVar[bool]
    """An unconditional delete of a missing object succeeds (S3) rather than failing (GCS);
    the template then looks before it deletes, to report FS_NOT_FOUND."""
    keeps_owner: ClassVar[bool]
    """``put`` takes ``owner`` and ``head`` takes ``version`` (see above): history can say
    who wrote each version."""
    bucket: str

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
        ...

    def head(self, name: str) -> ObjectHead:
        """The object's metadata (one request)."""
        ...

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
        ...

    def delete(self, name: str, *, if_match: Version | None) -> None:
        """Remove the object; with ``if_match``, only while it is at that version."""
        ...

    def copy(
        self, source: str, target: str, *, source_match: Version | None, write_id: str
    ) -> Version:
        """A copy made by the store: ``target`` must not exist, ``source`` must be at
        ``source_match`` (when given). Only called when the backend is told the store
        guards both conditions (``server_side_copy``)."""
        ...

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
        ...

    def list_versions(self, name: str, limit: int | None) -> list[VersionInfo]:
        """The versions the store keeps of exactly ``name``, newest first: the first
        ``limit`` of them (``None``: :data:`MAX_VERSIONS_LISTED`), following the listing's
        pages as far as needed to gather them and no further."""
        ...

    def keeps_versions(self) -> bool | None:
        """Whether the bucket keeps older versions (versioning enabled); None when the store
        cannot tell yet (Azure reads it off the blobs, and an empty container has none): the
        template then asks again at the next history call."""
        ...


@runtime_checkable
class VersionsById(Protocol):
    """Optional for a client: it names a stored version by the store's own id, so that a
    restore by that id reads it with one GET instead of a listing. Looked up once, when
    the backend is made."""

    def version_of_id(self, version_id: str) -> Version | None:
        """The version that the store's own id ``version_id`` (as history shows it) names,
        readable with ``get(name, version=...)`` without a listing; None when the string
        cannot be such an id."""
        ...


@runtime_checkable
class TellsResends(Protocol):
    """Optional for a client that knows whether it sent a delete more than once (its store
    library's retries counted). Without it, every refusal of a guarded delete is taken as
    one that may answer a resend: a move then never takes back its copy on such an answer,
    since the source may be gone by its own delete. Looked up once, when the backend is
    made."""

    def delete_telling_resends(self, name: str, *, if_match: Version | None) -> None:
        """``delete``, raising :class:`Resent` from the store's exception when the failure
        answered a request sent more than once; the store's exception unchanged when it
        answered the only one sent."""
        ...


@runtime_checkable
class ListsAfter(Protocol):
    """Optional for a client: it lists from a place in the name order, so that a long walk
    is listed as several ranges at once (:mod:`.ranges`). Looked up when a walk asks."""

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
        store that can bound its pages by it does): the caller drops them."""
        ...


@runtime_checkable
class StartsGets(Protocol):
    """Optional for a client whose store library runs its requests on an event loop of its
    own (s3fs, gcsfs): a whole-object read is started there and waited on later, so a grep
    keeps its reads in flight without a thread for each (the template's ``start_read``)."""

    def start_get(self, name: str) -> Future[ObjectData]:
        """``get(name)`` started now, not waited on: the future holds what it would return
        or raise. It may be waited on from any thread but the loop's own."""
        ...
