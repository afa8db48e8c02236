"""The fixtures fsspec's abstract suites ask for, over ``ctx.filesystem()``.

One workspace and one owner per test class (the store is made once); every test works in
a directory of its own (``fs_path``), so what one test leaves (an empty local directory:
the guarded filesystem makes none and removes none) never meets the next.
"""

from __future__ import annotations

import itertools
import posixpath
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fsspec.tests.abstract import AbstractFixtures

from fsseam import Workspace
from fsseam.filesystem import GuardedFileSystem

__all__ = ["LocalFixtures", "MemoryFixtures", "NOT_APPLICABLE", "S3Fixtures", "deselect"]

_count = itertools.count()

NOT_APPLICABLE: dict[str, str] = {}
"""Test name (its function name, any parameters) -> why it cannot apply to a guarded
filesystem; each is listed in docs/filesystem.md."""


def deselect(items: list[pytest.Item], config: pytest.Config) -> None:
    """Drop the tests of ``NOT_APPLICABLE`` from this directory's collection."""
    keep, drop = [], []
    for item in items:
        name = getattr(item, "originalname", item.name)
        gone = "fsspec_abstract" in str(item.path) and name in NOT_APPLICABLE
        (drop if gone else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


class _Guarded(AbstractFixtures):  # type: ignore[misc]
    """What every store shares: forward slashes, no empty directories (directories are
    implied by their files, as on an object store), a fresh directory per test."""

    @pytest.fixture
    def fs_join(self) -> Callable[..., str]:
        return posixpath.join

    @pytest.fixture
    def fs_path(self) -> str:
        return f"/t{next(_count)}"

    @pytest.fixture
    def supports_empty_directories(self) -> bool:
        return False


class MemoryFixtures(_Guarded):
    @pytest.fixture(scope="class")
    @classmethod
    def fs(cls) -> Iterator[GuardedFileSystem]:
        name = f"memory://fsseam-abstract-{uuid.uuid4().hex[:8]}"
        yield Workspace(name).context("abstract-suite").filesystem()


class LocalFixtures(_Guarded):
    @pytest.fixture(scope="class")
    @classmethod
    def fs(cls, tmp_path_factory: pytest.TempPathFactory) -> Iterator[GuardedFileSystem]:
        root: Path = tmp_path_factory.mktemp("guarded")
        yield Workspace(str(root)).context("abstract-suite").filesystem()


class S3Fixtures(_Guarded):
    @pytest.fixture(scope="class")
    @classmethod
    def fs(cls, moto_s3: Any) -> Iterator[GuardedFileSystem]:
        bucket = f"abstract-{uuid.uuid4().hex[:8]}"
        moto_s3.client().create_bucket(Bucket=bucket)
        ws = Workspace(f"s3://{bucket}", moto_s3.storage_options())
        yield ws.context("abstract-suite").filesystem()
