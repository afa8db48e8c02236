"""The audited backend keeps the contract: the shipped conformance suite over
``AuditedBackend`` (memory and local disk, the trail in a store of its own), and the trail
it leaves is a whole chain."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from fsseam.audit import AuditedBackend, AuditTrail
from fsseam.backends import Backend, open_backend
from fsseam.testing import BackendConformance


def _checked(trail: AuditTrail) -> None:
    report = trail.verify()
    assert report.ok, [p.text for p in report.problems]


class TestAuditedMemory(BackendConformance):
    @pytest.fixture
    def backend(self) -> Iterator[Backend]:
        kept = open_backend(f"memory://trail-{uuid.uuid4().hex}", {"global_store": False})
        trail = AuditTrail(kept)
        yield AuditedBackend(open_backend("memory://conformance", {"global_store": False}),
                             trail)
        _checked(trail)


class TestAuditedLocal(BackendConformance):
    @pytest.fixture
    def backend(self, root: Path, tmp_path: Path) -> Iterator[Backend]:
        (tmp_path / "trail").mkdir()
        trail = AuditTrail(open_backend(str(tmp_path / "trail")))
        yield AuditedBackend(open_backend(str(root)), trail)
        _checked(trail)
