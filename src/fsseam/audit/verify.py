"""Checking a trail: the chain recomputed, each entry held against the store, the anchors.

What it proves: an entry changed after it was written (its hash), removed (a gap in the
numbers), reordered (a broken ``prev`` link), or naming a version or bytes the store never
had (where the store keeps versions: every entry; elsewhere the entries whose file is still
at the version they name). What it cannot: a cut tail leaves a shorter, valid chain; only
an anchor kept out of the writer's reach (or a file the store holds at a version no entry
names) shows it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from ..backends.base import Backend, Blob
from ..errors import ErrorCode, FsError
from ..messages import Reason, render
from ..paths import to_key
from ..versions import Version
from .entry import Anchor, AuditEntry, entry_hash

__all__ = ["AuditProblem", "AuditReport", "check"]

ProblemKind = Literal["changed", "removed", "reordered", "contradicted", "missing",
                      "anchor", "cut"]


class AuditProblem(BaseModel):
    """One finding: the entry (``seq``) and what is wrong with it."""

    model_config = ConfigDict(frozen=True)

    seq: int
    kind: ProblemKind
    reason: str
    details: dict[str, Any]

    @property
    def text(self) -> str:
        return render(self.reason, details=self.details)


class AuditReport(BaseModel):
    """What :meth:`AuditTrail.verify` found. ``ok``: no problem. ``first``: the first
    finding: the chain's own (an entry changed, removed or reordered) first, then the
    anchors' (a cut tail), then the store's (an entry contradicted, a change missing), each
    by entry number."""

    model_config = ConfigDict(frozen=True)

    trail: str
    entries: int
    problems: list[AuditProblem]
    checked: int
    """Entries whose version and bytes the store confirmed."""
    not_checkable: int
    """Entries the store could not confirm or contradict here (no versions kept, and the
    file moved on since): never a failure."""
    anchors: int
    tail: str
    """Whether the tail after the last anchor could have been cut."""

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def first(self) -> AuditProblem | None:
        return self.problems[0] if self.problems else None


_RANK: dict[str, int] = {"changed": 0, "removed": 0, "reordered": 0, "cut": 1, "anchor": 1,
                         "contradicted": 2, "missing": 3}
"""Which findings come first: the chain's own (an entry changed, removed, reordered), then
the anchors', then the store's (what an entry says against what the store holds, then a
file at a version no entry names: the entry after the one named is what is missing)."""


def _problem(seq: int, kind: ProblemKind, reason: Reason, /, **details: Any
             ) -> AuditProblem:
    return AuditProblem(seq=seq, kind=kind, reason=reason, details=details)


def chain(raw: list[tuple[int, bytes]]) -> tuple[list[AuditEntry], list[AuditProblem]]:
    """The entries (numbers and bytes, in order) that read as entries, and what breaks
    the chain."""
    problems: list[AuditProblem] = []
    entries: list[AuditEntry] = []
    before: AuditEntry | None = None
    expected = 0
    for seq, data in raw:
        if seq != expected:
            problems.append(_problem(expected, "removed", Reason.audit_removed, first=expected,
                                     last=seq - 1, before=expected - 1, after=seq))
        expected = seq + 1
        try:
            fields = json.loads(data)
            entry = AuditEntry.model_validate(fields)
        except (ValueError, ValidationError):
            problems.append(_problem(seq, "changed", Reason.audit_changed, seq=seq,
                                     found="-", computed="-"))
            before = None
            continue
        # The hash of the object as stored, not of what the model kept of it: a field
        # added, or a value of another type the model would coerce, is a change too.
        computed = entry_hash({k: v for k, v in fields.items() if k != "hash"})
        if computed != entry.hash:
            problems.append(_problem(seq, "changed", Reason.audit_changed, seq=seq,
                                     found=entry.hash, computed=computed))
        elif entry.seq != seq or (before is not None and before.seq == seq - 1
                                  and entry.prev != before.hash) or (
                                      seq == 0 and entry.prev is not None):
            problems.append(_problem(seq, "reordered", Reason.audit_reordered, seq=seq,
                                     before=seq - 1, prev=entry.prev,
                                     hash=before.hash if before is not None else None))
        before = entry
        entries.append(entry)
    return entries, problems


class _Store:
    """The store's side: each file's current state read once."""

    def __init__(self, backend: Backend) -> None:
        self.backend = backend
        self._now: dict[str, Blob | None] = {}

    def now(self, key: str) -> Blob | None:
        if key not in self._now:
            try:
                self._now[key] = self.backend.read(key)
            except FsError as e:
                if e.code not in (ErrorCode.FS_NOT_FOUND, ErrorCode.FS_IS_DIRECTORY):
                    raise
                self._now[key] = None
        return self._now[key]

    def check(self, entry: AuditEntry) -> AuditProblem | bool:
        """True: confirmed; False: not checkable here; else what contradicts it."""
        assert entry.version_after is not None
        key = to_key(entry.path)
        version = Version.model_validate(entry.version_after)
        if version.kind == "sha256" and entry.sha256 not in (None, version.value):
            return self._contradicted(entry, Reason.audit_version_bytes,
                                      version=str(version), named=entry.sha256)
        if self.backend.capabilities_for(key).history:
            try:
                blob = self.backend.read_version(key, version)
            except FsError as e:
                if e.code is ErrorCode.FS_NOT_FOUND:
                    return self._contradicted(entry, Reason.audit_version_unknown,
                                              version=str(version))
                if e.code is not ErrorCode.FS_UNSUPPORTED:
                    raise
            else:
                if blob.version != version:  # an id of the store's, named with other bytes
                    return self._contradicted(entry, Reason.audit_version_unknown,
                                              version=str(version))
                return self._bytes(entry, blob)
        now = self.now(key)
        if now is not None and now.version == version:
            return self._bytes(entry, now)
        return False

    def _bytes(self, entry: AuditEntry, blob: Blob) -> AuditProblem | bool:
        if entry.sha256 is None:
            return False
        digest = hashlib.sha256(blob.data).hexdigest()
        if digest != entry.sha256:
            return self._contradicted(entry, Reason.audit_bytes_differ, named=entry.sha256,
                                      found=digest)
        return True

    @staticmethod
    def _contradicted(entry: AuditEntry, reason: Reason, **details: Any) -> AuditProblem:
        return _problem(entry.seq, "contradicted", reason, seq=entry.seq, path=entry.path,
                        **details)

    def missing(self, last: AuditEntry) -> AuditProblem | None:
        """A problem when the file of ``last`` (its last entry) is not as it says."""
        now = self.now(to_key(last.path))
        if last.action == "delete":
            if now is None:
                return None
            named = "deleted"
        else:
            assert last.version_after is not None
            version = Version.model_validate(last.version_after)
            if now is not None and now.version == version:
                return None
            named = str(version)
        return _problem(last.seq, "missing", Reason.audit_missing, path=last.path, seq=last.seq,
                        version=str(now.version) if now is not None else "absent",
                        named=named)


def against_store(entries: list[AuditEntry], backend: Backend
                  ) -> tuple[list[AuditProblem], int, int]:
    """What the store says of each entry of main's files: problems, confirmed, unknown."""
    store = _Store(backend)
    problems: list[AuditProblem] = []
    checked = unknown = 0
    last: dict[str, AuditEntry] = {}
    for entry in entries:
        if entry.branch is not None or entry.path.startswith("branch:"):
            unknown += 1  # a branch's files are the branch's objects, not the store's
            continue
        last[entry.path] = entry
        if entry.version_after is None:
            continue
        found = store.check(entry)
        if isinstance(found, AuditProblem):
            problems.append(found)
        elif found:
            checked += 1
        else:
            unknown += 1
    for entry in last.values():
        missing = store.missing(entry)
        if missing is not None:
            problems.append(missing)
    return problems, checked, unknown


def gaps(entries: list[AuditEntry]) -> list[AuditProblem]:
    """Each change conditional on a version (``if_match``) that no entry of its file (on
    its branch) made, the file's first entry aside (its version may predate the trail).
    Any entry's version counts, earlier or later: two processes may append one file's
    entries in the other order than the store took the changes."""
    made: dict[tuple[str | None, str], set[tuple[str, str]]] = {}
    for e in entries:
        if e.version_after is not None:
            made.setdefault((e.branch, e.path), set()).add(
                (e.version_after["kind"], str(e.version_after["value"])))
    problems = []
    seen: set[tuple[str | None, str]] = set()
    for e in entries:
        file = (e.branch, e.path)
        first = file not in seen
        seen.add(file)
        before = e.version_before
        if first or e.precondition != "if_match" or before is None:
            continue
        if (before["kind"], str(before["value"])) not in made.get(file, set()):
            problems.append(_problem(e.seq, "missing", Reason.audit_gap, seq=e.seq,
                                     path=e.path, version=str(Version.model_validate(before))))
    return problems


def against_anchors(entries: list[AuditEntry], anchors: list[Anchor]
                    ) -> tuple[list[AuditProblem], str]:
    by_seq = {e.seq: e for e in entries}
    last_seq = max(by_seq) if by_seq else -1
    problems = []
    for anchor in anchors:
        name = f"{anchor.seq:012d}"
        if anchor.seq > last_seq:
            problems.append(_problem(last_seq + 1, "cut", Reason.audit_tail_cut, last=last_seq,
                                     anchor=name, seq=anchor.seq))
            continue
        held = by_seq.get(anchor.seq)
        if held is None or held.hash != anchor.hash:
            problems.append(_problem(anchor.seq, "anchor", Reason.audit_anchor_unknown,
                                     anchor=name, seq=anchor.seq, hash=anchor.hash,
                                     detail="absent" if held is None else held.hash))
    anchored = max((a.seq for a in anchors), default=-1)
    if anchors and anchored >= last_seq:
        return problems, render(Reason.audit_tail_anchored)
    if not anchors:
        return problems, render(Reason.audit_tail_unanchored)
    return problems, render(Reason.audit_tail_open, details={
        "count": last_seq - anchored, "anchored": anchored})


def check(name: str, raw: list[tuple[int, bytes]], store: Backend | None,
          anchors: list[Anchor] | None) -> AuditReport:
    """The report on the trail ``name`` whose entries are ``raw`` (numbers and bytes):
    its chain; with ``store``, each entry against the store; with ``anchors`` (None: none
    were asked for), each anchor and the tail after the last."""
    entries, problems = chain(raw)
    problems += gaps(entries)
    checked = unknown = 0
    if store is not None:
        found, checked, unknown = against_store(entries, store)
        problems += found
    found, tail = against_anchors(entries, anchors or [])
    problems += found
    problems.sort(key=lambda p: (_RANK[p.kind], p.seq))
    return AuditReport(trail=name, entries=len(entries), problems=problems, checked=checked,
                       not_checkable=unknown, anchors=len(anchors or []), tail=tail)
