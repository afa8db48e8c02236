"""Small helpers shared by the test modules (imported as ``tests.helpers``)."""

from __future__ import annotations

from typing import Any

from fsseam import ErrorCode, ToolResult, Workspace


def raw(ws: Workspace, path: str) -> bytes | None:
    """The bytes at a virtual path straight from the backend (None when absent)."""
    from fsseam import FsError

    try:
        return ws.backend.read(path.lstrip("/")).data
    except FsError as e:
        if e.code is ErrorCode.FS_NOT_FOUND:
            return None
        raise


def call(ws: Workspace, owner: str, tool: str, **args: Any) -> ToolResult:
    return ws.context(owner).tools.execute(tool, args)


def ok(res: ToolResult) -> ToolResult:
    assert res.ok, res.text
    return res


def fails(res: ToolResult, code: ErrorCode) -> ToolResult:
    assert not res.ok, res.text
    assert res.error is not None
    assert res.error.code is code, res.text
    assert res.text.startswith(f"Error [{code.value}]: ")
    return res
