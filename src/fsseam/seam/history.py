"""History, restore and undo: a store's kept versions, and bringing one back.

Restore and undo build a plan of one step writing the old bytes and run it through
:func:`~fsseam.seam.commit.run`, like any write; an undo of a change that
created the file deletes it instead.

Costs on S3 (counted at the server): ``history`` is one ListObjectVersions page (one per
1,000 versions, up to the backend's ``max_versions_listed``); ``undo`` one GET of the old
version (by VersionId) and one conditional PUT; ``restore`` of a full version id one GET
of that version and one conditional PUT (of a prefix, one listing first). A conflict costs
one GET of the current version, on the conflict path only (a refused edit already made
it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from ..backends.base import Blob, VersionInfo, WriteMeta
from ..errors import ErrorCode, FsError
from ..events import DeletedEvent, Lost, StatEvent, WrittenEvent
from ..messages import Reason, Sentence
from ..outcomes import HistoryEntry, HistoryOutcome, RestoreOutcome, version_id
from ..text import TextDoc, decode
from ..versions import CreateOnly, IfMatch, Precondition, Version
from .changing import ask_undo, check_writable, guard_for
from .commit import RESTORE, UNDO, UNDO_CREATE, FilePlan, Plan, run
from .core import Core

__all__ = ["DEFAULT_HISTORY_LIMIT", "MIN_PREFIX", "history", "match_version", "restore", "undo"]

DEFAULT_HISTORY_LIMIT = 10
MIN_PREFIX = 6
"""The shortest prefix of a version id that ``restore`` accepts (unique among the kept)."""


def match_version(token: str, kept: Sequence[VersionInfo], path: str) -> VersionInfo:
    """The kept version ``token`` names: its id (or ``kind:value``), or a unique prefix of
    at least MIN_PREFIX characters. Several kept versions with equal content are one
    (the newest is taken)."""
    t = token.strip().strip('"')
    exact = [k for k in kept if t and t in (version_id(k.version), str(k.version),
                                            k.version.value.strip('"'))]
    found = exact or [
        k for k in kept if len(t) >= MIN_PREFIX and not k.deleted
        and (version_id(k.version).startswith(t) or k.version.value.startswith(t))
    ]
    if not found:
        raise FsError(ErrorCode.FS_NOT_FOUND, path=path, reason=Reason.version_unknown,
                      details={"version": token})
    if len({k.version for k in found}) > 1:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=path, reason=Reason.version_ambiguous,
                      details={"version": token, "count": len(found)})
    if found[0].deleted:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=path, reason=Reason.version_is_deletion,
                      details={"version": token})
    return found[0]


def _require_history(fs: Core, key: str, shown: str, tool: str) -> None:
    # Asked as a stat of the file: a plugin that hides or refuses it (reserved keys) keeps
    # its versions from being listed or read back too.
    fs.gate.dispatch(StatEvent(owner=fs.owner, key=key, path=shown, type="file"))
    if not fs.keeps_history(key):
        raise FsError(ErrorCode.FS_UNSUPPORTED, path=shown, reason=Reason.history_not_kept,
                      details={"tool": tool})


def history(fs: Core, path: str, limit: int) -> HistoryOutcome:
    """The versions the store keeps of a file, newest first (at most ``limit``)."""
    if limit < 1:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.limit_below_one)
    key, shown = fs.resolve_file(path)
    _require_history(fs, key, shown, "history")
    kept = fs.backend.versions(key, limit)
    entries = [HistoryEntry.of(k, fs.authors.owner(key, k.version)) for k in kept]
    return HistoryOutcome(path=shown, entries=entries, limit=limit, you=fs.owner)


def restore(fs: Core, path: str, version: str) -> RestoreOutcome:
    """Write back the bytes of a kept version (named by its id, or a unique prefix), as a
    guarded write: conditional on the version this owner observed, or create-only when it
    saw the file absent."""
    check_writable(fs)
    key, shown = fs.resolve_file(path)
    _require_history(fs, key, shown, "restore")
    old = _by_id(fs, key, version)
    if old is None:
        match = match_version(version, fs.backend.versions(key), shown)
        old = fs.backend.read_version(key, match.version)
        restored = version_id(match.version)
        author = match.owner or fs.authors.owner(key, match.version)
    else:
        # Read by its full id, with no listing: the owner comes from what this process saw
        # written (a listing's metadata is not at hand).
        restored = version_id(old.version)
        author = fs.authors.owner(key, old.version)
    guard = guard_for(fs, "write", key, shown, operation="restore", size=len(old.data))
    return _write_back(fs, key, shown, old, guard.precondition, "restore", restored,
                       guard.lost, author=author)


def _by_id(fs: Core, key: str, token: str) -> Blob | None:
    """The version a full id names, read directly where the store can (one GET, and
    reachable however many versions a listing would have to page through); None when the
    store cannot, or the token is no full id of a kept version (a prefix, a digest): the
    listing decides then."""
    try:
        return fs.backend.read_version_id(key, token.strip().strip('"'))
    except FsError:
        return None


def undo(fs: Core, path: str) -> RestoreOutcome:
    """Take back this owner's last change of the file: the version before it written back,
    conditional on the version the change made (or, for a change that created the file,
    the file deleted, conditional likewise)."""
    check_writable(fs)
    key, shown = fs.resolve_file(path)
    intent = ask_undo(fs, key, shown)
    after, before = intent.after, intent.before
    if after is None:
        raise FsError(ErrorCode.FS_UNSUPPORTED, path=shown, reason=Reason.undo_needs_policy)
    plain = FsError(ErrorCode.FS_STALE, path=shown, reason=Reason.stale_undo,
                    details={"changes": Sentence(Reason.changes_unknown)})
    if before is None:
        return _undo_create(fs, key, shown, after, plain)
    _require_history(fs, key, shown, "undo")
    old = fs.backend.read_version(key, before)
    return _write_back(fs, key, shown, old, IfMatch(after), "undo", version_id(before),
                       (ErrorCode.FS_STALE, None, None), plain,
                       author=fs.authors.owner(key, before))


def _undo_create(fs: Core, key: str, shown: str, after: Version, plain: FsError
                 ) -> RestoreOutcome:
    plan = FilePlan(key, shown, b"", IfMatch(after), UNDO_CREATE,
                    (ErrorCode.FS_STALE, None, None), fs.write_meta, plain=plain)
    run(fs, Plan.one("delete", plan))
    fs.gate.dispatch(DeletedEvent(owner=fs.owner, key=key, path=shown, operation="undo"))
    return RestoreOutcome(path=shown, operation="undo", restored=None, version=None,
                          replaced=after, deleted=True)


def _write_back(
    fs: Core, key: str, shown: str, old: Blob, pre: Precondition,
    op: Literal["restore", "undo"], restored: str, lost: Lost, plain: FsError | None = None,
    *, author: str | None,
) -> RestoreOutcome:
    """Write ``old``'s exact bytes under ``pre``; nothing is written when the file already
    holds them. The bytes are written as ``author``'s, who wrote them first (None: not
    known), never as this owner's: an undo or a restore brings back someone's work, it does
    not make it its own."""
    data = old.data
    plan = FilePlan(key, shown, data, pre, UNDO if op == "undo" else RESTORE, lost,
                    WriteMeta(owner=author), data_version=old.version, plain=plain)
    done = run(fs, Plan.one("write", plan))[0]
    version = done.version
    assert version is not None
    if done.unchanged:
        return _unchanged_back(fs, key, shown, data, version, op, restored)
    seen = pre.version if isinstance(pre, IfMatch) else None
    old_view = None
    if seen is not None:
        cached = fs.docs.get(key, seen)
        old_view = cached[1] if cached is not None else None
    try:
        doc: TextDoc | None = decode(data, shown)
    except FsError:
        doc = None
    if doc is not None:
        fs.docs.put(key, version, doc.format, data)
    created = isinstance(pre, CreateOnly)
    before, after = "" if created else old_view, doc.view if doc is not None else ""
    event = WrittenEvent(owner=fs.owner, key=key, path=shown, operation=op,
                         version=version, created=created, replaced=seen)
    fs.gate.dispatch(event.with_diff(shown, before, after))
    outcome = RestoreOutcome(
        path=shown, operation=op, restored=restored, version=version, replaced=seen,
        created=created, size=len(data), lines=doc.lines if doc is not None else None,
    )
    outcome.with_diff(shown, before, after)
    return outcome


def _unchanged_back(fs: Core, key: str, shown: str, data: bytes, version: Version,
                    op: Literal["restore", "undo"], restored: str) -> RestoreOutcome:
    """The file already holds the bytes to write back: nothing is written."""
    fs.record_observed(key, shown, data, version)
    if op == "undo":
        # The change is undone all the same: the record of it is taken off the stack.
        fs.gate.dispatch(WrittenEvent(owner=fs.owner, key=key, path=shown, operation="undo",
                                       version=version, created=False, unchanged=True))
    try:
        lines: list[str] | None = decode(data, shown).lines
    except FsError:
        lines = None
    return RestoreOutcome(path=shown, operation=op, restored=restored, version=version,
                          unchanged=True, size=len(data), lines=lines)
