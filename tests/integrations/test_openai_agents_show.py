"""Content the application puts in the prompt counts as the agent's read: ``Context.show``
and ``FsseamEditor.show``, and the SDK's editor pattern (``examples/openai_agents_editor.py``)
run with a scripted model, including a change made between the showing and the patch."""

from __future__ import annotations

import asyncio
import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from fsseam import ErrorCode, FsError, Limits, Workspace
from fsseam.versions import Overwrite

from .helpers import NOT_OBSERVED, stored

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "openai_agents_editor.py"


@pytest.fixture
def ws() -> Workspace:
    return Workspace("memory://show", storage_options={"global_store": False})


def put(ws: Workspace, path: str, data: bytes) -> None:
    ws.backend.write(path.lstrip("/"), data, Overwrite())


def edit(ctx: Any, old: str, new: str, path: str = "/c.txt") -> Any:
    return ctx.tools.execute("edit", {"file_path": path, "old_string": old, "new_string": new})


def test_show_returns_the_text_and_counts_as_a_read(ws: Workspace) -> None:
    put(ws, "/c.txt", b"\xef\xbb\xbfa = 1\r\nb = 2\r\n")
    ctx = ws.context("app")
    assert ctx.show("/c.txt") == "a = 1\nb = 2\n"  # as read shows it: no BOM, LF
    result = edit(ctx, "b = 2", "b = 3")
    assert result.ok, result.text
    assert stored(ws, "/c.txt") == b"\xef\xbb\xbfa = 1\r\nb = 3\r\n"
    # Another owner was shown nothing.
    assert edit(ws.context("other"), "a = 1", "a = 0").text == NOT_OBSERVED.replace(
        "/config.toml", "/c.txt")


def test_show_records_in_the_contexts_own_store(ws: Workspace) -> None:
    """A context with a store of its own (a framework's state) gets the read there, as every
    ctx.fs call records, not in the workspace's store."""
    from fsseam import MemoryObservations

    put(ws, "/c.txt", b"a = 1\n")
    own = MemoryObservations()
    ctx = ws.context("app", observations=own)
    ctx.show("/c.txt")
    entry = own.get("app", "c.txt")
    assert entry is not None and entry.seen
    assert edit(ws.context("app", observations=own), "a = 1", "a = 2").ok
    assert stored(ws, "/c.txt") == b"a = 2\n"


def test_a_change_after_show_makes_the_edit_stale(ws: Workspace) -> None:
    put(ws, "/c.txt", b"a = 1\n")
    ctx = ws.context("app")
    ctx.show("/c.txt")
    put(ws, "/c.txt", b"a = 2\n")
    result = edit(ctx, "a = 1", "a = 3")
    assert result.error is not None and result.error.code is ErrorCode.FS_STALE
    assert stored(ws, "/c.txt") == b"a = 2\n"


@pytest.mark.parametrize(("data", "code", "reason"), [
    (b"\x89PNG\r\n\x1a\n\x00\x00", ErrorCode.FS_NOT_TEXT, "not_text"),
    (b"\xff\xfe bad utf-8", ErrorCode.FS_NOT_TEXT, "not_text"),
    (b"x" * 65, ErrorCode.FS_TOO_LARGE, "show_too_large"),
])
def test_show_refuses_and_nothing_counts_as_read(data: bytes, code: ErrorCode,
                                                 reason: str) -> None:
    ws = Workspace("memory://show-refused", storage_options={"global_store": False},
                   limits=Limits(max_edit_bytes=64))
    put(ws, "/c.txt", data)
    ctx = ws.context("app")
    with pytest.raises(FsError) as e:
        ctx.show("/c.txt")
    assert (e.value.code, e.value.reason) == (code, reason)
    refused = ctx.tools.execute("write", {"file_path": "/c.txt", "content": "y"}).error
    assert refused is not None and refused.code is ErrorCode.FS_NOT_OBSERVED
    assert stored(ws, "/c.txt") == data


def test_show_of_a_missing_file(ws: Workspace) -> None:
    with pytest.raises(FsError) as e:
        ws.context("app").show("/nope.txt")
    assert e.value.code is ErrorCode.FS_NOT_FOUND


# -- the Agents SDK's editor pattern ---------------------------------------------------------


def example() -> ModuleType:
    pytest.importorskip("agents", reason="openai-agents is not installed")
    spec = importlib.util.spec_from_file_location("openai_agents_editor", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_editor_example_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example().main(["openai_agents_editor.py"])
    assert capsys.readouterr().out == (
        "Marked it done.\n# Tasks\n\n- [x] write the docs\n- [ ] ship it\n")


def test_the_editor_pattern_on_a_file_changed_after_it_was_shown(ws: Workspace) -> None:
    ex = example()
    from fsseam.integrations.openai_agents import FsseamEditor

    put(ws, "/tasks.md", ex.TASKS.encode())
    editor = FsseamEditor(ws)
    with pytest.raises(TypeError):
        editor.show("/tasks.md")  # which conversation? a run's context says
    conversation: dict[str, Any] = {}
    editor.show("/tasks.md", context=conversation)
    put(ws, "/tasks.md", b"# Tasks\n\n- [ ] write the docs\n- [x] ship it\n")
    from agents import Agent, ApplyPatchTool, RunConfig, Runner

    agent = Agent(name="editor", model=ex.scripted_model(), tools=[ApplyPatchTool(editor=editor)])
    result = asyncio.run(Runner.run(agent, "Mark it done.", context=conversation,
                                    run_config=RunConfig(tracing_disabled=True)))
    (out,) = [i.raw_item for i in result.new_items if i.type == "tool_call_output_item"]
    assert out["status"] == "failed"
    assert out["output"].startswith("Error [FS_STALE]: /tasks.md has changed since you last")
    assert stored(ws, "/tasks.md") == b"# Tasks\n\n- [ ] write the docs\n- [x] ship it\n"
    # In a fresh conversation (another owner) the same patch was never shown anything.
    other = asyncio.run(Runner.run(
        Agent(name="editor", model=ex.scripted_model(), tools=[ApplyPatchTool(editor=editor)]),
        "Mark it done.", context={}, run_config=RunConfig(tracing_disabled=True)))
    (out,) = [i.raw_item for i in other.new_items if i.type == "tool_call_output_item"]
    assert out["output"].startswith("Error [FS_NOT_OBSERVED]: /tasks.md has not been read")
