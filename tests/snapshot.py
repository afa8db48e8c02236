"""Snapshot files under tests/snapshots; FSSEAM_UPDATE_SNAPSHOTS=1 rewrites them."""

from __future__ import annotations

import os
from pathlib import Path

DIR = Path(__file__).parent / "snapshots"


def check(name: str, text: str) -> None:
    path = DIR / name
    if os.environ.get("FSSEAM_UPDATE_SNAPSHOTS") == "1":
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"missing snapshot {name}: run with FSSEAM_UPDATE_SNAPSHOTS=1"
    assert text == path.read_text(encoding="utf-8"), f"snapshot {name} differs"
