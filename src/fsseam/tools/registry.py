"""ctx.tools: the tool registry of one context."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from ..errors import ErrorCode, FsError
from ..messages import Vocabulary, render
from ..oserrors import map_os_error
from ..paths import escape_surrogates
from ..seam import Seam
from .base import Tool
from .changes import ApplyPatchTool, MultiEditTool
from .editor import StrReplaceEditor
from .file_tools import EditTool, ReadTool, WriteTool
from .finders import GlobTool, GrepTool, LsTool
from .history import HistoryTool, RestoreTool
from .manage import DeleteTool, MoveTool
from .memory import MemoryTool
from .native import (
    NATIVE_ANTHROPIC,
    ApplyPatchCallTool,
    Provider,
    definitions,
    operations,
    parse_call,
    reply,
)
from .render import render_error
from .result import ToolError, ToolResult
from .schema import Dialect, tool_schema

__all__ = ["ToolRegistry", "UnknownToolError", "default_tools", "parse_arguments"]


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
        MultiEditTool(),
        ApplyPatchTool(),
        MemoryTool(),
        HistoryTool(),
        RestoreTool(),
    ]


# Commands of the tools whose arguments are a union selected by ``command``.
_COMMANDS = frozenset(
    ("view", "create", "str_replace", "insert", "undo_edit", "delete", "rename")
)


def _describe(err: ValidationError, vocabulary: Vocabulary) -> str:
    """The problems of some arguments, as clauses of the catalogue (pydantic's own words for
    the checks fsseam does not word itself)."""
    parts = []
    for e in err.errors():
        loc = [str(x) for x in e["loc"] if not isinstance(x, int)]
        # Drop the union tag pydantic puts in front of a discriminated member's fields.
        if len(loc) > 1 and loc[0] in _COMMANDS:
            loc = loc[1:]
        field = ".".join(loc) or "arguments"
        if e["type"] == "extra_forbidden":
            parts.append(render("_arg_unexpected", details={"arg": field}))
        elif e["type"] == "missing":
            parts.append(render("_arg_missing", details={"arg": field}))
        elif e["type"] == "string_too_short" and field in ("old_string", "old_str"):
            # The sentence the seam says of an empty old text, as one clause of the list.
            words = {**vocabulary, "old": field}
            parts.append(render("old_empty", vocabulary=words).removesuffix("."))
        elif e["type"] == "union_tag_invalid":
            ctx = e.get("ctx") or {}
            tag = str(ctx.get("discriminator", "command")).strip("'")
            parts.append(render("_tag_invalid",
                                details={"tag": tag, "expected": ctx.get("expected_tags", "")}))
        elif e["type"] == "union_tag_not_found":
            parts.append(render("_arg_missing", details={"arg": "command"}))
        else:
            msg = e["msg"].removeprefix("Value error, ")
            parts.append(f"{field}: {msg}")
    return "; ".join(parts)


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
            message = FsError(
                ErrorCode.FS_INVALID_ARGUMENT, reason="unknown_tool",
                details={"name": name, "tools": ", ".join(self._tools)},
            ).message
            return ToolResult(
                tool=name,
                ok=False,
                text=render_error(ErrorCode.FS_INVALID_ARGUMENT, message),
                error=ToolError(code=ErrorCode.FS_INVALID_ARGUMENT, message=message),
            )
        return self._run(tool, args)

    def _run(self, tool: Tool[Any, Any], args: Mapping[str, Any] | str | None) -> ToolResult:
        name = tool.name
        try:
            raw = self._raw(args)
            try:
                parsed = tool.validate(raw)
            except ValidationError as e:
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    reason="invalid_arguments",
                    details={"tool": name, "problems": _describe(e, tool.vocabulary)},
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

    # -- native tool shapes ------------------------------------------------------------
    def native_tools(
        self, provider: Provider, *, max_characters: int | None = None
    ) -> list[dict[str, Any]]:
        """The tool definitions to hand a provider's API, native where it has a native
        form of a registered tool: for ``"anthropic"``, ``memory`` as ``memory_20250818``
        and ``str_replace_editor`` as ``text_editor_20250728`` (named
        ``str_replace_based_edit_tool``, with ``max_characters`` when given: its views are
        then clipped there); for ``"openai"`` (the Responses API), ``apply_patch`` as the
        native ``apply_patch`` tool. Every other tool is in its JSON-schema function form.
        :meth:`handle` routes the calls of any of them."""
        editor = self._tools.get("str_replace_editor")
        if editor is not None and max_characters is not None:
            editor = copy.copy(editor)
            editor.max_output_chars = max_characters  # type: ignore[attr-defined]
        self._native_editor = editor
        return definitions(provider, self._tools, self._schema, max_characters)

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
            err = FsError(ErrorCode.FS_INVALID_ARGUMENT, reason="unknown_tool",
                          details={"name": parsed.name, "tools": ", ".join(self._tools)})
            message = err.message
            result = ToolResult(tool=parsed.name, ok=False,
                                text=render_error(err.code, message),
                                error=ToolError(code=err.code, message=message))
        else:
            result = self._run(tool, parsed.arguments)
        return reply(parsed, result)

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
        try:
            args: Mapping[str, Any] = operations(parsed)
        except FsError as e:
            failed = self._failed(tool, e)
            return [reply(p, failed) for p in parsed]
        result = self._run(tool, args)
        return [reply(p, result) for p in parsed]

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
        return parse_arguments(args)


_JSON_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "a boolean", type(None): "null"}


def parse_arguments(args: Mapping[str, Any] | str | None) -> dict[str, Any]:
    """The arguments of a tool call, from a mapping or its JSON text (raises
    FS_INVALID_ARGUMENT with the catalogue's reason when they are not a JSON object)."""
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
        kind = _JSON_KINDS.get(type(args), type(args).__name__)
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT, reason="arguments_not_object", details={"kind": kind}
        )
    return dict(args)
