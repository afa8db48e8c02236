"""Observations in a bucket, counted at the moto server: what they add to each call."""

from __future__ import annotations

from typing import Any

import pytest

from fsseam import Workspace
from fsseam.errors import ErrorCode
from fsseam.observations import ShardedObservations


@pytest.fixture
def obs_bucket(s3: Any, moto: Any) -> str:
    return moto.create_bucket(client=s3)  # type: ignore[no-any-return]


def taken(moto: Any, bucket: str) -> list[str]:
    out = [m for m, _ in moto.log.to_bucket(bucket)]
    moto.log.clear()
    return out


def run(ctx: Any, tool: str, args: dict[str, Any]) -> Any:
    res = ctx.tools.execute(tool, args)
    assert res.ok, res.text
    return res


def test_requests_each_call_adds_warm_and_cold(
        bucket: str, obs_bucket: str, s3_options: dict[str, Any], moto: Any, s3: Any) -> None:
    def worker() -> Workspace:
        return Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options),
                         observations=f"s3://{obs_bucket}/o/")

    a = worker().context("a")
    moto.log.clear()
    edit = {"file_path": "/n.md", "old_string": "one", "new_string": "two"}
    steps: list[tuple[str, dict[str, Any], list[str]]] = [
        # The first touch of the owner's shard: read it, then write it.
        ("write", {"file_path": "/n.md", "content": "one\n"}, ["GET", "PUT"]),
        ("read", {"file_path": "/n.md"}, []),  # the version it already holds
        ("ls", {"path": "/"}, []),
        ("glob", {"pattern": "**/*.md"}, []),
        ("edit", edit, ["PUT"]),
        ("write", {"file_path": "/n.md", "content": "three\n"}, ["PUT"]),
        ("read", {"file_path": "/n.md", "offset": 1}, []),
    ]
    for tool, args, expected in steps:
        run(a, tool, args)
        assert taken(moto, obs_bucket) == expected, (tool, args)
    # A cold worker, same owner: one read of the shard, one write.
    b = worker().context("a")
    run(b, "edit", {"file_path": "/n.md", "old_string": "three", "new_string": "four"})
    assert taken(moto, obs_bucket) == ["GET", "PUT"]
    # The first worker's cache is behind: it asks the store again, and may edit.
    run(a, "edit", {"file_path": "/n.md", "old_string": "four", "new_string": "five"})
    assert taken(moto, obs_bucket) == ["GET", "PUT"]
    # Someone else changed the file: the cached answer would refuse, so the shard is read
    # again before the refusal; the refusal shows what changed, which is recorded.
    s3.put_object(Bucket=bucket, Key="p/n.md", Body=b"outside\n")
    moto.log.clear()
    res = a.tools.execute("edit", {"file_path": "/n.md", "old_string": "out", "new_string": "x"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert taken(moto, obs_bucket) == ["GET", "PUT"]
    assert s3.get_object(Bucket=bucket, Key="p/n.md")["Body"].read() == b"outside\n"


def test_a_call_that_records_in_k_shards_writes_k_shards(
        bucket: str, obs_bucket: str, s3_options: dict[str, Any], moto: Any) -> None:
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options),
                   observations=f"s3://{obs_bucket}/o/")
    store = ws.policy.store  # type: ignore[union-attr]
    assert isinstance(store, ShardedObservations)
    names: dict[int, str] = {}
    for i in range(100):
        names.setdefault(store.shard_of(f"f{i}.txt"), f"f{i}.txt")
    chosen = list(names.values())[:3]
    for name in chosen:
        store.get("a", name)  # warm: each shard read once
    moto.log.clear()
    patch = "*** Begin Patch\n" + "".join(f"*** Add File: {n}\n+x\n" for n in chosen) + \
        "*** End Patch\n"
    run(ws.context("a"), "apply_patch", {"patch": patch})
    assert taken(moto, obs_bucket) == ["PUT"] * 3


def test_a_missing_bucket_refuses_and_changes_nothing(
        bucket: str, s3_options: dict[str, Any], moto: Any, s3: Any) -> None:
    s3.put_object(Bucket=bucket, Key="p/n.md", Body=b"one\n")
    ws = Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options),
                   observations=f"s3://{bucket}-missing/o/")
    ctx = ws.context("a")
    for tool, args in (("write", {"file_path": "/n.md", "content": "two\n"}),
                       ("read", {"file_path": "/n.md"}),
                       ("write", {"file_path": "/new.md", "content": "two\n"})):
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_BACKEND, res.text
        assert "could not be reached or written" in res.text
    assert s3.get_object(Bucket=bucket, Key="p/n.md")["Body"].read() == b"one\n"
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket, Prefix="p/new")
