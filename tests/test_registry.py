"""Which backend serves a URL, and what a misconfigured workspace raises."""

from __future__ import annotations

import importlib.util
import uuid
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
    assert info.value.message.startswith("no fsspec filesystem is known for nosuchproto://")


def test_a_known_protocol_whose_package_is_missing_says_so() -> None:
    # libarchive's C binding is not a dependency of anything here.
    with pytest.raises(FsError) as info:
        Workspace("libarchive://x")
    assert info.value.code is ErrorCode.FS_UNSUPPORTED
    assert info.value.message.startswith(
        "libarchive:// needs a package that is not installed ("
    )


@pytest.mark.parametrize(
    ("protocol", "package"),
    [("s3", "fsseam-s3"), ("gs", "fsseam-gcs"), ("az", "fsseam-azure"), ("abfs", "fsseam-azure")],
)
def test_known_adapter_missing_gives_install_hint(
    protocol: str, package: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulate an environment where the adapter package is not installed.
    monkeypatch.setattr(registry, "_entry_points", lambda: {})
    with pytest.raises(FsError) as info:
        Workspace(f"{protocol}://bucket/prefix")
    assert info.value.code is ErrorCode.FS_UNSUPPORTED
    assert f"pip install {package}" in info.value.message
    source = {"fsseam-s3": "backends/s3", "fsseam-gcs": "backends/gcs",
              "fsseam-azure": "backends/azure"}[package]
    assert f"pip install ./{source}" in info.value.message
    assert f"pip install . ./{source}" in info.value.message
    assert "fsseam[" not in info.value.message  # no index has that extra's packages


@pytest.mark.parametrize(
    ("url", "cause"),
    [
        ("zip://x", "IsADirectoryError"),
        ("reference://x", "TypeError"),
    ],
)
def test_a_url_the_filesystem_refuses_is_an_fs_error(url: str, cause: str) -> None:
    with pytest.raises(FsError) as info:
        Workspace(url)
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert info.value.message.startswith(f"cannot open the workspace {url}: ")
    assert f"({cause}: " in info.value.message


@pytest.mark.skipif(
    not all(importlib.util.find_spec(m) for m in ("fsseam_s3", "fsseam_gcs", "fsseam_azure")),
    reason="fsseam-s3, fsseam-gcs and fsseam-azure are not installed (pip install -e "
    "backends/s3 -e backends/gcs -e backends/azure)",
)
def test_installed_adapters_register_through_entry_points() -> None:
    names = {ep.name for ep in entry_points(group="fsseam.backends")}
    assert {"memory", "file", "local", "s3", "s3a", "gs", "gcs", "az", "abfs", "abfss"} <= names
    for proto, module in (("s3", "fsseam_s3"), ("s3a", "fsseam_s3"), ("gs", "fsseam_gcs"),
                          ("gcs", "fsseam_gcs"), ("az", "fsseam_azure"),
                          ("abfs", "fsseam_azure"), ("abfss", "fsseam_azure")):
        assert backend_class(proto).__module__.startswith(module)


def test_memory_workspaces_on_one_url_share_the_global_store() -> None:
    name = f"reg-{uuid.uuid4().hex}"
    a = Workspace(f"memory://{name}")
    b = Workspace(f"memory://{name}")
    a.backend.write("f.txt", b"a", CreateOnly())
    assert b.backend.read("f.txt").data == b"a"
    assert MemoryFileSystem.store[f"/{name}/f.txt"].getvalue() == b"a"
    MemoryFileSystem().rm(f"/{name}", recursive=True)


def test_global_store_false_isolates_each_workspace() -> None:
    name = f"reg-{uuid.uuid4().hex}"
    a = Workspace(f"memory://{name}", {"global_store": False})
    b = Workspace(f"memory://{name}", {"global_store": False})
    a.backend.write("f.txt", b"a", CreateOnly())
    with pytest.raises(FsError) as info:
        b.backend.read("f.txt")
    assert info.value.code is ErrorCode.FS_NOT_FOUND
    assert f"/{name}/f.txt" not in MemoryFileSystem.store  # the global store is untouched


@pytest.mark.parametrize("options", [{"global_store": "no"}, {"auto_mkdir": True}])
def test_bad_memory_options_are_refused(options: dict[str, object]) -> None:
    with pytest.raises(FsError) as info:
        Workspace("memory://x", options)
    assert info.value.code is ErrorCode.FS_INVALID_ARGUMENT
    assert "global_store" in info.value.message


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


def _outside_link(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace root holding links to a file and a directory outside it."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"outside\n")
    (root / "link.txt").symlink_to(outside / "secret.txt")
    (root / "linkdir").symlink_to(outside)
    return root, outside


def _local_generic_specs(root: Path) -> list[dict[str, object]]:
    from fsspec.implementations.dirfs import DirFileSystem
    from fsspec.implementations.local import LocalFileSystem

    return [
        {"url": f"file://{root}"},
        {"url": str(root)},
        {"url": f"local://{root}"},
        {"url": str(root), "fs": LocalFileSystem()},
        {"url": "dir://", "fs": DirFileSystem(path=str(root), fs=LocalFileSystem())},
    ]


def test_the_generic_backend_refuses_local_files(tmp_path: Path) -> None:
    """Generic on file:// followed symbolic links out of the root (read a linked outside
    file, write through a linked directory). It is refused when the workspace is built,
    however the local filesystem is reached; the local backend serves these roots."""
    root, outside = _outside_link(tmp_path)
    for spec in _local_generic_specs(root):
        with pytest.raises(FsError) as info:
            Workspace(backend="generic", **spec)  # type: ignore[arg-type]
        assert info.value.code is ErrorCode.FS_UNSUPPORTED, spec
        assert info.value.reason == "generic_on_local", spec
        assert "without backend=\"generic\"" in info.value.message
    with pytest.raises(FsError) as info:
        GenericBackend.from_url(f"file://{root}", {})
    assert info.value.reason == "generic_on_local"
    with pytest.raises(FsError) as info:
        Workspace.mount({"/": "memory://gl-" + uuid.uuid4().hex, "/disk": str(root)},
                        backend={"/disk": "generic"})
    assert info.value.reason == "generic_on_local"
    # What the message points to: the same root on the local backend keeps to it.
    ctx = Workspace(f"file://{root}").context("a")
    read = ctx.tools.execute("read", {"file_path": "/link.txt"})
    assert not read.ok and read.error is not None
    assert read.error.code is ErrorCode.FS_OUTSIDE_ROOT
    wrote = ctx.tools.execute("write", {"file_path": "/linkdir/new.txt", "content": "x\n"})
    assert not wrote.ok and wrote.error is not None
    assert wrote.error.code is ErrorCode.FS_OUTSIDE_ROOT
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_bytes() == b"outside\n"
