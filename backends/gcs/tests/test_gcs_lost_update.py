"""Lost-update: threads and two processes racing read-increment-IfMatch-retry on one object."""

from __future__ import annotations

import multiprocessing
import threading
from typing import Any

from fsseam.backends import open_backend
from fsseam.testing.conformance import increment, increment_worker
from fsseam.versions import CreateOnly

THREADS = 4
THREAD_INCREMENTS = 15
PROCESSES = 2
PROCESS_INCREMENTS = 30


def test_threads_and_processes_lose_no_increment(
    gcs_bucket: str, gcs_options: dict[str, Any]
) -> None:
    spec = (f"gs://{gcs_bucket}/race", dict(gcs_options))
    backend = open_backend(*spec)
    backend.write("counter", b"0", CreateOnly())
    results: list[tuple[int, int]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(increment(backend, "counter", THREAD_INCREMENTS))
        except BaseException as e:  # reported by the assertion below
            errors.append(e)

    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(PROCESSES) as pool:
        # Children build their own backend (own GCSFileSystem, own connections).
        pending = pool.starmap_async(
            increment_worker, [(spec, "counter", PROCESS_INCREMENTS)] * PROCESSES
        )
        threads = [threading.Thread(target=run) for _ in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        process_results = pending.get(timeout=240)
    assert not errors, errors
    total = THREADS * THREAD_INCREMENTS + PROCESSES * PROCESS_INCREMENTS
    assert sum(r[0] for r in results + process_results) == total
    assert backend.read("counter").data == str(total).encode()
    # The race was real: some compare-and-swaps lost and were retried.
    assert sum(r[1] for r in results + process_results) > 0
