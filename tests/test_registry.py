"""Which backend serves a URL, and what a misconfigured workspace raises."""

from __future__ import annotations

from importlib.metadata import entry_points
from pathlib import Path

import pytest
from fsspec.implementations.memory import MemoryFileSystem

from fsseam import CreateOnly, ErrorCode, FsError, Workspace
from fsseam.backends import GenericBackend, LocalBackend, MemoryBackend, backend_class, registry


def test_builtin_protocols(root: Path) -> None:
    assert isinstance(Workspace("memory://x").backend, MemoryBackend)
    assert isinstance(Workspace(str(root)).backend, LocalBackend)
    assert isinstance(Workspace(f"file://{root}").backend, LocalBackend)


def test_unknown_adapter_protocol_falls_back_to_generic_and_says_it_is_emulated() -> None:
    cls = backend_class("ftp")
    assert cls is GenericBackend
    assert GenericBackend.capabilities.create_only_atomic is False
    assert GenericBackend.capabilities.if_match_atomic is False
    assert "emulated" in GenericBackend.capabilities.note


def test_unknown_protocol_raises() -> None:
    with pytest.raises(FsError) as info:
        Workspace("nosuchproto://x")
    assert info.value.code is ErrorCode.FS_UNSUPPORTED


@pytest.mark.parametrize(("protocol", "package"), [("s3", "fsseam-s3"), ("gs", "fsseam-gcs")])
def test_known_adapter_missing_gives_install_hint(
    protocol: str, package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulate an environment where the adapter package is not installed.
    monkeypatch.setattr(registry, "_entry_points", lambda: {})
    with pytest.raises(FsError) as info:
        Workspace(f"{protocol}://bucket/prefix")
    assert info.value.code is ErrorCode.FS_UNSUPPORTED
    assert f"pip install {package}" in info.value.message


def test_installed_adapters_register_through_entry_points() -> None:
    names = {ep.name for ep in entry_points(group="fsseam.backends")}
    assert {"memory", "file", "local", "s3", "s3a", "gs", "gcs"} <= names
    for proto, module in (("s3", "fsseam_s3"), ("s3a", "fsseam_s3"), ("gs", "fsseam_gcs"),
                          ("gcs", "fsseam_gcs")):
        assert backend_class(proto).__module__.startswith(module)


def test_each_memory_workspace_is_isolated() -> None:
    a = Workspace("memory://same")
    b = Workspace("memory://same")
    a.backend.write("f.txt", b"a", CreateOnly())
    with pytest.raises(FsError):
        b.backend.read("f.txt")
    assert MemoryFileSystem.store.get("/same/f.txt") is None  # the global store is untouched


def test_passed_filesystem_is_shared() -> None:
    fs = MemoryFileSystem(global_store=False, skip_instance_cache=True)
    a = Workspace("memory://shared", fs=fs)
    b = Workspace("memory://shared", fs=fs)
    a.backend.write("f.txt", b"a", CreateOnly())
    assert b.backend.read("f.txt").data == b"a"


def test_missing_local_root_raises(tmp_path: Path) -> None:
    with pytest.raises(FsError) as info:
        Workspace(str(tmp_path / "missing"))
    assert info.value.code is ErrorCode.FS_NOT_FOUND
