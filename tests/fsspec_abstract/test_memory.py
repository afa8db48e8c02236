"""fsspec's abstract suites on memory:// (see the package docstring)."""

from __future__ import annotations

from fsspec.tests.abstract import (
    AbstractCopyTests,
    AbstractGetTests,
    AbstractOpenTests,
    AbstractPipeTests,
    AbstractPutTests,
)

from .fixtures import MemoryFixtures


class TestCopy(AbstractCopyTests, MemoryFixtures):  # type: ignore[misc]
    pass


class TestGet(AbstractGetTests, MemoryFixtures):  # type: ignore[misc]
    pass


class TestPut(AbstractPutTests, MemoryFixtures):  # type: ignore[misc]
    pass


class TestOpen(AbstractOpenTests, MemoryFixtures):  # type: ignore[misc]
    pass


class TestPipe(AbstractPipeTests, MemoryFixtures):  # type: ignore[misc]
    pass
