"""Lost updates: threads and processes racing read-modify-write on one blob, through the
backend (an integer counter) and through the agent tools (each agent appends tokens to its
own line of one shared file). Every acknowledged update must be in the blob."""

from __future__ import annotations

import multiprocessing
import re
import threading
from typing import Any

from fsseam_azure.testing import agent_edits

from fsseam.backends import open_backend
from fsseam.testing.conformance import increment, increment_worker
from fsseam.versions import CreateOnly

THREADS = 4
THREAD_INCREMENTS = 15
PROCESSES = 3
PROCESS_INCREMENTS = 30


def test_threads_and_processes_lose_no_increment(
    container: str, az_options: dict[str, Any]
) -> None:
    spec = (f"az://{container}/race", dict(az_options))
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
        # Children build their own backend (own adlfs filesystem, own connections).
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


def test_agents_in_processes_lose_no_edit(container: str, az_options: dict[str, Any]) -> None:
    agents, edits = 4, 10
    url = f"az://{container}/agents"
    backend = open_backend(url, dict(az_options))
    backend.write(
        "shared.txt", "".join(f"slot-{a}:\n" for a in range(agents)).encode(), CreateOnly()
    )
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager, ctx.Pool(agents) as pool:
        start = manager.Barrier(agents)
        results = pool.starmap(
            agent_edits, [(url, dict(az_options), a, edits, start) for a in range(agents)]
        )
    final = backend.read("shared.txt").data.decode()
    acked = {token for tokens, _ in results for token in tokens}
    present = set(re.findall(r"t\d+\.\d+", final))
    assert len(acked) == agents * edits
    assert present == acked  # none lost, none invented
    for a in range(agents):  # each agent's tokens on its own line, in order
        assert final.splitlines()[a] == f"slot-{a}:" + "".join(
            f" t{a}.{i}" for i in range(edits)
        )
    assert sum(stale for _, stale in results) > 0  # the agents did collide
