"""Lost updates: threads, processes and agents racing compare-and-swaps on one object."""

from __future__ import annotations

import multiprocessing
import re
import threading
from typing import Any

from ...backends.registry import open_backend
from ...versions import CreateOnly
from ..conformance import increment, increment_worker
from .rigs import StoreRig, url_of

__all__ = ["AgentRaceSuite", "LostUpdateSuite", "agent_edits"]


class LostUpdateSuite:
    """Mixin: subclass with a ``store`` fixture. Every acknowledged update must be in the
    object, and the race must have been real (some compare-and-swaps lost)."""

    threads: int = 4
    thread_increments: int = 15
    processes: int = 2
    process_increments: int = 30
    backend_per_thread: bool = False
    """Each thread its own backend (its own filesystem and connections), or one shared."""

    def test_threads_and_processes_lose_no_increment(self, store: StoreRig) -> None:
        spec = (url_of(store, "race"), store.storage_options())
        backend = open_backend(*spec)
        backend.write("counter", b"0", CreateOnly())
        results: list[tuple[int, int]] = []
        errors: list[BaseException] = []

        def run() -> None:
            mine = open_backend(*spec) if self.backend_per_thread else backend
            try:
                results.append(increment(mine, "counter", self.thread_increments))
            except BaseException as e:  # reported by the assertion below
                errors.append(e)

        ctx = multiprocessing.get_context("spawn")
        with ctx.Pool(self.processes) as pool:
            # Children build their own backend (own filesystem, own connections).
            pending = pool.starmap_async(
                increment_worker, [(spec, "counter", self.process_increments)] * self.processes
            )
            threads = [threading.Thread(target=run) for _ in range(self.threads)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            results.extend(pending.get(timeout=240))
        assert not errors, errors
        total = self.threads * self.thread_increments + self.processes * self.process_increments
        assert sum(r[0] for r in results) == total
        assert backend.read("counter").data == str(total).encode()
        assert sum(r[1] for r in results) > 0, "no CAS was ever lost: the race was not real"



class AgentRaceSuite:
    """Mixin: subclass with a ``store`` fixture. Agents in processes of their own, each
    appending tokens to its own line of one shared file through the tools: every
    acknowledged edit must be in the file."""

    agents: int = 4
    agent_edits: int = 10

    def test_agents_in_processes_lose_no_edit(self, store: StoreRig) -> None:
        agents, edits = self.agents, self.agent_edits
        url, options = url_of(store, "agents"), store.storage_options()
        backend = open_backend(url, dict(options))
        backend.write(
            "shared.txt", "".join(f"slot-{a}:\n" for a in range(agents)).encode(), CreateOnly()
        )
        ctx = multiprocessing.get_context("spawn")
        with ctx.Manager() as manager, ctx.Pool(agents) as pool:
            start = manager.Barrier(agents)
            results = pool.starmap(
                agent_edits, [(url, dict(options), a, edits, start) for a in range(agents)]
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


def agent_edits(
    url: str, storage_options: dict[str, Any], agent: int, times: int, start: Any = None
) -> tuple[list[str], int]:
    """One agent in a process of its own: ``times`` times read the shared file, then edit
    its own line (``slot-N:``) to append a token, re-reading after every FS_STALE. Returns
    (the tokens whose edit succeeded, the stale refusals met). Only the storage's
    compare-and-swap stands between agents. ``start``: a barrier (a multiprocessing
    manager's) the agents wait at once their workspace is made, so that they do overlap."""
    from ...workspace import Workspace

    ctx = Workspace(url, storage_options=storage_options).context(f"agent-{agent}")
    if start is not None:
        start.wait(timeout=120)
    mine = f"slot-{agent}:"
    done: list[str] = []
    stale = 0
    while len(done) < times:
        res = ctx.tools.execute("read", {"file_path": "/shared.txt"})
        if not res.ok:
            raise RuntimeError(res.text)
        line = next(x for x in res.value.lines if x.startswith(mine))
        token = f" t{agent}.{len(done)}"
        res = ctx.tools.execute(
            "edit", {"file_path": "/shared.txt", "old_string": line, "new_string": line + token}
        )
        if res.ok:
            done.append(token.strip())
        elif res.error is not None and res.error.code == "FS_STALE":
            stale += 1
        else:
            raise RuntimeError(res.text)
    return done, stale
