"""Which backend serves a URL: entry points first, then the generic fallback.

Backend packages register ``protocol = "module:Class"`` in the entry-point group
``fsseam.backends``. A protocol with a known adapter package that is not installed fails
with the install command: falling back to the emulated generic backend would silently give
up the storage-side compare-and-swap the user chose that storage for. Which packages are
known is data (``adapters.json``), not code: a new store adds a line there and nothing else
of the core.
"""

from __future__ import annotations

import json
from functools import cache
from importlib.metadata import EntryPoint, entry_points
from importlib.resources import files
from typing import Any

import fsspec
from fsspec.core import split_protocol

from ..errors import ErrorCode, FsError
from ..messages import Reason
from .base import Backend

__all__ = ["GENERIC", "KNOWN_ADAPTERS", "backend_class", "open_backend"]

ENTRY_POINT_GROUP = "fsseam.backends"

GENERIC = "fsseam.backends.generic:GenericBackend"
"""The fallback for fsspec protocols with no adapter (dotted, imported only when used)."""

def _known_adapters() -> dict[str, str]:
    """protocol -> adapter package, from the table the adapter packages keep as data
    (``adapters.json``); an unreadable table only costs the install hint."""
    try:
        table = json.loads(files(__package__).joinpath("adapters.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return {
        protocol: package
        for package, protocols in table.items()
        if not package.startswith("_")
        for protocol in protocols
    }


def source_dir(package: str) -> str:
    """Where an adapter distribution lives in the fsseam repository: ``fsseam-s3`` ->
    ``backends/s3``."""
    return f"backends/{package.removeprefix('fsseam-')}"


KNOWN_ADAPTERS: dict[str, str] = _known_adapters()
"""Protocols whose adapter lives in a package of its own: used only for the install hint
when that package is missing (the adapters themselves are found by entry point)."""


@cache
def _entry_points() -> dict[str, EntryPoint]:
    """protocol -> entry point: the single source of which class serves a protocol,
    fsseam's own built-in backends included (declared in its pyproject.toml)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def _load(target: EntryPoint | str, protocol: str) -> type:
    try:
        if isinstance(target, str):
            module, _, name = target.partition(":")
            cls: type = getattr(__import__(module, fromlist=[name]), name)
        else:
            cls = target.load()
    except ImportError as e:
        raise FsError(
            ErrorCode.FS_UNSUPPORTED,
            reason=Reason.backend_import_failed,
            details={"protocol": protocol, "error": str(e)},
        ) from e
    return cls


def backend_class(protocol: str) -> type:
    """The adapter class for ``protocol`` (raises FS_UNSUPPORTED with an install hint).

    Nothing is imported until a protocol is asked for, so ``import fsseam`` works where a
    backend's own imports (``fcntl`` for local files) do not.
    """
    ep = _entry_points().get(protocol)
    if ep is not None:
        return _load(ep, protocol)
    if protocol in KNOWN_ADAPTERS:
        package = KNOWN_ADAPTERS[protocol]
        raise FsError(
            ErrorCode.FS_UNSUPPORTED,
            reason=Reason.adapter_missing,
            details={"protocol": protocol, "package": package, "source": source_dir(package)},
        )
    try:
        fsspec.get_filesystem_class(protocol)
    except ImportError as e:
        raise FsError(
            ErrorCode.FS_UNSUPPORTED,
            reason=Reason.needs_package,
            details={"protocol": protocol, "error": str(e)},
        ) from e
    except ValueError as e:
        raise FsError(
            ErrorCode.FS_UNSUPPORTED,
            reason=Reason.unknown_protocol,
            details={"protocol": protocol, "error": str(e)},
        ) from e
    return _load(GENERIC, protocol)


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
    cls = _load(GENERIC, protocol) if backend == "generic" else backend_class(backend or protocol)
    try:
        made: Backend = cls.from_url(url, dict(storage_options or {}), fs)  # type: ignore[attr-defined]
    except FsError:
        raise
    except Exception as e:
        raise _construction_error(url, protocol, e) from e
    return made


def _construction_error(url: str, protocol: str, exc: Exception) -> FsError:
    """A filesystem that refused to be built is a misconfigured workspace: one FsError with
    the cause, never the filesystem's own exception (``zip://x`` raises IsADirectoryError,
    ``ftp://`` a TypeError about a missing host)."""
    facts = {"url": url, "protocol": protocol, "error": f"{type(exc).__name__}: {exc}"}
    if isinstance(exc, ImportError):
        return FsError(ErrorCode.FS_UNSUPPORTED, reason=Reason.needs_package, details=facts)
    if isinstance(exc, PermissionError):
        return FsError(ErrorCode.FS_PERMISSION_DENIED,
                       reason=Reason.workspace_denied, details=facts)
    return FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.workspace_refused, details=facts)
