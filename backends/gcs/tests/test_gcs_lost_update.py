"""Lost updates on gs://: threads and two processes racing read-increment-IfMatch-retry on
one object (the shared suite, fsseam.testing.stores)."""

from __future__ import annotations

from fsseam.testing.stores import LostUpdateSuite


class TestLostUpdate(LostUpdateSuite):
    pass
