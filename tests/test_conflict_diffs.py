"""FS_STALE shows what changed since the agent's read even when this Workspace never held
the text it read: another Workspace of the URL in this process read it (the text cache is
shared), or the read was made before a restart (the diff comes from the versions the
store or fsseam keeps). Where no diff can be made, the refusal says why."""

from __future__ import annotations

import pickle
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import Context, ErrorCode, Limits, Overwrite, Workspace
from fsseam.backends.history import History

from .helpers import fails, ok, raw

EDIT = {"file_path": "/f.txt", "old_string": "one", "new_string": "ONE"}

DIFF = (
    "Error [FS_STALE]: /f.txt has changed since you last read it, so your edit was not "
    "applied. What changed, from the version you read to the current one:\n"
    "@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n"
    "Your old_string still occurs exactly once in it. Retry the edit as it is; this refusal "
    "counts as your read of the current version."
)

NOT_KEPT = (
    "Error [FS_STALE]: /f.txt has changed since you last read it, so your edit was not "
    "applied. What changed since the version you read cannot be shown: this storage keeps no "
    "older versions, and this process no longer holds the text of that version (it was read "
    "before a restart, in another process, or too long ago). Read the file again, then retry "
    "the edit."
)

# Before the restart: b creates the file, a reads it, b changes it. The contexts come
# pickled (as their specs) and are opened again in a fresh interpreter.
BEFORE_RESTART = """
import pickle, sys
a, b = pickle.loads(sys.stdin.buffer.read())
steps = [(b, "write", {"file_path": "/f.txt", "content": "one\\ntwo\\n"}),
         (a, "read", {"file_path": "/f.txt"}),
         (b, "edit", {"file_path": "/f.txt", "old_string": "two", "new_string": "TWO"})]
for ctx, tool, args in steps:
    res = ctx.tools.execute(tool, args)
    assert res.ok, res.text
"""


def before_restart(a: Context, b: Context) -> None:
    """b's file, a's read of it and b's change, in another process that then ends."""
    done = subprocess.run([sys.executable, "-c", BEFORE_RESTART], input=pickle.dumps((a, b)),
                          capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()


def _url(kind: str, tmp_path: Path) -> str:
    if kind == "memory":
        return f"memory://conflict-diffs-{uuid.uuid4().hex[:8]}"  # fsspec's shared store
    root = tmp_path / "root"
    root.mkdir()
    return str(root)


@pytest.mark.parametrize("kind", ["memory", "local"])
def test_another_workspace_of_the_url_shows_the_diff(kind: str, tmp_path: Path) -> None:
    """a reads through one Workspace, b changes the file through a second, and a's edit
    through a third (its reads kept in a ledger file): the diff, from the text the first
    Workspace read, and the refusal counts as a read."""
    url, ledger = _url(kind, tmp_path), str(tmp_path / "observations.json")

    def make() -> Workspace:
        return Workspace(url, observations=ledger, load_entry_points=False)

    first = make()
    first.backend.write("f.txt", b"one\ntwo\n", Overwrite())
    ok(first.context("a").tools.execute("read", {"file_path": "/f.txt"}))
    b = make().context("b")
    ok(b.tools.execute("read", {"file_path": "/f.txt"}))
    ok(b.tools.execute("edit", {"file_path": "/f.txt", "old_string": "two",
                                "new_string": "TWO"}))
    third = make()
    a = third.context("a")
    res = fails(a.tools.execute("edit", EDIT), ErrorCode.FS_STALE)
    assert res.text == DIFF
    assert raw(third, "/f.txt") == b"one\nTWO\n"
    ok(a.tools.execute("edit", EDIT))
    assert raw(third, "/f.txt") == b"ONE\nTWO\n"


Fixture = Callable[[str], Any]
"""A session fixture by name, started only by the cases that use it."""


def _kept(tmp_path: Path, fixture: Fixture) -> Callable[[], Workspace]:
    root = tmp_path / "root"
    root.mkdir()
    history = History(path=str(tmp_path / "history"))
    ledger = str(tmp_path / "observations.json")
    return lambda: Workspace(str(root), history=history, observations=ledger,
                             load_entry_points=False)


def _s3(versioned: bool) -> Callable[[Path, Fixture], Callable[[], Workspace]]:
    def make(tmp_path: Path, fixture: Fixture) -> Callable[[], Workspace]:
        moto = fixture("moto_s3")
        url = f"s3://{moto.create_bucket(versioned=versioned)}/ws"
        ledger = str(tmp_path / "observations.json")
        return lambda: Workspace(url, storage_options=moto.storage_options(),
                                 observations=ledger, load_entry_points=False)
    return make


def _gcs(tmp_path: Path, fixture: Fixture) -> Callable[[], Workspace]:
    server, _ = fixture("fake_gcs")
    url = f"gs://{server.create_bucket(versioned=True)}/ws"
    ledger = str(tmp_path / "observations.json")
    return lambda: Workspace(url, storage_options=server.storage_options(),
                             observations=ledger, load_entry_points=False)


def _local(tmp_path: Path, fixture: Fixture) -> Callable[[], Workspace]:
    root = tmp_path / "root"
    root.mkdir()
    ledger = str(tmp_path / "observations.json")
    return lambda: Workspace(str(root), observations=ledger, load_entry_points=False)


@pytest.fixture
def fixture(request: pytest.FixtureRequest) -> Fixture:
    return request.getfixturevalue


@pytest.mark.parametrize("store", [_kept, _s3(versioned=True), _gcs],
                         ids=["kept", "s3-versioned", "gcs-versioned"])
def test_after_a_restart_the_diff_comes_from_the_kept_versions(
    store: Callable[..., Callable[[], Workspace]], tmp_path: Path,
    fixture: Fixture,
) -> None:
    """The read and the other change were made in a process that ended: this process never
    held the text read, and the store (a versioned bucket) or fsseam (kept history) gives
    it back for the diff."""
    make = store(tmp_path, fixture)
    before = make()
    before_restart(before.context("a"), before.context("b"))
    ws = make()
    a = ws.context("a")
    res = fails(a.tools.execute("edit", EDIT), ErrorCode.FS_STALE)
    assert res.text == DIFF
    assert raw(ws, "/f.txt") == b"one\nTWO\n"
    ok(a.tools.execute("edit", EDIT))
    assert raw(ws, "/f.txt") == b"ONE\nTWO\n"


@pytest.mark.parametrize("store", [_local, _s3(versioned=False)], ids=["local", "s3"])
def test_after_a_restart_without_versions_the_refusal_says_why(
    store: Callable[..., Callable[[], Workspace]], tmp_path: Path,
    fixture: Fixture,
) -> None:
    """Where nothing keeps the version read (local disk, a bucket without versioning), the
    refusal says why no diff is shown, and the read it asks for lets the edit through."""
    make = store(tmp_path, fixture)
    before = make()
    before_restart(before.context("a"), before.context("b"))
    ws = make()
    a = ws.context("a")
    res = fails(a.tools.execute("edit", EDIT), ErrorCode.FS_STALE)
    assert res.text == NOT_KEPT
    assert raw(ws, "/f.txt") == b"one\nTWO\n"
    fails(a.tools.execute("edit", EDIT), ErrorCode.FS_STALE)  # no diff: not a read
    ok(a.tools.execute("read", {"file_path": "/f.txt"}))
    ok(a.tools.execute("edit", EDIT))
    assert raw(ws, "/f.txt") == b"ONE\nTWO\n"


def test_a_version_the_history_no_longer_keeps_is_said(tmp_path: Path) -> None:
    """Kept history holds one version a file: by the time of a's edit, the version it read
    has been dropped for a newer one."""
    root = tmp_path / "root"
    root.mkdir()
    history = History(path=str(tmp_path / "history"), max_versions=1)
    ledger = str(tmp_path / "observations.json")
    before = Workspace(str(root), history=history, observations=ledger,
                       load_entry_points=False)
    before_restart(before.context("a"), before.context("b"))
    ws = Workspace(str(root), history=history, observations=ledger, load_entry_points=False)
    a = ws.context("a")
    res = fails(a.tools.execute("edit", EDIT), ErrorCode.FS_STALE)
    assert res.text == (
        "Error [FS_STALE]: /f.txt has changed since you last read it, so your edit was not "
        "applied. What changed since the version you read cannot be shown: this storage's "
        "history no longer keeps that version. Read the file again, then retry the edit."
    )
    assert raw(ws, "/f.txt") == b"one\nTWO\n"


def test_a_current_version_that_is_not_text_is_said(tmp_path: Path) -> None:
    """The file became binary since a's read: a's whole-file write is refused, saying that
    no diff can show it, and the binary file is left as it is."""
    ws = Workspace(str(tmp_path), load_entry_points=False)
    a = ws.context("a")
    ok(a.tools.execute("write", {"file_path": "/f.txt", "content": "one\ntwo\n"}))
    ws.backend.write("f.txt", b"\x00\x01binary", Overwrite())
    res = fails(a.tools.execute("write", {"file_path": "/f.txt", "content": "mine\n"}),
                ErrorCode.FS_STALE)
    assert res.text == (
        "Error [FS_STALE]: /f.txt has changed since you last read it, so your write was not "
        "applied. What changed since the version you read cannot be shown: the current "
        "version is not text. Your write replaces the whole file, so sending it again would "
        "throw this change away. Read the file again and keep the change in what you send, "
        "or use edit to change only your part."
    )
    assert (tmp_path / "f.txt").read_bytes() == b"\x00\x01binary"


def test_the_shared_cache_keeps_the_workspaces_bound(tmp_path: Path) -> None:
    """Workspaces of one URL share texts within Limits.doc_cache_bytes: a text over a
    quarter of it is not kept, so a conflict met through another Workspace says why no
    diff is shown."""
    url, ledger = _url("memory", tmp_path), str(tmp_path / "observations.json")
    limits = Limits(doc_cache_bytes=64)

    def make() -> Workspace:
        return Workspace(url, observations=ledger, limits=limits, load_entry_points=False)

    first = make()
    first.backend.write("f.txt", b"one\ntwo\n" + b"x\n" * 20, Overwrite())
    ok(first.context("a").tools.execute("read", {"file_path": "/f.txt"}))
    b = make().context("b")
    ok(b.tools.execute("read", {"file_path": "/f.txt"}))
    ok(b.tools.execute("edit", {"file_path": "/f.txt", "old_string": "two",
                                "new_string": "TWO"}))
    res = fails(make().context("a").tools.execute("edit", EDIT), ErrorCode.FS_STALE)
    assert res.text == NOT_KEPT
    assert raw(first, "/f.txt") == b"one\nTWO\n" + b"x\n" * 20
