"""Storage adapters: the Backend base class, the built-in backends and the registry.

The built-in backend classes are imported on first use (``fsseam.backends.LocalBackend``),
not with the package: the local backend needs ``fcntl``, which some platforms lack.
"""

from typing import TYPE_CHECKING, Any

from .base import ANY_VERSION, Backend, Blob, Entry, ReadStream, Stat, VersionInfo
from .registry import KNOWN_ADAPTERS, backend_class, open_backend

if TYPE_CHECKING:
    from .generic import GenericBackend
    from .local import LocalBackend
    from .memory import MemoryBackend
    from .mounts import Mount, MountBackend

__all__ = [
    "ANY_VERSION",
    "KNOWN_ADAPTERS",
    "Backend",
    "Blob",
    "Entry",
    "GenericBackend",
    "LocalBackend",
    "MemoryBackend",
    "Mount",
    "MountBackend",
    "ReadStream",
    "Stat",
    "VersionInfo",
    "backend_class",
    "open_backend",
]

_LAZY = {
    "GenericBackend": ".generic",
    "LocalBackend": ".local",
    "MemoryBackend": ".memory",
    "Mount": ".mounts",
    "MountBackend": ".mounts",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module, __name__), name)
