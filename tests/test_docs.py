"""Docs that are generated must match what the code says."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_tools_reference_matches_schemas() -> None:
    spec = importlib.util.spec_from_file_location("gen", ROOT / "scripts" / "gen_tool_docs.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert (ROOT / "docs" / "tools.md").read_text() == mod.render(), (
        "docs/tools.md is out of date: python scripts/gen_tool_docs.py > docs/tools.md"
    )
