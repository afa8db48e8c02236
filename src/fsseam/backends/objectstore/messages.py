"""Every sentence an object-store backend says, each written once.

One helper per sentence, so that the sentences can move into a message catalogue without
hunting for copies. ``key`` is the backend key; the model sees it as ``/key``.
"""

from __future__ import annotations

from ...errors import Conflict, ErrorCode, FsError
from ...paths import display

__all__ = [
    "already_exists",
    "bucket_missing",
    "busy",
    "changed_since_read",
    "changed_while_read",
    "create_only_delete",
    "create_only_source",
    "credentials_unusable",
    "denied",
    "history_off",
    "invalid_request",
    "is_directory",
    "no_bucket",
    "no_credentials",
    "no_longer_exists",
    "no_version",
    "not_a_directory",
    "not_found",
    "not_positive",
    "parent_is_file",
    "root_is_directory",
    "storage_failed",
    "stream_ended",
    "too_large",
    "version_not_kept",
]


def already_exists(key: str) -> Conflict:
    return Conflict("exists", f"{display(key)} already exists.", path=key)


def changed_since_read(key: str) -> Conflict:
    return Conflict("mismatch", f"{display(key)} has changed since it was read.", path=key)


def no_longer_exists(key: str) -> Conflict:
    return Conflict("missing", f"{display(key)} no longer exists.", path=key)


def changed_while_read(key: str) -> FsError:
    return FsError(
        ErrorCode.FS_STALE,
        f"{display(key)} changed while it was being read; read it again.",
        path=key,
    )


def stream_ended(key: str, offset: int, size: int) -> FsError:
    return FsError(
        ErrorCode.FS_BACKEND,
        f"{display(key)} ended at byte {offset} of {size} while being read; nothing was "
        "changed. Read it again.",
        path=key,
    )


def not_found(key: str) -> FsError:
    return FsError(
        ErrorCode.FS_NOT_FOUND,
        f"{display(key)} does not exist. Check the path, or list the parent directory.",
        path=key,
    )


def is_directory(key: str) -> FsError:
    return FsError(
        ErrorCode.FS_IS_DIRECTORY,
        f"{display(key)} is a directory, not a file. List it, or give a file path.",
        path=key,
    )


def not_a_directory(key: str) -> FsError:
    return FsError(
        ErrorCode.FS_INVALID_ARGUMENT,
        f"{display(key)} is a file, not a directory. Read it instead.",
        path=key,
    )


def parent_is_file(key: str, action: str) -> FsError:
    return FsError(
        ErrorCode.FS_INVALID_ARGUMENT,
        f"cannot {action} {display(key)}: a parent of this path is a file, not a directory.",
        path=key,
    )


def root_is_directory(action: str) -> FsError:
    return FsError(
        ErrorCode.FS_IS_DIRECTORY,
        f"cannot {action} /: it is the workspace root directory.",
        path="",
    )


def create_only_delete(key: str) -> FsError:
    return FsError(
        ErrorCode.FS_INVALID_ARGUMENT,
        f"a delete of {display(key)} cannot be create-only; delete whatever is there or "
        "only a version you hold.",
        path=key,
    )


def create_only_source(key: str) -> FsError:
    return FsError(
        ErrorCode.FS_INVALID_ARGUMENT,
        f"the source of a copy, {display(key)}, cannot be create-only; copy whatever is "
        "there or only a version you hold.",
        path=key,
    )


def no_bucket(scheme: str) -> FsError:
    return FsError(
        ErrorCode.FS_INVALID_ARGUMENT,
        f"a workspace on {scheme}:// needs a bucket: {scheme}://bucket or "
        f"{scheme}://bucket/prefix.",
    )


def not_positive(name: str) -> FsError:
    return FsError(ErrorCode.FS_INVALID_ARGUMENT, f"{name} must be 1 or more.")


def bucket_missing(bucket: str, key: str, action: str) -> FsError:
    return FsError(
        ErrorCode.FS_NOT_FOUND,
        f"the bucket {bucket} does not exist (while trying to {action} {display(key)}); "
        "nothing was changed. Create the bucket, or fix the workspace URL; ask the user if "
        "you cannot.",
        path=key,
        reason="bucket_missing",
    )


def no_credentials(store: str, key: str, action: str, detail: str, configure: str) -> FsError:
    return FsError(
        ErrorCode.FS_PERMISSION_DENIED,
        f"{store} did not accept the credentials (or found none) while trying to {action} "
        f"{display(key)} ({detail}); nothing was changed. Retrying will not help; to "
        f"configure credentials, {configure} Ask the user to set them up.",
        path=key,
    )


def credentials_unusable(store: str, detail: str, configure: str) -> FsError:
    return FsError(
        ErrorCode.FS_PERMISSION_DENIED,
        f"no usable {store} credentials were found ({detail}). To configure credentials, "
        f"{configure}",
    )


def denied(store: str, key: str, action: str, detail: str, grant: str) -> FsError:
    return FsError(
        ErrorCode.FS_PERMISSION_DENIED,
        f"permission denied to {action} {display(key)} ({detail}); nothing was changed. "
        f"The {store} credentials in use may not do this here: {grant} Choose another path "
        "or ask the user.",
        path=key,
    )


def too_large(store: str, key: str) -> FsError:
    return FsError(
        ErrorCode.FS_TOO_LARGE, f"{display(key)} is too large for {store} to store.", path=key
    )


def busy(store: str, key: str, action: str, detail: str) -> FsError:
    return FsError(
        ErrorCode.FS_BACKEND,
        f"{store} kept rejecting the {action} of {display(key)} because other conditional "
        f"requests to it were in progress ({detail}); nothing was changed. Retry later.",
        path=key,
    )


def invalid_request(store: str, key: str, action: str, detail: str) -> FsError:
    return FsError(
        ErrorCode.FS_INVALID_ARGUMENT,
        f"{store} rejected the request to {action} {display(key)}: {detail}",
        path=key,
    )


def storage_failed(key: str, action: str, detail: str) -> FsError:
    return FsError(
        ErrorCode.FS_BACKEND,
        f"storage failed to {action} {display(key)} ({detail}); nothing was changed. Retry "
        "later.",
        path=key,
    )


def no_version(store: str, key: str) -> FsError:
    return FsError(
        ErrorCode.FS_BACKEND,
        f"{store} returned no version for {display(key)}; this storage cannot version it.",
        path=key,
    )


def history_off(store: str, bucket: str, key: str) -> FsError:
    return FsError(
        ErrorCode.FS_UNSUPPORTED,
        f"the {store} bucket {bucket} keeps no older versions of {display(key)}: enable "
        f"versioning on bucket {bucket} to keep them (only writes made after that are kept).",
        path=key,
    )


def version_not_kept(key: str, version: str) -> FsError:
    return FsError(
        ErrorCode.FS_NOT_FOUND,
        f"version {version} of {display(key)} is not kept (or was never a version of it). "
        "List its versions to see which are.",
        path=key,
    )
