"""Requests per tool call on s3://, counted at the moto server: the physical limits."""

from __future__ import annotations

from typing import Any

import pytest

from fsseam import Workspace


@pytest.fixture
def ws(bucket: str, s3_options: dict[str, Any]) -> Workspace:
    return Workspace(f"s3://{bucket}/p", storage_options=dict(s3_options))


def methods(moto: Any, bucket: str) -> list[str]:
    out = [m for m, _ in moto.log.to_bucket(bucket)]
    moto.log.clear()
    return out


def test_each_tool_call_costs_the_minimum(ws: Workspace, moto: Any, bucket: str) -> None:
    a = ws.context("a")
    ed = "str_replace_editor"
    moto.log.clear()
    steps: list[tuple[str, dict[str, Any], list[str]]] = [
        # A new file: one listing of "n.md/" (a path is a file or a directory), one PUT.
        ("write", {"file_path": "/n.md", "content": "one\ntwo\n"}, ["GET", "PUT"]),
        ("read", {"file_path": "/n.md"}, ["GET"]),
        ("write", {"file_path": "/n.md", "content": "uno\ntwo\n"}, ["PUT"]),
        ("edit", {"file_path": "/n.md", "old_string": "two", "new_string": "dos"},
         ["GET", "PUT"]),
        (ed, {"command": "view", "path": "/n.md"}, ["GET"]),
        (ed, {"command": "str_replace", "path": "/n.md", "old_str": "uno", "new_str": "1"},
         ["GET", "PUT"]),
        (ed, {"command": "insert", "path": "/n.md", "insert_line": 0, "new_str": "0\n"},
         ["GET", "PUT"]),
        (ed, {"command": "create", "path": "/m.md", "file_text": "m\n"}, ["GET", "PUT"]),
    ]
    for tool, args, expected in steps:
        res = a.tools.execute(tool, args)
        assert res.ok, res.text
        assert methods(moto, bucket) == expected, (tool, args)
    assert ws.backend.read("n.md").data == b"0\n1\ndos\n"


def test_window_of_a_large_object_fetches_one_range(
    ws: Workspace, moto: Any, bucket: str, s3: Any
) -> None:
    line = b"%08d the quick brown fox jumps over the lazy dog\n"
    body = b"".join(line % i for i in range(400_000))  # ~22 MiB
    s3.put_object(Bucket=bucket, Key="p/big.log", Body=body)
    moto.log.clear()
    res = ws.context("a").tools.execute("read", {"file_path": "/big.log", "limit": 1000})
    assert res.ok, res.text
    assert methods(moto, bucket) == ["GET"]  # one ranged GET of read_chunk_bytes (1 MiB)
    assert res.value.returned == 1000 and res.value.total is None
    assert res.text.endswith("(Showing lines 1-1000; more lines follow. Use offset=1001 to "
                             "continue.)")
