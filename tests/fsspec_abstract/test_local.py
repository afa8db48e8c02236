"""fsspec's abstract suites on local disk (see the package docstring)."""

from __future__ import annotations

from fsspec.tests.abstract import (
    AbstractCopyTests,
    AbstractGetTests,
    AbstractOpenTests,
    AbstractPipeTests,
    AbstractPutTests,
)

from .fixtures import LocalFixtures


class TestCopy(AbstractCopyTests, LocalFixtures):  # type: ignore[misc]
    pass


class TestGet(AbstractGetTests, LocalFixtures):  # type: ignore[misc]
    pass


class TestPut(AbstractPutTests, LocalFixtures):  # type: ignore[misc]
    pass


class TestOpen(AbstractOpenTests, LocalFixtures):  # type: ignore[misc]
    pass


class TestPipe(AbstractPipeTests, LocalFixtures):  # type: ignore[misc]
    pass
