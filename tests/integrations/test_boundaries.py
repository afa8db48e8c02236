"""The core never imports an agent framework: only ``fsseam.integrations.X`` imports its
framework, and nothing else in fsseam imports ``fsseam.integrations``."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "fsseam"

FRAMEWORKS = {
    "fsseam.integrations.deepagents": {"deepagents"},
    # deepagents' state and middleware are LangGraph's and LangChain's (its dependencies).
    "fsseam.integrations.deepagents_state": {"langchain", "langchain_core", "langgraph"},
    "fsseam.integrations.openai_agents": {"agents"},
    "fsseam.integrations.pydantic_ai": {"pydantic_ai"},
    "fsseam.integrations.pydantic_ai_workspace": {"pydantic_ai"},
    "fsseam.integrations.pydantic_ai_dbos": {"pydantic_ai"},
}
BLOCKED = ("deepagents", "langchain", "langchain_core", "langgraph", "agents", "pydantic_ai",
           "pydantic_graph", "openai", "anthropic")
"""The frameworks and what they bring (the providers' SDKs are test dependencies only)."""


def _imports(path: Path) -> set[str]:
    """Top-level names of every absolute import in a module (typing-only ones included)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            names.add(node.module.split(".")[0])
    return names


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_only_each_integration_imports_its_framework() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module(path)
        allowed = FRAMEWORKS.get(module, set())
        wrong += [(module, name) for name in sorted(_imports(path) & set(BLOCKED))
                  if name not in allowed]
    assert wrong == []


def test_nothing_outside_the_integrations_imports_them() -> None:
    wrong = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module(path)
        if module.startswith("fsseam.integrations"):
            continue
        text = path.read_text()
        if "integrations" in text and any(
            isinstance(n, ast.ImportFrom) and "integrations" in (n.module or "")
            for n in ast.walk(ast.parse(text))
        ):
            wrong.append(module)
    assert wrong == []


def test_fsseam_works_with_every_framework_blocked() -> None:
    """A core install: the frameworks cannot be imported at all, and fsseam, its CLI, MCP
    server module, pytest plugin and the integrations package still import and work; an
    integration module says which extra it needs."""
    code = (
        "import sys\n"
        f"for name in {BLOCKED!r}:\n"
        "    sys.modules[name] = None\n"
        "import fsseam, fsseam.cli, fsseam.mcp, fsseam.pytest_plugin, fsseam.integrations\n"
        "ws = fsseam.Workspace('memory://blocked', storage_options={'global_store': False})\n"
        "ctx = ws.context()\n"
        "assert ctx.tools.execute('write', {'file_path': '/a.txt', 'content': 'x'}).ok\n"
        "for mod in ('deepagents', 'openai_agents', 'pydantic_ai'):\n"
        "    try:\n"
        "        __import__('fsseam.integrations.' + mod)\n"
        "    except ImportError as e:\n"
        "        print(str(e).split(':')[0] + ':' + str(e).split(':')[1])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.splitlines() == [
        "fsseam.integrations.deepagents needs deepagents: pip install 'fsseam[deepagents]' "
        "(from a clone",
        "fsseam.integrations.openai_agents needs openai-agents: pip install "
        "'fsseam[openai-agents]' (from a clone",
        "fsseam.integrations.pydantic_ai needs pydantic-ai-slim: pip install "
        "'fsseam[pydantic-ai]' (from a clone",
    ]
