"""The one tool-run path every surface takes: the registry (``ctx.tools.execute`` and the
native shapes), MCP, the command line and each framework integration.

Three pieces, each written once:

- :func:`attempt`, the exception ladder: a call, or the :class:`~fsseam.errors.FsError` it
  ended in (a model's mistake, a storage conflict, arguments too deep to read, a path that
  is not UTF-8, a stray storage error); nothing a model can cause leaves it as an exception.
- :func:`offered`, the read-only filter: which of some tools a surface offers (on a
  read-only workspace only those that cannot modify anything).
- :func:`answer` and :func:`failed`, the result builders: the :class:`ToolResult` of an
  outcome or a refusal, with the text the model sees; :func:`facts`, its structured form.

:func:`run_tool` is the path of a tool call (arguments parsed, validated, run, answered);
:func:`perform` runs a surface's own call (an SDK's operation object, a protocol method) and
answers it as a tool would.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, TypeVar

from pydantic import ValidationError

from ..errors import ErrorCode, FsError
from ..messages import DEFAULT_VOCABULARY, Part, Reason, Vocabulary, render
from ..oserrors import map_os_error
from ..outcomes import ImageOutcome
from ..paths import escape_surrogates
from ..seam import Seam
from .base import Tool
from .render import render_error
from .result import ImageContent, ToolError, ToolResult

__all__ = [
    "answer",
    "attempt",
    "facts",
    "failed",
    "offered",
    "parse_arguments",
    "perform",
    "run_tool",
]

T = TypeVar("T")
ToolT = TypeVar("ToolT", bound=Tool[Any, Any])

# Fields of an outcome left out of the structured facts: the file's text is in the text
# already, and a client should not get it twice.
_BULKY_FIELDS = {"lines", "snippet"}


# -- the exception ladder --------------------------------------------------------------------
def attempt(
    call: Callable[[], T],
    *,
    action: str,
    path: str = "",
    vocabulary: Vocabulary = DEFAULT_VOCABULARY,
) -> T | FsError:
    """``call()``, or the FsError it ended in, in the words of a tool named ``action``.

    Seam calls raise FsError for everything a model or a store can get wrong. The rest is
    turned into one here: arguments nested past the interpreter's depth, arguments the tool's
    model refuses (``vocabulary`` names them), a raw byte in a path (``\\xff``, as local
    listings show names that are not UTF-8) sent to a storage whose names are UTF-8, and a
    stray OSError, mapped as backends map theirs (``path`` names the file), so that none
    ever leaves a tool call.
    """
    try:
        return call()
    except FsError as e:
        return e
    except RecursionError:
        return FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.arguments_too_deep)
    except ValidationError as e:
        return FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.invalid_arguments,
            details={"tool": action, "problems": _describe(e, vocabulary)},
        )
    except UnicodeError:
        return FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.path_not_utf8,
                       details={"tool": action})
    except OSError as stray:
        return map_os_error(stray, path.strip("/"), action)


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
            parts.append(render(Reason.old_empty, vocabulary=words).removesuffix("."))
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


# -- the read-only filter --------------------------------------------------------------------
class _Surface(Protocol):
    """Where tools are offered: a Workspace or a seam (``ctx.fs``); both say ``read_only``."""

    @property
    def read_only(self) -> bool: ...


def offered(where: _Surface, tools: Iterable[ToolT]) -> list[ToolT]:
    """The tools a surface offers, in their order: on a read-only workspace only those whose
    annotations say they modify nothing, as a model offered a tool that can only fail would
    call it and fail."""
    return [t for t in tools if t.annotations.read_only or not where.read_only]


# -- the result builders ---------------------------------------------------------------------
def _safe(text: str) -> str:
    """``text`` as every surface can carry it: lone surrogates (never valid in JSON or
    UTF-8) escaped as paths escape them. Paths are escaped already; this is the net."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return escape_surrogates(text)
    return text


def failed(tool: str, error: FsError, message: str | None = None) -> ToolResult:
    """The result of a refused call of ``tool``: ``message`` (default: the error's own, in
    the file tools' words) after the code, ``Error [CODE]: message``."""
    said = _safe(error.message if message is None else message)
    return ToolResult(tool=tool, ok=False, text=render_error(error.code, said),
                      error=ToolError(code=error.code, message=said))


def answer(tool: Tool[Any, Any], outcome: Any) -> ToolResult:
    """The result of one call of ``tool``: its outcome rendered, or (an FsError) the refusal
    in the tool's words."""
    if isinstance(outcome, FsError):
        return failed(tool.name, outcome, tool.render_error(outcome))
    images: tuple[ImageContent, ...] = ()
    if isinstance(outcome, ImageOutcome):
        images = (ImageContent(media_type=outcome.media_type, data=outcome.data),)
    return ToolResult(tool=tool.name, ok=True, text=_safe(tool.render(outcome)), value=outcome,
                      images=images)


def facts(result: ToolResult) -> dict[str, Any]:
    """The structured form of a result, for surfaces that carry one beside the text: ``ok``,
    ``tool``, the error's code and message, the outcome without the file's lines."""
    out: dict[str, Any] = {"ok": result.ok, "tool": result.tool}
    if result.error is not None:
        out["error"] = {"code": result.error.code.value, "message": result.error.message}
    dump = getattr(result.value, "model_dump", None)
    if callable(dump):
        out["value"] = dump(mode="json", exclude=_BULKY_FIELDS)
    return out


# -- the paths -------------------------------------------------------------------------------
def perform(tool: Tool[Any, Any], call: Callable[[], Any], path: str = "") -> ToolResult:
    """A surface's own form of a call of ``tool`` (an SDK's operation object, a protocol
    method with typed arguments), run through the ladder and answered as ``tool`` answers;
    ``path`` names the file for a stray storage error."""
    return answer(tool, attempt(call, action=tool.name, path=path, vocabulary=tool.vocabulary))


def run_tool(tool: Tool[Any, Any], fs: Seam, args: Mapping[str, Any] | str | None) -> ToolResult:
    """One call of ``tool`` on ``fs``: the arguments (a mapping or its JSON text) parsed and
    validated in the tool's words, the tool run, the outcome or refusal answered."""
    parsed = attempt(lambda: parse_arguments(args), action=tool.name,
                     vocabulary=tool.vocabulary)
    if isinstance(parsed, FsError):
        return answer(tool, parsed)
    # The path from the parsed arguments: a stray storage error names the file whether
    # the surface sent a mapping or its JSON text.
    return perform(tool, lambda: tool.run(fs, tool.validate(parsed)), _path_of(parsed))


def _path_of(args: object) -> str:
    """The key of the path a call named, for the message of a stray storage error."""
    if isinstance(args, Mapping):
        for field in ("file_path", "path"):
            value = args.get(field)
            if isinstance(value, str):
                return value.strip("/")
    return ""


# What the arguments were instead of an object, as JSON names it (catalogue clauses).
_JSON_KINDS = {list: Part("_json_array"), str: Part("_json_string"),
               int: Part("_json_number"), float: Part("_json_number"),
               bool: Part("_json_boolean"), type(None): Part("_json_null")}


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
                reason=Reason.arguments_not_json,
                details={"error": str(e)},
            ) from None
        except RecursionError:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.arguments_too_deep) from None
        args = loaded
    if not isinstance(args, Mapping):
        kind = _JSON_KINDS.get(type(args), type(args).__name__)
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.arguments_not_object, details={"kind": kind}
        )
    return dict(args)
