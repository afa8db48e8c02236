"""Virtual paths: what the model sees (``/`` is the workspace root on every backend).

Names are shown losslessly and safely. A local file name that is not valid UTF-8 reaches
Python as lone surrogates (``os.fsdecode``), which no JSON encoder or terminal accepts, and
a name may hold control characters that would forge extra lines in a listing. ``display``
writes those as escapes: ``\\xHH`` for a raw byte or an ASCII control character,
``\\uXXXX`` for a C1 control, a line or paragraph separator or another lone surrogate, and
``\\\\`` for a backslash (so escapes are unambiguous). ``to_key`` reads the same escapes
back, so a path copied from a listing names exactly that file; any other backslash is
taken literally.
"""

from __future__ import annotations

import re

from .errors import ErrorCode, FsError
from .messages import Reason

__all__ = [
    "MAX_PATH_CHARS",
    "MAX_PATH_DEPTH",
    "RESERVED_FOLDERS",
    "display",
    "escape",
    "escape_surrogates",
    "reserved",
    "to_key",
    "unescape",
]

MAX_PATH_DEPTH = 128
"""Most names a path may have below the root (a write creates the directories on the way)."""
MAX_PATH_CHARS = 4096
"""Most characters a path may have below the root (Linux's PATH_MAX is 4096 bytes)."""

RESERVED_FOLDERS = (".fsseam-branches", ".fsseam-calls", ".fsseam-audit")
"""The folders at the root of a workspace where fsseam keeps its own records: branches,
the records that make a replayed call exactly-once, the audit trail (when kept in the
workspace). No file of the workspace: the seam refuses them to every tool and leaves them
out of every listing."""


def reserved(key: str) -> bool:
    """Whether ``key`` is one of :data:`RESERVED_FOLDERS` or lies in one."""
    head = key.split("/", 1)[0]
    return head in RESERVED_FOLDERS


_UNSAFE = re.compile("[\\\\\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_ESCAPE = re.compile(r"\\(\\|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4})")


def _escape_char(m: re.Match[str]) -> str:
    c = m.group()
    o = ord(c)
    if c == "\\":
        return "\\\\"
    if 0xDC80 <= o <= 0xDCFF:
        return f"\\x{o - 0xDC00:02x}"  # a raw byte, as os.fsdecode carries it
    if o < 0x80:
        return f"\\x{o:02x}"
    return f"\\u{o:04x}"


def escape(text: str) -> str:
    """``text`` with backslashes, control characters and lone surrogates escaped."""
    return _UNSAFE.sub(_escape_char, text) if _UNSAFE.search(text) else text


_SURROGATE = re.compile("[\ud800-\udfff]")
# Surrogates that are not raw bytes carried by os.fsdecode: no file name can hold them.
_UNNAMEABLE = re.compile("[\ud800-\udc7f\udd00-\udfff]")


def escape_surrogates(text: str) -> str:
    """``text`` with only its lone surrogates escaped (as :func:`escape` writes them)."""
    return _SURROGATE.sub(_escape_char, text)


def _unescape_match(m: re.Match[str]) -> str:
    body = m.group(1)
    if body == "\\":
        return "\\"
    value = int(body[1:], 16)
    if body[0] == "x":
        if value >= 0x80:
            return chr(0xDC00 + value)
        if 0 < value < 0x20 or value == 0x7F:
            return chr(value)
    elif (0x80 <= value <= 0x9F or value in (0x2028, 0x2029)
          or (0xD800 <= value <= 0xDFFF and not 0xDC80 <= value <= 0xDCFF)):
        return chr(value)
    return m.group()  # not an escape display() makes: literal text


def unescape(text: str) -> str:
    """The inverse of :func:`escape` (other backslashes stay as they are)."""
    return _ESCAPE.sub(_unescape_match, text) if "\\" in text else text


def to_key(path: str) -> str:
    """The root-relative key of a virtual path, checked lexically.

    Relative paths resolve against ``/``. ``..`` may not climb above the root and NUL bytes
    are refused (FS_OUTSIDE_ROOT); symlinks are the backend's ``resolve``. Escapes made by
    :func:`display` are read back. A path deeper than ``MAX_PATH_DEPTH`` names or longer
    than ``MAX_PATH_CHARS`` characters is FS_INVALID_ARGUMENT.
    """
    if not isinstance(path, str) or not path.strip():
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.path_empty)
    if "\x00" in path:
        raise FsError(ErrorCode.FS_OUTSIDE_ROOT, reason=Reason.path_nul)
    if len(path) > 4 * MAX_PATH_CHARS:
        # Checked before splitting, so a huge argument costs no more than this.
        raise _too_long(len(path))
    parts: list[str] = []
    for raw in path.split("/"):
        if raw in ("", "."):
            continue
        if raw == "..":
            if not parts:
                raise FsError(ErrorCode.FS_OUTSIDE_ROOT, path=escape(path),
                              reason=Reason.path_escapes)
            parts.pop()
            continue
        part = unescape(raw)
        if _UNNAMEABLE.search(part):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, path=escape(path), reason=Reason.path_surrogate
            )
        parts.append(part)
    if len(parts) > MAX_PATH_DEPTH:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.path_too_deep,
            details={"depth": len(parts), "max": MAX_PATH_DEPTH},
        )
    key = "/".join(parts)
    if len(key) > MAX_PATH_CHARS:
        raise _too_long(len(key))
    return key


def _too_long(n: int) -> FsError:
    return FsError(
        ErrorCode.FS_INVALID_ARGUMENT,
        reason=Reason.path_too_long,
        details={"length": n, "max": MAX_PATH_CHARS},
    )


def display(key: str) -> str:
    """The path the model sees for a key (escaped where the name needs it)."""
    return "/" + escape(key)
