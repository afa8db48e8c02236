"""The operations of deepagents' ``BackendProtocol`` that are no fsseam tool, on the seam:
its literal grep, its glob's file list, whole-file uploads and downloads (and the whole
file of an image or other media ``read_file`` returns as a content block), and what its
own backends do that fsseam's tools do not (a last line without a newline read as it is,
a deleted directory gone from local disk).

deepagents' semantics differ from fsseam's tools there (a literal search, its own glob
matcher, bytes for the application), so these calls are the seam's; they run through the
tool layer's ladder like every call (:mod:`fsseam.integrations.deepagents`), and an upload
is the seam's guarded write, as every change is. Imports no framework: deepagents' matcher
is handed in.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator
from dataclasses import replace

from ..changes import Delete
from ..errors import ErrorCode, FsError
from ..events import ReadEvent
from ..globs import Glob
from ..grep import compile_pattern
from ..messages import Reason
from ..outcomes import GrepOutcome, ListEntry, ReadOutcome
from ..paths import display
from ..workspace import Context

__all__ = [
    "IncludeGlob",
    "delete_directory",
    "download",
    "files_below",
    "literal_grep",
    "unterminated",
    "upload",
]


class IncludeGlob(Glob):
    """deepagents' include-glob matcher where the seam takes a :class:`~fsseam.globs.Glob`
    (the matcher decides about hidden names itself)."""

    _matcher: Callable[[str], bool]

    def __init__(self, pattern: str, matcher: Callable[[str], bool]) -> None:
        super().__init__(pattern=pattern, alternatives=(), base="", named=frozenset())
        object.__setattr__(self, "_matcher", matcher)

    def match(self, relative: str) -> bool:
        return self._matcher(relative)

    def allows(self, relative: str) -> bool:
        return True


def files_below(context: Context, path: str) -> tuple[str, Iterator[ListEntry]]:
    """The search root as shown, and the files below it as the walk gives them (the file
    itself when ``path`` names one). The walk's first step is taken here, so a missing
    path or one that is a file is known before the caller iterates; the rest is lazy, so a
    caller that stops early never holds the whole tree."""
    fs = context.fs
    try:
        walked = (e for e in fs.walk(path) if e.type == "file")
        head = list(itertools.islice(walked, 1))
        return display(fs.key(path)), itertools.chain(head, walked)
    except FsError as e:
        if e.code is not ErrorCode.FS_INVALID_ARGUMENT:
            raise
        st = fs.stat(path)
        if st.type != "file":
            raise
        return st.path, iter([ListEntry(path=st.path, type="file", size=st.size, depth=0)])


def literal_grep(context: Context, pattern: str, base: str, files: Glob | None,
                 limit: int) -> GrepOutcome:
    """The lines holding ``pattern`` as literal text, in content mode (a read of the files
    it shows)."""
    # The cap is on the text the model sent, before escaping: compiling megabytes of
    # pattern takes tens of seconds.
    cap = context.fs.limits.grep_pattern_chars
    if len(pattern) > cap:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.grep_pattern_too_long,
                      details={"length": len(pattern), "max": cap})
    # Literal text: the escaped pattern for the engine, found with str.find where the
    # search can (fsseam's plain-text path).
    literal = replace(compile_pattern(re.escape(pattern)), source=pattern, literal=pattern)
    return context.fs.grep(literal, base, files=files, mode="content", limit=limit)


def upload(context: Context, path: str, data: bytes) -> None:
    """Write ``data`` as the whole of ``path`` for the context's owner: the seam's guarded
    whole-file write, as every change is (the gate, the limits, the reserved prefixes, the
    read-only workspace): a new file is created; an existing one is replaced only at the
    version this owner last read, downloaded or wrote (FS_NOT_OBSERVED, FS_STALE)."""
    context.fs.write_bytes(path, bytes(data))


def download(context: Context, path: str, cap: int | None = None) -> bytes:
    """The bytes of ``path``; a download is a read of the whole file, recorded like one:
    deepagents' own middleware downloads a file, then edits it whole (its conversation
    history). Past ``cap`` bytes: FS_TOO_LARGE, and nothing is recorded."""
    fs = context.fs
    key = fs.key(path)
    stream = fs.backend.open_read(key, fs.limits.read_chunk_bytes)
    parts: list[bytes] = []
    size = 0
    try:
        for chunk in stream.chunks():
            size += len(chunk)
            if cap is not None and size > cap:
                # Counted as it streams: a file that grew since a stat is not held whole.
                raise FsError(ErrorCode.FS_TOO_LARGE, path=display(key),
                              reason=Reason.deepagents_media_too_large, details={"max": cap})
            parts.append(chunk)
    finally:
        stream.close()
    data = b"".join(parts)
    if stream.version is not None:
        context.workspace.gate.dispatch(ReadEvent(
            owner=context.owner, key=key, path=display(key), version=stream.version))
    return data


def unterminated(context: Context, out: ReadOutcome) -> bool:
    """Whether the window ends with the file's last line and that line has no newline.

    deepagents' own backends return a window's lines as the file has them, so ``"a\\nb"``
    reads back without a newline after ``b`` (its ``edit_file`` tells an ``old_string``
    that adds one at the end of the file from one that does not). A window of lines
    cannot say it; the bytes the workspace keeps of the version just read can, with no
    request. A file too large to keep reads as if its last line ended in a newline.
    """
    if out.total is None or not out.returned or out.offset + out.returned - 1 < out.total:
        return False
    raw = context.fs.kept(out.path, out.version)
    return raw is not None and raw != b"" and not raw.endswith((b"\n", b"\r"))


def delete_directory(context: Context, path: str) -> str:
    """Every file below ``path`` as one change, all or nothing, each at the version the
    owner observed, then the directories left empty; the directory as shown. An empty
    directory that stays (a store that keeps one fsseam cannot remove) is
    FS_INVALID_ARGUMENT."""
    fs = context.fs
    files = [e.path for e in fs.walk(path) if e.type != "directory"]
    shown = display(fs.key(path))
    if files:
        fs.change([Delete(f) for f in files])
    # deepagents' own delete removes the directory: on local disk (object stores have
    # none) the directories left empty go too.
    fs.prune_directories(path)
    if not files and _is_directory(context, path):
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=shown,
                      reason=Reason.memory_empty_directory, details={"action": "delete"})
    return shown


def _is_directory(context: Context, path: str) -> bool:
    try:
        return context.fs.stat(path).type == "directory"
    except FsError:
        return False
