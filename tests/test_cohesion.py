"""The cohesion rule on the repository, and on small trees that break it each way it can be
broken (the checker is ``tests/cohesion.py``).

A class lives whole in its module; a private name never crosses a module; a module stays
readable in one sitting (about 1,000 lines) and a function too (about 80). The rule replaces
a size cap (400/60) that was met by splitting classes across files, which is what the rule
now forbids.
"""

from __future__ import annotations

import textwrap
from functools import cache
from pathlib import Path

from .architecture import source_roots
from .cohesion import (
    FOREIGN_ATTRIBUTE,
    FOREIGN_PRIVATE,
    LONG_FUNCTION,
    LONG_MODULE,
    MAX_FUNCTION_LINES,
    MAX_MODULE_LINES,
    METHOD_OUTSIDE,
    PRIVATE_ATTRIBUTE,
    PRIVATE_IMPORT,
    Breach,
    scan_tree,
)


@cache
def _repo() -> tuple[Breach, ...]:
    return tuple(scan_tree(source_roots()))


def test_no_private_name_crosses_a_module() -> None:
    crossing = [str(b) for b in _repo() if b.kind in {PRIVATE_IMPORT, PRIVATE_ATTRIBUTE}]
    assert crossing == [], (
        "a name another module needs is public where it lives, or the two modules merge"
    )


def test_every_method_is_inside_its_class() -> None:
    outside = [str(b) for b in _repo() if b.kind == METHOD_OUTSIDE]
    assert outside == [], "write the method in the class body, in the class's module"


def test_modules_and_functions_read_in_one_sitting() -> None:
    long = [str(b) for b in _repo() if b.kind in {LONG_MODULE, LONG_FUNCTION}]
    assert long == [], (
        f"over {MAX_MODULE_LINES} lines a module, or {MAX_FUNCTION_LINES} a function: find "
        "the second concept in it and give it its own home"
    )


def test_private_names_of_other_packages_are_each_explained() -> None:
    foreign = sorted({b.name for b in _repo() if b.kind == FOREIGN_ATTRIBUTE})
    assert foreign == [], "add each, with why it cannot be avoided, to FOREIGN_PRIVATE"
    assert all(why.strip() for why in FOREIGN_PRIVATE.values())


def test_every_foreign_private_name_listed_is_still_used() -> None:
    used = {b.name for b in scan_tree(source_roots(), honour_foreign=False)
            if b.kind == FOREIGN_ATTRIBUTE}
    stale = sorted(set(FOREIGN_PRIVATE) - used)
    assert stale == [], "no longer used: remove from FOREIGN_PRIVATE in tests/cohesion.py"


# -- the checker cannot be fooled ---------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> list[str]:
    root = tmp_path / "src"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return [str(b) for b in scan_tree([root])]


def test_a_clean_tree_passes(tmp_path: Path) -> None:
    assert _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": """\
            class Store:
                def __init__(self):
                    self._items = {}

                def put(self, key, value):
                    self._items[key] = value

                def merged(self, other: "Store"):
                    return {**self._items, **other._items}   # same class, same module


            def _helper():
                return Store()._items
            """,
        "pkg/b.py": """\
            from .a import Store
            from collections import namedtuple
            Pair = namedtuple("Pair", "x y")

            def use():
                s = Store()
                s.put("k", 1)
                return Pair(1, 2)._replace(x=3)
            """,
    }) == []


def test_a_private_name_imported_is_caught(tmp_path: Path) -> None:
    found = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "def _helper():\n    return 1\n",
        "pkg/b.py": "from .a import _helper\n",
        "pkg/c.py": "from pkg.a import _helper as helper\n",
        "pkg/d.py": "import pkg.a\nx = pkg.a._helper()\n",
    })
    assert found == [
        f"pkg.b:1: {PRIVATE_IMPORT} pkg.a._helper",
        f"pkg.c:1: {PRIVATE_IMPORT} pkg.a._helper",
        f"pkg.d:2: {PRIVATE_IMPORT} pkg.a._helper",
    ]


def test_a_private_attribute_of_another_modules_object_is_caught(tmp_path: Path) -> None:
    found = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": """\
            class Seam:
                def __init__(self):
                    self._gate = None
            """,
        "pkg/b.py": """\
            def write(fs):
                fs._gate.dispatch()          # reached from outside Seam's module
                return fs.gate
            """,
    })
    assert found == [f"pkg.b:2: {PRIVATE_ATTRIBUTE} _gate"]


def test_a_method_outside_its_class_is_caught(tmp_path: Path) -> None:
    found = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/parts.py": """\
            from typing import Any

            def read(self, key):
                return key

            def write(store: Any, key):
                return key

            def typed(self: Any, key):
                return key
            """,
        "pkg/store.py": """\
            from .parts import read, typed

            class Store:
                read = read
                size = 3
                Error = ValueError

                def own(self):
                    return 1

                alias = own

            Store.typed = typed
            """,
    })
    assert found == [
        f"pkg.parts:3: {METHOD_OUTSIDE} read(self, ...)",
        f"pkg.parts:9: {METHOD_OUTSIDE} typed(self, ...)",
        f"pkg.parts:9: {METHOD_OUTSIDE} typed(self: Any)",
        f"pkg.store:4: {METHOD_OUTSIDE} Store.read = read",
        f"pkg.store:13: {METHOD_OUTSIDE} Store.typed = ...",
    ]


def test_a_long_module_and_a_long_function_are_caught(tmp_path: Path) -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(MAX_FUNCTION_LINES))
    source = f"def long():\n{body}\n\n\nclass K:\n    def short(self):\n        pass\n"
    padding = "\n" * (MAX_MODULE_LINES + 1 - source.count("\n"))
    found = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/m.py": source + padding})
    assert found == [
        f"pkg.m:1: {LONG_FUNCTION} long ({MAX_FUNCTION_LINES + 1} lines)",
        f"pkg.m:1: {LONG_MODULE} {MAX_MODULE_LINES + 1} lines",
    ]


def test_a_private_name_of_another_package_is_told_apart(tmp_path: Path) -> None:
    found = _tree(tmp_path, {
        "pkg/__init__.py": "",
        "pkg/a.py": "import sys\nfrom fsspec.utils import _unstrip\nframe = sys._getframe(0)\n",
    })
    assert found == [
        f"pkg.a:2: {FOREIGN_ATTRIBUTE} fsspec.utils._unstrip",
        f"pkg.a:3: {FOREIGN_ATTRIBUTE} sys._getframe",
    ]
