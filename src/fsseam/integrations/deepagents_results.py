"""fsseam's outcomes as the fields of deepagents' ``BackendProtocol`` results.

Imports no framework: the fields go into deepagents' ``ReadResult`` and ``FileInfo`` in
:mod:`fsseam.integrations.deepagents`.
"""

from __future__ import annotations

import base64
from typing import Any

from ..errors import ErrorCode
from ..outcomes import ListEntry, ReadOutcome

__all__ = ["MAX_MEDIA_BYTES", "UPLOAD_ERRORS", "info", "media_result", "read_result"]

MAX_MEDIA_BYTES = 20 * 1024 * 1024
"""The largest image, audio, video or document file ``read_file`` returns whole, as a
content block (the largest image the model providers accept inline); larger is
FS_TOO_LARGE."""

UPLOAD_ERRORS: dict[ErrorCode, Any] = {
    ErrorCode.FS_NOT_FOUND: "file_not_found",
    ErrorCode.FS_PERMISSION_DENIED: "permission_denied",
    ErrorCode.FS_READ_ONLY: "permission_denied",
    ErrorCode.FS_IS_DIRECTORY: "is_directory",
    ErrorCode.FS_OUTSIDE_ROOT: "invalid_path",
    ErrorCode.FS_INVALID_ARGUMENT: "invalid_path",
}
"""fsseam codes that are one of deepagents' ``FileOperationError`` literals."""


def info(e: ListEntry) -> dict[str, Any]:
    """A ``FileInfo``: a directory's path ends in ``/``, a file's carries its size."""
    if e.type == "directory":
        return {"path": e.path.rstrip("/") + "/", "is_dir": True}
    out: dict[str, Any] = {"path": e.path, "is_dir": False}
    if e.size is not None:
        out["size"] = e.size
    return out


def read_result(out: ReadOutcome, unterminated: bool = False) -> dict[str, Any]:
    """A ``ReadResult``: the window as deepagents' middleware numbers it, raw lines, each
    ending in a newline but the file's last when it has none (``unterminated``), with where
    it starts, ends and how to go on."""
    if not out.lines:
        return {"file_data": {"content": "", "encoding": "utf-8"}}
    content = "".join(f"{line}\n" for line in out.lines)
    if unterminated:
        content = content[:-1]
    start = out.offset
    end = start + out.returned - 1
    more = out.total is None or end < out.total
    return {
        "file_data": {"content": content, "encoding": "utf-8"},
        "total_lines": out.total,
        "start_line": start,
        "end_line": end,
        "next_offset": end if more else None,
    }


def media_result(data: bytes) -> dict[str, Any]:
    """A ``ReadResult`` of a whole media file as deepagents' own backends return it:
    base64, which its middleware turns into an image (audio, video, file) content block."""
    encoded = base64.standard_b64encode(data).decode("ascii")
    return {"file_data": {"content": encoded, "encoding": "base64"}}
