"""What an owner knows of one file: the observation and the changes it may undo.

An :class:`Entry` is the unit every observation store keeps, one per (owner, key). Stores
on other machines merge concurrent updates of one owner key by key (:func:`newer`): entries
of different keys never conflict, and of two entries for one key the one recorded later
wins. Any entry an owner really recorded is safe to keep: an observation only ever lets a
write through conditional on that exact version, so a merge that keeps the older of two
can refuse an edit (the agent reads again), never lose one.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..versions import Version

__all__ = ["UNDO_DEPTH", "Change", "Entry", "newer"]

UNDO_DEPTH = 20
"""Changes kept per owner and file for undo; older ones can no longer be undone."""


class Change(BaseModel):
    """One change an owner made to a file: the version it replaced (None: it created the
    file) and the version it made."""

    model_config = ConfigDict(frozen=True)
    before: Version | None
    after: Version


class Entry(BaseModel):
    """One owner's knowledge of one key.

    ``seen``: an observation is kept (``version`` None then means the file was confirmed
    absent); False when only undo changes are left. ``at``: when it was recorded (seconds
    since the epoch, the recording process's clock): orders two updates of one key and
    decides which entries expire first. ``changes``: the owner's changes of the file,
    newest last, at most :data:`UNDO_DEPTH`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")
    seen: bool = True
    version: Version | None = None
    at: float = 0.0
    changes: tuple[Change, ...] = Field(default=())

    def same(self, other: Entry | None) -> bool:
        """Whether ``other`` says the same (the recording time aside): re-recording it
        changes nothing a store must write."""
        return (other is not None and other.seen == self.seen
                and other.version == self.version and other.changes == self.changes)


def newer(a: Entry | None, b: Entry | None) -> Entry | None:
    """The entry that wins when two updates of one key meet: the later ``at``; on a tie the
    one that sorts last (every process picks the same)."""
    if a is None or b is None:
        return a if b is None else b
    if a.at != b.at:
        return a if a.at > b.at else b
    return max(a, b, key=lambda e: e.model_dump_json())
