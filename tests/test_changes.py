"""Seam.change on local files: validation before any write, the commit order, rollback by
compare-and-swap after a failure at every step, a rollback that loses to another writer,
events only for a change that committed, and a storage size limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from fsseam import ErrorCode, FsError, Limits, Workspace, hookimpl
from fsseam.backends.base import ANY_VERSION
from fsseam.events import DeletedEvent, WrittenEvent
from fsseam.versions import Precondition, Version

BEFORE = {
    "a.txt": b"alpha\r\nbeta\r\n",
    "b.txt": b"\xef\xbb\xbfbee\n",
    "e.txt": b"eee\n",
}
PATCH = (
    "*** Begin Patch\n"
    "*** Add File: new/c.txt\n+sea\n"
    "*** Update File: a.txt\n@@\n-beta\n+BETA\n"
    "*** Update File: b.txt\n*** Move to: d.txt\n@@\n-bee\n+BEE\n"
    "*** Delete File: e.txt\n"
    "*** End Patch"
)
# The commit order: created files, then files updated in place, then deleted ones.
STEPS: list[tuple[str, bytes | None]] = [
    ("d.txt", b"\xef\xbb\xbfBEE\n"),
    ("new/c.txt", b"sea\n"),
    ("a.txt", b"alpha\r\nBETA\r\n"),
    ("b.txt", None),
    ("e.txt", None),
]


def files(root: Path) -> dict[str, bytes]:
    """Every regular file below ``root`` (temp files of the local backend are hidden)."""
    out: dict[str, bytes] = {}
    for dirpath, _, names in os.walk(root):
        for name in names:
            if not name.startswith("."):
                p = Path(dirpath, name)
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def after_steps(n: int) -> dict[str, bytes]:
    """The files once the first ``n`` steps of the commit are done."""
    state = dict(BEFORE)
    for key, data in STEPS[:n]:
        if data is None:
            del state[key]
        else:
            state[key] = data
    return state


def seeded(root: Path) -> Workspace:
    for name, data in BEFORE.items():
        (root / name).write_bytes(data)
    return Workspace(str(root))


class Faulty:
    """The workspace's backend, failing its ``fail_at``-th modifying call (1-based) after
    running ``before`` (a concurrent writer), and counting every modifying call."""

    def __init__(self, inner: Any, fail_at: int | None = None,
                 before: Callable[[], None] | None = None) -> None:
        self.inner = inner
        self.fail_at = fail_at
        self.before = before
        self.calls: list[tuple[str, str]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _call(self, what: str, key: str, run: Callable[[], Any]) -> Any:
        self.calls.append((what, key))
        if len(self.calls) == self.fail_at:
            if self.before is not None:
                self.before()
            raise FsError(ErrorCode.FS_BACKEND, f"injected failure of {what} {key}", path=key)
        return run()

    def write(self, key: str, data: bytes, pre: Precondition, **kw: Any) -> Version:
        version: Version = self._call("write", key, lambda: self.inner.write(key, data, pre))
        return version

    def delete(self, key: str, pre: Precondition = ANY_VERSION, **kw: Any) -> None:
        self._call("delete", key, lambda: self.inner.delete(key, pre))

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        version: Version = self._call("copy", dst, lambda: self.inner.copy(src, dst, source))
        return version


def agent(ws: Workspace, backend: Faulty | None = None) -> Any:
    ctx = ws.context("a")
    for name in BEFORE:
        assert ctx.tools.execute("read", {"file_path": name}).ok
    if backend is not None:
        ctx.fs.backend = backend
    return ctx


def test_the_patch_commits_in_the_fixed_order(root: Path) -> None:
    ws = seeded(root)
    faulty = Faulty(ws.backend)
    ctx = agent(ws, faulty)
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert faulty.calls == [("write", "d.txt"), ("write", "new/c.txt"), ("write", "a.txt"),
                            ("delete", "b.txt"), ("delete", "e.txt")]
    assert files(root) == after_steps(len(STEPS))


@pytest.mark.parametrize("fail_at", range(1, len(STEPS) + 1))
def test_a_failure_at_any_step_leaves_every_file_as_it_was(root: Path, fail_at: int) -> None:
    ws = seeded(root)
    ctx = agent(ws, Faulty(ws.backend, fail_at))
    assert ws.policy is not None
    ledger = ws.policy.ledger.model_dump()
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert res.text.endswith("Nothing was applied: every file is as it was."), res.text
    assert files(root) == BEFORE
    # nothing was recorded: the agent's observations are those of before
    assert ws.policy.ledger.model_dump() == ledger
    ctx.fs.backend = ws.backend
    assert ctx.tools.execute("apply_patch", {"patch": PATCH}).ok
    assert files(root) == after_steps(len(STEPS))


def test_a_rollback_that_loses_says_which_file_holds_what(root: Path) -> None:
    ws = seeded(root)

    def someone_else() -> None:  # rewrites a file this change had just created
        (root / "new" / "c.txt").write_bytes(b"theirs\n")

    ctx = agent(ws, Faulty(ws.backend, fail_at=3, before=someone_else))
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
    assert "injected failure of write a.txt" in res.text
    assert (
        "Undoing what had already been written did not fully succeed: /d.txt is as it was; "
        "/new/c.txt was changed by someone else after this change wrote it, and was left as "
        "they made it; /a.txt was not written; /b.txt was not written; /e.txt was not "
        "written. Read these files before going on."
    ) in res.text
    assert "Nothing was applied" not in res.text
    assert files(root) == {**BEFORE, "new/c.txt": b"theirs\n"}


def test_a_lost_compare_and_swap_at_commit_rolls_back(root: Path) -> None:
    """Someone writes e.txt after the change was validated: its delete loses, and the four
    steps before it are undone."""
    ws = seeded(root)

    def someone_else() -> None:
        (root / "e.txt").write_bytes(b"changed\n")

    faulty = Faulty(ws.backend)
    ctx = agent(ws, faulty)

    class Late:
        @hookimpl
        def fs_delete_intent(self, event: Any) -> None:
            if event.path == "/e.txt":
                someone_else()

    ws.gate.register(Late())
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert "/e.txt has changed since you last read it" in res.text
    # what changed, from a's read to the current version, read once more after the loss
    assert "\n@@ -1 +1 @@\n-eee\n+changed\n" in res.text, res.text
    assert faulty.calls == [
        ("write", "d.txt"), ("write", "new/c.txt"), ("write", "a.txt"), ("delete", "b.txt"),
        ("delete", "e.txt"),
        # undone in reverse, each conditional on the version just written
        ("write", "b.txt"), ("write", "a.txt"), ("delete", "new/c.txt"), ("delete", "d.txt"),
    ]
    assert files(root) == {**BEFORE, "e.txt": b"changed\n"}


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    @hookimpl
    def fs_written(self, event: WrittenEvent) -> None:
        self.events.append((event.name, event.path, event.operation))

    @hookimpl
    def fs_deleted(self, event: DeletedEvent) -> None:
        self.events.append((event.name, event.path, event.operation))


def test_events_only_for_a_change_that_committed(root: Path) -> None:
    ws = seeded(root)
    rec = Recorder()
    ws.gate.register(rec)
    ctx = agent(ws, Faulty(ws.backend, fail_at=4))
    assert not ctx.tools.execute("apply_patch", {"patch": PATCH}).ok
    assert rec.events == []
    ctx.fs.backend = ws.backend
    res = ctx.tools.execute("apply_patch", {"patch": PATCH})
    assert res.ok, res.text
    assert rec.events == [
        ("fs/written", "/new/c.txt", "create"),
        ("fs/written", "/a.txt", "edit"),
        ("fs/written", "/d.txt", "move"),
        ("fs/deleted", "/b.txt", "move"),
        ("fs/deleted", "/e.txt", "delete"),
    ]
    assert res.value is not None and res.value.diff is not None
    assert "-beta\n+BETA\n" in res.value.diff


@pytest.mark.parametrize(
    ("patch", "code", "needle"),
    [
        (PATCH.replace("new/c.txt", "a.txt"), ErrorCode.FS_INVALID_ARGUMENT,
         "/a.txt is named more than once"),
        (PATCH.replace("new/c.txt", "e.txt").replace("*** Delete File: e.txt\n", ""),
         ErrorCode.FS_ALREADY_EXISTS, "/e.txt already exists; *** Add File never replaces"),
        (PATCH.replace("d.txt", "e.txt").replace("*** Delete File: e.txt\n", ""),
         ErrorCode.FS_ALREADY_EXISTS, "/e.txt already exists; a move never replaces a file"),
        (PATCH.replace("-beta", "-gamma"), ErrorCode.FS_NO_MATCH, "hunk 1 of /a.txt"),
        (PATCH.replace("Delete File: e.txt", "Delete File: zzz.txt"), ErrorCode.FS_NOT_FOUND,
         "/zzz.txt does not exist"),
        (PATCH.replace("*** Add File: new/c.txt\n+sea\n", "*** Add File: new\n+x\n"),
         ErrorCode.FS_IS_DIRECTORY, "/new is a directory"),
    ],
)
def test_every_part_is_checked_before_anything_is_written(
    root: Path, patch: str, code: ErrorCode, needle: str
) -> None:
    ws = seeded(root)
    if "Add File: new\n" in patch:
        (root / "new").mkdir()
    faulty = Faulty(ws.backend)
    ctx = agent(ws, faulty)
    res = ctx.tools.execute("apply_patch", {"patch": patch})
    assert res.error is not None and res.error.code is code, res.text
    assert needle in res.text, res.text
    assert faulty.calls == []
    assert files(root) == BEFORE


def test_observation_is_needed_for_each_existing_file(root: Path) -> None:
    ws = seeded(root)
    faulty = Faulty(ws.backend)
    other = ws.context("b")
    other.fs.backend = faulty
    res = other.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_OBSERVED, res.text
    assert faulty.calls == []
    for name in ("a.txt", "b.txt"):
        assert other.tools.execute("read", {"file_path": name}).ok
    res = other.tools.execute("apply_patch", {"patch": PATCH})
    assert res.error is not None and res.error.code is ErrorCode.FS_NOT_OBSERVED
    assert "/e.txt has not been read yet" in res.text
    assert faulty.calls == [] and files(root) == BEFORE


def test_the_edit_limit_is_checked_before_any_write(root: Path) -> None:
    ws = Workspace(str(root), limits=Limits(max_edit_bytes=64))
    for name, data in BEFORE.items():
        (root / name).write_bytes(data)
    faulty = Faulty(ws.backend)
    ctx = agent(ws, faulty)
    big = "*** Begin Patch\n*** Update File: a.txt\n@@\n-beta\n+" + "x" * 100 + "\n*** End Patch"
    res = ctx.tools.execute("apply_patch", {"patch": big})
    assert res.error is not None and res.error.code is ErrorCode.FS_TOO_LARGE, res.text
    assert faulty.calls == [] and files(root) == BEFORE


# -- a file-size limit of the store (RLIMIT_FSIZE), hit by the third write ------------------

_LIMITED = textwrap.dedent(
    """
    import json, resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    from fsseam import Workspace
    root, patch = sys.argv[1], sys.argv[2]
    ctx = Workspace(root).context("a")
    for name in ("a.txt", "b.txt", "c.txt"):
        assert ctx.tools.execute("read", {"file_path": name}).ok
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
    res = ctx.tools.execute("apply_patch", {"patch": patch})
    print(json.dumps({"ok": res.ok, "code": res.error and res.error.code.value,
                      "text": res.text}))
    """
)


def test_a_size_limit_of_the_store_on_the_third_file_rolls_back(root: Path) -> None:
    before = {"a.txt": b"a\n", "b.txt": b"b\n", "c.txt": b"c\n"}
    for name, data in before.items():
        (root / name).write_bytes(data)
    patch = (
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n"
        "+B\n*** Update File: c.txt\n@@\n-c\n+" + "C" * 10_000 + "\n*** End Patch"
    )
    out = subprocess.run([sys.executable, "-c", _LIMITED, str(root), patch],
                         capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(out.stdout)
    assert result["code"] == "FS_TOO_LARGE", result
    assert files(root) == before


# -- a process killed at every step of a commit ---------------------------------------------

_KILLED = textwrap.dedent(
    """
    import sys, time
    from fsseam import ErrorCode, FsError, Workspace
    root, patch, stop, fail_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    ws = Workspace(root)
    ctx = ws.context("a")
    for name in ("a.txt", "b.txt", "e.txt"):
        assert ctx.tools.execute("read", {"file_path": name}).ok
    inner, calls = ws.backend, [0]

    def pause(where):
        print(where, flush=True)
        time.sleep(60)

    def step(run):
        calls[0] += 1
        if stop == 0 and calls[0] == 1:
            pause("before the first write")
        if calls[0] == fail_at:
            raise FsError(ErrorCode.FS_BACKEND, "injected")
        out = run()
        if calls[0] == stop:
            pause(f"after call {stop}")
        return out

    class Hooked:
        def __getattr__(self, name):
            return getattr(inner, name)
        def write(self, key, data, pre, **kw):
            return step(lambda: inner.write(key, data, pre))
        def delete(self, key, pre, **kw):
            return step(lambda: inner.delete(key, pre))
        def copy(self, src, dst, pre):
            return step(lambda: inner.copy(src, dst, pre))

    ctx.fs.backend = Hooked()
    print(ctx.tools.execute("apply_patch", {"patch": patch}).text, flush=True)
    pause("done")
    """
)

N = len(STEPS)


@pytest.mark.parametrize(
    ("stop", "fail_at", "done"),
    [
        # killed after validation and after each step: the steps before hold
        *[(k, 0, k) for k in range(N + 1)],
        # the last step fails; killed after each undo (calls N+1 ...): fewer steps hold
        *[(N + j, N, N - 1 - j) for j in range(1, N)],
    ],
)
def test_sigkill_at_every_commit_step(root: Path, stop: int, fail_at: int, done: int) -> None:
    seeded(root)
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILLED, str(root), PATCH, str(stop), str(fail_at)],
        stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith(("before", "after")), line
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    # Each step is atomic: every file holds exactly its old or its new bytes, and the done
    # steps are a prefix of the commit order (created files first, deletes last), so no
    # content was lost: the moved file is at both paths until its source is deleted.
    assert files(root) == after_steps(done)


def test_a_change_keeps_the_bytes_it_wrote_for_the_next_conflicts_diff(root: Path) -> None:
    """After apply_patch, another program changes a file it wrote: the agent's next edit is
    refused with the diff from the patched bytes (kept by the change; this workspace keeps
    no history), and the retry needs no read."""
    ws = seeded(root)
    ctx = agent(ws)
    assert ctx.tools.execute("apply_patch", {"patch": PATCH}).ok
    (root / "new" / "c.txt").write_bytes(b"ocean\n")  # a program that is not fsseam
    res = ctx.tools.execute("edit", {"file_path": "/new/c.txt", "old_string": "sea",
                                     "new_string": "lake"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert "\n@@ -1 +1 @@\n-sea\n+ocean\n" in res.text, res.text
    res = ctx.tools.execute("edit", {"file_path": "/new/c.txt", "old_string": "ocean",
                                     "new_string": "lake"})
    assert res.ok, res.text
    assert (root / "new" / "c.txt").read_bytes() == b"lake\n"
