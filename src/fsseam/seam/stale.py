"""What a lost precondition tells the agent: FS_STALE with what changed since its read
(a diff, and where each edit's replacement stands now), or the policy's explanation when
no diff can be made."""

from __future__ import annotations

from collections.abc import Sequence

from ..changes import judge
from ..conflicts import DIFF_IS_A_READ, changes_part, summarize, target_status, unshown_part
from ..edits import EditOp
from ..errors import Conflict, ErrorCode, FsError
from ..events import DeleteIntent, EditIntent
from ..messages import Reason, Sentence
from ..text import TextDoc, decode
from ..versions import IfMatch, Precondition, SameChange, Version
from .core import Core, Lost, text_at
from .plans import lost_of

__all__ = ["same_part", "stale", "stale_before", "stale_part", "stale_source"]


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
    fallback = fs.refusal_for(c, shown, *lost)
    if not isinstance(pre, IfMatch) or lost[0] is not ErrorCode.FS_STALE:
        return fallback
    return stale(fs, key, shown, pre.version, None, action=action, fallback=fallback)


def stale_before(fs: Core, pre: Precondition, current: tuple[bytes, Version], key: str,
                 shown: str, intent: EditIntent | DeleteIntent, action: str) -> None:
    """A precondition already lost against the version just read: refuse now, with what
    changed since the agent's read."""
    if isinstance(pre, IfMatch) and pre.version != current[1]:
        fallback = fs.refusal_for(Conflict("mismatch", path=shown), shown, *lost_of(intent))
        raise stale_part(fs, key, shown, pre.version, current, action, fallback)


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
