"""collect frees what no branch reaches, in two steps ``grace`` apart, and never a blob a
change in progress reused (it is set aside first, and a read takes it back)."""

from __future__ import annotations

import hashlib
import time
from datetime import timedelta
from pathlib import Path

import pytest

from fsseam import Workspace
from fsseam.branches import manage

BYTES = b"same bytes\n"
SHA = hashlib.sha256(BYTES).hexdigest()


def _objects(root: Path, folder: str) -> list[str]:
    base = root / ".fsseam-branches" / folder
    return sorted(p.name for p in base.rglob("*") if p.is_file()) if base.exists() else []


def _discarded(root: Path) -> Workspace:
    ws = Workspace(str(root))
    ctx = ws.branch("gone").context("agent")
    assert ctx.tools.execute("write", {"file_path": "/f.txt", "content": BYTES.decode()}).ok
    ws.discard("gone")
    return ws


def test_a_discarded_branch_is_freed_in_two_collects_grace_apart(
        root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = _discarded(root)
    assert ws.collect().set_aside == 0  # its manifests are younger than the grace
    assert SHA in _objects(root, "blobs")
    later = time.time() + 2 * 3600
    monkeypatch.setattr(manage.time, "time", lambda: later)
    first = ws.collect()
    assert (first.set_aside, first.removed_blobs, first.kept_blobs) == (1, 0, 0)
    assert _objects(root, "blobs") == [] and _objects(root, "trash") != []
    monkeypatch.setattr(manage.time, "time", lambda: later + 2 * 3600)
    second = ws.collect()
    assert (second.set_aside, second.removed_blobs) == (0, 1)
    assert _objects(root, "trash") == [] and _objects(root, "manifests") == []


def test_a_blob_set_aside_while_a_change_reused_it_is_read_back(root: Path) -> None:
    ws = _discarded(root)
    store = ws.branches_of.store
    ctx = ws.branch("next").context("agent")
    assert ctx.tools.execute("write", {"file_path": "/f.txt", "content": BYTES.decode()}).ok
    # collect looked before this change named the blob, and sets it aside after.
    store.set_aside(SHA, int(time.time()))
    assert _objects(root, "blobs") == []
    assert ctx.tools.execute("read", {"file_path": "/f.txt"}).ok
    assert ws.branch("next").backend.read("f.txt").data == BYTES
    assert SHA in _objects(root, "blobs")  # put back where it belongs
    done = ws.collect(grace=timedelta(0))
    assert done.restored == 1 and done.removed_blobs == 0
    assert _objects(root, "trash") == []
    assert ws.branch("next").backend.read("f.txt").data == BYTES


def test_a_blob_set_aside_that_something_reaches_again_is_put_back_by_collect(
        root: Path) -> None:
    ws = _discarded(root)
    ctx = ws.branch("next").context("agent")
    assert ctx.tools.execute("write", {"file_path": "/f.txt", "content": BYTES.decode()}).ok
    ws.branches_of.store.set_aside(SHA, int(time.time()) - 10 * 3600)  # long ago
    done = ws.collect()
    assert (done.restored, done.removed_blobs) == (1, 0)
    assert (root / ".fsseam-branches" / "blobs" / SHA[:2] / SHA).read_bytes() == BYTES
    assert (root / "f.txt").exists() is False  # main never had it


def test_grace_zero_frees_a_discarded_branch_at_once_and_keeps_a_live_one(root: Path) -> None:
    ws = _discarded(root)
    live = ws.branch("live").context("agent")
    assert live.tools.execute("write", {"file_path": "/g.txt", "content": "kept\n"}).ok
    done = ws.collect(grace=timedelta(0))
    assert done.removed_blobs == 1 and done.removed_manifests >= 1
    assert ws.branch("live").backend.read("g.txt").data == b"kept\n"
    assert SHA not in _objects(root, "blobs") and _objects(root, "trash") == []
