"""Pydantic AI on fsseam: real agent runs with Pydantic AI's FunctionModel and
``FsseamToolset`` on memory, local, S3 (moto) and GCS (fake-gcs-server); the stored bytes are
asserted after every run."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "pydantic_ai", reason="pydantic-ai is not installed: pip install -e '.[pydantic-ai]'"
)

from pydantic_ai import Agent, BinaryContent, RunContext
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel
from pydantic_ai.usage import RunUsage

from fsseam import ErrorCode, ReadEvent, UnknownToolError, Workspace, hookimpl
from fsseam.integrations.pydantic_ai import DEFAULT_TOOLS, RESULT_KEY, FsseamToolset, strict_form
from fsseam.tools.base import ImageContent, ToolResult
from fsseam.tools.registry import TOOL_SETS, expand_tool_names
from fsseam.versions import CreateOnly

from .helpers import (
    NOT_OBSERVED,
    EditsMeet,
    docs_example,
    make_workspace,
    retries,
    seed,
    stale,
    stored,
)


def scripted(*turns: Any) -> FunctionModel:
    remaining = list(turns)

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        turn = remaining.pop(0)
        parts = await turn() if callable(turn) else turn
        return ModelResponse(parts=parts)

    return FunctionModel(respond)


READ = [ToolCallPart("read", {"file_path": "/config.toml"}, tool_call_id="read")]
DONE = [TextPart("Done.")]


def edit(old: str, new: str, call_id: str = "edit") -> list[ToolCallPart]:
    return [ToolCallPart("edit", {"file_path": "/config.toml", "old_string": old,
                                  "new_string": new}, tool_call_id=call_id)]


def returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    return [p for m in messages for p in m.parts if isinstance(p, ToolReturnPart)]


def run(toolset: FsseamToolset, *turns: Any, **kwargs: Any) -> list[ToolReturnPart]:
    agent = Agent(scripted(*turns, DONE), toolsets=[toolset])
    result = asyncio.run(agent.run("Edit the config.", **kwargs))
    return returns(result.all_messages())


def edited(line: int, *rows: str) -> str:
    return "\n".join([f"Edited /config.toml: replaced 1 occurrence at line {line}.", *rows])


# -- the docs page ---------------------------------------------------------------------------


def test_the_example_of_the_docs_page_runs_as_a_script(capsys: pytest.CaptureFixture[str]
                                                       ) -> None:
    """The page's one python block is a script (no pytest, no emulator): run verbatim."""
    code = compile(docs_example("pydantic-ai.md"), "pydantic_ai_example.py", "exec")
    exec(code, {"__name__": "__main__"})
    assert capsys.readouterr().out == "All four scenarios passed.\n"


# -- agents end to end -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "local", "s3", "gcs"])
def test_an_agent_reads_and_edits_on_every_store(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    ws = make_workspace(kind, request, tmp_path)
    seed(ws)
    read, done = run(FsseamToolset(ws), READ, edit("retries = 1", "retries = 3"))
    assert (read.outcome, read.content) == ("success", "     1\tretries = 1")
    assert (done.outcome, done.content) == ("success", edited(1, "     1\tretries = 3"))
    assert stored(ws) == b"retries = 3\n"


def test_an_edit_of_a_file_never_read_is_a_failed_result(fsseam_s3_workspace: Workspace) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    (refused,) = run(FsseamToolset(ws, max_retries=0), edit("retries = 1", "retries = 3"))
    assert (refused.outcome, refused.content) == ("failed", NOT_OBSERVED)
    assert stored(ws) == b"retries = 1\n"


def test_a_stale_edit_is_refused_and_the_agent_recovers(fsseam_s3_workspace: Workspace) -> None:
    ws = fsseam_s3_workspace
    seed(ws)

    async def someone_edits_then_agent_edits() -> list[ToolCallPart]:
        person = ws.context("person")
        person.tools.execute("read", {"file_path": "/config.toml"})
        assert person.tools.execute("edit", {"file_path": "/config.toml",
                                             "old_string": "retries = 1",
                                             "new_string": "retries = 2"}).ok
        return edit("retries = 1", "retries = 5", "e1")

    # The refusal shows what changed and counts as a read: the retry needs no read first.
    out = run(FsseamToolset(ws, max_retries=0), READ, someone_edits_then_agent_edits,
              edit("retries = 2", "retries = 5", "e2"))
    assert [(p.tool_call_id, p.outcome) for p in out] == [
        ("read", "success"), ("e1", "failed"), ("e2", "success")]
    assert out[1].content == stale(retries(1, 2))
    assert stored(ws) == b"retries = 5\n"


def test_argument_mistakes_are_failed_results_and_only_malformed_calls_retry(
    fsseam_s3_workspace: Workspace,
) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    # An old_string that matches nothing is a result the model acts on: no retry is used up,
    # even with none to spare.
    out = run(FsseamToolset(ws, max_retries=0), READ, edit("retries = 9", "retries = 3", "miss"),
              edit("retries = 1", "retries = 3", "hit"))
    assert [(p.tool_call_id, p.outcome) for p in out] == [
        ("read", "success"), ("miss", "failed"), ("hit", "success")]
    assert out[1].content == (
        "Error [FS_NO_MATCH]: old_string was not found in /config.toml. It must match the file "
        "exactly, including whitespace and indentation; read the file and copy the text."
    )
    assert out[1].metadata[RESULT_KEY] == {
        "ok": False, "tool": "edit",
        "error": {"code": "FS_NO_MATCH", "message": out[1].content.split(": ", 1)[1]}}
    assert stored(ws) == b"retries = 3\n"
    # A call the tool cannot read (an argument missing) is a retry prompt, in fsseam's words,
    # and nothing is changed; with no retries left the run ends.
    malformed = [ToolCallPart("edit", {"file_path": "/config.toml", "old_string": "retries = 3"},
                              tool_call_id="bad")]
    out = run(FsseamToolset(ws), READ, malformed, edit("retries = 3", "retries = 4", "good"))
    assert [(p.tool_call_id, p.outcome) for p in out] == [
        ("read", "success"), ("bad", "retried"), ("good", "success")]
    assert out[1].content == ("Error [FS_INVALID_ARGUMENT]: invalid arguments for edit: missing "
                              "required argument 'new_string'.")
    with pytest.raises(UnexpectedModelBehavior, match="Tool 'edit' exceeded max retries count "
                                                      "of 0"):
        run(FsseamToolset(ws, max_retries=0), READ, malformed)
    assert stored(ws) == b"retries = 4\n"
    # retry_codes makes more codes retry prompts.
    out = run(FsseamToolset(ws, retry_codes=[ErrorCode.FS_NO_MATCH]), READ,
              edit("retries = 9", "x", "miss"), edit("retries = 4", "retries = 5", "hit"))
    assert [p.outcome for p in out] == ["success", "retried", "success"]
    assert stored(ws) == b"retries = 5\n"


def test_a_model_that_reads_two_missing_paths_goes_on(ws: Workspace) -> None:
    """At Pydantic AI's default of one retry, two answers "not found" used to end the run."""
    seed(ws)
    out = run(FsseamToolset(ws),
              [ToolCallPart("read", {"file_path": "/nope.toml"}, tool_call_id="1")],
              [ToolCallPart("read", {"file_path": "/config.tom"}, tool_call_id="2")],
              READ, edit("retries = 1", "retries = 2"))
    assert [(p.tool_call_id, p.outcome) for p in out] == [
        ("1", "failed"), ("2", "failed"), ("read", "success"), ("edit", "success")]
    assert out[0].content.startswith("Error [FS_NOT_FOUND]: /nope.toml does not exist.")
    assert stored(ws) == b"retries = 2\n"


@pytest.mark.parametrize("names", [None, "all", "openai", "anthropic", "files,multi_edit"])
def test_a_testmodel_run_passes_with_every_tool_set(ws: Workspace, names: str | None) -> None:
    """Pydantic AI's TestModel calls every tool once with arguments made from its schema."""
    seed(ws)
    toolset = FsseamToolset(ws, names=names)
    result = asyncio.run(Agent(TestModel(), toolsets=[toolset]).run("go"))
    parts = returns(result.all_messages())
    expected = list(DEFAULT_TOOLS if names is None else expand_tool_names(names))
    assert [p.tool_name for p in parts] == expected
    assert all(p.outcome in ("success", "failed") for p in parts)
    assert stored(ws) == b"retries = 1\n"


def test_two_edits_in_one_response_run_at_once_and_the_storage_decides(
    fsseam_s3_bucket: Any,
) -> None:
    """Pydantic AI runs one response's calls concurrently: both edits read the same version
    (each held until both have), and S3's If-Match lets exactly one write through."""
    ws = fsseam_s3_bucket.workspace(plugins=[EditsMeet()])
    seed(ws)
    both = [*edit("retries = 1", "retries = 2", "e2"), *edit("retries = 1", "retries = 3", "e3")]
    out = run(FsseamToolset(ws), READ, both)
    results = {p.tool_call_id: p for p in out[1:]}
    landed = [c for c, p in results.items() if p.outcome == "success"]
    assert len(landed) == 1
    (lost,) = set(results) - set(landed)
    assert (results[lost].outcome, results[lost].content) == (
        "failed", stale(retries(1, int(landed[0][1]))))
    assert stored(ws) == f"retries = {landed[0][1]}\n".encode()


def test_apply_patch_through_the_toolset(fsseam_s3_workspace: Workspace) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    patch = ("*** Begin Patch\n*** Update File: config.toml\n@@\n-retries = 1\n+retries = 2\n"
             "*** Add File: notes.md\n+hello\n*** End Patch")
    _, patched = run(FsseamToolset(ws, names="openai"), READ,
                     [ToolCallPart("apply_patch", {"patch": patch})])
    assert (patched.outcome, patched.content) == (
        "success", "Success. Updated the following files:\nM /config.toml\nA /notes.md")
    assert stored(ws) == b"retries = 2\n" and stored(ws, "/notes.md") == b"hello\n"


# -- owners ----------------------------------------------------------------------------------


class Readers:
    """Records which owner read which path."""

    def __init__(self) -> None:
        self.reads: list[tuple[str, str]] = []

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        self.reads.append((event.owner, event.path))


def test_one_owner_per_toolset_or_per_run() -> None:
    readers = Readers()
    ws = Workspace("memory://per-run", storage_options={"global_store": False},
                   plugins=[readers])
    seed(ws)
    shared = FsseamToolset(ws, owner="agent")
    run(shared, READ, run_id="first")
    # The same toolset in a later run: one owner, so the earlier read counts.
    (done,) = run(shared, edit("retries = 1", "retries = 2"), run_id="second")
    assert done.outcome == "success"
    per_run = FsseamToolset(ws, owner="agent", per_run=True)
    run(per_run, READ, run_id="third")
    (refused,) = run(per_run, edit("retries = 2", "retries = 3"), run_id="fourth")
    assert (refused.outcome, refused.content) == ("failed", NOT_OBSERVED)
    assert readers.reads == [("agent", "/config.toml"), ("agent/third", "/config.toml")]
    assert stored(ws) == b"retries = 2\n"


# -- the toolset -----------------------------------------------------------------------------


@pytest.fixture
def ws() -> Workspace:
    return Workspace("memory://pydantic-ai", storage_options={"global_store": False})


def test_tools_carry_fsseams_schemas_and_descriptions(ws: Workspace) -> None:
    toolset = FsseamToolset(ws, owner="t", id="files", max_retries=3)
    ctx = RunContext(deps=None, model=scripted(), usage=RunUsage())
    tools = asyncio.run(toolset.get_tools(ctx))
    assert list(tools) == list(DEFAULT_TOOLS)
    for name, tool in tools.items():
        fsseam_tool = toolset.context.tools.get(name)
        assert tool.tool_def.name == name
        assert tool.tool_def.description == fsseam_tool.description
        assert tool.tool_def.parameters_json_schema == strict_form(fsseam_tool)
        assert tool.tool_def.strict is None
        assert tool.max_retries == 3 and tool.toolset is toolset
    assert (toolset.id, toolset.owner) == ("files", "t")
    assert repr(toolset) == f"FsseamToolset({ws.url!r}, owner='t')"
    named = FsseamToolset(ws, names=["memory", "str_replace_editor"])
    assert list(asyncio.run(named.get_tools(ctx))) == ["memory", "str_replace_editor"]
    with pytest.raises(UnknownToolError):
        FsseamToolset(ws, names=["shell"])
    with pytest.raises(TypeError, match="per_run makes a context per run"):
        FsseamToolset(ws.context("c"), per_run=True)
    assert ErrorCode.FS_STALE not in toolset.retry_codes


def test_every_tool_is_strict_compatible_under_pydantic_ais_own_check(ws: Workspace) -> None:
    """Pydantic AI's OpenAI transformer with ``strict`` left to inference (what it does for a
    ToolDefinition with ``strict=None``) finds each schema strict-compatible, so OpenAI
    models call every tool in strict mode."""
    from pydantic_ai.profiles.openai import OpenAIJsonSchemaTransformer

    toolset = FsseamToolset(ws, names="all")
    ctx = RunContext(deps=None, model=scripted(), usage=RunUsage())
    tools = asyncio.run(toolset.get_tools(ctx))
    assert list(tools) == list(TOOL_SETS["all"])
    for name, tool in tools.items():
        inferred = OpenAIJsonSchemaTransformer(tool.tool_def.parameters_json_schema, strict=None)
        inferred.walk()
        assert inferred.is_strict_compatible, name
        # Every property is required; those fsseam calls optional also take null.
        schema = tool.tool_def.parameters_json_schema
        assert schema["required"] == list(schema["properties"]), name
    forced = FsseamToolset(ws, strict=True)
    assert all(t.tool_def.strict is True
               for t in asyncio.run(forced.get_tools(ctx)).values())


def test_nulls_mean_not_given(ws: Workspace) -> None:
    """A strict-mode model sends every argument, null for those it leaves out."""
    seed(ws)
    read = [ToolCallPart("read", {"file_path": "/config.toml", "offset": None, "limit": None},
                         tool_call_id="read")]
    out = run(FsseamToolset(ws), read, [ToolCallPart(
        "edit", {"file_path": "/config.toml", "old_string": "retries = 1",
                 "new_string": "retries = 2", "replace_all": None}, tool_call_id="edit")])
    assert [(p.outcome, p.content) for p in out] == [
        ("success", "     1\tretries = 1"), ("success", edited(1, "     1\tretries = 2"))]
    assert stored(ws) == b"retries = 2\n"


def test_names_take_set_names_and_tool_names(ws: Workspace) -> None:
    ctx = RunContext(deps=None, model=scripted(), usage=RunUsage())

    def listed(names: Any) -> list[str]:
        return list(asyncio.run(FsseamToolset(ws, names=names).get_tools(ctx)))

    assert listed(None) == [*TOOL_SETS["files"], "multi_edit", "apply_patch"]
    assert listed("openai") == ["apply_patch", "read", "ls", "glob", "grep"]
    assert listed(["anthropic", "read"]) == ["str_replace_editor", "memory", "ls", "glob",
                                             "grep", "read"]
    assert listed("files,multi_edit") == [*TOOL_SETS["files"], "multi_edit"]
    with pytest.raises(UnknownToolError):
        FsseamToolset(ws, names="files,shell")


PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489"
    "0000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


def test_an_image_in_a_result_reaches_the_model_as_binary_content(ws: Workspace) -> None:
    """A result carrying images (built by hand here) is a tool result of its text and each
    image as ``BinaryContent``, which the model's next request holds."""
    toolset = FsseamToolset(ws, owner="agent")
    image = ToolResult(tool="read", ok=True, text="/logo.png: PNG image, 67 bytes.",
                       images=(ImageContent(media_type="image/png", data=PNG),))
    toolset.context.tools.execute = lambda name, args, **given: image  # type: ignore[method-assign]
    seen: list[Any] = []

    async def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("read", {"file_path": "/logo.png"})])
        seen.extend(returns(messages))
        return ModelResponse(parts=DONE)

    result = asyncio.run(Agent(FunctionModel(respond), toolsets=[toolset]).run("Look."))
    (part,) = returns(result.all_messages())
    assert part.outcome == "success"
    text, picture = part.content
    assert text == "/logo.png: PNG image, 67 bytes."
    assert isinstance(picture, BinaryContent) and picture.is_image
    assert (picture.data, picture.media_type) == (PNG, "image/png")
    assert seen == [part]
    # The history keeps the image through Pydantic AI's JSON.
    again = ModelMessagesTypeAdapter.validate_json(
        ModelMessagesTypeAdapter.dump_json(result.all_messages()))
    assert returns(again)[0].content == part.content


def test_a_read_of_an_image_file_returns_binary_content(ws: Workspace) -> None:
    """End to end: a read of a PNG in the store reaches the model as the image."""
    ws.context("seed").fs.create("/seed.txt", "x\n")
    ws.backend.write("logo.png", PNG, CreateOnly())
    out = run(FsseamToolset(ws), [ToolCallPart("read", {"file_path": "/logo.png"})])
    (part,) = out
    assert part.outcome == "success"
    picture = part.content[1]
    assert isinstance(picture, BinaryContent)
    assert (picture.data, picture.media_type) == (PNG, "image/png")
