"""The import graph and the sizes, recomputed from the code: one command, markdown out.

    python bench/architecture.py

Prints the import graph (modules, edges, circles, what breaks the layers), the layers with
their modules, the modules over 300 lines and the functions over 60, and the lines of each
store package (``backends/*``: its ``src`` and its ``tests``). The layer table and the
graph are the ones ``tests/test_architecture.py`` checks (``tests/architecture.py``).
"""

from __future__ import annotations

import importlib.util
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
LONG_MODULE = 300
LONG_FUNCTION = 60


def _checker() -> ModuleType:
    name = "fsseam_architecture_check"
    spec = importlib.util.spec_from_file_location(name, ROOT / "tests" / "architecture.py")
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


def size_summary(arch: ModuleType) -> list[str]:
    files = arch.source_files(arch.source_roots(ROOT))
    long_modules = sorted(
        ((arch.module_lines(p), m) for m, p in files.items()
         if arch.module_lines(p) > LONG_MODULE), reverse=True)
    long_functions = sorted(
        ((n, f"{m}:{name}") for m, p in files.items()
         for name, _, n in arch.function_lengths(p) if n > LONG_FUNCTION), reverse=True)
    out = ["", f"## Modules over {LONG_MODULE} lines", "", "| module | lines |", "| --- | --- |"]
    out += [f"| {m} | {n} |" for n, m in long_modules]
    out += ["", f"## Functions over {LONG_FUNCTION} lines", "", "| function | lines |",
            "| --- | --- |"]
    out += [f"| {f} | {n} |" for n, f in long_functions]
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
    print("\n".join([*graph_summary(arch), *size_summary(arch), *store_summary()]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
