"""From what a Workspace is given (``observations=``) to an observation store.

- a store object: used as it is;
- a path or ``file://`` URL ending in ``.json``: one ledger file (:class:`FileObservations`);
- any other URL (``s3://bucket/.fsseam-observations/``, ``gs://...``, ``memory://obs``, a
  local directory): small shard objects there (:class:`ShardedObservations`), opened with
  fsseam's own backends so every update is the store's compare-and-swap;
- ``(url, storage_options)``: that URL with those options. A bare URL takes the
  workspace's ``storage_options`` when its protocol is the workspace's, else none.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from typing import Any

from fsspec.core import split_protocol

from ..backends.base import Backend
from ..backends.registry import backend_class, open_backend
from ..errors import ErrorCode, FsError
from ..messages import Reason
from .file import FileObservations
from .sharded import ShardedObservations
from .store import Ledger, MemoryObservations, ObservationStore

__all__ = [
    "ObservationsSpec",
    "canonical_url",
    "open_observations",
    "reserved_prefix",
    "shared_memory",
]

ObservationsSpec = str | tuple[str, dict[str, Any]] | ObservationStore
"""What ``observations=`` takes."""

_LOCAL = {None, "file", "local"}
SHARED_URLS = 32
"""Workspace URLs whose in-process observations this process keeps (least recent go)."""

_shared: OrderedDict[str, MemoryObservations] = OrderedDict()
_shared_lock = threading.Lock()


def canonical_url(url: str) -> str:
    """One spelling per storage root: ``protocol://path`` without trailing ``/``; a local
    path made absolute with its links resolved."""
    protocol, path = split_protocol(url)
    if protocol in _LOCAL:
        return "file://" + os.path.realpath(os.path.expanduser(str(path)))
    return f"{protocol}://{path.strip('/')}"


def open_observations(
    spec: ObservationsSpec,
    *,
    workspace_url: str,
    storage_options: dict[str, Any] | None = None,
    **settings: Any,
) -> ObservationStore:
    """The store ``spec`` names (see the module). ``settings`` go to the store of shard
    objects (``shards``, ``max_per_shard``, ``max_age``, ``retries``)."""
    if isinstance(spec, tuple):
        url, options = spec
    elif isinstance(spec, str):
        url = spec
        same = split_protocol(url)[0] == split_protocol(workspace_url)[0]
        options = dict(storage_options or {}) if same else {}
    else:
        return spec
    protocol, path = split_protocol(url)
    if protocol in _LOCAL and path.endswith(".json"):
        return FileObservations(path)
    if protocol in _LOCAL:
        # A local root must exist to be opened; made as named once resolved (``a/b/..``
        # makes no ``b``).
        os.makedirs(os.path.normpath(path), exist_ok=True)
    backend = open_backend(url, dict(options))
    store = ShardedObservations(backend, scope=canonical_url(workspace_url), name=url,
                                **settings)
    store.opened = (url, dict(options))
    return store


def shared_memory(url: str, storage_options: dict[str, Any] | None) -> MemoryObservations:
    """The in-process observations of the workspace at ``url``: one store per canonical URL
    and options in this process, so a new Workspace on the same files (a notebook cell run
    again) keeps its owners' reads, as the files are kept."""
    key = canonical_url(url) + " " + json.dumps(storage_options or {}, sort_keys=True,
                                                default=repr)
    with _shared_lock:
        store = _shared.get(key)
        if store is None:
            store = _shared[key] = MemoryObservations(Ledger())
        _shared.move_to_end(key)
        while len(_shared) > SHARED_URLS:
            _shared.popitem(last=False)
        return store


def reserved_prefix(store: ObservationStore, backend: Backend) -> str | None:
    """The key, relative to the root of ``backend`` (a workspace's), under which ``store``
    keeps its objects when they lie inside that root; None when they lie outside it.

    Told by where the objects are, not by how the store was named: the storage (``s3://``
    and ``s3a://`` are one, ``gs://`` and ``gcs://``, a local path however spelled) and the
    root as the storage names it, whether the store was opened from a URL or built over a
    backend. Stores of other kinds (a framework's state, this process's memory) keep no
    objects in any root. Raises FsError (FS_INVALID_ARGUMENT) for a store at the root
    itself: the agent's files and the store's objects would be one folder.
    """
    where = _location(store)
    if where is None:
        return None
    kind, inner = where
    ws = _bare(backend)
    if kind is not _kind(ws):
        return None
    outer = _path(ws.root)
    if inner == outer:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.observations_at_root,
                      details={"store": _shown(store), "root": ws.root})
    if not outer:
        return inner
    return inner[len(outer) + 1:] if inner.startswith(outer + "/") else None


def _location(store: ObservationStore) -> tuple[type, str] | None:
    """The storage kind and the canonical path of the store's objects (a ledger: its
    file), or None for a store that keeps none."""
    if isinstance(store, FileObservations):
        try:
            local = backend_class("file")
        except FsError:  # no local backend here: no workspace on local disk either
            return None
        return local, _path(os.path.realpath(store.path))
    if isinstance(store, ShardedObservations):
        bare = _bare(store.backend)
        return _kind(bare), _path(bare.root)
    return None


def _bare(backend: Backend) -> Backend:
    """The backend under wrappers that keep another's storage (fsseam's kept history)."""
    seen = 0
    while isinstance(getattr(backend, "inner", None), Backend) and seen < 8:
        backend = backend.inner  # type: ignore[attr-defined]
        seen += 1
    return backend


def _kind(backend: Backend) -> type:
    # The filesystem class names the storage whatever protocol alias opened it (s3fs for
    # s3:// and s3a://, whichever adapter serves it); a backend without one is its own kind.
    fs = getattr(backend, "fs", None)
    return type(fs) if fs is not None else type(backend)


def _path(root: str) -> str:
    return "/".join(part for part in root.split("/") if part)


def _shown(store: ObservationStore) -> str:
    opened = getattr(store, "opened", None)
    if isinstance(opened, tuple):
        return str(opened[0])
    return str(getattr(store, "name", repr(store)))
