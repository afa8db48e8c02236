"""The backend conformance suite: every backend runs these same tests."""

from __future__ import annotations

import multiprocessing
from typing import Any

from ...backends.base import Backend
from ...versions import CreateOnly
from .base import MiB, increment, increment_worker
from .changes import ChangeConformance
from .objects import ObjectConformance

__all__ = [
    "BackendConformance",
    "MiB",
    "ProcessConformance",
    "increment",
    "increment_worker",
]


class BackendConformance(ObjectConformance, ChangeConformance):
    """Mixin: subclass with a ``backend`` fixture (fresh backend, empty root)."""

    def test_mount_points_are_listed(self, backend: Backend) -> None:
        listed = {(e.name, e.kind, e.key) for e in backend.list("")}
        assert {(m, "directory", m) for m in self.mount_points} <= listed
        for m in self.mount_points:
            assert backend.stat(m).kind == "directory"
            assert backend.list(m) == []


class ProcessConformance:
    """Mixin for storage shared between processes: fixture ``backend_spec`` gives
    ``(url, storage_options)`` of an empty root, ``backend`` a backend over it."""

    processes: int = 4
    process_increments: int = 50

    def test_concurrent_process_increments_lose_nothing(
        self, backend: Backend, backend_spec: tuple[str, dict[str, Any]]
    ) -> None:
        backend.write("counter", b"0", CreateOnly())
        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(self.processes) as pool:
            results = pool.starmap(
                increment_worker,
                [(backend_spec, "counter", self.process_increments)] * self.processes,
            )
        total = self.processes * self.process_increments
        assert sum(r[0] for r in results) == total
        assert int(backend.read("counter").data) == total
