"""The shipped conformance suite, run for every built-in backend."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fsspec.implementations.dirfs import DirFileSystem
from fsspec.implementations.memory import MemoryFileSystem

from fsseam import Workspace
from fsseam.backends import Backend, GenericBackend, LocalBackend, MemoryBackend, open_backend
from fsseam.testing import BackendConformance, ProcessConformance, ToolsConformance


class TestMemory(BackendConformance):
    @pytest.fixture
    def backend(self) -> Backend:
        b = open_backend("memory://conformance", {"global_store": False})
        assert isinstance(b, MemoryBackend)
        return b


class TestMemoryGlobalStore(BackendConformance):
    """The default memory:// store is fsspec's global one: a fresh name per test."""

    @pytest.fixture
    def backend(self) -> Iterator[Backend]:
        name = f"conformance-{uuid.uuid4().hex}"
        b = open_backend(f"memory://{name}")
        assert isinstance(b, MemoryBackend)
        assert b.fs.store is MemoryFileSystem.store
        yield b
        if MemoryFileSystem().exists(f"/{name}"):
            MemoryFileSystem().rm(f"/{name}", recursive=True)


class TestLocal(BackendConformance, ProcessConformance):
    @pytest.fixture
    def backend_spec(self, root: Path) -> tuple[str, dict[str, Any]]:
        return (str(root), {})

    @pytest.fixture
    def backend(self, backend_spec: tuple[str, dict[str, Any]]) -> Backend:
        b = open_backend(*backend_spec)
        assert isinstance(b, LocalBackend)
        return b


class TestLocalFileUrl(BackendConformance):
    @pytest.fixture
    def backend(self, root: Path) -> Backend:
        b = open_backend(f"file://{root}")
        assert isinstance(b, LocalBackend)
        return b


class TestGenericOverDirFs(BackendConformance):
    """The generic backend over a protocol with no adapter: a DirFileSystem on memory."""

    @pytest.fixture
    def backend(self) -> Backend:
        mem = MemoryFileSystem(global_store=False, skip_instance_cache=True)
        mem.mkdir("/base")
        dirfs = DirFileSystem(path="/base", fs=mem)
        b = open_backend("dir://data", fs=dirfs)
        assert isinstance(b, GenericBackend)
        assert b.capabilities.if_match_atomic is False
        return b


class TestMemoryTools(ToolsConformance):
    @pytest.fixture
    def workspace(self) -> Workspace:
        return Workspace("memory://tools-conformance", {"global_store": False})


class TestLocalTools(ToolsConformance):
    @pytest.fixture
    def workspace(self, root: Path) -> Workspace:
        return Workspace(str(root))
