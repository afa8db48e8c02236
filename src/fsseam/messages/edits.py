"""Sentences about edits, observation and conflicts, patches, and changes of several files."""

from __future__ import annotations

SENTENCES: dict[str, str] = {
    # -- edits ---------------------------------------------------------------------------
    "old_empty": "{old} is empty; give the exact text to replace (read the file to copy it).",
    "old_equals_new": "{old} and {new} are the same; nothing would change.",
    "no_match": (
        "{old} was not found in {path}. It must match the file exactly, including whitespace "
        "and indentation; read the file and copy the text."
    ),
    "multiple_matches": (
        "{old} occurs {times} in {path}, {where}. Include more surrounding lines in "
        "{old} to make it unique{all_hint}."
    ),
    # How often a text occurs, and where: counted and listed up to a bound.
    "_times": "{count} times",
    "_times_over": "more than {count} times",
    "_at_line": "at line {lines}",
    "_at_lines": "at lines {lines}",
    "_at_lines_more": "at lines {lines} and on later lines",
    "no_edits": "no edits were given; give at least one.",
    "insert_out_of_range": (
        "{line} {requested} is out of range: {path} has {total} lines, so use 0 (before the "
        "first line) to {total} (after the last)."
    ),
    # -- observation and conflicts -------------------------------------------------------
    "not_observed_edit": (
        "{path} has not been read yet. {reread} it first, then retry the edit."
    ),
    "not_observed_write": (
        "{path} already exists and you have not read it. {reread} it first, then retry."
    ),
    "stale_edit": (
        "{path} has changed since you last read it. {reread} it again, then retry the edit."
    ),
    "created_since_absent_edit": (
        "{path} was created since you last read it. {reread} it again, then retry the edit."
    ),
    "stale_write": (
        "{path} has changed since you last read it. {reread} it again, then retry."
    ),
    "created_since_absent_write": (
        "{path} was created by someone else after you found it missing. {reread} it, then "
        "retry."
    ),
    "changed_during_edit": (
        "{path} changed while your edit was being written. {reread} it again, then retry "
        "the edit."
    ),
    "deleted_since_read": (
        "{path} no longer exists. It was deleted since you last read it; read it again (it "
        "will be reported missing), then write it to recreate it."
    ),
    # Backend-level conflicts, before the seam says what the agent should do about them.
    "conflict_exists": "{path} already exists.",
    "conflict_mismatch": "{path} has changed since it was read.",
    "conflict_missing": "{path} no longer exists.",
    "not_observed_delete": (
        "{path} has not been read yet. {reread} it first (a delete needs the version you "
        "saw), then retry the delete."
    ),
    "not_observed_move": (
        "{path} has not been read yet. {reread} it first (a move needs the version you saw), "
        "then retry the move."
    ),
    "absent_observed": (
        "{path} did not exist when you last looked. List the directory to find the file."
    ),
    "stale_delete": (
        "{path} has changed since you last read it, so it was not deleted. {reread} it "
        "again, then decide."
    ),
    "stale_move": (
        "{path} has changed since you last read it, so it was not moved. {reread} it again, "
        "then retry the move."
    ),
    "deleted_before_delete": (
        "{path} does not exist any more (someone else deleted it, or a resend of this very "
        "delete after its answer was lost found it gone); nothing to do."
    ),
    "deleted_before_move": (
        "{path} was moved or deleted by another writer since you last read it; nothing was "
        "moved."
    ),
    "move_destination_exists": (
        "{destination} already exists; a move never replaces a file, and both files are "
        "unchanged. Choose another destination, or delete {destination} first."
    ),
    "move_same_path": "{path} is both the source and the destination; nothing to move.",
    "move_outcome_unknown": (
        "{cause} Whether {path} was deleted is not known (reading it back failed too), so "
        "{destination}, the copy made for the move, was kept: it holds the content of "
        "{path}. {reread} both before going on; if {path} still exists, delete it to finish "
        "the move."
    ),
    "move_copy_kept": (
        "{cause} Removing {destination}, the copy made for the move, failed too ({error}): "
        "it may still exist. {reread} both before going on."
    ),
    "move_rollback_lost": (
        "{path} changed while it was being moved, and {destination}, the copy made for the "
        "move, was changed by someone else before it could be removed: {path} holds the "
        "other writer's version and {destination} the other writer's bytes. Read both "
        "before going on."
    ),
    # -- patches ------------------------------------------------------------------------
    "patch_no_begin": (
        "the patch must start with the line *** Begin Patch; it starts with {text}."
    ),
    "patch_no_end": "the patch must end with the line *** End Patch (was it cut short?).",
    "patch_empty": (
        "the patch names no file: give at least one *** Add File, *** Update File or "
        "*** Delete File section."
    ),
    "patch_bad_header": (
        "line {line} of the {patch}, {text}, does not start a file section: use *** Add File: "
        "PATH, *** Update File: PATH or *** Delete File: PATH (each line of a new file starts "
        "with +)."
    ),
    "patch_no_path": "line {line} of the {patch} gives no path after {marker}.",
    "patch_bad_line": (
        "line {line} of the {patch}, {text}, is not a hunk line: each line of a hunk starts "
        "with a space (context), - (removed) or + (added), and every hunk after the first "
        "starts with @@."
    ),
    "patch_empty_update": (
        "the *** Update File section of {path} (line {line}) has no hunks: give at least one "
        "hunk, or a *** Move to line."
    ),
    "patch_empty_hunk": "the hunk at line {line} of the {patch} has no lines.",
    "patch_add_line": (
        "line {line} of the {patch}, {text}, does not start with +: every line of a new file "
        "does."
    ),
    "patch_hunk_no_match": (
        "hunk {hunk} of {path} (line {line} of the {patch}) does not match the file: its "
        "context and - lines, starting with {first}, were not found{where}. They must match "
        "the file exactly, whitespace and indentation included; read the file and rebuild the "
        "hunk from its current text."
    ),
    "patch_hunk_ambiguous": (
        "hunk {hunk} of {path} (line {line} of the {patch}) matches {count} places, at lines "
        "{lines}{more}. Add context lines, or an @@ line naming the enclosing function or "
        "class, so that it matches one place."
    ),
    "patch_anchor_not_found": (
        "the @@ line {anchor} of hunk {hunk} of {path} (line {line} of the {patch}) names no "
        "line of the file{where}. It must equal a line of the file, apart from surrounding "
        "whitespace."
    ),
    # -- changes of several files --------------------------------------------------------
    "change_empty": "no file changes were given; give at least one.",
    "change_same_path": (
        "{path} is named more than once in one change (as a file to create, update, delete "
        "or move to); give each file one section."
    ),
    "change_nothing": "{path}: an update needs an edit or a new path; nothing to do.",
    "add_exists": (
        "{path} already exists; {add} never replaces a file. {reread} it, then change it with "
        "{modify}."
    ),
    "change_not_applied": "Nothing was applied: every file is as it was.",
    "change_outcome_unknown": (
        "{cause} Whether that step took effect is not known, so the change stopped there and "
        "nothing that may depend on it was undone: {files}. Read these files before going "
        "on, and redo only what they lack."
    ),
    "change_rollback_incomplete": (
        "{cause} Undoing what had already been written did not fully succeed: {files}. Read "
        "these files before going on."
    ),
    "rollback_restored": "{path} is as it was",
    "rollback_untouched": "{path} was not written",
    "rollback_changed": (
        "{path} was changed by someone else after this change wrote it, and was left as they "
        "made it"
    ),
    "rollback_deleted": "{path} was deleted by someone else after this change wrote it",
    "rollback_recreated": (
        "{path} was created again by someone else after this change deleted it, and was left "
        "as they made it"
    ),
    "rollback_kept": "{path} still holds this change's new content (undoing failed: {error})",
    "rollback_still_deleted": "{path} is still deleted (restoring it failed: {error})",
    "rollback_shared": (
        "{path} holds this change's new content, which someone else had written too (or a "
        "resend of this change's own request), and was left as it is"
    ),
    "rollback_shared_deleted": (
        "{path} was deleted by someone else too (or by a resend of this change's own "
        "request), and was left deleted"
    ),
    "rollback_unknown": (
        "whether {path} is as it was is not known (undoing this change's step failed: "
        "{error}; and reading it back failed too): read it to see"
    ),
    "rollback_move_kept": (
        "{path} still holds the content moved there from {source}, and was kept since "
        "{source} is not known to hold it again"
    ),
    "outcome_unknown_written": (
        "whether {path} holds this change's new content is not known (reading it back "
        "failed): read it to see"
    ),
    "outcome_unknown_deleted": (
        "whether {path} was deleted is not known (reading it back failed): read it to see"
    ),
    "multi_edit_failed": (
        "edit {index} of {count} failed, so no edit was applied and {path} is unchanged: "
        "{cause}"
    ),
    # clauses of the patch hunk sentences, rendered into their details
    "_patch_after_line": "after line {after}",
    "_patch_at_end": "at the end of the file",
    "_patch_more": "and more",
}
