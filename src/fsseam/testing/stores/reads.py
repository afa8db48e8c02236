"""Reads whose GETs fail at the store, persistently or not."""

from __future__ import annotations

from typing import Any

from .rigs import ReadFaultRig, url_of

__all__ = ["NEW", "OLD", "ReadFaultSuite", "code_of", "ledger_of"]


OLD = "old line 1\nold line 2\n"
NEW = "new line 1\nnew line 2\nnew line 3\n"
_NOTHING_OBSERVED = {"format": 1, "owners": {}, "changes": {}, "answers": {}}


def ledger_of(ws: Any) -> dict[str, Any]:
    assert ws.policy is not None
    dumped: dict[str, Any] = ws.policy.ledger.model_dump()
    return dumped


def code_of(res: Any) -> Any:
    assert not res.ok, res.text
    assert res.error is not None
    assert res.text.startswith(f"Error [{res.error.code.value}]: "), res.text
    return res.error.code


class ReadFaultSuite:
    """Mixin: subclass with a ``faulty_store`` fixture (a :class:`ReadFaultRig`). A read
    whose GETs fail records nothing, a transient failure is retried to the version of the
    bytes read, and an edit whose read fails changes nothing."""

    name = "doc.txt"

    def _seeded(self, rig: ReadFaultRig) -> tuple[Any, str]:
        from ...workspace import Workspace

        rig.fill({self.name: OLD.encode()})
        state = rig.state(self.name)
        assert state is not None
        rig.clear()
        return Workspace(url_of(rig, ""), storage_options=rig.storage_options()), state[1]

    def test_get_500_persistent_is_fs_backend_and_records_nothing(
        self, faulty_store: ReadFaultRig
    ) -> None:
        from ...errors import ErrorCode

        ws, _ = self._seeded(faulty_store)
        ctx = ws.context("a")
        faulty_store.fail_reads(self.name, "500", 1000)
        res = ctx.tools.execute("read", {"file_path": f"/{self.name}"})
        assert code_of(res) is ErrorCode.FS_BACKEND
        assert faulty_store.seen(self.name, "GET") == faulty_store.read_attempts
        assert ledger_of(ws) == _NOTHING_OBSERVED
        # Nothing observed: a write is create-only and refused, the file untouched.
        faulty_store.clear()
        res = ctx.tools.execute("write", {"file_path": f"/{self.name}", "content": NEW})
        assert code_of(res) is ErrorCode.FS_NOT_OBSERVED
        state = faulty_store.state(self.name)
        assert state is not None and state[0] == OLD.encode()

    def test_get_500_transient_read_succeeds_with_the_version_of_its_bytes(
        self, faulty_store: ReadFaultRig
    ) -> None:
        ws, version = self._seeded(faulty_store)
        ctx = ws.context("a")
        faulty_store.fail_reads(self.name, "500", 2)
        res = ctx.tools.execute("read", {"file_path": f"/{self.name}"})
        assert res.ok, res.text
        assert faulty_store.seen(self.name, "GET") == 3
        assert ledger_of(ws)["owners"]["a"][self.name]["value"] == version

    def test_get_reset_persistent_is_fs_backend(self, faulty_store: ReadFaultRig) -> None:
        from ...errors import ErrorCode

        ws, _ = self._seeded(faulty_store)
        ctx = ws.context("a")
        faulty_store.fail_reads(self.name, "reset", 1000)
        res = ctx.tools.execute("read", {"file_path": f"/{self.name}"})
        assert code_of(res) is ErrorCode.FS_BACKEND
        low, high = faulty_store.reset_read_attempts
        assert low <= faulty_store.seen(self.name, "GET") <= high
        assert ledger_of(ws) == _NOTHING_OBSERVED

    def test_edit_get_500_changes_nothing(self, faulty_store: ReadFaultRig) -> None:
        from ...errors import ErrorCode

        ws, version = self._seeded(faulty_store)
        ctx = ws.context("a")
        assert ctx.tools.execute("read", {"file_path": f"/{self.name}"}).ok
        before = ledger_of(ws)
        faulty_store.clear()
        faulty_store.fail_reads(self.name, "500", 1000)
        res = ctx.tools.execute(
            "edit", {"file_path": f"/{self.name}", "old_string": "old line 1", "new_string": "X"}
        )
        assert code_of(res) is ErrorCode.FS_BACKEND
        assert faulty_store.seen(self.name, "GET") == faulty_store.read_attempts
        assert faulty_store.seen(self.name, "PUT") == 0
        assert faulty_store.state(self.name) == (OLD.encode(), version)
        assert ledger_of(ws) == before
