"""The observation policy: no agent modifies a file state it has not seen.

Per owner, the policy keeps the version last observed of each file, or that the file was
confirmed absent, in an observation store (:mod:`fsseam.observations`). Rules
(docs/concepts.md, "The observation policy"):

- a successful read (windows too) records the version; a successful write records the new
  one, so an agent's own edits never make its next edit stale;
- a not-found answer records absence;
- write: observed V -> IfMatch(V); nothing or absence observed -> CreateOnly; a lost
  compare-and-swap is FS_NOT_OBSERVED when nothing was observed, FS_STALE otherwise;
- edit: needs an observed version equal to the current one (else FS_NOT_OBSERVED or
  FS_STALE), and writes IfMatch(V);
- create: always CreateOnly; absence never authorizes an edit;
- delete and move (of the source): need an observed version, and are conditional on it
  (IfMatch(V)); afterwards the source is recorded absent and a move's destination observed.
- undo: each owner's changes of each file are kept newest last (the version before and
  the version made, at most UNDO_DEPTH); an undo takes back the newest, conditional on
  the version it made; a later undo takes back the one before it.

What one call records is written to the store once, when the call ends (:meth:`call`);
a store on another machine is asked again (``fresh``) before a cached answer refuses.
A call in progress is found by the call, not by the owner's name: two runs that carry one
owner name (a copied run context, a run state resumed twice) never see each other's reads
before they are stored where each run keeps them.
"""

from __future__ import annotations

import math
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from contextvars import ContextVar, Token
from dataclasses import dataclass, field
from types import TracebackType

from ..errors import ErrorCode, FsError
from ..events import (
    DeletedEvent,
    DeleteIntent,
    EditIntent,
    Guard,
    MissingEvent,
    ReadEvent,
    UndoIntent,
    WriteIntent,
    WrittenEvent,
)
from ..gate import hookimpl
from ..messages import Reason
from ..observations import (
    UNDO_DEPTH,
    Change,
    Ledger,
    MemoryObservations,
    ObservationEntry,
    ObservationStore,
)
from ..versions import CreateOnly, IfMatch, Version

__all__ = ["UNDO_DEPTH", "Change", "Ledger", "ObservationPolicy"]


@dataclass
class _Call:
    """One call of an owner in progress (and the operations nested in it), and what it
    recorded."""

    store: ObservationStore
    owner: str
    depth: int = 0
    pending: dict[str, ObservationEntry] = field(default_factory=dict)
    changed: str | None = None
    """A file the call changed (its shown path): a failure to store what the call recorded
    must then say the file changed."""
    unsaved: FsError | None = None
    """Why a change that landed could not be recorded (the store failed on the way): the
    call then ends in that failure, saying the file changed."""


def _later(than: float) -> float:
    """The recording time of an update of an entry recorded at ``than``: this process's
    clock, or just after ``than`` when that is ahead of it. An update is so always later
    than the entry it was made from, whatever clock dated that one: an entry from a worker
    whose clock runs ahead never outlives the owner's next read (docs/observations.md)."""
    now = time.time()
    return now if now > than else math.nextafter(than, math.inf)


def _not_saved(changed: str, err: Exception, store: ObservationStore) -> FsError:
    """The failure of a call whose change landed but could not be recorded (``err``: why;
    any exception, so that none of a store's own makes the answer deny the change)."""
    if not isinstance(err, FsError):
        return FsError(ErrorCode.FS_BACKEND, path=changed, reason=Reason.observations_not_saved,
                       details={"store": repr(store), "detail": f"{type(err).__name__}: {err}"})
    if err.reason == Reason.observations_not_saved:
        return err
    # An unreachable store's own sentence ends "nothing was changed", untrue here: its
    # cause is what this answer names.
    cause = err.details.get("detail") if err.reason == Reason.observations_unreachable else None
    return FsError(ErrorCode.FS_BACKEND, path=changed, reason=Reason.observations_not_saved,
                   details={"store": err.details.get("store", repr(store)),
                            "detail": cause if isinstance(cause, str) else err.message})


_Running = Mapping[tuple["ObservationPolicy", str], _Call]

_RUNNING: ContextVar[_Running | None] = ContextVar("fsseam_observation_calls", default=None)
"""The calls in progress in this thread (or task), by policy and owner. Per execution
context, not per process: a call is found by the code running inside it, so a call of
another run that carries the same owner name (another thread, another task) is another
call, with its own store and its own unsaved reads."""


class _CallScope:
    """The context of :meth:`ObservationPolicy.call`: a class, as every operation of the
    seam enters one (a generator-based context manager costs several times more)."""

    __slots__ = ("_owner", "_policy", "_running", "_store", "_token")

    def __init__(self, policy: ObservationPolicy, owner: str,
                 store: ObservationStore | None) -> None:
        self._policy = policy
        self._owner = owner
        self._store = store
        self._running: _Call | None = None
        self._token: Token[_Running | None] | None = None

    def __enter__(self) -> None:
        self._running, self._token = self._policy._enter(self._owner, self._store)

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        running, token = self._running, self._token
        assert running is not None
        self._running = self._token = None
        if token is not None:
            try:
                _RUNNING.reset(token)
            except ValueError:  # left in another context than it was entered in
                _RUNNING.set({k: c for k, c in (_RUNNING.get() or {}).items()
                              if c is not running})
        self._policy._exit(running, kind is not None)


class ObservationPolicy:
    """``store``: where observations live (default in this process, kept in ``ledger``
    when one is given)."""

    def __init__(self, ledger: Ledger | None = None, *,
                 store: ObservationStore | None = None) -> None:
        if store is not None and ledger is not None:
            raise TypeError("pass a ledger or an observation store, not both")
        self.store: ObservationStore = (
            store if store is not None else MemoryObservations(ledger or Ledger())
        )
        # Weak: a framework binds one store per thread or conversation and holds it as long
        # as that state lives; a store dropped by its holder unbinds itself, so a
        # long-lived workspace does not keep one entry per conversation it ever served.
        self._bound: weakref.WeakValueDictionary[str, ObservationStore] = (
            weakref.WeakValueDictionary()
        )
        self._lock = threading.RLock()

    @property
    def ledger(self) -> Ledger:
        """The in-process ledger (only when observations live in this process)."""
        if isinstance(self.store, MemoryObservations) and self.store.ledger is not None:
            return self.store.ledger
        raise AttributeError(f"observations live in {self.store!r}, not in a ledger")

    # -- stores and calls ------------------------------------------------
    def bind(self, owner: str, store: ObservationStore) -> None:
        """Keep ``owner``'s observations in ``store`` (a framework's state) instead."""
        with self._lock:
            self._bound[owner] = store

    def unbind(self, owner: str) -> None:
        """Keep ``owner``'s observations in the workspace's store again."""
        with self._lock:
            self._bound.pop(owner, None)

    def _running(self, owner: str) -> _Call | None:
        """The owner's call this code runs inside, if any."""
        calls = _RUNNING.get()
        return None if calls is None else calls.get((self, owner))

    def store_for(self, owner: str) -> ObservationStore:
        """The store of the owner's call this code runs inside, else the one bound, else
        the workspace's."""
        running = self._running(owner)
        if running is not None:
            return running.store
        bound = self._bound.get(owner)
        return self.store if bound is None else bound

    def call(self, owner: str, store: ObservationStore | None = None) -> _CallScope:
        """One call of ``owner`` (``store``: where its observations live, else
        :meth:`store_for`): what it records is written when it ends. An operation entered
        inside it (same thread or task, same store) is part of it; any other call is
        another, even of the same owner name (two runs of one owner never share what
        either has not stored yet)."""
        return _CallScope(self, owner, store)

    def _enter(self, owner: str, store: ObservationStore | None
               ) -> tuple[_Call, Token[_Running | None] | None]:
        running = self._running(owner)
        if running is not None and (store is None or store is running.store):
            running.depth += 1
            return running, None
        running = _Call(store or self.store_for(owner), owner=owner, depth=1)
        calls = _RUNNING.get()
        return running, _RUNNING.set({**(calls or {}), (self, owner): running})

    def _exit(self, running: _Call, failed: bool) -> None:
        running.depth -= 1
        if running.depth == 0 and (running.pending or running.unsaved is not None):
            self._store(running.owner, running.store, running.pending, running.changed,
                        failed, running.unsaved)

    def _store(self, owner: str, store: ObservationStore, pending: dict[str, ObservationEntry],
               changed: str | None, failed: bool, unsaved: FsError | None = None) -> None:
        """Write what a call recorded. A store that fails it fails the call (nothing is
        let through unguarded: the next call asks the store again); when the call changed a
        file, the failure says so (the agent must read it again before an edit).
        ``unsaved``: a failure met while recording a change that landed."""
        try:
            if pending:
                store.put(owner, pending)
            if unsaved is not None:
                raise unsaved
        except Exception as e:  # a store's own failure too (RecursionError on a damaged file)
            if failed:
                return  # the call's own failure is the one to report
            if changed is None:
                raise
            raise _not_saved(changed, e, store) from e

    def entry(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        running = self._running(owner)
        if running is not None:
            with self._lock:
                if key in running.pending:
                    return running.pending[key]
            return running.store.get(owner, key, fresh=fresh)
        return self.store_for(owner).get(owner, key, fresh=fresh)

    def observed(self, owner: str, key: str, *, fresh: bool = False) -> tuple[bool, Version | None]:
        """(known, version): known=False when nothing was observed; version None = absent."""
        entry = self.entry(owner, key, fresh=fresh)
        if entry is None or not entry.seen:
            return (False, None)
        return (True, entry.version)

    def update(self, owner: str, key: str, change: Callable[[ObservationEntry],
               ObservationEntry], *, changed: str | None = None) -> None:
        """Record ``change`` of the owner's entry for ``key``: kept for the end of the
        call in progress, or written now when there is none. ``changed``: the shown path
        of a file the call changed."""
        running = self._running(owner)
        store = running.store if running is not None else self.store_for(owner)
        with self._lock:
            known = running is not None and key in running.pending
        # A store on another machine is asked outside the lock: other owners' calls go on.
        try:
            stored = None if known else store.get(owner, key)
        except Exception as e:
            if changed is None:
                raise
            # The change landed: the call must end saying so, not in "nothing was changed"
            # (nor be answered ok because a hook's failure after a write is only logged).
            if running is not None:
                with self._lock:
                    running.unsaved = running.unsaved or _not_saved(changed, e, running.store)
                    running.changed = running.changed or changed
                return
            raise _not_saved(changed, e, store) from e
        with self._lock:
            held = running.pending.get(key) if running is not None else None
            before = held or stored or ObservationEntry(seen=False)
            after = change(before).model_copy(update={"at": _later(before.at)})
            if after.same(before) and before.at:
                return
            if running is not None:
                running.pending[key] = after
                running.changed = running.changed or changed
                return
        store.put(owner, {key: after})

    def record(self, owner: str, key: str, version: Version | None, *,
               changed: str | None = None) -> None:
        self.update(owner, key, lambda e: e.model_copy(update={"seen": True, "version": version}),
                    changed=changed)

    # -- hooks -----------------------------------------------------------
    @hookimpl(tryfirst=True)
    def fs_read(self, event: ReadEvent) -> None:
        self.record(event.owner, event.key, event.version)

    @hookimpl(tryfirst=True)
    def fs_missing(self, event: MissingEvent) -> None:
        self.record(event.owner, event.key, None)

    @hookimpl(tryfirst=True)
    def fs_write_intent(self, event: WriteIntent) -> None:
        event.decide(self.write_guard(event))

    def write_guard(self, event: WriteIntent) -> Guard:
        """A whole-file write is conditional on the version this owner observed, else
        create-only; its loss is FS_STALE when the owner saw something, FS_NOT_OBSERVED
        when it saw nothing. A create is create-only whatever was observed."""
        # Asked for a create too, though a create needs no observation: every change asks
        # the store before it lands, so a store that cannot be reached refuses every change
        # alike (FS_BACKEND, nothing changed) rather than letting a create land unrecorded.
        known, version = self.observed(event.owner, event.key)
        hint = event.conflict_hint  # a literal explanation another plugin set stands
        if event.operation == "create":
            return Guard(CreateOnly(), event.conflict_code, event.conflict_reason, hint)
        if version is not None:
            return Guard(IfMatch(version), ErrorCode.FS_STALE, Reason.stale_write, hint)
        if known:
            return Guard(CreateOnly(), ErrorCode.FS_STALE, Reason.created_since_absent_write,
                         hint)
        return Guard(CreateOnly(), ErrorCode.FS_NOT_OBSERVED, Reason.not_observed_write, hint)

    @hookimpl(tryfirst=True)
    def fs_edit_intent(self, event: EditIntent) -> None:
        event.decide(self.edit_guard(event))

    def edit_guard(self, event: EditIntent) -> Guard:
        """An edit needs an observed version equal to the one it was made on (else
        FS_NOT_OBSERVED or FS_STALE, raised), and is conditional on it."""
        known, version = self.observed(event.owner, event.key)
        if not known or version != event.current:
            # What this process holds may be behind the owner's other workers: ask the
            # store itself before refusing.
            known, version = self.observed(event.owner, event.key, fresh=True)
        if not known:
            raise FsError(ErrorCode.FS_NOT_OBSERVED, path=event.path,
                          reason=Reason.not_observed_edit)
        if version != event.current:
            reason = Reason.created_since_absent_edit if version is None else Reason.stale_edit
            # The version seen lets the seam show what changed since (fsseam.conflicts).
            raise FsError(ErrorCode.FS_STALE, path=event.path, reason=reason,
                          details={"observed": version})
        return Guard(IfMatch(version), ErrorCode.FS_STALE, Reason.changed_during_edit,
                     event.conflict_hint)

    @hookimpl(tryfirst=True)
    def fs_written(self, event: WrittenEvent) -> None:
        made = event.version
        if event.operation == "move":  # a move's destination is no change an undo takes back
            self.record(event.owner, event.key, made, changed=event.path)
            return

        def written(entry: ObservationEntry) -> ObservationEntry:
            stack = list(entry.changes)
            if event.operation == "undo":
                undone = stack.pop() if stack else None
                if stack and undone is not None and stack[-1].after == undone.before:
                    # The change below now ends at the version the undo wrote (a new
                    # generation on GCS): the next undo is conditional on that.
                    stack[-1] = Change(before=stack[-1].before, after=made)
            else:
                stack.append(Change(before=event.replaced, after=made))
            return ObservationEntry(seen=True, version=made, changes=tuple(stack[-UNDO_DEPTH:]))

        self.update(event.owner, event.key, written, changed=event.path)

    @hookimpl(tryfirst=True)
    def fs_undo_intent(self, event: UndoIntent) -> None:
        entry = self.entry(event.owner, event.key)
        if entry is None or not entry.changes:
            entry = self.entry(event.owner, event.key, fresh=True)
        top = entry.changes[-1] if entry is not None and entry.changes else None
        if top is None:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=event.path,
                          reason=Reason.nothing_to_undo)
        event.before, event.after = top.before, top.after

    @hookimpl(tryfirst=True)
    def fs_delete_intent(self, event: DeleteIntent) -> None:
        event.decide(self.delete_guard(event))

    def delete_guard(self, event: DeleteIntent) -> Guard:
        """A delete or a move (of its source) needs an observed version (FS_NOT_OBSERVED,
        or FS_NOT_FOUND when the file was seen absent, raised) and is conditional on it."""
        known, version = self.observed(event.owner, event.key)
        if not known or version is None:
            known, version = self.observed(event.owner, event.key, fresh=True)
        move = event.operation == "move"
        if not known:
            raise FsError(ErrorCode.FS_NOT_OBSERVED, path=event.path,
                          reason=Reason.not_observed_move if move else Reason.not_observed_delete)
        if version is None:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=event.path, reason=Reason.absent_observed)
        return Guard(IfMatch(version), ErrorCode.FS_STALE,
                     Reason.stale_move if move else Reason.stale_delete, event.conflict_hint)

    @hookimpl(tryfirst=True)
    def fs_deleted(self, event: DeletedEvent) -> None:
        def deleted(entry: ObservationEntry) -> ObservationEntry:
            stack = entry.changes
            if event.operation == "undo":  # the undo of a change that created the file
                stack = stack[:-1]
            return ObservationEntry(seen=True, version=None, changes=stack)

        self.update(event.owner, event.key, deleted, changed=event.path)
