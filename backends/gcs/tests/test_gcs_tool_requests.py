"""Requests per tool call on gs://, counted at a proxy in front of the emulator."""

from __future__ import annotations

from typing import Any

from fsseam import Workspace


def test_each_tool_call_costs_the_minimum(counting_proxy: Any, gcs_bucket: str) -> None:
    ws = Workspace(
        f"gs://{gcs_bucket}/p",
        storage_options={"endpoint_url": counting_proxy.url, "token": "anon", "project": "test"},
    )
    a = ws.context("a")
    ed = "str_replace_editor"
    counting_proxy.take()
    steps: list[tuple[str, dict[str, Any], list[str]]] = [
        # A new file: one listing of "n.md/" (a path is a file or a directory), one upload.
        ("write", {"file_path": "/n.md", "content": "one\ntwo\n"}, ["GET", "POST"]),
        ("read", {"file_path": "/n.md"}, ["GET"]),
        ("write", {"file_path": "/n.md", "content": "uno\ntwo\n"}, ["POST"]),
        ("edit", {"file_path": "/n.md", "old_string": "two", "new_string": "dos"},
         ["GET", "POST"]),
        (ed, {"command": "view", "path": "/n.md"}, ["GET"]),
        (ed, {"command": "str_replace", "path": "/n.md", "old_str": "uno", "new_str": "1"},
         ["GET", "POST"]),
        (ed, {"command": "create", "path": "/m.md", "file_text": "m\n"}, ["GET", "POST"]),
    ]
    for tool, args, expected in steps:
        res = a.tools.execute(tool, args)
        assert res.ok, res.text
        assert [m for m, _ in counting_proxy.take()] == expected, (tool, args)
    assert ws.backend.read("n.md").data == b"1\ndos\n"


def test_window_of_a_large_object_fetches_one_range(
    counting_proxy: Any, gcs_bucket: str
) -> None:
    ws = Workspace(
        f"gs://{gcs_bucket}/p",
        storage_options={"endpoint_url": counting_proxy.url, "token": "anon", "project": "test"},
    )
    line = b"%08d the quick brown fox jumps over the lazy dog\n"
    body = b"".join(line % i for i in range(200_000))  # ~11 MiB, one multipart upload
    from fsseam import Overwrite

    ws.backend.write("big.log", body, Overwrite())
    counting_proxy.take()
    res = ws.context("a").tools.execute("read", {"file_path": "/big.log", "limit": 1000})
    assert res.ok, res.text
    assert [m for m, _ in counting_proxy.take()] == ["GET"]
    assert res.value.returned == 1000 and res.value.total is None
