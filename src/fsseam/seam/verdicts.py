"""Verdicts on a change that did not simply succeed: whether a failed call landed after
all, and what a refused change tells the agent.

Whether a file holding a change's bytes holds the agent's own change is one rule
(:func:`~fsseam.versions.same_change`, asked through :func:`judge` for a file read at a
version); :func:`landed` is one read after a call that may have landed, and the commit's
settlement of every failed step asks it. A lost precondition tells the agent FS_STALE with
what changed since its read (a diff, and where each edit's replacement stands now:
:func:`stale`), or the policy's explanation when no diff can be made
(:func:`refusal_for`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal

from ..backends.base import Backend
from ..conflicts import DIFF_IS_A_READ, changes_part, summarize, target_status, unshown_part
from ..edits import EditOp
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..events import Lost
from ..messages import Reason, Sentence, render
from ..paths import display
from ..text import TextDoc, decode
from ..versions import IfMatch, Precondition, SameChange, Version, same_change
from .calls import other_call
from .core import Core

__all__ = [
    "Outcome",
    "ambiguous",
    "cause_text",
    "gone_already",
    "holds",
    "judge",
    "landed",
    "refusal_for",
    "same_part",
    "stale",
    "stale_part",
    "stale_source",
    "text_at",
    "text_or_none",
    "written_by",
]


# -- did a failed call land after all: the one rule ------------------------------------
Outcome = Literal["done", "not_done", "unknown", "maybe"]
"""What a failed call left: done, not done, unknown (the file cannot be read), or maybe:
the file holds exactly the call's bytes, written since the read by a writer the store
cannot name (another writer's same change, or this call's own resent request)."""


def gone_already(failure: BaseException) -> bool:
    """Whether a delete's failure says the file is not there (a precondition that met no
    file, or a plain 404): the goal of the delete, whoever reached it."""
    if isinstance(failure, Conflict):
        return failure.reason == ConflictKind.missing
    return (isinstance(failure, FsError) and failure.code is ErrorCode.FS_NOT_FOUND
            and failure.reason != Reason.bucket_missing)


def ambiguous(failure: BaseException) -> bool:
    """Whether the store may have done what a failed call asked: a storage error, a lost
    answer whose recovery failed, anything unexpected. A refusal the store answered (a
    lost precondition, a size limit, permissions) changed nothing."""
    if isinstance(failure, FsError):
        return failure.code is ErrorCode.FS_BACKEND and not isinstance(failure, Conflict)
    return True


def landed(backend: Backend, key: str, want: bytes | None, *, owner: str | None = None,
           seen: Version | None = None, observed: bool = True, answered: bool = False,
           ) -> tuple[Outcome, Version | None]:
    """One read after a call that may have landed: "done" (with the version read) when
    the file holds exactly ``want`` (None: it is absent) and :func:`judge` takes the bytes
    as the change done (``owner``'s own write, or nothing lost: see
    :func:`~fsseam.versions.same_change`), "not_done" when it holds anything else or
    another writer's equal bytes, "maybe" when it holds equal bytes whose writer the store
    cannot name, "unknown" when it cannot be read. ``answered``: the call was refused by
    the store (not a call that failed without an answer)."""
    try:
        now = backend.read(key)
    except FsError as e:
        if gone_already(e):
            return ("done" if want is None else "not_done"), None
        return "unknown", None
    except Exception:
        return "unknown", None
    if want is None:
        return "not_done", None
    verdict = judge(backend, key, want, now.data, now.version, seen=seen, observed=observed,
                    owner=owner, answered=answered)
    if verdict in (SameChange.HELD, SameChange.OURS):
        return "done", now.version
    if verdict is SameChange.MAYBE_OURS:
        return "maybe", now.version
    return "not_done", None


def written_by(backend: Backend, key: str, version: Version, owner: str | None
               ) -> bool | None:
    """Whether ``owner``'s write made ``version`` of the file, where the store keeps who
    wrote an object (one HEAD); None where it cannot say (no writer kept, no owner, the
    file moved on again, the look failed)."""
    if owner is None:
        return None
    try:
        found = backend.writer_of(key)
    except FsError:
        return None
    if found is None or found[0] != version:
        return None
    return found[1] == owner


def judge(backend: Backend, key: str, data: bytes, held: bytes, version: Version, *,
          seen: Version | None, observed: bool, owner: str | None, answered: bool,
          ) -> SameChange:
    """:func:`~fsseam.versions.same_change` for a file read as ``held`` at ``version``,
    whose change would write ``data`` over ``seen`` (the version it rests on; None: the
    file seen absent, or no read): the store is asked who wrote it only when that decides."""
    equal = held == data
    moved = seen is None or version != seen
    ours = written_by(backend, key, version, owner) if equal and moved else None
    if ours and answered and other_call():
        ours = False
    return same_change(equal=equal, moved=moved, observed=observed, ours=ours,
                       answered=answered)


def holds(fs: Core, key: str, version: Version, data: bytes, data_version: Version | None
           ) -> bool:
    """Whether the file at ``version`` holds exactly ``data``, known without a request:
    the versions are equal, a content digest says so, or the cached bytes do."""
    if data_version is not None and data_version == version:
        return True
    # The bytes kept for ``version`` are exactly its content, so comparing with them (a
    # memcmp) answers as the digest would, without hashing every write's bytes.
    raw = fs.docs.raw(key, version)
    if raw is not None:
        return raw == data
    if version.kind == "sha256":
        return hashlib.sha256(data).hexdigest() == version.value
    return False


def cause_text(failure: BaseException, shown: str, action: str) -> str:
    """A failure's sentence without the "nothing was changed" a storage error adds: the
    failed call may have taken effect."""
    if isinstance(failure, Conflict):
        return render(Reason.step_refused, shown, {"action": action})
    if isinstance(failure, FsError):
        if failure.reason in (Reason.storage_failed, Reason.store_busy) and {
                "action", "detail"} <= failure.details.keys():
            return render(Reason.step_failed, failure.path, failure.details)
        return failure.message
    return render(Reason.step_failed, shown, {"action": action, "detail": repr(failure)})


# -- what a lost precondition tells the agent ------------------------------------------
def refusal_for(err: Conflict, path: str, code: ErrorCode | None, reason: str | None,
                hint: str | None) -> FsError:
    """What a lost precondition means to this caller (the intent's code and reason)."""
    if code is None:
        return err
    if err.reason == ConflictKind.missing:
        return FsError(code, path=path, reason=Reason.deleted_since_read)
    if hint is not None:
        return FsError(code, hint, path=path)
    return FsError(code, path=path, reason=reason or err.reason)


def text_at(fs: Core, key: str, version: Version) -> TextDoc | Reason:
    """The text of ``version`` as the agent saw it: cached bytes (shared by this process's
    workspaces of the store), else (on a conflict path only) the store's history; else why
    it cannot be had, a catalogue sentence for the refusal."""
    raw = fs.docs.raw(key, version)
    if raw is None and not fs.keeps_history(key):
        return Reason.unshown_not_kept
    if raw is None:
        try:
            raw = fs.backend.read_version(key, version).data
        except FsError as e:
            if e.code is ErrorCode.FS_UNSUPPORTED:  # a bucket without versioning
                return Reason.unshown_not_kept
            if e.code is ErrorCode.FS_NOT_FOUND:
                return Reason.unshown_gone
            return Reason.unshown_unreadable
    try:
        return decode(raw, display(key))
    except FsError:
        return Reason.unshown_old_not_text


def text_or_none(fs: Core, key: str, version: Version) -> TextDoc | None:
    """The text of ``version`` as the agent saw it, or None (see :func:`text_at`)."""
    text = text_at(fs, key, version)
    return text if isinstance(text, TextDoc) else None


def stale(
    fs: Core,
    key: str,
    shown: str,
    seen: Version | None,
    current: tuple[bytes, Version] | None,
    *,
    action: str,
    fallback: FsError,
    ops: Sequence[EditOp] = (),
    old: TextDoc | None = None,
    undo: bool = False,
    same: SameChange | None = None,
) -> FsError:
    """FS_STALE with what changed from ``seen`` (the version the agent read or wrote) to
    the current version, and where each replacement of ``ops`` stands in it. A diff
    shown whole counts as a read of the current version only after an edit or an undo
    (see :data:`~fsseam.conflicts.DIFF_IS_A_READ`). ``fallback`` when no diff can be
    made (diffs off, the file unreadable now); when the text the agent read cannot be had
    (no history, a version no longer kept) or one side is not text, FS_STALE saying why.
    ``same``: the file already holds exactly the change's bytes, made by another writer
    (:attr:`SameChange.THEIRS`) or by one the store cannot name
    (:attr:`SameChange.MAYBE_OURS`): the refusal says so, with or without a diff."""
    if same is not None:
        fallback = _same_change(shown, action, same, seen, current)
    if fs.limits.conflict_diff_chars <= 0 or seen is None:
        return fallback
    try:
        data, version = current if current is not None else fs.load_bytes(key, False)
    except FsError:
        return fallback
    try:
        new = decode(data, shown)
    except FsError:
        return _unshown(fallback, shown, Reason.unshown_new_not_text, seen, version, action,
                        undo, same)
    if old is None:
        known = text_at(fs, key, seen)
        if not isinstance(known, TextDoc):
            return _unshown(fallback, shown, known, seen, version, action, undo, same)
        old = known
    summary = summarize(shown, old.view, new.view, fs.limits.conflict_diff_chars)
    if summary.complete and action in DIFF_IS_A_READ:
        fs.record_observed(key, shown, data, version)
    plain = Reason.stale_undo if undo else Reason.stale_changed
    reason = plain if same is None else fallback.reason
    return FsError(
        ErrorCode.FS_STALE, path=shown, reason=reason,
        details={"action": action, "changes": changes_part(
            summary, target_status(new.view, ops), undo=undo, action=action),
            "observed": seen, "current": version, "complete": summary.complete},
    )


def _unshown(fallback: FsError, shown: str, why: Reason, seen: Version, current: Version,
             action: str, undo: bool, same: SameChange | None) -> FsError:
    """FS_STALE without a diff, saying why none can be shown and what to do instead (a
    same-change refusal keeps its own sentence); a plugin's own words (a literal message,
    no catalogue reason) are passed on as they are."""
    if fallback.reason is None:
        return fallback
    plain = Reason.stale_undo if undo else Reason.stale_changed
    reason = plain if same is None else fallback.reason
    return FsError(
        ErrorCode.FS_STALE, path=shown, reason=reason,
        details={"action": action, "changes": unshown_part(why, undo=undo, action=action),
                 "observed": seen, "current": current, "complete": False},
    )


def stale_part(fs: Core, key: str, shown: str, seen: Version | None,
               current: tuple[bytes, Version] | None, action: str, fallback: FsError
               ) -> FsError:
    """FS_STALE for one file of a change, with what changed since ``seen`` (the same
    refusal a single edit gives; one more read when ``current`` is not at hand)."""
    if fallback.code is not ErrorCode.FS_STALE or seen is None:
        return fallback
    return stale(fs, key, shown, seen, current, action=action, fallback=fallback)


def same_part(fs: Core, key: str, shown: str, seen: Version, data: bytes, action: str,
              fallback: FsError) -> FsError:
    """FS_STALE for one file of a change whose write lost its guard: when the file holds
    exactly the write's bytes, the refusal says another writer made this change (the one
    rule, :func:`~fsseam.versions.same_change`), else what changed since ``seen``."""
    try:
        current = fs.load_bytes(key, False)
    except FsError:
        return fallback
    verdict = judge(fs.backend, key, data, current[0], current[1], seen=seen, observed=True,
                    owner=fs.owner, answered=True)
    if verdict is not SameChange.THEIRS and verdict is not SameChange.MAYBE_OURS:
        return stale_part(fs, key, shown, seen, current, action, fallback)
    return stale(fs, key, shown, seen, current, action=action, fallback=fallback,
                 same=verdict)


def stale_source(fs: Core, c: Conflict, key: str, shown: str, pre: Precondition,
                 lost: Lost, action: str) -> FsError:
    """A delete or move whose source moved on: what changed, when it is FS_STALE."""
    fallback = refusal_for(c, shown, *lost)
    if not isinstance(pre, IfMatch) or lost[0] is not ErrorCode.FS_STALE:
        return fallback
    return stale(fs, key, shown, pre.version, None, action=action, fallback=fallback)


def _same_change(shown: str, action: str, same: SameChange, seen: Version | None,
                 current: tuple[bytes, Version] | None) -> FsError:
    """The refusal of a change the file already holds, when no diff can be shown."""
    reason = (Reason.stale_same_change if same is SameChange.THEIRS
              else Reason.stale_same_change_maybe)
    details: dict[str, object] = {"action": action, "changes": Sentence(Reason.changes_unknown)}
    if seen is not None:
        details["observed"] = seen
    if current is not None:
        details["current"] = current[1]
    return FsError(ErrorCode.FS_STALE, path=shown, reason=reason, details=details)
