"""fsseam: safe file tools for AI agents over any fsspec filesystem.

    from fsseam import Workspace, ErrorCode
    ctx = Workspace("memory://demo").context(owner="agent-a")
    res = ctx.tools.execute("read", {"file_path": "/notes.md"})
"""

from .backends import Backend, open_backend
from .backends.base import WriteMeta
from .backends.history import History
from .errors import Conflict, ErrorCode, FsError
from .events import (
    DeletedEvent,
    DeleteIntent,
    EditIntent,
    FsEvent,
    ListEvent,
    MissingEvent,
    ReadEvent,
    StatEvent,
    UndoIntent,
    WriteIntent,
    WrittenEvent,
)
from .filesystem import GuardRefused
from .gate import hookimpl, hookspec
from .history import HistoryEntry, HistoryOutcome, RestoreOutcome
from .limits import Limits
from .observations import (
    FileObservations,
    MemoryObservations,
    ObservationStore,
    ShardedObservations,
)
from .outcomes import (
    ChangedFile,
    ChangeOutcome,
    DeleteOutcome,
    EditOutcome,
    GlobOutcome,
    GrepOutcome,
    ListEntry,
    ListOutcome,
    MoveOutcome,
    ReadOutcome,
    StatOutcome,
    WriteOutcome,
)
from .policy import Ledger, ObservationPolicy
from .seam import Seam
from .tools import (
    TOOL_SETS,
    ApplyPatchTool,
    DeleteTool,
    EditTool,
    GlobTool,
    GrepTool,
    HistoryTool,
    ImageContent,
    LsTool,
    MemoryOutcome,
    MemoryTool,
    MoveTool,
    MultiEditTool,
    ReadTool,
    RestoreTool,
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
    "TOOL_SETS",
    "ApplyPatchTool",
    "Backend",
    "Capabilities",
    "ChangeOutcome",
    "ChangedFile",
    "Conflict",
    "Context",
    "CreateOnly",
    "DeleteIntent",
    "DeleteOutcome",
    "DeleteTool",
    "DeletedEvent",
    "EditIntent",
    "EditOutcome",
    "EditTool",
    "ErrorCode",
    "FileObservations",
    "FsError",
    "FsEvent",
    "GlobOutcome",
    "GlobTool",
    "GrepOutcome",
    "GrepTool",
    "GuardRefused",
    "History",
    "HistoryEntry",
    "HistoryOutcome",
    "HistoryTool",
    "IfMatch",
    "ImageContent",
    "Ledger",
    "Limits",
    "ListEntry",
    "ListEvent",
    "ListOutcome",
    "LsTool",
    "MemoryObservations",
    "MemoryOutcome",
    "MemoryTool",
    "MissingEvent",
    "MoveOutcome",
    "MoveTool",
    "MultiEditTool",
    "ObservationPolicy",
    "ObservationStore",
    "Overwrite",
    "Precondition",
    "ReadEvent",
    "ReadOutcome",
    "ReadTool",
    "RestoreOutcome",
    "RestoreTool",
    "Seam",
    "ShardedObservations",
    "StatEvent",
    "StatOutcome",
    "StrReplaceEditor",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "UndoIntent",
    "UnknownToolError",
    "Version",
    "Workspace",
    "WriteIntent",
    "WriteMeta",
    "WriteOutcome",
    "WriteTool",
    "WrittenEvent",
    "hookimpl",
    "hookspec",
    "open_backend",
]
