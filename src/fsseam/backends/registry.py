"""Which backend serves a URL: entry points first, then the generic fallback.

Backend packages register ``protocol = "module:Class"`` in the entry-point group
``fsseam.backends``. A protocol with a known adapter package that is not installed fails
with the install command: falling back to the emulated generic backend would silently give
up the storage-side compare-and-swap the user chose that storage for.
"""

from __future__ import annotations

from functools import cache
from importlib.metadata import entry_points
from typing import Any

import fsspec
from fsspec.core import split_protocol

from ..errors import ErrorCode, FsError
from .base import Backend
from .generic import GenericBackend
from .local import LocalBackend
from .memory import MemoryBackend

__all__ = ["KNOWN_ADAPTERS", "backend_class", "open_backend"]

ENTRY_POINT_GROUP = "fsseam.backends"

BUILTIN: dict[str, type] = {
    "memory": MemoryBackend,
    "file": LocalBackend,
    "local": LocalBackend,
}

KNOWN_ADAPTERS: dict[str, str] = {
    "s3": "fsseam-s3",
    "s3a": "fsseam-s3",
    "gs": "fsseam-gcs",
    "gcs": "fsseam-gcs",
}


@cache
def _entry_points() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def backend_class(protocol: str) -> type:
    """The adapter class for ``protocol`` (raises FS_UNSUPPORTED with an install hint)."""
    ep = _entry_points().get(protocol)
    if ep is not None:
        try:
            cls: type = ep.load()
        except ImportError as e:
            raise FsError(
                ErrorCode.FS_UNSUPPORTED,
                f"the fsseam backend for {protocol}:// failed to import ({e}); reinstall it.",
            ) from e
        return cls
    if protocol in BUILTIN:
        return BUILTIN[protocol]
    if protocol in KNOWN_ADAPTERS:
        package = KNOWN_ADAPTERS[protocol]
        raise FsError(
            ErrorCode.FS_UNSUPPORTED,
            f"{protocol}:// needs the fsseam adapter package: pip install {package} "
            f"(or pip install 'fsseam[{package.split('-')[1]}]').",
        )
    try:
        fsspec.get_filesystem_class(protocol)
    except (ValueError, ImportError) as e:
        raise FsError(
            ErrorCode.FS_UNSUPPORTED,
            f"no fsspec filesystem is known for {protocol}:// ({e}).",
        ) from e
    return GenericBackend


def open_backend(
    url: str,
    storage_options: dict[str, Any] | None = None,
    fs: Any | None = None,
    *,
    backend: str | None = None,
) -> Backend:
    """Build the backend for ``url`` (``/abs/dir``, ``file://``, ``memory://``, ``s3://``...).

    With ``fs`` (an fsspec filesystem instance), the backend uses it instead of making one;
    its protocol picks the adapter when the URL has none. ``backend`` names the adapter
    instead of the protocol: ``"generic"`` is the emulated compare-and-swap over any fsspec
    filesystem (for a store whose dedicated adapter cannot work, such as an S3-compatible
    server without conditional writes), any other name an adapter as ``backend_class``
    finds it.
    """
    protocol, _ = split_protocol(url)
    if protocol is None:
        if fs is not None:
            p = fs.protocol
            protocol = p[0] if isinstance(p, (tuple, list)) else p
        else:
            protocol = "file"
    if backend == "generic":
        cls: type = GenericBackend
    else:
        cls = backend_class(backend or protocol)
    made: Backend = cls.from_url(url, dict(storage_options or {}), fs)  # type: ignore[attr-defined]
    return made
