"""delete and move: guarded like edit, decided by the storage where it can."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..outcomes import DeleteOutcome, MoveOutcome
from ..seam import Seam
from .base import Tool
from .render import render_delete, render_move

__all__ = ["DeleteArgs", "DeleteTool", "MoveArgs", "MoveTool"]

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
