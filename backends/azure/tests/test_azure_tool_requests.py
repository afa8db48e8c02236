"""Requests per tool call on az://, counted at a proxy in front of Azurite, and what the
agent tools leave in the blob when another writer got there first."""

from __future__ import annotations

from typing import Any

import pytest
from fsseam_azure import AzureBackend
from fsseam_azure.testing import ContainerRequests

from fsseam import Conflict, ErrorCode, IfMatch, Overwrite, Workspace


def test_each_tool_call_costs_the_minimum(
    container: str, az_options: dict[str, Any], requests: ContainerRequests
) -> None:
    ws = Workspace(f"az://{container}/p", storage_options=az_options)
    assert isinstance(ws.backend, AzureBackend)
    a = ws.context("a")
    ed = "str_replace_editor"
    requests.take()
    steps: list[tuple[str, dict[str, Any], list[str]]] = [
        # A new file: one listing of "n.md/" (a path is a file or a directory), one Put Blob.
        ("write", {"file_path": "/n.md", "content": "one\ntwo\n"}, ["GET", "PUT"]),
        ("read", {"file_path": "/n.md"}, ["GET"]),
        ("write", {"file_path": "/n.md", "content": "uno\ntwo\n"}, ["PUT"]),
        ("edit", {"file_path": "/n.md", "old_string": "two", "new_string": "dos"},
         ["GET", "PUT"]),
        (ed, {"command": "view", "path": "/n.md"}, ["GET"]),
        (ed, {"command": "str_replace", "path": "/n.md", "old_str": "uno", "new_str": "1"},
         ["GET", "PUT"]),
        (ed, {"command": "create", "path": "/m.md", "file_text": "m\n"}, ["GET", "PUT"]),
        ("delete", {"file_path": "/m.md"}, ["DELETE"]),
        # Copy Blob (after the listing that keeps the new name from being a directory too),
        # then the guarded Delete Blob.
        ("move", {"source_path": "/n.md", "destination_path": "/o.md"},
         ["GET", "PUT", "DELETE"]),
    ]
    for tool, args, expected in steps:
        res = a.tools.execute(tool, args)
        assert res.ok, res.text
        assert requests.methods() == expected, (tool, args)
    assert ws.backend.read("o.md").data == b"1\ndos\n"


def test_a_stale_edit_is_refused_and_the_blob_keeps_the_other_writers_bytes(
    container: str, az_options: dict[str, Any], azurite: Any, requests: ContainerRequests
) -> None:
    ws = Workspace(f"az://{container}/p", storage_options=az_options)
    a = ws.context("a")
    assert a.tools.execute("write", {"file_path": "/f.md", "content": "alpha\nbeta\n"}).ok
    assert a.tools.execute("read", {"file_path": "/f.md"}).ok
    # Another writer, outside fsseam: adlfs on the same container.
    azurite.filesystem().pipe_file(f"{container}/p/f.md", b"alpha\nBETA (theirs)\n")
    requests.take()

    res = a.tools.execute("edit", {"file_path": "/f.md", "old_string": "alpha",
                                   "new_string": "ALPHA"})

    assert res.error is not None and res.error.code is ErrorCode.FS_STALE, res.text
    assert requests.methods() == ["GET"]  # the edit's read saw the new ETag: nothing sent
    assert azurite.filesystem().cat_file(f"{container}/p/f.md") == b"alpha\nBETA (theirs)\n"

    # The same, decided by Azure: the other write lands between a read and the Put Blob,
    # whose If-Match then fails; one HEAD reads the write id back (not ours).
    before = ws.backend.read("f.md").version
    azurite.filesystem().pipe_file(f"{container}/p/f.md", b"gamma\n")
    requests.take()
    with pytest.raises(Conflict) as info:
        ws.backend.write("f.md", b"lost\n", IfMatch(before))
    assert (info.value.reason, info.value.code) == ("mismatch", ErrorCode.FS_STALE)
    assert requests.methods() == ["PUT", "HEAD"]
    assert azurite.filesystem().cat_file(f"{container}/p/f.md") == b"gamma\n"


def test_window_of_a_large_blob_fetches_one_range(
    container: str, az_options: dict[str, Any], requests: ContainerRequests
) -> None:
    ws = Workspace(f"az://{container}/p", storage_options=az_options)
    line = b"%08d the quick brown fox jumps over the lazy dog\n"
    body = b"".join(line % i for i in range(200_000))  # ~11 MiB, one Put Blob
    ws.backend.write("big.log", body, Overwrite())
    requests.take()
    res = ws.context("a").tools.execute("read", {"file_path": "/big.log", "limit": 1000})
    assert res.ok, res.text
    assert requests.methods() == ["GET"]
    assert res.value.returned == 1000 and res.value.total is None
