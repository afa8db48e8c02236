"""multi_edit and apply_patch: several changes as one, all or nothing."""

from __future__ import annotations

from types import MappingProxyType

from pydantic import BaseModel, ConfigDict, Field

from ..edits import Replace
from ..errors import FsError
from ..messages import DEFAULT_VOCABULARY, Reason, render
from ..outcomes import ChangeOutcome, EditOutcome
from ..patches import as_changes, parse_patch
from ..seam import Seam
from .base import Tool
from .render import render_change

__all__ = [
    "APPLY_PATCH_VOCABULARY",
    "ApplyPatchArgs",
    "ApplyPatchTool",
    "EditItem",
    "MultiEditArgs",
    "MultiEditTool",
    "not_applied",
]

APPLY_PATCH_VOCABULARY = MappingProxyType(
    {
        **DEFAULT_VOCABULARY,
        "old": "the hunk's context and - lines",
        "new": "the hunk's + lines",
        "content": "the new file's + lines",
        "all_hint": "",
        "add": "*** Add File",
        "modify": "an *** Update File section",
    }
)

MULTI_EDIT_DESCRIPTION = (
    "Make several exact text replacements in one file, as one change. The edits are applied "
    "in order, each to the result of the previous one; each old_string must match exactly "
    "(copy it from read output without the line-number prefix; tabs and indentation count) "
    "and be unique in the text at that point, unless its replace_all is true. No fuzzy "
    "matching. If any edit fails, none is applied and the error names the edit. The file "
    "must have been read first and must not have changed since your read (or your own last "
    "change); otherwise nothing is changed (FS_NOT_OBSERVED or FS_STALE): read it again and "
    "retry. All edits are written at once; bytes outside the replaced text, newline style "
    "and BOM are kept."
)

APPLY_PATCH_DESCRIPTION = (
    "Create, update, move and delete files with one patch, all or nothing. The patch is:\n"
    "*** Begin Patch\n"
    "*** Add File: path/new.py\n"
    "+every line of the new file, prefixed with +\n"
    "*** Update File: path/old.py\n"
    "*** Move to: path/renamed.py   (optional)\n"
    "@@ def some_function():   (optional: a line of the file the hunk comes after)\n"
    " context line (prefixed with a space)\n"
    "-removed line\n"
    "+added line\n"
    "*** End of File   (optional: the hunk is at the end of the file)\n"
    "*** Delete File: path/obsolete.py\n"
    "*** End Patch\n"
    "Paths are relative to the workspace root. Matching is exact: context and - lines must "
    "equal the file's lines, whitespace and indentation included (no fuzzy matching); give "
    "about 3 lines of context around each change, and an @@ line when that is not unique. "
    "Update, Move and Delete need a read of each file first, and no file may have changed "
    "since (FS_NOT_OBSERVED or FS_STALE otherwise); Add and Move to need paths that do not "
    "exist. Every part is checked before anything is written; if any part fails, no file is "
    "changed. Newline style, BOM, tabs and every byte outside the hunks are kept."
)


class EditItem(BaseModel):
    model_config = ConfigDict(extra="forbid")
    old_string: str = Field(
        min_length=1,
        description="The exact text to replace, as it is after the edits before this one.",
    )
    new_string: str = Field(description="The text to replace it with (must differ).")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string (default false)."
    )


class MultiEditArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    file_path: str = Field(
        description="Path of the file. `/` is the workspace root; relative paths resolve "
        "against it."
    )
    edits: list[EditItem] = Field(
        min_length=1, description="The edits, applied in order as one change."
    )


class ApplyPatchArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    patch: str = Field(
        description="The whole patch, from *** Begin Patch to *** End Patch."
    )


# Errors that say file by file what the store holds: "nothing was applied" would not be true.
_DETAILED = frozenset({Reason.change_rollback_incomplete, Reason.change_outcome_unknown})


def not_applied(text: str, err: FsError) -> str:
    """An error of a change, with the fact the model most needs: nothing was applied
    (unless undoing did not fully succeed, or a step's outcome is unknown, which the error
    itself then details)."""
    if err.reason in _DETAILED:
        return text
    return f"{text} {render(Reason.change_not_applied)}"


class MultiEditTool(Tool[MultiEditArgs, EditOutcome]):
    name = "multi_edit"
    args_model = MultiEditArgs

    def __init__(self, description: str = MULTI_EDIT_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: MultiEditArgs) -> EditOutcome:
        ops = [Replace(e.old_string, e.new_string, e.replace_all) for e in args.edits]
        try:
            return fs.edit(args.file_path, ops)
        except FsError as e:
            e.details.setdefault("edit_count", len(ops))
            raise

    def render_error(self, err: FsError) -> str:
        text = err.render(self.vocabulary)
        index = err.details.get("edit_index")
        if index is None:
            return text
        return render(Reason.multi_edit_failed, err.path, {
            "index": index, "count": err.details.get("edit_count", "?"), "cause": text,
        }, self.vocabulary)


class ApplyPatchTool(Tool[ApplyPatchArgs, ChangeOutcome]):
    name = "apply_patch"
    args_model = ApplyPatchArgs
    vocabulary = APPLY_PATCH_VOCABULARY

    def __init__(self, description: str = APPLY_PATCH_DESCRIPTION) -> None:
        self.description = description

    def run(self, fs: Seam, args: ApplyPatchArgs) -> ChangeOutcome:
        return fs.change(as_changes(parse_patch(args.patch)))

    def render(self, outcome: ChangeOutcome) -> str:
        return render_change(outcome)

    def render_error(self, err: FsError) -> str:
        return not_applied(err.render(self.vocabulary), err)
