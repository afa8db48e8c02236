"""Observations in a Pydantic AI message history: what a conversation has read travels in
its tool results, as metadata the model never sees.

Each tool result of :class:`~fsseam.integrations.pydantic_ai.FsseamToolset` carries, under
the key :data:`HISTORY_KEY` of ``ToolReturnPart.metadata``, the entries its call recorded
(an observation, an absence, an undo change) that no earlier result carried. At every run
the toolset rebuilds the conversation's entries from the history it is given (per key the
later recording wins, :func:`~fsseam.observations.newer`), so a history saved as JSON and
loaded in another process carries the reads exactly as far as the history goes: a
truncated or forked history carries what it still holds, nothing more.

Each entry is sealed for the toolset's owner, the workspace and the conversation
(:mod:`fsseam.observations.sealing`; signed when the workspace has an ``observation_key``):
an entry written by hand, copied from another conversation's history or altered is ignored
(the file must be read again).

Imports no framework: the messages are read by attribute.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..observations import MemoryObservations, ObservationEntry, ObservationStore, newer
from ..observations.sealing import Binding, opened, sealed

__all__ = [
    "HISTORY_FORMAT", "HISTORY_KEY", "AsOwner", "Carried", "HistoryObservations", "claim",
    "entries_from", "metadata_of", "release",
]

HISTORY_KEY = "fsseam"
"""The key of a tool result's metadata under which fsseam's entries travel."""

HISTORY_FORMAT = 1


class Carried(BaseModel):
    """What one tool result carries: the entries of ``workspace`` (its URL) it recorded,
    each as its JSON with its seal."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    format: int = HISTORY_FORMAT
    workspace: str
    entries: dict[str, dict[str, Any]]


class HistoryObservations:
    """One conversation's observations for one run: an in-memory store seeded from the
    history, which remembers what has not travelled yet (:meth:`take`)."""

    def __init__(self, entries: Mapping[str, ObservationEntry] | None = None) -> None:
        self.memory = MemoryObservations()
        self._lock = threading.Lock()
        self._unsent: dict[str, dict[str, ObservationEntry]] = {}
        self._seed = dict(entries or {})

    def __repr__(self) -> str:
        return f"HistoryObservations(seeded={len(self._seed)})"

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        mine = self.memory.get(owner, key)
        return mine if mine is not None else self._seed.get(key)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        self.memory.put(owner, {k: _won(self._seed.get(k), e) for k, e in entries.items()})
        with self._lock:
            unsent = self._unsent.setdefault(owner, {})
            for key, entry in entries.items():
                unsent[key] = _won(unsent.get(key), entry)

    def clear(self) -> None:
        """Forget everything (the run is over: its history holds what travels)."""
        with self._lock:
            self.memory = MemoryObservations()
            self._seed.clear()
            self._unsent.clear()

    def take(self, owner: str) -> dict[str, ObservationEntry]:
        """The owner's entries recorded since the last take: the next tool result carries
        them."""
        with self._lock:
            return self._unsent.pop(owner, {})


class AsOwner:
    """A store of the caller's, seen through one owner name: whichever owner a run binds,
    its entries are ``owner``'s in ``store``."""

    def __init__(self, store: ObservationStore, owner: str) -> None:
        self.store = store
        self.owner = owner

    def __repr__(self) -> str:
        return f"AsOwner({self.store!r}, {self.owner!r})"

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        return self.store.get(self.owner, key, fresh=fresh)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        self.store.put(self.owner, entries)


_RUNNING: weakref.WeakKeyDictionary[object, set[str]] = weakref.WeakKeyDictionary()
_RUNNING_LOCK = threading.Lock()


def claim(policy: object, owner: str, otherwise: str) -> str:
    """The owner a run binds: ``owner``, or ``otherwise`` while another run in progress
    on the same policy holds ``owner`` (two runs of one conversation at once: a binding
    of one name would hand one run's store to the other)."""
    with _RUNNING_LOCK:
        running = _RUNNING.setdefault(policy, set())
        chosen = otherwise if owner in running else owner
        running.add(chosen)
        return chosen


def release(policy: object, owner: str) -> None:
    with _RUNNING_LOCK:
        _RUNNING.get(policy, set()).discard(owner)


def _won(a: ObservationEntry | None, b: ObservationEntry) -> ObservationEntry:
    won = newer(a, b)
    assert won is not None
    return won


def metadata_of(binding: Binding, entries: Mapping[str, ObservationEntry]) -> dict[str, Any]:
    """A tool result's metadata carrying ``entries``, sealed for ``binding``."""
    carried = Carried(workspace=binding.workspace,
                      entries={k: sealed(binding, k, e) for k, e in entries.items()})
    return {HISTORY_KEY: carried.model_dump(mode="json")}


def entries_from(messages: Iterable[Any], binding: Binding) -> dict[str, ObservationEntry]:
    """The entries a history carries for the workspace of ``binding`` whose seals vouch
    for them there (per key the later recording wins); one that was not recorded for this
    owner, workspace and conversation, or was altered, is left out (logged).

    Raises ValueError on an entry fsseam did not write (a corrupt or foreign format): a
    history that cannot be read is refused, never read as "nothing was read"."""
    found: dict[str, ObservationEntry] = {}
    for message in messages:
        for part in getattr(message, "parts", ()):
            metadata = getattr(part, "metadata", None)
            if not isinstance(metadata, dict) or HISTORY_KEY not in metadata:
                continue
            call_id = getattr(part, "tool_call_id", "?")
            carried = _carried(metadata[HISTORY_KEY], call_id)
            if carried.workspace != binding.workspace:
                continue
            for key, raw in carried.entries.items():
                try:
                    entry = opened(binding, key, raw,
                                   where=f"ToolReturnPart({call_id!r}).metadata")
                except ValidationError as e:
                    raise ValueError(
                        f"the fsseam observations in the result of tool call {call_id!r} "
                        f"are corrupt: {e}") from e
                if entry is not None:
                    found[key] = _won(found.get(key), entry)
    return found


def _carried(value: Any, call_id: str) -> Carried:
    if isinstance(value, dict) and value.get("format") != HISTORY_FORMAT:
        raise ValueError(
            f"the fsseam observations in the result of tool call {call_id!r} have format "
            f"{value.get('format')!r}; this fsseam reads format {HISTORY_FORMAT}"
        )
    try:
        return Carried.model_validate(value)
    except ValidationError as e:
        raise ValueError(
            f"the fsseam observations in the result of tool call {call_id!r} are corrupt: {e}"
        ) from e
