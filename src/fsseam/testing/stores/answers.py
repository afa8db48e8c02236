"""Lost answers at commit: a move or patch whose source DELETE lands but whose answer is
lost never loses the file, and an upload that lands while its answer and the look that
would recover it are lost is never reported as "nothing was applied". Each test asserts
the exact bucket contents, the error code and what the answer says of each file."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from ...backends.base import ANY_VERSION, Backend, Blob, Wrapper, WriteMeta
from ...errors import ErrorCode
from ...versions import Version
from .rigs import LostAnswerRig, url_of

__all__ = ["LostAnswerSuite"]

_BEFORE = {"a.txt": b"a\n", "b.txt": b"b\n", "d.txt": b"d\n"}
_PATCH = (
    "*** Begin Patch\n*** Add File: n.txt\n+new\n"
    "*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-b\n+B\n"
    "*** Delete File: d.txt\n*** End Patch"
)
# Commit order: n.txt (created), a.txt, b.txt (updated), d.txt (deleted).
_AFTER = {"n.txt": b"new\n", "a.txt": b"A\n", "b.txt": b"B\n"}
_MOVE_PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n*** Move to: m.txt\n@@\n-a\n+A\n"
    "*** End Patch"
)


class ArmAt(Wrapper):
    """The workspace's backend, arming faults at the store when the call first reaches
    ``at`` (``(method, key)``) and disarming them when it reaches ``until``: the reads that
    prepared the call succeed and only the requests between meet the faults. Only the
    timing is the wrapper's; the failures are the store's answers."""

    def __init__(self, inner: Backend, rig: LostAnswerRig, at: tuple[str, str],
                 arm: Any, until: tuple[str, str] | None = None) -> None:
        super().__init__(inner)
        self.rig, self.at, self.until, self.arm = rig, at, until, arm
        self.armed: list[Any] | None = None

    def _reach(self, method: str, key: str) -> None:
        if (method, key) == self.at and self.armed is None:
            before = len(self.rig.plan.faults)
            self.arm()
            self.armed = self.rig.plan.faults[before:]
        if (method, key) == self.until:
            for fault in self.armed or ():
                fault.times = 0

    def write(self, key: str, data: bytes, pre: Any, *, meta: WriteMeta | None = None) -> Any:
        self._reach("write", key)
        return self.inner.write(key, data, pre, meta=meta)

    def delete(self, key: str, pre: Any = ANY_VERSION, *, meta: WriteMeta | None = None) -> None:
        self._reach("delete", key)
        self.inner.delete(key, pre, meta=meta)

    def read(self, key: str) -> Any:
        self._reach("read", key)
        return self.inner.read(key)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> Any:
        self._reach("read", key)
        return self.inner.open_read(key, chunk_size)

    # The defaults, not the store's: a read started past ``read``, or a look at who wrote
    # the object, would reach the store without passing the points that arm and disarm.
    def start_read(self, key: str) -> Callable[[], Blob] | None:
        return Backend.start_read(self, key)

    def writer_of(self, key: str) -> tuple[Version, str | None] | None:
        return Backend.writer_of(self, key)


class LostAnswerSuite:
    """Mixin: subclass with a ``faulty_store`` fixture (a :class:`LostAnswerRig`)."""

    prefix = "proj"

    def _observed(self, rig: LostAnswerRig, ws: Any = None) -> Any:
        """A context that has read every file (of ``ws``, else of a new workspace over
        a bucket holding them)."""
        from ...workspace import Workspace

        if ws is None:
            rig.fill({f"{self.prefix}/{name}": data for name, data in _BEFORE.items()})
            ws = Workspace(url_of(rig, self.prefix), storage_options=rig.storage_options())
        ctx = ws.context("a")
        for name in _BEFORE:
            assert ctx.tools.execute("read", {"file_path": name}).ok
        return ctx

    def _name(self, name: str) -> str:
        return f"{self.prefix}/{name}"

    def _lose_upload(self, ctx: Any, rig: LostAnswerRig, name: str, *,
                     read_back: bool, looks: int = 1000) -> None:
        """``name``'s next upload lands and its answer is lost; the next ``looks`` looks
        that would recover it fail (every one by default), and so does reading it back
        unless ``read_back``."""
        full = self._name(name)

        def arm() -> None:
            rig.fail_writes(full, "lost", 1)
            rig.fail_looks(full, "503", looks)
            if not read_back:
                rig.fail_reads(full, "503", 1000)

        until = ("read", name) if read_back else None
        ctx.fs.backend = ArmAt(ctx.fs.backend, rig, ("write", name), arm, until)

    def _fail_delete_and_read_back(self, ctx: Any, rig: LostAnswerRig, name: str) -> None:
        full = self._name(name)

        def arm() -> None:
            rig.fail_deletes(full, "503", 1000)
            rig.fail_looks(full, "503", 1000)
            rig.fail_reads(full, "503", 1000)

        ctx.fs.backend = ArmAt(ctx.fs.backend, rig, ("delete", name), arm)

    def test_a_move_whose_source_delete_answer_is_lost_is_done(
        self, faulty_store: LostAnswerRig
    ) -> None:
        """The DELETE of the source lands, its answer is lost, the resend gets 404: the
        file is at its destination, and the answer says it moved."""
        ctx = self._observed(faulty_store)
        faulty_store.fail_deletes(self._name("a.txt"), "lost", 1)
        res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
        assert res.ok, res.text
        assert res.text == "Moved /a.txt to /m.txt."
        assert faulty_store.seen(self._name("a.txt"), "DELETE", forwarded=True) == 2
        assert faulty_store.stored(self.prefix) == {
            "b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"a\n"}
        # the agent may go on editing the moved file
        assert ctx.tools.execute("edit", {"file_path": "m.txt", "old_string": "a",
                                          "new_string": "z"}).ok

    @pytest.mark.parametrize("patch", ["move", "delete"])
    def test_a_patch_whose_delete_answer_is_lost_is_done(
        self, faulty_store: LostAnswerRig, patch: str
    ) -> None:
        ctx = self._observed(faulty_store)
        name = "a.txt" if patch == "move" else "d.txt"
        faulty_store.fail_deletes(self._name(name), "lost", 1)
        res = ctx.tools.execute("apply_patch", {"patch": _MOVE_PATCH if patch == "move"
                                                else _PATCH})
        assert res.ok, res.text
        assert faulty_store.seen(self._name(name), "DELETE", forwarded=True) == 2
        assert faulty_store.stored(self.prefix) == (
            {"b.txt": b"b\n", "d.txt": b"d\n", "m.txt": b"A\n"} if patch == "move"
            else _AFTER)

    def test_a_lost_upload_whose_recovery_fails_is_read_back(
        self, faulty_store: LostAnswerRig
    ) -> None:
        """b.txt's upload lands, its answer is lost, the resend gets 412 and the look that
        would read the write id back fails every time: one GET finds the patch's bytes,
        but who wrote them cannot be told (another writer's same change is not this
        one's): the change stops, the steps before are undone, b.txt is left as it is and
        the answer says it may be this change's own."""
        ctx = self._observed(faulty_store)
        self._lose_upload(ctx, faulty_store, "b.txt", read_back=True)
        res = ctx.tools.execute("apply_patch", {"patch": _PATCH})
        assert faulty_store.looks_seen(self._name("b.txt")) >= 1
        faulty_store.clear()
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
        assert res.text.startswith(
            "Error [FS_STALE]: /b.txt already holds exactly your change, made since your "
            "read by another writer or by an earlier try of yours whose answer was lost "
            "(which one cannot be told)"), res.text
        assert (
            "/n.txt is as it was; /a.txt is as it was; /b.txt holds this change's new "
            "content, which someone else had written too (or a resend of this change's own "
            "request), and was left as it is; /d.txt was not written."
        ) in res.text, res.text
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "b.txt": b"B\n"}

    def test_a_lost_upload_that_cannot_be_read_back_is_unknown_and_kept(
        self, faulty_store: LostAnswerRig
    ) -> None:
        """As above, and reading b.txt back fails too: b.txt holds the patch's text, which
        is left alone; the others are rolled back; the answer says which file is unknown,
        never "Nothing was applied"."""
        ctx = self._observed(faulty_store)
        self._lose_upload(ctx, faulty_store, "b.txt", read_back=False)
        res = ctx.tools.execute("apply_patch", {"patch": _PATCH})
        faulty_store.clear()
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert "Whether that step took effect is not known" in res.text, res.text
        assert (
            "/n.txt is as it was; /a.txt is as it was; whether /b.txt holds this change's "
            "new content is not known (reading it back failed): read it to see; /d.txt was "
            "not written. Read these files before going on"
        ) in res.text, res.text
        assert "Nothing was applied" not in res.text and "nothing was changed" not in res.text
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "b.txt": b"B\n"}

    def test_a_lost_move_delete_that_cannot_be_read_back_keeps_the_copy(
        self, faulty_store: LostAnswerRig
    ) -> None:
        """The source DELETE of a patch's move fails with 503 every time, and so does
        reading the source back: the source may be gone, so its copy is kept."""
        ctx = self._observed(faulty_store)
        self._fail_delete_and_read_back(ctx, faulty_store, "a.txt")
        res = ctx.tools.execute("apply_patch", {"patch": _MOVE_PATCH})
        faulty_store.clear()
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert (
            "/m.txt still holds the content moved there from /a.txt, and was kept since "
            "/a.txt is not known to hold it again; whether /a.txt was deleted is not known "
            "(reading it back failed): read it to see."
        ) in res.text, res.text
        assert "Nothing was applied" not in res.text
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "m.txt": b"A\n"}

    def test_a_move_whose_source_cannot_be_read_back_keeps_the_copy(
        self, faulty_store: LostAnswerRig
    ) -> None:
        ctx = self._observed(faulty_store)
        self._fail_delete_and_read_back(ctx, faulty_store, "a.txt")
        res = ctx.tools.execute("move", {"source_path": "a.txt", "destination_path": "m.txt"})
        faulty_store.clear()
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert "Whether /a.txt was deleted is not known" in res.text, res.text
        assert "/m.txt, the copy made for the move, was kept" in res.text
        assert "nothing was changed" not in res.text
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "m.txt": b"a\n"}

    @pytest.mark.parametrize("tool", ["write", "edit"])
    def test_a_single_write_whose_upload_and_recovery_are_lost(
        self, faulty_store: LostAnswerRig, tool: str
    ) -> None:
        """One file: the recovery look fails, the GET finds our bytes, but who wrote them
        cannot be told: FS_STALE saying the file holds exactly the change, perhaps the
        agent's own earlier try; when the GET fails too, the answer says the outcome is
        unknown, not that it changed."""
        def args(name: str) -> dict[str, Any]:
            upper = name.upper().replace(".TXT", "")
            if tool == "write":
                return {"file_path": name, "content": f"{upper}\n"}
            return {"file_path": name, "old_string": name[0], "new_string": upper}

        ctx = self._observed(faulty_store)
        self._lose_upload(ctx, faulty_store, "a.txt", read_back=True)
        res = ctx.tools.execute(tool, args("a.txt"))
        assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
        assert res.text.startswith(
            "Error [FS_STALE]: /a.txt already holds exactly your change, made since your "
            "read by another writer or by an earlier try of yours whose answer was lost "
            "(which one cannot be told)"), res.text
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "a.txt": b"A\n"}
        faulty_store.clear()
        ctx = self._observed(faulty_store, ctx.workspace)
        self._lose_upload(ctx, faulty_store, "b.txt", read_back=False)
        res = ctx.tools.execute(tool, args("b.txt"))
        faulty_store.clear()
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert "Whether it took effect is not known: reading /b.txt back failed too" in res.text
        assert "has changed since" not in res.text and "nothing was changed" not in res.text
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "a.txt": b"A\n", "b.txt": b"B\n"}

    @pytest.mark.parametrize("tool", ["write", "edit"])
    def test_a_lost_upload_whose_owner_the_object_names_is_our_own(
        self, faulty_store: LostAnswerRig, tool: str
    ) -> None:
        """The upload lands, its answer is lost, the resend gets 412 and the store's own
        look for the write id fails once: the file holds exactly our bytes, and the next
        look at who wrote them names this owner, so the change is its own (done), not
        another writer's."""
        ctx = self._observed(faulty_store)
        self._lose_upload(ctx, faulty_store, "a.txt", read_back=True, looks=1)
        args = ({"file_path": "a.txt", "content": "A\n"} if tool == "write" else
                {"file_path": "a.txt", "old_string": "a", "new_string": "A"})
        res = ctx.tools.execute(tool, args)
        assert res.ok, res.text
        assert faulty_store.looks_seen(self._name("a.txt")) >= 2
        faulty_store.clear()
        assert faulty_store.stored(self.prefix) == {**_BEFORE, "a.txt": b"A\n"}
        # The agent goes on from its own write, without a read.
        res = ctx.tools.execute("edit", {"file_path": "a.txt", "old_string": "A",
                                         "new_string": "AA"})
        assert res.ok, res.text

    def test_a_single_delete_whose_answer_is_lost(self, faulty_store: LostAnswerRig) -> None:
        ctx = self._observed(faulty_store)
        faulty_store.fail_deletes(self._name("a.txt"), "lost", 1)
        res = ctx.tools.execute("delete", {"file_path": "a.txt"})
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND, res.text
        assert "someone else deleted it, or a resend of this very delete" in res.text
        assert faulty_store.stored(self.prefix) == {"b.txt": b"b\n", "d.txt": b"d\n"}
