"""What the GCS JSON API sends and answers, as the client needs it: versions from
generations, object resources with fsseam's metadata, a body boundary, the media type."""

from __future__ import annotations

import logging
import os
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# Import the base class, never gcsfs's default export: since gcsfs 2026.3 the default may be
# ExtendedGcsFileSystem, which probes every bucket over gRPC (a 60 s wait per bucket against
# an emulator). Only the plain JSON API is used here, so the base class is all we need.
from gcsfs.core import GCSFileSystem

from fsseam.backends.objectstore import OWNER_KEY, WRITE_ID_KEY, NoVersion
from fsseam.versions import Version

__all__ = [
    "MAX_OWNER_CHARS",
    "RESUMABLE_CHUNK",
    "RESUMABLE_THRESHOLD",
    "VERSION_KIND",
    "Media",
    "boundary_for",
    "header",
    "make_filesystem",
    "object_resource",
    "owner_of",
    "time_of",
    "version_of",
]


class _QuietRangeNotSatisfiable(logging.Filter):
    """gcsfs logs a traceback for every non-retriable HTTP error, including the 416 that a
    ranged GET of an empty object answers; the template expects that one (it then reads the
    object whole), so it is not an error worth a traceback in the user's log."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return getattr(exc, "code", None) != 416


logging.getLogger("gcsfs").addFilter(_QuietRangeNotSatisfiable())


MiB = 1 << 20
RESUMABLE_THRESHOLD = 32 * MiB
"""Objects larger than this are sent by resumable upload (several requests, 8 MiB each)
instead of one multipart request. 32 MiB keeps a single request short enough to retry
cheaply, and keeps typical agent-edited files (far smaller) on the one-request path."""
# Resumable upload chunks must be multiples of 256 KiB (GCS rule).
RESUMABLE_CHUNK = 8 * MiB
VERSION_KIND = "generation"


def version_of(generation: object) -> Version:
    if generation is None or not str(generation).isdigit():
        raise NoVersion("generation")
    return Version(kind=VERSION_KIND, value=str(generation))


def time_of(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


MAX_OWNER_CHARS = 128
"""An owner is stored cut to this many characters (GCS metadata is UTF-8 JSON; the cut
keeps an object's metadata small whatever the owner string)."""


def object_resource(
    name: str, write_id: str | None, owner: str | None = None
) -> dict[str, Any]:
    resource: dict[str, Any] = {"name": name}
    meta: dict[str, str] = {}
    if write_id is not None:
        meta[WRITE_ID_KEY] = write_id
    if owner is not None:
        meta[OWNER_KEY] = owner[:MAX_OWNER_CHARS]
    if meta:
        resource["metadata"] = meta
    return resource


def owner_of(resource: dict[str, Any]) -> str | None:
    value = (resource.get("metadata") or {}).get(OWNER_KEY)
    return value if isinstance(value, str) else None


def make_filesystem(storage_options: dict[str, Any]) -> GCSFileSystem:
    """A GCSFileSystem of our own: no instance cache (tests and users pass different
    endpoints/credentials in one process) and no listings cache (versions must be fresh)."""
    options: dict[str, Any] = {"skip_instance_cache": True, "use_listings_cache": False}
    options.update(storage_options)
    return GCSFileSystem(**options)


@dataclass(frozen=True)
class Media:
    """Bytes of one GET and the facts the same response carried about them."""

    data: bytes
    generation: str | None
    total_size: int | None
    """The object's full size (from Content-Range, or the body when not ranged)."""


def header(headers: Any, name: str) -> str | None:
    value = headers.get(name)
    return None if value is None else str(value)



def boundary_for(data: bytes) -> str:
    # gcsfs uses a fixed boundary; content containing it would be cut short. A random one
    # that provably does not occur in the data cannot be.
    while True:
        boundary = "fsseam-" + uuid.UUID(bytes=os.urandom(16)).hex
        if boundary.encode() not in data:
            return boundary
