"""fsseam: safe file tools for AI agents over any fsspec filesystem."""

from .backends import Backend, open_backend
from .errors import Conflict, ErrorCode, FsError
from .versions import Capabilities, CreateOnly, IfMatch, Overwrite, Precondition, Version

__all__ = [
    "Backend",
    "Capabilities",
    "Conflict",
    "CreateOnly",
    "ErrorCode",
    "FsError",
    "IfMatch",
    "Overwrite",
    "Precondition",
    "Version",
    "open_backend",
]
