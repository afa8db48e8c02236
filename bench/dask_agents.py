"""Agents on Dask distributed: lost updates, calls per second and requests per call.

    python bench/dask_agents.py                        # 8 workers x 8 agents, S3 and GCS
    python bench/dask_agents.py --workers 2 --agents 2 --increments 3 --stores s3
    python bench/dask_agents.py --plain                # plain count=N -> count=N+1 edits

A ``LocalCluster`` of worker processes runs every tool call of every agent as a task of
its own (``fsseam.testing.distributed``: each agent reads a shared counter file and edits
``count=N`` into ``count=N+1`` followed by a line naming the increment, or with ``--plain``
only ``count=N`` into ``count=N+1``, so that agents' edits of one value are the same bytes;
re-reading when refused). The workspace is on the moto S3
server or fake-gcs-server, both started here on 127.0.0.1 and stopped at the end, with the
observations in the same bucket (``observations="<scheme>://bucket/.fsseam-observations/"``).
While the agents run, one worker process is killed (SIGKILL: the scheduler runs its task
again elsewhere and the nanny starts a new process) and another is restarted
(``client.restart_workers``), each once.

Requests are counted at the server (moto's request log; a counting proxy in front of
fake-gcs-server), from the first agent call to the last, and divided by the calls made.
Lost updates: increments an agent was told succeeded that the final file does not hold
(with ``--plain``: acknowledged increments the final count falls short of); the count is
checked against the lines. Repeated: increments in the file twice (a task whose worker died
after its edit landed, run again by the scheduler: where the store keeps who wrote it, the
re-run is the owner's own change and is answered as done, so none is repeated).
Same-change answers: refusals saying the file already held exactly the agent's change,
made by another agent since its read (before issue 41 these were answered as successes).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for _src in ("src", "backends/s3/src", "backends/gcs/src"):
    if str(ROOT / _src) not in sys.path:
        sys.path.insert(0, str(ROOT / _src))
os.environ.setdefault("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")


def log(msg: str) -> None:
    print(f"[dask_agents {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


@contextmanager
def s3_store() -> Iterator[tuple[str, dict[str, Any], Callable[[], int]]]:
    from fsseam_s3.testing import moto_server

    with moto_server(serialize=True) as moto:
        bucket = moto.create_bucket()
        moto.log.clear()
        yield f"s3://{bucket}", moto.storage_options(), lambda: len(moto.log.to_bucket(bucket))


@contextmanager
def gcs_store() -> Iterator[tuple[str, dict[str, Any], Callable[[], int]]]:
    from fsseam_gcs.testing import fake_gcs_server

    with fake_gcs_server() as gcs, gcs.counting_proxy() as proxy:
        bucket = gcs.create_bucket()
        seen: list[Any] = []

        def count() -> int:
            seen.extend(proxy.take())
            return len(seen)

        yield f"gs://{bucket}", proxy.storage_options(), count


STORES = {"s3": s3_store, "gcs": gcs_store}


def faults(client: Any, increments: int, events: list[str]) -> Callable[[int], None]:
    """Kill one worker process a third of the way, restart another at two thirds."""

    def between(done: int) -> None:
        workers = sorted(client.scheduler_info()["workers"])
        if done == max(1, increments // 3) and len(workers) > 1:
            pids = client.run(os.getpid, workers=[workers[-1]])
            os.kill(pids[workers[-1]], signal.SIGKILL)  # a worker process this bench started
            events.append(f"killed {workers[-1]}")
        elif done == max(2, 2 * increments // 3) and len(workers) > 1:
            client.restart_workers([workers[0]])
            events.append(f"restarted {workers[0]}")

    return between


def run_store(name: str, workers: int, agents: int, increments: int,
              plain: bool = False) -> dict[str, Any]:
    from distributed import Client, LocalCluster

    from fsseam import Workspace
    from fsseam.testing.distributed import counter_agents

    with STORES[name]() as (url, options, requests):
        ws = Workspace(f"{url}/work", storage_options=options,
                       observations=f"{url}/.fsseam-observations/")
        log(f"{name}: starting {workers} worker processes")
        with (LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None) as cluster, Client(cluster) as client):
            client.wait_for_workers(workers)
            events: list[str] = []
            before = requests()
            run = counter_agents(client, ws, agents=agents, increments=increments,
                                 between=faults(client, increments, events),
                                 tokens=not plain)
            spent = requests() - before
        log(f"{name}: {run.calls} calls in {run.seconds:.1f} s; {events}")
    return {
        "store": name, "workers": workers, "agents": agents, "increments": increments,
        "calls": run.calls, "seconds": run.seconds, "requests": spent,
        "acknowledged": len(run.acknowledged), "count": run.count, "lost": len(run.lost),
        "repeated": run.repeated, "gave_up": run.gave_up, "refused": dict(run.refused),
        "same_change": run.same_change, "count_agrees": run.count_agrees, "plain": plain,
        "workers_seen": len(run.pids), "events": events,
    }


def table(rows: list[dict[str, Any]]) -> str:
    out = [
        "| store | workers x agents | increments | tool calls | calls/s | requests/call "
        "| refused (stale, no match) | same-change answers | lost updates | repeated "
        "| count = lines | worker processes |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        refused = sum(r["refused"].values())
        out.append(
            f"| {r['store']} | {r['workers']} x {r['agents']} | {r['acknowledged']} | "
            f"{r['calls']} | {r['calls'] / r['seconds']:.1f} | "
            f"{r['requests'] / max(1, r['calls']):.2f} | {refused} | {r['same_change']} | "
            f"{r['lost']} | {r['repeated']} | {'yes' if r['count_agrees'] else 'NO'} | "
            f"{r['workers_seen']} |"
        )
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--increments", type=int, default=12)
    parser.add_argument("--stores", default="s3,gcs")
    parser.add_argument("--plain", action="store_true",
                        help="plain count=N -> count=N+1 edits, without a line per increment")
    args = parser.parse_args()
    rows = [run_store(s, args.workers, args.agents, args.increments, args.plain)
            for s in args.stores.split(",")]
    print(table(rows))
    for r in rows:
        print(f"{r['store']}: {r['events']}; refused {r['refused']}; gave up {r['gave_up']}")
    return 1 if any(r["lost"] or r["gave_up"] or not r["count_agrees"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
