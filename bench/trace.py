"""The route of one tool call through the code, traced at run time.

    python bench/trace.py [edit|grep] [local|memory|s3] [--files]

Runs one call (after a read, so that the edit is allowed) under ``sys.setprofile`` and counts
the project's files the call passes through and the moves between files (entering a
function of another file than the last one entered), of which how many return into a file
the call had already left. ``--files`` prints the route, one file per move. ``s3`` runs on
moto's in-process ``mock_aws`` with the content index on (needs ``backends/s3[test]``), so
its grep is the route through the index. The numbers are the ones docs/architecture.md
quotes.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ("/src/fsseam/", "/src/fsseam_s3/", "/src/fsseam_gcs/", "/src/fsseam_azure/")


def _project_file(filename: str) -> str | None:
    for marker in PROJECT:
        at = filename.find(marker)
        if at >= 0:
            return filename[at + len("/src/") :]
    return None


@contextlib.contextmanager
def _workspace_url(store: str, call: str) -> Iterator[tuple[str, dict[str, Any]]]:
    if store == "s3":
        import boto3
        import moto

        with moto.mock_aws():
            boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="trace")
            yield "s3://trace/p", {"content_index": True}
        return
    with tempfile.TemporaryDirectory() as root:
        yield (root if store == "local" else f"memory://trace-{call}"), {}


def trace(call: str, store: str) -> tuple[list[str], int, int]:
    """(route, files, returns) of one ``call`` on ``store``."""
    from fsseam import Workspace

    with _workspace_url(store, call) as (url, options):
        ws = Workspace(url, **options)
        ctx = ws.context("agent")
        body = "".join(f"line {i}\n" for i in range(50))
        ctx.tools.execute("write", {"file_path": "/a.py", "content": body})
        ctx.tools.execute("read", {"file_path": "/a.py"})
        if call == "grep":
            args: dict[str, Any] = {"pattern": "line 4", "path": "/"}
            ctx.tools.execute("grep", args)
        route: list[str] = []

        def profile(frame: FrameType, event: str, arg: object) -> None:
            if event != "call":
                return
            name = _project_file(frame.f_code.co_filename)
            if name is not None and (not route or route[-1] != name):
                route.append(name)

        if call == "edit":
            args = {"file_path": "/a.py", "old_string": "line 7\n", "new_string": "line seven\n"}
        sys.setprofile(profile)
        try:
            answer = ctx.tools.execute(call, args)
        finally:
            sys.setprofile(None)
        assert answer is not None
    seen: set[str] = set()
    returns = 0
    for name in route:
        if name in seen:
            returns += 1
        seen.add(name)
    return route, len(seen), returns


def main(argv: list[str]) -> None:
    calls = [a for a in argv if a in {"edit", "grep"}] or ["edit", "grep"]
    stores = [a for a in argv if a in {"local", "memory", "s3"}] or ["local", "memory"]
    print("| call | store | files passed | moves between files | returns to a file left |")
    print("| --- | --- | --- | --- | --- |")
    routes = []
    for call in calls:
        for store in stores:
            route, files, returns = trace(call, store)
            routes.append((call, store, route))
            print(f"| {call} | {store} | {files} | {len(route) - 1} | {returns} |")
    if "--files" in argv:
        for call, store, route in routes:
            print(f"\n{call} on {store}:")
            for name in route:
                print(f"  {name}")


if __name__ == "__main__":
    main(sys.argv[1:])
