"""The import graph, drawn from the code: no circles, layers only point down.

Every import counts, including those under ``TYPE_CHECKING`` and inside functions: a circle
that only typing or laziness hides is still a circle in the design.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in SRC.joinpath("fsseam").rglob("*.py")}
    edges: dict[str, set[str]] = defaultdict(set)
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - node.level + 1]
                    mod = ".".join([*base, node.module] if node.module else base)
                else:
                    mod = node.module or ""
                targets = [mod]
                # `from . import x` / `from .pkg import mod` name submodules too
                targets += [f"{mod}.{a.name}" for a in node.names]
            for t in targets:
                while t and t not in modules:
                    t = t.rpartition(".")[0]
                if t and t != name and t.startswith("fsseam"):
                    edges[name].add(t)
    # A package's __init__ re-exports its modules; an import of the package reaches them
    # only through it, which the edges above already record.
    return {m: edges.get(m, set()) for m in modules}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0

    def visit(v: str) -> None:
        nonlocal counter
        index[v] = low[v] = counter
        counter += 1
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10_000)
    for v in graph:
        if v not in index:
            visit(v)
    return out


def _ignoring_package_inits(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Edges between modules, with a package's ``__init__`` (a re-export list that imports
    its own children) left out: ``fsseam.tools`` importing ``fsseam.tools.base`` is not a
    layer pointing anywhere."""
    packages = {m for m in graph if SRC.joinpath(*m.split("."), "__init__.py").exists()}
    return {
        m: {t for t in deps if t not in packages}
        for m, deps in graph.items()
        if m not in packages
    }


def test_no_import_circles() -> None:
    assert _cycles(_ignoring_package_inits(_graph())) == []


def test_layers_point_down() -> None:
    graph = _ignoring_package_inits(_graph())
    upper = ("fsseam.tools", "fsseam.workspace", "fsseam.cli", "fsseam.mcp", "fsseam.demo")
    lower = ("fsseam.backends", "fsseam.seam", "fsseam.edits", "fsseam.text",
             "fsseam.events", "fsseam.gate", "fsseam.policy", "fsseam.errors",
             "fsseam.messages", "fsseam.versions", "fsseam.paths", "fsseam.doccache",
             "fsseam.limits", "fsseam.outcomes", "fsseam.diff", "fsseam.oserrors",
             "fsseam.globs", "fsseam.grep", "fsseam.undo", "fsseam.history",
             "fsseam.conflicts")
    wrong = sorted(
        (m, t) for m, deps in graph.items() for t in deps
        if m.startswith(lower) and t.startswith(upper)
    )
    assert wrong == []


def test_tools_never_import_a_backend() -> None:
    graph = _ignoring_package_inits(_graph())
    wrong = sorted(
        (m, t) for m, deps in graph.items() for t in deps
        if m.startswith("fsseam.tools") and t.startswith("fsseam.backends")
    )
    assert wrong == []


def test_backends_import_nothing_above_them() -> None:
    graph = _ignoring_package_inits(_graph())
    allowed = ("fsseam.backends", "fsseam.errors", "fsseam.messages", "fsseam.versions",
               "fsseam.paths", "fsseam.oserrors")
    wrong = sorted(
        (m, t) for m, deps in graph.items() for t in deps
        if m.startswith("fsseam.backends") and not t.startswith(allowed)
    )
    assert wrong == []


def test_import_fsseam_without_fcntl() -> None:
    """``import fsseam`` works where ``fcntl`` does not exist (Windows): the local backend is
    imported only when a local workspace is opened."""
    code = (
        "import sys; sys.modules['fcntl'] = None\n"
        "import fsseam\n"
        "ws = fsseam.Workspace('memory://no-fcntl-' + str(id(sys)))\n"
        "ctx = ws.context()\n"
        "assert ctx.tools.execute('write', {'file_path': '/a.txt', 'content': 'x'}).ok\n"
        "try:\n"
        "    fsseam.Workspace('/tmp')\n"
        "except fsseam.FsError as e:\n"
        "    print(e.code.value)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "FS_UNSUPPORTED"
