"""The OpenAI Agents SDK on fsseam: an ``ApplyPatchEditor`` for the SDK's ``ApplyPatchTool``,
and fsseam's tools as strict SDK function tools, each call working as its conversation.

    from agents import Agent, Runner
    from fsseam import Workspace
    from fsseam.integrations.openai_agents import fsseam_tools

    agent = Agent(name="editor", model=model, tools=fsseam_tools(ws, model=model))
    await Runner.run(agent, text, context=conversation)  # a dict: it keeps what was read

``fsseam_tools`` gives the ``files`` tool set with ``multi_edit`` and ``apply_patch`` by
default (:data:`DEFAULT_TOOLS`); ``names="openai"`` gives the shape OpenAI's models are
trained on: ``apply_patch``, ``read``, ``ls``, ``glob``, ``grep``. ``apply_patch`` is the
hosted ``ApplyPatchTool`` with a
:class:`FsseamEditor` on a Responses model, and a function tool taking the same patches on
every other model (Chat Completions rejects hosted tools). What the agent's ``read`` has
seen, or what the application showed it in the prompt (:meth:`FsseamEditor.show`), is what
its patches may change. Each ``create_file`` / ``update_file`` / ``delete_file`` operation
is one change through fsseam's apply_patch engine (then one compare-and-swap per file); a
refused one changes nothing and answers ``status="failed"`` with fsseam's text, such as
``Error [FS_STALE]: ...``, which the SDK returns to the model in the
``apply_patch_call_output``. Function tools answer with fsseam's text, errors included
(the SDK's function outputs have no error flag).

Whose reads: without ``owner=``, each call runs as its conversation, and what it read is
kept in the SDK's own state (:mod:`fsseam.integrations.openai_agents_state`): a mapping run
context (``RunState`` strings carry it), an ``SQLiteSession``
(:func:`~fsseam.integrations.openai_agents_state.session_context`), else one owner per run.
So one tool list serves many conversations, and none sees another's reads. ``owner=`` (or
a ``Context``) is one fixed owner for every run, in the workspace's store.

Call ids: a function tool's call runs as ``ToolContext.tool_call_id`` (:mod:`fsseam.calling`),
so a replay of it after its change landed answers as it did and changes nothing. The
hosted ``ApplyPatchTool`` hands its editor no call id (an ``ApplyPatchOperation`` carries
the run's context only): its operations run without one; where replays matter, use the
function tool (``hosted=False``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

from ..messages import Reason

try:
    from agents import ApplyPatchTool, FunctionTool, Tool
    from agents.editor import ApplyPatchOperation, ApplyPatchResult
    from agents.models.interface import Model
    from agents.models.openai_responses import OpenAIResponsesModel
    from agents.tool import ToolOutputImage, ToolOutputText
    from agents.tool_context import ToolContext
except ImportError as e:  # pragma: no cover - the extra is missing
    raise ImportError(
        f"fsseam.integrations.openai_agents needs openai-agents: "
        f"pip install 'fsseam[openai-agents]' (from a clone: pip install '.[openai-agents]'): {e}"
    ) from e

from ..calling import scope
from ..changes import Create, Delete, FileChange, Update
from ..errors import ErrorCode, FsError
from ..patches import hunk_edit, parse_create_diff, parse_update_diff
from ..tools import ToolResult
from ..tools.base import perform
from ..tools.native import ApplyPatchCallTool
from ..tools.registry import expand_tool_names
from ..workspace import Context, Workspace
from ._common import context_of
from .openai_agents_state import DEFAULT_MAX_OBSERVATIONS, Conversations, session_context

__all__ = ["DEFAULT_FUNCTION_TOOLS", "DEFAULT_TOOLS", "Approval", "FsseamEditor",
           "fsseam_tools", "function_tool", "function_tools", "hosts_apply_patch",
           "session_context", "tool_output"]

DEFAULT_TOOLS = ("files", "multi_edit", "apply_patch")
"""What an agent gets by default: the ``files`` set with ``multi_edit`` and
``apply_patch``, the tools this integration has always offered (agents and scripts written
against it call them). ``names="openai"`` gives the shape OpenAI's models are trained on
(``apply_patch``, ``read`` and the finders); any set or tool names."""

Approval = bool | str | Iterable[str] | Mapping[str, bool | Callable[..., Any]]
"""``needs_approval=``: True (every tool that can change a file), tool names, or
``{name: bool or the SDK's callable}``."""

DEFAULT_FUNCTION_TOOLS = expand_tool_names(DEFAULT_TOOLS)
"""The names of the tools an agent gets by default (:data:`DEFAULT_TOOLS`)."""


class FsseamEditor:
    """The ``ApplyPatchEditor`` the SDK's ``ApplyPatchTool`` calls.

    ``source``: a ``Workspace``, a ``Context`` (one fixed owner; share it with
    :func:`function_tools`), or a URL (with ``storage_options``). ``owner``: one fixed
    owner for every run; without it each operation runs as the conversation of its run
    (``operation.ctx_wrapper``), its reads kept in the SDK's state (``max_observations``
    of them per conversation). :attr:`context` is the context of calls made outside a run
    (owner ``"agent"`` unless given). The methods are coroutines: the storage calls run in
    a worker thread, off the event loop.
    """

    def __init__(
        self,
        source: Workspace | Context | str,
        *,
        owner: str | None = None,
        storage_options: dict[str, Any] | None = None,
        max_observations: int = DEFAULT_MAX_OBSERVATIONS,
    ) -> None:
        self.context: Context = context_of(source, owner or "agent", storage_options)
        self.owner = owner if not isinstance(source, Context) else self.context.owner
        self.conversations = Conversations(self.context.workspace, max_entries=max_observations)

    def __repr__(self) -> str:
        return f"FsseamEditor({self.context.workspace.url!r}, owner={self.owner!r})"

    def context_for(self, run: Any) -> Context:
        """The context a call of the run ``run`` (a ``RunContextWrapper``; None outside a
        run) works in."""
        if self.owner is not None or run is None:
            return self.context
        return self.conversations.context(run)

    def show(self, path: str, context: Any = None) -> str:
        """The whole text of ``path`` for the application to put in a run's prompt,
        recorded as read (:meth:`fsseam.Context.show`) by the conversation of the run whose
        context is ``context`` (the mapping given to ``Runner.run``, or
        :func:`session_context`), or by the fixed owner. The model may then patch the file
        without reading it; a change made meanwhile makes the patch FS_STALE."""
        if self.owner is not None:
            return self.context.show(path)
        if context is None:
            raise TypeError("pass the run's context (a dict given to Runner.run) to show a "
                            "file to its conversation, or give the editor an owner")
        return self.context_for(_Run(context)).show(path)

    async def create_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await asyncio.to_thread(self.apply, operation)

    async def update_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await asyncio.to_thread(self.apply, operation)

    async def delete_file(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        return await asyncio.to_thread(self.apply, operation)

    def apply(self, operation: ApplyPatchOperation) -> ApplyPatchResult:
        """One operation as one change (blocking): ``completed`` with Codex's summary of the
        files changed, or ``failed`` with fsseam's error, every file left as it was. It is
        answered as the Responses API's ``apply_patch_call`` is (the same tool)."""
        # The SDK hands the editor no call id (the operation carries the run's context only).
        with scope(None, _PATCH.name):
            result = perform(_PATCH, lambda: self.context_for(operation.ctx_wrapper).fs.change(
                [_change(operation)]), operation.path)
        return ApplyPatchResult(status="completed" if result.ok else "failed",
                                output=result.text)


class _Run:
    """A run that has not started yet, seen through its context (``show``)."""

    def __init__(self, context: Any) -> None:
        self.context = context


_PATCH = ApplyPatchCallTool()
"""How an operation is answered: the text of OpenAI's native ``apply_patch`` tool."""


def _change(op: ApplyPatchOperation) -> FileChange:
    if op.type == "delete_file":
        return Delete(op.path)
    if op.diff is None:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.native_no_diff,
                      details={"operation": op.type})
    if op.type == "create_file":
        return Create(op.path, parse_create_diff(op.diff))
    hunks = parse_update_diff(op.diff) if op.diff.strip() else ()
    return Update(op.path, hunk_edit(hunks) if hunks else None, op.move_to)


# -- function tools --------------------------------------------------------------------------
# A function tool's schema is the tool's strict form (every property required, optional ones
# nullable; a null means "not given"), so the SDK sends it with ``strict: true`` to the
# Responses and Chat Completions APIs alike.


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
        # The model's id of the call: a durable run (the SDK on Temporal) replaying the
        # step hands it again, and a change that already landed is answered, not remade.
        return tool_output(context.tools.execute(name, arguments or "{}",
                                                 call_id=run.tool_call_id or None))

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


def fsseam_tools(
    source: Workspace | Context | FsseamEditor | str,
    *,
    owner: str | None = None,
    storage_options: dict[str, Any] | None = None,
    names: str | Iterable[str] | None = None,
    needs_approval: Approval = (),
    max_observations: int = DEFAULT_MAX_OBSERVATIONS,
    model: Model | str | None = None,
    hosted: bool | None = None,
) -> list[Tool]:
    """An agent's tools, one per name (``names``: tool and set names, default
    :data:`DEFAULT_TOOLS`), all on one :class:`FsseamEditor` (or the
    one given). ``apply_patch`` is the SDK's hosted ``ApplyPatchTool`` where the model runs
    it (:func:`hosts_apply_patch` of ``model``, the agent's model; ``hosted=`` decides
    instead), else a strict function tool taking the same patches, which every model runs.
    Without ``owner`` each run works as its conversation (see the module); ``owner=`` is
    one fixed owner. ``needs_approval``: True (every tool that can change a file), tool
    names, or ``{name: bool or the SDK's callable}`` (the hosted tool's gets the
    operation, a function tool's its arguments). On a read-only workspace only the tools
    that modify nothing."""
    if isinstance(source, FsseamEditor):
        if storage_options is not None or owner is not None:
            raise TypeError("owner and storage_options belong to the FsseamEditor given")
        editor = source
    else:
        editor = FsseamEditor(source, owner=owner, storage_options=storage_options,
                              max_observations=max_observations)
    offered = editor.context.tools.offered(DEFAULT_TOOLS if names is None else names)
    approve = approvals(editor.context, offered, needs_approval)
    native = hosts_apply_patch(model) if hosted is None else hosted
    return [ApplyPatchTool(editor=editor, needs_approval=approve[n])
            if n == _PATCH.name and native else function_tool(editor, n, approve[n])
            for n in offered]
