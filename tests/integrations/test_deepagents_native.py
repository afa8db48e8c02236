"""Where deepagents' own backends and fsseam's differed, now the same: an image read is the
image content block its middleware builds, a last line without a newline reads back
without one, and a deleted directory is gone from local disk too."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import pytest

pytest.importorskip(
    "deepagents", reason="deepagents is not installed: pip install -e '.[deepagents]'"
)

from deepagents.backends.protocol import DeleteResult, LsResult, ReadResult

from fsseam import Limits, Workspace
from fsseam.integrations import deepagents as integration
from fsseam.integrations.deepagents import FsseamBackend, create_deep_agent

from .helpers import seed, stored
from .test_deepagents import ScriptedModel, call, run, script

# A 1x1 PNG: the signature, IHDR, IDAT and IEND chunks.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


@pytest.fixture(params=["memory", "local"])
def ws(request: pytest.FixtureRequest, tmp_path: Path) -> Workspace:
    if request.param == "memory":
        return Workspace("memory://native", storage_options={"global_store": False})
    return Workspace(str(tmp_path))


def put(ws: Workspace, path: str, data: bytes) -> None:
    """Bytes in place as another writer (an upload is the owner "seed"'s write)."""
    assert FsseamBackend(ws, owner="seed").upload_files([(path, data)])[0].error is None


def test_a_last_line_without_a_newline_reads_back_without_one(ws: Workspace) -> None:
    b = FsseamBackend(ws)
    assert b.write("/a.txt", "foo\nbar").error is None
    assert stored(ws, "/a.txt") == b"foo\nbar"
    assert b.read("/a.txt").file_data == {"content": "foo\nbar", "encoding": "utf-8"}
    # A window short of the end ends in a newline; the window with the last line does not.
    assert b.read("/a.txt", 0, 1).file_data == {"content": "foo\n", "encoding": "utf-8"}
    assert b.read("/a.txt", 1, 1).file_data == {"content": "bar", "encoding": "utf-8"}
    put(ws, "/crlf.txt", b"a\r\nb")
    assert b.read("/crlf.txt").file_data == {"content": "a\nb", "encoding": "utf-8"}
    put(ws, "/ends.txt", b"a\r\nb\r\n")
    assert b.read("/ends.txt").file_data == {"content": "a\nb\n", "encoding": "utf-8"}
    # The edit deepagents' own backend allows after that read: old_string ends the file.
    assert b.edit("/a.txt", "bar", "baz").error is None
    assert stored(ws, "/a.txt") == b"foo\nbaz"


def test_an_image_is_read_whole_as_deepagents_returns_it(ws: Workspace) -> None:
    put(ws, "/img.png", PNG)
    b = FsseamBackend(ws)
    assert b.delete("/img.png").error is not None  # never read: refused
    assert b.read("/img.png") == ReadResult(
        file_data={"content": base64.standard_b64encode(PNG).decode(), "encoding": "base64"})
    assert b.delete("/img.png") == DeleteResult(path="/img.png")  # the read was recorded
    assert b.ls("/") == LsResult(entries=[])


def test_media_past_the_cap_and_binary_text_are_refused(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    put(ws, "/img.png", PNG)
    put(ws, "/data.txt", b"\x00\xff\xfe binary")
    b = FsseamBackend(ws)
    monkeypatch.setattr(integration, "MAX_MEDIA_BYTES", len(PNG) - 1)
    assert b.read("/img.png") == ReadResult(error=(
        f"[FS_TOO_LARGE] /img.png is larger than the {len(PNG) - 1} bytes read_file returns "
        "of an image or other media file, so it was not read. Ask the user for a smaller "
        "version of the file."))
    assert b.delete("/img.png").error is not None  # a refused read observes nothing
    error = b.read("/data.txt").error
    assert error is not None and error.startswith("[FS_NOT_TEXT] /data.txt")


def test_an_image_past_the_workspaces_image_cap_is_refused(tmp_path: Path) -> None:
    """An image goes inline to the model: the workspace's image cap, as the read tool's."""
    ws = Workspace(str(tmp_path), limits=Limits(max_image_bytes=len(PNG) - 1))
    put(ws, "/img.png", PNG)
    error = FsseamBackend(ws).read("/img.png").error
    assert error is not None and error.startswith("[FS_TOO_LARGE] /img.png")
    assert f"{len(PNG) - 1} bytes" in error
    assert (tmp_path / "img.png").read_bytes() == PNG


def test_a_deep_agent_sees_the_image_block(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path))
    put(ws, "/img.png", PNG)
    model = ScriptedModel(messages=script(call("read_file", file_path="/img.png"), "Done."))
    (read,) = run(create_deep_agent(model=model, backend=FsseamBackend(ws)), "Describe it.")
    assert read.status == "success"
    [block] = read.content
    assert isinstance(block, dict)
    assert (block["type"], block["mime_type"]) == ("image", "image/png")
    assert base64.b64decode(block["base64"]) == PNG


def test_a_deleted_directory_is_gone_from_local_disk(tmp_path: Path) -> None:
    ws = Workspace(str(tmp_path))
    for path in ("/sub/a.txt", "/sub/deep/b.txt", "/keep.txt"):
        seed(ws, path, "x\n")
    (tmp_path / "sub" / "empty").mkdir()
    b = FsseamBackend(ws)
    b.read("/sub/a.txt")
    b.read("/sub/deep/b.txt")
    assert b.delete("/sub") == DeleteResult(path="/sub")
    assert b.ls("/") == LsResult(entries=[{"path": "/keep.txt", "is_dir": False, "size": 2}])
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]
    # An empty directory goes as deepagents' own backend removes it.
    (tmp_path / "hollow" / "inner").mkdir(parents=True)
    assert b.delete("/hollow") == DeleteResult(path="/hollow")
    assert sorted(os.listdir(tmp_path)) == ["keep.txt"]


def test_only_empty_directories_are_removed_and_never_the_root(tmp_path: Path) -> None:
    (tmp_path / "d" / "empty" / "deeper").mkdir(parents=True)
    (tmp_path / "d" / "full").mkdir()
    (tmp_path / "d" / "full" / "late.txt").write_bytes(b"written meanwhile\n")
    context = Workspace(str(tmp_path)).context("a")
    context.fs.prune_directories("/d")
    assert sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")) == [
        "d", "d/full", "d/full/late.txt"]
    context.fs.prune_directories("/")
    assert (tmp_path / "d" / "full" / "late.txt").read_bytes() == b"written meanwhile\n"


def test_a_directory_delete_prunes_a_mounted_local_disk(tmp_path: Path) -> None:
    ws = Workspace.mount({"/": "memory://native-mounts", "/disk": str(tmp_path)})
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.txt").write_bytes(b"a\n")
    b = FsseamBackend(ws)
    b.read("/disk/sub/a.txt")
    assert b.delete("/disk/sub") == DeleteResult(path="/disk/sub")
    assert os.listdir(tmp_path) == []


def test_pruning_reaches_local_disk_under_kept_history_and_never_a_read_only_one(
    tmp_path: Path,
) -> None:
    from fsseam import History

    (tmp_path / "kept" / "empty").mkdir(parents=True)
    Workspace(str(tmp_path), history=History()).context("a").fs.prune_directories("/kept")
    assert not (tmp_path / "kept").exists()
    (tmp_path / "frozen" / "empty").mkdir(parents=True)
    Workspace(str(tmp_path), read_only=True).context("a").fs.prune_directories("/frozen")
    assert (tmp_path / "frozen" / "empty").is_dir()
    mounted = Workspace.mount({"/": "memory://prune-ro", "/disk": str(tmp_path)},
                              read_only=["/disk"])
    mounted.context("a").fs.prune_directories("/disk/frozen")
    assert (tmp_path / "frozen" / "empty").is_dir()
