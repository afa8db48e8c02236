from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    d = tmp_path / "root"
    d.mkdir()
    yield d
    os.chmod(tmp_path, 0o755)
