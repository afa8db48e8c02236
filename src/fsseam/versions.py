"""Versions and the closed set of write preconditions.

A Version is opaque to callers: equal versions mean equal content state. Which storage
minted it (``kind``) is part of its identity; ``detail`` carries extra facts a backend keeps
(the S3 VersionId, say) that do not take part in equality.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Capabilities",
    "CreateOnly",
    "IfMatch",
    "Overwrite",
    "Precondition",
    "Version",
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
