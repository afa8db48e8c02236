"""history and restore: the versions the storage keeps of a file, and bringing one back."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..messages import Clause, Part, Reason
from ..messages import render as say
from ..outcomes import HistoryEntry, HistoryOutcome, RestoreOutcome
from ..seam import Seam
from .base import READ_ONLY, Tool, ToolAnnotations
from .render import render, size_text

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
    when = (e.modified.strftime("%Y-%m-%d %H:%M:%S UTC") if e.modified
            else say(Clause.time_unknown))
    if e.deleted:
        what = f"{say(Clause.deleted_mark)}  {when}"
    else:
        size = size_text(e.size) if e.size is not None else say(Clause.size_unknown)
        current = f"  {say(Clause.current_mark)}" if e.latest else ""
        what = f"{e.id}{current}  {when}  {size}"
    if e.owner is not None:
        what += "  " + say(Clause.by_owner, details={"owner": e.owner})
        if e.owner == you:
            what += " " + say(Clause.you_mark)
    return what


def render_history(o: HistoryOutcome) -> str:
    n = len(o.entries)
    head = say(Reason.history_head, o.path, {
        "count": n, "versions": Part(Clause.one_version if n == 1 else Clause.n_versions)})
    rows = [f"{i}. {_row(e, o.you)}" for i, e in enumerate(o.entries, 1)]
    tail = []
    if n >= o.limit:
        tail.append(say(Reason.history_more, details={"newest": o.limit}))
    if any(not e.latest and not e.deleted for e in o.entries):
        tail.append(say(Reason.history_restore_hint))
    return "\n".join([head, *rows, *tail])


def _extent(o: RestoreOutcome) -> Part:
    """The size of a restored file: bytes, and lines when it has any."""
    if not o.lines:
        return Part(Clause.bytes)
    return Part(Clause.bytes_one_line if len(o.lines) == 1 else Clause.bytes_lines)


def render_restore(o: RestoreOutcome) -> str:
    if o.operation == "undo":
        if o.deleted:
            reason = Reason.undo_deleted_created
        else:
            reason = Reason.undo_unchanged if o.unchanged else Reason.undone
    elif o.unchanged:
        reason = Reason.restore_unchanged
    else:
        reason = Reason.recreated if o.created else Reason.restored
    return say(reason, o.path, {
        "version": o.restored, "size": f"{o.size:,}", "lines": len(o.lines or ()),
        "extent": _extent(o)})


@render.register
def _(o: HistoryOutcome) -> str:
    return render_history(o)


@render.register
def _(o: RestoreOutcome) -> str:
    return render_restore(o)
