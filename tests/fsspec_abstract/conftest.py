from __future__ import annotations

import pytest

from .fixtures import deselect, local_guarded, memory_guarded, s3_guarded

__all__ = ["local_guarded", "memory_guarded", "s3_guarded"]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselect(items, config)
