"""Model-facing tools: read, write, edit, str_replace_editor."""

from .annotations import ToolAnnotations
from .base import Tool
from .editor import StrReplaceEditor
from .file_tools import EditTool, ReadTool, WriteTool
from .finders import GlobTool, GrepTool, LsTool
from .manage import DeleteTool, MoveTool
from .registry import ToolRegistry, UnknownToolError, default_tools
from .result import ToolError, ToolResult

__all__ = [
    "DeleteTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "LsTool",
    "MoveTool",
    "ReadTool",
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
