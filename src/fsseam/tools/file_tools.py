"""The file tools: read, write and edit (the seed's three, snake_case arguments), delete and
move (guarded like edit, decided by the storage where it can)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..outcomes import (
    DeleteOutcome,
    EditOutcome,
    ImageOutcome,
    MoveOutcome,
    ReadOutcome,
    WriteOutcome,
)
from ..seam import Seam
from .base import READ_ONLY, Tool, ToolAnnotations
from .render import MAX_LINE_CHARS, MAX_READ_CHARS, render_delete, render_move

__all__ = [
    "DeleteArgs",
    "DeleteTool",
    "EditArgs",
    "EditTool",
    "MoveArgs",
    "MoveTool",
    "ReadArgs",
    "ReadTool",
    "WriteArgs",
    "WriteTool",
]

_PATH = (
    "Path of the file. `/` is the workspace root; relative paths resolve against it."
)


class ReadArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description=_PATH)
    offset: int | None = Field(
        default=None, ge=1, description="1-based line number to start reading from (default 1)."
    )
    limit: int | None = Field(
        default=None, ge=1, description="Maximum number of lines to return (default 2000)."
    )


class WriteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description=_PATH)
    content: str = Field(description="The complete new content of the file.")


class EditArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description=_PATH)
    old_string: str = Field(
        min_length=1,
        description="The exact text to replace, copied from the file without the line-number "
        "prefix (tabs and indentation included). Must be unique unless replace_all is true.",
    )
    new_string: str = Field(description="The text to replace it with (must differ).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string (default false)."
    )


READ_DESCRIPTION = (
    "Read a text file. Returns lines in `cat -n` format: the line number, a tab, then the line "
    "exactly as in the file (tabs kept). Reads up to 2000 lines from `offset`; the footer says "
    "how to continue (offset=N). An image (PNG, JPEG, GIF, WebP) is shown to you as an image; "
    "a PDF reads as its text, page by page. Reading a file (even a window of it) is what "
    "allows you to modify it afterwards: write and edit refuse an existing file you have not "
    "read, and a file that changed since you read it must be read again."
)

WRITE_DESCRIPTION = (
    "Write a whole file, creating it (and its directories) if it does not exist. A new file "
    "needs no read. To replace an existing file you must have read it first, and it must not "
    "have changed since: otherwise the write is refused (FS_NOT_OBSERVED or FS_STALE) and "
    "nothing is changed. FS_STALE shows what changed since your read; as your content "
    "replaces the whole file, read it again and keep that change before you retry (or use "
    "edit to change only your part); this holds when someone else wrote exactly your "
    "content since your read too. Content the file already held exactly when you read it is "
    "not written again. An existing file keeps its BOM and newline style. Prefer edit for "
    "changing part of a file."
)

EDIT_DESCRIPTION = (
    "Replace exact text in a file. old_string must match the file exactly (copy it from read "
    "output without the line-number prefix; tabs and indentation count) and be unique, unless "
    "replace_all is true. No fuzzy matching. You must have read the file first, and it must "
    "not have changed since your read (or your own last edit); otherwise the edit is refused "
    "(FS_NOT_OBSERVED or FS_STALE) and nothing is changed. FS_STALE shows what changed since "
    "your read and whether your old_string still occurs once: when it shows all of it and "
    "your old_string still occurs once, retry the edit as it is; otherwise read the file "
    "again and retry. If someone else made exactly your change since your read, the edit "
    "is refused too (FS_STALE says so): apply it again only if it builds on the old value. "
    "Bytes outside the replaced text, newline style and BOM are kept."
)


class ReadTool(Tool[ReadArgs, ReadOutcome | ImageOutcome]):
    name = "read"
    annotations = READ_ONLY
    args_model = ReadArgs

    def __init__(self, description: str = READ_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: ReadArgs) -> ReadOutcome | ImageOutcome:
        return fs.read_any(args.file_path, args.offset or 1, args.limit,
                           max_chars=MAX_READ_CHARS, max_line_chars=MAX_LINE_CHARS)


class WriteTool(Tool[WriteArgs, WriteOutcome]):
    name = "write"
    # Writing the same content again changes nothing (the agent's own write is what it
    # observed); it replaces whatever the file held, hence destructive.
    annotations = ToolAnnotations(read_only=False, destructive=True, idempotent=True)
    args_model = WriteArgs

    def __init__(self, description: str = WRITE_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: WriteArgs) -> WriteOutcome:
        return fs.write(args.file_path, args.content)


class EditTool(Tool[EditArgs, EditOutcome]):
    name = "edit"
    args_model = EditArgs

    def __init__(self, description: str = EDIT_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: EditArgs) -> EditOutcome:
        return fs.replace(args.file_path, args.old_string, args.new_string, args.replace_all)


# -- delete and move ------------------------------------------------------------------------
DELETE_DESCRIPTION = (
    "Delete a file. Like edit, it needs a read of the file first, and the file must not "
    "have changed since (or since your own last change); otherwise nothing is deleted "
    "(FS_NOT_OBSERVED or FS_STALE): read it again and decide. The delete itself is "
    "conditional on the version you read, so another agent's newer change is never lost. "
    "Directories are not deleted."
)

MOVE_DESCRIPTION = (
    "Move (rename) a file to a new path. The source needs a read first and must not have "
    "changed since (FS_NOT_OBSERVED or FS_STALE otherwise); the destination must not exist "
    "(FS_ALREADY_EXISTS: nothing is replaced, both files stay as they were). Missing "
    "directories of the destination are created. Afterwards you may edit the file at its "
    "new path without reading it again."
)


class DeleteArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(description="Path of the file to delete.")


class MoveArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    source_path: str = Field(description="Path of the file to move.")
    destination_path: str = Field(description="Its new path (must not exist).")


class DeleteTool(Tool[DeleteArgs, DeleteOutcome]):
    name = "delete"
    args_model = DeleteArgs

    def __init__(self, description: str = DELETE_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: DeleteArgs) -> DeleteOutcome:
        return fs.delete(args.file_path)

    def render(self, outcome: DeleteOutcome) -> str:
        return render_delete(outcome)


class MoveTool(Tool[MoveArgs, MoveOutcome]):
    name = "move"
    args_model = MoveArgs

    def __init__(self, description: str = MOVE_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: MoveArgs) -> MoveOutcome:
        return fs.move(args.source_path, args.destination_path)

    def render(self, outcome: MoveOutcome) -> str:
        return render_move(outcome)
