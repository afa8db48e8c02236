"""One entry of the audit trail, and the canonical JSON its hash is taken of.

An entry says who changed which file, through which call, from which version to which (as
the store names them), with the sha256 of the bytes written, and the hash of the entry
before it: the entries form a hash chain, so changing, removing or reordering one breaks
the links after it (:mod:`fsseam.audit.verify`).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["Action", "Anchor", "AuditEntry", "canonical", "entry_hash"]

Action = Literal["write", "create", "delete", "copy", "rewind", "rebase", "discard"]

FORMAT = 1
"""The entry format this version writes and reads."""


class AuditEntry(BaseModel):
    """One change, as the trail keeps it (``entries/{seq:012d}.json``)."""

    model_config = ConfigDict(frozen=True)

    format: int = FORMAT
    seq: int
    time: str
    """When the entry was made, UTC, ISO 8601 (the change landed just before)."""
    owner: str | None
    call_id: str | None
    tool: str
    """The tool (or ``ctx.fs`` operation, ``merge``, ``rewind``) that made the change; the
    backend operation when no call was running."""
    path: str
    """The file as the model sees it (``/a.txt``), or ``branch:NAME`` for a branch's ref."""
    branch: str | None
    action: Action
    source: str | None = None
    """For a copy: the file copied."""
    precondition: Literal["if_match", "create_only", "overwrite", "ref"]
    """What the change was conditional on: ``if_match`` (``version_before`` is the version
    it replaced), ``create_only`` (the file was absent), ``overwrite`` (whatever was there:
    the version before is not known)."""
    version_before: dict[str, Any] | None
    version_after: dict[str, Any] | None
    """The version the change made, as the store names it (None for a delete)."""
    sha256: str | None
    """Of the bytes written (a copy: the source's bytes); None for a delete, or a copy of
    bytes this process did not read."""
    prev: str | None
    """The hash of entry ``seq - 1`` (None for the first)."""
    hash: str = ""

    def body(self) -> dict[str, Any]:
        """Every field but ``hash``: what the hash is taken of."""
        return self.model_dump(exclude={"hash"})

    def sealed(self) -> AuditEntry:
        """This entry with its hash set."""
        return self.model_copy(update={"hash": entry_hash(self.body())})

    def to_bytes(self) -> bytes:
        return canonical(self.model_dump())


class Anchor(BaseModel):
    """The chain's head written where it cannot be rewritten (``anchors/{seq:012d}.json``)."""

    model_config = ConfigDict(frozen=True)

    seq: int
    hash: str
    time: str


def canonical(value: Any) -> bytes:
    """Canonical JSON: sorted keys, no spaces, ASCII only (one byte string per value)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True).encode("ascii")


def entry_hash(body: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(body)).hexdigest()
