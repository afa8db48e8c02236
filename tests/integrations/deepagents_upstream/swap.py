"""The fixture swap: deepagents' ``FilesystemBackend`` as its own tests build it, served by
fsseam's ``FsseamBackend`` on a workspace rooted at the same directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from fsseam import Workspace
from fsseam.integrations.deepagents import FsseamBackend


class FilesystemBackend(FsseamBackend):
    """``FilesystemBackend(root_dir=..., virtual_mode=True)`` on fsseam."""

    # deepagents' tests patch their backend's ripgrep engine out; fsseam has one search.
    _ripgrep_search = None

    def __init__(self, root_dir: str | Path | None = None, virtual_mode: bool | None = None,
                 **options: Any) -> None:
        if not virtual_mode:
            pytest.skip("host paths (virtual_mode=False): a fsseam workspace is always rooted, "
                        "its paths are virtual")
        if options:
            pytest.skip(f"options of deepagents' own backend: {sorted(options)}")
        super().__init__(Workspace(str(root_dir)), owner="upstream")
