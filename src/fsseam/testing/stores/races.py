"""Lost updates: threads, processes and agents racing compare-and-swaps on one object."""

from __future__ import annotations

import multiprocessing
import re
import threading
from typing import Any

from ...backends.registry import open_backend
from ...versions import CreateOnly, IfMatch
from ..conformance import increment, increment_worker
from .rigs import StoreRig, url_of

__all__ = ["AgentRaceSuite", "LostUpdateSuite", "SameChangeSuite", "agent_edits",
           "counter_increments", "same_change_pair"]


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


SAME_CHANGE = "already holds exactly your change, made "
"""The words every refusal of another writer's identical change holds."""


def _count(ctx: Any, path: str) -> int | None:
    res = ctx.tools.execute("read", {"file_path": path})
    return int(res.value.lines[0].removeprefix("count=")) if res.ok else None


def same_change_pair(ws: Any, path: str = "/count.txt") -> tuple[str, str]:
    """Two agents read ``count=0``; a increments it, then b makes the same edit from the
    same read, ordered by events (b starts when a is answered). Returns both answers."""
    ws.context("setup").fs.write(path, "count=0\n")
    a, b = ws.context("pair-a"), ws.context("pair-b")
    both_read, a_done = threading.Barrier(2), threading.Event()
    texts: dict[str, str] = {}

    def run(ctx: Any, name: str) -> None:
        assert _count(ctx, path) == 0
        both_read.wait(timeout=60)
        if name == "b":
            a_done.wait(timeout=60)
        res = ctx.tools.execute("edit", {"file_path": path, "old_string": "count=0",
                                         "new_string": "count=1"})
        texts[name] = ("ok: " if res.ok else f"{res.error.code}: ") + res.text
        if name == "a":
            a_done.set()

    threads = [threading.Thread(target=run, args=(c, n)) for c, n in ((a, "a"), (b, "b"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return texts["a"], texts["b"]


def counter_increments(url: str, storage_options: dict[str, Any], agent: int, times: int,
                       start: Any = None, path: str = "/count.txt") -> tuple[int, int]:
    """One counter agent (a thread or a process of its own): ``times`` increments of
    ``count=N`` into ``count=N+1`` by read then edit, re-reading after any refusal.
    Returns (increments answered as done, refusals that named the same change)."""
    from ...workspace import Workspace

    ctx = Workspace(url, storage_options=dict(storage_options)).context(f"counter-{agent}")
    if start is not None:
        start.wait(timeout=120)
    done = same = 0
    while done < times:
        n = _count(ctx, path)
        if n is None:
            continue
        res = ctx.tools.execute("edit", {"file_path": path, "old_string": f"count={n}\n",
                                         "new_string": f"count={n + 1}\n"})
        if res.ok:
            done += 1
        elif SAME_CHANGE in res.text:
            same += 1
    return done, same


class SameChangeSuite:
    """Mixin: subclass with a ``store`` fixture. A change someone else made is not the
    agent's: agents incrementing one counter lose no increment (the count equals the
    increments answered as done), the second of two agents editing from one read is
    told the file already holds its change, and an owner's own landed edit, run again
    from the same read in another process (its answer lost with its worker), is done."""

    agents: int = 4
    increments: int = 5
    keeps_owner: bool = True
    """The store keeps who wrote each object (S3, GCS): the re-run is recognised."""

    def test_counter_agents_lose_no_increment(self, store: StoreRig) -> None:
        from ...workspace import Workspace

        url, options = url_of(store, "same"), store.storage_options()
        a, b = same_change_pair(Workspace(url, storage_options=options))
        assert a.startswith("ok: "), a
        assert b.startswith("FS_STALE: "), b
        assert "/count.txt " + SAME_CHANGE in b
        assert "apply it again. What changed, from the version you read" in b
        ws = Workspace(url, storage_options=options)
        ws.context("setup").fs.write("/loop.txt", "count=0\n")
        start = threading.Barrier(self.agents)
        results: list[tuple[int, int]] = []

        def run(i: int) -> None:
            results.append(counter_increments(url, options, i, self.increments, start,
                                              "/loop.txt"))

        threads = [threading.Thread(target=run, args=(i,)) for i in range(self.agents)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sum(r[0] for r in results) == self.agents * self.increments
        assert _count(ws.context("check"), "/loop.txt") == self.agents * self.increments

    def test_an_owners_landed_edit_run_again_is_its_own(self, store: StoreRig) -> None:
        from ...backends.base import WriteMeta
        from ...workspace import Workspace

        url, options = url_of(store, "rerun"), store.storage_options()
        ws = Workspace(url, storage_options=options)
        ws.context("setup").fs.write("/count.txt", "count=0\n")
        owner, other = ws.context("owner"), ws.context("other")
        assert _count(owner, "/count.txt") == 0 and _count(other, "/count.txt") == 0
        read = ws.backend.read("count.txt").version
        # The owner's edit, run by a worker that died after the store took it and before
        # anything was answered or recorded: the store holds the owner's write, and the
        # owner's observations still say count=0.
        ws.backend.write("count.txt", b"count=1\n", IfMatch(read), meta=WriteMeta(owner="owner"))
        edit = {"file_path": "/count.txt", "old_string": "count=0", "new_string": "count=1"}
        res = owner.tools.execute("edit", edit)  # the same task, run again
        if self.keeps_owner:
            assert res.ok, res.text
            assert res.text.startswith("Edited /count.txt: replaced 1 occurrence at line 1.")
        else:
            assert res.error is not None and res.error.code == "FS_STALE", res.text
            assert "or by an earlier try of yours whose answer was lost" in res.text
        # Another agent's same edit from the same read is not its own.
        res = other.tools.execute("edit", edit)
        assert res.error is not None and res.error.code == "FS_STALE", res.text
        assert "/count.txt " + SAME_CHANGE in res.text, res.text
        if self.keeps_owner:
            assert "made by another writer since your read" in res.text
            # The owner's next edit goes on from its own write, without a read.
            more = {"file_path": "/count.txt", "old_string": "count=1",
                    "new_string": "count=2"}
            assert owner.tools.execute("edit", more).ok
        want = b"count=2\n" if self.keeps_owner else b"count=1\n"
        assert ws.backend.read("count.txt").data == want
