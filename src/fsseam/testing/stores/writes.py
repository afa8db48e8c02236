"""Writes whose upload fails at the store, persistently or not, or lands with its answer
lost: a failed write changes nothing and records nothing, a landed one is never reported
as failed."""

from __future__ import annotations

from typing import Any

import pytest

from ...errors import ErrorCode, FsError
from ...versions import CreateOnly
from .reads import NEW, OLD, code_of, ledger_of
from .rigs import WriteFaultRig, url_of

__all__ = ["WriteFaultSuite"]


class WriteFaultSuite:
    """Mixin: subclass with a ``faulty_store`` fixture (a :class:`WriteFaultRig`).
    ``statuses``: the 5xx answers the store's client retries the same way."""

    name = "doc.txt"
    statuses: tuple[str, ...] = ("500", "503")

    def pytest_generate_tests(self, metafunc: Any) -> None:
        if "status" in metafunc.fixturenames:
            metafunc.parametrize("status", self.statuses)

    def _observed(self, rig: WriteFaultRig) -> tuple[Any, Any, str]:
        from ...workspace import Workspace

        rig.fill({self.name: OLD.encode()})
        state = rig.state(self.name)
        assert state is not None
        ws = Workspace(url_of(rig, ""), storage_options=rig.storage_options())
        ctx = ws.context("a")
        assert ctx.tools.execute("read", {"file_path": f"/{self.name}"}).ok
        rig.clear()
        return ws, ctx, state[1]

    def test_upload_5xx_transient_is_retried_and_writes_once(
        self, faulty_store: WriteFaultRig, status: str
    ) -> None:
        rig = faulty_store
        ws, ctx, old = self._observed(rig)
        rig.fail_writes(self.name, status, rig.transient_faults)
        res = ctx.tools.execute("write", {"file_path": f"/{self.name}", "content": NEW})
        assert res.ok, res.text
        assert rig.seen(self.name, "PUT") == rig.transient_faults + 1
        assert rig.seen(self.name, "PUT", forwarded=True) == 1  # one write reached the store
        state = rig.state(self.name)
        assert state is not None and state[0] == NEW.encode() and state[1] != old
        assert ledger_of(ws)["owners"]["a"][self.name]["value"] == state[1]

    @pytest.mark.parametrize("tool", ["write", "edit"])
    def test_upload_5xx_persistent_is_fs_backend_and_changes_nothing(
        self, faulty_store: WriteFaultRig, status: str, tool: str
    ) -> None:
        rig = faulty_store
        ws, ctx, old = self._observed(rig)
        before = ledger_of(ws)
        rig.fail_writes(self.name, status, 1000)
        if tool == "write":
            res = ctx.tools.execute("write", {"file_path": f"/{self.name}", "content": NEW})
        else:
            res = ctx.tools.execute("edit", {"file_path": f"/{self.name}",
                                             "old_string": "old line 2", "new_string": "X"})
        assert code_of(res) is ErrorCode.FS_BACKEND
        assert rig.error_words[status] in res.text and "nothing was changed" in res.text
        assert rig.seen(self.name, "PUT") == rig.write_attempts
        assert rig.seen(self.name, "PUT", forwarded=True) == 0
        # the edit's one read, and one read back after the failure: a storage error does
        # not say the upload did not land, and only the object there can
        assert rig.seen(self.name, "GET") == (2 if tool == "edit" else 1)
        assert rig.state(self.name) == (OLD.encode(), old)
        assert ledger_of(ws) == before
        # The fault gone, the same call succeeds on the version still observed.
        rig.clear()
        res = ctx.tools.execute("write", {"file_path": f"/{self.name}", "content": NEW})
        assert res.ok, res.text
        state = rig.state(self.name)
        assert state is not None and state[0] == NEW.encode()

    def test_create_5xx_persistent_creates_nothing(self, faulty_store: WriteFaultRig) -> None:
        from ...backends.registry import open_backend

        rig = faulty_store
        backend = open_backend(url_of(rig, ""), rig.storage_options())
        rig.fail_writes(self.name, "500", 1000)
        try:
            backend.write(self.name, b"created", CreateOnly())
        except FsError as e:
            assert e.code is ErrorCode.FS_BACKEND
        else:
            raise AssertionError("a create whose every upload failed succeeded")
        assert rig.seen(self.name, "PUT") == rig.write_attempts
        assert rig.state(self.name) is None

    def test_lost_answer_of_conditional_upload_is_recognised_as_our_write(
        self, faulty_store: WriteFaultRig
    ) -> None:
        """The client resends the upload with the same condition; the first one already
        made a new version, so the resend is refused. The one look on that error path
        finds our write id, so the call succeeds with the version our write made."""
        rig = faulty_store
        ws, ctx, _ = self._observed(rig)
        rig.fail_writes(self.name, "lost", 1)
        res = ctx.tools.execute("write", {"file_path": f"/{self.name}", "content": NEW})
        assert res.ok, res.text
        assert rig.seen(self.name, "PUT") == 2
        assert rig.seen(self.name, "PUT", forwarded=True) == 2  # the resend reached it
        state = rig.state(self.name)
        assert state is not None and state[0] == NEW.encode()
        assert ledger_of(ws)["owners"]["a"][self.name]["value"] == state[1]
        # The agent carries on without a re-read: its own write is what it observed.
        res = ctx.tools.execute("edit", {"file_path": f"/{self.name}",
                                         "old_string": "new line 3", "new_string": "final"})
        assert res.ok, res.text

    def test_lost_answer_of_create_is_recognised_as_our_write(
        self, faulty_store: WriteFaultRig
    ) -> None:
        from ...workspace import Workspace

        rig = faulty_store
        ws = Workspace(url_of(rig, ""), storage_options=rig.storage_options())
        ctx = ws.context("a")
        rig.fail_writes(self.name, "lost", 1)
        res = ctx.tools.execute("write", {"file_path": f"/{self.name}", "content": NEW})
        assert res.ok, res.text
        assert rig.seen(self.name, "PUT") == 2
        state = rig.state(self.name)
        assert state is not None and state[0] == NEW.encode()
        assert ledger_of(ws)["owners"]["a"][self.name]["value"] == state[1]
