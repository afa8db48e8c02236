"""What a conflict shows the agent: what changed since its read, and where its edit stands.

Pure functions over two texts (the version the agent read and the current one): a
unified diff bounded in size, and for each replacement the agent asked for, whether its
text still occurs exactly once, no longer occurs, or occurs several times. The seam turns
them into the FS_STALE message (catalogue sentences, :mod:`fsseam.messages`).

A diff shown whole tells the agent everything the current version holds beyond what it
read. After a refused edit (or undo) the seam records that the agent has observed the
current version, so its next edit goes ahead without another read: an edit replaces only
text it names exactly, so it cannot drop what the diff showed. After a refused whole-file
write, delete, move or restore it records nothing: retried as it was sent, such a call
would throw the change shown away, so the agent reads the file again first. A diff cut
short records nothing either.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .diff import unified_diff
from .edits import MAX_COUNTED_MATCHES, EditOp, Replace, count_matches
from .messages import Part, Reason, Sentence, Sentences, render

__all__ = [
    "DIFF_IS_A_READ",
    "MAX_DIFF_LINE_CHARS",
    "ChangeSummary",
    "changes_part",
    "stale_story",
    "summarize",
    "target_status",
    "unshown_part",
]

DIFF_IS_A_READ = frozenset({"edit", "undo"})
"""The refused actions after which a diff shown whole counts as a read: those whose next
call (an edit, by hand after an undo) cannot drop what the diff showed. A whole-file
``write``, ``delete``, ``move`` or ``restore`` retried as sent would."""

MAX_DIFF_LINE_CHARS = 500
"""A diff line longer than this is cut (and the diff then counts as incomplete)."""


@dataclass(frozen=True)
class ChangeSummary:
    """A diff from the version read to the current one, within a size budget."""

    diff: str
    """Hunks (``@@ -a,b +c,d @@`` and ``-``/``+``/`` `` lines), without file headers."""
    changed: int
    """Changed lines (``-`` and ``+``) in the whole diff."""
    shown: int
    """Changed lines shown whole in ``diff``."""

    @property
    def complete(self) -> bool:
        return self.shown == self.changed

    @property
    def same_text(self) -> bool:
        """The two texts are equal (only the version moved on)."""
        return self.changed == 0


# The mark after a diff line cut short: the model reads it inside the diff.
_LINE_CUT = render("_diff_line_cut")


def _is_change(line: str) -> bool:
    return line[:1] in ("-", "+")


def summarize(path: str, old: str, new: str, max_chars: int) -> ChangeSummary:
    """The diff ``old`` -> ``new`` in at most ``max_chars`` characters: whole lines, cut at a
    line boundary; an over-long line is cut and counts as not shown."""
    body = unified_diff(path, old, new).splitlines()[2:]  # no ---/+++ headers
    changed = sum(1 for line in body if _is_change(line))
    out: list[str] = []
    used = shown = 0
    for line in body:
        whole = len(line) <= MAX_DIFF_LINE_CHARS
        text = line if whole else line[:MAX_DIFF_LINE_CHARS] + _LINE_CUT
        if used + len(text) + 1 > max_chars:
            break
        out.append(text)
        used += len(text) + 1
        if whole and _is_change(line):
            shown += 1
    return ChangeSummary(diff="\n".join(out), changed=changed, shown=shown)


def target_status(view: str, ops: Sequence[EditOp]) -> Sentences:
    """Where each replacement's text stands in the current version ``view``: one sentence
    per ``Replace`` (inserts name a line, which the diff already places)."""
    replaces = [(i, op) for i, op in enumerate(ops, start=1) if isinstance(op, Replace)]
    parts: list[Sentence] = []
    for index, op in replaces:
        which = " " + render("_which_edit", details={"index": index}) if len(ops) > 1 else ""
        count = count_matches(view, op.old.replace("\r\n", "\n"), MAX_COUNTED_MATCHES + 1)
        if count == 0:
            parts.append(Sentence(Reason.target_gone, {"which": which}))
        elif count == 1:
            parts.append(Sentence(Reason.target_unique, {"which": which}))
        else:
            many = count > MAX_COUNTED_MATCHES
            parts.append(Sentence(Reason.target_ambiguous, {
                "which": which, "count": MAX_COUNTED_MATCHES if many else count,
                "times": Part("_times_over" if many else "_times")}))
    return Sentences(parts)


def changes_part(summary: ChangeSummary, status: Sentences, *, undo: bool = False,
                 action: str = "edit") -> Sentence:
    """The tail of an FS_STALE message: the diff and what the agent can do next (for a
    refused undo, ``undo``: the diff starts at the version the agent's change made). The
    advice is the one story (:func:`stale_story`): after an edit shown whole (a read, see
    :data:`DIFF_IS_A_READ`) the edit is retried as it is when its targets each still occur
    once, else fitted to the change; shown in part, the file is read again first."""
    since = Sentence(Reason.since_yours if undo else Reason.since_read)
    advice = _advice(summary.complete, status, undo=undo, action=action)
    if summary.same_text:
        if action in DIFF_IS_A_READ and not undo:
            # Nothing to fit the edit to: the text it was made against is the text now.
            advice = Sentence(Reason.advice_retry)
        return Sentence(Reason.changes_none, {"since": since, "status": status, "advice": advice})
    if summary.complete:
        return Sentence(Reason.changes_complete, {"since": since, "diff": summary.diff,
                                         "status": status, "advice": advice})
    return Sentence(Reason.changes_partial, {"since": since, "diff": summary.diff, "status": status,
                                    "shown": summary.shown, "advice": advice,
                                    "more": summary.changed - summary.shown})


def unshown_part(why: Reason, *, undo: bool = False, action: str = "edit") -> Sentence:
    """The tail of an FS_STALE message when no diff can be made: ``why`` (a catalogue
    sentence: the store keeps no older versions, no longer keeps that one, could not give
    it back, or one side is not text), then what to do next, as after a diff shown in part
    (the file is read again first)."""
    since = Sentence(Reason.since_yours if undo else Reason.since_read)
    return Sentence(Reason.changes_unshown, {"since": since, "why": Sentence(why),
                                        "advice": _advice(False, Sentences(), undo=undo,
                                                          action=action)})


def _advice(complete: bool, status: Sentences, *, undo: bool, action: str) -> Sentence:
    if action in DIFF_IS_A_READ and not undo:
        if not complete:
            return Sentence(Reason.advice_reread_edit)
        # A diff shown whole is a read (the agent now knows the current version): the edit
        # goes again as it is when each target still occurs once, else fitted to the
        # change (no status, a patch's hunks or an insert, says nothing of the targets).
        unique = bool(status) and all(s.reason == Reason.target_unique for s in status)
        return Sentence(Reason.advice_retry if unique else Reason.advice_adjust)
    if action in ("write", "restore"):
        return Sentence(Reason.advice_reread_whole, {"action": action})
    if not complete:
        return Sentence(Reason.advice_reread_on)
    if undo:
        return Sentence(Reason.advice_by_hand)
    return Sentence(Reason.advice_reread, {"action": action})


def stale_story() -> str:
    """What FS_STALE means and what to do after it, in the words of the refusals themselves
    (the same catalogue sentences): the MCP instructions, the demo and the docs say it so."""
    return render(Reason.stale_story, details={
        "retry": Sentence(Reason.advice_retry), "adjust": Sentence(Reason.advice_adjust),
        "reread_edit": Sentence(Reason.advice_reread_edit),
        "whole": Sentence(Reason.advice_reread_whole, {"action": "write"})})
