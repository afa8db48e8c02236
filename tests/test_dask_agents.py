"""Agents on Dask distributed: every tool call a task, on worker processes, over S3.

One ``LocalCluster`` of two worker processes for the module, against the moto server
(requests counted there), with observations in the bucket. A context travels to each task
as its spec (``pickle``); the read and the edit of one increment run on different workers,
so they meet only in the observation store. The full run (8 workers x 8 agents, a worker
killed and one restarted, S3 and GCS) is bench/dask_agents.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from fsseam import Workspace
from fsseam.testing.distributed import counter_agents, tool_call

distributed = pytest.importorskip("distributed", reason="pip install -e '.[test]' (dask)")


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                       dashboard_address=None)
    with cluster, distributed.Client(cluster) as c:
        yield c


def s3_workspace(moto_s3: Any) -> tuple[Workspace, str]:
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/work", storage_options=moto_s3.storage_options(),
                   observations=f"s3://{bucket}/.fsseam-observations/")
    return ws, bucket


def test_agents_on_two_workers_lose_no_update(client: Any, moto_s3: Any) -> None:
    ws, bucket = s3_workspace(moto_s3)
    run = counter_agents(client, ws, agents=2, increments=2, spread=True)
    assert run.lost == [] and run.gave_up == 0 and run.repeated == 0
    assert run.count == len(run.acknowledged) == 4
    assert sorted(run.landed) == sorted(run.acknowledged)
    assert len(run.pids) == 2  # both workers ran calls: reads on one, edits on the other
    body = moto_s3.client().get_object(Bucket=bucket, Key="work/counter.txt")["Body"].read()
    assert body.decode().startswith("count=4\n")


def test_agents_making_plain_count_edits_lose_no_increment(client: Any, moto_s3: Any
                                                           ) -> None:
    """Plain ``count=N`` -> ``count=N+1`` edits: two agents' edits of one value are the
    same bytes, and the one that comes second is refused (another writer's change is not
    its own), so the count is the number of increments answered as done."""
    ws, _ = s3_workspace(moto_s3)
    run = counter_agents(client, ws, agents=2, increments=3, spread=True, tokens=False)
    assert run.gave_up == 0 and run.lost == [] and run.count_agrees
    assert run.count == len(run.acknowledged) == 6


def test_a_read_on_one_worker_guards_the_edit_on_another(client: Any, moto_s3: Any) -> None:
    ws, bucket = s3_workspace(moto_s3)
    ws.context("setup").fs.write("/f.txt", "one\n")
    first, second = sorted(client.scheduler_info()["workers"])
    ctx, stranger = ws.context("agent"), ws.context("stranger")
    edit = {"file_path": "/f.txt", "old_string": "one", "new_string": "two"}

    def on(worker: str, ctx: Any, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = client.submit(tool_call, ctx, tool, args, pure=False,
                                            workers=[worker]).result()
        return out

    assert on(first, ctx, "read", {"file_path": "/f.txt"})["ok"]
    # Another owner of the same workspace has read nothing: no leak between owners.
    assert on(second, stranger, "edit", edit)["code"] == "FS_NOT_OBSERVED"
    s3 = moto_s3.client()
    s3.put_object(Bucket=bucket, Key="work/f.txt", Body=b"one!\n")  # changed outside
    assert on(second, ctx, "edit", edit)["code"] == "FS_STALE"
    assert s3.get_object(Bucket=bucket, Key="work/f.txt")["Body"].read() == b"one!\n"
    assert on(second, ctx, "read", {"file_path": "/f.txt"})["ok"]
    assert on(first, ctx, "edit", edit)["ok"]
    assert s3.get_object(Bucket=bucket, Key="work/f.txt")["Body"].read() == b"two!\n"
    # A warm worker, counted at the server: a call that changes no observation costs the
    # observation store nothing; one that changes one costs one request (the shard's PUT).
    moto_s3.log.clear()
    assert on(first, ctx, "read", {"file_path": "/f.txt"})["ok"]
    assert moto_s3.log.to_bucket(bucket) == [("GET", f"/{bucket}/work/f.txt")]
    moto_s3.log.clear()
    assert on(first, ctx, "edit", {"file_path": "/f.txt", "old_string": "two",
                                   "new_string": "three"})["ok"]
    requests = moto_s3.log.to_bucket(bucket)
    assert [m for m, p in requests if p.startswith(f"/{bucket}/work/")] == ["GET", "PUT"]
    assert [m for m, p in requests if ".fsseam-observations" in p] == ["PUT"]
