"""Virtual paths: what the model sees (``/`` is the workspace root on every backend)."""

from __future__ import annotations

from .errors import ErrorCode, FsError

__all__ = ["display", "to_key"]


def to_key(path: str) -> str:
    """The root-relative key of a virtual path, checked lexically.

    Relative paths resolve against ``/``. ``..`` may not climb above the root and NUL bytes
    are refused (FS_OUTSIDE_ROOT); symlinks are the backend's ``resolve``.
    """
    if not isinstance(path, str) or not path.strip():
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, "the path is empty; give a file path such "
                      "as /notes.md.")
    if "\x00" in path:
        raise FsError(ErrorCode.FS_OUTSIDE_ROOT, "the path contains a NUL byte; NUL bytes are "
                      "never valid in a path.")
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise FsError(
                    ErrorCode.FS_OUTSIDE_ROOT,
                    f"{path} leads outside the workspace root. Use a path under /.",
                    path=path,
                )
            parts.pop()
            continue
        parts.append(part)
    return "/".join(parts)


def display(key: str) -> str:
    return "/" + key
