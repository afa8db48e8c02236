"""A multi-file change whose Nth request fails at the store."""

from __future__ import annotations

from typing import Any

import pytest

from ...backends.base import Wrapper, WriteMeta
from ...messages import MESSAGES, Reason, render
from .rigs import FaultRig, url_of

__all__ = ["ChangeFaultSuite"]


_BEFORE = {"a.txt": b"a\r\n", "b.txt": b"b\n", "c.txt": b"\xef\xbb\xbfc\n", "d.txt": b"d\n"}
_AFTER = {"n.txt": b"new\n", "a.txt": b"A\r\n", "b.txt": b"B\n", "c.txt": b"\xef\xbb\xbfC\n"}
_PATCH = (
    "*** Begin Patch\n*** Add File: n.txt\n+new\n"
    "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n"
    "*** Update File: c.txt\n@@\n-c\n+C\n*** Delete File: d.txt\n*** End Patch"
)
# The patch commits n.txt (created), a, b, c (updated), then d (deleted).
_OPS = {"n.txt": "create", "a.txt": "update", "c.txt": "update", "d.txt": "delete"}


class ChangeFaultSuite:
    """Mixin: subclass with a ``faulty_store`` fixture (a :class:`FaultRig`). A multi-file
    change whose Nth storage call fails leaves every file byte for byte as it was, the parts
    already written rolled back with their own compare-and-swap; a rollback that loses to
    another writer says what each file holds."""

    prefix = "proj"

    def _observed(self, ws: Any) -> Any:
        ctx = ws.context("a")
        for name in _BEFORE:
            assert ctx.tools.execute("read", {"file_path": name}).ok
        return ctx

    def _workspace(self, rig: FaultRig) -> Any:
        from ...workspace import Workspace

        rig.fill({f"{self.prefix}/{name}": data for name, data in _BEFORE.items()})
        return Workspace(url_of(rig, self.prefix), storage_options=rig.storage_options())

    @pytest.mark.parametrize("name", list(_OPS))
    def test_a_failure_on_the_nth_write_leaves_every_file_as_it_was(
        self, faulty_store: FaultRig, name: str
    ) -> None:
        from ...errors import ErrorCode

        ws = self._workspace(faulty_store)
        ctx = self._observed(ws)
        faulty_store.fail(f"{self.prefix}/{name}", _OPS[name])
        res = ctx.tools.execute("apply_patch", {"patch": _PATCH})
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert res.text.endswith(render(Reason.change_not_applied)), res.text
        faulty_store.clear()
        assert faulty_store.stored(self.prefix) == _BEFORE
        if not faulty_store.content_versions:
            ctx = self._observed(ws)  # restored files have new versions: read them again
        res = ctx.tools.execute("apply_patch", {"patch": _PATCH})
        assert res.ok, res.text
        assert faulty_store.stored(self.prefix) == _AFTER

    def test_a_rollback_that_loses_to_another_writer_says_so(
        self, faulty_store: FaultRig
    ) -> None:
        from ...errors import ErrorCode

        ws = self._workspace(faulty_store)
        ctx = self._observed(ws)
        inner = ws.backend
        theirs = {f"{self.prefix}/a.txt": b"theirs\n"}

        class Meanwhile(Wrapper):
            """Another writer changes a.txt (just written by the change) before c.txt's
            write is sent, which then fails at the store."""

            def write(self, key: str, data: bytes, pre: Any, *,
                      meta: WriteMeta | None = None) -> Any:
                if key == "c.txt":
                    faulty_store.fill(theirs)
                return inner.write(key, data, pre, meta=meta)

        ctx.fs.backend = Meanwhile(inner)
        faulty_store.fail(f"{self.prefix}/c.txt", "update")
        res = ctx.tools.execute("apply_patch", {"patch": _PATCH})
        faulty_store.clear()
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        files = "; ".join([
            render(Reason.rollback_restored, "/n.txt"), render(Reason.rollback_changed, "/a.txt"),
            render(Reason.rollback_restored, "/b.txt"), render(Reason.rollback_untouched, "/c.txt"),
            render(Reason.rollback_untouched, "/d.txt"),
        ])
        tail = MESSAGES[Reason.change_rollback_incomplete].rsplit("{files}", 1)[1]
        assert f"{files}{tail}" in res.text, res.text
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "a.txt": b"theirs\n"}
