"""Sentences of the tools themselves: the memory tool, native calls, the editor, the finders
and tool-call arguments."""

from __future__ import annotations

SENTENCES: dict[str, str] = {
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
    # -- the Agents SDK's state of a conversation (what it has read) ---------------------
    "agents_state_foreign": (
        "what this conversation has read cannot be used: {where} is not fsseam's ({detail}). "
        "Nothing was changed, and it was not reset; ask the user to restore or remove it "
        "(then read the files again)."
    ),
    "agents_session_unusable": (
        "what this conversation has read cannot be reached in its session database {db} "
        "({detail}); nothing was changed. Retry later, or ask the user to check the "
        "database."
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
    # Its {kind}: what the arguments were instead, as JSON names it.
    "_json_array": "an array",
    "_json_string": "a string",
    "_json_number": "a number",
    "_json_boolean": "a boolean",
    "_json_null": "null",
    "unknown_tool": (
        "there is no tool named {name!r}. The tools are: {tools}. Call one of them."
    ),
    "call_id_reused": (
        "call id {call_id!r} belongs to another call (another tool or other arguments), "
        "already made by this owner; nothing was changed. Give each call its own id."
    ),
    "tool_not_offered": (
        "there is no tool named {name!r} in the tool set served here ({set}: {tools}). Call "
        "one of them."
    ),
    "arguments_too_deep": (
        "arguments are nested too deeply to be read; send a flat JSON object."
    ),
    "path_not_utf8": (
        "a path given to {tool} holds bytes that are not UTF-8, which this storage cannot use "
        "in a name."
    ),
    # deepagents: its read_file's 0-based offset, and its grep's literal text
    "deepagents_offset_past_end": (
        "Line offset {start} exceeds file length ({total} lines) of {path}. Use offset=0 to "
        "read from the start."
    ),
    "deepagents_grep_empty": "the pattern is empty; give the text to search for.",
    # deepagents: read_file returns an image or other media file whole, as a content block
    "deepagents_media_too_large": (
        "{path} is larger than the {max} bytes read_file returns of an image or other media "
        "file, so it was not read. Ask the user for a smaller version of the file."
    ),
    "deepagents_observations_corrupt": (
        "the record of what this conversation has read ({channel} in its saved state) is "
        "not in a format fsseam can read, so no file can be changed safely in it. Tell the "
        "user: the saved state was written by another program or damaged; restore it, or "
        "start a new conversation."
    ),
}
