"""Model-facing tools: read, write, edit, str_replace_editor, the finders, delete and move,
multi_edit, apply_patch, memory, history and restore."""

from .base import ImageContent, Tool, ToolAnnotations, ToolError, ToolResult
from .changes import ApplyPatchTool, MultiEditTool
from .editor import StrReplaceEditor
from .file_tools import DeleteTool, EditTool, MoveTool, ReadTool, WriteTool
from .finders import GlobTool, GrepTool, LsTool
from .history import HistoryTool, RestoreTool
from .memory import MemoryOutcome, MemoryTool
from .registry import TOOL_SETS, ToolRegistry, UnknownToolError, default_tools, expand_tool_names

__all__ = [
    "TOOL_SETS",
    "ApplyPatchTool",
    "DeleteTool",
    "EditTool",
    "GlobTool",
    "GrepTool",
    "HistoryTool",
    "ImageContent",
    "LsTool",
    "MemoryOutcome",
    "MemoryTool",
    "MoveTool",
    "MultiEditTool",
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
    "expand_tool_names",
]
