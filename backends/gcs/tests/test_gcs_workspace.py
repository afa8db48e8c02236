"""End to end: the agent tools on a gs:// workspace (the shared tools conformance)."""

from __future__ import annotations

from typing import Any

import pytest

from fsseam import Workspace
from fsseam.testing import ToolsConformance


class TestGcsTools(ToolsConformance):
    @pytest.fixture
    def workspace(self, gcs_bucket: str, gcs_options: dict[str, Any]) -> Workspace:
        return Workspace(f"gs://{gcs_bucket}/proj", storage_options=dict(gcs_options))
