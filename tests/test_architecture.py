"""The import graph, drawn from the code: no circles, layers only point down.

The layer table and the checker are in ``tests/architecture.py``. The first tests run them on
the repository (``src`` and every ``backends/*/src``); the rest run them on small trees
written to ``tmp_path`` that hide a circle or an upward import the ways a checker can be
fooled (a re-exporting ``__init__``, ``TYPE_CHECKING``, a function-local or string import, a
store package), each of which must be caught.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
import sys
import textwrap
from functools import cache
from pathlib import Path

import pytest

from .architecture import (
    LAYERS,
    ROOT,
    Graph,
    Layer,
    cycles,
    layer_of,
    scan,
    source_roots,
    store_imports,
    unplaced,
    upward_edges,
    where_to_place,
)


@cache
def _repo() -> Graph:
    return scan(source_roots())


def test_no_import_circles() -> None:
    assert cycles(_repo()) == []


def test_layers_point_down() -> None:
    assert upward_edges(_repo()) == []


def test_every_module_has_a_layer() -> None:
    assert [where_to_place(m) for m in unplaced(_repo())] == []


def test_store_packages_are_imported_only_by_themselves() -> None:
    assert store_imports(_repo()) == []


def test_the_store_packages_are_scanned() -> None:
    stores = {m.split(".")[0] for m in _repo().modules if m.startswith("fsseam_")}
    assert stores == {"fsseam_s3", "fsseam_gcs", "fsseam_azure"}


def test_tools_never_import_a_backend() -> None:
    """Tools reach storage through ``ctx.fs`` only, though the layers would let them."""
    graph = _repo()
    wrong = sorted(
        graph.where(m, t) for m in graph.modules for t in graph.targets(m)
        if m.startswith("fsseam.tools") and t.startswith("fsseam.backends")
    )
    assert wrong == []


def test_integrations_reach_no_backend_or_seam_module() -> None:
    """An integration speaks to a Workspace, its contexts, tools and outcomes: what a
    backend or the seam holds inside stays there, though the layers would let them in."""
    graph = _repo()
    wrong = sorted(
        graph.where(m, t) for m in graph.modules for t in graph.targets(m)
        if m.startswith("fsseam.integrations")
        and t.startswith(("fsseam.backends", "fsseam.seam"))
    )
    assert wrong == []


def test_events_carry_no_backend_type() -> None:
    """What a plugin is told is values of the basics layer: a policy written against the
    events does not come to depend on a backend module through them."""
    graph = _repo()
    assert sorted(t for t in graph.targets("fsseam.events") if t.startswith("fsseam.")) == [
        "fsseam.diff", "fsseam.errors", "fsseam.versions"]


def test_backends_import_nothing_above_them() -> None:
    """Storage code speaks the contract's vocabulary only, narrower than its layers allow."""
    graph = _repo()
    allowed = ("fsseam.backends", "fsseam.errors", "fsseam.messages", "fsseam.versions",
               "fsseam.paths", "fsseam.oserrors")
    wrong = sorted(
        graph.where(m, t) for m in graph.modules for t in graph.targets(m)
        if m.startswith("fsseam.backends") and not t.startswith(allowed)
    )
    assert wrong == []


def test_every_layer_entry_names_a_module() -> None:
    """A stale entry (its modules moved or gone) would place nothing and hide nothing; it is
    deleted rather than left to mislead."""
    modules = list(_repo().modules)
    stale = [
        pattern
        for layer in LAYERS for pattern in (*layer.covers, *layer.exactly)
        if not any(layer_of(m, (Layer("x", covers=(pattern,)),)) == 0 for m in modules)
    ]
    assert stale == [], f"remove these entries from LAYERS in tests/architecture.py: {stale}"


def test_docs_show_the_layer_table() -> None:
    """docs/architecture.md lists the layers the test checks, bottom first, with their entries."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = [
        [c.strip() for c in line.strip().strip("|").split("|")]
        for line in text.splitlines()
        if re.match(r"\|\s*\d+\s*\|", line)
    ]
    assert [r[1] for r in rows] == [layer.name for layer in LAYERS]
    for row, layer in zip(rows, LAYERS, strict=True):
        for pattern in (*layer.covers, *layer.exactly):
            assert f"`{pattern}`" in row[2], (layer.name, pattern)


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


def test_the_summary_script_recomputes_the_graph(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("bench_architecture",
                                                  ROOT / "bench" / "architecture.py")
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main() == 0
    out = capsys.readouterr().out
    assert f"- modules: {len(_repo().modules)} " in out
    assert "- circles: 0\n" in out and "- imports against the layers: 0\n" in out
    assert all(f"| {layer.name} |" in out for layer in LAYERS)
    assert re.search(r"^\| s3 \| \d+ \| \d+ \|$", out, re.M)


# --- the checker cannot be fooled: synthetic trees -------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Graph:
    """Write ``files`` (paths under ``src/`` or ``backends/<store>/src/``) and scan them the
    way the repository is scanned."""
    for name, body in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(body))
    return scan(source_roots(tmp_path))


_CORE = {
    "src/fsseam/__init__.py": "from .seam import Seam\n",
    "src/fsseam/errors.py": "",
    "src/fsseam/seam.py": "from .errors import *\nclass Seam: ...\n",
    "src/fsseam/tools/__init__.py": "from .read import ReadTool\n",
    "src/fsseam/tools/read.py": "from ..seam import Seam\nclass ReadTool: ...\n",
}


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    graph = _tree(tmp_path, _CORE)
    assert (cycles(graph), upward_edges(graph), unplaced(graph)) == ([], [], [])
    assert graph.targets("fsseam.tools.read") == {"fsseam.seam"}


def test_a_cycle_through_a_reexporting_init_is_caught(tmp_path: Path) -> None:
    """The seam importing a name the tools package re-exports is a circle: the package's
    ``__init__`` imports the module that imports the seam."""
    graph = _tree(tmp_path, {**_CORE, "src/fsseam/seam.py": "from .tools import ReadTool\n"})
    assert cycles(graph) == [["fsseam.seam", "fsseam.tools", "fsseam.tools.read"]]
    assert upward_edges(graph) == [
        "src/fsseam/seam.py:1: fsseam.seam (seam) imports fsseam.tools (tools), a higher layer"
    ]


def test_a_cycle_inside_one_layer_through_init_is_caught(tmp_path: Path) -> None:
    """Same layer, so only the circle check sees it: ``from . import name`` in a module the
    package's ``__init__`` imports."""
    graph = _tree(tmp_path, {
        **_CORE,
        "src/fsseam/tools/__init__.py": "from .read import ReadTool\nfrom .base import Base\n",
        "src/fsseam/tools/base.py": "from . import ReadTool\nclass Base: ...\n",
    })
    assert upward_edges(graph) == []
    assert cycles(graph) == [["fsseam.tools", "fsseam.tools.base"]]


def test_a_cycle_through_the_init_a_submodule_import_runs_is_caught(tmp_path: Path) -> None:
    """Importing ``fsseam.tools.base`` runs ``fsseam/tools/__init__`` first, whose import of
    ``read`` comes back to the seam: an import error waiting to happen."""
    graph = _tree(tmp_path, {
        **_CORE,
        "src/fsseam/seam.py": "def later():\n    import fsseam.tools.base\n",
        "src/fsseam/tools/base.py": "",
    })
    assert cycles(graph) == [["fsseam.seam", "fsseam.tools", "fsseam.tools.read"]]


def test_a_top_level_module_is_scanned(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {**_CORE, "src/helper.py": "import fsseam.tools\n"})
    assert unplaced(graph) == ["helper"]
    assert graph.targets("helper") == {"fsseam.tools"}


def test_a_type_checking_cycle_is_caught(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {
        **_CORE,
        "src/fsseam/edits.py": """\
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from .outcomes import Outcome
            """,
        "src/fsseam/outcomes.py": "from fsseam.edits import Edit\n",
    })
    assert cycles(graph) == [["fsseam.edits", "fsseam.outcomes"]]


def test_function_local_and_string_imports_are_caught(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {
        **_CORE,
        "src/fsseam/errors.py": """\
            def sentence():
                from .tools.read import ReadTool
                return ReadTool
            """,
        "src/fsseam/paths.py": """\
            import importlib
            def lazy():
                return importlib.import_module(".workspace", __name__.rpartition(".")[0])
            def lazier():
                return __import__("fsseam.seam")
            """,
        "src/fsseam/workspace.py": "",
    })
    assert upward_edges(graph) == [
        "src/fsseam/errors.py:2: fsseam.errors (basics) imports fsseam.tools (tools), "
        "a higher layer",
        "src/fsseam/errors.py:2: fsseam.errors (basics) imports fsseam.tools.read (tools), "
        "a higher layer",
        "src/fsseam/paths.py:5: fsseam.paths (basics) imports fsseam.seam (seam), "
        "a higher layer",
        "src/fsseam/paths.py:3: fsseam.paths (basics) imports fsseam.workspace (surfaces), "
        "a higher layer",
    ]
    assert cycles(graph) == [
        ["fsseam.errors", "fsseam.seam", "fsseam.tools", "fsseam.tools.read"]
    ]


def test_a_store_package_importing_upward_is_caught(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {
        **_CORE,
        "src/fsseam/backends/__init__.py": "",
        "src/fsseam/backends/objectstore/__init__.py": "",
        "backends/x/src/fsseam_x/__init__.py": "from .backend import XBackend\n",
        "backends/x/src/fsseam_x/backend.py": """\
            from fsseam.backends.objectstore import Template
            from fsseam.seam import Seam
            def later():
                from fsseam import Workspace
            """,
        "backends/x/src/fsseam_x/testing.py": "from fsseam import Workspace\n",
    })
    assert upward_edges(graph) == [
        "backends/x/src/fsseam_x/backend.py:4: fsseam_x.backend (stores) imports fsseam "
        "(surfaces), a higher layer",
        "backends/x/src/fsseam_x/backend.py:2: fsseam_x.backend (stores) imports fsseam.seam "
        "(seam), a higher layer",
    ]
    assert store_imports(graph) == []


def test_the_core_importing_a_store_package_is_caught(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {
        **_CORE,
        "src/fsseam/seam.py": "def s3():\n    import fsseam_x.client\n",
        "src/fsseam/backends/__init__.py": "",
        "src/fsseam/backends/base.py": "from fsseam_x import XBackend\n",
        "backends/x/src/fsseam_x/__init__.py": "class XBackend: ...\n",
        "backends/x/src/fsseam_x/client.py": "",
        "backends/y/src/fsseam_y/__init__.py": "from fsseam_x.client import *\n",
    })
    assert store_imports(graph) == [
        "src/fsseam/backends/base.py:1: fsseam.backends.base imports the store package "
        "fsseam_x; only the store itself may (others find it by entry point)",
        "src/fsseam/seam.py:2: fsseam.seam imports the store package fsseam_x; only the "
        "store itself may (others find it by entry point)",
        "backends/y/src/fsseam_y/__init__.py:1: fsseam_y imports the store package "
        "fsseam_x; only the store itself may (others find it by entry point)",
    ]
    assert upward_edges(graph) == [
        "src/fsseam/backends/base.py:1: fsseam.backends.base (backend contract) imports "
        "fsseam_x (stores), a higher layer"
    ]


def test_a_new_module_fails_until_placed(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {**_CORE, "src/fsseam/planner.py": "",
                             "src/fsseam/tools/plans.py": ""})
    assert unplaced(graph) == ["fsseam.planner"]
    assert "add it (or its package) to LAYERS in tests/architecture.py" in where_to_place(
        "fsseam.planner"
    )


def test_a_module_and_a_package_of_one_name_fail(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"fsseam\.seam is both"):
        _tree(tmp_path, {**_CORE, "src/fsseam/seam/__init__.py": ""})


def test_layers_by_the_most_specific_entry() -> None:
    assert LAYERS[layer_of("fsseam.seam.commit") or 0].name == "seam"
    assert LAYERS[layer_of("fsseam.backends.local.io") or 0].name == "backends"
    assert LAYERS[layer_of("fsseam.backends.objectstore.keys") or 0].name == (
        "object-store template"
    )
    assert LAYERS[layer_of("fsseam.backends.base") or 0].name == "backend contract"
    assert LAYERS[layer_of("fsseam.messages.tools") or 0].name == "basics"
    assert LAYERS[layer_of("fsseam_s3.client") or 0].name == "stores"
    assert LAYERS[layer_of("fsseam_s3.testing") or 0].name == "testing"
    assert LAYERS[layer_of("fsseam") or 0].name == "surfaces"
    assert layer_of("fsseam.somethingnew") is None


def test_the_issue_case_on_a_copy_of_the_repository(tmp_path: Path) -> None:
    """``from .tools import ReadTool`` in the seam, on a copy of today's code, fails."""
    for src in source_roots():
        shutil.copytree(src, tmp_path / src.relative_to(ROOT),
                        ignore=shutil.ignore_patterns("__pycache__"))
    seam = tmp_path / "src" / "fsseam" / "seam"
    seam = seam / "__init__.py" if seam.is_dir() else seam.with_suffix(".py")
    seam.write_text(seam.read_text() + "\nfrom fsseam.tools import ReadTool\n")
    graph = scan(source_roots(tmp_path))
    assert any({"fsseam.tools", "fsseam.tools.registry"} <= set(c) for c in cycles(graph))
    assert any("imports fsseam.tools (tools), a higher layer" in e for e in upward_edges(graph))
