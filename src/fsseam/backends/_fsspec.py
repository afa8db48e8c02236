"""A digest-versioned backend over any fsspec filesystem.

The memory and generic backends are this class; they differ in how the filesystem is
made and whether the compare-and-swap is atomic (memory: the store lives in this process,
so a lock makes it atomic; generic: other processes may write to the same storage).
"""

from __future__ import annotations

import posixpath
import threading
from collections.abc import Iterator
from typing import Any, ClassVar, Literal

from fsspec import AbstractFileSystem

from ..errors import Conflict, ErrorCode, FsError
from ..oserrors import map_os_error
from ..versions import Capabilities, CreateOnly, IfMatch, Overwrite, Precondition, Version
from ._digest import digest_version, hasher, version_of
from .base import Blob, Entry, Stat

_LOCKS: dict[int, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(token: int) -> threading.RLock:
    with _LOCKS_GUARD:
        lock = _LOCKS.get(token)
        if lock is None:
            lock = _LOCKS[token] = threading.RLock()
        return lock


def check_precondition(
    key: str, precondition: Precondition, current: Version | None
) -> None:
    """Raise Conflict unless ``precondition`` holds against ``current`` (None = absent)."""
    shown = "/" + key
    if isinstance(precondition, CreateOnly) and current is not None:
        raise Conflict("exists", f"{shown} already exists.", path=key)
    if isinstance(precondition, IfMatch):
        if current is None:
            raise Conflict("missing", f"{shown} no longer exists.", path=key)
        if current != precondition.version:
            raise Conflict("mismatch", f"{shown} has changed since it was read.", path=key)


def _root_is_directory() -> FsError:
    return FsError(
        ErrorCode.FS_IS_DIRECTORY, "/ is the workspace root directory, not a file.", path=""
    )


class _FsspecStream:
    def __init__(self, f: Any, chunk_size: int, size: int | None) -> None:
        self._f = f
        self._chunk_size = chunk_size
        self.size = size
        self._hash = hasher()
        self._version: Version | None = None

    @property
    def version(self) -> Version | None:
        return self._version

    def chunks(self) -> Iterator[bytes]:
        while True:
            chunk = self._f.read(self._chunk_size)
            if not chunk:
                break
            self._hash.update(chunk)
            yield chunk
        self._version = version_of(self._hash)

    def close(self) -> None:
        self._f.close()


class FsspecDigestBackend:
    """Digest versions and a lock-guarded compare-and-swap over an fsspec filesystem."""

    capabilities: ClassVar[Capabilities]

    def __init__(self, fs: AbstractFileSystem, root: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/") or "/"
        self._lock = _lock_for(self._lock_token())

    def _lock_token(self) -> int:
        return id(self.fs)

    # -- paths -------------------------------------------------------------
    def path(self, key: str) -> str:
        return posixpath.join(self.root, key) if key else self.root

    def resolve(self, key: str) -> str:
        return key

    def _is_dir(self, path: str) -> bool:
        try:
            return bool(self.fs.isdir(path))
        except Exception:
            return False

    def _not_found(self, exc: BaseException, key: str, action: str) -> FsError:
        if isinstance(exc, FileNotFoundError) and self._is_dir(self.path(key)):
            return map_os_error(IsADirectoryError(key), key, action)
        return map_os_error(exc, key, action)

    # -- reads -------------------------------------------------------------
    def _current(self, key: str) -> Version | None:
        try:
            return self.read(key).version
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise

    def read(self, key: str) -> Blob:
        if not key:
            raise _root_is_directory()
        path = self.path(key)
        try:
            data = self.fs.cat_file(path)
        except Exception as e:
            raise self._not_found(e, key, "read") from e
        if not isinstance(data, bytes):
            data = bytes(data)
        return Blob(data=data, version=digest_version(data))

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> _FsspecStream:
        if not key:
            raise _root_is_directory()
        path = self.path(key)
        try:
            f = self.fs.open(path, "rb")
        except Exception as e:
            raise self._not_found(e, key, "read") from e
        return _FsspecStream(f, chunk_size, getattr(f, "size", None))

    def stat(self, key: str) -> Stat:
        path = self.path(key)
        try:
            info = self.fs.info(path)
        except Exception as e:
            if not key and isinstance(e, FileNotFoundError):
                # An object store or a fresh memory:// has no root until a file is written
                # below it: the root is an empty directory, as on S3 and GCS.
                return Stat(key="", kind="directory")
            raise map_os_error(e, key, "stat") from e
        kind: Literal["file", "directory"] = (
            "directory" if info.get("type") == "directory" else "file"
        )
        return Stat(key=key, kind=kind, size=info.get("size") if kind == "file" else None)

    def list(self, key: str) -> list[Entry]:
        path = self.path(key)
        try:
            infos = self.fs.ls(path, detail=True)
        except Exception as e:
            if not key and isinstance(e, FileNotFoundError):
                return []  # an empty root, as in stat()
            raise map_os_error(e, key, "list") from e
        if len(infos) == 1 and infos[0].get("type") != "directory":
            name = self.fs._strip_protocol(infos[0]["name"]).rstrip("/")
            if name == self.fs._strip_protocol(path).rstrip("/"):
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    f"/{key} is a file, not a directory. Read it instead.",
                    path=key,
                )
        entries = []
        base = self.fs._strip_protocol(self.root).rstrip("/")
        for info in infos:
            full = self.fs._strip_protocol(info["name"]).rstrip("/")
            rel = full[len(base) :].lstrip("/") if full.startswith(base) else full
            if not rel or rel == key:
                continue
            kind: Literal["file", "directory"] = (
                "directory" if info.get("type") == "directory" else "file"
            )
            entries.append(
                Entry(
                    key=rel,
                    name=posixpath.basename(rel),
                    kind=kind,
                    size=info.get("size") if kind == "file" else None,
                )
            )
        return sorted(entries, key=lambda e: e.name)

    # -- writes ------------------------------------------------------------
    def _check_writable_path(self, key: str) -> None:
        if not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, "/ is the workspace root directory.")
        path = self.path(key)
        if self._is_dir(path):
            raise map_os_error(IsADirectoryError(key), key, "write")
        parent = posixpath.dirname(key)
        while parent:
            try:
                info = self.fs.info(self.path(parent))
            except FileNotFoundError:
                parent = posixpath.dirname(parent)
                continue
            except Exception as e:
                raise map_os_error(e, key, "write") from e
            if info.get("type") != "directory":
                raise map_os_error(NotADirectoryError(key), key, "write")
            break

    def write(self, key: str, data: bytes, precondition: Precondition) -> Version:
        with self._lock:
            self._check_writable_path(key)
            if not isinstance(precondition, Overwrite):
                check_precondition(key, precondition, self._current(key))
            try:
                self.fs.pipe_file(self.path(key), data)
            except Exception as e:
                raise map_os_error(e, key, "write") from e
        return digest_version(data)

    def delete(self, key: str) -> None:
        with self._lock:
            path = self.path(key)
            if self._is_dir(path):
                raise map_os_error(IsADirectoryError(key), key, "delete")
            try:
                self.fs.rm_file(path)
            except Exception as e:
                raise map_os_error(e, key, "delete") from e
