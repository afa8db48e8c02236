"""fsseam: safe file tools for AI agents over any fsspec filesystem.

    from fsseam import Workspace, ErrorCode
    ctx = Workspace("memory://demo").context(owner="agent-a")
    res = ctx.tools.execute("read", {"file_path": "/notes.md"})
"""

from .backends import Backend, open_backend
from .errors import Conflict, ErrorCode, FsError
from .events import (
    EditIntent,
    FsEvent,
    ListEvent,
    MissingEvent,
    ReadEvent,
    StatEvent,
    WriteIntent,
    WrittenEvent,
)
from .gate import hookimpl, hookspec
from .limits import Limits
from .outcomes import (
    EditOutcome,
    ListEntry,
    ListOutcome,
    ReadOutcome,
    StatOutcome,
    WriteOutcome,
)
from .policy import Ledger, ObservationPolicy
from .seam import Seam
from .tools import (
    EditTool,
    ReadTool,
    StrReplaceEditor,
    Tool,
    ToolError,
    ToolRegistry,
    ToolResult,
    UnknownToolError,
    WriteTool,
)
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
    "EditTool",
    "ErrorCode",
    "FsError",
    "FsEvent",
    "IfMatch",
    "Ledger",
    "Limits",
    "ListEntry",
    "ListEvent",
    "ListOutcome",
    "MissingEvent",
    "ObservationPolicy",
    "Overwrite",
    "Precondition",
    "ReadEvent",
    "ReadOutcome",
    "ReadTool",
    "Seam",
    "StatEvent",
    "StatOutcome",
    "StrReplaceEditor",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "UnknownToolError",
    "Version",
    "Workspace",
    "WriteIntent",
    "WriteOutcome",
    "WriteTool",
    "WrittenEvent",
    "hookimpl",
    "hookspec",
    "open_backend",
]
