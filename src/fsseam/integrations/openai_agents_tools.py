"""fsseam's tools as the Agents SDK's function tools: strict schemas, approvals, images, and
which form of ``apply_patch`` a model can run.

A function tool's schema is the tool's strict form (every property required, optional ones
nullable; a null means "not given"), so the SDK sends it with ``strict: true`` to the
Responses and Chat Completions APIs alike. An answer is fsseam's text, errors included (the
SDK's function outputs have no error flag); a ``read`` of an image answers with the text
and the image (``ToolOutputImage``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from agents import FunctionTool
from agents.models.interface import Model
from agents.models.openai_responses import OpenAIResponsesModel
from agents.tool import ToolOutputImage, ToolOutputText
from agents.tool_context import ToolContext

from ..errors import FsError
from ..tools import ToolResult
from ..tools.run import perform
from ..tools.sets import expand_tool_names
from ..workspace import Context

__all__ = [
    "DEFAULT_TOOLS",
    "Approval",
    "Owners",
    "approvals",
    "function_tool",
    "function_tools",
    "hosts_apply_patch",
    "tool_output",
]

DEFAULT_TOOLS = "openai"
"""The tool set an agent gets by default: ``apply_patch``, ``read``, ``ls``, ``glob``,
``grep`` (the shape OpenAI's models are trained on); any set or tool names otherwise."""

Approval = bool | str | Iterable[str] | Mapping[str, bool | Callable[..., Any]]
"""``needs_approval=``: True (every tool that can change a file), tool names, or
``{name: bool or the SDK's callable}``."""


class Owners(Protocol):
    """Whose call it is (:class:`~fsseam.integrations.openai_agents.FsseamEditor`): the
    context of calls outside a run, and the context of a call of a run."""

    context: Context

    def context_for(self, run: Any) -> Context: ...


def hosts_apply_patch(model: Model | str | None) -> bool:
    """Whether ``model`` runs the SDK's hosted ``ApplyPatchTool``: an OpenAI Responses model
    (or the SDK's ``ScriptedModel``, which answers in Responses items). Any other model
    object (Chat Completions, LiteLLM, any-llm, one of your own) gets the function tool.
    A model name, or None (the run's default model), is the SDK's default provider's: a
    name with another provider's prefix (``litellm/...``) is not OpenAI's, and OpenAI's use
    Responses unless ``set_default_openai_api("chat_completions")`` was called."""
    if isinstance(model, Model):
        return isinstance(model, OpenAIResponsesModel) or _scripted(model)
    if model is not None and "/" in model and not model.startswith("openai/"):
        return False
    try:
        from agents.models._openai_shared import get_use_responses_by_default
    except ImportError:  # pragma: no cover - moved in another SDK version
        return True
    return bool(get_use_responses_by_default())


def _scripted(model: Model) -> bool:
    try:
        from agents.testing import ScriptedModel
    except ImportError:  # pragma: no cover - an SDK without its testing package
        return False
    return isinstance(model, ScriptedModel)


def approvals(context: Context, offered: Iterable[str], needs_approval: Approval
              ) -> dict[str, bool | Callable[..., Any]]:
    """``needs_approval`` for each offered tool. Names are checked against fsseam's tools
    (an unknown one raises ``UnknownToolError``); one that is not offered (a tool that
    modifies, on a read-only workspace) is left out."""
    names = tuple(offered)
    if isinstance(needs_approval, bool):
        return {n: needs_approval and not context.tools.get(n).annotations.read_only
                for n in names}
    given: Mapping[str, bool | Callable[..., Any]] = (
        needs_approval if isinstance(needs_approval, Mapping)
        else dict.fromkeys(expand_tool_names(needs_approval), True))
    for name in given:
        context.tools.get(name)
    return {n: given.get(n, False) for n in names}


def tool_output(result: ToolResult) -> Any:
    """What a function tool answers: the text, or the text and each image of the result
    (a data URL in a ``ToolOutputImage``; a Chat Completions model gets the text only)."""
    if not result.images:
        return result.text
    return [ToolOutputText(text=result.text),
            *(ToolOutputImage(image_url=image.data_url()) for image in result.images)]


def function_tool(source: Context | Owners, name: str,
                  needs_approval: bool | Callable[..., Any] = False) -> FunctionTool:
    """The fsseam tool ``name`` as a strict function tool, each call run as its owner's
    (``source``: one fixed context, or an editor's owners)."""
    shown = source if isinstance(source, Context) else source.context
    whose: Callable[[Any], Context] = (
        (lambda run: shown) if isinstance(source, Context) else source.context_for)
    tool = shown.tools.get(name)

    def execute(run: ToolContext[Any], arguments: str) -> Any:
        try:
            context = whose(run)
        except FsError as e:  # the conversation's state cannot be used: say so, run nothing
            return perform(tool, _raise(e)).text
        return tool_output(context.tools.execute(name, arguments or "{}"))

    async def invoke(run: ToolContext[Any], arguments: str) -> Any:
        return await asyncio.to_thread(execute, run, arguments)

    return FunctionTool(
        name=name,
        description=tool.description,
        params_json_schema=tool.strict_parameters(),
        on_invoke_tool=invoke,
        strict_json_schema=True,
        needs_approval=needs_approval,
    )


def _raise(error: FsError) -> Any:
    def fail() -> Any:
        raise error
    return fail


def function_tools(
    source: Context | Owners,
    names: str | Iterable[str] | None = None,
    *,
    needs_approval: Approval = (),
) -> list[FunctionTool]:
    """fsseam's tools as strict SDK function tools, ``apply_patch`` included (the same
    patch grammar as the hosted tool's, a whole ``*** Begin Patch`` envelope per call),
    so they run on every model. ``names``: tool and set names (default
    :data:`DEFAULT_TOOLS`); on a read-only workspace only those that modify nothing. Pass
    the editor so reads and patches share its owners, or a ``Context`` for one fixed
    owner. An unknown name raises ``UnknownToolError``."""
    context = source if isinstance(source, Context) else source.context
    offered = context.tools.offered(expand_tool_names(DEFAULT_TOOLS if names is None
                                                      else names))
    approve = approvals(context, offered, needs_approval)
    return [function_tool(source, n, approve[n]) for n in offered]


