from __future__ import annotations

import pytest

from .fixtures import deselect


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselect(items, config)
