"""Observations in a GCS bucket, counted at a proxy in front of fake-gcs-server."""

from __future__ import annotations

from typing import Any

from fsseam import Workspace
from fsseam.errors import ErrorCode


def test_requests_each_call_adds_warm_and_cold(
        counting_proxy: Any, gcs_server: Any, gcs_admin: Any, gcs_bucket: str) -> None:
    obs_bucket = gcs_server.create_bucket(fs=gcs_admin)
    options = {"endpoint_url": counting_proxy.url, "token": "anon", "project": "test"}

    def worker() -> Workspace:
        return Workspace(f"gs://{gcs_bucket}/p", storage_options=dict(options),
                         observations=f"gs://{obs_bucket}/o/")

    def taken() -> list[str]:
        return [m for m, path in counting_proxy.take() if obs_bucket in path]

    def run(ctx: Any, tool: str, args: dict[str, Any]) -> None:
        res = ctx.tools.execute(tool, args)
        assert res.ok, res.text

    a = worker().context("a")
    counting_proxy.take()
    steps: list[tuple[str, dict[str, Any], list[str]]] = [
        ("write", {"file_path": "/n.md", "content": "one\n"}, ["GET", "POST"]),
        ("read", {"file_path": "/n.md"}, []),
        ("ls", {"path": "/"}, []),
        ("edit", {"file_path": "/n.md", "old_string": "one", "new_string": "two"}, ["POST"]),
        ("read", {"file_path": "/n.md"}, []),
    ]
    for tool, args, expected in steps:
        run(a, tool, args)
        assert taken() == expected, (tool, args)
    b = worker().context("a")  # a cold worker, same owner
    run(b, "edit", {"file_path": "/n.md", "old_string": "two", "new_string": "three"})
    assert taken() == ["GET", "POST"]
    run(a, "edit", {"file_path": "/n.md", "old_string": "three", "new_string": "four"})
    assert taken() == ["GET", "POST"]  # its cache was behind: asked again, then written
    gcs_admin.pipe(f"{gcs_bucket}/p/n.md", b"outside\n")
    counting_proxy.take()
    res = a.tools.execute("edit", {"file_path": "/n.md", "old_string": "out", "new_string": "x"})
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert gcs_admin.cat(f"{gcs_bucket}/p/n.md") == b"outside\n"
