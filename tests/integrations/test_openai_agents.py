"""The OpenAI Agents SDK on fsseam: real ``Runner`` runs of agents with the SDK's own
``ScriptedModel``, ``ApplyPatchTool`` with ``FsseamEditor`` and fsseam's function tools, on
memory, local, S3 (moto) and GCS (fake-gcs-server); the stored bytes are asserted after every
run."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip(
    "agents", reason="openai-agents is not installed: pip install -e '.[openai-agents]'"
)

from agents import Agent, ApplyPatchTool, FunctionTool, RunConfig, Runner
from agents.editor import ApplyPatchOperation, ApplyPatchResult
from agents.testing import ScriptedModel, assistant_message, function_call

from fsseam import Overwrite, ReadEvent, UnknownToolError, Workspace, hookimpl
from fsseam.integrations.openai_agents import (
    DEFAULT_FUNCTION_TOOLS,
    FsseamEditor,
    fsseam_tools,
    function_tools,
)

from .helpers import (
    DOCS,
    EditsMeet,
    make_workspace,
    retries,
    seed,
    stale,
    stored,
)

pytest_plugins = ("pytester",)

NO_TRACING = RunConfig(tracing_disabled=True)
NOTHING = " Nothing was applied: every file is as it was."


def read(call_id: str, path: str = "/config.toml") -> Any:
    return function_call("read", {"file_path": path}, call_id=call_id)


def op(call_id: str, **operation: Any) -> dict[str, Any]:
    return {"type": "apply_patch_call", "call_id": call_id, "operation": operation}


def patch(call_id: str, old: str, new: str, **more: Any) -> dict[str, Any]:
    return op(call_id, type="update_file", path="config.toml", diff=f"@@\n-{old}\n+{new}\n",
              **more)


def run(tools: list[Any], *turns: Any) -> list[dict[str, Any]]:
    model = ScriptedModel([*turns, [assistant_message("Done.")]])
    agent = Agent(name="editor", model=model, tools=tools)
    result = asyncio.run(Runner.run(agent, "Edit the config.", run_config=NO_TRACING))
    model.assert_complete()
    return [item.raw_item for item in result.new_items if item.type == "tool_call_output_item"]


def applied(call_id: str, *rows: str) -> dict[str, Any]:
    return {"type": "apply_patch_call_output", "call_id": call_id, "status": "completed",
            "output": "\n".join(["Success. Updated the following files:", *rows])}


def failed(call_id: str, output: str) -> dict[str, Any]:
    return {"type": "apply_patch_call_output", "call_id": call_id, "status": "failed",
            "output": output}


# -- the docs page ---------------------------------------------------------------------------


def page_blocks() -> list[str]:
    """The page's python blocks: scripts, and one test module (its docstring names it)."""
    text = (DOCS / "openai-agents.md").read_text()
    # A block saved as a file by the docs harness starts with its "# file:" line.
    blocks = re.findall(r"```python\n(?:# file: \S+\n)?(.*?)```", text, re.S)
    return [str(b) for b in blocks]


def test_the_scripts_of_the_docs_page_run(capsys: pytest.CaptureFixture[str]) -> None:
    scripts = [b for b in page_blocks() if not b.startswith('"""test_')]
    printed = []
    for script in scripts:
        exec(compile(script, "openai-agents.md", "exec"), {"__name__": "__main__"})
        printed.append(capsys.readouterr().out)
    assert printed == ["Retries are 3 now.\nretries = 3\n", "- [x] write the docs\n"]


# -- agents end to end -----------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "local", "s3", "gcs"])
def test_an_agent_reads_and_patches_on_every_store(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    ws = make_workspace(kind, request, tmp_path)
    seed(ws)
    out = run(fsseam_tools(ws), [read("r")], [patch("p", "retries = 1", "retries = 3")])
    assert out[0]["output"] == "     1\tretries = 1"
    assert out[1] == applied("p", "M /config.toml")
    assert stored(ws) == b"retries = 3\n"


def test_create_move_and_delete_files(fsseam_s3_workspace: Workspace) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    seed(ws, "/old.txt", "bye\n")
    out = run(
        fsseam_tools(ws),
        [op("c", type="create_file", path="notes/new.md", diff="+# New\n+text")],
        [read("r1"), read("r2", "/old.txt")],
        [patch("m", "retries = 1", "retries = 2", move_to="conf/config.toml")],
        [op("d", type="delete_file", path="old.txt")],
    )
    assert out[0] == applied("c", "A /notes/new.md")
    assert out[3] == applied("m", "M /conf/config.toml (moved from /config.toml)")
    assert out[4] == applied("d", "D /old.txt")
    assert stored(ws, "/notes/new.md") == b"# New\ntext\n"
    assert stored(ws, "/conf/config.toml") == b"retries = 2\n"
    listing = ws.context("check").tools.execute("ls", {"path": "/"}).text
    assert listing == "/conf/\n/notes/"


def test_a_patch_of_a_file_never_read_is_refused(fsseam_s3_workspace: Workspace) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    (out,) = run(fsseam_tools(ws), [patch("p", "retries = 1", "retries = 3")])
    assert out == failed("p", "Error [FS_NOT_OBSERVED]: /config.toml has not been read yet. "
                              "Read it first, then retry the edit." + NOTHING)
    assert stored(ws) == b"retries = 1\n"


def test_a_patch_after_someone_else_changed_the_file(fsseam_s3_workspace: Workspace) -> None:
    """Another program rewrites the file right after the agent's read: the patch is refused
    with what changed, nothing is applied, and the retry needs no read."""
    ws = fsseam_s3_workspace
    seed(ws)

    class Rewrites:
        @hookimpl
        def fs_read(self, event: ReadEvent) -> None:
            ws.backend.write("config.toml", b"retries = 2\n", Overwrite())

    ws.gate.register(Rewrites())
    out = run(fsseam_tools(ws), [read("r")], [patch("p", "retries = 1", "retries = 3")],
              [patch("p2", "retries = 2", "retries = 3")])
    assert out[1] == failed("p", stale(retries(1, 2), target=None) + NOTHING)
    assert out[2] == applied("p2", "M /config.toml")
    assert stored(ws) == b"retries = 3\n"


def test_two_patches_of_one_line_in_one_response(fsseam_s3_workspace: Workspace) -> None:
    """The SDK applies a turn's patches in order: the second no longer matches."""
    ws = fsseam_s3_workspace
    seed(ws)
    both = [patch("p1", "retries = 1", "retries = 2"), patch("p2", "retries = 1", "retries = 3")]
    out = run(fsseam_tools(ws), [read("r")], both)
    assert out[1] == applied("p1", "M /config.toml")
    assert out[2] == failed("p2", (
        "Error [FS_NO_MATCH]: hunk 1 of /config.toml (line 1 of the diff) does not match the "
        "file: its context and - lines, starting with 'retries = 1', were not found. They must "
        "match the file exactly, whitespace and indentation included; read the file and "
        "rebuild the hunk from its current text." + NOTHING
    ))
    assert stored(ws) == b"retries = 2\n"


def test_two_parallel_edit_calls_and_the_storage_decides(fsseam_s3_bucket: Any) -> None:
    """The SDK runs a turn's function calls at once; both edits read the same version
    (held until both have), and S3's If-Match lets exactly one write through."""
    ws = fsseam_s3_bucket.workspace(plugins=[EditsMeet()])
    seed(ws)

    def edit(call_id: str, new: str) -> Any:
        return function_call("edit", {"file_path": "/config.toml", "old_string": "retries = 1",
                                      "new_string": new}, call_id=call_id)

    tools = fsseam_tools(ws, names=["openai", "edit"])
    out = run(tools, [read("r")], [edit("e2", "retries = 2"), edit("e3", "retries = 3")])
    texts = {o["call_id"]: o["output"] for o in out[1:]}
    landed = [c for c, t in texts.items() if t.startswith("Edited /config.toml")]
    assert len(landed) == 1
    (lost,) = set(texts) - set(landed)
    assert texts[lost] == stale(retries(1, int(landed[0][1])))
    assert stored(ws) == f"retries = {landed[0][1]}\n".encode()


def test_a_patch_that_cannot_be_read(fsseam_s3_workspace: Workspace) -> None:
    ws = fsseam_s3_workspace
    seed(ws)
    out = run(fsseam_tools(ws), [read("r")],
              [op("p", type="update_file", path="config.toml", diff="retries = 1\n")])
    assert out[1] == failed("p", (
        "Error [FS_INVALID_ARGUMENT]: line 1 of the diff, 'retries = 1', is not a hunk line: "
        "each line of a hunk starts with a space (context), - (removed) or + (added), and every "
        "hunk after the first starts with @@." + NOTHING
    ))
    assert stored(ws) == b"retries = 1\n"


# -- the editor and the tools ----------------------------------------------------------------


@pytest.fixture
def ws() -> Workspace:
    return Workspace("memory://openai-agents", storage_options={"global_store": False})


def test_the_editor_on_its_own(ws: Workspace) -> None:
    seed(ws)
    editor = FsseamEditor(ws, owner="e")
    ctx = editor.context
    assert ctx.owner == "e" and repr(editor) == f"FsseamEditor({ws.url!r}, owner='e')"
    ctx.tools.execute("read", {"file_path": "/config.toml"})
    update = ApplyPatchOperation(type="update_file", path="/config.toml",
                                 diff=" retries = 1\n+timeout = 5\n")
    assert asyncio.run(editor.update_file(update)) == ApplyPatchResult(
        status="completed", output="Success. Updated the following files:\nM /config.toml")
    create = ApplyPatchOperation(type="create_file", path="config.toml", diff="+x")
    assert asyncio.run(editor.create_file(create)) == ApplyPatchResult(status="failed", output=(
        "Error [FS_ALREADY_EXISTS]: /config.toml already exists; *** Add File never replaces a "
        "file. Read it, then change it with an *** Update File section." + NOTHING
    ))
    delete = ApplyPatchOperation(type="delete_file", path="/config.toml")
    assert asyncio.run(editor.delete_file(delete)).status == "completed"
    assert asyncio.run(editor.delete_file(delete)) == ApplyPatchResult(status="failed", output=(
        "Error [FS_NOT_FOUND]: /config.toml does not exist. Check the path (list the parent "
        "directory), or create the file." + NOTHING
    ))
    no_diff = ApplyPatchOperation(type="update_file", path="/x.txt")
    assert editor.apply(no_diff) == ApplyPatchResult(status="failed", output=(
        "Error [FS_INVALID_ARGUMENT]: the tool call is malformed: a update_file operation "
        "needs a diff." + NOTHING
    ))


def test_function_tools_are_fsseams_tools(ws: Workspace) -> None:
    ctx = ws.context("f")
    tools = function_tools(ctx)
    assert [t.name for t in tools] == list(DEFAULT_FUNCTION_TOOLS) == [
        "read", "write", "edit", "ls", "glob", "grep", "delete", "move", "history", "restore",
        "multi_edit", "apply_patch"]
    for tool in tools:
        assert isinstance(tool, FunctionTool)
        assert tool.description == ctx.tools.get(tool.name).description
        assert tool.params_json_schema == ctx.tools.get(tool.name).strict_parameters()
        assert tool.strict_json_schema is True
    assert [t.name for t in function_tools(ctx, ["memory", "str_replace_editor"])] == [
        "memory", "str_replace_editor"]
    with pytest.raises(UnknownToolError):
        function_tools(ctx, ["shell"])
    every = fsseam_tools(ws, owner="o", names=["read", "apply_patch"])
    assert isinstance(every[1], ApplyPatchTool) and isinstance(every[1].editor, FsseamEditor)
    assert [getattr(t, "name", None) for t in every] == ["read", "apply_patch"]
    # One owner: the function tool's read lets the editor's patch through.
    seed(ws)
    out = run(every, [read("r")], [patch("p", "retries = 1", "retries = 2")])
    assert out[1]["status"] == "completed"
    assert stored(ws) == b"retries = 2\n"
