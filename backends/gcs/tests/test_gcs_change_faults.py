"""A multi-file change on GCS whose Nth storage call fails, and reads whose GETs fail: the
shared suites (fsseam.testing.stores.ChangeFaultSuite, ReadFaultSuite) against the fault
proxy in front of fake-gcs-server (``fsseam_gcs.testing.fault_proxy``), aimed at one
object's upload by the generation its compare-and-swap names, at its media GET or at its
DELETE by its name. gcsfs's retry sleeps are shortened; its decisions are not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import gcsfs.retry
import pytest
from fsseam_gcs.testing import GcsEndpoint, GcsFaultProxy, GcsFaultRig

from fsseam.testing.faults import shorten_sleeps
from fsseam.testing.stores import (
    ChangeFaultSuite,
    LostAnswerSuite,
    ReadFaultSuite,
    WriteFaultSuite,
)


@pytest.fixture(scope="module")
def proxy(gcs_server: GcsEndpoint) -> Iterator[GcsFaultProxy]:
    with gcs_server.fault_proxy() as p:
        yield p


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    shorten_sleeps(monkeypatch, gcsfs.retry)


@pytest.fixture
def faulty_store(proxy: GcsFaultProxy, gcs_admin: Any, gcs_bucket: str) -> Iterator[GcsFaultRig]:
    proxy.clear()
    yield GcsFaultRig(proxy, gcs_admin, gcs_bucket)
    proxy.clear()


class TestChangeFaults(ChangeFaultSuite):
    pass


class TestReadFaults(ReadFaultSuite):
    pass


class TestWriteFaults(WriteFaultSuite):
    pass


class TestLostAnswers(LostAnswerSuite):
    pass
