"""A workspace on a bucket that does not exist."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import pytest

from ...backends.registry import open_backend
from ...messages import Reason
from ...versions import CreateOnly, IfMatch, Version
from .rigs import StoreRig

__all__ = ["MissingBucketSuite"]


_TOOL_CALLS = [
    ("read", {"file_path": "/a.txt"}),
    ("write", {"file_path": "/a.txt", "content": "x"}),
    ("edit", {"file_path": "/a.txt", "old_string": "a", "new_string": "b"}),
    ("str_replace_editor", {"command": "create", "path": "/a.txt", "file_text": "x"}),
    ("ls", {"path": "/"}),
]
_BACKEND_CALLS: dict[str, Callable[[Any], Any]] = {
    "read": lambda b: b.read("f"),
    "stat": lambda b: b.stat("f"),
    "stat-root": lambda b: b.stat(""),
    "list": lambda b: b.list(""),
    "walk": lambda b: list(b.walk("")),
    "write": lambda b: b.write("f", b"x", CreateOnly()),
    "write-if-match": lambda b: b.write(
        "f", b"x", IfMatch(Version(kind=b.capabilities.version_kind, value="1"))
    ),
    "delete": lambda b: b.delete("f"),
    "open_read": lambda b: b.open_read("f"),
}


class MissingBucketSuite:
    """Mixin: subclass with a ``store`` fixture (only its server is used: the bucket named
    here does not exist). A missing bucket is never a missing file: every call says which
    bucket is missing, with the reason callers branch on."""

    @pytest.mark.parametrize(("tool", "args"), _TOOL_CALLS,
                             ids=["read", "write", "edit", "create", "ls"])
    def test_missing_bucket_is_reported_as_such_by_the_tools(
        self, store: StoreRig, tool: str, args: dict[str, Any]
    ) -> None:
        from ...errors import ErrorCode
        from ...workspace import Workspace

        bucket = f"fsseam-missing-{uuid.uuid4().hex[:8]}"
        url = f"{store.scheme}://{bucket}/p"
        ctx = Workspace(url, storage_options=store.storage_options()).context("a")
        res = ctx.tools.execute(tool, args)
        assert res.error is not None and res.error.code is ErrorCode.FS_NOT_FOUND, res.text
        assert f"the bucket {bucket} does not exist" in res.text
        assert "create the file" not in res.text

    @pytest.mark.parametrize("call", list(_BACKEND_CALLS))
    def test_missing_bucket_is_not_found_naming_the_bucket(
        self, store: StoreRig, call: str
    ) -> None:
        from ...errors import ErrorCode, FsError

        bucket = f"fsseam-missing-{uuid.uuid4().hex[:8]}"
        backend = open_backend(f"{store.scheme}://{bucket}/p", store.storage_options())
        with pytest.raises(FsError) as info:
            _BACKEND_CALLS[call](backend)
        assert type(info.value) is FsError  # never a Conflict: IfMatch met no object
        assert info.value.code is ErrorCode.FS_NOT_FOUND
        assert info.value.reason == Reason.bucket_missing
        assert f"the bucket {bucket} does not exist" in info.value.message
