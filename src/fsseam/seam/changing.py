"""Changing several files as one: create, update, move and delete, all or nothing.

Every part is validated (its intent asked, its new bytes computed, its guard checked
against the read) before :func:`fsseam.seam.pipeline.run` commits their steps as one
plan; events and the outcome follow only once the whole change has committed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from ..changes import Create, Delete, FileChange, Update
from ..edits import check_new_text
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..events import DeletedEvent, DeleteIntent, EditIntent, WrittenEvent
from ..messages import Reason
from ..outcomes import ChangedFile, ChangeOutcome
from ..paths import display
from ..text import TextDoc, decode, encode_new
from ..versions import CreateOnly, IfMatch, Precondition
from .core import Core, encode_checked
from .pipeline import run
from .plans import Plan, Step, ask, lost_of
from .prepare import new_bytes, prepare_edit
from .stale import same_part, stale_before, stale_part

__all__ = ["change"]


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
    fs.check_writable()
    if not changes:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.change_empty)
    for c in changes:
        if isinstance(c, Create):
            check_new_text(c.content, "content")
    prepared = [_prepare(fs, c, key, dst) for c, key, dst in _resolved(fs, changes)]
    run(fs, Plan([step for p in prepared for step in p.steps], fs.write_meta()))
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
               intent: EditIntent | DeleteIntent, data: bytes | None = None,
               ) -> Callable[[Conflict], FsError]:
    """What a step of a change that lost its precondition at commit tells the agent;
    ``data``: a write's bytes, which the file may hold already (another writer's same
    change: the refusal says so)."""

    def lost(err: Conflict) -> FsError:
        fallback = fs.refusal_for(err, shown, *lost_of(intent))
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
    intent = ask(fs, "delete", key, shown, operation="delete", current=current)
    pre = intent.precondition
    stale_before(fs, pre, (raw, current), key, shown, intent, "delete")
    stale = _lost_part(fs, key, shown, pre, "delete", intent)

    def gone(err: Conflict) -> FsError:
        if err.reason == ConflictKind.missing:
            return FsError(ErrorCode.FS_NOT_FOUND, path=shown, reason=Reason.missing)
        return stale(err)

    step = Step("delete", key, shown, pre, gone, old=raw)
    return _Prepared(c, key, shown, [step], before=_text_or_none(raw))


def _prepare_create(fs: Core, c: Create, key: str, shown: str) -> _Prepared:
    ask(fs, "write", key, shown, operation="create", size=len(c.content))
    _absent(fs, key, FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown, reason=Reason.add_exists))
    data = encode_checked(lambda: encode_new(c.content, None), "content")
    fs.check_edit_size(shown, len(data))

    def exists(err: Conflict) -> FsError:
        return fs.refusal_for(err, shown, ErrorCode.FS_ALREADY_EXISTS, Reason.add_exists, None)

    step = Step("create", key, shown, CreateOnly(), exists, data=data)
    return _Prepared(c, key, shown, [step], before="", after=decode(data, shown))


def _prepare_update(fs: Core, c: Update, key: str, shown: str, dst: str | None) -> _Prepared:
    after: TextDoc | None = None
    before: str | None = None
    if c.edit is not None:
        make = c.edit
        prep = prepare_edit(fs, key, shown, "edit", lambda d: make(d, shown), _same,
                            lone=False)
        doc, current, after, edit = prep.doc, prep.current, prep.result, prep.intent
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
    move = ask(fs, "delete", key, shown, operation="move", current=current,
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
