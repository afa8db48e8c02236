"""Fault injection on local disk (issue 9): writers killed mid-write, a file-size limit.

A write publishes a fully written, fsynced temp file (``.NAME.fsseam-<hex>.tmp`` in the same
directory) with ``os.replace`` or ``os.link``. Whatever moment a writer is SIGKILLed, the
path holds exactly the old or exactly the new bytes; a temp file it leaves behind is
dot-prefixed, hidden from directory views, and does not get in the next writer's way.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from fsseam import ErrorCode, Workspace
from fsseam.backends import LocalBackend
from fsseam.versions import IfMatch

MiB = 1 << 20
NAME = "big.bin"
OLD = b"O" * 1024


def _temps(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if p.name != NAME)


def _is_exactly(path: Path, fill: bytes, size: int) -> bool:
    """``path`` holds ``size`` bytes, all ``fill`` (compared in chunks, not in memory)."""
    if path.stat().st_size != size:
        return False
    chunk = fill * (16 * MiB)
    with path.open("rb") as f:
        while True:
            data = f.read(16 * MiB)
            if not data:
                return True
            if data != chunk[: len(data)]:
                return False


def _assert_hidden_temps(root: Path, temps: list[Path]) -> None:
    for t in temps:
        assert t.name.startswith(f".{NAME}.fsseam-") and t.name.endswith(".tmp"), t.name
    ws = Workspace(str(root))
    view = ws.context("viewer").tools.execute(
        "str_replace_editor", {"command": "view", "path": "/"}
    )
    assert view.ok, view.text
    assert "fsseam" not in view.text and ".tmp" not in view.text
    # Not a file of the workspace: not even counted among the hidden entries, nor named by
    # ls, which shows dot files.
    assert "omitted" not in view.text
    ls = ws.context("viewer").tools.execute("ls", {"path": "/"})
    assert ls.ok and "fsseam" not in ls.text and ".tmp" not in ls.text


def _next_write_succeeds(root: Path) -> None:
    """A later writer reads what is there and replaces it, leftovers notwithstanding."""
    backend = LocalBackend(str(root))
    version = backend.read(NAME).version
    backend.write(NAME, b"after\n", IfMatch(version))
    assert (root / NAME).read_bytes() == b"after\n"


# -- SIGKILL at an exact point of the publish sequence ---------------------------------------

_HOOKED_WRITER = textwrap.dedent(
    """
    import os, sys, time
    from fsseam import CreateOnly, Overwrite
    from fsseam.backends import LocalBackend

    root, size, point, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    real_fsync, real_replace, real_link, real_write = os.fsync, os.replace, os.link, os.write

    def pause(tag):
        if tag == point:
            sys.stdout.write("at " + tag + "\\n")
            sys.stdout.flush()
            time.sleep(60)

    fsyncs = []

    def fsync(fd):
        fsyncs.append(fd)
        pause("before-fsync" if len(fsyncs) == 1 else "before-dir-fsync")
        real_fsync(fd)
        if len(fsyncs) == 1:
            pause("after-fsync")

    def replace(*a, **k):
        real_replace(*a, **k)
        pause("after-replace")

    def link(*a, **k):
        real_link(*a, **k)
        pause("after-link")

    writes = []

    def write(fd, data):
        # The temp file half written: the moment a timing-based kill would aim for.
        if not writes:
            writes.append(fd)
            n = real_write(fd, data[: len(data) // 2])
            pause("mid-write")
            return n
        return real_write(fd, data)

    os.fsync, os.replace, os.link, os.write = fsync, replace, link, write
    pre = CreateOnly() if mode == "create" else Overwrite()
    LocalBackend(root).write("big.bin", b"N" * size, pre)
    sys.stdout.write("done\\n")
    """
)


def _run_until(root: Path, size: int, point: str, mode: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOOKED_WRITER, str(root), str(size), point, mode],
        stdout=subprocess.PIPE,
    )
    try:
        assert proc.stdout is not None
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        assert sel.select(timeout=30), "the writer never reached " + point
        line = proc.stdout.readline().decode().strip()
        sel.close()
        assert line == f"at {point}", line
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize(
    ("point", "mode", "outcome", "leftover"),
    [
        ("mid-write", "update", "old", True),
        ("before-fsync", "update", "old", True),
        ("after-fsync", "update", "old", True),
        ("after-replace", "update", "new", False),
        ("before-dir-fsync", "update", "new", False),
        ("mid-write", "create", "absent", True),
        ("before-fsync", "create", "absent", True),
        ("after-link", "create", "new", True),
    ],
)
def test_sigkill_at_each_publish_step(
    root: Path, point: str, mode: str, outcome: str, leftover: bool
) -> None:
    size = 8 * MiB
    target = root / NAME
    if mode == "update":
        target.write_bytes(OLD)

    _run_until(root, size, point, mode)

    if outcome == "old":
        assert target.read_bytes() == OLD
    elif outcome == "absent":
        assert not target.exists()
    else:
        assert _is_exactly(target, b"N", size)
    temps = _temps(root)
    assert len(temps) == (1 if leftover else 0)
    if temps and point == "mid-write":
        assert _is_exactly(temps[0], b"N", size // 2)  # torn, but never at the target
    elif temps:
        # The leftover is complete (it was written before the kill), never the target.
        assert _is_exactly(temps[0], b"N", size)
        if point == "after-link":
            assert os.path.samefile(temps[0], target)  # a second hard link, hidden
    _assert_hidden_temps(root, temps)

    if outcome == "absent":
        ws = Workspace(str(root))
        res = ws.context("a").tools.execute("write", {"file_path": "/" + NAME, "content": "x"})
        assert res.ok, res.text
        assert target.read_bytes() == b"x"
    else:
        _next_write_succeeds(root)
    # The next write into the directory sweeps the orphans (it holds the directory lock,
    # so no live writer owns them); the hard-linked target survives its twin's removal.
    assert _temps(root) == []


# -- a file-size limit (RLIMIT_FSIZE) in the writing process ---------------------------------

_LIMITED_WRITER = textwrap.dedent(
    """
    import json, resource, signal, sys
    from fsseam import Workspace

    root, limit, tool = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    args = json.loads(sys.stdin.read())
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # EFBIG instead of death
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    ctx = Workspace(root).context("a")
    assert ctx.tools.execute("read", {"file_path": "/notes.md"}).ok
    res = ctx.tools.execute(tool, args)
    print(json.dumps({
        "ok": res.ok,
        "code": res.error.code.value if res.error else None,
        "text": res.text,
    }))
    """
)


def _limited(root: Path, limit: int, tool: str, args: dict[str, object]) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _LIMITED_WRITER, str(root), str(limit), tool],
        input=json.dumps(args).encode(), capture_output=True, check=True, timeout=60,
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


@pytest.mark.parametrize("tool", ["write", "edit"])
def test_file_size_limit_fails_with_too_large_and_keeps_old(root: Path, tool: str) -> None:
    old = b"alpha\nbeta\n" * 10
    target = root / "notes.md"
    target.write_bytes(old)
    big = "x" * (2 * MiB)
    args: dict[str, object] = (
        {"file_path": "/notes.md", "content": big} if tool == "write"
        else {"file_path": "/notes.md", "old_string": "beta\nalpha", "new_string": big,
              "replace_all": True}
    )

    result = _limited(root, MiB, tool, args)

    assert result["ok"] is False
    assert result["code"] == ErrorCode.FS_TOO_LARGE.value
    assert result["text"] == (
        "Error [FS_TOO_LARGE]: /notes.md would be larger than this storage allows for one "
        "file (File too large); nothing was written."
    )
    assert target.read_bytes() == old
    assert [p.name for p in root.iterdir()] == ["notes.md"]  # the temp file was removed


def test_file_size_limit_not_reached_writes(root: Path) -> None:
    target = root / "notes.md"
    target.write_bytes(b"alpha\n")
    result = _limited(root, MiB, "write", {"file_path": "/notes.md", "content": "y" * 1000})
    assert result["ok"] is True, result
    assert target.read_bytes() == b"y" * 1000
