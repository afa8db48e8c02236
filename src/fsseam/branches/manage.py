"""The branches of one workspace, as a whole: list, rewind, discard, collect.

``collect(grace)`` frees the objects no branch can reach any more, by this rule:

- reached: every manifest in the log of every ref, every manifest of a merge under way
  (its journal) and every blob its steps write, every manifest younger than ``grace``, and
  every blob any of those names;
- an unreached manifest (older than ``grace``, as it must be) is removed: no writer reuses
  one (each names its own parent and time);
- an unreached blob is set aside (moved to ``trash/``), not removed: a change that reused
  those very bytes in the moment collect looked (its blob write found them there) names it
  after all, and a read of a blob that is not in ``blobs/`` takes it back from the trash;
- a blob set aside at least ``grace`` ago is removed if it is still unreached, and put back
  if something reaches it now.

So no object a change in progress needs is removed: a writer names its blobs in a manifest
before it writes them (so they are reached for ``grace``), and a blob removed for good was
unreached at two collects ``grace`` apart. Space is freed by the collect after the one that
set the blobs aside (``grace=timedelta(0)`` does both at once, for a store no one writes).
"""

from __future__ import annotations

import builtins
import time
from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field

from ..backends.base import Backend
from ..errors import Conflict, ErrorCode, FsError
from ..messages import Reason
from ..versions import Version
from .backend import ATTEMPTS, BranchBackend
from .layout import PREFIX, BranchStore, Manifest, Ref, check_name

__all__ = ["BranchInfo", "Branches", "CollectOutcome", "HeadInfo"]

LOG_SHOWN = 20
"""Heads of each branch's log that ``branches()`` lists (newest first)."""


class HeadInfo(BaseModel):
    """One head of a branch's log."""

    model_config = ConfigDict(frozen=True)
    head: str
    parent: str | None
    operation: str
    path: str | None = None
    owner: str | None = None
    time: float = 0.0
    files: int = 0


class BranchInfo(BaseModel):
    """One branch (``ws.branches()``)."""

    model_config = ConfigDict(frozen=True)
    name: str
    head: str
    base: str = "main"
    """What the branch is over: main's current files (a path the branch did not change
    reads as main has it now)."""
    created: float
    created_by: str | None = None
    files: int = 0
    """Paths the branch changed."""
    owners: list[str] = Field(default_factory=list)
    """The owners whose changes the branch holds."""
    merging: bool = False
    """A merge into main is under way (finished by the next merge or open)."""
    log: list[HeadInfo] = Field(default_factory=list)
    """The newest heads, newest first (``rewind(name, to=...)`` takes any of them)."""


class CollectOutcome(BaseModel):
    """What ``ws.collect`` did (the rule is in :mod:`fsseam.branches.manage`)."""

    model_config = ConfigDict(frozen=True)
    removed_blobs: int = 0
    """Blobs removed for good: set aside at least ``grace`` ago, and still unreached."""
    removed_manifests: int = 0
    kept_blobs: int = 0
    kept_manifests: int = 0
    set_aside: int = 0
    """Unreached blobs moved to the trash by this collect."""
    restored: int = 0
    """Blobs put back from the trash: something reaches them again."""
    expired_calls: int = 0
    """Call records removed: older than their time to live (docs/durable.md)."""


class Branches:
    """The branches kept in the reserved folder of ``inner``'s root."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.store = BranchStore(inner)

    def backend(self, name: str) -> BranchBackend:
        return BranchBackend(self.inner, name)

    def info(self, name: str) -> BranchInfo:
        ref, _ = self._ref(check_name(name))
        head = self.store.manifest(ref.head)
        log = []
        for ident, manifest in self.store.log(ref.head):
            log.append(HeadInfo(head=ident, parent=manifest.parent,
                                operation=manifest.operation, path=manifest.path,
                                owner=manifest.owner, time=manifest.time,
                                files=len(manifest.files)))
            if len(log) >= LOG_SHOWN:
                break
        owners = sorted({e.owner for e in head.files.values() if e.owner is not None})
        return BranchInfo(name=name, head=ref.head, created=ref.created,
                          created_by=ref.created_by, files=len(head.files), owners=owners,
                          merging=self.store.journal(name) is not None, log=log)

    def list(self) -> builtins.list[BranchInfo]:
        found = []
        for name in self.store.names():
            try:
                found.append(self.info(name))
            except FsError as e:
                if e.code is not ErrorCode.FS_NOT_FOUND:
                    raise  # discarded between the listing and its read: not listed
        return found

    def _not_merging(self, name: str) -> None:
        found = self.store.journal(name)
        if found is not None:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.branch_merging,
                          details={"name": name, "owner": found[0].owner})

    def _ref(self, name: str) -> tuple[Ref, Version]:
        got = self.store.ref(name)
        if got is None:
            raise FsError(ErrorCode.FS_NOT_FOUND, reason=Reason.branch_missing,
                          details={"name": name})
        return got

    def rewind(self, name: str, to: str) -> BranchInfo:
        """Move the branch's ref back to ``to``, a head of its log (its id, or a prefix of
        at least 8 characters naming one head): guarded by the ref's compare-and-swap, so
        a change made meanwhile is checked again (``to`` must still be in the log)."""
        check_name(name)
        self._not_merging(name)
        for _ in range(ATTEMPTS):
            ref, version = self._ref(name)
            target = self._in_log(name, ref.head, to)
            try:
                self.store.put_ref(ref.model_copy(update={"head": target}), version)
            except Conflict:
                continue
            return self.info(name)
        raise FsError(ErrorCode.FS_BACKEND, reason=Reason.branch_contended,
                      details={"name": name, "attempts": ATTEMPTS})

    def _in_log(self, name: str, head: str, to: str) -> str:
        if len(to) >= 8:
            for ident, _ in self.store.log(head):
                if ident == to or ident.startswith(to):
                    return ident
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.branch_not_in_log,
                      details={"name": name, "head": to})

    def discard(self, name: str) -> None:
        """Remove the branch (its objects stay until ``collect``)."""
        check_name(name)
        self._not_merging(name)
        for _ in range(ATTEMPTS):
            _, version = self._ref(name)
            try:
                self.store.delete_ref(name, version)
                return
            except Conflict:
                continue
        raise FsError(ErrorCode.FS_BACKEND, reason=Reason.branch_contended,
                      details={"name": name, "attempts": ATTEMPTS})

    def collect(self, grace: timedelta = timedelta(hours=1)) -> CollectOutcome:
        """Remove what no branch reaches (the rule is in the module docstring)."""
        started = time.time()  # one clock reading: what this collect sets aside is never
        since = started - grace.total_seconds()  # younger than its own cut-off
        manifests: dict[str, Manifest] = {}
        for key in self.store.keys("manifests"):
            ident = key.rpartition("/")[2].removesuffix(".json")
            try:
                manifests[ident] = self.store.manifest(ident)
            except FsError as e:
                if e.code is not ErrorCode.FS_BACKEND:
                    raise
        kept = {i for i, m in manifests.items() if m.time >= since}
        roots = []
        for name in self.store.names():
            got = self.store.ref(name)
            if got is not None:
                roots.append(got[0].head)
            journal = self.store.journal(name)
            if journal is not None:
                roots.append(journal[0].head)
        blobs: set[str] = set()
        for name in self.store.names():
            journal = self.store.journal(name)
            if journal is not None:
                blobs.update(s.blob for s in journal[0].steps if s.blob is not None)
        walked: set[str] = set()
        for root in roots:
            for ident, _ in self.store.log(root):
                if ident in walked:
                    break  # this log's older heads were reached before
                walked.add(ident)
        kept |= walked
        for ident in kept:
            files = (manifests.get(ident) or self.store.manifest(ident)).files.values()
            blobs.update(b for e in files for b in (e.blob, e.base_blob) if b is not None)
        removed_blobs = kept_blobs = set_aside = restored = 0
        now = int(started)
        for key in self.store.keys("blobs"):
            sha = key.rpartition("/")[2]
            if sha in blobs:
                kept_blobs += 1
            else:
                self.store.set_aside(sha, now)
                set_aside += 1
        for sha, when, key in self.store.trashed():
            if sha in blobs:
                self.store.restore(sha)
                self.store.remove(key)
                restored += 1
            elif when <= since:
                self.store.remove(key)
                removed_blobs += 1
        removed_manifests = 0
        for ident in manifests.keys() - kept:
            self.store.remove(self.store.manifest_key(ident))
            removed_manifests += 1
        self.inner.prune_directories(PREFIX)
        return CollectOutcome(removed_blobs=removed_blobs, removed_manifests=removed_manifests,
                              kept_blobs=kept_blobs, kept_manifests=len(kept),
                              set_aside=set_aside, restored=restored)
