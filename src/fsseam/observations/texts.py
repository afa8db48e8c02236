"""The text of the versions an owner read, kept beside a ledger file between processes.

A refused edit shows what changed since the agent's read by diffing the version it read
against the current one. One process (MCP, a framework) keeps the read version in memory;
each ``fsseam call`` is a new process, and local disk keeps no old versions, so without a
copy the CLI could only say "read it again". The copy lives in ``.FILE.texts`` beside the
ledger ``FILE`` (a name the ledger's reserved names cover, so a ledger inside a workspace
hides it too), bounded: at most :data:`MAX_TOTAL_BYTES` of file content, the most recently
used first, no file over :data:`MAX_TEXT_BYTES`, at most :data:`MAX_TEXTS` files.

It is a cache keyed by version: a version names one exact content, so a kept text is never
wrong, only missing, and a missing one costs the diff, not safety (the refusal then asks
for a read). So a file that cannot be read is started over, and two processes saving at
once may drop each other's newest entry.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from ..versions import Version

__all__ = [
    "MAX_TEXTS",
    "MAX_TEXT_BYTES",
    "MAX_TOTAL_BYTES",
    "KeptText",
    "load_texts",
    "save_texts",
    "texts_path",
]

MAX_TEXT_BYTES = 256 * 1024
"""A file larger than this is not kept (its conflicts ask for a read)."""
MAX_TOTAL_BYTES = 1024 * 1024
"""The content kept in all, newest first."""
MAX_TEXTS = 256
TEXTS_FORMAT = 1


class KeptText(BaseModel):
    """The exact bytes of ``key`` at ``version``, with the format a write keeps."""

    model_config = ConfigDict(frozen=True, extra="forbid", ser_json_bytes="base64",
                              val_json_bytes="base64")
    key: str
    version: Version
    bom: bool
    newline: str
    data: bytes


class _File(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_bytes="base64",
                              val_json_bytes="base64")
    format: int = TEXTS_FORMAT
    texts: list[KeptText] = []


def texts_path(ledger: Path) -> Path:
    """Where the texts of the ledger file ``ledger`` live."""
    return ledger.with_name(f".{ledger.name}.texts")


def load_texts(path: Path) -> list[KeptText]:
    """The texts kept at ``path``, least recently used first; none when there is no usable
    file (see the module: a cache is started over, never trusted half-read)."""
    try:
        kept = _File.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError):
        return []
    return kept.texts if kept.format == TEXTS_FORMAT else []


def save_texts(path: Path, texts: Iterable[KeptText]) -> None:
    """Keep ``texts`` (least recently used first) merged over what ``path`` holds now,
    within the bounds, atomically (a temp file in the same directory, then a rename)."""
    merged: dict[tuple[str, Version], KeptText] = {}
    for t in [*load_texts(path), *texts]:
        merged.pop((t.key, t.version), None)  # the later use counts
        merged[(t.key, t.version)] = t
    chosen: list[KeptText] = []
    total = 0
    for t in reversed(merged.values()):
        if len(t.data) > MAX_TEXT_BYTES or total + len(t.data) > MAX_TOTAL_BYTES:
            continue
        chosen.append(t)
        total += len(t.data)
        if len(chosen) == MAX_TEXTS:
            break
    body = _File(texts=chosen[::-1]).model_dump_json().encode()
    fd, tmp = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
