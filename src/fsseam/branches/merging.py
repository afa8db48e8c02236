"""One merge of a branch into main: planned whole, journaled, then published file by file.

A merge reads main's file for each path the branch changed and decides each:

- main is still where the branch's change rested: the branch's bytes are written (or the
  file deleted) while main is at that version (a conditional write: ``IfMatch``, or
  create-only for a file main did not have);
- main already holds exactly the branch's state: nothing to write;
- main changed it too: a three-way text merge (Breezy's ``merge3``) when the two changes
  do not overlap, written while main is at its current version; otherwise a conflict.

Any conflict, or a review token (``expect=``) that no longer names the branch head and
main's versions, refuses the whole merge before anything is written. Otherwise the plan is
written create-only as the branch's journal, then each file is published; then the branch's
ref is moved to a head without the published files, and the journal removed.

A merge killed at any point is finished by the next ``merge`` or ``ws.branch(name)`` from
any process: each step of the journal is done again only while main is at the version it
expects; main holding the step's bytes means it was done; anything else is a change made
on main meanwhile, which is never overwritten: that file is reported as a conflict and
stays on the branch.
"""

from __future__ import annotations

import contextvars
import hashlib
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor

from ..backends.base import Backend, WriteMeta
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..messages import Reason, render
from ..paths import display
from ..versions import CreateOnly, IfMatch, Version
from .backend import BranchBackend, Head
from .layout import BranchFile, Journal, JournalStep, Manifest, holds_markers
from .review import (
    FileState,
    MergeConflict,
    MergeConflictKind,
    MergeOutcome,
    RebaseOutcome,
    is_text,
    survey,
    three_way,
    token_of,
    with_markers,
)

__all__ = ["merge", "rebase", "resume"]

PUBLISHERS = 8
"""Files published at once (each its own conditional write)."""

def _diff(key: str, old: bytes | None, new: bytes | None) -> str:
    from ..diff import unified_diff

    try:
        return unified_diff(display(key), (old or b"").decode(), (new or b"").decode())
    except UnicodeDecodeError:
        return ""


class Plan:
    """The steps of one merge, and what it found without a step."""

    def __init__(self) -> None:
        self.steps: list[JournalStep] = []
        self.merged: list[str] = []
        self.already: list[str] = []
        self.conflicts: list[MergeConflict] = []
        self.blobs: list[bytes] = []

    def weigh(self, state: FileState) -> None:
        key, entry, main = state.key, state.entry, state.main
        expected = state.main_version
        if entry.markers:
            self._conflict(state, "unresolved")
        elif state.on_main_already:
            self.already.append(key)
        elif state.main_unchanged:
            if entry.blob is None:
                self.steps.append(JournalStep(key=key, action="delete", expected=expected))
            else:
                self.steps.append(JournalStep(key=key, action="write", expected=expected,
                                              blob=entry.blob))
        elif entry.blob is None:
            self._conflict(state, "deleted_on_branch")
        elif main is None:
            self._conflict(state, "deleted_on_main")
        elif entry.base is None:
            self._conflict(state, "both_added")
        else:
            base = state.base_bytes()
            if base is None:
                self._conflict(state, "base_lost")
                return
            combined = three_way(base, main.data, state.branch_bytes() or b"")
            if combined is None:
                self._conflict(state, "both_changed")
                return
            self.blobs.append(combined)
            self.merged.append(key)
            self.steps.append(JournalStep(key=key, action="write", expected=expected,
                                          blob=hashlib.sha256(combined).hexdigest()))

    def _conflict(self, state: FileState, kind: MergeConflictKind) -> None:
        base = state.base_bytes()
        main = None if state.main is None else state.main.data
        self.conflicts.append(MergeConflict(
            path=display(state.key), kind=kind,
            branch_diff=_diff(state.key, base, state.branch_bytes()),
            main_diff=_diff(state.key, base, main),
        ))


class Publisher:
    """Publishes a journal's steps on main, each one at most once."""

    def __init__(self, branch: BranchBackend, journal: Journal) -> None:
        self.branch = branch
        self.inner: Backend = branch.inner
        self.journal = journal
        self.published: list[str] = []
        self.conflicts: list[MergeConflict] = []
        self.unknown: list[str] = []
        self.failure: FsError | None = None
        self.now: dict[str, Version | None] = {}
        """Main's version of each published file after the merge (None: deleted)."""

    def run(self) -> None:
        # Each step runs in a copy of the caller's context: the running call
        # (fsseam.calling) reaches the publishers, whose changes it names.
        contexts = [contextvars.copy_context() for _ in self.journal.steps]
        with ThreadPoolExecutor(PUBLISHERS) as pool:
            results = list(pool.map(lambda c, s: c.run(self._step, s), contexts,
                                    self.journal.steps))
        for step, result in zip(self.journal.steps, results, strict=True):
            if result == "published":
                self.published.append(step.key)
            elif result == "conflict":
                self.conflicts.append(MergeConflict(path=display(step.key),
                                                    kind="changed_meanwhile"))
            else:
                self.unknown.append(step.key)

    def _step(self, step: JournalStep) -> str:
        try:
            if step.action == "write":
                return self._write(step)
            return self._delete(step)
        except FsError as e:
            self.failure = e
            return "unknown"

    def _write(self, step: JournalStep) -> str:
        assert step.blob is not None
        data = self.branch.store.blob(step.blob)
        pre = CreateOnly() if step.expected is None else IfMatch(step.expected)
        meta = (WriteMeta(owner=self.journal.owner)
                if self.inner.capabilities.write_meta else None)
        try:
            self.now[step.key] = self.inner.write(step.key, data, pre, meta=meta)
            return "published"
        except Conflict:
            pass
        # Refused: done before (a merge killed after this write), or main's own change.
        try:
            now = self.inner.read(step.key)
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return "conflict"
            raise
        if hashlib.sha256(now.data).hexdigest() != step.blob:
            return "conflict"
        self.now[step.key] = now.version
        return "published"

    def _delete(self, step: JournalStep) -> str:
        meta = (WriteMeta(owner=self.journal.owner)
                if self.inner.capabilities.write_meta else None)
        self.now[step.key] = None  # read only for a published step
        try:
            if step.expected is None:
                return "published"
            self.inner.delete(step.key, IfMatch(step.expected), meta=meta)
            return "published"
        except Conflict as e:
            return "published" if e.reason == ConflictKind.missing else "conflict"
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return "published"
            raise


def _settle(branch: BranchBackend, journal: Journal, done: Iterable[str],
            now: dict[str, Version | None]) -> str:
    """Move the branch past what the merge published: each path whose branch state is
    still the one merged leaves the branch (main has it now); one changed on the branch
    since, whose merged bytes main now holds as they were, rests from now on on them
    (``now``: main's version of each published path), so the next merge weighs only the
    later change. (A path merged three ways keeps its base: the later change rests on the
    branch's bytes, which main never held.) Returns the new head."""
    merged_from = branch.store.manifest(journal.head).files
    done = set(done)
    blobs = {s.key: s.blob for s in journal.steps}

    def change(head: Head) -> dict[str, BranchFile]:
        files = {}
        for k, e in head.files.items():
            if k in done and merged_from.get(k) == e:
                continue
            was = merged_from.get(k)
            if k in now and was is not None and blobs.get(k) == was.blob:
                e = e.model_copy(update={"base": now[k], "base_blob": was.blob})
            files[k] = e
        return files

    head = branch.head(fresh=False)  # the merge's own read; a moved ref is met by move()
    if change(head) == head.files:
        return head.ref.head  # nothing left to settle (a resumed merge that had settled)
    branch.move("merge", None, journal.owner, change)
    return branch.head(fresh=False).ref.head


def resume(branch: BranchBackend) -> MergeOutcome | None:
    """Finish the branch's merge under way, if any (None: there is none)."""
    found = branch.store.journal(branch.name)
    if found is None:
        return None
    journal, version = found
    return _publish(branch, journal, version, Plan(), resumed=True)


def _publish(branch: BranchBackend, journal: Journal, version: Version, plan: Plan, *,
             resumed: bool) -> MergeOutcome:
    publisher = Publisher(branch, journal)
    publisher.run()
    done = publisher.published + plan.already
    if publisher.failure is not None:
        e = publisher.failure
        message = render(Reason.branch_merge_unknown, None, {
            "name": branch.name, "detail": e.message,
            "published": ", ".join(map(display, publisher.published)) or "none",
            "unknown": ", ".join(map(display, publisher.unknown))})
        return MergeOutcome(
            branch=branch.name, ok=False, code=ErrorCode.FS_BACKEND, message=message,
            published=[display(k) for k in publisher.published],
            unknown=[display(k) for k in publisher.unknown],
            resumed=[display(k) for k in publisher.published] if resumed else [],
        )
    head = _settle(branch, journal, done,
                   {k: v for k, v in publisher.now.items() if k in publisher.published})
    branch.store.delete_journal(branch.name, version)
    published = [display(k) for k in publisher.published]
    return _partial(MergeOutcome(
        branch=branch.name, ok=True, published=published,
        merged=[display(k) for k in plan.merged if k in set(publisher.published)],
        already=[display(k) for k in plan.already], conflicts=publisher.conflicts,
        resumed=published if resumed else [], head=head,
    ))


def _partial(outcome: MergeOutcome) -> MergeOutcome:
    """``outcome``, not ok when files main changed while the merge published were left
    on the branch (what was published is said, and what was not)."""
    if not outcome.conflicts:
        return outcome.model_copy(update={"ok": True, "code": None, "message": ""})
    return outcome.model_copy(update={
        "ok": False, "code": ErrorCode.FS_STALE,
        "message": render(Reason.branch_merge_partial, None, {
            "name": outcome.branch, "published": ", ".join(outcome.published) or "none",
            "left": ", ".join(c.path for c in outcome.conflicts)})})


def merge(branch: BranchBackend, *, owner: str, expect: str | None = None,
          paths: Iterable[str] | None = None) -> MergeOutcome:
    """Publish ``branch`` to main (see the module docstring)."""
    earlier = resume(branch)
    if earlier is not None and earlier.code is ErrorCode.FS_BACKEND:
        return earlier  # the store failed again: what is left is still to finish
    head = branch.head()
    files = head.files
    keys = None
    if paths is not None:
        keys = []
        for path in paths:
            key = path.strip("/")
            if key not in files:
                if earlier is not None and display(key) in earlier.published:
                    continue
                return _refused(branch, ErrorCode.FS_INVALID_ARGUMENT, Reason.
                                branch_path_unchanged, {"path": display(key),
                                                        "name": branch.name}, earlier)
            keys.append(key)
    if earlier is not None and not (files if keys is None else keys):
        return earlier
    # A review's token names every file the branch changed; without one, only the files
    # merged are read.
    states = survey(branch.store, branch.inner, head.manifest,
                    keys if expect is None else None)
    if expect is not None:
        token = token_of(head.ref.head, states)
        if token != expect:
            return _refused(branch, ErrorCode.FS_STALE, Reason.branch_review_moved,
                            {"name": branch.name, "expected": expect, "token": token},
                            earlier)
    plan = Plan()
    for state in states:
        if keys is None or state.key in keys:
            plan.weigh(state)
    if plan.conflicts:
        outcome = _refused(branch, ErrorCode.FS_STALE, Reason.branch_conflicts, {
            "name": branch.name, "count": len(plan.conflicts),
            "paths": ", ".join(c.path for c in plan.conflicts)}, earlier)
        return outcome.model_copy(update={"conflicts": plan.conflicts})
    if not plan.steps:
        head_now = _settle(branch, Journal(branch=branch.name, head=head.ref.head, owner=owner,
                                           started=time.time(), steps=[]), plan.already, {})
        outcome = MergeOutcome(branch=branch.name, ok=True,
                               already=[display(k) for k in plan.already], head=head_now)
        return outcome if earlier is None else outcome.model_copy(update={
            "published": earlier.published, "resumed": earlier.resumed})
    if plan.blobs:
        # Named by a young manifest before they are written, as a change's blobs are, so
        # collect leaves them while the journal that names them is not yet written.
        branch.store.put_manifest(Manifest(
            branch=branch.name, parent=head.ref.head, owner=owner, time=time.time(),
            operation="merge-plan",
            files={s.key: BranchFile(blob=s.blob) for s in plan.steps if s.key in plan.merged}))
        for data in plan.blobs:
            branch.store.put_blob(data)
    journal = Journal(branch=branch.name, head=head.ref.head, owner=owner,
                      started=time.time(), steps=plan.steps)
    try:
        version = branch.store.put_journal(journal)
    except Conflict as e:
        if e.reason != ConflictKind.exists:
            raise
        found = branch.store.journal(branch.name)
        return _refused(branch, ErrorCode.FS_BACKEND, Reason.branch_merging,
                        {"name": branch.name, "owner": found[0].owner if found else owner},
                        earlier)
    outcome = _publish(branch, journal, version, plan, resumed=False)
    return outcome if earlier is None else _after(earlier, outcome)


def _after(earlier: MergeOutcome, outcome: MergeOutcome) -> MergeOutcome:
    """One report of a merge that first finished a killed one (``earlier``)."""
    if not outcome.ok and outcome.code is not ErrorCode.FS_STALE:
        return outcome.model_copy(update={
            "published": earlier.published + outcome.published, "resumed": earlier.resumed})
    # A file the finish found changed meanwhile, which this plan then combined three ways,
    # is published: no conflict is left of it.
    return _partial(outcome.model_copy(update={
        "published": earlier.published + outcome.published,
        "resumed": earlier.resumed,
        "conflicts": [c for c in earlier.conflicts if c.path not in outcome.published]
                     + outcome.conflicts}))


def _refused(branch: BranchBackend, code: ErrorCode, reason: str, details: dict[str, object],
             earlier: MergeOutcome | None) -> MergeOutcome:
    path = details.get("path")
    message = render(reason, path if isinstance(path, str) else None, details)
    if earlier is not None and earlier.published:
        # "Nothing was merged" is said of this merge: the one killed earlier was finished.
        message = render(Reason.branch_finished_first, None, {
            "name": branch.name, "published": ", ".join(earlier.published)}) + " " + message
    return MergeOutcome(
        branch=branch.name, ok=False, code=code, message=message,
        published=earlier.published if earlier else [],
        resumed=earlier.resumed if earlier else [],
    )


def _rebased(state: FileState, name: str, owner: str) -> tuple[BranchFile, list[bytes], bool]:
    """``state``'s change moved onto main's current file: the new entry, the blobs it
    needs, and whether it combined cleanly."""
    entry, main = state.entry, state.main
    if main is None:  # main deleted it: the branch's state stands, over main's absence
        return entry.model_copy(update={"base": None, "base_blob": None, "owner": owner}), [], False
    kept = main.data
    base_blob = hashlib.sha256(kept).hexdigest()
    if entry.blob is None:  # the branch deleted what main changed: still deleted, over it
        return (BranchFile(blob=None, base=main.version, base_blob=base_blob, owner=owner),
                [kept], False)
    ours = state.branch_bytes() or b""
    base = state.base_bytes() if entry.base is not None else b""
    clean = False
    if base is not None and is_text(base, kept, ours):
        ours, clean = with_markers(base, kept, ours, name)
    new = BranchFile(blob=hashlib.sha256(ours).hexdigest(), size=len(ours), base=main.version,
                     base_blob=base_blob, owner=owner, source=entry.source,
                     markers=not clean and holds_markers(ours))
    return new, [kept, ours], clean


def rebase(branch: BranchBackend, *, owner: str,
           paths: Iterable[str] | None = None) -> RebaseOutcome:
    """Move each of the branch's changes that main changed too onto main's current file
    (see :class:`RebaseOutcome`); one new head, by the ref's compare-and-swap. A file an
    agent changed on the branch meanwhile is left for the next rebase."""
    earlier = resume(branch)  # a merge killed midway is finished first
    if earlier is not None and earlier.code is ErrorCode.FS_BACKEND:
        found = branch.store.journal(branch.name)
        raise FsError(ErrorCode.FS_BACKEND, reason=Reason.branch_merging, details={
            "name": branch.name, "owner": found[0].owner if found else owner})
    head = branch.head()
    keys = None if paths is None else [p.strip("/") for p in paths]
    for key in keys or ():
        if key not in head.files:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(key),
                          reason=Reason.branch_path_unchanged,
                          details={"name": branch.name})
    moved: dict[str, tuple[BranchFile, BranchFile, bool]] = {}
    blobs: list[bytes] = []
    for state in survey(branch.store, branch.inner, head.manifest, keys):
        if state.main_unchanged or state.on_main_already:
            continue
        new, needed, clean = _rebased(state, branch.name, owner)
        moved[state.key] = (state.entry, new, clean)
        blobs += needed
    taken: list[str] = []  # what the head that lands holds; the rest is left as it is now

    def change(now: Head) -> dict[str, BranchFile]:
        files = dict(now.files)
        taken.clear()
        for key, (was, new, _) in moved.items():
            if files.get(key) == was:
                files[key] = new
                taken.append(key)
        return files

    if moved:
        branch.move("rebase", None, owner, change, lambda: blobs)
    return RebaseOutcome(
        branch=branch.name, rebased=[display(k) for k in taken if moved[k][2]],
        conflicted=[display(k) for k in taken if not moved[k][2]],
        head=branch.head(fresh=False).ref.head)
