"""The running call (``fsseam.calling``) reaches every thread that changes files for it: a
merge publishes its files from a pool of threads, and each write there still knows the
call (the audit trail names it; the exactly-once record needs its id)."""

from __future__ import annotations

import uuid

from fsseam import Workspace, WriteMeta
from fsseam.backends.base import Backend, Wrapper
from fsseam.backends.memory import MemoryBackend
from fsseam.calling import current, scope
from fsseam.versions import Precondition, Version


class Seeing(Wrapper):
    """Records the call each write of a non-reserved key ran in."""

    def __init__(self, inner: Backend) -> None:
        super().__init__(inner)
        self.seen: list[tuple[str, str | None, str | None]] = []

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        if not key.startswith(".fsseam"):
            call = current()
            self.seen.append((key, call.call_id if call else None, call.tool if call else None))
        return self.inner.write(key, data, precondition, meta=meta)


def test_a_merge_s_publishers_run_in_the_caller_s_call() -> None:
    inner = MemoryBackend.from_url(f"memory://calls-{uuid.uuid4().hex}", {"global_store": False})
    seeing = Seeing(inner)
    ws = Workspace("memory://seeing", backend=seeing, load_entry_points=False)
    bot = ws.branch("f").context("bot")
    for name in ("a", "b", "c"):
        assert bot.tools.execute("write", {"file_path": f"/{name}.txt", "content": "x\n"}).ok
    seeing.seen.clear()
    with scope("merge-1", "merge"):
        ws.merge("f", owner="carol")
    assert sorted(seeing.seen) == [("a.txt", "merge-1", "merge"), ("b.txt", "merge-1", "merge"),
                                   ("c.txt", "merge-1", "merge")]
