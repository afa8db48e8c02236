"""fsseam: safe file tools for AI agents over any fsspec filesystem.

    from fsseam import Workspace, ErrorCode
    ctx = Workspace("memory://demo").context(owner="agent-a")
    res = ctx.tools.execute("read", {"file_path": "/notes.md"})
"""

from .backends import Backend, open_backend
from .errors import Conflict, ErrorCode, FsError
from .events import EditIntent, FsEvent, MissingEvent, ReadEvent, WriteIntent, WrittenEvent
from .gate import hookimpl, hookspec
from .outcomes import (
    EditOutcome,
    ListEntry,
    ListOutcome,
    ReadOutcome,
    StatOutcome,
    WriteOutcome,
)
from .policy import Ledger, ObservationPolicy
from .seam import Limits, Seam
from .tools import StrReplaceEditor, Tool, ToolError, ToolResult, UnknownToolError
from .versions import Capabilities, CreateOnly, IfMatch, Overwrite, Precondition, Version
from .workspace import Context, Workspace

__all__ = [
    "Backend",
    "Capabilities",
    "Conflict",
    "Context",
    "CreateOnly",
    "EditIntent",
    "EditOutcome",
    "ErrorCode",
    "FsError",
    "FsEvent",
    "IfMatch",
    "Ledger",
    "Limits",
    "ListEntry",
    "ListOutcome",
    "MissingEvent",
    "ObservationPolicy",
    "Overwrite",
    "Precondition",
    "ReadEvent",
    "ReadOutcome",
    "Seam",
    "StatOutcome",
    "StrReplaceEditor",
    "Tool",
    "ToolError",
    "ToolResult",
    "UnknownToolError",
    "Version",
    "Workspace",
    "WriteIntent",
    "WriteOutcome",
    "WrittenEvent",
    "hookimpl",
    "hookspec",
    "open_backend",
]
