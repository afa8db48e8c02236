"""The import graph and the sizes, recomputed from the code: one command, markdown out.

    python bench/architecture.py

Prints the import graph (modules, edges, circles, what breaks the layers), the layers with
their modules, the cohesion counts (private names across modules, methods outside their
class, modules and functions over the bound: ``tests/cohesion.py``) with the longest
modules, and the lines of each store package (``backends/*``: its ``src`` and its
``tests``). The checks are the ones ``tests/test_architecture.py`` and
``tests/test_cohesion.py`` run.
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]


def _checker() -> ModuleType:
    return _load("fsseam_architecture_check", "architecture.py")


def _load(name: str, file: str) -> ModuleType:
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / file)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _lines(paths: list[Path]) -> int:
    return sum(len(p.read_text().splitlines()) for p in paths)


def graph_summary(arch: ModuleType) -> list[str]:
    graph = arch.scan(arch.source_roots(ROOT))
    edges = sum(len(graph.targets(m)) for m in graph.modules)
    circles = arch.cycles(graph)
    broken = [*arch.upward_edges(graph), *arch.store_imports(graph)]
    out = [
        "## Import graph",
        "",
        f"- modules: {len(graph.modules)} ({len(graph.packages)} packages)",
        f"- edges: {edges}",
        f"- circles: {len(circles)}",
        f"- imports against the layers: {len(broken)}",
        f"- modules in no layer: {len(arch.unplaced(graph))}",
        *(f"  - circle: {' -> '.join(c)}" for c in circles),
        *(f"  - {line}" for line in broken),
        *(f"  - {arch.where_to_place(m)}" for m in arch.unplaced(graph)),
        "",
        "## Layers (bottom first)",
        "",
        "| # | layer | modules | lines | imports from lower layers |",
        "| --- | --- | --- | --- | --- |",
    ]
    placed = {m: arch.layer_of(m) for m in graph.modules}
    size = Counter[int]()
    down = Counter[int]()
    count = Counter(placed.values())
    for module, path in graph.modules.items():
        layer = placed[module]
        size[layer] += _lines([path])
        down[layer] += sum(placed[t] != layer for t in graph.targets(module))
    for index, layer in enumerate(arch.LAYERS):
        out.append(f"| {index + 1} | {layer.name} | {count[index]} | {size[index]} "
                   f"| {down[index]} |")
    return out


def cohesion_summary() -> list[str]:
    """The counts the cohesion rule checks (``tests/cohesion.py``), by kind and module."""
    check = _load("fsseam_cohesion_check", "cohesion.py")
    arch = _checker()
    found = check.scan_tree(arch.source_roots(ROOT))
    files = arch.source_files(arch.source_roots(ROOT))
    longest = sorted(((arch.module_lines(p), m) for m, p in files.items()), reverse=True)[:5]
    kinds = Counter(b.kind for b in found)
    out = ["", "## Cohesion", "", "| what breaks the rule | count |", "| --- | --- |"]
    for kind in (check.PRIVATE_IMPORT, check.PRIVATE_ATTRIBUTE, check.METHOD_OUTSIDE,
                 check.FOREIGN_ATTRIBUTE, check.LONG_MODULE, check.LONG_FUNCTION):
        out.append(f"| {kind.rstrip(':')} | {kinds[kind]} |")
    out += [f"| private names of other packages, each explained | "
            f"{len(check.FOREIGN_PRIVATE)} |"]
    out += ["", "Longest modules:", "", "| module | lines |", "| --- | --- |"]
    out += [f"| {m} | {n} |" for n, m in longest]
    out += [f"  - {b}" for b in found]
    return out


def store_summary() -> list[str]:
    out = ["", "## Lines per store", "", "| store | src | tests |", "| --- | --- | --- |"]
    for store in sorted(p for p in (ROOT / "backends").iterdir() if (p / "src").is_dir()):
        src = _lines(sorted((store / "src").rglob("*.py")))
        tests = _lines(sorted((store / "tests").rglob("*.py")))
        out.append(f"| {store.name} | {src} | {tests} |")
    return out


def main() -> int:
    arch = _checker()
    print("\n".join([*graph_summary(arch), *cohesion_summary(), *store_summary()]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
