"""A multi-file change on S3 whose Nth storage call fails, and reads whose GETs fail: the
shared suites (fsseam.testing.stores.ChangeFaultSuite, ReadFaultSuite) against a moto server
of this module's own behind a fault plan (``moto_server(faults=...)``), aimed at one
object's requests by its key. Retries are sped up, not changed."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from typing import Any

import aiobotocore.endpoint
import pytest
import s3fs.core
from fsseam_s3.testing import MotoEndpoint, S3FaultRig, moto_server

from fsseam.testing.faults import FaultPlan, shorten_sleeps
from fsseam.testing.stores import (
    ChangeFaultSuite,
    LostAnswerSuite,
    ReadFaultSuite,
    WriteFaultSuite,
)


@pytest.fixture(scope="module")
def faulty() -> Iterator[tuple[MotoEndpoint, FaultPlan]]:
    plan = FaultPlan()
    with moto_server(faults=plan) as endpoint:
        logging.getLogger("werkzeug").setLevel(logging.CRITICAL)
        yield endpoint, plan


@pytest.fixture(autouse=True)
def fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    async def short_sleep(self: Any, amount: float) -> None:
        await asyncio.sleep(min(amount, 0.001))

    monkeypatch.setattr(aiobotocore.endpoint.AioEndpoint, "_sleep", short_sleep)
    shorten_sleeps(monkeypatch, s3fs.core)


@pytest.fixture
def faulty_store(faulty: tuple[MotoEndpoint, FaultPlan]) -> Iterator[S3FaultRig]:
    endpoint, plan = faulty
    plan.clear()
    yield S3FaultRig(endpoint, endpoint.create_bucket(), plan=plan)
    plan.clear()


class TestChangeFaults(ChangeFaultSuite):
    pass


class TestReadFaults(ReadFaultSuite):
    pass


class TestWriteFaults(WriteFaultSuite):
    # 503 is SlowDown, which s3fs retries on top of botocore: test_s3_faults.py.
    statuses = ("500",)


class TestLostAnswers(LostAnswerSuite):
    pass
