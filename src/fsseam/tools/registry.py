"""ctx.tools: the tool registry of one context, and the named tool sets a surface offers."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..seam import Seam
from .base import Tool, ToolResult, failed, offered, parse_arguments, perform, run_tool
from .changes import ApplyPatchTool, MultiEditTool
from .editor import StrReplaceEditor
from .file_tools import DeleteTool, EditTool, MoveTool, ReadTool, WriteTool
from .finders import GlobTool, GrepTool, LsTool
from .history import HistoryTool, RestoreTool
from .memory import MemoryTool
from .native import (
    NATIVE_ANTHROPIC,
    ApplyPatchCallTool,
    Provider,
    definitions,
    operations,
    parse_call,
    reply,
    sole_path,
)
from .schema import Dialect, tool_schema

__all__ = [
    "TOOL_SETS",
    "ToolRegistry",
    "UnknownToolError",
    "default_tools",
    "expand_tool_names",
    "parse_arguments",
]


# -- named tool sets ------------------------------------------------------------------------
# Five tools edit a file in overlapping ways (edit, str_replace_editor, multi_edit,
# apply_patch, memory); a model offered all of them chooses worse and pays for every schema
# in its prompt. A set gives it one way to edit, in the shape it was trained on, under the
# same name on every surface.
_FINDERS = ("ls", "glob", "grep")

TOOL_SETS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "files": ("read", "write", "edit", *_FINDERS, "delete", "move", "history", "restore"),
    "anthropic": ("str_replace_editor", "memory", *_FINDERS),
    "openai": ("apply_patch", "read", *_FINDERS),
    "all": (
        "read", "write", "edit", "str_replace_editor", *_FINDERS, "delete", "move",
        "multi_edit", "apply_patch", "memory", "history", "restore",
    ),
})
"""Set name -> its tools, in the order a surface lists them. ``files``: fsseam's own file
tools (one editor: ``edit``; ``write`` for whole files); ``anthropic``: the shapes Claude is
trained on; ``openai``: the shape OpenAI's models are trained on (``apply_patch`` adds,
deletes, moves and edits); ``all``: every tool."""


def expand_tool_names(names: str | Iterable[str]) -> tuple[str, ...]:
    """Tool names from set names and tool names, mixed (a string is split at commas:
    ``"files,multi_edit"``), each once, in order. Names that are neither stay, for the
    registry to refuse with the list of tools."""
    items = names.split(",") if isinstance(names, str) else list(names)
    out: dict[str, None] = {}
    for item in (n.strip() for n in items):
        if not item:
            continue
        for name in TOOL_SETS.get(item, (item,)):
            out[name] = None
    return tuple(out)


# -- the registry ----------------------------------------------------------------------------
class UnknownToolError(LookupError):
    """No tool of that name is registered: raised by ``get`` and by ``execute(...,
    strict=True)``; a plain ``execute`` answers with an FS_INVALID_ARGUMENT result."""


def default_tools() -> list[Tool[Any, Any]]:
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        StrReplaceEditor(),
        LsTool(),
        GlobTool(),
        GrepTool(),
        DeleteTool(),
        MoveTool(),
        MultiEditTool(),
        ApplyPatchTool(),
        MemoryTool(),
        HistoryTool(),
        RestoreTool(),
    ]


class ToolRegistry:
    """``ctx.tools``: the tools of one context, run over its seam (``ctx.fs``)."""

    def __init__(self, fs: Seam, tools: list[Tool[Any, Any]] | None = None) -> None:
        self._fs = fs
        self._tools: dict[str, Tool[Any, Any]] = {}
        self._native_editor: Tool[Any, Any] | None = None
        for tool in tools if tools is not None else default_tools():
            self.register(tool)

    def register(self, tool: Tool[Any, Any]) -> None:
        """Add a tool, or replace the one of the same name (e.g. a configured editor)."""
        self._tools[tool.name] = tool

    def names(self) -> list[str]:
        return list(self._tools)

    def get(self, name: str) -> Tool[Any, Any]:
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownToolError(
                f"no tool named {name!r}; registered: {', '.join(self._tools)}"
            ) from None

    def schemas(self, dialect: Dialect = "openai") -> list[dict[str, Any]]:
        return [
            tool_schema(t.name, t.description, t.parameters(), dialect)
            for t in self._tools.values()
        ]

    def execute(
        self, name: str, args: Mapping[str, Any] | str | None = None, *, strict: bool = False,
        call_id: str | None = None,
    ) -> ToolResult:
        """Run one tool call. Never raises for model mistakes or storage conflicts.

        ``call_id``: the surface's id of this call (a durable engine's step id, MCP's
        request id, a framework's tool-call id). A call run again with the id of a call
        whose change landed (its answer was lost: the process died, the engine retried the
        step) answers as that call did and changes nothing; see docs/durable.md.

        A tool name that is not registered is a model mistake too (models invent names): the
        result is FS_INVALID_ARGUMENT listing the tools. ``strict=True`` raises
        UnknownToolError instead, for code that picks tool names itself.
        """
        tool = self._tools.get(name)
        if tool is None:
            if strict:
                self.get(name)
            return self._unknown(name)
        return run_tool(tool, self._fs, args, call_id=call_id)

    def _unknown(self, name: str) -> ToolResult:
        return failed(name, FsError(
            ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.unknown_tool,
            details={"name": name, "tools": ", ".join(self._tools)},
        ))

    def offered(self, names: Iterable[str] | None = None) -> list[str]:
        """The names of the tools a surface offers (``names``: tool names and names of
        :data:`~fsseam.tools.TOOL_SETS`, default all, in their order): on a read-only
        workspace only the tools that modify nothing. An unknown name raises
        UnknownToolError."""
        wanted = self._tools if names is None else expand_tool_names(names)
        chosen = [self.get(n) for n in wanted]
        return [t.name for t in offered(self._fs, chosen)]

    # -- native tool shapes ------------------------------------------------------------
    def native_tools(
        self,
        provider: Provider,
        names: str | Iterable[str] | None = None,
        *,
        max_characters: int | None = None,
    ) -> list[dict[str, Any]]:
        """The tool definitions to hand a provider's API, native where it has a native
        form of a registered tool: for ``"anthropic"``, ``memory`` as ``memory_20250818``
        and ``str_replace_editor`` as ``text_editor_20250728`` (named
        ``str_replace_based_edit_tool``, with ``max_characters`` when given: its views are
        then clipped there); for ``"openai"`` (the Responses API), ``apply_patch`` as the
        native ``apply_patch`` tool. Every other tool is in its JSON-schema function form.
        ``names``: a tool set or tool names, as :meth:`offered` takes them (``"anthropic"``
        for the editor, the memory tool and the finders); default every registered tool.
        :meth:`handle` routes the calls of any of them."""
        editor = self._tools.get("str_replace_editor")
        if editor is not None and max_characters is not None:
            editor = copy.copy(editor)
            editor.max_output_chars = max_characters  # type: ignore[attr-defined]
        self._native_editor = editor
        tools = self._tools if names is None else {
            n: self._tools[n] for n in self.offered(names)}
        return definitions(provider, tools, self._schema, max_characters)

    def _schema(self, tool: Tool[Any, Any], dialect: Dialect) -> dict[str, Any]:
        return tool_schema(tool.name, tool.description, tool.parameters(), dialect)

    def handle(self, call: Any) -> dict[str, Any]:
        """Run one native call and return the provider's answer item: an Anthropic
        ``tool_use`` block gives a ``tool_result`` block; an OpenAI Responses
        ``function_call`` item a ``function_call_output`` item, an ``apply_patch_call``
        item an ``apply_patch_call_output`` item. Takes dicts or the SDKs' objects."""
        parsed = parse_call(call)
        if parsed.kind == "apply_patch_call":
            return self.handle_apply_patch_calls([call])[0]
        tool = self._native_tool(parsed.name) if parsed.kind == "tool_use" else None
        if tool is None:
            tool = self._tools.get(parsed.name)
        if tool is None:
            return reply(parsed, self._unknown(parsed.name))
        return reply(parsed, run_tool(tool, self._fs, parsed.arguments))

    def _native_tool(self, name: str) -> Tool[Any, Any] | None:
        target = NATIVE_ANTHROPIC.get(name)
        if target is None:
            return None
        if target == "str_replace_editor" and self._native_editor is not None:
            return self._native_editor
        return self._tools.get(target)

    def handle_apply_patch_calls(self, calls: Any) -> list[dict[str, Any]]:
        """Apply the operations of several ``apply_patch_call`` items (a model's calls of
        one turn) as one change, all or nothing; one ``apply_patch_call_output`` per call,
        all completed or all failed, each with the same text."""
        parsed = [parse_call(c) for c in calls]
        tool = ApplyPatchCallTool()
        result = perform(tool, lambda: tool.run(self._fs, tool.validate(operations(parsed))),
                         sole_path(parsed))
        return [reply(p, result) for p in parsed]
