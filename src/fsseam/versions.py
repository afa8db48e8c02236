"""The values a store answers in: versions, the closed set of write preconditions, what
a store can do, and one listed path.

A Version is opaque to callers: equal versions mean equal content state. Which storage
minted it (``kind``) is part of its identity; ``detail`` carries extra facts a backend keeps
(the S3 VersionId, say) that do not take part in equality. An :class:`Entry` is what a
listing or a walk says of one path: the backends make them, and the gate's listing event
carries them to the plugins that hide some.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Capabilities",
    "CreateOnly",
    "Entry",
    "IfMatch",
    "Overwrite",
    "Precondition",
    "SameChange",
    "Version",
    "same_change",
]


class Version(BaseModel):
    """The version of one exact content state of one object."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """Who minted it: ``sha256`` (local, memory, generic), ``etag`` (S3), ``generation`` (GCS)."""
    value: str
    detail: str | None = None
    """Backend-specific extra (S3 VersionId); ignored by equality."""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self.kind == other.kind and self.value == other.value

    def __hash__(self) -> int:
        return hash((self.kind, self.value))

    def __str__(self) -> str:
        return f"{self.kind}:{self.value}"

    @property
    def short(self) -> str:
        """A short form for display."""
        return f"{self.kind}:{self.value.strip(chr(34))[:12]}"


class Entry(BaseModel):
    """One child of a listed directory, or one file of a walk."""

    model_config = ConfigDict(frozen=True)
    key: str
    name: str
    kind: Literal["file", "directory", "symlink"]
    size: int | None = None
    target: str | None = None
    """For a symlink: the canonical key it points to when that lies inside the root, else
    None (outside, or dangling). Links are never followed by a listing or a walk."""


class Overwrite(BaseModel):
    """Write whatever is there (create or replace)."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["overwrite"] = "overwrite"


class CreateOnly(BaseModel):
    """Write only if no object exists at the path."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["create_only"] = "create_only"


class IfMatch(BaseModel):
    """Write only if the object exists and is still at ``version``."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["if_match"] = "if_match"
    version: Version

    def __init__(self, version: Version | None = None, /, **data: Any) -> None:
        if version is not None:
            data["version"] = version
        super().__init__(**data)


Precondition = Annotated[Overwrite | CreateOnly | IfMatch, Field(discriminator="kind")]


class Capabilities(BaseModel):
    """What a backend guarantees on the storage side."""

    model_config = ConfigDict(frozen=True)

    create_only_atomic: bool
    """CreateOnly is decided by the storage in the same request as the write."""
    if_match_atomic: bool
    """IfMatch is decided by the storage (or under an exclusive lock) with the write."""
    version_kind: str
    ranged_reads: bool = False
    """Windowed reads fetch only the bytes they need."""
    delete_if_match_atomic: bool = False
    """``delete(key, IfMatch(v))`` is decided by the storage (or under an exclusive lock)
    in the delete itself."""
    copy_create_only_atomic: bool = False
    """``copy`` decides the destination's absence in the storage's own request (otherwise:
    the bytes are read, then written create-only, which is still atomic on the write)."""
    history: bool = False
    """The store keeps older versions: ``read_version`` and ``versions`` work (for S3 and
    GCS, only where the bucket has versioning enabled)."""
    write_meta: bool = False
    """``write`` takes ``meta=WriteMeta(owner=...)`` and keeps it with the version it makes,
    so history can say which owner wrote each version. Stores without it are called
    without ``meta``."""
    note: str = ""


class SameChange(Enum):
    """What a file that may already hold a change's bytes means (:func:`same_change`)."""

    DIFFERENT = "different"
    """The file holds other bytes: the change is written, or refused, as usual."""
    HELD = "held"
    """Nothing to write and nothing lost: the file is at the version the change rests on
    (or the change rests on no read: a create, a write of a file never read)."""
    OURS = "ours"
    """The bytes are this owner's own landed write (its request resent, or its call that
    failed after it landed): the change is done."""
    THEIRS = "theirs"
    """Another writer made exactly this change since the agent's read: refused."""
    MAYBE_OURS = "maybe_ours"
    """Made since the agent's read by someone the store cannot name: refused, saying it
    may be the agent's own earlier try."""


def same_change(*, equal: bool, moved: bool, observed: bool, ours: bool | None,
                answered: bool) -> SameChange:
    """The one rule for a change whose bytes the file may already hold, on every path
    (a write or an edit before it is sent, a refused compare-and-swap, a call that failed
    without an answer, a part of a change of several files, the object stores' own
    recovery of a lost answer).

    ``equal``: the file holds exactly the bytes the change would write. ``moved``: the
    file is no longer at the version the change rests on (the agent's read). ``observed``:
    the change rests on a read (a version, or the file seen absent). ``ours``: whether this
    owner's write made the current version, where the store keeps who wrote it (a write
    id, the owner in the object's metadata); None where it cannot say. ``answered``: the
    store (or the policy) refused the change, rather than the call failing without an
    answer.

    A change someone else made is not the agent's: two agents incrementing ``count=5``
    both make ``count=6``, and the second must hear that its increment was not applied.
    Equal bytes are a success only when nothing changed since the read, when the change
    rests on no read, or when the bytes are the owner's own. A call that failed without an
    answer, on a store that cannot say who wrote, may only have met its own landed write:
    the bytes are taken as its own (the lost answer of the store, not a refusal)."""
    if not equal:
        return SameChange.DIFFERENT
    if not moved:
        return SameChange.HELD
    if ours:
        return SameChange.OURS
    if not observed:
        return SameChange.HELD
    if ours is False:
        return SameChange.THEIRS
    return SameChange.MAYBE_OURS if answered else SameChange.OURS
