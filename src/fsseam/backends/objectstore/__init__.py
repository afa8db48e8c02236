"""One object-store template: S3, GCS, Azure (and any other store) are a client and a mapper.

What the template does once for every store (``backend.py``): key mapping under
``bucket/prefix``, the root guard, directories inferred from prefixes and ``dir/`` markers,
the rule that a path is a file or a directory but never both (checked on the create path),
write-id recovery after a lost answer, the guard against versions minted elsewhere, the
pinned ranged-read stream (``stream.py``), delete / copy / walk / versions with their
preconditions, and what every store error means (``errors.py``; ``messages.py`` has one
constructor per error, whose sentence is the message catalogue's, :mod:`fsseam.messages`).

Adding a store is a package laid out like ``fsseam-s3``, ``fsseam-gcs`` and ``fsseam-azure``
(the steps below are the ones that package took for Azure Blob):

``client.py`` -- a class satisfying :class:`ObjectClient` for one container:
    * ``version_kind`` (``"etag"``) and ``silent_delete_of_missing`` (does an
      unconditional delete of a missing blob succeed?);
    * ``get`` (one GET; a range ``[start, end)``; ``pin=`` a version the bytes must still
      be at, as ``If-Match``; ``version=`` an older version, as ``versionid``), ``head``,
      ``put`` (``If-Match`` / ``If-None-Match: *`` in the upload request itself, the write
      id in the blob's metadata under :data:`WRITE_ID_KEY`; block uploads above a size),
      ``delete`` (``If-Match``), ``copy`` (only if the store guards a copy's destination
      and source in the request), ``list_objects`` (a prefix, with or without a delimiter,
      one page), ``list_versions`` (newest first) and ``keeps_versions``; optionally
      ``keeps_owner = True`` with an ``owner`` keyword on ``put`` (stored under
      :data:`OWNER_KEY`) and a ``version`` keyword on ``head``, so history names writers.
    Each method makes its request(s) and raises the SDK's exceptions unchanged; versions are
    :class:`~fsseam.versions.Version` values of ``version_kind`` (raise :class:`NoVersion`
    if the store does not say one).

``errors.py`` -- a class satisfying :class:`ObjectErrorMapper`: ``store`` (its name in
    messages), ``configure`` (what to configure when credentials are missing or refused),
    ``grant`` (what to grant when a permission is missing) and ``classify(exc, op)``, which
    says which :class:`Fault` an exception is (412 -> PRECONDITION, 404 -> NOT_FOUND or
    BUCKET_MISSING, 401 -> UNAUTHENTICATED, 403 -> DENIED, ...). Nothing else: the template
    decides what each fault means for the caller, and the catalogue words it. A sentence
    only this store needs (a limit of its own, say) is added to the catalogue with
    :func:`fsseam.messages.add` and raised as ``FsError(code, reason=..., details=...)``,
    never as a literal message (see ``fsseam_s3/_messages.py``).

``backend.py`` -- ``class AzureBackend(ObjectStoreBackend)`` with ``capabilities`` (what the
    store decides itself: say ``delete_if_match_atomic`` only if it checks ``If-Match`` on
    DELETE) and a ``from_url`` that builds the filesystem (adlfs), the client and the mapper
    and calls ``ObjectStoreBackend.__init__`` with a :class:`KeySpace`.

Then register the protocol in the ``fsseam.backends`` entry-point group and run
``fsseam.testing.BackendConformance`` (once more with a versioned container) against an
emulator (Azurite), counting requests at the server.
"""

from . import messages
from .backend import ObjectStoreBackend
from .client import (
    MAX_VERSIONS_LISTED,
    OWNER_KEY,
    WRITE_ID_KEY,
    ListedObject,
    ListPage,
    NoVersion,
    ObjectClient,
    ObjectData,
    ObjectHead,
)
from .errors import (
    HTTP_RUNGS,
    Action,
    Fault,
    ObjectErrorMapper,
    Op,
    Rung,
    StatusLadder,
    StoreError,
    rung,
    translate,
)
from .keys import KeySpace, normalize, parents
from .store import COMMON_OPTIONS, StoreFacts, SyncBridge, split_options, unusable_credentials
from .stream import PinnedRangeStream

__all__ = [
    "COMMON_OPTIONS",
    "HTTP_RUNGS",
    "MAX_VERSIONS_LISTED",
    "OWNER_KEY",
    "WRITE_ID_KEY",
    "Action",
    "Fault",
    "KeySpace",
    "ListPage",
    "ListedObject",
    "NoVersion",
    "ObjectClient",
    "ObjectData",
    "ObjectErrorMapper",
    "ObjectHead",
    "ObjectStoreBackend",
    "Op",
    "PinnedRangeStream",
    "Rung",
    "StatusLadder",
    "StoreError",
    "StoreFacts",
    "SyncBridge",
    "messages",
    "normalize",
    "parents",
    "rung",
    "split_options",
    "translate",
    "unusable_credentials",
]
