"""Where the Agents SDK integration keeps what a conversation has read: in the SDK's own
state, so it survives exactly what that state survives.

- A mapping run context (``Runner.run(..., context={...})``): under its ``"fsseam"`` key,
  as plain JSON (:class:`ContextObservations`). ``RunState.to_string()`` carries a mapping
  context as it is and ``RunState.from_string()`` gives it back, so an interrupted run
  resumed in another process keeps its reads; a context dict passed to every turn of a
  chat keeps them across turns.
- A conversation kept in an ``SQLiteSession`` (:func:`session_context`): a table of
  fsseam's own in the session's database, keyed by the session id
  (:class:`SessionObservations`); cleared with the session.
- Any other run (no context, or one that is not a mapping): a fresh owner per run, in the
  workspace's own store; nothing links two runs.

Each entry kept in the SDK's state is sealed for the conversation and workspace it was
recorded for (:mod:`fsseam.observations.sealing`; signed when the workspace has an
``observation_key``): one written by hand, copied from another conversation or altered is
ignored, and the file must be read again.

Imports no framework: a run context is read by duck typing (``context``, ``usage``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import uuid
import weakref
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import closing, contextmanager, suppress
from typing import Any

from pydantic import ValidationError

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..observations import ObservationEntry, newer
from ..observations.sealing import Binding, opened, sealed
from ..workspace import Context, Workspace

__all__ = [
    "DEFAULT_MAX_OBSERVATIONS",
    "STATE_FORMAT",
    "STATE_KEY",
    "ContextObservations",
    "Conversations",
    "SessionObservations",
    "session_context",
]

STATE_KEY = "fsseam"
"""The run context's key fsseam keeps its state under (the rest is the application's)."""
STATE_FORMAT = 1
DEFAULT_MAX_OBSERVATIONS = 2_000
"""Entries kept per conversation in the SDK's state; past it the oldest expire (and read as
"not read yet"). A run state string grows with them, hence a smaller bound than in-process."""
TABLE = "fsseam_observations"
_SELECT = f"SELECT ENTRY FROM {TABLE} WHERE SESSION_ID = ? AND KEY = ?"
_WHERE = f"context[{STATE_KEY!r}]"

_LOCK = threading.Lock()
"""Guards every context mapping's fsseam state: a turn's tool calls run at once."""


def _foreign(where: str, detail: str) -> FsError:
    return FsError(ErrorCode.FS_BACKEND, reason=Reason.agents_state_foreign,
                   details={"where": where, "detail": detail})


def _entry(raw: Any, binding: Binding, key: str, where: str) -> ObservationEntry | None:
    """The entry kept as ``raw`` (JSON text or its dict), or None when its seal does not
    vouch for it here; a value that is no entry is refused as foreign."""
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
        if not isinstance(value, Mapping):
            raise _foreign(where, f"entry={type(value).__name__}")
        return opened(binding, key, value, where=where)
    except ValidationError as e:
        raise _foreign(where, str(e.errors()[0]["type"])) from e
    except ValueError as e:  # JSON text that does not parse
        raise _foreign(where, "entry=str") from e


def _expired(kept: Mapping[str, Any], at: Mapping[str, float], limit: int) -> list[str]:
    """Keys to drop so that ``limit`` remain, oldest first; a tenth more than needed, so
    the sort runs once every many calls, not on every call past the bound."""
    if len(kept) <= limit:
        return []
    drop = len(kept) - limit + limit // 10
    return sorted(kept, key=lambda k: at[k])[:drop]


class ContextObservations:
    """One conversation's entries in a run context mapping, at ``context["fsseam"]``:
    ``{"format": 1, "owner": ..., "entries": {key: entry as JSON, with its seal}}``.
    ``workspace``: the URL the entries are sealed for; ``key``: its observation key."""

    def __init__(self, context: MutableMapping[str, Any], *,
                 max_entries: int = DEFAULT_MAX_OBSERVATIONS, workspace: str = "",
                 key: bytes | None = None) -> None:
        self.context = context
        self.max_entries = max_entries
        self.workspace = workspace
        self.key = key

    def __repr__(self) -> str:
        return f"ContextObservations(owner={self.owner()!r})"

    def state(self) -> dict[str, Any]:
        """The fsseam state of the context, made on first use; one of another format (or
        damaged) is refused, never reset (that would forget what the agent read)."""
        with _LOCK:
            state = self.context.get(STATE_KEY)
            if state is None or (isinstance(state, dict) and not state):
                made = {"format": STATE_FORMAT, "owner": f"run-{uuid.uuid4().hex}",
                        "entries": {}}
                if state is None:
                    self.context[STATE_KEY] = state = made
                else:  # an empty dict the application declared (a typed context's field)
                    state.update(made)
        if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
            found = state.get("format") if isinstance(state, dict) else type(state).__name__
            raise _foreign(_WHERE, f"format={found!r}")
        if not isinstance(state.get("owner"), str):
            raise _foreign(_WHERE, f"owner={state.get('owner')!r}")
        if not isinstance(state.setdefault("entries", {}), dict):
            raise _foreign(_WHERE, f"entries={type(state['entries']).__name__}")
        return state

    def owner(self) -> str:
        return str(self.state()["owner"])

    def binding(self) -> Binding:
        """What the conversation's entries are sealed for: its owner (the conversation)
        and the workspace."""
        owner = self.owner()
        return Binding(owner, self.workspace, owner, self.key)

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        raw = self.state()["entries"].get(key)
        where = f"{_WHERE}[{key!r}]"
        return None if raw is None else _entry(raw, self.binding(), key, where)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        kept: dict[str, Any] = self.state()["entries"]
        binding = self.binding()
        with _LOCK:
            for key, entry in entries.items():
                old = kept.get(key)
                # One that is not this conversation's is replaced, never merged with.
                won = newer(None if old is None else _entry(old, binding, key, key), entry)
                assert won is not None
                kept[key] = sealed(binding, key, won)
            at = {k: float(v.get("at", 0.0)) for k, v in kept.items()} if len(
                kept) > self.max_entries else {}
            for key in _expired(kept, at, self.max_entries):
                del kept[key]


class SessionObservations:
    """One session's entries in a table of fsseam's own in the session's SQLite database
    (``fsseam_observations``: session id, key, entry as JSON, recording time). Rows go
    with the session's row (``clear_session``) through a trigger. ``session``: the live
    session object, whose connection is used when the database is in memory. Entries are
    sealed for the session and ``workspace`` (signed with ``key`` when given)."""

    def __init__(self, db_path: str, session_id: str, *, sessions_table: str = "agent_sessions",
                 session: Any = None, max_entries: int = DEFAULT_MAX_OBSERVATIONS,
                 workspace: str = "", key: bytes | None = None) -> None:
        self.db_path = db_path
        self.session_id = session_id
        self.sessions_table = sessions_table
        self.session = session
        self.max_entries = max_entries
        self.binding = Binding(f"session:{session_id}", workspace, session_id, key)
        self._ready = False

    def __repr__(self) -> str:
        return f"SessionObservations({self.db_path!r}, {self.session_id!r})"

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        try:
            if self.db_path == ":memory:":
                if self.session is None:
                    raise sqlite3.OperationalError("closed")
                with self.session._locked_connection() as conn:
                    yield self._prepared(conn)
                return
            with closing(sqlite3.connect(self.db_path, timeout=30)) as conn:
                yield self._prepared(conn)
        except sqlite3.Error as e:
            raise FsError(ErrorCode.FS_BACKEND, reason=Reason.agents_session_unusable,
                          details={"db": self.db_path, "detail": str(e)}) from e

    def _prepared(self, conn: sqlite3.Connection) -> sqlite3.Connection:
        if not self._ready:
            conn.executescript(
                f"CREATE TABLE IF NOT EXISTS {TABLE} (SESSION_ID TEXT NOT NULL, KEY TEXT NOT "
                "NULL, ENTRY TEXT NOT NULL, AT REAL NOT NULL, PRIMARY KEY (SESSION_ID, KEY));"
                f"CREATE TRIGGER IF NOT EXISTS {TABLE}_CLEARED AFTER DELETE ON "
                f"{self.sessions_table} BEGIN DELETE FROM {TABLE} WHERE SESSION_ID = "
                "OLD.SESSION_ID; END;")
            self._ready = True
        return conn

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        with self._connection() as conn:
            row = conn.execute(_SELECT, (self.session_id, key)).fetchone()
        where = f"{self.db_path}:{TABLE}[{key!r}]"
        return None if row is None else _entry(row[0], self.binding, key, where)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        with self._connection() as conn, conn:
            # One write transaction: two processes merging into one session take turns.
            conn.execute("BEGIN IMMEDIATE")
            for key, entry in entries.items():
                row = conn.execute(_SELECT, (self.session_id, key)).fetchone()
                won = newer(None if row is None else _entry(row[0], self.binding, key, key),
                            entry)
                assert won is not None
                conn.execute(f"INSERT OR REPLACE INTO {TABLE} VALUES (?, ?, ?, ?)",
                             (self.session_id, key, json.dumps(sealed(self.binding, key, won)),
                              won.at))
            (count,) = conn.execute(f"SELECT COUNT(*) FROM {TABLE} WHERE SESSION_ID = ?",
                                    (self.session_id,)).fetchone()
            if count > self.max_entries:
                conn.execute(
                    f"DELETE FROM {TABLE} WHERE SESSION_ID = ? AND KEY IN (SELECT KEY FROM "
                    f"{TABLE} WHERE SESSION_ID = ? ORDER BY AT LIMIT ?)",
                    (self.session_id, self.session_id, count - self.max_entries))


_LIVE: weakref.WeakValueDictionary[str, Any] = weakref.WeakValueDictionary()
"""In-memory sessions of this process by token: their database is reachable only through
the session object, which a JSON context cannot hold."""
_TOKENS: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
"""The token of each in-memory session, the same for every context made for it."""


def session_context(session: Any, context: MutableMapping[str, Any] | None = None
                    ) -> MutableMapping[str, Any]:
    """The run context for a turn of the conversation kept in ``session`` (an
    ``SQLiteSession``, or any session with a ``session_id``): ``context`` (default a new
    dict) with fsseam's state naming the session, so the conversation's reads live with it.

        Runner.run(agent, text, session=session, context=session_context(session))
    """
    context = {} if context is None else context
    link: dict[str, Any] = {"id": str(session.session_id)}
    db = getattr(session, "db_path", None)
    if db is not None and hasattr(session, "_locked_connection"):
        link["db"] = str(db) if str(db) == ":memory:" else os.path.abspath(db)
        link["sessions_table"] = str(getattr(session, "sessions_table", "agent_sessions"))
        if link["db"] == ":memory:":
            token = _TOKENS.setdefault(session, uuid.uuid4().hex)
            _LIVE[token] = session
            link["token"] = token
    # The owner names the session's database too: two conversations of one id in two
    # databases are two owners, never one whose store the other's calls would use.
    where = link.get("token") or link.get("db")
    owner = f"session:{link['id']}" + (f"@{where}" if where else "")
    context[STATE_KEY] = {"format": STATE_FORMAT, "owner": owner, "session": link}
    return context


class _Field(MutableMapping[str, Any]):
    """A typed context (a dataclass, a pydantic model) seen as a mapping of its one field
    ``fsseam``: the state lives in the application's object, and in the dict the SDK makes
    of it (``model_dump``, ``asdict``) for a ``RunState`` string."""

    def __init__(self, holder: Any) -> None:
        self.holder = holder

    def __getitem__(self, key: str) -> Any:
        if key != STATE_KEY:
            raise KeyError(key)
        return getattr(self.holder, STATE_KEY)

    def __setitem__(self, key: str, value: Any) -> None:
        setattr(self.holder, key, value)

    def __delitem__(self, key: str) -> None:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        return iter((STATE_KEY,))

    def __len__(self) -> int:
        return 1


class Conversations:
    """The context each tool call of a reused tool list runs in: its conversation's owner,
    with that conversation's observations where the SDK keeps its state."""

    def __init__(self, workspace: Workspace, *,
                 max_entries: int = DEFAULT_MAX_OBSERVATIONS) -> None:
        self.workspace = workspace
        self.max_entries = max_entries
        self._runs: dict[int, str] = {}
        self._lock = threading.Lock()

    def context(self, run: Any) -> Context:
        """``run``: the SDK's ``RunContextWrapper`` (or ``ToolContext``) of the call."""
        value = getattr(run, "context", None)
        if not isinstance(value, MutableMapping) and isinstance(
                getattr(value, STATE_KEY, None), dict):
            value = _Field(value)
        if isinstance(value, MutableMapping):
            state = value.get(STATE_KEY)
            if isinstance(state, dict) and isinstance(state.get("session"), dict):
                owner = state.get("owner")
                if not isinstance(owner, str):
                    raise _foreign(_WHERE, f"owner={owner!r}")
                return self.workspace.context(owner, observations=self._session(state))
            store = ContextObservations(value, max_entries=self.max_entries,
                                        workspace=self.workspace.url,
                                        key=self.workspace.observation_key)
            return self.workspace.context(store.owner(), observations=store)
        # Nothing of the SDK's state can hold observations: one owner per run (the run's
        # usage object is the one thing every tool call of a run shares), in the
        # workspace's store.
        marker = value if value is not None else getattr(run, "usage", run)
        return self.workspace.context(self._run_owner(marker))

    def _session(self, state: dict[str, Any]) -> Any:
        link = state["session"]
        if "db" not in link:
            return None  # a session of another kind: the workspace's store keeps them
        live = _LIVE.get(link.get("token", "")) if link["db"] == ":memory:" else None
        return SessionObservations(link["db"], str(link["id"]),
                                   sessions_table=link.get("sessions_table", "agent_sessions"),
                                   session=live, max_entries=self.max_entries,
                                   workspace=self.workspace.url,
                                   key=self.workspace.observation_key)

    def _run_owner(self, marker: Any) -> str:
        with self._lock:
            owner = self._runs.get(id(marker))
            if owner is None:
                owner = self._runs[id(marker)] = f"run-{uuid.uuid4().hex}"
                with suppress(TypeError):  # not weakly referenceable: kept for the process
                    weakref.finalize(marker, self._forget, id(marker))
            return owner

    def _forget(self, key: int) -> None:
        with self._lock:
            self._runs.pop(key, None)
