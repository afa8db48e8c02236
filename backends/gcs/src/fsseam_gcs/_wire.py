"""What the GCS JSON API sends and answers, as the client needs it: versions from
generations, object resources with fsseam's metadata, a body boundary, the media type, and
a media GET's and a listing's answers as the client contract's values."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from datetime import datetime
from typing import Any

# Import the base class, never gcsfs's default export: since gcsfs 2026.3 the default may be
# ExtendedGcsFileSystem, which probes every bucket over gRPC (a 60 s wait per bucket against
# an emulator). Only the plain JSON API is used here, so the base class is all we need.
from gcsfs.core import GCSFileSystem

from fsseam.backends.objectstore import (
    OWNER_KEY,
    WRITE_ID_KEY,
    ListedObject,
    ListPage,
    NoVersion,
    ObjectData,
)
from fsseam.versions import Version

__all__ = [
    "MAX_OWNER_CHARS",
    "RESUMABLE_CHUNK",
    "RESUMABLE_THRESHOLD",
    "VERSION_KIND",
    "Media",
    "boundary_for",
    "header",
    "list_page_of",
    "make_filesystem",
    "media_of",
    "object_data_of",
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


def media_of(resp_headers: Any, body: bytes) -> Media:
    """What a media GET answered: its bytes, the generation, the object's full size."""
    data = bytes(body)
    total: int | None = len(data)
    content_range = header(resp_headers, "Content-Range")
    if content_range is not None:
        # "bytes 0-2/5"; "*" when the server does not know the size.
        tail = content_range.rsplit("/", 1)[-1]
        total = int(tail) if tail.isdigit() else None
    return Media(data, header(resp_headers, "X-Goog-Generation"), total)


def header(headers: Any, name: str) -> str | None:
    value = headers.get(name)
    return None if value is None else str(value)



def boundary_for(data: bytes) -> str:
    # gcsfs uses a fixed boundary; content containing it would be cut short. A random one
    # that provably does not occur in the data cannot be.
    while True:
        boundary = "fsseam-" + os.urandom(16).hex()
        if boundary.encode() not in data:
            return boundary


def object_data_of(media: Media) -> ObjectData:
    return ObjectData(
        data=media.data,
        version=version_of(media.generation),
        size=media.total_size if media.total_size is not None else len(media.data),
    )


def list_page_of(page: dict[str, Any]) -> ListPage:
    return ListPage(
        objects=[
            # The generation (what a read returns), never the metageneration: a metadata
            # update changes no byte.
            ListedObject(str(item["name"]), int(item.get("size", 0)),
                         version_of(item["generation"]) if item.get("generation") else None)
            for item in page.get("items", [])
        ],
        prefixes=[str(p) for p in page.get("prefixes", [])],
        next_token=page.get("nextPageToken") or None,
    )
