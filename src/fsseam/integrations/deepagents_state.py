"""deepagents' observations in the LangGraph state of each thread.

What an agent has read lives in a state channel of fsseam's own
(:data:`OBSERVATIONS_KEY`), so it is checkpointed with the thread and survives exactly what
the checkpoint survives: a run resumed from a checkpointer in another process (or after a
human approved an interrupted edit) edits what it read before, and a thread that never read
a file cannot edit it, whatever other threads of the same agent read.

Per tool call, :class:`FsseamMiddleware` seeds a :class:`StateObservations` store of the
call's own from the state the call was given, and returns what the call recorded (only
that) in the tool's state update, merged per key by :func:`merge_observations` (the later
recording wins, as in every observation store). Two runs of one thread at once, or two
calls of one response, never see what the other recorded before it reaches the state.
The call runs as the model's tool call: each change it makes through a fsseam backend
carries its ``tool_call_id`` (:mod:`fsseam.calling`; a replay of the call changes nothing).

Each entry in the channel is sealed for the backend's owner, the workspace and the thread
(:mod:`fsseam.observations.sealing`; signed when the workspace has an
``observation_key``): one written into a checkpoint by hand, copied from another thread or
altered is ignored, and the file must be read again. Imports no deepagents: the middleware
is LangChain's, the backend is handed in.
"""

from __future__ import annotations

import hashlib
import threading
import uuid
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, Final, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import ToolMessage
from langgraph.config import get_config
from langgraph.types import Command
from pydantic import ValidationError

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..observations import ObservationEntry, newer
from ..observations.sealing import SEAL_FIELD, Binding, opened, sealed
from ..tools.base import failed
from ..workspace import Context
from ._common import framework_call

if TYPE_CHECKING:
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.runtime import Runtime

__all__ = [
    "MAX_STATE_OBSERVATIONS",
    "OBSERVATIONS_KEY",
    "RUN_KEY",
    "FsseamMiddleware",
    "FsseamState",
    "StateObservations",
    "merge_observations",
]

OBSERVATIONS_KEY: Final = "fsseam_observations"
"""The state channel: ``{scope: {key: ObservationEntry as JSON}}``; a scope is one backend
(its owner name and workspace URL), so two backends of one agent never mix their keys."""
RUN_KEY: Final = "fsseam_run"
"""The state channel naming the owner of a run that has no thread id (one per run)."""
MAX_STATE_OBSERVATIONS = 10_000
"""Entries kept per scope in a thread's state; past it the oldest (by recording time)
expire and read as "not read yet". The channel is written with each checkpoint that
changes it, so it is kept small."""

Scoped = dict[str, dict[str, dict[str, Any]]]


def _wins(kept: Mapping[str, Any] | None, new: Mapping[str, Any]) -> bool:
    """Whether ``new`` replaces ``kept`` (:func:`~fsseam.observations.newer` on the JSON
    form, without parsing every entry the state holds)."""
    if kept is None:
        return True
    a, b = float(kept.get("at", 0.0)), float(new.get("at", 0.0))
    if a != b:
        return b > a
    before, after = _parsed(kept), _parsed(new)
    return newer(before, after) is after


def _parsed(raw: Mapping[str, Any]) -> ObservationEntry:
    """The entry an element of the channel says (its seal aside: the reducer only orders
    entries; a call checks the seal of each one it uses)."""
    return ObservationEntry.model_validate({k: v for k, v in raw.items() if k != SEAL_FIELD})


def merge_observations(left: Scoped | None, right: Scoped | None) -> Scoped:
    """The channel's reducer: per scope and key, the entry recorded later wins; the oldest
    entries past :data:`MAX_STATE_OBSERVATIONS` expire."""
    merged: Scoped = dict(left or {})
    for scope, entries in (right or {}).items():
        kept = dict(merged.get(scope, {}))
        for key, entry in entries.items():
            if _wins(kept.get(key), entry):
                kept[key] = entry
        if len(kept) > MAX_STATE_OBSERVATIONS:
            oldest = sorted(kept, key=lambda k: float(kept[k].get("at", 0.0)))
            for key in oldest[: len(kept) - MAX_STATE_OBSERVATIONS]:
                del kept[key]
        merged[scope] = kept
    return merged


class FsseamState(AgentState[Any]):
    """fsseam's channels of an agent's state (private: not in the agent's input or output,
    and not handed to subagents)."""

    fsseam_observations: NotRequired[
        Annotated[Scoped, PrivateStateAttr, merge_observations]
    ]
    fsseam_run: NotRequired[Annotated[str, PrivateStateAttr]]


class StateObservations:
    """One thread's entries of one scope while a tool call runs: the state's entries, each
    parsed (and its seal checked against ``binding``) when the policy first asks for its
    key (a call costs the same however many files the thread has read), and what the call
    records kept apart for the state update."""

    def __init__(self, binding: Binding) -> None:
        self.binding = binding
        self._lock = threading.Lock()
        self._raw: Mapping[str, Any] = {}
        self._entries: dict[str, ObservationEntry] = {}
        self._unsent: dict[str, ObservationEntry] = {}

    def __repr__(self) -> str:
        return f"StateObservations(entries={len(self._raw) + len(self._entries)})"

    def seed(self, raw: Mapping[str, Any]) -> None:
        """The scope's entries as the state the call was given holds them (JSON)."""
        with self._lock:
            self._raw = raw

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        with self._lock:
            mine = self._entries.get(key)
            if key not in self._raw:
                return mine
            raw = self._raw[key]
            if not isinstance(raw, Mapping):
                raise _corrupt(type(raw).__name__)
            try:
                kept = opened(self.binding, key, raw,
                              where=OBSERVATIONS_KEY)
            except ValidationError as e:
                raise _corrupt(str(e)) from e
            return newer(kept, mine)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        with self._lock:
            for key, entry in entries.items():
                won = newer(self._entries.get(key), entry)
                assert won is not None
                self._entries[key] = self._unsent[key] = won

    def drain(self) -> dict[str, ObservationEntry]:
        """What was recorded since the last drain (the state update of one call)."""
        with self._lock:
            out, self._unsent = self._unsent, {}
            return out


def _corrupt(found: str) -> FsError:
    """The refusal of a channel fsseam did not write: never read as "nothing read" (that
    would refuse every edit and hide a broken checkpoint)."""
    return FsError(ErrorCode.FS_BACKEND, reason=Reason.deepagents_observations_corrupt,
                   details={"channel": OBSERVATIONS_KEY, "found": found[:200]})


def entries_of(state: Any, scope: str) -> Mapping[str, Any]:
    """The scope's entries in a thread's state, as JSON (each checked when it is used)."""
    channel = state.get(OBSERVATIONS_KEY) if isinstance(state, Mapping) else None
    if channel is None:
        return {}
    raw = channel.get(scope) if isinstance(channel, Mapping) else channel
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _corrupt(type(raw).__name__)
    return raw


def thread_of(config: Mapping[str, Any] | None, state: Any) -> str | None:
    """The thread (or, without a thread id, the run) a call belongs to."""
    configurable = (config or {}).get("configurable") or {}
    thread = configurable.get("thread_id")
    if thread is not None:
        return str(thread)
    run = state.get(RUN_KEY) if isinstance(state, Mapping) else None
    return f"run-{run}" if run else None


def with_update(result: ToolMessage | Command[Any], scope: str,
                delta: Mapping[str, ObservationEntry],
                binding: Binding) -> ToolMessage | Command[Any]:
    """The tool's result carrying ``delta`` into the thread's state, sealed for
    ``binding``."""
    if not delta:
        return result
    update = {OBSERVATIONS_KEY: {scope: {k: sealed(binding, k, e) for k, e in delta.items()}}}
    if isinstance(result, ToolMessage):
        return Command(update={"messages": [result], **update})
    if result.graph is not None or not isinstance(result.update, (dict, type(None))):
        return result  # an update of another graph, or of a shape we do not extend
    merged = dict(result.update or {})
    merged[OBSERVATIONS_KEY] = merge_observations(merged.get(OBSERVATIONS_KEY), update[
        OBSERVATIONS_KEY])
    return replace(result, update=merged)


_CURRENT: ContextVar[Mapping[int, Context] | None] = ContextVar("fsseam_deepagents_calls",
                                                               default=None)
"""The context each backend works in during the tool call in progress (by backend)."""
_CACHED_THREADS: Final = 256
"""Contexts of threads kept for calls outside a tool call (deepagents' own middleware)."""


class ThreadContexts:
    """A backend's contexts: one owner per thread (``PREFIX:THREAD``), each tool call with
    a store of its own seeded from the state it was given."""

    def __init__(self, base: Context) -> None:
        self.base = base
        self.prefix = base.owner
        self.scope = f"{base.owner} {base.workspace.url}"
        self._lock = threading.Lock()
        self._held: dict[str, int] = {}
        self._outside: dict[str, Context] = {}

    def owner_of(self, thread: str) -> str:
        return f"{self.prefix}:{thread}"

    @property
    def current(self) -> Context:
        """The tool call's context; outside one (deepagents' middleware evicting a large
        result, summarizing), the thread's owner on the workspace's own store; outside a
        graph, the backend's own context."""
        found = (_CURRENT.get() or {}).get(id(self))
        if found is not None:
            return found
        try:
            thread = thread_of(get_config(), None)
        except RuntimeError:  # not in a LangGraph run
            return self.base
        if thread is None:
            return self.base
        with self._lock:
            context = self._outside.pop(thread, None) or self.base.workspace.context(
                self.owner_of(thread))
            self._outside[thread] = context
            while len(self._outside) > _CACHED_THREADS:
                del self._outside[next(iter(self._outside))]
        return context

    @contextmanager
    def tool_call(self, state: Any, config: Mapping[str, Any] | None
                  ) -> Iterator[StateObservations | None]:
        """The tool call of a thread: yields its store, or None outside any thread and
        inside another tool call of this backend (a subagent's, within its parent's
        ``task``: what it records belongs to the parent's thread and update)."""
        thread = thread_of(config, state)
        if thread is None or id(self) in (_CURRENT.get() or {}):
            yield None
            return
        seed = entries_of(state, self.scope)
        owner = self.owner_of(thread)
        workspace = self.base.workspace
        store = StateObservations(Binding(self.prefix, workspace.url, thread,
                                          workspace.observation_key))
        store.seed(seed)
        with self._lock:
            context = workspace.context(owner, observations=store)
            self._held[owner] = self._held.get(owner, 0) + 1
        token = _CURRENT.set({**(_CURRENT.get() or {}), id(self): context})
        try:
            yield store
        finally:
            _CURRENT.reset(token)
            self._release(owner)

    def _release(self, owner: str) -> None:
        with self._lock:
            count = self._held[owner]
            if count > 1:
                self._held[owner] = count - 1
                return
            del self._held[owner]
            policy = self.base.workspace.policy
            if policy is not None:
                # Between calls the thread's observations are in its state only.
                policy.bind(owner, policy.store)


class FsseamMiddleware(AgentMiddleware[FsseamState, Any, Any]):
    """Keeps a backend's observations in the thread's state. Get it as
    ``backend.middleware`` and pass it with the backend::

        create_deep_agent(model, backend=backend, middleware=[backend.middleware])
    """

    state_schema = FsseamState

    def __init__(self, threads: ThreadContexts) -> None:
        super().__init__()
        self.threads = threads
        self.tools = []

    @property
    def name(self) -> str:
        # Two backends of one agent (routes of a CompositeBackend) each bring one; the name
        # becomes part of graph node names, where a URL's ':' is not allowed.
        digest = hashlib.sha256(self.threads.scope.encode()).hexdigest()[:12]
        return f"FsseamMiddleware_{digest}"

    def before_agent(self, state: Any, runtime: Runtime[Any]) -> dict[str, Any] | None:
        # A run without a thread id gets an owner of its own, kept for the run only.
        if isinstance(state, Mapping) and state.get(RUN_KEY):
            return None
        if thread_of(get_config(), None) is not None:
            return None
        return {RUN_KEY: uuid.uuid4().hex}

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        try:
            with (self.threads.tool_call(request.state, request.runtime.config) as store,
                  framework_call(_call_id(request))):
                result = handler(request)
                delta = store.drain() if store is not None else {}
        except FsError as e:
            return _refusal(request, e)
        return with_update(result, self.threads.scope, delta, store.binding
                           ) if store is not None else result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        try:
            with (self.threads.tool_call(request.state, request.runtime.config) as store,
                  framework_call(_call_id(request))):
                result = await handler(request)
                delta = store.drain() if store is not None else {}
        except FsError as e:
            return _refusal(request, e)
        return with_update(result, self.threads.scope, delta, store.binding
                           ) if store is not None else result


def _call_id(request: ToolCallRequest) -> str | None:
    """The model's id of the tool call (LangChain's ``tool_call_id``): each change the
    call makes through a fsseam backend runs under it (:mod:`fsseam.calling`)."""
    given = request.tool_call.get("id")
    return str(given) if given else None


def _refusal(request: ToolCallRequest, error: FsError) -> ToolMessage:
    """The tool error of a call the thread's state cannot guard."""
    name = str(request.tool_call["name"])
    return ToolMessage(content=failed(name, error).text, name=name,
                       tool_call_id=request.tool_call["id"], status="error")


def with_middleware(backend: Any, middleware: Iterable[Any]) -> list[Any]:
    """``middleware`` and the :class:`FsseamMiddleware` of each fsseam backend in
    ``backend`` (itself, or the default and routes of a ``CompositeBackend``) it lacks."""
    out = list(middleware)
    parts = [backend, getattr(backend, "default", None),
             *(getattr(backend, "routes", None) or {}).values()]
    for part in parts:
        mine = getattr(part, "middleware", None)
        if isinstance(mine, FsseamMiddleware) and all(m is not mine for m in out):
            out.append(mine)
    return out
