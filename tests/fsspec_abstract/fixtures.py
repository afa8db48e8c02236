"""The fixtures fsspec's abstract suites ask for, over ``ctx.filesystem()``.

One workspace and one owner per store and module (the store and its client are made
once; the fixtures are in ``conftest.py``); every test works in
a directory of its own (``fs_path``), so what one test leaves (an empty local directory:
the guarded filesystem makes none and removes none) never meets the next.
"""

from __future__ import annotations

import itertools
import posixpath
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fsspec.tests.abstract import AbstractFixtures

from fsseam import Workspace
from fsseam.filesystem import GuardedFileSystem

__all__ = [
    "NOT_APPLICABLE", "S3_FOR_TIME", "LocalFixtures", "MemoryFixtures", "S3Fixtures", "deselect",
]

_count = itertools.count()

NOT_APPLICABLE: dict[str, str] = {}
"""Test name -> why it cannot apply to a guarded filesystem (deselected on every store,
tabled in docs/filesystem.md). None so far: the owner that writes a file has observed the
version it wrote, so the suites' put-then-put-again goes through."""

S3_FOR_TIME = ("glob", "directory_to_", "directory_recursive")
"""On S3, the tests whose names hold one of these run on memory and local disk only: they
repeat fsspec's own path expansion over ``find`` (the same code on every store) with dozens
of requests each, at seconds a test against moto."""


def _dropped(item: pytest.Item) -> bool:
    if "fsspec_abstract" not in str(item.path):
        return False
    name = getattr(item, "originalname", item.name)
    if name in NOT_APPLICABLE:
        return True
    return item.path.name == "test_s3.py" and any(part in name for part in S3_FOR_TIME)


def deselect(items: list[pytest.Item], config: pytest.Config) -> None:
    """Drop the tests of ``NOT_APPLICABLE`` (and on S3 those of ``S3_FOR_TIME``)."""
    keep = [i for i in items if not _dropped(i)]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if _dropped(i)])
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
    def fs(cls, memory_guarded: GuardedFileSystem) -> GuardedFileSystem:
        return memory_guarded


class LocalFixtures(_Guarded):
    @pytest.fixture(scope="class")
    @classmethod
    def fs(cls, local_guarded: GuardedFileSystem) -> GuardedFileSystem:
        return local_guarded


class S3Fixtures(_Guarded):
    @pytest.fixture(scope="class")
    @classmethod
    def fs(cls, s3_guarded: GuardedFileSystem) -> GuardedFileSystem:
        return s3_guarded


# One workspace, client and owner per store and module, shared by its suites' classes.
@pytest.fixture(scope="module")
def memory_guarded() -> GuardedFileSystem:
    name = f"memory://fsseam-abstract-{uuid.uuid4().hex[:8]}"
    return Workspace(name).context("abstract-suite").filesystem()


@pytest.fixture(scope="module")
def local_guarded(tmp_path_factory: pytest.TempPathFactory) -> GuardedFileSystem:
    root: Path = tmp_path_factory.mktemp("guarded")
    return Workspace(str(root)).context("abstract-suite").filesystem()


@pytest.fixture(scope="module")
def s3_guarded(moto_s3: Any) -> GuardedFileSystem:
    bucket = f"abstract-{uuid.uuid4().hex[:8]}"
    moto_s3.client().create_bucket(Bucket=bucket)
    ws = Workspace(f"s3://{bucket}", moto_s3.storage_options())
    return ws.context("abstract-suite").filesystem()
