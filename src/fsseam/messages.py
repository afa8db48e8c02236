"""The message catalogue: every sentence a model can read in an error, once.

Errors are facts (:class:`fsseam.errors.FsError`: a code, the path as the model sees it, a
``reason`` naming the sentence, and ``details`` such as line numbers or sizes). The text is
rendered from those facts here, with a *vocabulary* that names the arguments of the tool
the model called: the seam says "the old text", the ``edit`` tool calls it ``old_string``
and ``str_replace_editor`` calls it ``old_str``. So nothing below the tools layer knows a
tool's argument names, and each sentence exists in exactly one place.

A template is a ``str.format`` string. Its fields come from, in order of precedence, the
error's ``details``, ``path``, and the vocabulary (``{old}``, ``{new}``, ...). A field named
after a *clause* (an entry whose name starts with ``_``) is that clause, rendered with the same
fields: a clause several sentences share is written once too. A detail that is a
:class:`Part` names the clause to put there (``Part("_nul_bytes")``), for a sentence whose
middle depends on the facts.

Adapters and plugins add their own sentences with :func:`add`; a reason, once added, always
names the same sentence.
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = [
    "DEFAULT_VOCABULARY",
    "MESSAGES",
    "Part",
    "Role",
    "Sentence",
    "Sentences",
    "Vocabulary",
    "add",
    "render",
]

Vocabulary = Mapping[str, str]


class Role(str):
    """A detail that names a tool argument by its role (``Role("new")``): rendered as that
    argument's name in the calling tool's vocabulary (``new_string``, ``new_str``)."""

    __slots__ = ()


class Part(str):
    """A detail that is a clause of the catalogue (``Part("_nul_bytes")``): rendered as that
    clause, with the same fields as the sentence it is part of."""


class Sentence(NamedTuple):
    """A detail that is itself a catalogue sentence (``Sentence("target_gone", {...})``): it is
    rendered with its own details, in the calling tool's vocabulary, where the outer
    template names it. So a message made of several facts keeps each sentence once."""

    reason: str
    details: Mapping[str, Any] = MappingProxyType({})


class Sentences(tuple[Sentence, ...]):
    """A detail made of zero or more sentences: each rendered and followed by a space
    (nothing at all when empty), so a template can put it before the next sentence."""

    __slots__ = ()


DEFAULT_VOCABULARY: Vocabulary = MappingProxyType(
    {
        # The argument that holds the text to find, and its replacement.
        "old": "old_string",
        "new": "new_string",
        # The whole content of a write / create.
        "content": "content",
        # The text of an insert, and the line it goes at.
        "text": "text",
        "line": "insert_line",
        # How to page a read.
        "offset": "offset",
        "limit": "limit",
        # The tail of the "several matches" advice: how to replace them all, if the tool can.
        "all_hint": ", or set replace_all to replace every occurrence",
        # How to change an existing file, for a call that only creates.
        "modify": "edit",
        # How the model reads a file (again, or instead of listing it).
        "reread": "Read",
        # How the model creates a file (the call that never replaces one).
        "add": "create",
        # What a patch is called in line references ("line 4 of the patch").
        "patch": "patch",
        # The [start, end] line range of a view (the editor's; the file tools page with
        # offset/limit).
        "range": "view_range",
    }
)

_MESSAGES: dict[str, str] = {
    # -- clauses: parts of the sentences below, each written once ----------------------
    "_below_file": "a parent of this path is a file, not a directory",
    "_inside_only": "Only paths inside the workspace can be used.",
    "_choose_other": "Choose another path or ask the user.",
    "_failed_to": "storage failed to {action} {path} ({detail})",
    "_nul_bytes": "it contains NUL bytes, so it looks binary",
    "_bad_utf8": "invalid UTF-8",
    "_bad_utf8_at": "invalid UTF-8 at byte {byte}",
    "_fifo": "a FIFO (named pipe)",
    "_char_device": "a character device",
    "_block_device": "a block device",
    "_socket": "a socket",
    "_special": "a special file",
    # -- paths ---------------------------------------------------------------------------
    "path_empty": "the path is empty; give a file path such as /notes.md.",
    "path_nul": "the path contains a NUL byte; NUL bytes are never valid in a path.",
    "path_escapes": "{path} leads outside the workspace root. Use a path under /.",
    "path_symlink_escapes": (
        "{path} leads outside the workspace (through a symbolic link). {_inside_only}"
    ),
    "symlink_unfollowable": (
        "{path} leads through a symbolic link that cannot be followed here. {_inside_only}"
    ),
    "path_surrogate": (
        "{path} contains a lone surrogate (\\ud800-\\udfff) that no storage can use in a "
        "name. Copy paths from listings exactly."
    ),
    "path_too_deep": (
        "the path is {depth} levels deep; paths may be at most {max} levels deep. Use a "
        "shorter path."
    ),
    "path_too_long": (
        "the path is {length} characters long; paths may be at most {max} characters. Use a "
        "shorter path."
    ),
    "name_too_long": "the path {path} is too long for this storage; use shorter names.",
    "reserved_name": (
        "{path}: names of this form are reserved for fsseam's temporary files. Choose another "
        "name."
    ),
    "root_is_directory": "/ is the workspace root directory; give a file path.",
    # -- missing, kinds ------------------------------------------------------------------
    "not_found": (
        "{path} does not exist. Check the path (list the parent directory), or create the "
        "file."
    ),
    "missing": "{path} does not exist. Check the path, or list the parent directory.",
    "is_directory": "{path} is a directory, not a file. List it, or give a file path.",
    "not_directory": "{path} is a file, not a directory. {reread} it instead.",
    "missing_below_file": "{path} does not exist: {_below_file}.",
    "parent_is_file": "cannot {action} {path}: {_below_file}.",
    "special_file": (
        "{path} is {kind}, not a regular file; fsseam reads and writes regular files only, "
        "and left it untouched."
    ),
    "read_only": "this workspace is read-only; files can be read but not changed.",
    # -- what the storage allows ---------------------------------------------------------
    "mounted_read_only": (
        "cannot {action} {path}: the storage is mounted read-only; nothing was changed."
    ),
    "permission_denied": "permission denied to {action} {path}. {_choose_other}",
    "write_protected": (
        "{path} is write-protected (mode {mode}), so fsseam did not {action} it; it was left "
        "unchanged. Ask the user to make it writable if it should change."
    ),
    "no_space": (
        "no space left on the device (or the disk quota is reached) to {action} {path}; "
        "nothing was changed. Free some space or ask the user."
    ),
    "too_large_for_storage": (
        "{path} would be larger than this storage allows for one file ({detail}); nothing "
        "was written."
    ),
    "storage_failed": "{_failed_to}; nothing was changed. Retry later.",
    "step_failed": "{_failed_to}.",
    "step_refused": (
        "the storage refused to {action} {path} as changed since it was read, which a resend "
        "of this very request also meets once the first one landed."
    ),
    "outcome_unknown": (
        "{cause} Whether it took effect is not known: reading {path} back failed too, so it "
        "may or may not hold the change. {reread} {path} before retrying."
    ),
    "no_version": "the storage returned no version for {path}, so fsseam cannot version it.",
    "no_history": (
        "this storage keeps no older versions of {path}: only the current one can be read."
    ),
    # -- text ----------------------------------------------------------------------------
    "not_text": (
        "{path} is not a UTF-8 text file ({why}); it cannot be read or edited as text and "
        "was left unchanged."
    ),
    "text_has_nul": (
        "{arg} contains a NUL character; fsseam writes text files only. Remove it."
    ),
    "text_not_utf8": (
        "{arg} contains characters that cannot be written as UTF-8 (a lone surrogate at "
        "position {position}); nothing was written."
    ),
    # -- sizes ---------------------------------------------------------------------------
    "edit_too_large": (
        "{path} is {size} bytes or more, over the {cap} bytes an edit or a whole-file write "
        "can hold; it was left unchanged. Read it in windows ({offset}/{limit}) instead."
    ),
    "content_too_large": (
        "the new content of {path} is {size} bytes, more than the {cap} bytes allowed; "
        "nothing was written."
    ),
    # -- reads ---------------------------------------------------------------------------
    "offset_below_one": "{offset} is 1-based: use 1 or more.",
    "below_one": "{arg} must be 1 or more.",
    "limit_below_one": "{limit} must be 1 or more.",
    "offset_past_end": (
        "{offset} {requested} is past the end of {path}, which has {total} lines. Use "
        "{offset}=1 to read from the start."
    ),
    "changed_while_read": (
        "{path} changed while it was being read, so what was read is not one version of the "
        "file. {reread} it again."
    ),
    "kept_changing": (
        "{path} kept changing while it was {doing}; nothing was changed. Retry later."
    ),
    "read_cut_short": (
        "{path} ended at byte {offset} of {size} while being read; nothing was changed. "
        "{reread} it again."
    ),
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
        "{path} was deleted by someone else since you last read it; nothing was moved."
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
    # -- the memory tool ----------------------------------------------------------------
    "memory_outside": (
        "{path} is not under /memories: the memory tool only works on paths under /memories "
        "(such as /memories/notes.md)."
    ),
    "memory_root": "/memories itself cannot be {action}; name a file or directory inside it.",
    "memory_into_itself": "{path} cannot be moved into itself ({destination}).",
    "memory_empty_directory": "{path} is an empty directory; there is nothing to {action}.",
    # -- native tool calls ---------------------------------------------------------------
    "native_no_operation": (
        "the tool call is malformed: an apply_patch_call needs an operation object."
    ),
    "native_no_diff": "the tool call is malformed: a {operation} operation needs a diff.",
    # -- object stores -------------------------------------------------------------------
    "no_bucket": (
        "a workspace on {scheme}:// needs a bucket: {scheme}://bucket or "
        "{scheme}://bucket/prefix."
    ),
    "bucket_missing": (
        "the bucket {bucket} does not exist (while trying to {action} {path}); nothing was "
        "changed. Create the bucket, or fix the workspace URL; ask the user if you cannot."
    ),
    "no_credentials": (
        "{store} did not accept the credentials (or found none) while trying to {action} "
        "{path} ({detail}); nothing was changed. Retrying will not help; to configure "
        "credentials, {configure} Ask the user to set them up."
    ),
    "credentials_unusable": (
        "no usable {store} credentials were found ({detail}). To configure credentials, "
        "{configure}"
    ),
    "store_denied": (
        "permission denied to {action} {path} ({detail}); nothing was changed. The {store} "
        "credentials in use may not do this here: {grant} {_choose_other}"
    ),
    "store_busy": (
        "{store} kept rejecting the {action} of {path} because other conditional requests to "
        "it were in progress ({detail}); nothing was changed. Retry later."
    ),
    "store_rejected": "{store} rejected the request to {action} {path}: {detail}",
    "history_off": (
        "the {store} bucket {bucket} keeps no older versions of {path}: enable versioning on "
        "bucket {bucket} to keep them (only writes made after that are kept)."
    ),
    "version_not_kept": (
        "version {version} of {path} is not kept (or was never a version of it). List its "
        "versions to see which are."
    ),
    # -- calls a backend refuses (mistakes of the code calling it) ------------------------
    "create_only_delete": (
        "a delete of {path} cannot be create-only; delete whatever is there or only a "
        "version you hold."
    ),
    "create_only_copy": (
        "the source of a copy, {path}, cannot be create-only; copy whatever is there or only "
        "a version you hold."
    ),
    # -- opening a workspace --------------------------------------------------------------
    "root_not_directory": (
        "the workspace root {root} is not an existing directory; create it first."
    ),
    "memory_options": (
        "memory:// takes one storage option, global_store (false for a store of this "
        "workspace's own); got {options}."
    ),
    "memory_global_store": (
        "the memory:// storage option global_store must be true or false, not {value!r}."
    ),
    "cached_filesystem": (
        "{filesystem} serves files from a local copy, so reads could show bytes the store no "
        "longer holds; open the workspace on the URL without the cache layer (no "
        "simplecache::, filecache:: or blockcache::)."
    ),
    "generic_on_local": (
        "the generic backend cannot serve local files ({root}): it would follow symbolic "
        "links out of the workspace root. Open the workspace without backend=\"generic\": "
        "a local path or file:// URL uses the local backend, which never follows a link out "
        "of the root."
    ),
    "backend_import_failed": (
        "the fsseam backend for {protocol}:// failed to import ({error}); reinstall it."
    ),
    "adapter_missing": (
        "{protocol}:// needs the fsseam adapter package {package}: pip install {package} from "
        "an index that has it, or from a clone of the fsseam repository: pip install "
        "./{source} (pip install . ./{source} installs fsseam with it)."
    ),
    "needs_package": (
        "{protocol}:// needs a package that is not installed ({error}); install it and try "
        "again."
    ),
    "unknown_protocol": (
        "no fsspec filesystem is known for {protocol}:// ({error}). Check the URL's protocol, "
        "or install the package that provides it."
    ),
    "workspace_denied": (
        "cannot open the workspace {url}: permission denied ({error}). Check the credentials "
        "or storage_options."
    ),
    "workspace_refused": (
        "cannot open the workspace {url}: the {protocol}:// filesystem refused the URL or its "
        "storage_options ({error}). Check both."
    ),
    # -- the editor ----------------------------------------------------------------------
    "view_range_invalid": (
        "{range} [{start}, {end}] is invalid: use [start, end] with 1 <= start <= end, or "
        "end = -1 for the end of the file."
    ),
    "view_range_directory": "{path} is a directory; {range} applies to files only.",
    # -- finding ------------------------------------------------------------------------
    "glob_empty": "the pattern is empty; give a glob such as **/*.py.",
    "glob_parent": (
        "the pattern {pattern} climbs above the search directory (..); give the directory "
        "as path instead."
    ),
    "glob_unclosed_class": (
        "the pattern {pattern} has a [ without its closing ]; escape it as [[] to match a "
        "literal [."
    ),
    "glob_too_many_alternatives": (
        "the pattern {pattern} expands to more than {max} alternatives ({{a,b}} groups); "
        "use fewer groups."
    ),
    "glob_bad_class": (
        "the pattern {pattern} has a character class that matches nothing ({part}); write "
        "classes as [abc], [a-z] or [!abc], with ranges from low to high."
    ),
    "glob_too_long": (
        "the glob pattern is {length} characters long, over the cap of {max}; use a "
        "shorter one (** and * stand for many names, {{a,b}} for a few), or give the "
        "directory as path."
    ),
    "grep_empty": "the pattern is empty; give a regular expression such as def main.",
    "grep_bad_pattern": (
        "the pattern {pattern} is not a valid regular expression ({error}). Escape special "
        "characters with a backslash (\\( \\[ \\. \\*) to match them literally."
    ),
    "grep_pattern_too_long": (
        "the pattern is {length} characters long, over the cap of {max}; search for a "
        "shorter, distinctive part of it, and narrow the files with path or glob."
    ),
    "limit_out_of_range": "{arg} must be between {low} and {high}; it was {value}.",
    # -- tool calls ----------------------------------------------------------------------
    "invalid_arguments": "invalid arguments for {tool}: {problems}.",
    # The problems, joined with "; " (pydantic's own words for the rest).
    "_arg_unexpected": "unexpected argument '{arg}'",
    "_arg_missing": "missing required argument '{arg}'",
    "_tag_invalid": "{tag} must be one of {expected}",
    "_insert_text_missing": "insert needs the text to insert, in {text} (or insert_text)",
    "_insert_text_twice": "give the text to insert once: {text} or insert_text, not both",
    "arguments_not_json": "arguments are not valid JSON ({error}).",
    "arguments_not_object": "arguments must be a JSON object, not {kind}.",
    "unknown_tool": (
        "there is no tool named {name!r}. The tools are: {tools}. Call one of them."
    ),
    "arguments_too_deep": (
        "arguments are nested too deeply to be read; send a flat JSON object."
    ),
    "path_not_utf8": (
        "a path given to {tool} holds bytes that are not UTF-8, which this storage cannot use "
        "in a name."
    ),
    # -- mounts (several stores under one root) --------------------------------------------
    "outside_mounts": (
        "{path} is not under any mounted store. Use a path under one of the mounts: {mounts}."
    ),
    "read_only_mount": (
        "{path} is on {mount}, which is mounted read-only; files there can be read but not "
        "changed."
    ),
    "mount_path_invalid": (
        "{mount} is not a mount point: mount points are absolute paths such as /data, "
        "without . or .. parts."
    ),
    "mount_duplicate": "{mount} is mounted twice; mount each path once.",
    "mounts_empty": "no stores were given to mount; mount at least one, at / for instance.",
    "mounts_need_a_table": (
        "a mounted workspace is built from a table of mount points, not from a URL: use "
        "Workspace.mount."
    ),
    "mount_unknown": "{what} names {mount}, which is not mounted; the mounts are {mounts}.",
    "backend_given_with_options": (
        "a workspace given a backend instance takes no storage_options and no fs: build the "
        "backend with them instead."
    ),
    "mount_options_for_backend": (
        "{mount} is mounted with a backend already built; storage options and adapter names "
        "apply only to mounts given as URLs."
    ),
    # -- conflicts that show what changed (see fsseam.conflicts) --------------------------
    "stale_changed": (
        "{path} has changed since you last read it, so your {action} was not applied. "
        "{changes}"
    ),
    "stale_undo": (
        "{path} was changed by someone else after your last change to it, so your change was "
        "not undone: undoing it would throw their change away. {changes}"
    ),
    "changes_complete": (
        "What changed, from {since} to the current one:\n{diff}\n{status}{advice}"
    ),
    "changes_partial": (
        "What changed, from {since} to the current one (the first {shown} changed lines; "
        "{more} more are not shown):\n{diff}\n{status}{reread} it again before you go on."
    ),
    "changes_none": (
        "Its text is the same as {since} (it was rewritten with the same content). "
        "{status}{advice}"
    ),
    "since_read": "the version you read",
    "since_yours": "the version your change made",
    "advice_retry": (
        "You have now seen the current version: retry against it without reading it again."
    ),
    "advice_reread_whole": (
        "Your {action} replaces the whole file, so sending it again would throw this change "
        "away. {reread} the file again and keep the change in what you send, or use "
        "{modify} to change only your part."
    ),
    "advice_reread": (
        "{reread} the file again before you retry the {action}: a {action} goes ahead only "
        "on a version you have read."
    ),
    "advice_by_hand": (
        "You have now seen the current version: to take your change back, edit it by hand "
        "against this version (undo would be refused again)."
    ),
    "changes_unknown": "{reread} it to see what changed.",
    "target_unique": "Your {old}{which} still occurs exactly once in it.",
    "target_gone": "Your {old}{which} no longer occurs in it.",
    "target_ambiguous": "Your {old}{which} now occurs {times} in it.",
    # -- history, restore and undo -------------------------------------------------------
    "nothing_to_undo": (
        "you have made no change to {path} that can be undone here (undo takes back your "
        "own writes and edits of the file, newest first)."
    ),
    "undo_needs_policy": (
        "undo needs the observation policy, which records each agent's changes; this "
        "workspace runs without it (policy=False)."
    ),
    "history_not_kept": (
        "this workspace keeps no older versions of {path}, which {tool} needs. Open the "
        "workspace with history=History() to have fsseam keep them (S3 and GCS keep them "
        "where the bucket has versioning enabled)."
    ),
    "version_unknown": (
        "{path} has no kept version {version}. Call history to see the versions kept."
    ),
    "version_ambiguous": (
        "{version} matches {count} versions of {path}; give more of the version id, as "
        "history shows it."
    ),
    "version_is_deletion": (
        "{version} is the deletion of {path}: it has no content to bring back. Choose a "
        "version with content."
    ),
    "kept_version_missing": (
        "version {version} of {path} is no longer kept (the oldest copies are dropped when "
        "the history is full). Call history to see the versions kept."
    ),
    "history_index_damaged": (
        "the history fsseam keeps of {path} cannot be used: its index file {index} is "
        "damaged ({error}), so no older version of it can be listed or brought back now. "
        "{path} itself is unaffected: read, edit and write it as usual; its next change "
        "sets the damaged index aside and starts a new one from the copies still kept. Ask "
        "the user to repair {index} if an older version is needed before that."
    ),
    "history_not_history": (
        "history= takes a History value, such as History() or History(path=\"/var/lib/"
        "fsseam/history\"), not {given}."
    ),
    "history_native": (
        "this storage keeps versions itself (S3 bucket versioning, GCS object versioning); "
        "enable versioning on the bucket instead of passing history=."
    ),
    "history_inside_root": (
        "the history directory {where} lies inside the workspace, where the tools would see "
        "it; choose a directory outside the workspace root."
    ),
    "history_dir_foreign": (
        "the history directory {where} already holds files that are not fsseam's history; "
        "choose an empty directory, or one fsseam made."
    ),
    "history_dir_unusable": "the history directory {where} cannot be used ({error}).",
    # --- stores ---
    # What each object store's user configures or grants: clauses of no_credentials,
    # credentials_unusable and store_denied (their {configure} and {grant}). Options are
    # spelled dict(...): a rendered sentence holds no brace.
    "_s3_configure": (
        'pass storage_options=dict(key=..., secret=...) (or dict(profile=...)), or set '
        "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (plus AWS_SESSION_TOKEN for temporary "
        'credentials); a public bucket can be read with dict(anon=True).'
    ),
    "_s3_grant": (
        "grant them s3:GetObject, s3:PutObject, s3:DeleteObject and s3:ListBucket on the "
        "bucket (s3:GetBucketVersioning and s3:ListBucketVersions for history), or use "
        "other credentials."
    ),
    "_gcs_configure": (
        'pass storage_options=dict(token="/path/to/service-account.json") (or '
        'dict(token="google_default") after `gcloud auth application-default login`), or set '
        'GOOGLE_APPLICATION_CREDENTIALS; a public bucket can be read with dict(token="anon").'
    ),
    "_gcs_grant": (
        "grant them roles/storage.objectUser on the bucket (storage.objects.get, create, "
        "delete and list; storage.buckets.get for history), or use other credentials."
    ),
    "_azure_configure": (
        'pass storage_options=dict(connection_string="...") (or dict(account_name="...", '
        'account_key="..."), or dict(account_name="...", sas_token="..."), or '
        'dict(account_name="...", anon=False) to sign in with DefaultAzureCredential), or '
        "set AZURE_STORAGE_CONNECTION_STRING; a public container can be read with "
        'dict(account_name="...", anon=True).'
    ),
    "_azure_grant": (
        "grant them the Storage Blob Data Contributor role on the container (read, write, "
        "delete and list blobs), use a SAS with those permissions, or use other credentials."
    ),
    # What a store client says when a request ends without the store's own error: the
    # detail of storage_failed.
    "gcs_upload_no_location": "the resumable upload initiation returned no Location",
    "gcs_upload_stalled": "resumable upload made no progress at byte {offset}",
    "gcs_rewrite_no_token": "the rewrite is not done and gave no token to continue",
    "azure_copy_failed": "Azure copy {status}: {description}",
    "azure_copy_pending": "Azure copy of {source} still pending after 10 minutes",
}

MESSAGES: Mapping[str, str] = MappingProxyType(_MESSAGES)
"""reason -> template. Read-only: a sentence is changed here (or where :func:`add` adds it),
nowhere else."""


def add(entries: Mapping[str, str]) -> None:
    """Add sentences to the catalogue: an adapter's or a plugin's own, under reasons of its
    own (``s3_part_size``). Adding a reason again with the same text does nothing; with
    another text it raises ValueError, so a reason always names one sentence."""
    for reason, template in entries.items():
        list(string.Formatter().parse(template))  # a malformed template fails here, not later
        known = _MESSAGES.get(reason)
        if known is not None and known != template:
            raise ValueError(f"the message catalogue already has a sentence for {reason!r}")
    _MESSAGES.update(entries)


class _Fields(dict[str, Any]):
    """The fields of one rendering; a field named after a clause is that clause."""

    def __missing__(self, name: str) -> str:
        if name.startswith("_") and name in _MESSAGES:
            return _MESSAGES[name].format_map(self)
        raise KeyError(name)


def render(
    reason: str,
    path: str | None = None,
    details: Mapping[str, Any] | None = None,
    vocabulary: Vocabulary | None = None,
) -> str:
    """The text of one error, in the words of ``vocabulary`` (default: the file tools')."""
    fields = _Fields(DEFAULT_VOCABULARY)
    if vocabulary:
        fields.update(vocabulary)
    if path is not None:
        fields["path"] = path
    parts: dict[str, str] = {}
    if details:
        for name, value in details.items():
            if isinstance(value, Part):
                parts[name] = value
            elif isinstance(value, Role):
                fields[name] = fields.get(value, value)
            elif isinstance(value, Sentence):
                fields[name] = render(value.reason, path, value.details, vocabulary)
            elif isinstance(value, Sentences):
                fields[name] = "".join(
                    render(p.reason, path, p.details, vocabulary) + " " for p in value
                )
            else:
                fields[name] = value
    for name, part in parts.items():
        fields[name] = _MESSAGES[part].format_map(fields)
    return _MESSAGES[reason].format_map(fields)
