"""The glue every store shares: what a store declares, and what the template makes of it.

A store package declares facts (:class:`StoreFacts`: its version kind, which conditions it
decides in the request, a note) and the names of its own options; the template builds the
:class:`~fsseam.versions.Capabilities`, splits ``storage_options`` between the store's
fsspec filesystem and the backend, and runs the client's coroutines on the filesystem's
event loop (:class:`SyncBridge`). None of it is written again per store.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, TypeVar

from fsspec.asyn import sync

from ...errors import FsError
from ...versions import Capabilities
from . import messages

__all__ = ["COMMON_OPTIONS", "StoreFacts", "SyncBridge", "split_options", "unusable_credentials"]

T = TypeVar("T")

COMMON_OPTIONS = ("server_side_copy", "list_page_size", "max_versions_listed")
"""Options every object-store backend reads itself (never passed to the filesystem)."""


@dataclass(frozen=True)
class StoreFacts:
    """What a store guarantees, as facts; the template turns them into Capabilities.

    The defaults are what S3, GCS and Azure all do: a store that does not decide a
    condition in the request itself says so here, and the tools then refuse to rely on it.
    """

    version_kind: str
    note: str
    create_only_atomic: bool = True
    if_match_atomic: bool = True
    delete_if_match_atomic: bool = True
    ranged_reads: bool = True
    history: bool = True

    def capabilities(self) -> Capabilities:
        # copy_create_only_atomic and write_meta are per instance: the backend sets them
        # from server_side_copy and from the client's keeps_owner.
        return Capabilities(
            create_only_atomic=self.create_only_atomic,
            if_match_atomic=self.if_match_atomic,
            version_kind=self.version_kind,
            ranged_reads=self.ranged_reads,
            delete_if_match_atomic=self.delete_if_match_atomic,
            copy_create_only_atomic=True,
            history=self.history,
            note=self.note,
        )


def split_options(
    storage_options: Mapping[str, Any], backend_options: tuple[str, ...]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(options for the store's fsspec filesystem, options for the backend itself)."""
    fs_options = dict(storage_options)
    own = {k: fs_options.pop(k) for k in backend_options if k in fs_options}
    return fs_options, own


class SyncBridge:
    """Runs a coroutine function of an async fsspec filesystem from synchronous code.

    The filesystem (s3fs, gcsfs, adlfs) owns an event loop on a thread of its own; every
    call is submitted there, which is thread-safe, so many threads may share one client.
    """

    def __init__(self, fs: Any) -> None:
        self.fs = fs

    def __call__(self, fn: Callable[..., Awaitable[T]], *args: Any, **kwargs: Any) -> T:
        result: T = sync(self.fs.loop, fn, *args, **kwargs)
        return result

    def start(self, fn: Callable[..., Coroutine[Any, Any, T]], *args: Any) -> Future[T]:
        """``fn(*args)`` started on the loop, not waited on (a client's ``start_get``)."""
        loop = self.fs.loop
        if loop is None or loop.is_closed():  # as ``sync`` refuses it: nothing would answer
            raise RuntimeError("Loop is not running")
        return asyncio.run_coroutine_threadsafe(fn(*args), loop)


def unusable_credentials(store: str, exc: BaseException, configure: str) -> FsError:
    """The error for credentials a store's filesystem refused while it was being made
    (``configure``: the catalogue clause saying what to configure)."""
    text = str(exc)
    detail = f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"
    return messages.credentials_unusable(store, detail, configure)
