"""The stored form of the content index: one object per directory prefix (a shard).

A shard holds the files whose parent directory starts with its prefix (the first two
segments of the parent: ``src/pkg`` for ``src/pkg/a/b.py``, ``""`` for a file at the
root), so a grep below ``src/`` fetches only the shards of the directories it lists. Its
bytes: a line of JSON (:class:`ShardHeader`, which carries the format version and the
prefix, checked on every read), then the base64 of the zlib-compressed entries, each the
file's name below the prefix, the version it describes, its kind and, for text, its 4-gram
bitmap (:mod:`.grams`), at most ``MAX_BODY_BYTES`` of them. Text, not raw binary,
although base64 costs a third more bytes: a tool's read of a shard then reaches the
reserve that refuses it (a binary file is turned away before, as "not text", which would
tell the agent it is a file).

Anyone who can write the index's folder can write a shard, so a shard is read as untrusted
bytes: its entries are inflated only up to ``MAX_BODY_BYTES`` (a few kilobytes of zlib can
inflate to a gigabyte), and a shard that would inflate past it is treated as damaged.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
import zlib
from dataclasses import dataclass
from enum import IntEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from .grams import Bitmap

__all__ = [
    "FORMAT",
    "MAX_BODY_BYTES",
    "IndexShard",
    "Kind",
    "ShardHeader",
    "decode",
    "encode",
    "object_name",
    "prefix_of",
]

FORMAT: Literal["fsseam-index/1"] = "fsseam-index/1"
DEPTH = 2
"""Directory segments that name a shard."""
MAX_BODY_BYTES = 16 << 20
"""The most bytes a shard's entries take uncompressed (about 32,000 text files of 2 KiB).
A shard that inflates past it is damaged (read as no shard); a directory prefix with more
entries keeps the first that fit, by name, and its other files are read by every grep."""

_ENTRY = struct.Struct(">HBBI")  # name length, version length, kind, modulus


class Kind(IntEnum):
    """What grep makes of a file's bytes (``fsseam.seam.finding.Scan``)."""

    TEXT = 0
    BINARY = 1
    NOT_UTF8 = 2


class ShardHeader(BaseModel):
    model_config = ConfigDict(frozen=True)
    format: Literal["fsseam-index/1"]
    prefix: str
    entries: int


@dataclass(frozen=True)
class IndexShard:
    """What a shard says of its files: name below the prefix -> (version, kind, bitmap;
    None for text with too many 4-grams to filter by)."""

    prefix: str
    files: dict[str, tuple[str, Kind, Bitmap | None]]


def prefix_of(key: str) -> str:
    """The shard prefix of a file key."""
    parent = key.rpartition("/")[0]
    return "/".join(parent.split("/")[:DEPTH]) if parent else ""


def object_name(prefix: str) -> str:
    """The shard's object name below the index folder (fixed length, any prefix)."""
    return hashlib.sha256(prefix.encode("utf-8", "surrogatepass")).hexdigest()[:24] + ".idx"


def encode(shard: IndexShard) -> bytes:
    """The stored form of ``shard``: its entries in name order, as many as fit in
    ``MAX_BODY_BYTES`` (the rest are left out, as files the index does not know)."""
    parts: list[bytes] = []
    size = count = 0
    for name, (version, kind, bits) in sorted(shard.files.items()):
        raw_name = name.encode("utf-8", "surrogatepass")
        raw_version = version.encode("utf-8")
        modulus, value = bits if bits is not None else (0, 0)
        entry = [_ENTRY.pack(len(raw_name), len(raw_version), kind, modulus), raw_name,
                 raw_version]
        if modulus:
            entry.append(value.to_bytes((modulus + 7) // 8, "big"))
        grown = size + sum(map(len, entry))
        if grown > MAX_BODY_BYTES:
            break
        parts += entry
        size, count = grown, count + 1
    header = ShardHeader(format=FORMAT, prefix=shard.prefix, entries=count)
    head = header.model_dump_json().encode()
    return head + b"\n" + base64.b64encode(zlib.compress(b"".join(parts), 1))


def decode(data: bytes, prefix: str) -> IndexShard | None:
    """The shard in ``data``; None when it is not one of this format for ``prefix`` (an
    older format, another prefix, damaged bytes, entries over ``MAX_BODY_BYTES``): the index
    then starts it afresh."""
    try:
        head, _, rest = data.partition(b"\n")
        header = ShardHeader.model_validate_json(head)
        if header.prefix != prefix:
            return None
        if len(rest) > 2 * MAX_BODY_BYTES:  # more than any shard this module writes
            return None
        body = _inflate(base64.b64decode(rest, validate=True))
        if body is None:
            return None
        files: dict[str, tuple[str, Kind, Bitmap | None]] = {}
        at = 0
        for _ in range(header.entries):
            n_name, n_version, kind, modulus = _ENTRY.unpack_from(body, at)
            at += _ENTRY.size
            name = body[at:at + n_name].decode("utf-8", "surrogatepass")
            at += n_name
            version = body[at:at + n_version].decode("utf-8")
            at += n_version
            bits: Bitmap | None = None
            if modulus:
                size = (modulus + 7) // 8
                bits = (modulus, int.from_bytes(body[at:at + size], "big"))
                at += size
            files[name] = (version, Kind(kind), bits)
    except (ValidationError, ValueError, struct.error, zlib.error, binascii.Error):
        return None
    return IndexShard(prefix, files)


def _inflate(compressed: bytes) -> bytes | None:
    """The entries in ``compressed``; None when they would pass ``MAX_BODY_BYTES`` (inflated
    no further: the memory a shard costs is bounded by the bound, not by its writer) or
    the stream is cut short. Bytes after the stream's end are ignored, as
    ``zlib.decompress`` ignores them."""
    inflater = zlib.decompressobj()
    body = inflater.decompress(compressed, MAX_BODY_BYTES + 1)
    if len(body) > MAX_BODY_BYTES or not inflater.eof:
        return None
    return body
