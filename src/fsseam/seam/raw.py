"""Whole files as bytes (``ctx.fs.read_bytes``), for a surface whose own API is bytes
(Pydantic AI's workspace): a read that counts as the owner's observation. The matching
write is :func:`fsseam.seam.writing.write_bytes` (``ctx.fs.write_bytes``)."""

from __future__ import annotations

from ..versions import Version
from .core import Core

__all__ = ["read_bytes"]


def read_bytes(fs: Core, path: str) -> tuple[bytes, Version]:
    """The whole file (at most the edit limit) and its version; the owner has now observed
    that version, as after a read of every line."""
    key, shown = fs.resolve_file(path)
    data, version = fs.load_bytes(key)
    fs.record_observed(key, shown, data, version)
    return data, version
