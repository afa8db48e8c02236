"""A multi-file change on Azure Blob whose Nth storage call fails, and reads whose GETs
fail: the shared suites (fsseam.testing.stores.ChangeFaultSuite, ReadFaultSuite) against
the fault proxy in front of Azurite, aimed at one blob's requests by its path. The SDK's
retry backoff is shortened; its decisions are not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from fsseam_azure.testing import AzureFaultProxy, AzureFaultRig, fault_proxy, shorten_retries

from fsseam.testing.stores import (
    ChangeFaultSuite,
    LostAnswerSuite,
    ReadFaultSuite,
    WriteFaultSuite,
)


@pytest.fixture(scope="module")
def proxy(azurite: Any) -> Iterator[AzureFaultProxy]:
    with fault_proxy(azurite) as p:
        yield p


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    shorten_retries(monkeypatch)


@pytest.fixture
def faulty_store(proxy: AzureFaultProxy, azurite: Any, container: str) -> Iterator[AzureFaultRig]:
    proxy.clear()
    yield AzureFaultRig(proxy, azurite, container)
    proxy.clear()


class TestChangeFaults(ChangeFaultSuite):
    pass


class TestReadFaults(ReadFaultSuite):
    pass


class TestWriteFaults(WriteFaultSuite):
    pass


class TestLostAnswers(LostAnswerSuite):
    pass
