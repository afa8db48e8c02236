"""One object-store template: S3, GCS, Azure (and any other store) are a client and a mapper.

What the template does once for every store (``backend.py``): key mapping under
``bucket/prefix``, the root guard, directories inferred from prefixes and ``dir/`` markers,
the rule that a path is a file or a directory but never both (checked on the create path),
write-id recovery after a lost answer, the guard against versions minted elsewhere, the
pinned ranged-read stream (``stream.py``), delete / copy / walk / versions with their
preconditions, and what every store error means (``errors.py``; ``messages.py`` has one
constructor per error, whose sentence is the message catalogue's, :mod:`fsseam.messages`).

Adding a store is a package laid out like ``fsseam-s3``, ``fsseam-gcs`` and ``fsseam-azure``
(docs/backends.md, "Writing an object store", lists the names and what each costs):

``client.py`` -- a subclass of :class:`ObjectClient` for one container, which names every
    operation (fsspec style: the required ones raise ``NotImplementedError`` in the base,
    the optional ones have a working default):
    * facts, class attributes with defaults: ``version_kind`` (``"etag"``; required),
      ``silent_delete_of_missing`` (does an unconditional delete of a missing blob
      succeed?), ``keeps_owner`` (``True``: an ``owner`` keyword on ``put``, stored under
      :data:`OWNER_KEY`, and a ``version`` keyword on ``head``, so history names writers),
      ``lists_after`` (``True``: it overrides ``list_objects_after``);
    * required: ``get`` (one GET; a range ``[start, end)``; ``pin=`` a version the bytes
      must still be at, as ``If-Match``; ``version=`` an older version), ``head``, ``put``
      (``If-Match`` / ``If-None-Match: *`` in the upload request itself, the write id in
      the blob's metadata under :data:`WRITE_ID_KEY`), ``delete`` (``If-Match``), ``copy``
      (only if the store guards a copy's destination and source in the request),
      ``list_objects`` (a prefix, with or without a delimiter, one page), ``list_versions``
      (newest first) and ``keeps_versions``;
    * optional: ``version_of_id`` (default: names none), so a restore by the store's own
      version id is one GET; ``list_objects_after`` (with ``lists_after``), so a long walk
      is listed as several ranges at once; ``start_get`` (default: None, nothing
      started), so a grep's many reads wait on the store's event loop instead of a thread
      each; ``delete_telling_resends`` (default: every failure may answer a resend), so a
      guarded delete's refusal that answered the only request sent is taken as another
      writer's change (raise :class:`Resent` when the library resent it).
    Coroutines of the store's async fsspec filesystem run through a :class:`SyncBridge`
    (``self._run = SyncBridge(fs)``). Each method raises the SDK's exceptions unchanged;
    versions are :class:`~fsseam.versions.Version` values of ``version_kind`` (raise
    :class:`NoVersion` if the store does not say one).

``errors.py`` -- a mapper satisfying :class:`ObjectErrorMapper`: ``store`` (its name in
    messages), ``configure`` and ``grant`` (the names of its two clauses in the catalogue,
    :mod:`fsseam.messages`: what to configure when credentials are missing or refused,
    what to grant when a permission is missing) and ``classify(exc, op)``, which reads the
    store's HTTP status and error code off the exception and asks the store's
    :class:`StatusLadder` (its table of :class:`Rung` values; :data:`HTTP_RUNGS` when
    statuses say it all) which :class:`StoreFault` it is. The template decides what each fault
    means for the caller, and the catalogue words it. A sentence only this store needs is
    added to the catalogue and raised as ``FsError(code, reason=..., details=...)``.

``transport.py`` (optional) -- the hot requests (a GET, a HEAD, a single upload) sent from
    the calling thread by :class:`~fsseam.backends.objectstore.direct.Connections`, built,
    signed, retried and failed by the store library's own pieces, where the library's event
    loop and pipeline would cost ten times the request's own client CPU; the client keeps
    the library's path for anything the transport cannot reproduce.

``backend.py`` -- ``class AzureBackend(ObjectStoreBackend)`` with ``facts`` (a
    :class:`StoreFacts`: the version kind, a note, and any condition the store does *not*
    decide in the request; the template builds ``capabilities``), ``store_options`` (the
    options its backend reads beyond :data:`COMMON_OPTIONS`), and the class methods
    ``parse_url`` (``bucket/prefix`` of a URL) and ``make_filesystem`` (its fsspec
    filesystem; refused credentials raise :func:`unusable_credentials`). The template's
    ``from_url`` splits ``storage_options`` and calls the store's ``__init__(fs, root,
    **options)``, which builds the client and calls ``ObjectStoreBackend.__init__`` with a
    :class:`KeySpace`.

Then register the protocols in the ``fsseam.backends`` entry-point group (and add them to
``fsseam/backends/adapters.json`` for the install hint), give the shared suites of
:mod:`fsseam.testing.stores` a rig, and run ``fsseam.testing.BackendConformance`` (once
more with a versioned container) against an emulator, counting requests at the server.
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
    Resent,
)
from .errors import (
    HTTP_RUNGS,
    ObjectErrorMapper,
    Op,
    Rung,
    StatusLadder,
    StoreAction,
    StoreError,
    StoreFault,
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
    "Resent",
    "Rung",
    "StatusLadder",
    "StoreAction",
    "StoreError",
    "StoreFacts",
    "StoreFault",
    "SyncBridge",
    "messages",
    "normalize",
    "parents",
    "rung",
    "split_options",
    "translate",
    "unusable_credentials",
]
