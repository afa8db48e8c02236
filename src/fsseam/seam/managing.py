"""Managing files: delete, and move (a guarded copy, then a guarded delete), each a plan
of one step through :func:`~fsseam.seam.pipeline.run`."""

from __future__ import annotations

from ..errors import ErrorCode, FsError
from ..events import DeletedEvent, WrittenEvent
from ..messages import Reason
from ..outcomes import DeleteOutcome, MoveOutcome
from ..paths import display
from ..versions import IfMatch
from .core import Core
from .pipeline import run
from .plans import FilePlan, Plan, ask, lost_of

__all__ = ["delete", "move"]


def delete(fs: Core, path: str) -> DeleteOutcome:
    """Delete a file, only at the version this owner observed (with the policy on)."""
    fs.check_writable()
    key, shown = fs.resolve_file(path)
    fs.check_writable_at(key)
    intent = ask(fs, "delete", key, shown, operation="delete")
    pre = intent.precondition
    run(fs, Plan.one("delete", FilePlan(key, shown, b"", pre, "delete", "delete",
                                        lost_of(intent), fs.write_meta())))
    fs.gate.dispatch(DeletedEvent(owner=fs.owner, key=key, path=shown))
    return DeleteOutcome(path=shown, version=pre.version if isinstance(pre, IfMatch) else None)


def move(fs: Core, source: str, destination: str) -> MoveOutcome:
    """Move a file to a path that does not exist yet (see :meth:`fsseam.seam.Seam.move`)."""
    fs.check_writable()
    src, dst = fs.key(source), fs.key(destination)
    src_shown, dst_shown = display(src), display(dst)
    if not src or not dst:
        raise FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason=Reason.root_is_directory)
    if src == dst:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=src_shown, reason=Reason.move_same_path)
    fs.check_writable_at(src, dst)
    intent = ask(fs, "delete", src, src_shown, operation="move", destination=dst_shown)
    plan = FilePlan(src, src_shown, b"", intent.precondition, "move", "move", lost_of(intent),
                    fs.write_meta())
    version = run(fs, Plan.one("move", plan, destination=(dst, dst_shown)))[0].version
    assert version is not None
    fs.gate.dispatch(WrittenEvent(owner=fs.owner, key=dst, path=dst_shown,
                                   operation="move", version=version, created=True))
    fs.gate.dispatch(DeletedEvent(owner=fs.owner, key=src, path=src_shown,
                                   operation="move", destination=dst_shown))
    return MoveOutcome(source=src_shown, destination=dst_shown, version=version)
