"""The import graph and the layer table, drawn from the code.

This module is the single source of truth for fsseam's layers: :data:`LAYERS` lists them
from the bottom up, :func:`scan` builds the import graph of any tree of source roots, and the
checks (:func:`cycles`, :func:`upward_edges`, :func:`unplaced`, :func:`store_imports`) say what
is wrong with it. ``tests/test_architecture.py`` runs them on the repository and on small
synthetic trees that prove they cannot be fooled; ``bench/architecture.py`` prints the same
graph as a summary. Plain Python, no pytest, so that both can load it.

What counts as an edge, and why:

- every ``import`` and ``from ... import`` anywhere in a module: at the top, under
  ``TYPE_CHECKING``, inside a function. A circle that only typing or laziness hides is still
  a circle in the design, and it is one refactor away from an import error;
- ``importlib.import_module("...")`` and ``__import__("...")`` with a literal name, relative
  names resolved against ``package=__name__``: a string import is an import;
- ``from pkg import name`` is an edge to the submodule ``pkg.name`` when there is one, else
  to the package ``pkg`` itself;
- a package is a node like any module, and its ``__init__``'s imports are its edges: an
  import of the package reaches what the package re-exports, so a circle through a
  re-exporting ``__init__`` is a circle;
- importing ``pkg.mod`` also reaches ``pkg``: Python runs ``pkg/__init__`` first, and a
  circle through what it imports fails at import time just the same. Not for the
  importer's own packages (already running) nor for a top-level package (see
  :func:`_packages_run`).

Entry points (``importlib.metadata``) are not edges: they are how the core finds store
packages without importing them.
"""

from __future__ import annotations

import ast
import fnmatch
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Layer:
    """One layer: ``covers`` names a module and everything under it (``fsseam.seam`` covers
    ``fsseam.seam.commit``; ``*`` matches one dotted part, ``fsseam_*``), ``exactly`` names
    one module and nothing under it (the root package ``fsseam``)."""

    name: str
    covers: tuple[str, ...] = ()
    exactly: tuple[str, ...] = ()
    why: str = ""


# Bottom to top: a module may import modules of its own layer or of any layer below, never
# above. The most specific entry places a module (``fsseam.backends.objectstore`` beats
# ``fsseam.backends``), so a new module inside a listed package needs no edit here.
LAYERS: tuple[Layer, ...] = (
    Layer(
        "basics",
        covers=(
            "fsseam.errors", "fsseam.messages", "fsseam.versions", "fsseam.paths",
            "fsseam.text", "fsseam.limits", "fsseam.oserrors", "fsseam.diff", "fsseam.globs",
            "fsseam.deadline", "fsseam.calling",
        ),
        why="values, sentences and pure functions on text and paths: no I/O, no state",
    ),
    Layer(
        "backend contract",
        covers=("fsseam.backends.base", "fsseam.backends.digests",
                "fsseam.backends.registry"),
        why="the Backend base class and its optional operations, digests, protocol -> class",
    ),
    Layer(
        "object-store template",
        covers=("fsseam.backends.objectstore",),
        why="what every object store shares; a store package supplies its client",
    ),
    Layer(
        "backends",
        covers=("fsseam.backends", "fsseam.branches", "fsseam.audit"),
        why="the built-in backends and the wrappers over any backend (mounts, kept history, "
        "branches, the audit trail)",
    ),
    Layer(
        "stores",
        covers=("fsseam_*",),
        why="store packages (backends/*/src): the contract and the template, never the core",
    ),
    Layer(
        "gate",
        covers=("fsseam.events", "fsseam.gate", "fsseam.policy", "fsseam.observations"),
        why="the events a change announces (values of the basics layer), the pluggy gate, "
        "the observation policy and the stores that keep what each owner observed",
    ),
    Layer(
        "seam",
        covers=(
            "fsseam.seam", "fsseam.changes", "fsseam.patches", "fsseam.grep",
            "fsseam.conflicts", "fsseam.edits", "fsseam.outcomes",
            "fsseam.doccache", "fsseam.index", "fsseam.ignores",
        ),
        why="ctx.fs: reading, finding, change plans and history over a backend, via the gate",
    ),
    Layer(
        "tools",
        covers=("fsseam.tools",),
        why="the model-facing tools, their schemas and rendering, and the registry",
    ),
    Layer(
        "surfaces",
        covers=(
            "fsseam.workspace", "fsseam.spec", "fsseam.mcp", "fsseam.cli", "fsseam.demo",
            "fsseam.integrations", "fsseam.pytest_plugin", "fsseam.filesystem",
        ),
        exactly=("fsseam",),
        why="what users hold: the Workspace, the public API, MCP, CLI, agent frameworks, "
        "the fsspec filesystem",
    ),
    Layer(
        "testing",
        covers=("fsseam.testing", "fsseam_*.testing"),
        why="suites, fault proxies and emulators for stores and for agents' tests",
    ),
)

# The fsseam distribution does not depend on any store package; it finds them by entry
# point. Each import it still makes of one is listed here with the reason it is harmless.
STORE_IMPORTS_ALLOWED: dict[tuple[str, str], str] = {
    ("fsseam.demo", "fsseam_s3"): "the S3 demo probes for the optional adapter to print an "
    "install hint when it is missing; the backend itself is opened by entry point",
}


@dataclass
class Graph:
    """Modules (dotted name -> file), which of them are packages, and the import edges
    (importer -> imported -> first line of the import)."""

    modules: dict[str, Path] = field(default_factory=dict)
    packages: set[str] = field(default_factory=set)
    edges: dict[str, dict[str, int]] = field(default_factory=dict)
    base: Path = ROOT

    def targets(self, module: str) -> set[str]:
        return set(self.edges.get(module, {}))

    def where(self, module: str, target: str) -> str:
        shown = self.modules[module].relative_to(self.base)
        return f"{shown}:{self.edges[module][target]}"


def source_roots(root: Path = ROOT) -> list[Path]:
    """The repository's source roots: ``src`` and every store's ``backends/*/src``."""
    return [root / "src", *sorted(root.glob("backends/*/src"))]


def _modules(roots: Iterable[Path]) -> Iterator[tuple[str, Path, bool]]:
    for src in roots:
        for single in sorted(src.glob("*.py")):
            yield single.stem, single, False
        for init in sorted(src.glob("*/__init__.py")):
            for path in sorted(init.parent.rglob("*.py")):
                parts = list(path.relative_to(src).with_suffix("").parts)
                is_package = parts[-1] == "__init__"
                if is_package:
                    parts.pop()
                yield ".".join(parts), path, is_package


def scan(roots: Iterable[Path]) -> Graph:
    """The import graph of every package found directly under each of ``roots``; files are
    shown relative to the folder that holds them all."""
    roots = list(roots)
    graph = Graph(base=Path(os.path.commonpath([r.parent for r in roots])))
    for name, path, is_package in _modules(roots):
        if name in graph.modules:  # Python would import one and silently ignore the other
            raise ValueError(f"{name} is both {graph.modules[name]} and {path}")
        graph.modules[name] = path
        if is_package:
            graph.packages.add(name)
    for name, path in graph.modules.items():
        package = name if name in graph.packages else name.rpartition(".")[0]
        edges: dict[str, int] = {}
        for target, line in _imports(ast.parse(path.read_text(), str(path)), package):
            hit = _resolve(graph, target)
            if hit is None:
                continue
            for reached in (hit, *_packages_run(graph, hit, name)):
                if reached != name:
                    edges.setdefault(reached, line)
        graph.edges[name] = edges
    return graph


def _packages_run(graph: Graph, target: str, importer: str) -> list[str]:
    """The packages whose ``__init__`` an import of ``target`` runs on the importer's
    behalf: those above ``target`` that are not above the importer (already running), and
    not a top-level package. A top-level ``__init__`` runs for every import of anything in
    its distribution; counted, it would tie every module into one circle. Importing it by
    name is an edge like any other (and ``fsseam``'s places it among the surfaces)."""
    parts = target.split(".")
    mine = importer.split(".")
    return [
        above for depth in range(2, len(parts))
        if (above := ".".join(parts[:depth])) in graph.packages and mine[:depth] != parts[:depth]
    ]


def _absolute(module: str | None, level: int, package: str) -> str:
    if not level:
        return module or ""
    base = package.split(".")
    base = base[: len(base) - level + 1]
    return ".".join([*base, module] if module else base)


def _imports(tree: ast.AST, package: str) -> Iterator[tuple[str | tuple[str, str], int]]:
    """Every import in ``tree``: a dotted name, or (module, name) for ``from module import
    name`` (a submodule if there is one, else the module)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node.module, node.level, package)
            for alias in node.names:
                yield (base, alias.name), node.lineno
        elif isinstance(node, ast.Call) and _is_dynamic_import(node.func) and node.args:
            first = node.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str):
                text = first.value
                level = len(text) - len(text.lstrip("."))
                yield _absolute(text[level:] or None, level, package), node.lineno


def _is_dynamic_import(func: ast.expr) -> bool:
    if isinstance(func, ast.Name):
        return func.id in {"__import__", "import_module"}
    return isinstance(func, ast.Attribute) and func.attr == "import_module"


def _resolve(graph: Graph, target: str | tuple[str, str]) -> str | None:
    """The scanned module an import reaches, or None for anything outside the scan."""
    if isinstance(target, tuple):
        module, name = target
        if f"{module}.{name}" in graph.modules:
            return f"{module}.{name}"
        target = module
    while target and target not in graph.modules:
        target = target.rpartition(".")[0]
    return target or None


def _matches(pattern: str, module: str, *, exact: bool) -> bool:
    want, have = pattern.split("."), module.split(".")
    if len(have) < len(want) or (exact and len(have) != len(want)):
        return False
    return all(fnmatch.fnmatchcase(h, w) for h, w in zip(have, want, strict=False))


def layer_of(module: str, layers: tuple[Layer, ...] = LAYERS) -> int | None:
    """The index in ``layers`` of the most specific entry naming ``module``."""
    best: tuple[int, int, int] | None = None  # (dotted parts, literal parts, layer)
    for index, layer in enumerate(layers):
        entries = [(p, False) for p in layer.covers] + [(p, True) for p in layer.exactly]
        for pattern, exact in entries:
            if _matches(pattern, module, exact=exact):
                parts = pattern.split(".")
                rank = (len(parts), sum("*" not in p for p in parts), index)
                if best is None or rank[:2] > best[:2]:
                    best = rank
    return None if best is None else best[2]


def unplaced(graph: Graph, layers: tuple[Layer, ...] = LAYERS) -> list[str]:
    return sorted(m for m in graph.modules if layer_of(m, layers) is None)


def upward_edges(graph: Graph, layers: tuple[Layer, ...] = LAYERS) -> list[str]:
    """Each import that points to a higher layer, as a sentence naming file and line."""
    wrong = []
    for module in sorted(graph.modules):
        low = layer_of(module, layers)
        for target in sorted(graph.targets(module)):
            high = layer_of(target, layers)
            if low is not None and high is not None and high > low:
                wrong.append(
                    f"{graph.where(module, target)}: {module} ({layers[low].name}) imports "
                    f"{target} ({layers[high].name}), a higher layer"
                )
    return wrong


def store_imports(
    graph: Graph, allowed: dict[tuple[str, str], str] = STORE_IMPORTS_ALLOWED
) -> list[str]:
    """Imports of a store package (``fsseam_*``) from outside it: from the fsseam
    distribution, which finds stores by entry point, or from another store."""
    wrong = []
    for module in sorted(graph.modules):
        home = module.split(".")[0]
        for target in sorted(graph.targets(module)):
            store = target.split(".")[0]
            if store == home or not store.startswith("fsseam_"):
                continue
            if (module, store) not in allowed:
                wrong.append(
                    f"{graph.where(module, target)}: {module} imports the store package "
                    f"{store}; only the store itself may (others find it by entry point)"
                )
    return wrong


def cycles(graph: Graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph.targets(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.targets(child)))))
                elif child in on_stack:
                    low[v] = min(low[v], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                component = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    component.append(w)
                    if w == v:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


def where_to_place(module: str) -> str:
    return (
        f"{module} is in no layer: add it (or its package) to LAYERS in tests/architecture.py, "
        "in the lowest layer whose modules it may import, and to the table in "
        "docs/architecture.md"
    )


# --- files and lines, for bench/architecture.py --------------------------------------------


def source_files(roots: Iterable[Path]) -> dict[str, Path]:
    """Every module under ``roots`` by its dotted name."""
    return {name: path for name, path, _ in _modules(roots)}


def module_lines(path: Path) -> int:
    return len(path.read_text().splitlines())
