"""Changing files: the operations that make a plan and report what its commit did.

One file: a whole-file write or create, edits (one or several as one plan), a write or
create of exact bytes, a delete, and a move (a guarded copy, then a guarded delete).
Several files as one (:func:`change`): create, update, move and delete, all or nothing;
every part is validated (its intent asked, its new bytes computed, its guard checked
against the read) before anything is written. Each builds a
:class:`~fsseam.seam.commit.Plan` and runs it through :func:`~fsseam.seam.commit.run`;
events and the outcome follow only once the plan has committed.

Every change asks the gate first, here and only here: :func:`guard_for` builds the
change's intent (the file, the operation and the precondition the seam proposes) and
returns the :class:`~fsseam.events.Guard` the gate decides (the plugins, the observation
policy first, set the precondition they require and how its loss is explained, or
veto); :func:`ask_undo` asks what an undo takes back.

The edit of one file and a part of a change share one preparation (:func:`prepare_edit`):
one read, the guard asked, then checked against the version just read, the edit made on
the text, the new bytes within the limits.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Generic, Literal, TypeVar

from ..changes import Create, Delete, FileChange, Update
from ..doccache import view_of
from ..edits import EditOp, EditPlan, Insert, Replace, Span, apply, check_new_text, check_replace
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..events import (
    DeletedEvent,
    DeleteIntent,
    EditIntent,
    Guard,
    UndoIntent,
    WriteIntent,
    WrittenEvent,
)
from ..messages import Reason, Role
from ..outcomes import (
    ChangedFile,
    ChangeOutcome,
    DeleteOutcome,
    EditOutcome,
    MoveOutcome,
    WriteOutcome,
)
from ..paths import display
from ..text import TextDoc, TextFormat, decode, encode_new
from ..text import new_doc as new_text_doc
from ..versions import CreateOnly, IfMatch, Overwrite, Precondition, SameChange, Version
from . import reading
from .commit import (
    CREATE,
    CREATE_BYTES,
    DELETE,
    EDIT,
    MOVE,
    WRITE,
    WRITE_OVER,
    FilePlan,
    Plan,
    Step,
    run,
)
from .core import Core
from .verdicts import judge, refusal_for, same_part, stale, stale_part, text_or_none

__all__ = [
    "PreparedEdit",
    "ask_undo",
    "change",
    "check_edit_size",
    "create_bytes",
    "delete",
    "edit",
    "encode_checked",
    "guard_for",
    "load_text",
    "move",
    "new_bytes",
    "prepare_edit",
    "seen_before",
    "write",
    "write_bytes",
]


# -- new bytes within the limits, and the text an edit is made on -------------------
def encode_checked(make: Callable[[], bytes], role: str) -> bytes:
    """The new bytes, or FS_INVALID_ARGUMENT naming the argument that is not UTF-8."""
    try:
        return make()
    except UnicodeEncodeError as e:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.text_not_utf8,
            details={"arg": Role(role), "position": e.start},
        ) from None


def check_edit_size(fs: Core, shown: str, n: int) -> None:
    if n > fs.limits.max_edit_bytes:
        raise FsError(ErrorCode.FS_TOO_LARGE, path=shown, reason=Reason.content_too_large,
                      details={"size": n, "cap": fs.limits.max_edit_bytes})


def load_text(fs: Core, key: str, shown: str) -> tuple[TextDoc, Version]:
    """The whole file as text, for an edit: one round trip, and never more than the
    edit limit fetched (a huge object is refused, not downloaded)."""
    data, version = fs.load_bytes(key)
    return decode(data, shown), version


def check_writable(fs: Core) -> None:
    """A read-only workspace refuses every change before anything else is looked at (a
    store mounted read-only, ``backend.check_writable``, before anything is read for it)."""
    if fs.read_only:
        raise FsError(ErrorCode.FS_READ_ONLY, reason=Reason.read_only)


# -- asking the gate -------------------------------------------------------------------
WriteOp = Literal["write", "create", "restore"]
EditKind = Literal["replace", "insert", "edit"]
DeleteOp = Literal["delete", "move"]


_STALE_REASON = {"delete": Reason.stale_delete, "move": Reason.stale_move}


def guard_for(
    fs: Core, kind: Literal["write", "edit", "delete"], key: str, shown: str, *,
    operation: WriteOp | EditKind | DeleteOp, size: int = 0, current: Version | None = None,
    destination: str | None = None,
) -> Guard:
    """The precondition a change of one file carries and how its loss is explained: the
    seam proposes one on the change's intent, and the gate returns it as the plugins leave
    it (:meth:`~fsseam.gate.Gate.decide`: the observation policy decides it from what the
    owner observed; a veto raises FsError).

    The seam proposes, for ``write``: a whole-file write, no guard (a create is
    create-only); ``edit``: the version just read (``current``), a lost guard is FS_STALE;
    ``delete`` (a delete, or a move's source): ``current`` when the file was read for it
    (a lost guard is FS_STALE then), else no guard."""
    intent: WriteIntent | EditIntent | DeleteIntent
    owner = fs.owner
    if kind == "write":
        pre: Precondition = CreateOnly() if operation == "create" else Overwrite()
        intent = WriteIntent(owner=owner, key=key, path=shown, operation=operation,  # type: ignore[arg-type]
                             precondition=pre, size=size)
    elif kind == "edit":
        assert current is not None
        intent = EditIntent(owner=owner, key=key, path=shown, operation=operation,  # type: ignore[arg-type]
                            current=current, precondition=IfMatch(current),
                            conflict_code=ErrorCode.FS_STALE,
                            conflict_reason=Reason.changed_during_edit)
    elif current is not None:
        intent = DeleteIntent(owner=owner, key=key, path=shown, operation=operation,  # type: ignore[arg-type]
                              destination=destination, precondition=IfMatch(current),
                              conflict_code=ErrorCode.FS_STALE,
                              conflict_reason=_STALE_REASON[operation])
    else:
        intent = DeleteIntent(owner=owner, key=key, path=shown, operation=operation,  # type: ignore[arg-type]
                              destination=destination)
    return fs.gate.decide(intent)


def ask_undo(fs: Core, key: str, shown: str) -> UndoIntent:
    """What an undo of this owner's last change of the file takes back, as the plugins
    that record changes (the observation policy) say; a veto raises FsError."""
    intent = UndoIntent(owner=fs.owner, key=key, path=shown)
    fs.gate.dispatch(intent)
    return intent


def seen_before(refused: FsError) -> Version | None:
    """The version the agent saw, when the policy refused its edit as stale (the diff from
    it to the current version goes into the refusal); None for any other refusal."""
    seen = refused.details.get("observed")
    if refused.code is ErrorCode.FS_STALE and isinstance(seen, Version):
        return seen
    return None


def stale_before(fs: Core, pre: Precondition, current: tuple[bytes, Version], key: str,
                 shown: str, guard: Guard, action: str) -> None:
    """A precondition already lost against the version just read: refuse now, with what
    changed since the agent's read."""
    if isinstance(pre, IfMatch) and pre.version != current[1]:
        fallback = refusal_for(Conflict("mismatch", path=shown), shown, *guard.lost)
        raise stale_part(fs, key, shown, pre.version, current, action, fallback)


# -- an edit's preparation, for one file and a part of a change ------------------------
R = TypeVar("R")


@dataclass
class PreparedEdit(Generic[R]):
    """An edit ready to commit: the file as read, the edit's ``result`` on it, and the
    guard the write takes; ``guard`` None: nothing is to be written, the file already
    holds what the edit made on the agent's read (``result``)."""

    doc: TextDoc
    current: Version
    result: R
    guard: Guard | None
    landed_over: Version | None = None
    """The edit is this owner's own, landed already over this version (the one it read):
    its request resent, or run again after its answer was lost. Nothing is written, and
    the edit is done."""


def new_bytes(fs: Core, shown: str, doc: TextDoc) -> bytes:
    """The edited text's bytes, refused when not UTF-8 or over the edit limit."""
    data = encode_checked(doc.encode, "new")
    check_edit_size(fs, shown, len(data))
    return data


def prepare_edit(
    fs: Core, key: str, shown: str, operation: EditKind, make: Callable[[TextDoc], R],
    after: Callable[[R], TextDoc], *, lone: bool, ops: Sequence[EditOp] = (),
) -> PreparedEdit[R]:
    """Read the file and make the edit (``make``; ``after`` gives the text it made).

    ``lone`` (a single edit): a guard that already differs from the version just read is
    refused as the policy explains it, without a diff. An edit the policy refuses as
    stale that, made on what the agent read, gives exactly the current bytes is judged by
    the one rule (:func:`~fsseam.versions.same_change`): FS_STALE saying the file already
    holds the change, made by another writer; for a single edit, done without a write when
    the store says the current version is this owner's own write.
    ``ops``: the edits whose replacements a stale diff locates."""
    doc, current = load_text(fs, key, shown)
    try:
        guard = guard_for(fs, "edit", key, shown, operation=operation, current=current)
    except FsError as e:
        seen = seen_before(e)
        if seen is None:
            raise
        return _refused_stale(fs, key, shown, doc, current, seen, e, make, after, lone, ops)
    pre = guard.precondition
    if lone and isinstance(pre, IfMatch) and pre.version != current:
        raise refusal_for(Conflict("mismatch", path=shown), shown, *guard.lost)
    if isinstance(pre, IfMatch) and pre.version != current:  # the bytes only then
        stale_before(fs, pre, (doc.encode(), current), key, shown, guard, "edit")
    return PreparedEdit(doc, current, make(doc), guard)


def _refused_stale(
    fs: Core, key: str, shown: str, doc: TextDoc, current: Version, seen: Version,
    refused: FsError, make: Callable[[TextDoc], R], after: Callable[[R], TextDoc],
    lone: bool, ops: Sequence[EditOp],
) -> PreparedEdit[R]:
    """The file moved on from the version the agent read: FS_STALE showing what changed;
    for a single edit whose result on what the agent read is exactly the current bytes,
    success without a write when those bytes are the owner's own landed edit, else the
    refusal saying another writer made exactly this change."""
    # The text read is needed for the diff anyway: the refusal's one extra question is
    # whether the edit, made on it, gives exactly the current bytes.
    old = text_or_none(fs, key, seen)
    same: SameChange | None = None
    held = doc.encode()
    if old is not None:
        try:
            mine: R | None = make(old)
        except FsError:
            mine = None
        if mine is not None:
            same = judge(fs.backend, key, after(mine).encode(), held, current, seen=seen,
                         observed=True, owner=fs.owner, answered=True)
            if same is SameChange.OURS and lone:
                return PreparedEdit(doc, current, mine, None, landed_over=seen)
            # A part of a change found landed is not the change done (its other parts are
            # judged on their own): refused as stale, with the diff.
            if same is not SameChange.THEIRS and same is not SameChange.MAYBE_OURS:
                same = None
    raise stale(fs, key, shown, seen, (held, current), action="edit",
                fallback=refused, ops=ops, old=old, same=same) from None


# -- one file: write, create, edit, exact bytes ----------------------------------------
SNIPPET_CONTEXT = 3


def _snippet(doc: TextDoc, span: Span, anchored: bool) -> tuple[list[str], int]:
    """The lines around ``span`` in ``doc``; ``anchored``: ``span.at`` is an offset in
    ``doc`` itself (a plan of one edit), so only the lines shown are looked at."""
    start = max(1, span.first_line - SNIPPET_CONTEXT)
    end = span.last_line + SNIPPET_CONTEXT
    if anchored and span.at is not None:
        return doc.lines_near(span.at, span.first_line, start, end), start
    lines = doc.lines
    return lines[start - 1 : min(len(lines), end)], start


def _replace_all(ops: Sequence[EditOp]) -> bool:
    return len(ops) == 1 and isinstance(ops[0], Replace) and ops[0].replace_all


def write(fs: Core, path: str, content: str, operation: Literal["write", "create"]
          ) -> WriteOutcome:
    """Replace (or create) the whole file, or create a new one (see
    :meth:`fsseam.seam.Seam.write` and :meth:`~fsseam.seam.Seam.create`)."""
    check_writable(fs)
    key, shown = fs.resolve_file(path)
    fs.backend.check_writable(key)
    guard = guard_for(fs, "write", key, shown, operation=operation, size=len(content))
    plan = FilePlan(key, shown, b"", guard.precondition,
                    CREATE if operation == "create" else WRITE, guard.lost, fs.write_meta)
    if operation == "create":
        plan.precondition = CreateOnly()
        plan.lost = (ErrorCode.FS_ALREADY_EXISTS, Reason.add_exists, None)
    fmt, old_view = _read_for_write(fs, plan)
    check_new_text(content, "content")
    # The new text as decoding its bytes would give it (no NUL: checked; UTF-8: encoded).
    new_doc = new_text_doc(content, fmt)
    plan.data = encode_checked(new_doc.encode, "content")
    check_edit_size(fs, shown, len(plan.data))
    done = run(fs, Plan.one("write", plan))[0]
    version, unchanged = done.version, done.unchanged
    assert version is not None
    if unchanged:
        return _unchanged_write(fs, plan, version, operation)
    pre, current = plan.precondition, plan.current
    created = isinstance(pre, CreateOnly) or (isinstance(pre, Overwrite) and current is None)
    fs.docs.put(key, version, new_doc.format, plan.data)
    old_text = "" if created else old_view
    replaced = (pre.version if isinstance(pre, IfMatch)
                else current[1] if current is not None else None)
    event = WrittenEvent(owner=fs.owner, key=key, path=shown, operation=operation,
                         version=version, created=created,
                         replaced=None if created else replaced)
    fs.gate.dispatch(event.with_diff(shown, old_text, new_doc.view))
    outcome = WriteOutcome(path=shown, operation=operation, created=created, version=version,
                           size=len(plan.data), lines=_line_count(new_doc, plan.data))
    outcome.with_diff(shown, old_text, new_doc.view)
    return outcome


def _line_count(doc: TextDoc, data: bytes) -> int:
    """``doc.line_count`` from its bytes: a newline is one ``\\n`` byte in UTF-8 (and a BOM or
    a CRLF's CR none), so the bytes about to be kept are counted without encoding the
    view again (a large one is counted in pieces, never copied whole)."""
    if not doc.view or len(data) > _WHOLE_COUNT:
        return doc.line_count
    return len(data) - len(data.replace(b"\n", b"")) + (0 if doc.view.endswith("\n") else 1)


_WHOLE_COUNT = 1 << 20


OldText = str | Callable[[], str | None] | None
"""The text a write replaces, for its diff: known, decoded when asked for, or unknown."""


def _read_for_write(fs: Core, plan: FilePlan) -> tuple[TextFormat | None, OldText]:
    """The existing file's format and text, which the new content keeps (from the cache
    where the guard names a version it holds; its bytes are decoded only if a diff is
    asked for); ``plan.current`` set when read."""
    pre, key, shown = plan.precondition, plan.key, plan.shown
    if isinstance(pre, IfMatch):
        cached = fs.docs.kept(key, pre.version)
        if cached is not None:
            fmt, kept = cached
            return fmt, partial(view_of, kept, shown) if isinstance(kept, bytes) else kept
        try:
            plan.current = fs.load_bytes(key, record_missing=False)
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND:
                raise
            raise refusal_for(Conflict("missing", path=shown), shown, *plan.lost) from None
    elif isinstance(pre, Overwrite):
        try:
            plan.current = fs.load_bytes(key, record_missing=False)
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND:
                raise
            return None, None
    else:
        return None, None
    if reading.is_media(plan.current[0]):
        # An image or a PDF, which a read shows: the agent that saw it may replace it
        # whole. Any other file that is not text is never rewritten (FS_NOT_TEXT below).
        return None, None
    doc = decode(plan.current[0], shown)
    return doc.format, doc.view


def _unchanged_write(fs: Core, plan: FilePlan, version: Version,
                     operation: Literal["write", "create"]) -> WriteOutcome:
    """The file holds exactly the bytes already: nothing is written; the writer has now
    observed its current version."""
    shown, data = plan.shown, plan.data
    fs.record_observed(plan.key, shown, data, version)
    doc = decode(data, shown)
    outcome = WriteOutcome(path=shown, operation=operation, created=False, version=version,
                           size=len(data), lines=len(doc.lines), unchanged=True)
    outcome.with_diff(shown, doc.view, doc.view)
    return outcome


def check_ops(ops: Sequence[EditOp]) -> None:
    """Argument checks that need no file (each refusal names its edit's index)."""
    if not ops:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.no_edits)
    for index, op in enumerate(ops, start=1):
        try:
            if isinstance(op, Replace):
                check_replace(op)
            else:
                check_new_text(op.text, "text")
        except FsError as e:
            if len(ops) > 1:
                e.details["edit_index"] = index
            raise


def edit(fs: Core, path: str, ops: Sequence[EditOp]) -> EditOutcome:
    """Apply a sequence of edits as one plan under one compare-and-swap (see
    :meth:`fsseam.seam.Seam.edit`)."""
    check_writable(fs)
    check_ops(ops)
    key = fs.key(path)
    shown = display(key)
    fs.backend.check_writable(key)
    operation: EditKind = (
        "edit" if len(ops) > 1 else "insert" if isinstance(ops[0], Insert) else "replace"
    )
    prep = prepare_edit(fs, key, shown, operation, partial(apply, ops=ops, path=shown),
                        _after, lone=True, ops=ops)
    doc, current, result, guard = prep.doc, prep.current, prep.result, prep.guard
    if prep.landed_over is not None:
        return _edit_done(fs, key, shown, result, operation, ops, current, prep.landed_over)
    if guard is None or not result.changed:
        return _unchanged_edit(fs, key, shown, result, doc, current, operation, ops)
    return _commit_edit(fs, key, shown, result, guard, operation, ops)


def _after(result: EditPlan) -> TextDoc:
    return result.after


def _unchanged_edit(
    fs: Core, key: str, shown: str, result: EditPlan, doc: TextDoc, current: Version,
    operation: EditKind, ops: Sequence[EditOp],
) -> EditOutcome:
    """The file already holds the edit's result: nothing is written."""
    fs.record_observed(key, shown, doc.encode(), current)
    first = result.spans[0]
    # The plan's offsets are in the text it made, not in ``doc``: lines are counted.
    snippet, start = _snippet(doc, first, False)
    outcome = EditOutcome(
        path=shown, operation=operation, replacements=result.replacements,
        replace_all=_replace_all(ops), version=current, first_line=first.first_line,
        snippet=snippet, snippet_start=start, edits=len(result.spans), unchanged=True,
    )
    outcome.with_diff(shown, doc.view, doc.view)
    return outcome


def _commit_edit(fs: Core, key: str, shown: str, result: EditPlan, guard: Guard,
                 operation: EditKind, ops: Sequence[EditOp]) -> EditOutcome:
    new_doc = result.after
    data = new_bytes(fs, shown, new_doc)
    pre = guard.precondition
    plan = FilePlan(key, shown, data, pre, EDIT, guard.lost, fs.write_meta,
                    old=result.before, ops=ops)
    done = run(fs, Plan.one("write", plan))[0]
    version = done.version
    assert version is not None
    if done.unchanged:  # the file holds these bytes at the version read: nothing written
        return _unchanged_edit(fs, key, shown, result, decode(data, shown), version,
                               operation, ops)
    seen = pre.version if isinstance(pre, IfMatch) else None
    return _edit_done(fs, key, shown, result, operation, ops, version, seen, data)


def _edit_done(fs: Core, key: str, shown: str, result: EditPlan, operation: EditKind,
               ops: Sequence[EditOp], version: Version, seen: Version | None,
               data: bytes | None = None) -> EditOutcome:
    """The edit is in the file as ``version``, made over ``seen``: written now, or this
    owner's own edit found landed already (a resend after a lost answer)."""
    new_doc = result.after
    if data is None:
        data = new_bytes(fs, shown, new_doc)
    fs.docs.put(key, version, new_doc.format, data)
    event = WrittenEvent(owner=fs.owner, key=key, path=shown, operation=operation,
                         version=version, created=False, replaced=seen)
    fs.gate.dispatch(event.with_diff(shown, result.before.view, new_doc.view))
    replace_all = _replace_all(ops)
    first = result.spans[0]
    snippet, start = _snippet(new_doc, first, len(result.spans) == 1)
    outcome = EditOutcome(
        path=shown, operation=operation, replacements=result.replacements,
        replace_all=replace_all, version=version, first_line=first.first_line,
        snippet=snippet, snippet_start=start, edits=len(result.spans),
    )
    outcome.with_diff(shown, result.before.view, new_doc.view)
    return outcome


def write_bytes(fs: Core, path: str, data: bytes,
                base: IfMatch | CreateOnly | None = None) -> Version:
    """Replace (or create) the whole file with ``data``, exactly, for a surface whose API
    is bytes (no text rules: no BOM or newlines kept, any bytes): conditional on the
    version this owner observed, create-only when it observed none (the observation
    policy's rule for a whole-file write). Returns the version the file now has.

    ``base``: the condition ``data`` was made under (an append handle's: the version it
    read when it opened, create-only when it found no file). It stands whatever this
    owner observed since: another handle of the same owner writing first moves the
    owner's observation on, not what these bytes were built on, so that write would be
    lost. A lost ``base`` is FS_STALE."""
    check_writable(fs)
    key, shown = fs.resolve_file(path)
    fs.backend.check_writable(key)
    check_edit_size(fs, shown, len(data))
    guard = guard_for(fs, "write", key, shown, operation="write", size=len(data))
    precondition, lost = guard.precondition, guard.lost
    if base is not None:
        precondition = base
        lost = (ErrorCode.FS_STALE, Reason.stale_write if isinstance(base, IfMatch)
                else Reason.created_since_absent_write, None)
    plan = FilePlan(key, shown, data, precondition, WRITE if base is None else WRITE_OVER,
                    lost, fs.write_meta)
    done = run(fs, Plan.one("write", plan))[0]
    version = done.version
    assert version is not None
    if done.unchanged:
        if base is not None and not (isinstance(base, IfMatch) and base.version == version):
            # Another writer wrote exactly these bytes after they were built (two appends
            # of one line): what it added belongs in them twice, not once.
            fallback = FsError(ErrorCode.FS_STALE, path=shown, reason=lost[1])
            seen = base.version if isinstance(base, IfMatch) else None
            raise stale(fs, key, shown, seen, (data, version), action="write",
                        fallback=fallback)
        fs.record_observed(key, shown, data, version)
        return version
    pre = plan.precondition
    _keep(fs, key, shown, data, version)
    fs.gate.dispatch(WrittenEvent(
        owner=fs.owner, key=key, path=shown, operation="write", version=version,
        created=isinstance(pre, CreateOnly),
        replaced=pre.version if isinstance(pre, IfMatch) else None))
    return version


def _keep(fs: Core, key: str, shown: str, data: bytes, version: Version) -> None:
    """Keep the text of the version written, which a later refusal's diff starts from."""
    try:
        fmt = decode(data, shown).format
    except FsError:
        return
    fs.docs.put(key, version, fmt, data)


def create_bytes(fs: Core, path: str, data: bytes) -> Version:
    """Create a new file holding exactly ``data``; never replaces one (FS_ALREADY_EXISTS),
    whatever this owner observed of the path."""
    check_writable(fs)
    key, shown = fs.resolve_file(path)
    fs.backend.check_writable(key)
    check_edit_size(fs, shown, len(data))
    guard = guard_for(fs, "write", key, shown, operation="create", size=len(data))
    # An exclusive create of fsspec's ("xb", mode="create") answers FileExistsError for any
    # file there, this owner's earlier one included: no owner on the object makes it ours.
    plan = FilePlan(key, shown, data, CreateOnly(), CREATE_BYTES, guard.lost,
                    fs.write_meta)
    plan.lost = (ErrorCode.FS_ALREADY_EXISTS, Reason.add_exists, None)
    done = run(fs, Plan.one("write", plan))[0]
    version = done.version
    assert version is not None
    if done.unchanged:
        # The file was there already, holding these very bytes: still not a creation.
        raise FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown, reason=Reason.add_exists)
    with contextlib.suppress(FsError):  # not text: no diff will start from it
        # The text of the version written, which a later refusal's diff starts from.
        fs.docs.put(key, version, decode(data, shown).format, data)
    fs.gate.dispatch(WrittenEvent(owner=fs.owner, key=key, path=shown, operation="create",
                                   version=version, created=True))
    return version


# -- several files as one --------------------------------------------------------------
@dataclass
class _Prepared:
    """One validated part of a change: its steps and the texts around it."""

    change: FileChange
    key: str
    shown: str
    steps: list[Step]
    before: str | None = None
    """The old text (None: not text, or not read)."""
    after: TextDoc | None = None
    """The new text (None: a delete, or a move of bytes not read as text)."""
    dst: str | None = None
    dst_shown: str | None = None


def _text_or_none(data: bytes) -> str | None:
    """The model view of ``data`` when it is text (for a diff); None otherwise."""
    try:
        return decode(data, "").view
    except FsError:
        return None


def change(fs: Core, changes: Sequence[FileChange]) -> ChangeOutcome:
    """See :meth:`fsseam.seam.Seam.change`."""
    check_writable(fs)
    if not changes:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.change_empty)
    for c in changes:
        if isinstance(c, Create):
            check_new_text(c.content, "content")
    prepared = [_prepare(fs, c, key, dst) for c, key, dst in _resolved(fs, changes)]
    run(fs, Plan([step for p in prepared for step in p.steps], fs.write_meta))
    return _committed(fs, prepared)


def _resolved(fs: Core, changes: Sequence[FileChange]
              ) -> list[tuple[FileChange, str, str | None]]:
    """Each part with its key and (a move) its destination's; no path named twice."""
    named: set[str] = set()
    resolved: list[tuple[FileChange, str, str | None]] = []
    for c in changes:
        key = fs.resolve_file(c.path)[0]
        dst: str | None = None
        if isinstance(c, Update):
            if c.move_to is not None:
                dst = fs.resolve_file(c.move_to)[0]
                dst = None if dst == key else dst
            if c.edit is None and dst is None:
                raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(key),
                              reason=Reason.change_nothing)
        for k in (key, dst):
            if k is None:
                continue
            if k in named:
                raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(k),
                              reason=Reason.change_same_path)
            named.add(k)
        resolved.append((c, key, dst))
    return resolved


def _absent(fs: Core, key: str, exists: FsError) -> None:
    """Raise ``exists`` (or FS_IS_DIRECTORY) unless nothing is at ``key`` now."""
    try:
        st = fs.backend.stat(key)
    except FsError as e:
        if e.code is ErrorCode.FS_NOT_FOUND and e.reason != Reason.bucket_missing:
            return
        raise
    if st.kind == "directory":
        raise FsError(ErrorCode.FS_IS_DIRECTORY, path=display(key), reason=Reason.is_directory)
    raise exists


def _lost_part(fs: Core, key: str, shown: str, pre: Precondition, action: str,
               guard: Guard, data: bytes | None = None,
               ) -> Callable[[Conflict], FsError]:
    """What a step of a change that lost its precondition at commit tells the agent;
    ``data``: a write's bytes, which the file may hold already (another writer's same
    change: the refusal says so)."""

    def lost(err: Conflict) -> FsError:
        fallback = refusal_for(err, shown, *guard.lost)
        if err.reason != ConflictKind.mismatch or not isinstance(pre, IfMatch):
            return fallback
        if data is not None:
            return same_part(fs, key, shown, pre.version, data, action, fallback)
        return stale_part(fs, key, shown, pre.version, None, action, fallback)

    return lost


def _same(doc: TextDoc) -> TextDoc:
    return doc


def _prepare(fs: Core, c: FileChange, key: str, dst: str | None) -> _Prepared:
    shown = display(key)
    if isinstance(c, Create):
        return _prepare_create(fs, c, key, shown)
    if isinstance(c, Delete):
        return _prepare_delete(fs, c, key, shown)
    return _prepare_update(fs, c, key, shown, dst)


def _prepare_delete(fs: Core, c: Delete, key: str, shown: str) -> _Prepared:
    raw, current = fs.load_bytes(key)
    guard = guard_for(fs, "delete", key, shown, operation="delete", current=current)
    pre = guard.precondition
    stale_before(fs, pre, (raw, current), key, shown, guard, "delete")
    stale = _lost_part(fs, key, shown, pre, "delete", guard)

    def gone(err: Conflict) -> FsError:
        if err.reason == ConflictKind.missing:
            return FsError(ErrorCode.FS_NOT_FOUND, path=shown, reason=Reason.missing)
        return stale(err)

    step = Step("delete", key, shown, pre, gone, old=raw)
    return _Prepared(c, key, shown, [step], before=_text_or_none(raw))


def _prepare_create(fs: Core, c: Create, key: str, shown: str) -> _Prepared:
    guard_for(fs, "write", key, shown, operation="create", size=len(c.content))
    _absent(fs, key, FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown, reason=Reason.add_exists))
    data = encode_checked(lambda: encode_new(c.content, None), "content")
    check_edit_size(fs, shown, len(data))

    def exists(err: Conflict) -> FsError:
        return refusal_for(err, shown, ErrorCode.FS_ALREADY_EXISTS, Reason.add_exists, None)

    step = Step("create", key, shown, CreateOnly(), exists, data=data)
    return _Prepared(c, key, shown, [step], before="", after=decode(data, shown))


def _prepare_update(fs: Core, c: Update, key: str, shown: str, dst: str | None) -> _Prepared:
    after: TextDoc | None = None
    before: str | None = None
    if c.edit is not None:
        make = c.edit
        prep = prepare_edit(fs, key, shown, "edit", lambda d: make(d, shown), _same,
                            lone=False)
        doc, current, after, edit = prep.doc, prep.current, prep.result, prep.guard
        assert edit is not None  # a change's part is never done without a write
        pre = edit.precondition
        data = new_bytes(fs, shown, after)
        old, before = doc.encode(), doc.view
        if dst is None:
            lost = _lost_part(fs, key, shown, pre, "edit", edit, data)
            step = Step("write", key, shown, pre, lost, data=data, old=old)
            return _Prepared(c, key, shown, [step], before=before, after=after)
    else:
        old, current = fs.load_bytes(key)
    assert dst is not None
    dst_shown = display(dst)
    move = guard_for(fs, "delete", key, shown, operation="move", current=current,
               destination=dst_shown)
    source = move.precondition
    stale_before(fs, source, (old, current), key, shown, move, "move")
    stale = _lost_part(fs, key, shown, source, "move", move)
    facts = {"destination": dst_shown}
    _absent(fs, dst, FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown,
                             reason=Reason.move_destination_exists, details=facts))

    def moved(err: Conflict) -> FsError:
        if err.reason == ConflictKind.exists:
            return FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown,
                           reason=Reason.move_destination_exists, details=facts)
        if err.reason == ConflictKind.missing:
            return FsError(ErrorCode.FS_NOT_FOUND, path=shown, reason=Reason.deleted_before_move)
        return stale(err)

    if after is not None:
        put = Step("create", dst, dst_shown, CreateOnly(), moved, data=after.encode())
    else:
        put = Step("copy", dst, dst_shown, source, moved, data=old, source=key)
    remove = Step("delete", key, shown, source, moved, old=old, moved_to=dst)
    return _Prepared(c, key, shown, [put, remove], before=before, after=after, dst=dst,
                     dst_shown=dst_shown)


def _committed(fs: Core, prepared: Sequence[_Prepared]) -> ChangeOutcome:
    """Record and report a change that committed."""
    files: list[ChangedFile] = []
    diffs: list[tuple[str, str | None, str]] = []
    for p in prepared:
        if isinstance(p.change, Delete):
            fs.gate.dispatch(DeletedEvent(owner=fs.owner, key=p.key, path=p.shown))
            files.append(ChangedFile(path=p.shown, action="delete"))
            diffs.append((p.shown, p.before, ""))
            continue
        files.append(_written(fs, p, diffs))
    return ChangeOutcome(files=files).with_diffs(diffs)


def _written(fs: Core, p: _Prepared, diffs: list[tuple[str, str | None, str]]
             ) -> ChangedFile:
    """Record a file the change created, updated or moved (its diff into ``diffs``)."""
    written = p.steps[0]
    version = written.version
    assert version is not None
    key, shown = (p.dst, p.dst_shown) if p.dst is not None else (p.key, p.shown)
    assert key is not None and shown is not None
    new_view = p.after.view if p.after is not None else None
    if p.after is not None:
        # The bytes, not only the text: a later conflict's diff starts from them.
        kept = written.data if written.data is not None else p.after.view
        fs.docs.put(key, version, p.after.format, kept)
    operation: Literal["create", "edit", "move"] = (
        "create" if isinstance(p.change, Create) else "move" if p.dst is not None else "edit"
    )
    # An update in place replaced the version its step was conditional on (the one the
    # agent observed): undo writes that back. A create or a move's destination replaced
    # nothing.
    pre = written.precondition
    replaced = pre.version if operation == "edit" and isinstance(pre, IfMatch) else None
    if operation != "move":  # a moved file's bytes are its source's author's
        fs.authors.note(key, version, fs.owner)
    event = WrittenEvent(owner=fs.owner, key=key, path=shown, operation=operation,
                         version=version, created=operation != "edit", replaced=replaced)
    if new_view is not None:
        event = event.with_diff(shown, p.before, new_view)
    fs.gate.dispatch(event)
    if p.dst is not None:
        fs.gate.dispatch(DeletedEvent(owner=fs.owner, key=p.key, path=p.shown,
                                       operation="move", destination=shown))
    action: Literal["add", "update", "move"] = (
        "add" if operation == "create" else "move" if operation == "move" else "update"
    )
    if new_view is not None:
        diffs.append((shown, p.before, new_view))
    return ChangedFile(
        path=shown, action=action, source=p.shown if p.dst is not None else None,
        version=version, lines=None if p.after is None else p.after.line_count,
    )


# -- delete and move -------------------------------------------------------------------
def delete(fs: Core, path: str) -> DeleteOutcome:
    """Delete a file, only at the version this owner observed (with the policy on)."""
    check_writable(fs)
    key, shown = fs.resolve_file(path)
    fs.backend.check_writable(key)
    guard = guard_for(fs, "delete", key, shown, operation="delete")
    pre = guard.precondition
    run(fs, Plan.one("delete", FilePlan(key, shown, b"", pre, DELETE, guard.lost,
                                        fs.write_meta)))
    fs.gate.dispatch(DeletedEvent(owner=fs.owner, key=key, path=shown))
    return DeleteOutcome(path=shown, version=pre.version if isinstance(pre, IfMatch) else None)


def move(fs: Core, source: str, destination: str) -> MoveOutcome:
    """Move a file to a path that does not exist yet (see :meth:`fsseam.seam.Seam.move`)."""
    check_writable(fs)
    src, dst = fs.key(source), fs.key(destination)
    src_shown, dst_shown = display(src), display(dst)
    if not src or not dst:
        raise FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason=Reason.root_is_directory)
    if src == dst:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=src_shown, reason=Reason.move_same_path)
    fs.backend.check_writable(src)
    fs.backend.check_writable(dst)
    guard = guard_for(fs, "delete", src, src_shown, operation="move", destination=dst_shown)
    plan = FilePlan(src, src_shown, b"", guard.precondition, MOVE, guard.lost,
                    fs.write_meta)
    version = run(fs, Plan.one("move", plan, destination=(dst, dst_shown)))[0].version
    assert version is not None
    fs.gate.dispatch(WrittenEvent(owner=fs.owner, key=dst, path=dst_shown,
                                   operation="move", version=version, created=True))
    fs.gate.dispatch(DeletedEvent(owner=fs.owner, key=src, path=src_shown,
                                   operation="move", destination=dst_shown))
    return MoveOutcome(source=src_shown, destination=dst_shown, version=version)
