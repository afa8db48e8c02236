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

from ..backends.registry import open_backend
from .file import FileObservations
from .memory import Ledger, MemoryObservations
from .sharded import ShardedObservations
from .store import ObservationStore

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
        os.makedirs(path, exist_ok=True)  # a local root must exist to be opened
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


def reserved_prefix(spec: ObservationsSpec, workspace_url: str) -> str | None:
    """The key (relative to the workspace root) under which observations at ``spec`` lie
    inside the workspace, or None when they lie outside it."""
    if isinstance(spec, tuple):
        spec = spec[0]
    if not isinstance(spec, str):
        return None
    inner, outer = canonical_url(spec), canonical_url(workspace_url)
    if inner.split("://")[0] != outer.split("://")[0]:
        return None
    root = outer.rstrip("/") + "/"
    if outer.endswith("://"):
        root = outer
    if not inner.startswith(root):
        return None
    return inner[len(root):].strip("/") or None
