"""What a tool is, what one call of it returns, and the one path every call takes.

A tool is typed by its arguments and its outcome (``Tool[ReadArgs, ReadOutcome]``). It talks
only to ``ctx.fs`` (the seam), never to a backend. Its text comes from pure renderers chosen
by the outcome's type (:func:`fsseam.tools.render.render`), and its error texts from the
message catalogue in the tool's own *vocabulary* (the names of its arguments).

A call returns a :class:`ToolResult`: the text the model sees beside the structured facts.
Every surface (the registry's ``ctx.tools.execute`` and native shapes, MCP, the command
line, each framework integration) runs its calls through the same pieces, each written once:

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

import base64
import functools
import json
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar, Generic, Protocol, TypeVar, cast

from pydantic import BaseModel, ConfigDict, ValidationError

from ..calling import current, scope, unaudited
from ..errors import ErrorCode, FsError
from ..messages import DEFAULT_VOCABULARY, Clause, Part, Reason, Vocabulary
from ..messages import render as say
from ..observations.calls import digest_of
from ..oserrors import map_os_error
from ..outcomes import ImageOutcome
from ..paths import escape_surrogates
from ..seam import Seam
from ..seam.calls import once
from .render import render, render_error
from .schema import parameters_schema, strict_schema

__all__ = [
    "READ_ONLY",
    "ArgsT",
    "ImageContent",
    "OutcomeT",
    "Tool",
    "ToolAnnotations",
    "ToolError",
    "ToolResult",
    "answer",
    "attempt",
    "drop_nulls",
    "facts",
    "failed",
    "offered",
    "parse_arguments",
    "perform",
    "result_form",
    "result_markdown",
    "result_of",
    "run_tool",
]

ArgsT = TypeVar("ArgsT", bound=BaseModel)
OutcomeT = TypeVar("OutcomeT", bound=BaseModel)
T = TypeVar("T")


# -- what a tool may do ----------------------------------------------------------------------
# MCP's tool annotations: hints a client uses to decide what to show, confirm or serve
# (``fsseam mcp --read-only`` serves only read-only tools). They are not in the schemas,
# which are pinned byte for byte (a provider's prompt cache keys on them).
class ToolAnnotations(BaseModel):
    """The MCP hints of one tool (``readOnlyHint``, ``destructiveHint``, ...)."""

    model_config = ConfigDict(frozen=True)

    read_only: bool
    """Never modifies the workspace."""
    destructive: bool
    """May replace or remove content (as opposed to only adding)."""
    idempotent: bool
    """Calling it again with the same arguments has no further effect."""
    open_world: bool = False
    """Reaches beyond the workspace (no fsseam tool does)."""

    def mcp(self) -> dict[str, Any]:
        """The wire shape of MCP's ``ToolAnnotations``."""
        return {
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }


READ_ONLY = ToolAnnotations(read_only=True, destructive=False, idempotent=True)


# -- the tool --------------------------------------------------------------------------------
class Tool(ABC, Generic[ArgsT, OutcomeT]):
    name: ClassVar[str]
    description: str
    args_model: ClassVar[type[BaseModel]]
    vocabulary: ClassVar[Vocabulary] = DEFAULT_VOCABULARY
    """How this tool's error texts name its arguments (see :mod:`fsseam.messages`)."""
    annotations: ClassVar[ToolAnnotations] = ToolAnnotations(
        read_only=False, destructive=True, idempotent=False
    )
    """What the tool may do; the default assumes the worst (it modifies and destroys)."""

    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments, as model APIs accept it."""
        return parameters_schema(self.args_model)

    def strict_parameters(self) -> dict[str, Any]:
        """The schema in the form OpenAI's strict mode takes (every property required,
        optional ones nullable): see :func:`fsseam.tools.schema.strict_schema`."""
        return cast(dict[str, Any], strict_schema(self.parameters()))

    def prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        """Adjust raw arguments before validation (default: none)."""
        return args

    def validate(self, args: Mapping[str, Any]) -> ArgsT:
        # A null optional argument means "not given" (strict schemas make models send every
        # argument, null for those they leave out), so the default applies.
        given = drop_nulls(self.args_model, dict(args))
        return cast(ArgsT, self.args_model.model_validate(self.prepare(given)))

    @abstractmethod
    def run(self, fs: Seam, args: ArgsT) -> OutcomeT:
        """Do the work; return the outcome or raise FsError."""

    def render(self, outcome: OutcomeT) -> str:
        """The model text of an outcome (pure); by default chosen by the outcome's type."""
        return render(outcome)

    def render_error(self, err: FsError) -> str:
        """The message of an error, in this tool's words."""
        return err.render(self.vocabulary)


ToolT = TypeVar("ToolT", bound=Tool[Any, Any])


# -- what a call returns --------------------------------------------------------------------
class ImageContent(BaseModel):
    """An image a tool result carries beside its text (a read of a PNG, JPEG, GIF or WebP
    file): surfaces that carry images hand it to the model in their own shape."""

    model_config = ConfigDict(frozen=True)
    media_type: str
    """``image/png``, ``image/jpeg``, ``image/gif`` or ``image/webp``."""
    data: bytes

    def base64(self) -> str:
        return base64.b64encode(self.data).decode("ascii")

    def data_url(self) -> str:
        return f"data:{self.media_type};base64,{self.base64()}"


class ToolError(BaseModel):
    model_config = ConfigDict(frozen=True)
    code: ErrorCode
    message: str


class ToolResult(BaseModel):
    """``text`` is exactly what the model sees; ``value`` the structured outcome."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)
    tool: str
    ok: bool
    text: str
    value: Any = None
    error: ToolError | None = None
    images: tuple[ImageContent, ...] = ()
    """Images the model sees after ``text`` (empty for every tool but an image read)."""

    def __str__(self) -> str:
        # print(res) shows what the model sees, not the pydantic fields (repr() has those).
        return self.text

    def _repr_markdown_(self) -> str:
        error = None if self.error is None else (self.error.code, self.error.message)
        # A notebook renders an image given as a data URL in markdown: a read of a PNG
        # shows the picture under its line, as the model sees it.
        shown = "".join(f"\n\n![{self.tool}]({image.data_url()})" for image in self.images)
        return result_markdown(self.tool, self.text, self.value, error) + shown


# -- a result in a notebook -----------------------------------------------------------------
# A unified diff inside a refusal's text (FS_STALE's "what changed"): from a hunk header,
# every line a hunk may hold; the first other line (a sentence, a blank line) ends it.
_HUNK_HEADER = re.compile(r"@@ -\d+(,\d+)? \+\d+(,\d+)? @@")
_HUNK_LINE = (" ", "+", "-", "\\", "@@ ")


def _fence(text: str, lang: str = "") -> str:
    ticks = "```"
    while ticks in text:
        ticks += "`"
    return f"{ticks}{lang}\n{text}\n{ticks}"


def _message_markdown(message: str) -> str:
    """A refusal's text as markdown: its sentences as they are, each diff in it fenced, so
    a notebook shows the diff's lines as lines (not run together into one paragraph)."""
    parts: list[str] = []
    prose: list[str] = []
    diff: list[str] = []
    for line in message.split("\n"):
        if diff and line.startswith(_HUNK_LINE):
            diff.append(line)
            continue
        if diff:
            parts.append(_fence("\n".join(diff), "diff"))
            diff = []
        if _HUNK_HEADER.match(line):
            if prose:
                parts.append("\n".join(prose))
                prose = []
            diff.append(line)
        else:
            prose.append(line)
    if diff:
        parts.append(_fence("\n".join(diff), "diff"))
    if prose:
        parts.append("\n".join(prose))
    return "\n\n".join(part for part in parts if part.strip())


def result_markdown(
    tool: str, text: str, value: Any, error: tuple[ErrorCode, str] | None
) -> str:
    """Markdown for one result: the model's text, and the diff of a change (of a refused
    one too: the diff in its message, fenced)."""
    if error is not None:
        code, message = error
        failed = say(Reason.display_failed, details={"tool": tool, "code": code.value})
        return f"{failed}\n\n{_message_markdown(message)}"
    parts = [say(Reason.display_ok, details={"tool": tool}), _fence(text)]
    diff = getattr(value, "diff", None)
    if diff:
        parts.append(_fence(diff.rstrip("\n"), "diff"))
    return "\n\n".join(parts)


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
            parts.append(say(Clause.arg_unexpected, details={"arg": field}))
        elif e["type"] == "missing":
            parts.append(say(Clause.arg_missing, details={"arg": field}))
        elif e["type"] == "string_too_short" and field in ("old_string", "old_str"):
            # The sentence the seam says of an empty old text, as one clause of the list.
            words = {**vocabulary, "old": field}
            parts.append(say(Reason.old_empty, vocabulary=words).removesuffix("."))
        elif e["type"] == "union_tag_invalid":
            ctx = e.get("ctx") or {}
            tag = str(ctx.get("discriminator", "command")).strip("'")
            parts.append(say(Clause.tag_invalid,
                                details={"tag": tag, "expected": ctx.get("expected_tags", "")}))
        elif e["type"] == "union_tag_not_found":
            parts.append(say(Clause.arg_missing, details={"arg": "command"}))
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
# Fields of an outcome left out of the structured facts: the file's text is in the text
# already, and a client should not get it twice.
_BULKY_FIELDS = {"lines", "snippet"}


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


def result_form(result: ToolResult) -> dict[str, Any]:
    """A result as JSON, what a step's output holds: :func:`~fsseam.tools.base.facts`
    (``ok``, ``tool``, the error, the outcome as JSON) with the text and the images."""
    out = facts(result)
    out["text"] = result.text
    if result.images:
        out["images"] = [{"media_type": i.media_type, "data": i.base64()} for i in result.images]
    return out


def result_of(form: Mapping[str, Any]) -> ToolResult:
    """The result a step's output holds (its ``value`` the outcome's JSON form)."""
    error = form.get("error")
    return ToolResult(
        tool=form["tool"], ok=bool(form["ok"]), text=form["text"], value=form.get("value"),
        error=None if error is None else ToolError(code=ErrorCode(error["code"]),
                                                   message=error["message"]),
        images=tuple(ImageContent(media_type=i["media_type"], data=base64.b64decode(i["data"]))
                     for i in form.get("images", ())),
    )


# -- the paths -------------------------------------------------------------------------------
def perform(tool: Tool[Any, Any], call: Callable[[], Any], path: str = "") -> ToolResult:
    """A surface's own form of a call of ``tool`` (an SDK's operation object, a protocol
    method with typed arguments), run through the ladder and answered as ``tool`` answers;
    ``path`` names the file for a stray storage error."""
    return answer(tool, attempt(call, action=tool.name, path=path, vocabulary=tool.vocabulary))


def run_tool(tool: Tool[Any, Any], fs: Seam, args: Mapping[str, Any] | str | None, *,
             call_id: str | None = None) -> ToolResult:
    """One call of ``tool`` on ``fs``: the arguments (a mapping or its JSON text) parsed and
    validated in the tool's words, the tool run, the outcome or refusal answered.
    ``call_id``: the surface's id of the call (see :meth:`ToolRegistry.execute`)."""
    parsed = attempt(lambda: parse_arguments(args), action=tool.name,
                     vocabulary=tool.vocabulary)
    if isinstance(parsed, FsError):
        return answer(tool, parsed)
    outer = current()
    digest = "" if call_id is None else digest_of(tool.name, parsed)
    with scope(call_id, tool.name, digest) as here:
        result = _run_tool(tool, fs, parsed)
    missing = unaudited(here, outer)
    if missing is None:
        return result
    # The change landed without its audit entry: never answered as a plain success.
    return answer(tool, FsError(ErrorCode.FS_BACKEND, reason=Reason.audit_unwritten,
                                details={"changes": missing}))


def _run_tool(tool: Tool[Any, Any], fs: Seam, parsed: dict[str, Any]) -> ToolResult:
    def body(seam: Seam) -> Any:
        return tool.run(seam, tool.validate(parsed))

    # A tool that changes files runs once per call id (a read needs no record).
    run = ((lambda: body(fs)) if tool.annotations.read_only
           else (lambda: once(fs, body)))  # type: ignore[arg-type]
    # The path from the parsed arguments: a stray storage error names the file whether
    # the surface sent a mapping or its JSON text.
    return perform(tool, run, _path_of(parsed))


def _path_of(args: object) -> str:
    """The key of the path a call named, for the message of a stray storage error."""
    if isinstance(args, Mapping):
        for field in ("file_path", "path"):
            value = args.get(field)
            if isinstance(value, str):
                return value.strip("/")
    return ""


# What the arguments were instead of an object, as JSON names it (catalogue clauses).
_JSON_KINDS = {list: Part(Clause.json_array), str: Part(Clause.json_string),
               int: Part(Clause.json_number), float: Part(Clause.json_number),
               bool: Part(Clause.json_boolean), type(None): Part(Clause.json_null)}


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


# -- arguments a strict schema sent ---------------------------------------------------------
def drop_nulls(model: type[BaseModel], args: dict[str, Any]) -> dict[str, Any]:
    """``args`` without the null values of ``model``'s optional fields (recursively into
    lists of nested models), so their defaults apply: what a strict-schema call sends for
    an argument it leaves out."""
    fields = _fields(model)
    out: dict[str, Any] = {}
    for name, value in args.items():
        field = fields.get(name)
        if field is None:
            out[name] = value
            continue
        required, inner = field
        if value is None and not required:
            continue
        if inner is not None and isinstance(value, list):
            value = [drop_nulls(inner, v) if isinstance(v, dict) else v for v in value]
        out[name] = value
    return out


@functools.lru_cache(maxsize=256)
def _fields(model: type[BaseModel]) -> dict[str, tuple[bool, type[BaseModel] | None]]:
    """Per field of ``model``: whether it is required, and the model of its list items.
    Looked up once per model, not on every tool call."""
    return {name: (f.is_required(), _item_model(f.annotation))
            for name, f in model.model_fields.items()}


def _item_model(annotation: Any) -> type[BaseModel] | None:
    for arg in getattr(annotation, "__args__", ()):
        if isinstance(arg, type) and issubclass(arg, BaseModel):
            return arg
    return None
