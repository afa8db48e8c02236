"""Bytes for a surface whose API is a file system (the guarded fsspec filesystem): a byte
range of a file, recorded as a read of its version (a partial one unless the range is the
whole file, as a window of lines is); a create-only write of exact bytes; and the version a
file has now, for a listing's details. The whole-file read and write are
:func:`fsseam.seam.raw.read_bytes` and :func:`fsseam.seam.writing.write_bytes`."""

from __future__ import annotations

import contextlib

from ..errors import ErrorCode, FsError
from ..events import ReadEvent, WrittenEvent
from ..messages import Reason
from ..text import decode
from ..versions import CreateOnly, Version
from .core import Core
from .pipeline import run
from .plans import FilePlan, Plan, ask, lost_of

__all__ = ["create_bytes", "read_range", "version_now"]


def read_range(fs: Core, path: str, start: int = 0, end: int | None = None
               ) -> tuple[bytes, Version]:
    """The bytes ``[start, end)`` of a file (``end`` None: to its end) and the version they
    come from, in one read; at most ``Limits.max_edit_bytes`` of them (FS_TOO_LARGE). The
    owner has now observed that version."""
    key, shown = fs.resolve_file(path)
    cap = fs.limits.max_edit_bytes
    try:
        stream = fs.backend.open_read(key, fs.limits.read_chunk_bytes)
    except FsError as e:
        raise fs.not_found(key, e) from None
    parts: list[bytes] = []
    kept = pos = 0
    whole = True
    try:
        for chunk in stream.chunks():
            lo, hi = max(start - pos, 0), len(chunk) if end is None else min(end - pos, len(chunk))
            pos += len(chunk)
            if hi > lo:
                parts.append(chunk[lo:hi])
                kept += hi - lo
                if kept > cap:
                    raise FsError(ErrorCode.FS_TOO_LARGE, path=shown, reason=Reason.edit_too_large,
                                  details={"size": stream.size or kept, "cap": cap})
            if end is not None and pos >= end and stream.version is not None:
                # The rest is not needed, and the version is known without it.
                whole = False
                break
    except FsError as e:
        raise fs.not_found(key, e) from None
    finally:
        stream.close()
    version = stream.version
    if version is None:  # pragma: no cover - a backend bug
        raise FsError(ErrorCode.FS_BACKEND, path=shown, reason=Reason.no_version)
    data = b"".join(parts)
    if whole and start <= 0 and (end is None or end >= pos):
        fs.record_observed(key, shown, data, version)
    else:
        fs.gate.dispatch(ReadEvent(owner=fs.owner, key=key, path=shown, version=version,
                                    partial=True))
    return data, version


def create_bytes(fs: Core, path: str, data: bytes) -> Version:
    """Create a new file holding exactly ``data``; never replaces one (FS_ALREADY_EXISTS),
    whatever this owner observed of the path."""
    fs.check_writable()
    key, shown = fs.resolve_file(path)
    fs.check_writable_at(key)
    fs.check_edit_size(shown, len(data))
    intent = ask(fs, "write", key, shown, operation="create", size=len(data))
    # An exclusive create of fsspec's ("xb", mode="create") answers FileExistsError for any
    # file there, this owner's earlier one included: no owner on the object makes it ours.
    plan = FilePlan(key, shown, data, CreateOnly(), "create", "write", lost_of(intent),
                    fs.write_meta(), rerun_is_own=False)
    plan.lost = (ErrorCode.FS_ALREADY_EXISTS, Reason.add_exists, None)
    done = run(fs, Plan.one("write", plan))[0]
    version = done.version
    assert version is not None
    if done.unchanged:
        # The file was there already, holding these very bytes: still not a creation.
        raise FsError(ErrorCode.FS_ALREADY_EXISTS, path=shown, reason=Reason.add_exists)
    with contextlib.suppress(FsError):  # not text: no diff will start from it
        # The text of the version written, which a later refusal's diff starts from.
        fs.docs.put(key, version, decode(data, shown).format, data)
    fs.gate.dispatch(WrittenEvent(owner=fs.owner, key=key, path=shown, operation="create",
                                   version=version, created=True))
    return version


def version_now(fs: Core, path: str) -> Version | None:
    """The file's version now (None: it does not exist), from the smallest read the store
    allows; not an observation (nothing was shown)."""
    key, _ = fs.resolve_file(path)
    return fs.probe_version(key)
