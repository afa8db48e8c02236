"""ctx.tools: the tool registry of one context."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import ErrorCode, FsError
from ..oserrors import map_os_error
from ..paths import escape_surrogates
from ..seam import Seam
from .base import Tool
from .editor import StrReplaceEditor
from .file_tools import EditTool, ReadTool, WriteTool
from .finders import GlobTool, GrepTool, LsTool
from .history import HistoryTool, RestoreTool
from .manage import DeleteTool, MoveTool
from .render import render_error
from .result import ToolError, ToolResult
from .schema import Dialect, tool_schema

__all__ = ["ToolRegistry", "UnknownToolError", "default_tools"]


def _safe(text: str) -> str:
    """``text`` as every surface can carry it: lone surrogates (never valid in JSON or
    UTF-8) escaped as paths escape them. Paths are escaped already; this is the net."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text)
    return text


def _path_of(args: object) -> str:
    """The key of the path a call named, for the message of a stray storage error."""
    if isinstance(args, Mapping):
        for field in ("file_path", "path"):
            value = args.get(field)
            if isinstance(value, str):
                return value.strip("/")
    return ""


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
        HistoryTool(),
        RestoreTool(),
    ]


def _describe(err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = [str(x) for x in e["loc"] if not isinstance(x, int)]
        # Drop the union tag pydantic puts in front of a discriminated member's fields.
        if len(loc) > 1 and loc[0] in ("view", "create", "str_replace", "insert", "undo_edit"):
            loc = loc[1:]
        field = ".".join(loc) or "arguments"
        if e["type"] == "extra_forbidden":
            parts.append(f"unexpected argument '{field}'")
        elif e["type"] == "missing":
            parts.append(f"missing required argument '{field}'")
        elif e["type"] == "string_too_short" and field in ("old_string", "old_str"):
            parts.append(f"{field} is empty; give the exact text to replace")
        elif e["type"] == "union_tag_invalid":
            parts.append(
                "command must be one of 'view', 'create', 'str_replace', 'insert', "
                "'undo_edit'"
            )
        elif e["type"] == "union_tag_not_found":
            parts.append("missing required argument 'command'")
        else:
            msg = e["msg"].removeprefix("Value error, ")
            parts.append(f"{field}: {msg}")
    return "; ".join(parts)


class ToolRegistry:
    """``ctx.tools``: the tools of one context, run over its seam (``ctx.fs``)."""

    def __init__(self, fs: Seam, tools: list[Tool[Any, Any]] | None = None) -> None:
        self._fs = fs
        self._tools: dict[str, Tool[Any, Any]] = {}
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
        self, name: str, args: Mapping[str, Any] | str | None = None, *, strict: bool = False
    ) -> ToolResult:
        """Run one tool call. Never raises for model mistakes or storage conflicts.

        A tool name that is not registered is a model mistake too (models invent names): the
        result is FS_INVALID_ARGUMENT listing the tools. ``strict=True`` raises
        UnknownToolError instead, for code that picks tool names itself.
        """
        tool = self._tools.get(name)
        if tool is None:
            if strict:
                self.get(name)
            message = (
                f"there is no tool named {name!r}. The tools are: "
                f"{', '.join(self._tools)}. Call one of them."
            )
            return ToolResult(
                tool=name,
                ok=False,
                text=render_error(ErrorCode.FS_INVALID_ARGUMENT, message),
                error=ToolError(code=ErrorCode.FS_INVALID_ARGUMENT, message=message),
            )
        try:
            raw = self._raw(args)
            try:
                parsed = tool.validate(raw)
            except ValidationError as e:
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    reason="invalid_arguments",
                    details={"tool": name, "problems": _describe(e)},
                ) from None
            outcome = tool.run(self._fs, parsed)
        except FsError as e:
            return self._failed(tool, e)
        except RecursionError:
            return self._failed(tool, FsError(
                ErrorCode.FS_INVALID_ARGUMENT, reason="arguments_too_deep"))
        except UnicodeError:
            # A raw byte in a path (\\xff, as local listings show names that are not
            # UTF-8) sent to a storage whose names are always UTF-8.
            return self._failed(tool, FsError(
                ErrorCode.FS_INVALID_ARGUMENT, reason="path_not_utf8", details={"tool": name},
            ))
        except OSError as stray:
            # Backends map their storage errors; this is the last resort, so that no
            # OSError ever leaves a tool call.
            return self._failed(tool, map_os_error(stray, _path_of(args), name))
        return ToolResult(tool=name, ok=True, text=_safe(tool.render(outcome)), value=outcome)

    @staticmethod
    def _failed(tool: Tool[Any, Any], e: FsError) -> ToolResult:
        message = _safe(tool.render_error(e))
        return ToolResult(
            tool=tool.name,
            ok=False,
            text=render_error(e.code, message),
            error=ToolError(code=e.code, message=message),
        )

    @staticmethod
    def _raw(args: Mapping[str, Any] | str | None) -> dict[str, Any]:
        if args is None:
            return {}
        if isinstance(args, str):
            try:
                loaded = json.loads(args)
            except json.JSONDecodeError as e:
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    reason="arguments_not_json",
                    details={"error": str(e)},
                ) from None
            except RecursionError:
                raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="arguments_too_deep") from None
            args = loaded
        if not isinstance(args, Mapping):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="arguments_not_object")
        return dict(args)
