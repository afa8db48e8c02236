"""What it takes to open a Workspace again in another process: :class:`WorkspaceSpec`.

A task queue or a cluster ships work to processes that share no memory with the one that
built the workspace. ``pickle.dumps(ws)`` and ``pickle.dumps(ctx)`` send the workspace's
spec (and the context's owner), never its open clients, caches or locks; the receiving
process opens the workspace from the spec once and reuses it for every later task that
names the same spec (:func:`opened`), so a warm worker keeps its caches.

What an agent has read must be where every process finds it: a workspace whose
observations live in this process's memory refuses to be shipped (the other process would
start from nothing, and what it reads would never come back), unless a copy is asked for
with ``ws.spec(snapshot=True)``. See docs/distributed.md.
"""

from __future__ import annotations

import pickle
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError

from .backends.history import History
from .errors import ErrorCode, FsError
from .limits import Limits
from .messages import Reason
from .observations import MemoryObservations, ObservationEntry, ObservationStore

__all__ = [
    "ContextSpec", "WorkspaceSpec", "opened", "received_store", "shipped_store", "spec_of",
]

W = TypeVar("W")

OPENED_PER_PROCESS = 32
"""Workspaces one process keeps open for the specs it was sent (least recently used go)."""


class WorkspaceSpec(BaseModel):
    """A workspace by its arguments: ``Workspace.from_spec(spec)`` opens it again.

    One root (``url``) or a table of mounts (``mounts``: mount point -> URL, with
    ``storage_options``, ``read_only``, ``backend`` and ``history`` by mount point, as
    :meth:`Workspace.mount` takes them). ``observations``: the URL of the observation
    store (or ``(url, storage_options)``); ``store``: a store object that pickles itself;
    ``observed``: a copy of the in-process observations (owner -> key -> entry), only when
    asked for. ``plugins`` and ``fs`` travel pickled.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    url: str | None = None
    mounts: dict[str, str] | None = None
    storage_options: dict[str, Any] | None = None
    read_only: bool | tuple[str, ...] = False
    policy: bool = True
    limits: Limits | None = None
    backend: str | dict[str, str] | None = None
    history: History | dict[str, History] | None = None
    observations: str | tuple[str, dict[str, Any]] | None = None
    observed: dict[str, dict[str, ObservationEntry]] | None = None
    content_index: bool | None = None
    observation_key: bytes | None = Field(default=None, repr=False)
    load_entry_points: bool = True
    branch: str | None = None
    audit: Any = None
    """``audit=`` as given: True, a URL, ``(url, storage_options)`` or an fsspec
    filesystem instance (pickled)."""
    plugins: tuple[Any, ...] = Field(default=(), exclude=True)
    store: Any = Field(default=None, exclude=True)
    fs: Any = Field(default=None, exclude=True)

    def arguments(self) -> dict[str, Any]:
        """Keyword arguments of ``Workspace`` (or of ``Workspace.mount`` for mounts)."""
        common: dict[str, Any] = {
            "read_only": self.read_only, "policy": self.policy, "plugins": self.plugins,
            "limits": self.limits, "load_entry_points": self.load_entry_points,
            "backend": self.backend, "history": self.history,
            "observations": self.store if self.store is not None else self.observations,
            "observation_key": self.observation_key, "branch": self.branch,
            "audit": self.audit,
        }
        if self.observed is not None:
            common["observations"] = received_store(self.observed)
        if self.mounts is not None:
            return {"mounts": self.mounts, "storage_options": self.storage_options, **common}
        return {"url": self.url, "storage_options": self.storage_options, "fs": self.fs,
                "content_index": self.content_index, **common}

    def key(self) -> str | None:
        """What names this workspace among the open ones of a process; None when it
        carries objects (plugins, a store, a filesystem, a copy of observations) and is
        opened afresh each time."""
        if self.plugins or self.store is not None or self.fs is not None or self.observed:
            return None
        try:
            return self.model_dump_json()
        except PydanticSerializationError:  # storage options holding objects (credentials)
            return None


class ContextSpec(BaseModel):
    """A context by its workspace and owner: ``Context.from_spec(spec)``. ``observations``
    / ``store``: where the owner's observations are kept when not in the workspace's
    store (``ws.context(owner, observations=...)``)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    workspace: WorkspaceSpec
    owner: str
    store: Any = Field(default=None, exclude=True)


def spec_of(made: Mapping[str, Any], store: ObservationStore | None, *,
            snapshot: bool = False) -> WorkspaceSpec:
    """The spec of a workspace from the arguments it was made with (``made``) and its
    observation store (None: no policy)."""
    for target in [made.get("backend_instance"), *(made.get("mounts") or {}).values()]:
        if target is not None and not isinstance(target, str):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.ship_backend_instance,
                          details={"backend": type(target).__name__})
    given = made.get("observations")
    fields: dict[str, Any] = {k: v for k, v in made.items()
                              if k not in ("observations", "backend_instance", "ledger")}
    fields["plugins"] = tuple(_picklable("plugins", p) for p in made.get("plugins", ()))
    if fields.get("fs") is not None:
        _picklable("fs", fields["fs"])
    read_only = fields.get("read_only", False)
    if isinstance(read_only, str):  # one mount point, not its characters
        fields["read_only"] = (read_only,)
    elif isinstance(read_only, Iterable):
        fields["read_only"] = tuple(read_only)
    for name in ("mounts", "storage_options", "backend", "history"):
        if isinstance(fields.get(name), Mapping):
            fields[name] = dict(fields[name])
    if store is not None:
        if isinstance(given, (str, tuple)):  # a URL (with its options): opened there again
            fields["observations"] = given
        else:
            kept = shipped_store(store, snapshot=snapshot)
            if isinstance(kept, dict):
                fields["observed"] = kept
            else:
                fields["store"] = kept
    return WorkspaceSpec(**fields)


def shipped_store(store: ObservationStore, *, snapshot: bool = False
                  ) -> ObservationStore | dict[str, dict[str, ObservationEntry]]:
    """What of an observation store travels: the store itself when it pickles (a store
    every process reaches), a copy of an in-process store's entries when ``snapshot``,
    else FsError naming the fix."""
    if type(store) is MemoryObservations:  # a subclass may keep them elsewhere (a file)
        if not snapshot:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.ship_in_process_observations)
        return {owner: store.entries(owner) for owner in store.owners()}
    return _picklable("observations", store)


def received_store(shipped: ObservationStore | dict[str, dict[str, ObservationEntry]] | None
                   ) -> ObservationStore | None:
    """The store :func:`shipped_store` sent, in the receiving process (a copy of entries
    becomes an in-process store of its own)."""
    if not isinstance(shipped, dict):
        return shipped
    copy = MemoryObservations()
    for owner, entries in shipped.items():
        copy.put(owner, entries)
    return copy


def _picklable(what: str, value: W) -> W:
    try:
        pickle.dumps(value)
    except Exception as e:  # what cannot be pickled raises anything from TypeError on
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.ship_unpicklable,
                      details={"what": what, "error": f"{type(e).__name__}: {e}"}) from None
    return value


_open: OrderedDict[str, Any] = OrderedDict()
_open_lock = threading.Lock()


def opened(spec: WorkspaceSpec, make: Callable[[], W]) -> W:
    """The workspace this process already opened for ``spec``, or ``make()``'s, kept for
    the next task that names it (at most :data:`OPENED_PER_PROCESS`)."""
    key = spec.key()
    if key is None:
        return make()
    with _open_lock:
        if key in _open:
            _open.move_to_end(key)
            found: W = _open[key]
            return found
    made = make()
    with _open_lock:
        kept: W = _open.setdefault(key, made)
        _open.move_to_end(key)
        while len(_open) > OPENED_PER_PROCESS:
            _open.popitem(last=False)
    return kept
