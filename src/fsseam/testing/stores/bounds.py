"""Bounded work on a store: a refused edit of a frequent old_string reads in bounded memory
and writes nothing."""

from __future__ import annotations

import tracemalloc

from ...errors import ErrorCode
from ...limits import MiB
from .rigs import StoreRig, url_of

__all__ = ["BoundsSuite"]


class BoundsSuite:
    """Mixin: subclass with a ``store`` fixture."""

    size = 16 * MiB

    def test_an_edit_of_a_in_16_mib_of_a_is_refused_in_bounded_memory(
        self, store: StoreRig
    ) -> None:
        from ...workspace import Workspace

        store.fill({"p/big.txt": b"a" * self.size})
        ws = Workspace(url_of(store, "p"), storage_options=store.storage_options())
        ctx = ws.context("a")
        assert ctx.tools.execute("read", {"file_path": "/big.txt", "limit": 1}).ok
        store.take()
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            res = ctx.tools.execute("edit", {"file_path": "/big.txt", "old_string": "a",
                                             "new_string": "b"})
            peak = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        assert res.error is not None and res.error.code is ErrorCode.FS_MULTIPLE_MATCHES
        assert "more than 1000 times in /big.txt, at line 1." in res.text, res.text
        assert set(store.take()) == {"GET"}  # nothing written
        assert peak < 4 * self.size, peak
        assert ws.backend.read("big.txt").data == b"a" * self.size
