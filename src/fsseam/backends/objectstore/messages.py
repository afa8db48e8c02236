"""The errors an object-store backend raises, one constructor each: facts, not sentences.

Each helper names its catalogue sentence (:mod:`fsseam.messages`) by reason and gives the
facts it needs; the text is rendered from them by the tool the model called. ``key`` is the
backend key; the error carries the path the model sees (``/key``).
"""

from __future__ import annotations

from ...errors import Conflict, ErrorCode, FsError
from ...messages import Part, Reason
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


def _at(code: ErrorCode, key: str, reason: str, **details: object) -> FsError:
    return FsError(code, path=display(key), reason=reason, details=details)


def already_exists(key: str) -> Conflict:
    return Conflict("exists", path=display(key))


def changed_since_read(key: str) -> Conflict:
    return Conflict("mismatch", path=display(key))


def no_longer_exists(key: str) -> Conflict:
    return Conflict("missing", path=display(key))


def changed_while_read(key: str) -> FsError:
    return _at(ErrorCode.FS_STALE, key, Reason.changed_while_read)


def stream_ended(key: str, offset: int, size: int) -> FsError:
    return _at(ErrorCode.FS_BACKEND, key, Reason.read_cut_short, offset=offset, size=size)


def not_found(key: str) -> FsError:
    return _at(ErrorCode.FS_NOT_FOUND, key, Reason.missing)


def is_directory(key: str) -> FsError:
    return _at(ErrorCode.FS_IS_DIRECTORY, key, Reason.is_directory)


def not_a_directory(key: str) -> FsError:
    return _at(ErrorCode.FS_INVALID_ARGUMENT, key, Reason.not_directory)


def parent_is_file(key: str, action: str) -> FsError:
    return _at(ErrorCode.FS_INVALID_ARGUMENT, key, Reason.parent_is_file, action=action)


def root_is_directory(action: str) -> FsError:
    return FsError(
        ErrorCode.FS_IS_DIRECTORY, path="/",
        reason=Reason.root_is_directory, details={"action": action}
    )


def create_only_delete(key: str) -> FsError:
    return _at(ErrorCode.FS_INVALID_ARGUMENT, key, Reason.create_only_delete)


def create_only_source(key: str) -> FsError:
    return _at(ErrorCode.FS_INVALID_ARGUMENT, key, Reason.create_only_copy)


def no_bucket(scheme: str) -> FsError:
    return FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.no_bucket,
                   details={"scheme": scheme})


def not_positive(name: str) -> FsError:
    return FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.below_one, details={"arg": name})


def bucket_missing(bucket: str, key: str, action: str) -> FsError:
    """``reason`` is ``bucket_missing``: callers branch on it (a missing bucket is not a
    missing file)."""
    return _at(ErrorCode.FS_NOT_FOUND, key, Reason.bucket_missing, bucket=bucket, action=action)


def no_credentials(store: str, key: str, action: str, detail: str, configure: str) -> FsError:
    """``configure`` (like ``grant`` below) names the store's clause of the catalogue."""
    return _at(
        ErrorCode.FS_PERMISSION_DENIED, key, "no_credentials",
        store=store, action=action, detail=detail, configure=Part(configure),
    )


def credentials_unusable(store: str, detail: str, configure: str) -> FsError:
    return FsError(
        ErrorCode.FS_PERMISSION_DENIED,
        reason=Reason.credentials_unusable,
        details={"store": store, "detail": detail, "configure": Part(configure)},
    )


def denied(store: str, key: str, action: str, detail: str, grant: str) -> FsError:
    return _at(
        ErrorCode.FS_PERMISSION_DENIED, key, "store_denied",
        store=store, action=action, detail=detail, grant=Part(grant),
    )


def too_large(store: str, key: str, detail: str) -> FsError:
    return _at(ErrorCode.FS_TOO_LARGE, key, Reason.too_large_for_storage,
               detail=f"{store}: {detail}")


def busy(store: str, key: str, action: str, detail: str) -> FsError:
    return _at(ErrorCode.FS_BACKEND, key, Reason.store_busy, store=store, action=action,
               detail=detail)


def invalid_request(store: str, key: str, action: str, detail: str) -> FsError:
    return _at(ErrorCode.FS_INVALID_ARGUMENT, key, Reason.store_rejected, store=store,
               action=action,
               detail=detail)


def storage_failed(key: str, action: str, detail: str) -> FsError:
    return _at(ErrorCode.FS_BACKEND, key, Reason.storage_failed, action=action, detail=detail)


def no_version(store: str, key: str) -> FsError:
    return _at(ErrorCode.FS_BACKEND, key, Reason.no_version, store=store)


def history_off(store: str, bucket: str, key: str) -> FsError:
    return _at(ErrorCode.FS_UNSUPPORTED, key, Reason.history_off, store=store, bucket=bucket)


def version_not_kept(key: str, version: str) -> FsError:
    return _at(ErrorCode.FS_NOT_FOUND, key, Reason.version_not_kept, version=version)
