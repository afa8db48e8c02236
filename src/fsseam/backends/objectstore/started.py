"""Reads started now and waited on later, with no thread of the caller's in between.

A grep through the content index keeps some 64 reads in flight. Run as threads, each one
blocked in ``sync()`` on the store library's event loop, every read also costs a thread
hand-off there and back (about a third of the client's CPU per read, measured on gcsfs);
a client that offers ``start_get`` (:class:`~.client.StartsGets`) lets the read wait on
the loop itself. Bound as a method of ``ObjectStoreBackend`` (``self`` is one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from ..base import Blob
from .client import StartsGets

__all__ = ["start_read"]


def start_read(self: Any, key: str) -> Callable[[], Blob] | None:
    """``read(key)`` started now: calling the answer waits for it and returns or raises what
    ``read`` would. None where the client cannot start a read without a thread, or where
    the backend's class reads its own way (the caller then reads as it would otherwise).
    A bad key raises here, as ``read`` would."""
    client: object = self._client
    if not _starts(type(self), type(client)):
        return None
    key = self._file_key(key, "read")
    future = cast(StartsGets, client).start_get(self._keys.name(key))

    def result() -> Blob:
        try:
            got = future.result()
        except Exception as e:
            # On the caller's thread, not the loop's: telling a missing object from a
            # "directory" may take a listing request of its own.
            raise self._missing_or_directory(e, "get", key, "read") from e
        return Blob(data=got.data, version=got.version)

    return result


_STARTS: dict[tuple[type, type], bool] = {}


def _starts(backend: type, client: type) -> bool:
    """Whether reads are started: the client can, and ``read`` comes from the class that
    binds this function (a subclass that overrides ``read`` keeps every read on it). Asked
    once per pair of classes: a protocol check reads the class's attributes (about 10 us)."""
    known = _STARTS.get((backend, client))
    if known is None:
        known = issubclass(client, StartsGets) and (
            _owner(backend, "read") is _owner(backend, "start_read"))
        _STARTS[(backend, client)] = known
    return known


def _owner(cls: type, name: str) -> type | None:
    """The class in ``cls``'s method order whose own body defines ``name``."""
    return next((c for c in cls.__mro__ if name in vars(c)), None)
