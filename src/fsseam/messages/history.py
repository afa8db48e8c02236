"""Sentences about conflicts that show what changed, history, restore and undo."""

from __future__ import annotations

SENTENCES: dict[str, str] = {
    # -- conflicts that show what changed (see fsseam.conflicts) --------------------------
    "stale_changed": (
        "{path} has changed since you last read it, so your {action} was not applied. "
        "{changes}"
    ),
    # The one rule for a change the file already holds (fsseam.versions.same_change):
    # another writer's equal bytes are not the agent's change.
    "stale_same_change": (
        "{path} already holds exactly your change, made by another writer since your "
        "read; {_same_change_next} {changes}"
    ),
    "stale_same_change_maybe": (
        "{path} already holds exactly your change, made since your read by another writer "
        "or by an earlier try of yours whose answer was lost (which one cannot be told); "
        "{_same_change_next} {changes}"
    ),
    "_same_change_next": (
        "nothing was written: if your change should apply once, it is there; if it builds "
        "on the old value, apply it again."
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
        "{more} more are not shown):\n{diff}\n{status}{advice}"
    ),
    "changes_none": (
        "Its text is the same as {since} (it was rewritten with the same content). "
        "{status}{advice}"
    ),
    "since_read": "the version you read",
    "since_yours": "the version your change made",
    # What to do after FS_STALE, said the same way in every refusal and in stale_story.
    "advice_retry": (
        "Retry the edit as it is; this refusal counts as your read of the current version."
    ),
    "advice_reread_edit": "{reread} the file again, then retry the edit.",
    "advice_adjust": (
        "This refusal counts as your read of the current version: fit your edit to the "
        "change shown and retry it, without reading the file again."
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
    "advice_reread_on": "{reread} it again before you go on.",
    # The one story of FS_STALE (MCP instructions, the demo, the docs), made of the very
    # sentences a refusal ends with.
    "stale_story": (
        "FS_STALE means the file changed since you last read it (another agent or a person "
        "changed it), so your change was not applied and nothing was changed. The refusal "
        "shows what changed since your read and, for an edit, whether your {old} still "
        "occurs exactly once. After an edit, if the change is shown whole and your {old} "
        "still occurs exactly once: {retry} If it is shown whole but your edit no longer "
        "fits: {adjust} If only part of it is shown: {reread_edit} After a write: {whole} "
        "When the file already holds exactly your change, made by another writer since your "
        "read, the refusal says so: {_same_change_next}"
    ),
    "advice_by_hand": (
        "You have now seen the current version: to take your change back, edit it by hand "
        "against this version (undo would be refused again)."
    ),
    "changes_unknown": "{reread} it to see what changed.",
    # Why no diff can be shown (the FS_STALE refusal still says what to do next).
    "changes_unshown": "What changed since {since} cannot be shown: {why} {advice}",
    "unshown_not_kept": (
        "this storage keeps no older versions, and this process no longer holds the text of "
        "that version (it was read before a restart, in another process, or too long ago)."
    ),
    "unshown_gone": "this storage's history no longer keeps that version.",
    "unshown_unreadable": "reading that version back from this storage's history failed.",
    "unshown_old_not_text": "that version is not text.",
    "unshown_new_not_text": "the current version is not text.",
    "target_unique": "Your {old}{which} still occurs exactly once in it.",
    "_which_edit": "(edit {index})",
    "_diff_line_cut": "... [line cut]",
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
    # The {error} of history_index_damaged: what is wrong with the index file.
    "_index_not_object": "holds a JSON {json_type}, not an object",
    "_index_wrong_format": "wrong format or key",
    "_index_entries_not_list": "its entries are not a list",
    "_index_bad_entry": "an entry's {field}: {problem}",
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
}
