"""Storage adapters: the Backend protocol, the built-in backends and the registry."""

from .base import Backend, Blob, Entry, ReadStream, Stat, VersionInfo
from .generic import GenericBackend
from .local import LocalBackend
from .memory import MemoryBackend
from .registry import KNOWN_ADAPTERS, backend_class, open_backend

__all__ = [
    "KNOWN_ADAPTERS",
    "Backend",
    "Blob",
    "Entry",
    "GenericBackend",
    "LocalBackend",
    "MemoryBackend",
    "ReadStream",
    "Stat",
    "VersionInfo",
    "backend_class",
    "open_backend",
]
