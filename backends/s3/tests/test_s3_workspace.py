"""End to end: the agent tools on an s3:// workspace: the shared tools conformance, and
two owners and a human (writing with boto3 behind every agent's back) racing."""

from __future__ import annotations

from typing import Any

import pytest

from fsseam import ErrorCode, Workspace
from fsseam.testing import ToolsConformance


class TestS3Tools(ToolsConformance):
    @pytest.fixture
    def workspace(self, bucket: str, s3_options: dict[str, Any]) -> Workspace:
        return Workspace(f"s3://{bucket}/proj", storage_options=dict(s3_options))


def test_tools_on_s3(bucket: str, s3_options: dict[str, Any], s3: Any, moto: Any) -> None:
    ws = Workspace(f"s3://{bucket}/proj", storage_options=dict(s3_options))
    a = ws.context(owner="a")
    b = ws.context(owner="b")

    res = a.tools.execute("write", {"file_path": "/notes.md", "content": "one\r\ntwo\r\n"})
    assert res.ok, res.text
    res = b.tools.execute("read", {"file_path": "/notes.md"})
    assert res.ok, res.text
    assert "one" in res.text and "two" in res.text

    moto.log.clear()
    res = b.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "two", "new_string": "TWO"}
    )
    assert res.ok, res.text
    edit_requests = moto.log.to_bucket(bucket)
    assert [m for m, _ in edit_requests] == ["GET", "PUT"]
    assert ws.backend.read("notes.md").data == b"one\r\nTWO\r\n"  # newline style kept

    # a last observed its own write: b's edit made it stale, and S3 refuses the CAS.
    res = a.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "one", "new_string": "ONE"}
    )
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert ws.backend.read("notes.md").data == b"one\r\nTWO\r\n"

    # A human edits behind every agent's back: b's next edit is stale too.
    s3.put_object(Bucket=bucket, Key="proj/notes.md", Body=b"one\r\nTWO\r\nhuman\r\n")
    res = b.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "TWO", "new_string": "2"}
    )
    assert not res.ok
    assert res.error is not None and res.error.code is ErrorCode.FS_STALE
    assert ws.backend.read("notes.md").data == b"one\r\nTWO\r\nhuman\r\n"

    assert a.tools.execute("read", {"file_path": "/notes.md"}).ok
    res = a.tools.execute(
        "edit", {"file_path": "/notes.md", "old_string": "one", "new_string": "ONE"}
    )
    assert res.ok, res.text
    assert ws.backend.read("notes.md").data == b"ONE\r\nTWO\r\nhuman\r\n"
