"""Observations in any store fsseam can write: many machines share them.

Layout under the store's root (docs/observations.md)::

    <scope>/<owner>/<shard>.json

``scope`` is a digest of the workspace's canonical URL (two workspaces sharing one prefix
never mix), ``owner`` a digest of the owner, ``shard`` the key's hash modulo the number of
shards. Each shard object is an :class:`ObservationShard` and says, inside, which scope,
owner and shard it is; an object that says otherwise is refused, never overwritten.

Every update of a shard is the store's own compare-and-swap, conditional on the version
this process last read (``IfMatch``; ``CreateOnly`` for a new shard). On a lost swap the
shard is read again, the updates merged key by key (:func:`~fsseam.observations.store.newer`)
and the write retried, so two workers updating one owner never lose an update.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..backends.base import Backend, Blob
from ..backends.registry import open_backend
from ..errors import Conflict, ErrorCode, FsError
from ..messages import Clause, Part, Reason
from ..versions import CreateOnly, IfMatch, Precondition, Version
from .store import ObservationEntry, newer

__all__ = ["SHARD_FORMAT", "ObservationShard", "ShardedObservations", "corrupt", "digest",
           "refused"]

SHARD_FORMAT: Literal["fsseam-observations/1"] = "fsseam-observations/1"


def digest(text: str) -> str:
    """A short, stable name for a scope or an owner (16 hex digits of sha256)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class ObservationShard(BaseModel):
    """One shard object: part of one owner's entries in one workspace."""

    model_config = ConfigDict(extra="forbid")
    format: Literal["fsseam-observations/1"]
    scope: str
    owner: str
    shard: int
    entries: dict[str, ObservationEntry] = {}


@dataclass(frozen=True)
class _Kept:
    """A shard as this process last read or wrote it (``version`` None: it did not exist)."""

    version: Version | None
    entries: dict[str, ObservationEntry]


class ShardedObservations:
    """Observations kept as small shard objects in ``backend`` (any fsseam backend).

    ``scope``: the workspace's canonical URL. ``name``: how failures name the store.
    ``shards``: shards per owner (fixed for a store: changing it re-shards nothing and
    forgets what was kept). ``max_per_shard``: past it the oldest entries of the shard
    expire (read as "not read yet"); an owner keeps at most ``shards * max_per_shard``.
    ``max_age``: seconds after which an entry expires (None: never). ``retries``: attempts
    at one shard's compare-and-swap before the call fails. ``cached_shards``: shards this
    process keeps (least recently used go).
    """

    def __init__(self, backend: Backend, *, scope: str, name: str, shards: int = 64,
                 max_per_shard: int = 2048, max_age: float | None = None,
                 retries: int = 8, cached_shards: int = 4096) -> None:
        if shards < 1 or max_per_shard < 1 or retries < 1:
            raise ValueError("shards, max_per_shard and retries must be positive")
        self.backend = backend
        self.scope = scope
        self.name = name
        self.shards = shards
        self.max_per_shard = max_per_shard
        self.max_age = max_age
        self.retries = retries
        self.cached_shards = cached_shards
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, int], _Kept] = OrderedDict()
        self.opened: tuple[str, dict[str, Any]] | None = None
        """(url, storage_options) when opened from a URL: how another process opens it."""

    def __repr__(self) -> str:
        return f"ShardedObservations({self.name!r})"

    def __getstate__(self) -> dict[str, object]:
        # Sent to another process (a task queue's worker): the store, not this one's cache.
        # A store opened from a URL is opened again there (backends hold locks, clients).
        state = dict(self.__dict__)
        del state["_lock"]
        state["_kept"] = OrderedDict()
        if self.opened is not None:
            del state["backend"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()
        if self.opened is not None:
            self.backend = open_backend(self.opened[0], dict(self.opened[1]))

    # -- layout --------------------------------------------------------------
    def shard_of(self, key: str) -> int:
        return int(hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()[:8],
                   16) % self.shards

    def object_key(self, owner: str, shard: int) -> str:
        return f"{digest(self.scope)}/{digest(owner)}/{shard:04d}.json"

    # -- the protocol --------------------------------------------------------
    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        shard = self.shard_of(key)
        kept = None if fresh else self._cached(owner, shard)
        if kept is None:
            kept = self._load(owner, shard)
        return self._live(kept.entries.get(key))

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        groups: dict[int, dict[str, ObservationEntry]] = {}
        for key, entry in entries.items():
            groups.setdefault(self.shard_of(key), {})[key] = entry
        if len(groups) == 1:
            [(shard, group)] = groups.items()
            self._put_shard(owner, shard, group)
            return
        # One round trip for a call whose updates fall in several shards.
        with ThreadPoolExecutor(max_workers=min(len(groups), 16)) as pool:
            futures = [pool.submit(self._put_shard, owner, s, g) for s, g in groups.items()]
        errors = [e for f in futures if (e := f.exception()) is not None]
        if errors:
            raise errors[0]

    def entries(self, owner: str) -> dict[str, ObservationEntry]:
        """Every live entry of ``owner`` (one request per shard: for tools and tests)."""
        out: dict[str, ObservationEntry] = {}
        for shard in range(self.shards):
            for key, entry in self._load(owner, shard).entries.items():
                if self._live(entry) is not None:
                    out[key] = entry
        return out

    # -- shards --------------------------------------------------------------
    def _cached(self, owner: str, shard: int) -> _Kept | None:
        with self._lock:
            kept = self._kept.get((owner, shard))
            if kept is not None:
                self._kept.move_to_end((owner, shard))
            return kept

    def _keep(self, owner: str, shard: int, kept: _Kept) -> None:
        with self._lock:
            self._kept[(owner, shard)] = kept
            self._kept.move_to_end((owner, shard))
            while len(self._kept) > self.cached_shards:
                self._kept.popitem(last=False)

    def _load(self, owner: str, shard: int) -> _Kept:
        key = self.object_key(owner, shard)
        try:
            blob = self._read(key)
        except FsError as e:
            raise self._unreachable(e) from e
        if blob is None:
            kept = _Kept(None, {})
            self._keep(owner, shard, kept)
            return kept
        kept = _Kept(blob.version, self._parse(key, blob.data, owner, shard).entries)
        self._keep(owner, shard, kept)
        return kept

    def _read(self, key: str) -> Blob | None:
        # An object store's plain read is one request: a file read that misses would also
        # look for a "directory" at the key.
        return self.backend.get_plain(key)

    def _write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        return self.backend.put_plain(key, data, precondition)  # no probe for a "directory"

    def _parse(self, key: str, data: bytes, owner: str, shard: int) -> ObservationShard:
        shown = f"{self.name.rstrip('/')}/{key}"
        try:
            parsed = ObservationShard.model_validate_json(data)
        except ValidationError as e:
            raise corrupt(shown, e) from None
        if (parsed.scope, parsed.owner, parsed.shard) != (self.scope, owner, shard):
            raise refused(shown, Clause.observations_foreign, found=parsed.shard)
        return parsed

    def _put_shard(self, owner: str, shard: int, updates: Mapping[str, ObservationEntry]) -> None:
        kept = self._cached(owner, shard) or self._load(owner, shard)
        key = self.object_key(owner, shard)
        for _ in range(self.retries):
            merged = self._merged(kept.entries, updates)
            if merged == kept.entries:
                return
            body = ObservationShard(format=SHARD_FORMAT, scope=self.scope, owner=owner,
                                    shard=shard, entries=merged)
            precondition = IfMatch(kept.version) if kept.version is not None else CreateOnly()
            try:
                version = self._write(key, body.model_dump_json().encode(), precondition)
            except Conflict:
                kept = self._load(owner, shard)  # another worker won: merge with its shard
                continue
            except FsError as e:
                raise self._unreachable(e) from e
            self._keep(owner, shard, _Kept(version, merged))
            return
        raise FsError(ErrorCode.FS_BACKEND, reason=Reason.observations_contended,
                      details={"store": self.name, "attempts": self.retries})

    def _merged(self, entries: Mapping[str, ObservationEntry],
                updates: Mapping[str, ObservationEntry]) -> dict[str, ObservationEntry]:
        merged = dict(entries)
        for key, entry in updates.items():
            won = newer(merged.get(key), entry)
            assert won is not None
            merged[key] = won
        if self.max_age is not None:
            merged = {k: e for k, e in merged.items() if self._live(e) is not None}
        if len(merged) > self.max_per_shard:
            oldest = sorted(merged, key=lambda k: merged[k].at)
            for k in oldest[: len(merged) - self.max_per_shard]:
                del merged[k]
        return merged

    def _live(self, entry: ObservationEntry | None) -> ObservationEntry | None:
        if entry is None or self.max_age is None or entry.at >= time.time() - self.max_age:
            return entry
        return None

    def _unreachable(self, err: FsError) -> FsError:
        return FsError(ErrorCode.FS_BACKEND, reason=Reason.observations_unreachable,
                       details={"store": self.name, "detail": f"{err.code.value}: {err.message}"})


def refused(shown: str, part: str, **fields: object) -> FsError:
    """The refusal of the object ``shown``: ``part`` (a clause) says why."""
    return FsError(ErrorCode.FS_BACKEND, reason=Reason.observations_corrupt,
                   details={"object": shown, "detail": Part(part), **fields})


def corrupt(shown: str, err: ValidationError) -> FsError:
    """The refusal of an object that does not validate (``shown`` names it)."""
    first = err.errors()[0]
    if first["type"] == "json_invalid":
        return refused(shown, Clause.observations_not_json)
    if first["loc"] == ("format",):
        return refused(shown, Clause.observations_format, found=repr(first.get("input")),
                       expected=repr(SHARD_FORMAT))
    return refused(shown, Clause.observations_malformed,
                   field=".".join(str(p) for p in first["loc"]) or "/", problem=first["msg"])
