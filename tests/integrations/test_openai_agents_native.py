"""The Agents SDK's own shapes: ``apply_patch`` on a Chat Completions model and on a
Responses model (the SDK's real model classes and the ``openai`` client, over an in-process
HTTP transport that answers as the API would) and on the SDK's ``ScriptedModel``; strict
schemas, unique names in every tool set, the SDK's approval flow, images. Stored bytes are
asserted after every run."""

from __future__ import annotations

import asyncio
import copy
import json
from typing import Any

import pytest

pytest.importorskip(
    "agents", reason="openai-agents is not installed: pip install -e '.[openai-agents]'"
)

import httpx
from agents import (
    Agent,
    ApplyPatchTool,
    FunctionTool,
    OpenAIChatCompletionsModel,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    set_default_openai_api,
)
from agents.editor import ApplyPatchOperation
from agents.strict_schema import ensure_strict_json_schema
from agents.testing import ScriptedModel, assistant_message, function_call
from agents.tool import ToolOutputImage, ToolOutputText
from openai import AsyncOpenAI

from fsseam import TOOL_SETS, UnknownToolError, Workspace
from fsseam.integrations.openai_agents import (
    fsseam_tools,
    function_tools,
    hosts_apply_patch,
    tool_output,
)
from fsseam.tools import ImageContent, ToolResult

from .helpers import seed, stored

NO_TRACING = RunConfig(tracing_disabled=True)
PATCH = ("*** Begin Patch\n*** Update File: config.toml\n@@\n-retries = 1\n+retries = 3\n"
         "*** End Patch\n")
# The smallest PNG: one transparent pixel.
PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000001e221bc330000000049454e44ae426082")


@pytest.fixture
def ws() -> Workspace:
    workspace = Workspace("memory://openai-native", storage_options={"global_store": False})
    seed(workspace)
    return workspace


def names(tools: list[Any]) -> list[str]:
    return [t.name for t in tools]


# -- Chat Completions: the real model class and client, answered in process ------------------


class ChatServer:
    """Answers the client's ``/chat/completions`` requests with scripted tool calls, and
    keeps each request's JSON."""

    def __init__(self, *turns: list[tuple[str, dict[str, Any]]] | str) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        turn = self.turns.pop(0)
        if isinstance(turn, str):
            message: dict[str, Any] = {"role": "assistant", "content": turn}
        else:
            calls = [{"id": f"call_{len(self.requests)}_{i}", "type": "function",
                      "function": {"name": name, "arguments": json.dumps(args)}}
                     for i, (name, args) in enumerate(turn)]
            message = {"role": "assistant", "content": None, "tool_calls": calls}
        return httpx.Response(200, json={
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0,
            "model": "gpt-test",
            "choices": [{"index": 0, "message": message,
                         "finish_reason": "stop" if isinstance(turn, str) else "tool_calls"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        })


def client(handler: Any) -> AsyncOpenAI:
    return AsyncOpenAI(api_key="test", base_url="http://model.test/v1", max_retries=0,
                       http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))


def tool_messages(request: dict[str, Any]) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "tool"]


def test_a_chat_completions_model_reads_and_patches(ws: Workspace) -> None:
    server = ChatServer(
        [("read", {"file_path": "/config.toml", "offset": None, "limit": None})],
        [("apply_patch", {"patch": PATCH})],
        "Done.",
    )
    model = OpenAIChatCompletionsModel(model="gpt-test", openai_client=client(server))
    tools = fsseam_tools(ws, model=model, names="openai")
    assert not any(isinstance(t, ApplyPatchTool) for t in tools)
    agent = Agent(name="editor", model=model, tools=tools)

    result = asyncio.run(Runner.run(agent, "Raise the retries to 3.", run_config=NO_TRACING))

    assert result.final_output == "Done."
    assert stored(ws) == b"retries = 3\n"
    sent = server.requests[0]["tools"]
    assert [t["function"]["name"] for t in sent] == ["apply_patch", "read", "ls", "glob", "grep"]
    assert all(t["type"] == "function" and t["function"]["strict"] is True for t in sent)
    assert tool_messages(server.requests[2]) == [
        "     1\tretries = 1", "Success. Updated the following files:\nM /config.toml"]


def test_a_chat_completions_patch_of_a_file_never_read_changes_nothing(ws: Workspace) -> None:
    server = ChatServer([("apply_patch", {"patch": PATCH})], "Done.")
    model = OpenAIChatCompletionsModel(model="gpt-test", openai_client=client(server))
    agent = Agent(name="editor", model=model, tools=fsseam_tools(ws, model=model))
    asyncio.run(Runner.run(agent, "Raise the retries.", run_config=NO_TRACING))
    (answer,) = tool_messages(server.requests[1])
    assert answer.startswith("Error [FS_NOT_OBSERVED]: /config.toml has not been read yet.")
    assert stored(ws) == b"retries = 1\n"


class ResponsesServer:
    """Answers the client's ``/responses`` requests with scripted output items."""

    def __init__(self, *turns: list[dict[str, Any]]) -> None:
        self.turns = list(turns)
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(json.loads(request.content))
        usage = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
                 "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens_details": {"reasoning_tokens": 0}}
        return httpx.Response(200, json={
            "id": f"resp_{len(self.requests)}", "object": "response", "created_at": 0,
            "status": "completed", "model": "gpt-test", "output": self.turns.pop(0),
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "usage": usage,
        })


def test_a_responses_model_gets_the_hosted_tool(ws: Workspace) -> None:
    read = {"type": "function_call", "id": "fc_1", "call_id": "r1", "name": "read",
            "status": "completed", "arguments": json.dumps({"file_path": "/config.toml"})}
    patch = {"type": "apply_patch_call", "id": "apc_1", "call_id": "p1", "status": "completed",
             "operation": {"type": "update_file", "path": "config.toml",
                           "diff": "@@\n-retries = 1\n+retries = 3\n"}}
    done = {"type": "message", "id": "m1", "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}
    server = ResponsesServer([read], [patch], [done])
    model = OpenAIResponsesModel(model="gpt-test", openai_client=client(server))
    agent = Agent(name="editor", model=model,
                  tools=fsseam_tools(ws, model=model, names="openai"))

    result = asyncio.run(Runner.run(agent, "Raise the retries to 3.", run_config=NO_TRACING))

    assert result.final_output == "Done."
    assert stored(ws) == b"retries = 3\n"
    sent = server.requests[0]["tools"]
    assert sent[0] == {"type": "apply_patch"}
    assert [(t["name"], t["strict"]) for t in sent[1:]] == [
        ("read", True), ("ls", True), ("glob", True), ("grep", True)]
    (answer,) = [i for i in server.requests[2]["input"]
                 if i.get("type") == "apply_patch_call_output"]
    assert answer == {"type": "apply_patch_call_output", "call_id": "p1", "status": "completed",
                      "output": "Success. Updated the following files:\nM /config.toml"}


def test_which_models_run_the_hosted_tool() -> None:
    never = client(lambda request: httpx.Response(500))
    assert hosts_apply_patch(OpenAIResponsesModel(model="m", openai_client=never))
    assert hosts_apply_patch(ScriptedModel([]))
    assert not hosts_apply_patch(OpenAIChatCompletionsModel(model="m", openai_client=never))
    assert hosts_apply_patch(None) and hosts_apply_patch("gpt-5.1")
    assert hosts_apply_patch("openai/gpt-5.1")
    assert not hosts_apply_patch("litellm/anthropic/claude")
    set_default_openai_api("chat_completions")
    try:
        assert not hosts_apply_patch(None) and not hosts_apply_patch("gpt-5.1")
    finally:
        set_default_openai_api("responses")


def test_the_function_apply_patch_on_a_responses_shaped_model(ws: Workspace) -> None:
    """``hosted=False`` (any model): the model sends the patch as a function call."""
    model = ScriptedModel([
        [function_call("read", {"file_path": "/config.toml", "offset": None, "limit": None},
                       call_id="r")],
        [function_call("apply_patch", {"patch": PATCH}, call_id="p")],
        [assistant_message("Done.")],
    ])
    tools = fsseam_tools(ws, hosted=False, names="openai")
    assert names(tools) == ["apply_patch", "read", "ls", "glob", "grep"]
    agent = Agent(name="editor", model=model, tools=tools)
    result = asyncio.run(Runner.run(agent, "Raise the retries.", run_config=NO_TRACING))
    outputs = [i.raw_item["output"] for i in result.new_items if i.type == "tool_call_output_item"]
    assert outputs[1] == "Success. Updated the following files:\nM /config.toml"
    assert stored(ws) == b"retries = 3\n"
    model.assert_complete()


# -- schemas and names -----------------------------------------------------------------------


def test_every_schema_is_strict_as_the_sdk_wants_it(ws: Workspace) -> None:
    for tool in function_tools(ws.context("s"), "all"):
        assert tool.strict_json_schema is True
        schema = tool.params_json_schema
        assert ensure_strict_json_schema(copy.deepcopy(schema)) == schema
        assert set(schema["required"]) == set(schema["properties"])


@pytest.mark.parametrize("chosen", [*TOOL_SETS, "files,openai", ("read", "apply_patch"),
                                    ("openai", "anthropic", "apply_patch", "read")])
@pytest.mark.parametrize("hosted", [True, False])
def test_names_are_unique_in_every_set(ws: Workspace, chosen: Any, hosted: bool) -> None:
    tools = fsseam_tools(ws, names=chosen, hosted=hosted)
    assert len(set(names(tools))) == len(tools)
    assert sum(isinstance(t, ApplyPatchTool) for t in tools) == int(
        hosted and "apply_patch" in names(tools))


def test_the_default_set_and_a_read_only_workspace() -> None:
    rw = Workspace("memory://openai-rw", storage_options={"global_store": False})
    assert names(fsseam_tools(rw, hosted=False)) == [
        "read", "write", "edit", "ls", "glob", "grep", "delete", "move", "history", "restore",
        "multi_edit", "apply_patch"]
    ro = Workspace("memory://openai-ro", read_only=True, storage_options={"global_store": False})
    assert names(fsseam_tools(ro)) == ["read", "ls", "glob", "grep", "history"]
    assert names(fsseam_tools(ro, names="all")) == [
        "read", "ls", "glob", "grep", "history"]
    with pytest.raises(UnknownToolError):
        fsseam_tools(ro, names=["read", "shell"])
    with pytest.raises(UnknownToolError):
        fsseam_tools(ro, needs_approval=["shell"])


# -- approvals -------------------------------------------------------------------------------


def test_needs_approval_true_stops_each_change_and_never_a_read(ws: Workspace) -> None:
    tools = fsseam_tools(ws, names=["openai", "edit"], needs_approval=True, hosted=False)
    asks = {t.name: t.needs_approval for t in tools if isinstance(t, FunctionTool)}
    assert asks == {"apply_patch": True, "read": False, "ls": False, "glob": False,
                    "grep": False, "edit": True}
    model = ScriptedModel([
        [function_call("read", {"file_path": "/config.toml"}, call_id="r"),
         function_call("apply_patch", {"patch": PATCH}, call_id="p")],
        [assistant_message("Done.")],
    ])
    agent = Agent(name="editor", model=model, tools=tools)
    first = asyncio.run(Runner.run(agent, "Raise the retries.", context={},
                                   run_config=NO_TRACING))
    assert [i.tool_name for i in first.interruptions] == ["apply_patch"]
    assert stored(ws) == b"retries = 1\n"

    async def rejected() -> Any:
        state = first.to_state()
        for item in state.get_interruptions():
            state.reject(item)
        return await Runner.run(agent, state, run_config=NO_TRACING)

    asyncio.run(rejected())
    assert stored(ws) == b"retries = 1\n"


def test_a_callable_decides_per_call(ws: Workspace) -> None:
    """The SDK's callables, per tool: the hosted tool's sees the operation."""
    seen: list[str] = []

    def secret_only(run: Any, operation: ApplyPatchOperation, call_id: str) -> bool:
        seen.append(operation.path)
        return operation.path.startswith("secret")

    seed(ws, "/secret.txt", "key = 1\n")
    tools = fsseam_tools(ws, needs_approval={"apply_patch": secret_only})

    def patch(call_id: str, path: str, old: str, new: str) -> dict[str, Any]:
        return {"type": "apply_patch_call", "call_id": call_id, "operation": {
            "type": "update_file", "path": path, "diff": f"@@\n-{old}\n+{new}\n"}}

    model = ScriptedModel([
        [function_call("read", {"file_path": "/config.toml"}, call_id="r1"),
         function_call("read", {"file_path": "/secret.txt"}, call_id="r2")],
        [patch("p1", "config.toml", "retries = 1", "retries = 2"),
         patch("p2", "secret.txt", "key = 1", "key = 2")],
        [assistant_message("Done.")],
    ])
    agent = Agent(name="editor", model=model, tools=tools)
    result = asyncio.run(Runner.run(agent, "Edit both.", context={}, run_config=NO_TRACING))
    assert sorted(seen) == ["config.toml", "secret.txt"]
    assert [i.tool_name for i in result.interruptions] == ["apply_patch"]
    assert stored(ws) == b"retries = 2\n"
    assert stored(ws, "/secret.txt") == b"key = 1\n"

    async def approved() -> Any:
        state = result.to_state()
        for item in state.get_interruptions():
            state.approve(item)
        return await Runner.run(agent, state, run_config=NO_TRACING)

    asyncio.run(approved())
    assert stored(ws, "/secret.txt") == b"key = 2\n"


def test_a_function_tools_callable_sees_the_arguments(ws: Workspace) -> None:
    seen: list[dict[str, Any]] = []

    async def big_patches(run: Any, arguments: dict[str, Any], call_id: str) -> bool:
        seen.append(arguments)
        return len(arguments["patch"]) > 1000

    tools = fsseam_tools(ws, hosted=False, needs_approval={"apply_patch": big_patches})
    model = ScriptedModel([
        [function_call("read", {"file_path": "/config.toml"}, call_id="r")],
        [function_call("apply_patch", {"patch": PATCH}, call_id="p")],
        [assistant_message("Done.")],
    ])
    agent = Agent(name="editor", model=model, tools=tools)
    result = asyncio.run(Runner.run(agent, "Raise the retries.", run_config=NO_TRACING))
    assert seen == [{"patch": PATCH}] and not result.interruptions
    assert stored(ws) == b"retries = 3\n"


# -- images ----------------------------------------------------------------------------------


def test_an_image_result_is_the_sdks_image_output() -> None:
    image = ImageContent(media_type="image/png", data=PNG)
    text = tool_output(ToolResult(tool="read", ok=True, text="/dot.png: a PNG image",
                                  images=(image,)))
    assert text == [ToolOutputText(text="/dot.png: a PNG image"),
                    ToolOutputImage(image_url=image.data_url())]
    assert tool_output(ToolResult(tool="read", ok=True, text="plain")) == "plain"


def test_a_read_of_an_image_in_a_run(ws: Workspace) -> None:
    ws.context("w").tools.execute("write", {"file_path": "/x.txt", "content": "x"})
    from fsseam.versions import Overwrite

    ws.backend.write("dot.png", PNG, Overwrite())
    if not ws.context("probe").tools.execute("read", {"file_path": "/dot.png"}).images:
        pytest.skip("read fills ToolResult.images for an image once the media part is merged")
    model = ScriptedModel([[function_call("read", {"file_path": "/dot.png"}, call_id="i")],
                           [assistant_message("A dot.")]])
    agent = Agent(name="viewer", model=model, tools=fsseam_tools(ws))
    result = asyncio.run(Runner.run(agent, "What is in dot.png?", run_config=NO_TRACING))
    (item,) = [i for i in result.new_items if i.type == "tool_call_output_item"]
    parts = item.raw_item["output"]
    assert [p["type"] for p in parts] == ["input_text", "input_image"]
    assert parts[1]["image_url"] == ImageContent(media_type="image/png", data=PNG).data_url()
