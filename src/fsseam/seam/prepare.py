"""The preparation of an edit, for a single edit and a change's part alike: one read of
the file, the gate's intent (a veto, or the policy's stale refusal), the guard checked
against the version just read, the edit made on the text, and the new bytes within the
limits. Where a single edit and a part of a change have always ended differently, the
caller says which it is (``lone``); the outcome is then a value, not another path."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..changes import judge
from ..edits import EditOp
from ..errors import Conflict, FsError
from ..events import EditIntent
from ..text import TextDoc
from ..versions import IfMatch, SameChange, Version
from .core import Core, encode_checked
from .plans import EditKind, ask, lost_of, seen_before
from .stale import stale, stale_before

__all__ = ["PreparedEdit", "new_bytes", "prepare_edit"]

R = TypeVar("R")


@dataclass
class PreparedEdit(Generic[R]):
    """An edit ready to commit: the file as read, the edit's ``result`` on it, and the
    intent whose guard the write takes; ``intent`` None: nothing is to be written, the
    file already holds what the edit made on the agent's read (``result``)."""

    doc: TextDoc
    current: Version
    result: R
    intent: EditIntent | None
    landed_over: Version | None = None
    """The edit is this owner's own, landed already over this version (the one it read):
    its request resent, or run again after its answer was lost. Nothing is written, and
    the edit is done."""


def new_bytes(fs: Core, shown: str, doc: TextDoc) -> bytes:
    """The edited text's bytes, refused when not UTF-8 or over the edit limit."""
    data = encode_checked(doc.encode, "new")
    fs.check_edit_size(shown, len(data))
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
    doc, current = fs.load_text(key)
    try:
        intent = ask(fs, "edit", key, shown, operation=operation, current=current)
    except FsError as e:
        seen = seen_before(e)
        if seen is None:
            raise
        return _refused_stale(fs, key, shown, doc, current, seen, e, make, after, lone, ops)
    pre = intent.precondition
    if lone and isinstance(pre, IfMatch) and pre.version != current:
        raise fs.refusal_for(Conflict("mismatch", path=shown), shown, *lost_of(intent))
    if isinstance(pre, IfMatch) and pre.version != current:  # the bytes only then
        stale_before(fs, pre, (doc.encode(), current), key, shown, intent, "edit")
    return PreparedEdit(doc, current, make(doc), intent)


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
    old = fs.text_or_none(key, seen)
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
