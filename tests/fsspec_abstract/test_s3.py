"""fsspec's abstract suites on S3: one moto server, one bucket per class (see the package)."""

from __future__ import annotations

from fsspec.tests.abstract import (
    AbstractCopyTests,
    AbstractGetTests,
    AbstractOpenTests,
    AbstractPipeTests,
    AbstractPutTests,
)

from .fixtures import S3Fixtures


class TestCopy(AbstractCopyTests, S3Fixtures):  # type: ignore[misc]
    pass


class TestGet(AbstractGetTests, S3Fixtures):  # type: ignore[misc]
    pass


class TestPut(AbstractPutTests, S3Fixtures):  # type: ignore[misc]
    pass


class TestOpen(AbstractOpenTests, S3Fixtures):  # type: ignore[misc]
    pass


class TestPipe(AbstractPipeTests, S3Fixtures):  # type: ignore[misc]
    pass
