"""Sentences about paths, kinds of files, what the storage allows, text, sizes and reads,
and the clauses they share."""

from __future__ import annotations

SENTENCES: dict[str, str] = {
    # -- clauses: parts of the sentences below, each written once ----------------------
    "_below_file": "a parent of this path is a file, not a directory",
    "_inside_only": "Only paths inside the workspace can be used.",
    "_choose_other": "Choose another path or ask the user.",
    "_failed_to": "storage failed to {action} {path} ({detail})",
    # The {action} at a copy's destination (a write there: a file on the way is a mistake
    # in the path, not a missing file).
    "_copy_to": "copy to",
    # The {doing} of kept_changing while a kept history copies the version it replaces.
    "_kept_copying": "being copied into the history",
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
    # -- the guarded fsspec filesystem (Context.filesystem, the fsseam:: protocol) --------
    "filesystem_owner_missing": (
        "the fsseam filesystem needs an owner, the name whose reads guard its writes: pass "
        "owner=NAME (chained: storage_options=dict(fsseam=dict(owner=NAME)), or "
        "fsseam=dict(owner=NAME) in fsspec.open)."
    ),
    "filesystem_target_missing": (
        "the fsseam filesystem needs the storage it guards: chain it to a URL "
        "(fsseam::memory://proj/data.csv, fsseam::s3://bucket/key), or use "
        "ctx.filesystem() on a Context."
    ),
    "filesystem_outside_root": (
        "{path} is outside this filesystem's root {root}; nothing was read or changed. Give "
        "a path under {root}, or open the fsseam URL with root= naming a directory above it."
    ),
    "filesystem_mode": (
        "the fsseam filesystem opens files for reading (rb), writing (wb), creating (xb) or "
        "appending (ab), not with mode {mode}."
    ),
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
    "show_too_large": (
        "{path} is {size} bytes or more, over the {cap} bytes that can be shown whole (the "
        "edit limit); it was not shown and does not count as read."
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
    # -- images and PDFs ---------------------------------------------------------------------
    "binary_not_shown": (
        "{path} is not a UTF-8 text file ({why}), nor an image (PNG, JPEG, GIF, WebP) or a "
        "PDF; read cannot show it, and it was left unchanged. Ask the user if its content "
        "matters."
    ),
    "image_too_large": (
        "{path} is an image ({media_type}) of {size} bytes or more, over the {cap} bytes a "
        "read shows; nothing was shown. Ask the user for a smaller image."
    ),
    "pdf_too_large": (
        "{path} is a PDF of {size} bytes or more, over the {cap} bytes whose text a read "
        "extracts; nothing was shown. Ask the user for a smaller PDF or its text."
    ),
    "pdf_needs_pypdf": (
        "{path} is a PDF; reading its text needs the pypdf package, which is not installed "
        "(pip install 'fsseam[pdf]'). Ask the user to install it."
    ),
    "pdf_encrypted": (
        "{path} is an encrypted PDF: its text cannot be read without the password. Ask the "
        "user for an unencrypted copy."
    ),
    "pdf_unreadable": (
        "{path} begins as a PDF but cannot be read as one ({detail}); it was left unchanged. "
        "Ask the user for a valid copy."
    ),
    "pdf_no_text": (
        "{path} is a PDF with no text to extract (pages: {pages}); scanned pages are "
        "pictures of text, which read cannot show. Ask the user for a text version."
    ),
    "pdf_too_many_pages": (
        "{path} is a PDF of more than {cap} pages, the most whose text a read extracts (the "
        "workspace's {limit} limit); nothing was shown. Ask the user for the pages you need "
        "as a smaller PDF, or for its text."
    ),
    "pdf_too_much_text": (
        "{path} is a PDF with more than {cap} characters of text, the most a read extracts "
        "(the workspace's {limit} limit); nothing was shown. Ask the user for the pages you "
        "need as a smaller PDF, or for its text."
    ),
    "pdf_too_slow": (
        "{path} is a PDF whose text took longer than {cap} seconds to extract, the most a "
        "read may spend on it (the workspace's {limit} limit); nothing was shown. Ask the "
        "user for the pages you need as a smaller PDF, or for its text."
    ),
}
