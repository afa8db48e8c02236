"""Each integration page's install line runs its own example, as a newcomer would do it.

One fresh venv made by ``python -m venv`` with the pip it ships (never upgraded), for
every integration page: a venv per page would cost a full resolution each (minutes). In
page order, the test runs the page's ``pip install`` lines (read from its ```bash blocks)
in a copy of this checkout, then the page's blocks with that venv's ``python`` and
``fsseam`` (tests/docsnippets.py, run by the venv's interpreter, without this checkout on
``PYTHONPATH``), offline but for the session's moto server. As the venv is shared, a page
also has what the pages before it installed.

It installs from the package registries and takes minutes (about 11 on a loaded 2-core
machine), more than the suite's budget, so it runs with ``FSSEAM_INSTALL_TESTS=1``: CI
runs it as a step of its own after the suite (.ci/run); elsewhere it is skipped, saying so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .docsnippets import blocks, dump, install_lines
from .test_docs_snippets import PAGES, ROOT, Page, page_steps, page_values

INTEGRATIONS = sorted(p.relative_to(ROOT).as_posix()
                      for p in (ROOT / "docs" / "integrations").glob("*.md"))

pytestmark = [
    pytest.mark.skipif(
        not os.environ.get("FSSEAM_INSTALL_TESTS"),
        reason="makes a venv and installs from the package registries (minutes): runs with "
               "FSSEAM_INSTALL_TESTS=1 (a step of its own in CI)",
    ),
    # deepagents' line alone took 318 s on a loaded 2-core machine: past the suite's 300.
    pytest.mark.timeout(1800),
]

_COPY_IGNORE = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "node_modules",
    ".hypothesis", "site",
)


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """(the venv, a copy of this checkout to install from: pip builds in the tree)."""
    base = tmp_path_factory.mktemp("install")
    checkout = base / "checkout"
    shutil.copytree(ROOT, checkout, ignore=_COPY_IGNORE)
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True,
                   stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    yield base / "venv", checkout


def _env(venv: Path) -> dict[str, str]:
    drop = ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("PYTEST_")}
    env["PATH"] = os.pathsep.join([str(venv / "bin"), env.get("PATH", "")])
    return env


@pytest.mark.parametrize("name", INTEGRATIONS)
def test_install_line_runs_the_page(name: str, venv: tuple[Path, Path], tmp_path: Path,
                                    request: pytest.FixtureRequest,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    env_dir, checkout = venv
    lines = install_lines(blocks(ROOT / name, name))
    assert lines, f"{name} has no ```bash block with a pip install line"
    started = time.monotonic()
    for line in lines:
        done = subprocess.run(["bash", "-e", "-c", line], cwd=checkout, env=_env(env_dir),
                              stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=900)
        assert done.returncode == 0, f"{name}: {line}\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
    print(f"{name}: {lines} took {time.monotonic() - started:.0f} s")

    values = page_values(PAGES.get(name, Page()), tmp_path, request, monkeypatch)
    dump(page_steps(name, values), tmp_path / "plan.json")
    runner = tmp_path / "docsnippets.py"
    shutil.copyfile(Path(__file__).with_name("docsnippets.py"), runner)
    done = subprocess.run([str(env_dir / "bin" / "python"), str(runner), "plan.json"],
                          cwd=tmp_path, env=_env(env_dir), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{name}\n{done.stdout[-4000:]}{done.stderr[-4000:]}"
