"""Retries without the wait: a retry loop's backoff shortened, its decisions kept."""

from __future__ import annotations

import asyncio
from types import ModuleType
from typing import Any


class _FastSleepAsyncio:
    """``asyncio`` with ``sleep`` capped at 1 ms; everything else delegated."""

    def __getattr__(self, name: str) -> Any:
        return getattr(asyncio, name)

    @staticmethod
    async def sleep(delay: float, result: Any = None) -> Any:
        await asyncio.sleep(min(delay, 0.001))
        return result


def shorten_sleeps(monkeypatch: Any, *modules: ModuleType) -> None:
    """Make each module's ``asyncio.sleep`` (a retry loop's backoff) last at most 1 ms, for
    the test using ``monkeypatch``."""
    for module in modules:
        monkeypatch.setattr(module, "asyncio", _FastSleepAsyncio())
