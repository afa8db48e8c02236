"""A history store in a directory on local disk (imported only when one is used: it
needs ``fcntl``).

Layout: ``DIR/FSSEAM-HISTORY`` (a marker: fsseam only ever uses a directory that is empty
or carries it), and per file ``DIR/<sha256 of its key, 32 hex>/`` holding ``index.json``
(its entries) and one copy per kept version, named by the sha256 of its bytes. Every
file is written to a temp file in the same directory, fsynced, renamed into place and the
directory fsynced, so a crash leaves the old or the new file, never part of one. A file's
directory is ``flock``-ed while its index or copies change (by any process); temp files
found under that lock are a crashed writer's, and are removed.

An index that cannot be read as exactly what fsseam writes is damaged: reading the history
raises ``history_index_damaged`` (FS_BACKEND), and the next change of the file renames it
to ``index.json.damaged-<time>-<hex>`` beside the copies and starts a new one.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
from collections.abc import Iterator
from datetime import UTC, datetime

from pydantic import ValidationError

from ...errors import ErrorCode, FsError
from ...messages import Part, Reason
from ...paths import display
from .stores import KeptEntry

__all__ = ["MARKER", "DirectoryHistoryStore"]

MARKER = "FSSEAM-HISTORY"
INDEX = "index.json"
FORMAT = 1
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX32 = re.compile(r"[0-9a-f]{32}")
_TEMP = ".tmp-"


def _fsync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _durable_write(directory: str, name: str, data: bytes, sync: bool = True) -> None:
    temp = os.path.join(directory, f"{_TEMP}{secrets.token_hex(8)}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view):]
        if sync:
            os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    os.close(fd)
    os.replace(temp, os.path.join(directory, name))
    if sync:
        _fsync_dir(directory)


def _damaged(key: str, index: str, error: Exception | Part, **facts: object) -> FsError:
    """``error``: what made the index unreadable, or the catalogue's clause saying what is
    wrong with its shape (``facts``: the fields that clause names)."""
    said = error if isinstance(error, Part) else str(error)
    return FsError(ErrorCode.FS_BACKEND, path=display(key), reason=Reason.history_index_damaged,
                   details={"index": index, "error": said, **facts})


class DirectoryHistoryStore:
    """``sync=False``: no fsync, for a local workspace whose own writes make none (its
    ``"rename"`` durability); a crash of the process still leaves whole files."""

    def __init__(self, path: str, sync: bool = True) -> None:
        self.path = path
        self.where = path
        self.sync = sync
        try:
            os.makedirs(path, mode=0o700, exist_ok=True)
            names = os.listdir(path)
            if MARKER not in names:
                if names:
                    raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.history_dir_foreign,
                                  details={"where": path})
                _durable_write(path, MARKER, b"fsseam history, format 1\n")
        except OSError as e:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.history_dir_unusable,
                          details={"where": path, "error": e.strerror or str(e)}) from e

    def _dir(self, key: str) -> str:
        digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return os.path.join(self.path, digest)

    @contextlib.contextmanager
    def lock(self, key: str) -> Iterator[None]:
        directory = self._dir(key)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            # Under the lock no live writer has a temp file here: any is a crashed one's.
            names = os.listdir(directory)
            for name in names:
                if name.startswith(_TEMP):
                    with contextlib.suppress(OSError):
                        os.unlink(os.path.join(directory, name))
            if INDEX not in names:
                # The index names the key from the start, so that copies a crash leaves
                # before the first entry are still counted and evicted.
                self.save(key, [])
            yield
        finally:
            os.close(fd)  # closing releases the flock

    def entries(self, key: str) -> list[KeptEntry]:
        index = os.path.join(self._dir(key), INDEX)
        try:
            with open(index, "rb") as f:
                raw = json.loads(f.read())
        except FileNotFoundError:
            return []
        except (OSError, ValueError) as e:
            raise _damaged(key, index, e) from e
        # Anything but the exact shape this version writes is damage (a hand edit, a
        # truncated copy, another program's file): guessing would show wrong versions.
        if not isinstance(raw, dict):
            raise _damaged(key, index, Part("_index_not_object"), json_type=type(raw).__name__)
        if raw.get("format") != FORMAT or raw.get("key") != key:
            raise _damaged(key, index, Part("_index_wrong_format"))
        listed = raw.get("entries")
        if not isinstance(listed, builtins.list):
            raise _damaged(key, index, Part("_index_entries_not_list"))
        try:
            return [KeptEntry.model_validate(e) for e in listed]
        except ValidationError as e:
            problem = e.errors()[0]
            where = ".".join(str(p) for p in problem.get("loc", ())) or "entry"
            raise _damaged(key, index, Part("_index_bad_entry"), field=where,
                           problem=problem.get("msg")) from e

    def set_aside(self, key: str) -> builtins.list[str]:
        """Move a damaged index out of the way (renamed, never deleted: the user may want
        it); the copies stay. Returns the copies' names, oldest first."""
        directory = self._dir(key)
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        with contextlib.suppress(FileNotFoundError):
            os.replace(os.path.join(directory, INDEX),
                       os.path.join(directory, f"{INDEX}.damaged-{stamp}-{secrets.token_hex(4)}"))
        if self.sync:
            _fsync_dir(directory)
        aged: builtins.list[tuple[int, str]] = []
        with contextlib.suppress(FileNotFoundError), os.scandir(directory) as it:
            for entry in it:
                if _HEX64.fullmatch(entry.name):
                    with contextlib.suppress(OSError):
                        aged.append((entry.stat(follow_symlinks=False).st_mtime_ns, entry.name))
        return [name for _, name in sorted(aged)]

    def save(self, key: str, entries: list[KeptEntry]) -> None:
        body = {"format": FORMAT, "key": key,
                "entries": [e.model_dump(mode="json") for e in entries]}
        _durable_write(self._dir(key), INDEX, json.dumps(body).encode(), self.sync)

    def has(self, key: str, sha: str) -> bool:
        return os.path.isfile(os.path.join(self._dir(key), sha))

    def put(self, key: str, sha: str, data: bytes) -> None:
        directory = self._dir(key)
        os.makedirs(directory, mode=0o700, exist_ok=True)
        _durable_write(directory, sha, data, self.sync)

    def get(self, key: str, sha: str) -> bytes | None:
        try:
            with open(os.path.join(self._dir(key), sha), "rb") as f:
                return f.read()
        except OSError:
            return None

    def copies(self, key: str) -> dict[str, int]:
        out: dict[str, int] = {}
        with contextlib.suppress(FileNotFoundError), os.scandir(self._dir(key)) as it:
            for entry in it:
                if _HEX64.fullmatch(entry.name):
                    with contextlib.suppress(OSError):
                        out[entry.name] = entry.stat(follow_symlinks=False).st_size
        return out

    def drop(self, key: str, sha: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(os.path.join(self._dir(key), sha))

    def files(self) -> builtins.list[str]:
        found: builtins.list[str] = []
        with os.scandir(self.path) as it:
            for entry in it:
                if not (_HEX32.fullmatch(entry.name) and entry.is_dir(follow_symlinks=False)):
                    continue
                try:
                    with open(os.path.join(entry.path, INDEX), "rb") as f:
                        raw = json.loads(f.read())
                except (OSError, ValueError):
                    continue
                key = raw.get("key") if isinstance(raw, dict) else None
                if isinstance(key, str):
                    found.append(key)
        return sorted(found)
