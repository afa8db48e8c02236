"""The MCP surface: fsseam's tools served over the Model Context Protocol.

    fsseam mcp /abs/dir                   # a stdio server, one session per process
    fsseam mcp /abs/dir --tools openai    # a named tool set (default: files)
    fsseam mcp s3://bucket/prefix -o endpoint_url=http://127.0.0.1:5000
    fsseam mcp /abs/dir --branch draft    # every change lands on branch draft only

The official ``mcp`` SDK is imported lazily, so ``import fsseam`` works without it; a
surface that needs it raises :class:`McpUnavailable` with the install hint.

What a client sees:

- ``tools/list`` returns the tools of one tool set (``tools``: names of
  :data:`~fsseam.tools.TOOL_SETS` and tool names, mixed; default ``files``), each
  exactly as ``ctx.tools.schemas("json")`` has it: name, description and the parameters
  schema as ``inputSchema`` (byte-for-byte the schemas the library pins), plus its MCP
  ``annotations`` (``readOnlyHint``, ``destructiveHint``, ``idempotentHint``,
  ``openWorldHint``). A read-only workspace serves only the tools of the set whose
  ``readOnlyHint`` is true: a client never offers the model a tool that can only fail. A
  call of any other tool is refused, naming the set served.
- ``initialize`` answers with ``instructions``: the few rules a model needs to use the
  tools well (read before modifying, what FS_STALE means and what to do after it, in the
  catalogue's words: :func:`fsseam.conflicts.stale_story`), the same for every session.
- ``tools/call`` runs ``ctx.tools.execute`` as the call ``_meta["fsseam/call_id"]``
  (:data:`CALL_ID_META`, the client's own id, stable across sessions and restarts) or,
  without one, as ``mcp:SESSION:REQUEST_ID`` (the JSON-RPC id in this session): a call
  sent again with the id of a call whose change landed answers as it did and changes
  nothing. The text content is exactly the text the
  model would see from the library. A tool error (a model mistake or a storage conflict)
  is an error *result* (``isError: true``, text ``Error [FS_...]: ...``), never a protocol
  error, so the model can read it and recover. ``structuredContent`` carries the facts
  (``ok``, ``tool``, the error code, the outcome without the file's lines).
- A branch workspace (``Workspace(url, branch=NAME)``, ``fsseam mcp URL --branch NAME``)
  is served as any other: the tools read the branch's changes over main's current files
  and change only the branch; a person reviews and merges it (``fsseam branch``).
- Each session (one ``Server.run``: a stdio connection) is its own owner for the
  observation policy, over one shared Workspace: ``owner`` for the first session,
  ``owner-2``, ``owner-3``... for later ones. Two processes on one directory or bucket are
  two owners too; the storage-side compare-and-swap keeps them from losing updates.
"""

from __future__ import annotations

import inspect
import itertools
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from .conflicts import stale_story
from .messages import Reason, render
from .tools.base import ToolResult, facts
from .tools.registry import TOOL_SETS, UnknownToolError

if TYPE_CHECKING:
    from .workspace import Context, Workspace

__all__ = [
    "CALL_ID_META",
    "DEFAULT_TOOLS",
    "INSTALL_HINT",
    "McpUnavailable",
    "ToolServer",
    "build_server",
    "require_sdk",
    "run_stdio",
    "serve_stdio",
]

INSTALL_HINT = (
    "pip install 'fsseam[mcp]' (from a clone of fsseam: pip install '.[mcp]'; the SDK alone: "
    "pip install 'mcp>=1.10')"
)

DEFAULT_TOOLS = "files"
"""The tool set an MCP server offers unless told otherwise: one way to edit (``edit``), so
the model does not choose among five overlapping editors."""


CALL_ID_META = "fsseam/call_id"
"""The key of a ``tools/call`` request's ``_meta`` holding the client's own id of the call
(a string): a client that sends the same call again (after a lost answer, a restart, from a
durable engine's retried step) with the same id gets the first run's answer and no second
change. Without it a call's id is its JSON-RPC request id, scoped to the session
(``mcp:SESSION:ID``): request ids restart with every session."""


class McpUnavailable(RuntimeError):
    """The ``mcp`` SDK is not installed (or too old)."""


def require_sdk() -> None:
    """Raise McpUnavailable with the install hint unless the MCP SDK can be imported."""
    try:
        import mcp.server.lowlevel
        import mcp.server.stdio  # noqa: F401
    except ImportError as e:
        raise McpUnavailable(
            f"the MCP server needs the official MCP SDK ({e}): {INSTALL_HINT}"
        ) from e


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fsseam")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


INSTRUCTIONS = (
    "Files of one workspace; paths are absolute, with / as the workspace root. Read a file "
    "before you write or edit it: every change is a compare-and-swap against the version "
    "you last read, so a file that changed since (another agent, a person) is refused with "
    "FS_STALE. A new file needs no read. ls, glob and grep find files; they do not count as "
    "reading them (grep in content mode does, for the files it shows). Failed calls change "
    "nothing, and each error says what to do next. " + stale_story()
)
READ_ONLY_INSTRUCTIONS = (
    "Files of one workspace, served read-only; paths are absolute, with / as the workspace "
    "root. Use read to view a file with line numbers (offset/limit page through long ones), "
    "ls to list a directory, glob to find files by name and grep to search their contents."
)


def _sets() -> str:
    """The tool sets with their tools, for the person who named one that does not exist."""
    return "; ".join(name if name == "all" else f"{name} ({', '.join(members)})"
                     for name, members in TOOL_SETS.items())


class _Session:
    """One MCP session: its own Context (owner), a lock serializing its calls, and a nonce
    of its own that scopes its request ids (each session numbers its requests from 1)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.lock = threading.Lock()
        self.nonce = uuid.uuid4().hex[:16]

    def call_id(self, request_id: object, meta: object) -> str | None:
        """The id a ``tools/call`` runs as: the client's ``_meta`` :data:`CALL_ID_META`,
        else ``mcp:NONCE:REQUEST_ID``. A ``_meta`` id that is not a non-empty string (or an
        integer) is the client's mistake: ValueError."""
        given = _meta_entries(meta).get(CALL_ID_META)
        if isinstance(given, str) and given:
            return given
        if isinstance(given, int) and not isinstance(given, bool):
            return str(given)
        if given is not None:
            raise ValueError(f"_meta[{CALL_ID_META!r}] must be a non-empty string, "
                             f"not {given!r}")
        return None if request_id is None else f"mcp:{self.nonce}:{request_id}"

    def execute(self, name: str, arguments: dict[str, Any] | None,
                call_id: str | None = None) -> ToolResult:
        with self.lock:
            return self.ctx.tools.execute(name, arguments or {}, call_id=call_id)


def _meta_entries(meta: object) -> Mapping[str, Any]:
    """A request's ``_meta`` as a mapping: a dict (mcp >= 2) or a pydantic model keeping
    the keys it does not name as extras (mcp 1.x)."""
    if meta is None:
        return {}
    if isinstance(meta, Mapping):
        return meta
    extra = getattr(meta, "model_extra", None)
    return extra if isinstance(extra, Mapping) else {}


class ToolServer:
    """The SDK-independent part: one Workspace, per-session owners, results as MCP dicts.

    ``tools``: the tools to serve, as names of tool sets and tools mixed (``"openai"``,
    ``"files,multi_edit"``, ``["anthropic", "read"]``); None serves every tool. A name that
    is neither raises ValueError listing the sets and the tools, before anything is served.
    """

    def __init__(self, workspace: Workspace, owner: str = "mcp",
                 tools: str | Iterable[str] | None = DEFAULT_TOOLS) -> None:
        self.workspace = workspace
        self.owner = owner
        self._counter = itertools.count(1)
        self._counter_lock = threading.Lock()
        # Schemas are the same for every context; compute them once (they are pinned).
        registry = workspace.context(owner).tools
        self._annotations = {n: registry.get(n).annotations for n in registry.names()}
        self.tool_set = "all" if tools is None else (
            tools if isinstance(tools, str) else ",".join(tools))
        try:
            served = registry.offered(None if tools is None else tools)
        except UnknownToolError:
            raise ValueError(
                f"unknown tool or tool set in {self.tool_set!r}; tool sets: {_sets()}; "
                f"tools: {', '.join(registry.names())} (a comma list may mix them)"
            ) from None
        by_name = {s["name"]: s for s in registry.schemas(dialect="json")}
        self._tools = [by_name[n] for n in served]
        # The set is what the model is shown and chooses from (a prompt's fit, not a
        # permission): a client that calls another tool by name (a script written against
        # every tool) still runs it, under the same guard. What a read-only workspace
        # filters out is never run.
        self._callable = frozenset(registry.offered())
        self.instructions = READ_ONLY_INSTRUCTIONS if workspace.read_only else INSTRUCTIONS

    def open_session(self) -> _Session:
        with self._counter_lock:
            n = next(self._counter)
        owner = self.owner if n == 1 else f"{self.owner}-{n}"
        return _Session(self.workspace.context(owner))

    def tool_dicts(self) -> list[dict[str, Any]]:
        """The MCP ``Tool`` objects (wire shape) of ``ctx.tools.schemas("json")``."""
        return [
            {
                "name": s["name"],
                "description": s["description"],
                "inputSchema": s["parameters"],
                "annotations": self._annotations[s["name"]].mcp(),
            }
            for s in self._tools
        ]

    def refusal(self, name: str) -> str:
        """What a call of a tool this server does not run answers (a name no tool has, or
        a modifying tool on a read-only workspace): the set served and its tools."""
        return render(Reason.tool_not_offered, details={
            "name": name, "set": self.tool_set,
            "tools": ", ".join(s["name"] for s in self._tools)})

    def has_tool(self, name: str) -> bool:
        """Whether a call of ``name`` runs: every tool the workspace offers (a read-only
        one: those that modify nothing), listed in the set or not."""
        return name in self._callable

    @staticmethod
    def result_dict(result: ToolResult) -> dict[str, Any]:
        """The MCP ``CallToolResult`` (wire shape) of one ToolResult."""
        content: list[dict[str, Any]] = [{"type": "text", "text": result.text}]
        # An image a read shows follows its line (MCP image content: base64 data).
        content += [{"type": "image", "data": i.base64(), "mimeType": i.media_type}
                    for i in result.images]
        return {"content": content, "structuredContent": facts(result), "isError": not result.ok}


def _new_style_sdk(server_cls: type) -> bool:
    """mcp >= 2: handlers are constructor arguments (``on_call_tool``)."""
    return "on_call_tool" in inspect.signature(server_cls).parameters


def build_server(tool_server: ToolServer) -> Any:
    """A low-level ``mcp.server.lowlevel.Server`` exposing the tools.

    Every ``Server.run`` (one connection) opens a new session, so a new owner.
    """
    require_sdk()
    import anyio.to_thread
    import mcp.types as types
    from mcp.server.lowlevel import Server

    @asynccontextmanager
    async def lifespan(_: Any) -> AsyncIterator[dict[str, Any]]:
        yield {"session": tool_server.open_session()}

    tools = [types.Tool.model_validate(t) for t in tool_server.tool_dicts()]

    async def call(session: _Session, name: str, arguments: dict[str, Any] | None,
                   call_id: str | None) -> Any:
        result = await anyio.to_thread.run_sync(session.execute, name, arguments, call_id)
        return types.CallToolResult.model_validate(tool_server.result_dict(result))

    unknown = tool_server.refusal

    if _new_style_sdk(Server):
        return _server(Server, tool_server, tools, lifespan, call, unknown)
    return _legacy_server(Server, tool_server, tools, lifespan, call, unknown)


def _server(server_cls: Any, tool_server: ToolServer, tools: list[Any], lifespan: Any,
            call: Any, unknown: Callable[[str], str]) -> Any:
    """mcp >= 2: handlers are constructor arguments."""
    import mcp.types as types
    from mcp.shared.exceptions import MCPError

    async def on_list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def on_call_tool(ctx: Any, params: types.CallToolRequestParams) -> Any:
        if not tool_server.has_tool(params.name):
            raise MCPError(types.INVALID_PARAMS, unknown(params.name))
        session: _Session = ctx.lifespan_context["session"]
        try:
            call_id = session.call_id(ctx.request_id, params.meta or ctx.meta)
        except ValueError as e:
            raise MCPError(types.INVALID_PARAMS, str(e)) from None
        return await call(session, params.name, params.arguments, call_id)

    return server_cls(
        "fsseam",
        version=_version(),
        instructions=tool_server.instructions,
        lifespan=lifespan,
        on_list_tools=on_list_tools,
        on_call_tool=on_call_tool,
    )


def _legacy_server(server_cls: Any, tool_server: ToolServer, tools: list[Any], lifespan: Any,
                   call: Any, unknown: Callable[[str], str]) -> Any:
    """mcp 1.x: decorator registration; the lifespan context is on server.request_context."""
    legacy: Any = server_cls(
        "fsseam", version=_version(), instructions=tool_server.instructions, lifespan=lifespan
    )

    async def list_tools() -> list[Any]:
        return tools

    async def call_tool(name: str, arguments: dict[str, Any] | None) -> Any:
        if not tool_server.has_tool(name):
            raise ValueError(unknown(name))
        request = legacy.request_context
        session: _Session = request.lifespan_context["session"]
        call_id = session.call_id(request.request_id, request.meta)
        return await call(session, name, arguments, call_id)

    legacy.list_tools()(list_tools)
    legacy.call_tool(validate_input=False)(call_tool)
    return legacy


async def serve_stdio(workspace: Workspace, owner: str = "mcp",
                      tools: str | Iterable[str] | None = DEFAULT_TOOLS) -> None:
    """Serve one MCP session over this process's stdin/stdout until stdin closes."""
    await _serve(ToolServer(workspace, owner, tools))


def run_stdio(workspace: Workspace, owner: str = "mcp",
              tools: str | Iterable[str] | ToolServer | None = DEFAULT_TOOLS) -> None:
    """Blocking :func:`serve_stdio`; returns when the client closes stdin. ``tools`` may be
    a ToolServer already made (the CLI makes it first, to refuse a bad set before serving)."""
    import anyio

    if isinstance(tools, ToolServer):
        anyio.run(_serve, tools)
    else:
        anyio.run(serve_stdio, workspace, owner, tools)


async def _serve(tool_server: ToolServer) -> None:
    require_sdk()
    from mcp.server.stdio import stdio_server

    server = build_server(tool_server)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
