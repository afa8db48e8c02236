"""Model-facing tools: read, write, edit, str_replace_editor, the finders, delete and move,
history and restore."""

from .annotations import ToolAnnotations
from .base import Tool
from .editor import StrReplaceEditor
from .file_tools import EditTool, ReadTool, WriteTool
from .finders import GlobTool, GrepTool, LsTool
from .history import HistoryTool, RestoreTool
from .manage import DeleteTool, MoveTool
from .registry import ToolRegistry, UnknownToolError, default_tools
from .result import ToolError, ToolResult

__all__ = [
    "DeleteTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "HistoryTool",
    "LsTool",
    "MoveTool",
    "ReadTool",
    "RestoreTool",
    "StrReplaceEditor",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolRegistry",
    "ToolResult",
    "UnknownToolError",
    "WriteTool",
    "default_tools",
]
