"""Changing one file: a whole-file write or create, edits (one or several as one
plan) and a write of exact bytes. Each builds a plan of one step and runs it through
:func:`~fsseam.seam.pipeline.run`; this module only reads what the plan needs and
reports what the commit did."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Literal

from ..doccache import view_of
from ..edits import EditOp, EditPlan, Insert, Replace, Span, apply, check_new_text, check_replace
from ..errors import Conflict, ErrorCode, FsError
from ..events import EditIntent, WrittenEvent
from ..messages import Reason
from ..outcomes import EditOutcome, WriteOutcome
from ..paths import display
from ..text import TextDoc, TextFormat, decode
from ..text import new_doc as new_text_doc
from ..versions import CreateOnly, IfMatch, Overwrite, Version
from .core import Core, encode_checked
from .pipeline import run
from .plans import EditKind, FilePlan, Plan, ask, lost_of
from .prepare import new_bytes, prepare_edit
from .reading import is_media
from .stale import stale

__all__ = ["edit", "write", "write_bytes"]

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
    fs.check_writable()
    key, shown = fs.resolve_file(path)
    fs.check_writable_at(key)
    intent = ask(fs, "write", key, shown, operation=operation, size=len(content))
    plan = FilePlan(key, shown, b"", intent.precondition, operation, "write", lost_of(intent),
                    fs.write_meta(), check_first="write")
    if operation == "create":
        plan.precondition = CreateOnly()
        plan.lost = (ErrorCode.FS_ALREADY_EXISTS, Reason.add_exists, None)
    fmt, old_view = _read_for_write(fs, plan)
    check_new_text(content, "content")
    # The new text as decoding its bytes would give it (no NUL: checked; UTF-8: encoded).
    new_doc = new_text_doc(content, fmt)
    plan.data = encode_checked(new_doc.encode, "content")
    fs.check_edit_size(shown, len(plan.data))
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
            raise fs.refusal_for(Conflict("missing", path=shown), shown, *plan.lost) from None
    elif isinstance(pre, Overwrite):
        try:
            plan.current = fs.load_bytes(key, record_missing=False)
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND:
                raise
            return None, None
    else:
        return None, None
    if is_media(plan.current[0]):
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
    fs.check_writable()
    check_ops(ops)
    key = fs.key(path)
    shown = display(key)
    fs.check_writable_at(key)
    operation: EditKind = (
        "edit" if len(ops) > 1 else "insert" if isinstance(ops[0], Insert) else "replace"
    )
    prep = prepare_edit(fs, key, shown, operation, lambda doc: apply(doc, ops, shown),
                        _after, lone=True, ops=ops)
    doc, current, result, intent = prep.doc, prep.current, prep.result, prep.intent
    if prep.landed_over is not None:
        return _edit_done(fs, key, shown, result, operation, ops, current, prep.landed_over)
    if intent is None or not result.changed:
        return _unchanged_edit(fs, key, shown, result, doc, current, operation, ops)
    return _commit_edit(fs, key, shown, result, intent, ops)


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


def _commit_edit(fs: Core, key: str, shown: str, result: EditPlan, intent: EditIntent,
                 ops: Sequence[EditOp]) -> EditOutcome:
    new_doc = result.after
    data = new_bytes(fs, shown, new_doc)
    pre = intent.precondition
    plan = FilePlan(key, shown, data, pre, "edit", "edit", lost_of(intent), fs.write_meta(),
                    old=result.before, ops=ops)
    done = run(fs, Plan.one("write", plan))[0]
    version = done.version
    assert version is not None
    if done.unchanged:  # the file holds these bytes at the version read: nothing written
        return _unchanged_edit(fs, key, shown, result, decode(data, shown), version,
                               intent.operation, ops)
    seen = pre.version if isinstance(pre, IfMatch) else None
    return _edit_done(fs, key, shown, result, intent.operation, ops, version, seen, data)


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
    first = result.spans[0]
    snippet, start = _snippet(new_doc, first, len(result.spans) == 1)
    outcome = EditOutcome(
        path=shown, operation=operation, replacements=result.replacements,
        replace_all=_replace_all(ops), version=version, first_line=first.first_line,
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
    fs.check_writable()
    key, shown = fs.resolve_file(path)
    fs.check_writable_at(key)
    fs.check_edit_size(shown, len(data))
    intent = ask(fs, "write", key, shown, operation="write", size=len(data))
    precondition, lost = intent.precondition, lost_of(intent)
    if base is not None:
        precondition = base
        lost = (ErrorCode.FS_STALE, Reason.stale_write if isinstance(base, IfMatch)
                else Reason.created_since_absent_write, None)
    plan = FilePlan(key, shown, data, precondition, "write", "write", lost, fs.write_meta(),
                    check_first="write", rerun_is_own=base is None)
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
