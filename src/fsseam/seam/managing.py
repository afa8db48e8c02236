"""Managing files: delete, and move (a guarded copy, then a guarded delete)."""

from __future__ import annotations

from ..changes import ambiguous, cause_text, gone_already, landed
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..events import DeletedEvent, DeleteIntent, WrittenEvent
from ..outcomes import DeleteOutcome, MoveOutcome
from ..paths import display
from ..versions import IfMatch, Precondition, Version
from .core import Core
from .pipeline import delete_one, stale_source
from .plans import FilePlan, ask, lost_of

__all__ = ["delete", "move"]


def delete(fs: Core, path: str) -> DeleteOutcome:
    """Delete a file, only at the version this owner observed (with the policy on)."""
    fs._writable()
    key, shown = fs._file(path)
    fs._writable_at(key)
    intent = ask(fs, "delete", key, shown, operation="delete")
    pre = intent.precondition
    delete_one(fs, FilePlan(key, shown, b"", pre, "delete", "delete", lost_of(intent),
                            fs._meta()))
    fs._gate.dispatch(DeletedEvent(owner=fs.owner, key=key, path=shown))
    return DeleteOutcome(path=shown, version=pre.version if isinstance(pre, IfMatch) else None)


def move(fs: Core, source: str, destination: str) -> MoveOutcome:
    """Move a file to a path that does not exist yet (see :meth:`fsseam.seam.Seam.move`)."""
    fs._writable()
    src, dst = fs.key(source), fs.key(destination)
    src_shown, dst_shown = display(src), display(dst)
    if not src or not dst:
        raise FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason="root_is_directory")
    if src == dst:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=src_shown, reason="move_same_path")
    fs._writable_at(src, dst)
    intent = ask(fs, "delete", src, src_shown, operation="move", destination=dst_shown)
    pre = intent.precondition
    facts = {"destination": dst_shown}
    try:
        version = fs.backend.copy(src, dst, pre)
    except Conflict as c:
        if c.reason == ConflictKind.exists:
            raise FsError(ErrorCode.FS_ALREADY_EXISTS, path=src_shown,
                          reason="move_destination_exists", details=facts) from None
        if c.reason == ConflictKind.missing:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=src_shown,
                          reason="deleted_before_move") from None
        raise stale_source(fs, c, src, src_shown, pre, intent, "move") from None
    except FsError as e:
        raise fs._missing(src, e) if e.code is ErrorCode.FS_NOT_FOUND else e from None
    try:
        fs._delete(src, pre)
    except Exception as e:
        _unmove(fs, e, src, dst, version, pre, intent)
    fs._gate.dispatch(WrittenEvent(owner=fs.owner, key=dst, path=dst_shown,
                                   operation="move", version=version, created=True))
    fs._gate.dispatch(DeletedEvent(owner=fs.owner, key=src, path=src_shown,
                                   operation="move", destination=dst_shown))
    return MoveOutcome(source=src_shown, destination=dst_shown, version=version)


def _unmove(fs: Core, e: Exception, src: str, dst: str, version: Version, pre: Precondition,
            intent: DeleteIntent) -> None:
    """The source's delete failed after the copy was made. Returns when the source is gone
    all the same (a resend of our delete found it gone, or the delete landed and then
    failed): the move is done, and its bytes are at the destination. Otherwise the copy is
    taken back, guarded by its own version (no one's later write to it is lost), and the
    error raised; but never while the source may be gone."""
    src_shown, dst_shown = display(src), display(dst)
    facts = {"destination": dst_shown}
    if gone_already(e):
        return
    if ambiguous(e):
        outcome, _ = landed(fs.backend, src, None)
        if outcome == "done":
            return
        if outcome == "unknown":
            raise FsError(ErrorCode.FS_BACKEND, path=src_shown, reason="move_outcome_unknown",
                          details={**facts, "cause": cause_text(e, src_shown, "delete")},
                          ) from e
    try:
        fs.backend.delete(dst, IfMatch(version))
    except Conflict as lost:
        if lost.reason != ConflictKind.missing:  # missing: the copy is gone, as the undo wants
            raise FsError(ErrorCode.FS_STALE, path=src_shown, reason="move_rollback_lost",
                          details=facts) from e
    except Exception as failed:
        if landed(fs.backend, dst, None)[0] != "done":
            details = {**facts, "cause": cause_text(e, src_shown, "delete"),
                       "error": cause_text(failed, dst_shown, "delete").rstrip(".")}
            raise FsError(ErrorCode.FS_BACKEND, path=src_shown, reason="move_copy_kept",
                          details=details) from e
    if isinstance(e, Conflict):
        raise stale_source(fs, e, src, src_shown, pre, intent, "move") from None
    raise e
