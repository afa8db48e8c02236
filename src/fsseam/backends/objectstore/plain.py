"""Plain objects: one request per read or conditional write, without the file probes.

A file write on an object store first makes sure no "directory" sits at the key, and a
read that misses looks whether the key is one; a store that keeps objects of its own (the
observation shards, which never share a prefix with files) needs neither, and each probe is
a request. These are bound as methods of ``ObjectStoreBackend`` (``self`` is one).
"""

from __future__ import annotations

from typing import Any

from ...errors import ErrorCode
from ...messages import Reason
from ...versions import Precondition, Version
from ..base import Blob

__all__ = ["get_plain", "put_plain"]


def get_plain(self: Any, key: str) -> Blob | None:
    """The object at ``key`` and its version (one GET), or None when there is none."""
    key = self._file_key(key, "read")
    try:
        got = self._client.get(self._keys.name(key))
    except Exception as e:
        err = self._error(e, "get", key, "read")
        if err.code is ErrorCode.FS_NOT_FOUND and err.reason != Reason.bucket_missing:
            return None
        raise err from e
    return Blob(data=got.data, version=got.version)


def put_plain(self: Any, key: str, data: bytes,
              precondition: Precondition) -> Version:
    """Store ``data`` at ``key`` iff ``precondition`` holds (one PUT)."""
    key = self._file_key(key, "write")
    version: Version = self._put(key, data, precondition, self._expected(key, precondition),
                                 "write")
    return version
