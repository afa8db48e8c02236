"""A call in progress is found by the call, never by the owner's name: two runs that carry
one owner name (a copied run context, a run state resumed twice) each keep their own reads.
Steps are ordered by events: run A reads the file and is held inside that call while run B,
which never read it, tries to change it."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from fsseam import ErrorCode, ReadEvent, Workspace, hookimpl
from fsseam.observations import MemoryObservations
from fsseam.versions import Overwrite

CONFIG = "/config.toml"
BEFORE = b"retries = 1\n"


class HoldFirstRead:
    """Holds the first read of ``path`` (after the policy recorded it: inside the reading
    call) until :attr:`release` is set; :attr:`inside` says it got there."""

    def __init__(self, path: str = CONFIG) -> None:
        self.path = path
        self.inside = threading.Event()
        self.release = threading.Event()
        self._held = False
        self._lock = threading.Lock()

    @hookimpl
    def fs_read(self, event: ReadEvent) -> None:
        with self._lock:
            hold = event.path == self.path and not self._held
            self._held = self._held or hold
        if hold:
            self.inside.set()
            assert self.release.wait(60), "the test never released the read"


def _while_a_reads(hold: HoldFirstRead, run_a: Callable[[], object],
                   run_b: Callable[[], object]) -> tuple[object, object]:
    """Run A in a thread until it is inside its read's call, then run B; then let A end."""
    answers: dict[str, object] = {}
    thread = threading.Thread(target=lambda: answers.setdefault("a", run_a()))
    thread.start()
    try:
        assert hold.inside.wait(60), "run A never read the file"
        answers["b"] = run_b()
    finally:
        hold.release.set()
        thread.join(60)
    return answers["a"], answers["b"]


def _stored(ws: Workspace) -> bytes:
    return ws.backend.read(CONFIG.lstrip("/")).data


@pytest.fixture
def hold() -> HoldFirstRead:
    return HoldFirstRead()


@pytest.fixture
def ws(hold: HoldFirstRead) -> Workspace:
    workspace = Workspace("memory://fsseam-calls", storage_options={"global_store": False},
                          plugins=[hold])
    workspace.backend.write(CONFIG.lstrip("/"), BEFORE, Overwrite())
    return workspace


@pytest.mark.parametrize("tool", ["edit", "write", "delete"])
def test_two_runs_of_one_owner_name_never_share_a_call(
        ws: Workspace, hold: HoldFirstRead, tool: str) -> None:
    a = ws.context("agent", observations=MemoryObservations())
    b = ws.context("agent", observations=MemoryObservations())
    args = {
        "edit": {"file_path": CONFIG, "old_string": "retries = 1", "new_string": "retries = 3"},
        "write": {"file_path": CONFIG, "content": "retries = 3\n"},
        "delete": {"file_path": CONFIG},
    }[tool]
    read, changed = _while_a_reads(
        hold, lambda: a.tools.execute("read", {"file_path": CONFIG}),
        lambda: b.tools.execute(tool, args))
    assert getattr(read, "ok", False)
    assert not getattr(changed, "ok", True)
    assert changed.error is not None and changed.error.code is ErrorCode.FS_NOT_OBSERVED  # type: ignore[attr-defined]
    assert _stored(ws) == BEFORE
    # Run A's read was kept where run A keeps its reads: its own edit goes through.
    assert a.tools.execute("edit", {"file_path": CONFIG, "old_string": "retries = 1",
                                    "new_string": "retries = 2"}).ok
    assert _stored(ws) == b"retries = 2\n"


def test_operations_nested_in_a_call_are_part_of_it(ws: Workspace, hold: HoldFirstRead
                                                    ) -> None:
    """What an operation inside another of the same owner and store records is the outer
    call's (stored once, when the outer call ends)."""
    hold.release.set()
    store = MemoryObservations()
    ctx = ws.context("agent", observations=store)
    assert ws.policy is not None
    with ws.policy.call("agent", store):
        assert ctx.tools.execute("read", {"file_path": CONFIG}).ok
        assert store.get("agent", CONFIG.lstrip("/")) is None  # not stored yet
        assert ctx.tools.execute("edit", {"file_path": CONFIG, "old_string": "retries = 1",
                                          "new_string": "retries = 4"}).ok
    entry = store.get("agent", CONFIG.lstrip("/"))
    assert entry is not None and len(entry.changes) == 1
    assert _stored(ws) == b"retries = 4\n"
