"""Requests of a branch's reads and changes, counted at the S3 server (docs/branches.md
states them)."""

from __future__ import annotations

import hashlib
from typing import Any

from fsseam import Workspace

REF = ".fsseam-branches/refs/feat.json"


def _requests(moto: Any, bucket: str) -> list[tuple[str, str]]:
    """(method, key or folder) of the requests to the workspace since the last clear."""
    prefix = f"/{bucket}/w/"
    out = []
    for method, path in moto.log.to_bucket(bucket):
        key = path.removeprefix(prefix)
        for folder in ("manifests", "blobs"):
            if key.startswith(f".fsseam-branches/{folder}/"):
                key = f".fsseam-branches/{folder}/"
        out.append((method, key))
    return out


def test_a_first_change_after_a_read_reads_main_once(moto_s3: Any) -> None:
    """The agent's read of main's file through the branch keeps its bytes as the base of
    the file's first change: the edit's own read is main's only GET of the file."""
    bucket = moto_s3.create_bucket()
    ws = Workspace(f"s3://{bucket}/w", storage_options=moto_s3.storage_options())
    original = b"one\ntwo\nthree\n"
    assert ws.context("main").tools.execute(
        "write", {"file_path": "/a.txt", "content": original.decode()}).ok
    agent = ws.branch("feat").context("agent")

    moto_s3.log.clear()
    assert agent.tools.execute("read", {"file_path": "/a.txt"}).ok
    assert _requests(moto_s3, bucket) == [("GET", REF), ("GET", "a.txt")]

    moto_s3.log.clear()
    edit = {"file_path": "/a.txt", "old_string": "one", "new_string": "ONE"}
    assert agent.tools.execute("edit", edit).ok
    assert _requests(moto_s3, bucket) == [
        ("GET", REF), ("GET", "a.txt"),  # the edit reads the file as it is now
        ("PUT", ".fsseam-branches/manifests/"),
        ("PUT", ".fsseam-branches/blobs/"), ("PUT", ".fsseam-branches/blobs/"),
        ("PUT", REF),
    ]
    base = hashlib.sha256(original).hexdigest()
    kept = ws.backend.read(f".fsseam-branches/blobs/{base[:2]}/{base}").data
    assert kept == original
    assert ws.backend.read("a.txt").data == original
    assert ws.branch("feat").backend.read("a.txt").data == b"ONE\ntwo\nthree\n"
