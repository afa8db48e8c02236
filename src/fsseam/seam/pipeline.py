"""The one path of a one-file change, and what a lost precondition tells the agent.

:func:`commit_one` takes a :class:`~fsseam.seam.plans.FilePlan` (the bytes, the guard the
gate decided, how a loss is explained) and writes it: nothing when the file already holds
the bytes, else one conditional write. A refused write is success after all when the file
holds exactly these bytes (another agent wrote the same, or our own resent request
landed); otherwise the refusal, as FS_STALE with what changed since the agent's read when
the policy says stale. A write that failed without a refusal may have landed: one read
says. Changes of several files go through :func:`fsseam.changes.commit`, whose steps
explain their losses with :func:`stale_part`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..changes import ambiguous, cause_text, gone_already, landed
from ..conflicts import DIFF_IS_A_READ, changes_part, summarize, target_status
from ..edits import EditOp
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..events import DeleteIntent, EditIntent
from ..messages import Reason
from ..text import TextDoc, decode
from ..versions import IfMatch, Precondition, Version
from .core import Core
from .plans import FilePlan, lost_of

__all__ = [
    "commit_one",
    "delete_one",
    "landed_delete",
    "stale",
    "stale_before",
    "stale_part",
    "stale_source",
]


def commit_one(fs: Core, plan: FilePlan) -> tuple[Version, bool]:
    """Write ``plan``: the file's version after it, and whether nothing was written (the
    file holds ``plan.data`` already). Raises the refusal otherwise."""
    pre = plan.precondition
    seen = pre.version if isinstance(pre, IfMatch) else None
    early = _held_already(fs, plan, seen)
    if early is not None:
        return early
    try:
        return fs._put(plan.key, plan.data, pre, plan.meta), False
    except Conflict as c:
        return _lost(fs, plan, c, seen, None)
    except Exception as e:
        return fs._landed_write(e, plan.key, plan.shown, plan.data, plan.action,
                                plan.meta.owner), False


def _held_already(fs: Core, plan: FilePlan, seen: Version | None
                  ) -> tuple[Version, bool] | None:
    """Whether the file holds the plan's bytes before anything is written (see
    :attr:`FilePlan.check_first`); None: write."""
    key, data, current = plan.key, plan.data, plan.current
    if plan.check_first == "back":
        if seen is None or not fs._holds(key, seen, data, plan.data_version):
            return None
        return (seen, True) if fs._probe(key) == seen else None
    if plan.check_first != "write":
        return None
    if current is not None and current[0] == data:
        return current[1], True
    if seen is None:
        return None
    if current is not None and current[1] != seen:
        return _lost(fs, plan, Conflict("mismatch", path=plan.shown), seen, current)
    if current is None and fs._holds(key, seen, data, None):
        # Writing back exactly what was read: one look at the version instead of a write
        # (which would make a new version of the same bytes).
        now = fs._probe(key)
        if now == seen:
            return seen, True
        lost = (Conflict("missing", path=plan.shown) if now is None
                else Conflict("mismatch", path=plan.shown))
        return _lost(fs, plan, lost, seen, None)
    return None


def _lost(fs: Core, plan: FilePlan, c: Conflict, seen: Version | None,
          current: tuple[bytes, Version] | None) -> tuple[Version, bool]:
    """A write whose precondition failed: success after all when the file already holds
    exactly these bytes, else the refusal, with what changed when it is FS_STALE."""
    shown = plan.shown
    fallback = _explained(fs, plan, c)
    if c.reason == ConflictKind.missing:
        raise fallback
    if current is None:
        try:
            current = fs._load_bytes(plan.key, record_missing=False)
        except FsError as e:
            if plan.unread_is_unknown:
                raise _unverified(c, shown, plan.action, fallback, e) from None
            raise fallback from None
    if current[0] == plan.data:
        return current[1], True
    raise _stale_or(fs, plan, seen, current, fallback)


def _explained(fs: Core, plan: FilePlan, c: Conflict) -> FsError:
    """What the lost guard means, as the intent (or an undo) says."""
    if plan.plain is not None and c.reason == ConflictKind.mismatch:
        return plan.plain
    return fs._conflict(c, plan.shown, *plan.lost)


def _stale_or(fs: Core, plan: FilePlan, seen: Version | None,
              current: tuple[bytes, Version] | None, fallback: FsError) -> FsError:
    """FS_STALE with what changed since ``seen``, when the intent says stale; else
    ``fallback``."""
    if seen is None or plan.lost[0] is not ErrorCode.FS_STALE:
        return fallback
    return stale(fs, plan.key, plan.shown, seen, current, action=plan.stale_action,
                 fallback=fallback, ops=plan.ops, old=plan.old, undo=plan.undo)


def delete_one(fs: Core, plan: FilePlan) -> None:
    """Delete the plan's file under its guard. A guard that met no file is the delete
    done for an undo (``gone_is_done``), FS_NOT_FOUND for a delete; a guard lost to a
    changed file is the refusal, FS_STALE with what changed when the intent says stale. A
    delete that failed without a refusal may have landed: one read says."""
    key, shown, pre = plan.key, plan.shown, plan.precondition
    try:
        fs._delete(key, pre)
    except Conflict as c:
        if c.reason == ConflictKind.missing:
            if plan.gone_is_done:
                return  # someone deleted it already: the file is as the undo leaves it
            raise FsError(ErrorCode.FS_NOT_FOUND, path=shown,
                          reason="deleted_before_delete") from None
        seen = pre.version if isinstance(pre, IfMatch) else None
        raise _stale_or(fs, plan, seen, None, _explained(fs, plan, c)) from None
    except Exception as e:
        if plan.gone_is_done and gone_already(e):
            return
        if isinstance(e, FsError) and not ambiguous(e):
            raise fs._missing(key, e) if e.reason != Reason.is_directory else e from None
        # The delete may have landed: the file gone is the delete done.
        landed_delete(fs, e, key, shown)


def _unverified(c: Conflict, shown: str, action: str, fallback: FsError, read: FsError
                ) -> FsError:
    """A refused write whose file could not be read back: the refusal may have met our
    own landed request (a resend after a lost answer), so the outcome is unknown, unless
    the read itself shows the file is not ours (gone, or too large)."""
    if read.code is not ErrorCode.FS_BACKEND:
        return fallback
    return FsError(ErrorCode.FS_BACKEND, path=shown, reason="outcome_unknown",
                   details={"cause": cause_text(c, shown, action)})


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
) -> FsError:
    """FS_STALE with what changed from ``seen`` (the version the agent read or wrote) to
    the current version, and where each replacement of ``ops`` stands in it. A diff
    shown whole counts as a read of the current version only after an edit or an undo
    (see :data:`~fsseam.conflicts.DIFF_IS_A_READ`). ``fallback`` when no diff can be
    made (diffs off, the old text unknown, a file that is not text)."""
    if fs.limits.conflict_diff_chars <= 0 or seen is None:
        return fallback
    try:
        data, version = current if current is not None else fs._load_bytes(key, False)
        new = decode(data, shown)
    except FsError:
        return fallback
    old = old if old is not None else fs._text_at(key, seen)
    if old is None:
        return fallback
    summary = summarize(shown, old.view, new.view, fs.limits.conflict_diff_chars)
    if summary.complete and action in DIFF_IS_A_READ:
        fs._observed(key, shown, data, version)
    return FsError(
        ErrorCode.FS_STALE, path=shown, reason="stale_undo" if undo else "stale_changed",
        details={"action": action, "changes": changes_part(
            summary, target_status(new.view, ops), undo=undo, action=action),
            "observed": seen, "current": version, "complete": summary.complete},
    )


def stale_part(fs: Core, key: str, shown: str, seen: Version | None,
               current: tuple[bytes, Version] | None, action: str, fallback: FsError
               ) -> FsError:
    """FS_STALE for one file of a change, with what changed since ``seen`` (the same
    refusal a single edit gives; one more read when ``current`` is not at hand)."""
    if fallback.code is not ErrorCode.FS_STALE or seen is None:
        return fallback
    return stale(fs, key, shown, seen, current, action=action, fallback=fallback)


def stale_source(fs: Core, c: Conflict, key: str, shown: str, pre: Precondition,
                 intent: DeleteIntent, action: str) -> FsError:
    """A delete or move whose source moved on: what changed, when it is FS_STALE."""
    fallback = fs._conflict(c, shown, *lost_of(intent))
    if not isinstance(pre, IfMatch) or intent.conflict_code is not ErrorCode.FS_STALE:
        return fallback
    return stale(fs, key, shown, pre.version, None, action=action, fallback=fallback)


def stale_before(fs: Core, pre: Precondition, current: tuple[bytes, Version], key: str,
                 shown: str, intent: EditIntent | DeleteIntent, action: str) -> None:
    """A precondition already lost against the version just read: refuse now, with what
    changed since the agent's read."""
    if isinstance(pre, IfMatch) and pre.version != current[1]:
        fallback = fs._conflict(Conflict("mismatch", path=shown), shown, *lost_of(intent))
        raise stale_part(fs, key, shown, pre.version, current, action, fallback)


def landed_delete(fs: Core, failure: Exception, key: str, shown: str) -> None:
    """A delete that failed without a refusal may have landed: returns when the file is
    gone (the delete done), else raises the failure, or FS_BACKEND saying the outcome is
    unknown when the file cannot be read either (one read, on this path only)."""
    if not ambiguous(failure):
        raise failure
    outcome, _ = landed(fs.backend, key, None)
    if outcome == "unknown":
        raise FsError(ErrorCode.FS_BACKEND, path=shown, reason="outcome_unknown",
                      details={"cause": cause_text(failure, shown, "delete")}) from failure
    if outcome == "not_done":
        raise failure
