"""The providers' native tool shapes, routed to the same tools.

Anthropic's models are trained on tools the API defines itself: the memory tool
(``{"type": "memory_20250818", "name": "memory"}``) and the text editor
(``{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool",
"max_characters": N}``); their calls arrive as ``tool_use`` blocks and go back as
``tool_result`` blocks. OpenAI's Responses API has a native ``{"type": "apply_patch"}``
tool whose calls are ``apply_patch_call`` items holding one operation each
(``create_file`` / ``update_file`` with a V4A ``diff``, ``delete_file``), answered with
``apply_patch_call_output`` items (``status`` completed or failed, ``output`` text);
its other tools are ``function`` tools, called with ``function_call`` items and answered with
``function_call_output`` items.

The shapes are plain dicts (checked in the tests against the ``anthropic`` and ``openai``
packages' type definitions); nothing here imports either package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..changes import Create, Delete, FileChange, Update
from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..outcomes import ChangeOutcome
from ..patches import hunk_edit, parse_create_diff, parse_update_diff
from ..seam import Seam
from .base import Tool, ToolResult
from .changes import APPLY_PATCH_VOCABULARY, not_applied
from .render import render_change

__all__ = [
    "ANTHROPIC_EDITOR_NAME",
    "ANTHROPIC_EDITOR_TYPE",
    "ANTHROPIC_MEMORY_TYPE",
    "ApplyPatchCallTool",
    "NativeCall",
    "Provider",
    "definitions",
    "parse_call",
    "reply",
]

Provider = Literal["anthropic", "openai"]
ANTHROPIC_MEMORY_TYPE = "memory_20250818"
ANTHROPIC_EDITOR_TYPE = "text_editor_20250728"
ANTHROPIC_EDITOR_NAME = "str_replace_based_edit_tool"
OPENAI_APPLY_PATCH_TYPE = "apply_patch"

NATIVE_ANTHROPIC = {"memory": "memory", ANTHROPIC_EDITOR_NAME: "str_replace_editor"}
"""Native tool name -> the registered tool it routes to."""


def definitions(
    provider: Provider,
    tools: Mapping[str, Tool[Any, Any]],
    schema: Any,
    max_characters: int | None = None,
) -> list[dict[str, Any]]:
    """The tool list for one provider: the native definition where the provider has one
    for a registered tool, the JSON-schema function form (``schema(tool, dialect)``)
    otherwise."""
    out: list[dict[str, Any]] = []
    for name, tool in tools.items():
        if provider == "anthropic":
            if name == "memory":
                out.append({"type": ANTHROPIC_MEMORY_TYPE, "name": "memory"})
            elif name == "str_replace_editor":
                editor: dict[str, Any] = {"type": ANTHROPIC_EDITOR_TYPE,
                                          "name": ANTHROPIC_EDITOR_NAME}
                if max_characters is not None:
                    editor["max_characters"] = max_characters
                out.append(editor)
            else:
                out.append(schema(tool, "anthropic"))
        elif provider == "openai":
            if name == "apply_patch":
                out.append({"type": OPENAI_APPLY_PATCH_TYPE})
            else:
                fn = schema(tool, "json")
                out.append({"type": "function", "name": fn["name"],
                            "description": fn["description"], "parameters": fn["parameters"],
                            "strict": False})
        else:
            raise ValueError(f"unknown provider {provider!r}: use 'anthropic' or 'openai'")
    return out


@dataclass(frozen=True)
class NativeCall:
    """One call of a model, whatever its provider's shape."""

    kind: Literal["tool_use", "function_call", "apply_patch_call"]
    id: str
    name: str
    arguments: Any
    """tool_use: the input object; function_call: the arguments (JSON text);
    apply_patch_call: the operation."""


def _plain(item: Any) -> dict[str, Any]:
    """A call as a dict: SDK objects (pydantic models) are dumped."""
    dump = getattr(item, "model_dump", None)
    if callable(dump):
        item = dump(mode="json", exclude_none=True)
    if not isinstance(item, Mapping):
        raise TypeError(f"a tool call must be a mapping or an SDK object, not {type(item)!r}")
    return dict(item)


def parse_call(item: Any) -> NativeCall:
    """Read an Anthropic ``tool_use`` block, or an OpenAI Responses ``function_call`` or
    ``apply_patch_call`` item (a dict or the SDK's object). Anything else is a programmer
    error (TypeError / ValueError)."""
    d = _plain(item)
    kind = d.get("type")
    if kind == "tool_use":
        return NativeCall("tool_use", str(d["id"]), str(d["name"]), d.get("input") or {})
    if kind == "function_call":
        return NativeCall("function_call", str(d["call_id"]), str(d["name"]),
                          d.get("arguments") or "{}")
    if kind == "apply_patch_call":
        return NativeCall("apply_patch_call", str(d["call_id"]), OPENAI_APPLY_PATCH_TYPE,
                          d.get("operation"))
    raise ValueError(f"not a tool call this handler knows: type {kind!r} (expected tool_use, "
                     "function_call or apply_patch_call)")


def reply(call: NativeCall, result: ToolResult) -> dict[str, Any]:
    """The provider's answer item for one call. A result with images (a read of one) is
    answered with content blocks: the text, then each image (Anthropic: an ``image``
    block with a base64 source; OpenAI: an ``input_image`` item with a data URL)."""
    if call.kind == "tool_use":
        content: str | list[dict[str, Any]] = result.text
        if result.images:
            content = [{"type": "text", "text": result.text}, *(
                {"type": "image", "source": {"type": "base64", "media_type": i.media_type,
                                             "data": i.base64()}}
                for i in result.images)]
        return {"type": "tool_result", "tool_use_id": call.id, "content": content,
                "is_error": not result.ok}
    if call.kind == "function_call":
        output: str | list[dict[str, Any]] = result.text
        if result.images:
            output = [{"type": "input_text", "text": result.text}, *(
                {"type": "input_image", "image_url": i.data_url()} for i in result.images)]
        return {"type": "function_call_output", "call_id": call.id, "output": output}
    return {"type": "apply_patch_call_output", "call_id": call.id,
            "status": "completed" if result.ok else "failed", "output": result.text}


# -- OpenAI's apply_patch operations ---------------------------------------------------------
class _Op(BaseModel):
    model_config = ConfigDict(extra="ignore")
    path: str


class CreateFileOp(_Op):
    type: Literal["create_file"]
    diff: str


class UpdateFileOp(_Op):
    type: Literal["update_file"]
    diff: str


class DeleteFileOp(_Op):
    type: Literal["delete_file"]


PatchOperation = Annotated[CreateFileOp | UpdateFileOp | DeleteFileOp, Field(discriminator="type")]


class ApplyPatchCallArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    operations: list[PatchOperation] = Field(min_length=1)


NATIVE_PATCH_VOCABULARY = {**APPLY_PATCH_VOCABULARY, "patch": "diff"}


class ApplyPatchCallTool(Tool[ApplyPatchCallArgs, ChangeOutcome]):
    """The operations of one or more ``apply_patch_call`` items, applied as one change with
    the same engine as ``apply_patch`` (not registered: reached through
    ``ctx.tools.handle``)."""

    name = "apply_patch"
    args_model = ApplyPatchCallArgs
    vocabulary = NATIVE_PATCH_VOCABULARY
    description = "OpenAI's native apply_patch tool."
    read_only: ClassVar[bool] = False
    destructive: ClassVar[bool] = True
    idempotent: ClassVar[bool] = False

    def run(self, fs: Seam, args: ApplyPatchCallArgs) -> ChangeOutcome:
        changes: list[FileChange] = []
        for op in args.operations:
            if isinstance(op, CreateFileOp):
                changes.append(Create(op.path, parse_create_diff(op.diff)))
            elif isinstance(op, UpdateFileOp):
                changes.append(Update(op.path, hunk_edit(parse_update_diff(op.diff))))
            else:
                changes.append(Delete(op.path))
        return fs.change(changes)

    def render(self, outcome: ChangeOutcome) -> str:
        return render_change(outcome)

    def render_error(self, err: FsError) -> str:
        return not_applied(err.render(self.vocabulary), err)


def operations(calls: Sequence[NativeCall]) -> dict[str, Any]:
    """The arguments of :class:`ApplyPatchCallTool` for some ``apply_patch_call`` items."""
    ops = []
    for call in calls:
        if not isinstance(call.arguments, Mapping):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.native_no_operation)
        ops.append(dict(call.arguments))
    return {"operations": ops}


def sole_path(calls: Sequence[NativeCall]) -> str:
    """The one path some ``apply_patch_call`` items name (empty when several, or none): what
    a stray storage error of their change names, as it names the file of any one call."""
    paths = {c.arguments.get("path") for c in calls if isinstance(c.arguments, Mapping)}
    only = paths.pop() if len(paths) == 1 else None
    return only if isinstance(only, str) else ""
