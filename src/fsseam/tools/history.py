"""history and restore: the versions the storage keeps of a file, and bringing one back."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..history import HistoryEntry, HistoryOutcome, RestoreOutcome
from ..seam import Seam
from .annotations import READ_ONLY, ToolAnnotations
from .base import Tool
from .render import render

__all__ = [
    "HistoryArgs",
    "HistoryTool",
    "RestoreArgs",
    "RestoreTool",
    "render_history",
    "render_restore",
]

MAX_HISTORY_LIMIT = 100

HISTORY_DESCRIPTION = (
    "List the versions of a file that the storage keeps, newest first: each with its "
    "version id, when it was written, its size, and who wrote it (when an agent wrote it "
    "through these tools). Pass a version id to restore to bring that version back. "
    "Versions are kept by S3 buckets with versioning, GCS buckets with object versioning, "
    "or fsseam itself where the workspace keeps history; elsewhere this is refused "
    "(FS_UNSUPPORTED, saying how to turn history on)."
)

RESTORE_DESCRIPTION = (
    "Bring back an earlier version of a file (a version id from history; a unique prefix "
    "of it is enough), as a new change. Like write, it needs a read of the file first, "
    "and the file must not have changed since (FS_NOT_OBSERVED or FS_STALE otherwise; "
    "FS_STALE shows what changed); a file you saw deleted needs no read. The version it "
    "replaces stays in the history, so a restore can be undone or restored in turn."
)


class HistoryArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description="Path of the file.")
    limit: int | None = Field(
        default=None, ge=1, le=MAX_HISTORY_LIMIT,
        description=f"Most versions to list, newest first (default 10, at most "
                    f"{MAX_HISTORY_LIMIT}).",
    )


class RestoreArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description="Path of the file.")
    version: str = Field(
        min_length=1, description="The version id to bring back, as history lists it."
    )


class HistoryTool(Tool[HistoryArgs, HistoryOutcome]):
    name = "history"
    annotations = READ_ONLY
    args_model = HistoryArgs

    def __init__(self, description: str = HISTORY_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: HistoryArgs) -> HistoryOutcome:
        return fs.history(args.file_path) if args.limit is None else fs.history(
            args.file_path, args.limit)


class RestoreTool(Tool[RestoreArgs, RestoreOutcome]):
    name = "restore"
    # Restoring the same version twice leaves the file as the first call did.
    annotations = ToolAnnotations(read_only=False, destructive=True, idempotent=True)
    args_model = RestoreArgs

    def __init__(self, description: str = RESTORE_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: RestoreArgs) -> RestoreOutcome:
        return fs.restore(args.file_path, args.version)


def _row(e: HistoryEntry, you: str) -> str:
    when = e.modified.strftime("%Y-%m-%d %H:%M:%S UTC") if e.modified else "time unknown"
    if e.deleted:
        what = f"(deleted)  {when}"
    else:
        size = f"{e.size:,} bytes" if e.size is not None else "size unknown"
        what = f"{e.id}{'  (current)' if e.latest else ''}  {when}  {size}"
    if e.owner is not None:
        what += f"  by {e.owner}{' (you)' if e.owner == you else ''}"
    return what


def render_history(o: HistoryOutcome) -> str:
    n = len(o.entries)
    head = f"{o.path}: {n} version{'s' if n != 1 else ''} kept, newest first."
    rows = [f"{i}. {_row(e, o.you)}" for i, e in enumerate(o.entries, 1)]
    tail = []
    if n >= o.limit:
        tail.append(f"(Showing the newest {o.limit}; older versions may be kept too: raise "
                    "limit to see them.)")
    if any(not e.latest and not e.deleted for e in o.entries):
        tail.append("To bring one back: restore with file_path and its version id.")
    return "\n".join([head, *rows, *tail])


def render_restore(o: RestoreOutcome) -> str:
    if o.operation == "undo":
        if o.deleted:
            return f"Undid your last change of {o.path}, which created it: the file is deleted."
        if o.unchanged:
            return (f"{o.path} already holds the version from before your last change "
                    f"({o.restored}); nothing was written.")
        return (f"Undid your last change of {o.path}: it holds the content of version "
                f"{o.restored} again.")
    if o.unchanged:
        return f"{o.path} already holds version {o.restored}; nothing was written."
    made = "Recreated" if o.created else "Restored"
    lines = f", {len(o.lines)} line{'s' if len(o.lines) != 1 else ''}" if o.lines else ""
    return (f"{made} {o.path} at version {o.restored} ({o.size:,} bytes{lines}). The "
            "version it replaced stays in the history.")


@render.register
def _(o: HistoryOutcome) -> str:
    return render_history(o)


@render.register
def _(o: RestoreOutcome) -> str:
    return render_restore(o)
