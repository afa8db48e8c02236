"""Lost updates on s3://: the shared suite (fsseam.testing.stores), each thread with a
backend of its own."""

from __future__ import annotations

from fsseam.testing.stores import LostUpdateSuite


class TestLostUpdate(LostUpdateSuite):
    threads = 8
    thread_increments = 10
    process_increments = 20
    backend_per_thread = True
