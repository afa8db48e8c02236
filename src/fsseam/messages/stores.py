"""Sentences about object stores, calls a backend refuses, opening a workspace, and mounts."""

from __future__ import annotations

SENTENCES: dict[str, str] = {
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
    "local_durability": (
        "the local storage option durability must be \"fsync\" (a write survives a power "
        "loss; the default) or \"rename\" (no fsync: a write survives a crash of the "
        "process only), not {value!r}."
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
    # -- shipping a workspace to another process (fsseam.spec) ----------------------------
    "ship_in_process_observations": (
        "this workspace keeps what each agent has read in this process's memory, which "
        "another process cannot see, so it cannot be sent there. Open it with observations= "
        "a store every process reaches (a file path for processes on one machine, "
        "s3://bucket/.fsseam-observations/ or any fsspec URL for many machines), or send "
        "ws.spec(snapshot=True): a copy the other process starts from, never kept in step."
    ),
    "ship_backend_instance": (
        "a workspace built on a backend instance ({backend}) cannot be sent to another "
        "process; open it from its URL (and storage_options) instead, which the other "
        "process opens again."
    ),
    "ship_unpicklable": (
        "the workspace's {what} cannot be pickled ({error}), so it cannot be sent to "
        "another process; give it a picklable one, or leave it out."
    ),
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
    "_timed_out": "{kind}: timed out",
    "gcs_upload_no_location": "the resumable upload initiation returned no Location",
    "gcs_upload_stalled": "resumable upload made no progress at byte {offset}",
    "gcs_rewrite_no_token": "the rewrite is not done and gave no token to continue",
    "azure_copy_failed": "Azure copy {status}: {description}",
    "azure_copy_pending": "Azure copy of {source} still pending after 10 minutes",
    # -- observation stores (what each agent has read, kept outside the agent's files) ------
    "reserved_observations": (
        "{path} is where fsseam keeps what agents have read; no tool may read, list or change "
        "it. Nothing was changed. Work on other files."
    ),
    "observations_unreachable": (
        "the observation store at {store} could not be reached or written ({detail}), so "
        "this call could not be checked against what you have read; nothing was changed. "
        "Retry later; if it keeps failing, ask the user to check the observation store."
    ),
    "observations_corrupt": (
        "the observation object {object} is not one this fsseam can use ({detail}); it was "
        "left as it is and nothing was changed. Ask the user to repair or remove it."
    ),
    "_observations_not_json": "it is not JSON",
    "_observations_too_deep": "it is nested too deeply to read",
    "_observations_format": "it has format {found}; this fsseam reads {expected}",
    "_observations_foreign": (
        "it holds the observations of another owner or workspace (shard {found})"
    ),
    "_observations_malformed": "{field}: {problem}",
    "observations_contended": (
        "the observation store at {store} kept changing under this call ({attempts} "
        "attempts), so what you read could not be saved; nothing else was changed. Retry "
        "the call."
    ),
    "observations_not_saved": (
        "{path} was changed, but the observation store at {store} could not save that "
        "({detail}). Read {path} again before your next edit of it."
    ),
    "observations_at_root": (
        "the observation store {store} is the workspace root {root} itself: the agent's files "
        "and what fsseam keeps of their reads would be one folder. Give observations= a "
        "folder of their own, such as {root}/.fsseam-observations/, or a place outside the "
        "root."
    ),
    # -- the content index (kept beside the files, never one of them) ------------------------
    "reserved_index": (
        "{path} is where fsseam keeps its content index for grep; no tool may read, list or "
        "change it. Nothing was changed. Work on other files."
    ),
    "content_index_unsupported": (
        "content_index=True needs a store whose listing gives each file's version (S3, GCS, "
        "Azure, not under mounts); {backend} does not. Pass content_index=None or False."
    ),
    # -- branches (kept beside the files, in the store itself) -------------------------------
    "reserved_folder": (
        "{path} is where fsseam keeps its own records of this workspace (branches, call "
        "records, the audit trail); no tool may read, list or change it. Nothing was "
        "changed. Work on other files."
    ),
    "branch_name_invalid": (
        "{name!r} is not a branch name: use 1 to 100 letters, digits, '.', '_' or '-', "
        "not starting with '.' (and not 'main', the files themselves)."
    ),
    "branch_missing": (
        "there is no branch {name!r} (it was discarded, or never made). Open it with "
        "ws.branch({name!r}) to make it from main's current files."
    ),
    "branch_damaged": (
        "the branch object {object} is missing or not one this fsseam can read ({detail}); "
        "nothing was changed. Ask the user to check the folder .fsseam-branches/."
    ),
    "branch_contended": (
        "branch {name!r} kept moving under this change ({attempts} attempts); nothing was "
        "changed. Retry the call."
    ),
    "branch_merging": (
        "a merge of branch {name!r} into main is under way (begun by {owner}); finish it "
        "with ws.merge({name!r}, ...) or by opening the branch again, then retry. Nothing "
        "was changed."
    ),
    "_branch_text_mismatch": "its text does not match its name",
    "_branch_missing_object": "missing",
    "_branch_bytes_mismatch": "its bytes do not match its name",
    "branch_not_in_log": (
        "{head} is not an earlier head of branch {name!r}; ws.branches() lists each "
        "branch's log. Nothing was changed."
    ),
    "branch_of_branch": (
        "this workspace is already branch {name!r}; branches are made from main: call "
        "branch(), diff() and merge() on the workspace over main."
    ),
    "branch_review_moved": (
        "branch {name!r} or the main files it changes moved since the review (token "
        "{expected}, now {token}); nothing was merged. Review ws.diff({name!r}) again and "
        "merge with its token."
    ),
    "branch_conflicts": (
        "{count} file(s) of branch {name!r} were changed on main too, in ways that cannot "
        "be merged: {paths}; nothing was merged. ws.rebase({name!r}, owner=...) puts main's "
        "change into the branch's file, with conflict markers where both changed; resolve "
        "those on the branch, then merge again."
    ),
    "branch_path_unchanged": (
        "{path} has no change on branch {name!r}; merge(paths=...) takes files the branch "
        "changed (ws.diff({name!r}) lists them). Nothing was merged."
    ),
    "branch_finished_first": (
        "The merge of branch {name!r} killed earlier was finished first ({published} "
        "published)."
    ),
    "branch_merge_partial": (
        "main changed some files of branch {name!r} while the merge published it; those "
        "were not written and stay on the branch: {left}. Published: {published}. Review "
        "ws.diff({name!r}) and merge again (ws.rebase first where both changed)."
    ),
    "branch_merge_unknown": (
        "the merge of branch {name!r} stopped when the store failed ({detail}); published "
        "so far: {published}; not known: {unknown}. Run ws.merge({name!r}, ...) again to "
        "finish it: it publishes only what is left."
    ),
    # -- the audit trail (fsseam.audit) ----------------------------------------------------
    "audit_unwritten": (
        "The change landed, but its entry in the audit trail could not be written: "
        "{changes}. The trail misses it; tell the user, and do not make the change again."
    ),
    "audit_trail_corrupt": (
        "the audit trail's entry {name} is not an entry fsseam wrote ({detail})."
    ),
    "audit_trail_empty": "the audit trail {name} holds no entry yet: nothing to anchor.",
    "audit_changed": (
        "entry {seq} was changed after it was written: its hash is {found}, its content "
        "hashes to {computed}."
    ),
    "audit_removed": "entries {first} to {last} were removed (the trail jumps from {before} "
                     "to {after}).",
    "audit_reordered": (
        "entry {seq} does not follow entry {before}: its prev is {prev}, entry {before}'s "
        "hash is {hash} (entries were reordered, or one was removed and the rest renumbered)."
    ),
    "audit_version_unknown": (
        "entry {seq} ({path}) names {version}, which the store never had."
    ),
    "audit_bytes_differ": (
        "entry {seq} ({path}) says its bytes have sha256 {named}; the store's bytes of that "
        "version have sha256 {found}."
    ),
    "audit_version_bytes": (
        "entry {seq} ({path}) names {version}, the sha256 of other bytes than the {named} "
        "it says."
    ),
    "audit_missing": (
        "{path} is at {version} in the store, which no entry names (its last entry, {seq}, "
        "says {named}): entries after it were cut, or the file was changed where nothing "
        "audited it."
    ),
    "audit_gap": (
        "entry {seq} ({path}) replaced {version}, which no entry of {path} made: a change "
        "of {path} was made where nothing audited it, or its entry was cut."
    ),
    "audit_anchor_unknown": (
        "anchor {anchor} names entry {seq} with hash {hash}, which the trail does not hold "
        "({detail})."
    ),
    "audit_tail_cut": (
        "the trail ends at entry {last}, but anchor {anchor} names entry {seq}: the tail "
        "after entry {last} was cut."
    ),
    "audit_tail_open": (
        "{count} entries after the last anchor (entry {anchored}) could have been cut "
        "without trace: a hash chain cannot show a cut tail on its own; anchor the head "
        "again (fsseam audit --anchor TARGET) to bound it."
    ),
    "audit_tail_unanchored": (
        "no anchor was checked: the last entries could have been cut without trace (a hash "
        "chain cannot show a cut tail on its own). Anchor the head where it cannot be "
        "rewritten (fsseam audit --anchor TARGET) and verify with --anchors TARGET."
    ),
    "audit_tail_anchored": "the trail's head is anchored: no tail could have been cut "
                           "unseen.",
}
