"""Exactly-once calls: a call run again with the id of a call whose change landed answers
as that call did and changes nothing.

A durable-execution engine runs a step at least once: a process killed after the step's
change landed and before the engine saved its output runs the step again, with the same
call id (docs/durable.md). fsseam keeps two records of a call that changes files:

- **the call record** (:class:`CallRecord`), written create-only in the store itself under
  ``.fsseam-calls/`` just before the call's first change (:func:`before_commit`, from
  :func:`fsseam.seam.commit.run`): for each file the change touches, the version it rests
  on, the bytes there before (when the call read them) and the digest of what it writes.
  This is the one extra request a change with a call id costs. A second run of the call
  finds it (its own create-only write is refused), so no change is ever made twice,
  whatever the observation store still knows;
- **the answer** the call gave, kept with the owner's observations (an
  :class:`~fsseam.observations.ObservationEntry` under ``.fsseam-calls/<id digest>``, in
  the same write as the call's observations), so it travels with them: a framework's
  checkpoint, a bucket, a ledger file.

A run of a call with a known id (:func:`once`) that meets its own record (its call record
is there, or it failed, or it changed nothing) answers from the kept answer; when the first
run died before giving one, the call runs again over a :class:`ReplayView`: the store as the
first run found it (each file it changed shows the bytes and version from before, where its
change landed), where each change that landed is done already. The answer is then made by
the same code as the first time. A different id over the same change is another writer's
change (the same-change rule refuses it).
"""

from __future__ import annotations

import base64
import builtins
import copy
import functools
import hashlib
import time
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ..backends.base import ANY_VERSION, Backend, Blob, BlobStream, Stat, Wrapper, WriteMeta
from ..calling import CallScope, current, scope, unaudited
from ..errors import Conflict, ErrorCode, FsError
from ..events import MissingEvent, ReadEvent
from ..messages import Reason
from ..observations.calls import (
    CallRecord,
    CallRecords,
    CallStep,
    answer_key,
    decode_answer,
    digest_of,
    encode_answer,
    expired,
)
from ..paths import display
from ..versions import IfMatch, Precondition, Version
from .core import Core, one_call

__all__ = [
    "ReplayView",
    "before_commit",
    "once",
    "one_change",
    "other_call",
]

T = TypeVar("T")


class _Replay(Exception):
    """The call's record is in the store already: this run is a replay."""

    def __init__(self, record: CallRecord) -> None:
        super().__init__(record.call_id)
        self.record = record


class _CallState:
    """Per run of a call with an id: whether its record was written, whether it replays."""

    __slots__ = ("owner", "recorded", "replaying", "version")

    def __init__(self, owner: str) -> None:
        self.owner = owner
        self.recorded = False
        self.replaying = False
        self.version: Version | None = None
        """The version of the record this run wrote."""


# -- one run of a call -----------------------------------------------------------------
F = TypeVar("F", bound=Callable[..., Any])


def one_change(method: F) -> F:
    """A change of ``ctx.fs``: one call of the owner (:func:`~.core.one_call`) that takes
    ``call_id=`` (declared by the method, taken here: the method never sees it) and runs
    once per id (:func:`once`)."""
    inner = one_call(method)

    @functools.wraps(method)
    def call(self: Core, *args: Any, call_id: str | None = None, **kwargs: Any) -> Any:
        name = method.__name__
        digest = "" if call_id is None else digest_of(name, [args, kwargs])
        outer = current()
        with scope(call_id, name, digest) as here:
            result = once(self, lambda fs: inner(fs, *args, **kwargs))
        missing = unaudited(here, outer)
        if missing is not None:
            # The change landed without its audit entry: said, never silently unaudited.
            raise FsError(ErrorCode.FS_BACKEND, reason=Reason.audit_unwritten,
                          details={"changes": missing})
        return result

    return cast(F, call)


def once(fs: Core, body: Callable[[Core], T]) -> T:
    """``body(fs)`` as the running call (:func:`fsseam.calling.current`): run once per call
    id. Without an id, inside another call with an id, or on a read-only workspace: just
    ``body(fs)``."""
    here = current()
    if here is None or here.call_id is None or here.record is not None or fs.read_only:
        return body(fs)
    state = _CallState(fs.owner)
    here.record = state
    try:
        with fs.observing():
            if not fs.call_records:
                kept = _answer(fs, here.call_id)
                if kept is not None:
                    _check_digest(here, kept[0], here.call_id)
                    return kept[1]  # type: ignore[return-value]
            try:
                result = body(fs)
            except _Replay as replay:
                return _recover(fs, here, body, replay.record)
            except FsError as e:
                if state.recorded:
                    # This run got as far as its record: the store answered this call.
                    _refused(fs, here, state, e)
                    raise
                recovered = _recover(fs, here, body, None)
                if recovered is _NOTHING:
                    raise
                return recovered
            if not state.recorded:
                # Nothing changed: a run after the first one finished (its answer kept),
                # or a call that has nothing to change.
                known = _recover(fs, here, body, None)
                return result if known is _NOTHING else known
            _remember(fs, here, result)
            return result
    finally:
        here.record = None


_NOTHING: Any = object()


def _recover(fs: Core, here: CallScope, body: Callable[[Core], T],
             record: CallRecord | None) -> T:
    """The answer of a call run before: kept with the owner's observations, else made
    again over the store as the first run found it. ``_NOTHING`` when no record of the
    call exists (``record`` None: not looked up yet)."""
    call_id = here.call_id
    assert call_id is not None
    kept = _answer(fs, call_id)
    if kept is not None:
        digest, answer = kept
        _check_digest(here, digest, call_id)
        return answer  # type: ignore[return-value]
    if record is None:
        record = CallRecords(fs.backend).load(fs.owner, call_id)
        if record is None:
            return _NOTHING  # type: ignore[no-any-return]
    _check_digest(here, record.digest, call_id)
    state = here.record
    assert isinstance(state, _CallState)
    state.recorded = state.replaying = True
    view = ReplayView(fs.backend, record)
    again = copy.copy(fs)
    again.backend = view
    for step in record.steps:
        shown = display(step.key)
        if step.before is None:
            fs.gate.dispatch(MissingEvent(owner=fs.owner, key=step.key, path=shown))
        else:
            fs.gate.dispatch(ReadEvent(owner=fs.owner, key=step.key, path=shown,
                                       version=step.before))
    result = body(again)
    _remember(fs, here, result)
    return result


def other_call() -> bool:
    """Whether bytes the store names as this owner's, met by a refusal, are another
    call's: the running call has an id. Its own earlier run is known by its record, never
    by the owner's name, which every call of the owner shares (a store that keeps only
    the owner cannot tell this call's write from another's)."""
    here = current()
    return here is not None and isinstance(here.record, _CallState)


def _refused(fs: Core, here: CallScope, state: _CallState, error: FsError) -> None:
    """A call refused after its record was written changed nothing (but a storage error,
    whose change may have landed): its record goes, so that the call run again is run, not
    taken for a change made."""
    if error.code is ErrorCode.FS_BACKEND or state.version is None or here.call_id is None:
        return
    CallRecords(fs.backend).remove(fs.owner, here.call_id, state.version)


def _check_digest(here: CallScope, digest: str, call_id: str) -> None:
    if digest != here.digest:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.call_id_reused,
                      details={"call_id": call_id})


# -- the call record in the store ------------------------------------------------------
def before_commit(fs: Core, steps: builtins.list[Any]) -> None:
    """Write the running call's record before its first change (create-only); raises
    :class:`_Replay` when the record is there already (this run is a replay). Nothing for
    a call without an id, or once recorded."""
    here = current()
    state = None if here is None else here.record
    if not isinstance(state, _CallState) or state.recorded or here is None:
        return
    assert here.call_id is not None
    record = CallRecord(owner=fs.owner, call_id=here.call_id, tool=here.tool,
                        digest=here.digest, at=time.time(),
                        steps=[_step_of(fs, step, steps) for step in steps])
    records = CallRecords(fs.backend)
    try:
        state.version = records.write(record)
    except Conflict:
        found = records.load(fs.owner, here.call_id)
        if found is None:  # removed in between: expired; this run is the call
            raise
        raise _Replay(found) from None
    except FsError as e:
        if e.code not in _NO_PLACE:
            raise
        # No place for records at the root (mounts without a writable "/"): only the
        # answers kept with the observations make a call run once (docs/durable.md).
        fs.call_records = False
    state.recorded = True


_NO_PLACE = (ErrorCode.FS_OUTSIDE_ROOT, ErrorCode.FS_READ_ONLY)
"""What a store with no place at its root for call records answers (mounts)."""


def _step_of(fs: Core, step: Any, steps: builtins.list[Any]) -> CallStep:
    """What the call record says of one step of the plan (a :class:`~.commit.Step`)."""
    pre: Precondition = step.precondition
    before = pre.version if isinstance(pre, IfMatch) else None
    lone = step.alone
    after: bytes | None = None
    old: bytes | None = None
    if step.action in ("create", "write"):
        after = step.data
    elif step.action == "copy":
        after = step.data if step.data is not None else _current_bytes(lone, None)
        if after is None and before is not None:
            after = fs.docs.raw(step.source, before)
        before = None  # the destination: absent before
    if step.action != "copy" and before is not None:
        old = step.old if step.old is not None else _current_bytes(lone, before)
        if old is None:
            old = fs.docs.raw(step.key, before)
        if old is None and step.moved_to is not None:
            old = next((s.data for s in steps if s.action == "copy" and s.key == step.moved_to
                        and s.data is not None), None)
    cap = fs.limits.max_edit_bytes
    return CallStep(
        key=step.key, action=step.action, before=before,
        before_data=None if old is None or len(old) > cap else base64.b64encode(old).decode(),
        after=None if after is None else hashlib.sha256(after).hexdigest())


def _current_bytes(lone: Any, version: Version | None) -> bytes | None:
    current = None if lone is None else lone.current
    if current is None or (version is not None and current[1] != version):
        return None
    data: bytes = current[0]
    return data


# -- the answer, kept with the owner's observations ------------------------------------
def _remember(fs: Core, here: CallScope, result: object) -> None:
    """Keep the call's answer with the owner's observations (written with them)."""
    policy = fs.policy
    if policy is None or here.call_id is None:
        return
    text = encode_answer(here.digest, result)
    policy.update(fs.owner, answer_key(here.call_id),
                  lambda e: e.model_copy(update={"seen": False, "answer": text}))


def _answer(fs: Core, call_id: str) -> tuple[str, object] | None:
    policy = fs.policy
    if policy is None:
        return None
    entry = policy.entry(fs.owner, answer_key(call_id))
    if entry is None or entry.answer is None or expired(entry.at):
        return None
    return decode_answer(entry.answer)


# -- the store as the first run found it -----------------------------------------------
class ReplayView(Wrapper):
    """The store as a call's first run found it, for its replay: each file whose change
    landed shows the bytes and version from before (absent, for a file it created), and
    each change that landed is done already (the same bytes written, the file deleted,
    the copy made: nothing is sent). Every other file and call is the store's own."""

    def __init__(self, inner: Backend, record: CallRecord) -> None:
        super().__init__(inner)
        self.steps = {step.key: step for step in record.steps}
        self.landed: dict[str, Version | None] = {}
        """Keys whose change landed, with the version it made (None: deleted)."""
        for step in record.steps:
            self._look(step)

    def _look(self, step: CallStep) -> None:
        try:
            now = self.inner.read(step.key)
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND and step.after is None:
                self.landed[step.key] = None
            return
        if step.after is None and step.action == "copy":
            # A copy of bytes the call never read: the destination was absent (the copy
            # is create-only), so a file there now is the copy.
            self.landed[step.key] = now.version
        elif step.after is not None and hashlib.sha256(now.data).hexdigest() == step.after:
            self.landed[step.key] = now.version

    def _before(self, key: str) -> Blob:
        step = self.steps[key]
        if step.before is None:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason=Reason.not_found)
        if step.before_data is None:
            # The bytes from before were not kept (the call never read them): the file's
            # bytes now stand in, under the version the change rested on.
            data = self.inner.read(key).data if self.landed[key] is not None else b""
        else:
            data = base64.b64decode(step.before_data)
        return Blob(data=data, version=step.before)

    def read(self, key: str) -> Blob:
        if key in self.landed:
            return self._before(key)
        return self.inner.read(key)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> Any:
        if key in self.landed:
            return BlobStream(self._before(key), chunk_size)
        return self.inner.open_read(key, chunk_size)

    def stat(self, key: str) -> Stat:
        if key in self.landed:
            return Stat(key=key, kind="file", size=len(self._before(key).data))
        return self.inner.stat(key)

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        made = self.landed.get(key)
        step = self.steps.get(key)
        if (made is not None and step is not None
                and hashlib.sha256(data).hexdigest() == step.after):
            return made
        return self.inner.write(key, data, precondition, meta=meta)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        if key in self.landed and self.landed[key] is None:
            return
        self.inner.delete(key, precondition, meta=meta)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        made = self.landed.get(dst)
        if made is not None:
            return made
        return self.inner.copy(src, dst, source)
