"""The repository stands alone: what its code and docs cite is in it."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SKIP_DIRS = {".git", ".venv", "site", "build", "dist", ".tox", ".mypy_cache", ".ruff_cache",
             ".pytest_cache", ".hypothesis", "__pycache__"}
SUFFIXES = {".py", ".md", ".toml", ".ini", ".yml", ".yaml", ".ipynb", ".txt", ".cfg", ""}

# Design notes that were never part of the repository (spelled in pieces so that this file
# does not match itself).
OUTSIDE = [name + ".md" for name in ("DES" + "IGN", "BACK" + "ENDS", "ANCH" + "ORS", "STY" + "LE")]


def _tracked() -> list[Path] | None:
    """The files git tracks or would track (ignored ones, such as installed tools, are not
    the repository's); None outside a git checkout."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
            cwd=ROOT, capture_output=True, check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    return [ROOT / name for name in out.decode().split("\0") if name]


def _files() -> Iterator[Path]:
    tracked = _tracked()
    for path in sorted(tracked if tracked is not None else ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if any(part in SKIP_DIRS or part.endswith(".egg-info") for part in rel.parts):
            continue
        if path.is_file() and path.suffix in SUFFIXES and path.stat().st_size < 2_000_000:
            yield path


def test_nothing_cites_design_notes_outside_the_repository() -> None:
    hits = []
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for name in OUTSIDE:
            if name in text:
                hits.append(f"{path.relative_to(ROOT)}: {name}")
    assert hits == []


def test_cited_docs_pages_exist() -> None:
    missing = []
    for path in _files():
        text = path.read_text(encoding="utf-8", errors="replace")
        for ref in re.findall(r"\bdocs/[\w./-]+\.(?:md|ipynb)\b", text):
            if not (ROOT / ref).is_file():
                missing.append(f"{path.relative_to(ROOT)}: {ref}")
    assert missing == []


@pytest.mark.parametrize(
    "page",
    [p for p in _files() if p.suffix == ".md" and p.parts[len(ROOT.parts)] != "docs"],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_relative_links_outside_the_docs_site_resolve(page: Path) -> None:
    """READMEs link into the tree; mkdocs --strict checks the links inside docs/."""
    text = page.read_text(encoding="utf-8")
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        if not (page.parent / target.split("#", 1)[0]).exists():
            broken.append(target)
    assert broken == []


def test_the_concepts_diagram_is_not_left_to_a_renderer_the_site_lacks() -> None:
    """mkdocs without a mermaid plugin shows a mermaid block as raw code."""
    for page in (ROOT / "docs").glob("*.md"):
        assert "```mermaid" not in page.read_text(encoding="utf-8"), page.name
