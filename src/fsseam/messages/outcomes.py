"""What a successful call tells the model: the text of each outcome, once.

Rows of data (line numbers, paths, sizes) are laid out by the renderers in
:mod:`fsseam.tools.render`; every word around them is here. Several tools say the same thing
(a created file, an edited file, an empty view, clipped output): one entry each. The texts of
the editor and the memory tool are those the models were trained on, word for word.
"""

from __future__ import annotations

SENTENCES: dict[str, str] = {
    # -- counts and ranges, shared by the sentences below --------------------------------
    "_one_line": "1 line",
    "_n_lines": "{lines} lines",
    "_bytes": "{size} bytes",
    "_bytes_one_line": "{_bytes}, {_one_line}",
    "_bytes_lines": "{_bytes}, {_n_lines}",
    "_lines_span": "{first}-{last}",
    "_lines_of": "{first}-{last} of {total}",
    # -- reading -------------------------------------------------------------------------
    "read_empty": "(The file {path} is empty.)",
    "read_capped": (
        "(Output capped at {max_chars} characters: showing lines {shown}. Use offset={next} "
        "to continue.)"
    ),
    "read_more_follow": (
        "(Showing lines {_lines_span}; more lines follow. Use offset={next} to continue.)"
    ),
    "read_window": "(Showing lines {_lines_of}. Use offset={next} to continue.)",
    "read_end": "(End of file: lines {_lines_of}.)",
    "image_shown": "Image {path} ({media_type}, {_bytes}): shown below.",
    "pdf_page": "--- page {page} ---",
    "line_truncated": "... [line truncated: {more} more characters]",
    # -- writing and editing -------------------------------------------------------------
    "write_unchanged": "{path} already holds exactly this content; nothing was written.",
    "write_created": "Created {path} ({count}).",
    "write_wrote": "Wrote {path} ({count}).",
    "edit_unchanged": "{path} already holds the result of this edit; nothing was written.",
    "edit_several": (
        "Edited {path}: {edits} edits applied in one write ({replacements} replacements); "
        "the first at line {first_line}."
    ),
    "edit_inserted": "Inserted into {path} at line {first_line}.",
    "edit_replaced_one": "Edited {path}: replaced 1 occurrence at line {first_line}.",
    "edit_replaced": "Edited {path}: replaced {replacements} occurrences.",
    "deleted": "Deleted {path}.",
    "moved": "Moved {source} to {destination}.",
    "change_applied": "Success. Updated the following files:",
    "moved_from": "(moved from {source})",
    # -- listing and finding -------------------------------------------------------------
    "list_more": "({more} more entries not listed)",
    "list_omitted": "({omitted} hidden, dependency or cache entries omitted)",
    "ls_empty": "{path} is empty.",
    "ls_clipped": "(Showing {shown} of {total} entries. Use glob with a pattern to narrow.)",
    "ls_omitted": "({omitted} entries omitted)",
    "glob_none": "No files match {pattern} in {path}.",
    "glob_hidden": (
        "({hidden} hidden or dependency directories and matching hidden files were left "
        "out, not searched; name them in the pattern to include them.)"
    ),
    "glob_clipped": (
        "(Showing {shown} of {total} matching files, in path order. Narrow the pattern or "
        "the path to see the rest.)"
    ),
    "finder_ignored": (
        "({ignored} paths ignored by .gitignore or .ignore files were left out; pass "
        "include_ignored=true to include them.)"
    ),
    "grep_none": "No matches for {pattern} in {path} ({searched} files searched).",
    "grep_none_shown": "{matched} files match {pattern}; none shown (max_results).",
    "grep_not_searched": "(Not searched: {kinds}.)",
    # The files a search skipped, by why (joined with ", ").
    "_skipped_binary": "{count} binary",
    "_skipped_not_utf8": "{count} not UTF-8",
    "_skipped_too_large": "{count} too large",
    "_skipped_timeout": "{count} too slow for the pattern",
    "_skipped_unreadable": "{count} unreadable",
    "_skipped_hidden": (
        "{count} in hidden or dependency directories (name them in glob or path to search "
        "them)"
    ),
    "grep_stopped": (
        "(The search stopped early: the pattern is slow on these files and used up the time "
        "one search may take, so the files after that were not searched. Narrow with path or "
        "glob, or simplify the pattern: avoid repeating a group whose parts can match the "
        "same text, such as (a|aa)+ or (a+)+.)"
    ),
    # A finder out of time (Limits.finder_seconds): what it covers, and the next step.
    "glob_out_of_time": (
        "(The glob stopped early: it used up the time one search may take, so it covers the "
        "paths before {resume} in path order, and so do the counts. {narrow}, or "
        "make the pattern narrower.)"
    ),
    "grep_out_of_time": (
        "(The search stopped early: it used up the time one search may take, so it covers "
        "the files before {resume} in path order, and so do the counts. {narrow}, "
        "or limit the files with glob.)"
    ),
    "_narrow_at": (
        "To find the rest, search a narrower path, such as path={next} (where it stopped)"
    ),
    "_narrow": "To find the rest, search a narrower path",
    "grep_slow_pattern": (
        "(The pattern was slow on these files too: simplify it, avoiding a repeated group "
        "whose parts can match the same text, such as (a|aa)+ or (a+)+.)"
    ),
    "grep_total": "Total: {lines_matched} matching lines in {files_matched} files.",
    "grep_limited": (
        "(Output limited: {found} in all. Set max_results (up to 10000) to see more, or "
        "narrow with path or glob.)"
    ),
    "_n_matching_lines": "{total} matching lines",
    "_n_files": "{total} files",
    # -- the editor and the memory tool (Anthropic's words) ------------------------------
    "_cat_n": "Here's the result of running `cat -n` on",
    "_two_levels": (
        "the files and directories up to 2 levels deep in {path}, excluding hidden items:"
    ),
    "cat_view": "{_cat_n} {path}:",
    "view_empty": "(the file is empty)",
    "view_clipped": (
        "<response clipped: showing lines {shown}. To see more, view with view_range "
        "[{next}, {end}].>"
    ),
    "editor_listing": "Here's {_two_levels}",
    "listing_clipped": (
        "<response clipped: {hidden} more entries not shown; view a subdirectory to see them.>"
    ),
    "file_created": "File created successfully at: {path}",
    "file_edited": "The file {path} has been edited.",
    "editor_create_unchanged": (
        "{path} already exists with exactly this content; nothing was written."
    ),
    "editor_inserted": "Text inserted at line {first_line} of {path}.",
    "editor_edit_unchanged": (
        "{path} is unchanged by this edit (it already holds its result); nothing was written."
    ),
    "editor_snippet": (
        "{what} {_cat_n} a snippet of {path}:\n{snippet}\nReview the changes and make sure "
        "they are as expected. Edit the file again if necessary."
    ),
    "editor_undo_created": (
        "Last edit to {path} undone successfully: it created the file, which is now deleted."
    ),
    "editor_undo_unchanged": (
        "{path} already had its content from before your last edit; nothing was written."
    ),
    "editor_undone": "Last edit to {path} undone successfully.",
    "memory_file": "Here's the content of {path} with line numbers:",
    "memory_listing": "Here're {_two_levels}",
    "memory_edited": (
        "The memory file has been edited. Here is the snippet showing the change (with line "
        "numbers):\n{snippet}"
    ),
    "memory_deleted": "Successfully deleted {path}",
    "memory_renamed": "Successfully renamed {path} to {new_path}",
    # -- history, restore and undo -------------------------------------------------------
    "history_head": "{path}: {versions} kept, newest first.",
    "_one_version": "1 version",
    "_n_versions": "{count} versions",
    "_deleted_mark": "(deleted)",
    "_current_mark": "(current)",
    "_you_mark": "(you)",
    "_by_owner": "by {owner}",
    "_time_unknown": "time unknown",
    "_size_unknown": "size unknown",
    "history_more": (
        "(Showing the newest {newest}; older versions may be kept too: raise limit to see "
        "them.)"
    ),
    "history_restore_hint": "To bring one back: restore with file_path and its version id.",
    "undo_deleted_created": (
        "Undid your last change of {path}, which created it: the file is deleted."
    ),
    "undo_unchanged": (
        "{path} already holds the version from before your last change ({version}); nothing "
        "was written."
    ),
    "undone": "Undid your last change of {path}: it holds the content of version {version} again.",
    "restore_unchanged": "{path} already holds version {version}; nothing was written.",
    "_restored_at": (
        "{path} at version {version} ({extent}). The version it replaced stays in the history."
    ),
    "restored": "Restored {_restored_at}",
    "recreated": "Recreated {_restored_at}",
    # -- every tool ----------------------------------------------------------------------
    "tool_error": "Error [{code}]: {message}",
    "display_ok": "**{tool}** ok",
    "display_failed": "**{tool}** failed: `{code}`",
}
