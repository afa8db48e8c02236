"""Patches: the Codex patch envelope and V4A hunks, parsed and applied to a text, purely.

:mod:`~fsseam.patches.parse` reads a patch into values (what the envelope and a hunk may
say); :mod:`~fsseam.patches.apply` finds where each hunk applies and splices it in, and
turns a parsed patch into file changes.
"""

from .apply import MAX_LISTED_MATCHES as MAX_LISTED_MATCHES
from .apply import apply_hunks as apply_hunks
from .apply import as_changes as as_changes
from .apply import hunk_edit as hunk_edit
from .parse import ADD as ADD
from .parse import BEGIN as BEGIN
from .parse import DELETE as DELETE
from .parse import END as END
from .parse import END_OF_FILE as END_OF_FILE
from .parse import MOVE as MOVE
from .parse import UPDATE as UPDATE
from .parse import AddFile as AddFile
from .parse import DeleteFile as DeleteFile
from .parse import PatchHunk as PatchHunk
from .parse import PatchOp as PatchOp
from .parse import UpdateFile as UpdateFile
from .parse import parse_create_diff as parse_create_diff
from .parse import parse_patch as parse_patch
from .parse import parse_update_diff as parse_update_diff

__all__ = [
    "AddFile",
    "DeleteFile",
    "PatchHunk",
    "PatchOp",
    "UpdateFile",
    "apply_hunks",
    "as_changes",
    "hunk_edit",
    "parse_create_diff",
    "parse_patch",
    "parse_update_diff",
]
