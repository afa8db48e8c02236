"""Reading an object by ranges, pinned to one version."""

from __future__ import annotations

from . import messages
from .client import ObjectData
from .errors import Fault
from .stream import PinnedRangeStream
from .view import StoreView

__all__ = ["open_read"]


def open_read(b: StoreView, key: str, chunk_size: int) -> PinnedRangeStream:
    """A stream of ``key`` read by ranges, every range pinned to the version of the first:
    a change of the object while it is read fails the read, never mixes two versions."""
    key = b._file_key(key, "read")
    if chunk_size < 1:
        raise messages.not_positive("chunk_size")
    name = b._keys.name(key)
    try:
        first = _first_range(b, name, chunk_size)
    except Exception as e:
        raise b._missing_or_directory(e, "get", key, "read") from e
    version = first.version

    def get_range(start: int, end: int) -> bytes:
        try:
            return b._client.get(name, start=start, end=end, pin=version).data
        except Exception as e:
            if b._fault(e, "get") in (Fault.PRECONDITION, Fault.NOT_FOUND):
                raise messages.changed_while_read(key) from e
            raise b._error(e, "get", key, "read") from e

    return PinnedRangeStream(key, version, first.size, first.data, chunk_size, get_range)

def _first_range(b: StoreView, name: str, chunk_size: int) -> ObjectData:
    try:
        return b._client.get(name, start=0, end=chunk_size)
    except Exception as e:
        if b._fault(e, "get") is not Fault.BAD_RANGE:
            raise
    # Stores refuse every range of an empty object; a plain GET returns it whole.
    return b._client.get(name)
