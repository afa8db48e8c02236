"""The Agents SDK's editor pattern on fsseam: the application puts a file in the prompt, the
agent has only ``ApplyPatchTool``, and its patch lands only on the version it was shown.

    python examples/openai_agents_editor.py            # offline: a scripted model
    python examples/openai_agents_editor.py gpt-5.1    # a real model (OPENAI_API_KEY set)

The workspace here is a temporary directory; any fsseam URL works the same (``s3://...``).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path
from typing import Any

from agents import Agent, ApplyPatchTool, RunConfig, Runner
from agents.testing import ScriptedModel, assistant_message

from fsseam import Workspace
from fsseam.integrations.openai_agents import FsseamEditor

TASKS = "# Tasks\n\n- [ ] write the docs\n- [ ] ship it\n"


def scripted_model() -> ScriptedModel:
    """What a model answers to this prompt: one apply_patch call, then a word."""
    diff = "@@\n-- [ ] write the docs\n+- [x] write the docs\n"
    patch = {"type": "apply_patch_call", "call_id": "p1",
             "operation": {"type": "update_file", "path": "tasks.md", "diff": diff}}
    return ScriptedModel([[patch], [assistant_message("Marked it done.")]])


async def edit(workspace: Workspace, model: Any, *, tracing: bool = False) -> str:
    """One run of the pattern: show the file, let the agent patch it; the agent's answer."""
    editor = FsseamEditor(workspace)
    conversation: dict[str, Any] = {}  # the run's context: it keeps what the agent saw
    text = editor.show("/tasks.md", context=conversation)
    agent = Agent(
        name="editor",
        model=model,
        instructions="You edit files with the apply_patch tool.",
        tools=[ApplyPatchTool(editor=editor)],
    )
    prompt = f"tasks.md contains:\n\n{text}\nMark 'write the docs' as done."
    result = await Runner.run(agent, prompt, context=conversation,
                              run_config=RunConfig(tracing_disabled=not tracing))
    return str(result.final_output)


def main(argv: list[str]) -> None:
    model: Any = argv[1] if len(argv) > 1 else scripted_model()
    with tempfile.TemporaryDirectory() as root:
        Path(root, "tasks.md").write_text(TASKS)
        answer = asyncio.run(edit(Workspace(root), model, tracing=len(argv) > 1))
        print(answer)
        print(Path(root, "tasks.md").read_text(), end="")


if __name__ == "__main__":
    main(sys.argv)
