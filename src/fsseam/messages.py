"""The message catalogue: every sentence a model can read in an error, once.

Errors are facts (:class:`fsseam.errors.FsError`: a code, the path as the model sees it, a
``reason`` naming the sentence, and ``details`` such as line numbers or sizes). The text is
rendered from those facts here, with a *vocabulary* that names the arguments of the tool
the model called: the seam says "the old text", the ``edit`` tool calls it ``old_string``
and ``str_replace_editor`` calls it ``old_str``. So nothing below the tools layer knows a
tool's argument names, and each sentence exists in exactly one place.

A template is a ``str.format`` string. Its fields come from, in order of precedence, the
error's ``details``, ``path``, and the vocabulary (``{old}``, ``{new}``, ...).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

__all__ = ["DEFAULT_VOCABULARY", "MESSAGES", "Part", "Role", "Sentences", "Vocabulary", "render"]

Vocabulary = Mapping[str, str]


class Role(str):
    """A detail that names a tool argument by its role (``Role("new")``): rendered as that
    argument's name in the calling tool's vocabulary (``new_string``, ``new_str``)."""

    __slots__ = ()


class Part(NamedTuple):
    """A detail that is itself a catalogue sentence (``Part("target_gone", {...})``): it is
    rendered with its own details, in the calling tool's vocabulary, where the outer
    template names it. So a message made of several facts keeps each sentence once."""

    reason: str
    details: Mapping[str, Any] = MappingProxyType({})


class Sentences(tuple[Part, ...]):
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
        # How the model re-reads a file.
        "reread": "Read",
    }
)

_MESSAGES: dict[str, str] = {
    # -- paths ---------------------------------------------------------------------------
    "path_empty": "the path is empty; give a file path such as /notes.md.",
    "path_nul": "the path contains a NUL byte; NUL bytes are never valid in a path.",
    "path_escapes": "{path} leads outside the workspace root. Use a path under /.",
    "path_symlink_escapes": (
        "{path} leads outside the workspace (through a symbolic link). Only paths inside the "
        "workspace can be used."
    ),
    "root_is_directory": "/ is the workspace root directory; give a file path.",
    # -- missing, kinds ------------------------------------------------------------------
    "not_found": (
        "{path} does not exist. Check the path (list the parent directory), or create the "
        "file."
    ),
    "missing": "{path} does not exist. Check the path, or list the parent directory.",
    "is_directory": "{path} is a directory, not a file. List it, or give a file path.",
    "not_directory": "{path} is a file, not a directory. Read it instead.",
    "parent_is_file": "cannot {action} {path}: a parent of this path is a file, not a directory.",
    "read_only": "this workspace is read-only; files can be read but not changed.",
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
    "limit_below_one": "{limit} must be 1 or more.",
    "offset_past_end": (
        "{offset} {requested} is past the end of {path}, which has {total} lines. Use "
        "{offset}=1 to read from the start."
    ),
    "no_version": "{path}: the storage returned no version.",
    # -- edits ---------------------------------------------------------------------------
    "old_empty": "{old} is empty; give the exact text to replace (read the file to copy it).",
    "old_equals_new": "{old} and {new} are the same; nothing would change.",
    "no_match": (
        "{old} was not found in {path}. It must match the file exactly, including whitespace "
        "and indentation; read the file and copy the text."
    ),
    "multiple_matches": (
        "{old} occurs {count} times in {path}, at lines {lines}{more}. Include more "
        "surrounding lines in {old} to make it unique{all_hint}."
    ),
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
    "create_exists": (
        "{path} already exists; create never replaces a file. View it and use {modify} to "
        "change it."
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
    "deleted_before_delete": "{path} was already deleted by someone else; nothing to do.",
    "deleted_before_move": (
        "{path} was deleted by someone else since you last read it; nothing was moved."
    ),
    "move_destination_exists": (
        "{destination} already exists; a move never replaces a file, and both files are "
        "unchanged. Choose another destination, or delete {destination} first."
    ),
    "move_same_path": "{path} is both the source and the destination; nothing to move.",
    "move_rollback_lost": (
        "{path} changed while it was being moved, and {destination}, the copy made for the "
        "move, was changed by someone else before it could be removed: {path} holds the "
        "other writer's version and {destination} the other writer's bytes. Read both "
        "before going on."
    ),
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
    "grep_empty": "the pattern is empty; give a regular expression such as def main.",
    "grep_bad_pattern": (
        "the pattern {pattern} is not a valid regular expression ({error}). Escape special "
        "characters with a backslash (\\( \\[ \\. \\*) to match them literally."
    ),
    "limit_out_of_range": "{arg} must be between {low} and {high}; it was {value}.",
    # -- tool calls ----------------------------------------------------------------------
    "invalid_arguments": "invalid arguments for {tool}: {problems}.",
    "arguments_not_json": "arguments are not valid JSON ({error}).",
    "arguments_not_object": "arguments must be a JSON object.",
    "arguments_too_deep": (
        "arguments are nested too deeply to be read; send a flat JSON object."
    ),
    "path_not_utf8": (
        "a path given to {tool} holds bytes that are not UTF-8, which this storage cannot use "
        "in a name."
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
    "advice_by_hand": (
        "You have now seen the current version: to take your change back, edit it by hand "
        "against this version (undo would be refused again)."
    ),
    "changes_unknown": "{reread} it to see what changed.",
    "target_unique": "Your {old}{which} still occurs exactly once in it.",
    "target_gone": "Your {old}{which} no longer occurs in it.",
    "target_ambiguous": "Your {old}{which} now occurs {count} times in it.",
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
    "kept_changing": (
        "{path} kept changing while its current version was being kept in the history; "
        "nothing was changed. Retry."
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
}

MESSAGES: Mapping[str, str] = MappingProxyType(_MESSAGES)
"""reason -> template. Read-only: a sentence is changed here, nowhere else."""


def render(
    reason: str,
    path: str | None = None,
    details: Mapping[str, Any] | None = None,
    vocabulary: Vocabulary | None = None,
) -> str:
    """The text of one error, in the words of ``vocabulary`` (default: the file tools')."""
    fields: dict[str, Any] = dict(DEFAULT_VOCABULARY)
    if vocabulary:
        fields.update(vocabulary)
    if path is not None:
        fields["path"] = path
    if details:
        for name, value in details.items():
            if isinstance(value, Role):
                value = fields.get(value, value)
            elif isinstance(value, Part):
                value = render(value.reason, path, value.details, vocabulary)
            elif isinstance(value, Sentences):
                value = "".join(
                    render(p.reason, path, p.details, vocabulary) + " " for p in value
                )
            fields[name] = value
    return MESSAGES[reason].format_map(fields)
