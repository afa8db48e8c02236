"""Agents on a cluster: every tool call a task of its own, run by whichever worker is free.

    from distributed import Client, LocalCluster
    from fsseam.testing.distributed import counter_agents

    ws = Workspace("s3://bucket/p", storage_options=...,
                   observations="s3://bucket/.fsseam-observations/")
    with LocalCluster(n_workers=8, processes=True) as cluster, Client(cluster) as client:
        run = counter_agents(client, ws, agents=8, increments=10)
        assert run.lost == []

Each agent (a thread of the calling process, standing in for a model) increments one shared
counter file: it reads the file's first line, then edits ``count=N`` into ``count=N+1``
followed by a line naming the increment (``agent-3 7``), or, with ``tokens=False``, plain
``count=N`` into ``count=N+1`` (every agent's edit of one value is then the same bytes). A
refused edit (FS_STALE: another agent got there first, or made exactly this change; or the
text is no longer there) sends it back to read. Both calls are separate tasks
(:func:`tool_call`), shipped as ``(ctx, tool, args)``: the context is pickled as its spec
and opened again on whichever worker runs the task, so a read on one worker and the edit on
another meet only in the observation store.

Lost updates are exact: every increment an agent was told succeeded must be in the final
file, and ``count`` must agree with the lines (with plain edits, ``count`` against the
increments acknowledged). A task whose worker died is run again by the scheduler; when its
first run had already landed, the re-run is the owner's own change where the store keeps
who wrote it, and is answered as done. An increment in the file twice (``repeated``) is no
lost update.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COUNTER", "SAME_CHANGE", "AgentRun", "counter_agents", "parse_counter",
           "tool_call"]

COUNTER = "/counter.txt"
SAME_CHANGE = "already holds exactly your change, made "
"""The words of every refusal of a change another writer made exactly (the same-change
rule, :func:`fsseam.versions.same_change`)."""
RETRIES = 200
"""Attempts of one increment before the agent gives up (counted in ``gave_up``)."""


def tool_call(ctx: Any, tool: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """One tool call, run where the task lands; what the agent needs of the result."""
    res = ctx.tools.execute(tool, dict(args))
    value = res.value
    return {
        "pid": os.getpid(),
        "ok": res.ok,
        "code": None if res.error is None else str(res.error.code),
        "lines": list(getattr(value, "lines", []) or []),
        "same": res.error is not None and SAME_CHANGE in res.text,
    }


def parse_counter(text: str) -> tuple[int, list[str]]:
    """The count and the increments (newest first) of the counter file's text."""
    head, *rest = text.splitlines()
    return int(head.removeprefix("count=")), [line for line in rest if line]


@dataclass
class AgentRun:
    """What the agents were told, and what the file holds after them."""

    acknowledged: list[str] = field(default_factory=list)
    calls: int = 0
    refused: Counter[str] = field(default_factory=Counter)
    gave_up: int = 0
    seconds: float = 0.0
    count: int = 0
    landed: list[str] = field(default_factory=list)
    pids: set[int] = field(default_factory=set)
    """The worker processes that ran the calls."""
    same_change: int = 0
    """Refusals that said the file already held exactly the agent's change (made by
    another writer since its read)."""
    tokens: bool = True
    """Each increment wrote a line naming it (else plain ``count=N`` edits)."""
    start: int = 0
    """The count before the agents ran."""

    @property
    def lost(self) -> list[str]:
        """Increments an agent was told succeeded that the file does not hold (with plain
        edits, as many of the acknowledged as the count falls short of)."""
        if not self.tokens:
            short = len(self.acknowledged) - (self.count - self.start)
            return self.acknowledged[:max(0, short)]
        kept = set(self.landed)
        return [t for t in self.acknowledged if t not in kept]

    @property
    def count_agrees(self) -> bool:
        """``count`` says as many increments as the file's lines (with plain edits: as
        many as were acknowledged)."""
        if not self.tokens:
            return self.count - self.start == len(self.acknowledged)
        return self.count - self.start == len(self.landed)

    @property
    def repeated(self) -> int:
        """Increments in the file more than once (a task run again after its worker died)."""
        return sum(n - 1 for n in Counter(self.landed).values() if n > 1)


def counter_agents(
    client: Any, ws: Any, *, agents: int, increments: int, path: str = COUNTER,
    between: Callable[[int], None] | None = None, spread: bool = False, tokens: bool = True,
) -> AgentRun:
    """Run ``agents`` counter agents on ``client``'s cluster over ``ws`` (whose observations
    must live where every worker reaches them). ``between(done)``: called by the first
    agent after each of its increments (to kill or restart a worker mid-run). ``spread``:
    each call of an agent goes to the next worker in turn, so every edit runs on another
    worker than the read before it (else the scheduler places each task). ``tokens``:
    each increment writes a line naming it (False: plain ``count=N`` edits)."""
    workers = sorted(client.scheduler_info()["workers"]) if spread else []
    setup = ws.context("setup")
    first = setup.tools.execute("read", {"file_path": path})
    if not first.ok:
        setup.fs.write(path, "count=0\n")
    run = AgentRun(tokens=tokens)
    if first.ok:
        run.start = parse_counter("\n".join(first.value.lines))[0]
    lock = threading.Lock()

    def agent(i: int) -> None:
        ctx = ws.context(f"agent-{i}")
        for k in range(increments):
            token = f"agent-{i} {k}"
            if _increment(client, ctx, path, token if tokens else "", run, lock, workers):
                with lock:
                    run.acknowledged.append(token)
            if i == 0 and between is not None:
                between(k + 1)

    started = time.perf_counter()
    threads = [threading.Thread(target=agent, args=(i,)) for i in range(agents)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    run.seconds = time.perf_counter() - started
    run.count, run.landed = parse_counter("\n".join(setup.fs.read(path, limit=10**9).lines))
    return run


def _increment(client: Any, ctx: Any, path: str, token: str, run: AgentRun,
               lock: threading.Lock, workers: list[str]) -> bool:
    turn = iter(range(1 << 30))

    def call(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        where = {"workers": [workers[next(turn) % len(workers)]]} if workers else {}
        out: dict[str, Any] = client.submit(tool_call, ctx, tool, args, pure=False,
                                            **where).result()
        with lock:
            run.calls += 1
            run.pids.add(out["pid"])
            if not out["ok"]:
                run.refused[out["code"]] += 1
                run.same_change += bool(out.get("same"))
        return out

    for _ in range(RETRIES):
        read = call("read", {"file_path": path, "limit": 1})
        if not read["ok"]:
            continue
        n = int(read["lines"][0].removeprefix("count="))
        line = f"{token}\n" if token else ""
        edit = call("edit", {"file_path": path, "old_string": f"count={n}\n",
                             "new_string": f"count={n + 1}\n{line}"})
        if edit["ok"]:
            return True
    with lock:
        run.gave_up += 1
    return False
