"""A digest-versioned backend over any fsspec filesystem.

The memory and generic backends are this class; they differ in how the filesystem is
made and whether the compare-and-swap is atomic (memory: the store lives in this process,
so a lock makes it atomic; generic: other processes may write to the same storage).
"""

from __future__ import annotations

import builtins
import posixpath
import threading
from collections.abc import Hashable, Iterable, Iterator
from typing import Any, Literal

from fsspec import AbstractFileSystem

from ..errors import ErrorCode, FsError
from ..messages import Reason
from ..oserrors import map_os_error
from ..paths import display
from ..versions import Capabilities, CreateOnly, IfMatch, Overwrite, Precondition, Version
from .base import (
    ANY_VERSION,
    Backend,
    Blob,
    BlobStream,
    Entry,
    ReadStream,
    Stat,
    VersionInfo,
    WriteMeta,
)
from .digests import KnownDigests, check_precondition, digest_version

_LOCKS: dict[Hashable, threading.RLock] = {}
_LOCKS_GUARD = threading.Lock()


def _lock_for(token: Hashable) -> threading.RLock:
    with _LOCKS_GUARD:
        lock = _LOCKS.get(token)
        if lock is None:
            lock = _LOCKS[token] = threading.RLock()
        return lock


def strip_protocol(fs: AbstractFileSystem | type[AbstractFileSystem], path: str) -> str:
    """``path`` as the filesystem names it, without its protocol: fsspec's own
    normalization, which it offers only as the private ``_strip_protocol`` (every
    filesystem class defines its own; fsspec's public helpers call it too). The one place
    fsseam reaches it."""
    stripped: str = fs._strip_protocol(path)
    return stripped


def parent_of(fs: AbstractFileSystem, path: str) -> str:
    """The parent of ``path`` as the filesystem names it (fsspec's private ``_parent``,
    for the same reason as :func:`strip_protocol`)."""
    parent: str = fs._parent(path)
    return parent


def _root_is_directory() -> FsError:
    return FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason=Reason.root_is_directory)


class FsspecDigestBackend(Backend):
    """Digest versions and a lock-guarded compare-and-swap over an fsspec filesystem.

    Reads are whole-object ``cat_file`` calls and every answer about a path (``info``,
    ``ls``, ``find``) is asked after dropping what the filesystem's listings cache holds
    for it: a size or a listing remembered from earlier never decides what a read returns
    (see the generic backend for why).
    """

    capabilities: Capabilities

    def __init__(self, fs: AbstractFileSystem, root: str) -> None:
        self.fs = fs
        self.root = root.rstrip("/") or "/"
        self._lock = _lock_for(self._lock_token())
        self._known = KnownDigests()
        # A filesystem that keeps no listings (MemoryFileSystem: invalidate_cache is the
        # base class's no-op) has nothing to forget: _fresh() need not walk the parents.
        self._keeps_listings = (
            getattr(type(fs), "invalidate_cache", None) is not AbstractFileSystem.invalidate_cache
        )

    def _lock_token(self) -> Hashable:
        return id(self.fs)

    def storage_id(self) -> Hashable:
        return (type(self).__name__, id(self.fs), self.root)

    # -- paths -------------------------------------------------------------
    def path(self, key: str) -> str:
        return posixpath.join(self.root, key) if key else self.root

    def resolve(self, key: str) -> str:
        return key

    def _fresh(self, path: str) -> str:
        """``path``, after forgetting every listing the filesystem cached for it or for a
        directory above it (a cached parent listing answers ``info`` with old sizes)."""
        if not self._keeps_listings:
            return path
        p = strip_protocol(self.fs, path).rstrip("/")
        try:
            while True:
                self.fs.invalidate_cache(p)
                parent = parent_of(self.fs, p).rstrip("/")
                if not parent or parent == p:
                    break
                p = parent
        except Exception:
            # A filesystem whose invalidate_cache fails (or is not implemented for these
            # paths) keeps no listings we could drop: nothing stale can come from it.
            pass
        return path

    def _is_dir(self, path: str) -> bool:
        try:
            return bool(self.fs.isdir(self._fresh(path)))
        except Exception:
            return False

    def _not_found(self, exc: BaseException, key: str, action: str) -> FsError:
        if isinstance(exc, FileNotFoundError) and self._is_dir(self.path(key)):
            return map_os_error(IsADirectoryError(key), key, action)
        return map_os_error(exc, key, action)

    def _info(self, key: str) -> dict[str, Any] | None:
        """The filesystem's info of ``key``, asked now; None when nothing is there."""
        try:
            info: dict[str, Any] = self.fs.info(self._fresh(self.path(key)))
        except FileNotFoundError:
            return None
        return info

    # -- reads -------------------------------------------------------------
    def _current(self, key: str) -> Version | None:
        try:
            return self.read(key).version
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise

    def _cat(self, key: str) -> bytes:
        if not key:
            raise _root_is_directory()
        path = self._fresh(self.path(key))
        try:
            data = self.fs.cat_file(path)
        except Exception as e:
            raise self._not_found(e, key, "read") from e
        return data if isinstance(data, bytes) else bytes(data)

    def read(self, key: str) -> Blob:
        # The digest of exactly these bytes; no second sha256 pass when they are the bytes
        # this backend last read or wrote there (the usual read -> edit -> re-check).
        data = self._cat(key)
        return Blob(data=data, version=self._known.version(key, data))

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        # One object at a time: the emulated compare-and-swap already serializes this
        # backend's calls, and in-memory reads cost less than any pool would. A search
        # reads thousands of files: they are digested, not kept.
        for entry in entries:
            try:
                data = self._cat(entry.key)
                yield entry, Blob(data=data, version=digest_version(data))
            except FsError as err:
                yield entry, err

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        if not key:
            raise _root_is_directory()
        # One whole-object read, not fs.open(): a buffered file reads as many bytes as
        # info() says the object has, and that size may come from a cached listing (or a
        # HEAD that disagrees with the object), so the bytes could be cut short or empty.
        # Reading it whole also pins the stream to one version.
        return BlobStream(self.read(key), chunk_size)

    def stat(self, key: str) -> Stat:
        try:
            info = self._info(key)
        except Exception as e:
            if not key and isinstance(e, FileNotFoundError):
                # An object store or a fresh memory:// has no root until a file is written
                # below it: the root is an empty directory, as on S3 and GCS.
                return Stat(key="", kind="directory")
            raise map_os_error(e, key, "stat") from e
        if info is None:
            if not key:
                return Stat(key=key, kind="directory")
            raise map_os_error(FileNotFoundError(key), key, "stat")
        kind: Literal["file", "directory"] = (
            "directory" if info.get("type") == "directory" else "file"
        )
        return Stat(key=key, kind=kind, size=info.get("size") if kind == "file" else None)

    def _relative(self, name: str) -> str:
        full = strip_protocol(self.fs, name).rstrip("/")
        base = strip_protocol(self.fs, self.root).rstrip("/")
        if full == base:
            return ""
        if base and full.startswith(base + "/"):
            return full[len(base) + 1 :]
        if not base:
            return full.lstrip("/")
        return full

    def _not_a_directory(self, key: str) -> FsError:
        return FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(key),
                       reason=Reason.not_directory)

    def list(self, key: str) -> list[Entry]:
        return sorted(self.list_lazy(key), key=lambda e: e.name)

    def list_lazy(self, key: str) -> Iterator[Entry]:
        """The children of ``key``, an entry built for each of fsspec's as it is taken (the
        raw listing is fsspec's list; no second list of entries is made)."""
        path = self._fresh(self.path(key))
        try:
            infos = self.fs.ls(path, detail=True)
        except FileNotFoundError as e:
            if not key:
                return  # an empty root: object stores have no object for it
            raise map_os_error(e, key, "list") from e
        except Exception as e:
            if not key and isinstance(e, FileNotFoundError):
                return  # an empty root, as in stat()
            raise map_os_error(e, key, "list") from e
        if len(infos) == 1 and infos[0].get("type") != "directory":
            name = strip_protocol(self.fs, infos[0]["name"]).rstrip("/")
            if name == strip_protocol(self.fs, path).rstrip("/"):
                raise self._not_a_directory(key)
        for info in infos:
            rel = self._relative(info["name"])
            if not rel or rel == key:
                continue
            kind: Literal["file", "directory"] = (
                "directory" if info.get("type") == "directory" else "file"
            )
            yield Entry(
                key=rel,
                name=posixpath.basename(rel),
                kind=kind,
                size=info.get("size") if kind == "file" else None,
            )

    def walk(self, key: str) -> Iterator[Entry]:
        path = self._fresh(self.path(key))
        try:
            found = self.fs.find(path, detail=True)
        except FileNotFoundError:
            found = {}
        except Exception as e:
            raise map_os_error(e, key, "list") from e
        if not isinstance(found, dict):
            # Some filesystems answer a file's path with a list of names whatever
            # ``detail`` asks (adlfs): the same answer, without the details.
            names = [self._relative(n) for n in found]
            if key and key in names:
                raise self._not_a_directory(key)
            found = {n: self.fs.info(self._fresh(n)) for n in found}
        # Only the keys are sorted; each entry is built as it is yielded, so a walk that
        # is capped (a glob's first hundred files) holds no entry per file of the tree.
        files: list[tuple[str, int | None]] = []
        prefix = key + "/" if key else ""
        for name, info in found.items():
            if info.get("type") == "directory":
                continue
            rel = self._relative(info.get("name") or name)
            if rel == key and key:
                raise self._not_a_directory(key)
            if not rel.startswith(prefix):
                continue
            files.append((rel, info.get("size")))
        if not files and key:
            # Nothing below it: an empty directory, a file, or nothing at all.
            try:
                info = self._info(key)
            except Exception as e:
                raise map_os_error(e, key, "list") from e
            if info is None:
                raise map_os_error(FileNotFoundError(key), key, "list")
            if info.get("type") != "directory":
                raise self._not_a_directory(key)
        files.sort(key=lambda f: f[0])
        for rel, size in files:
            yield Entry(key=rel, name=posixpath.basename(rel), kind="file", size=size)

    def read_version(self, key: str, version: Version) -> Blob:
        raise self._no_history(key)

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        raise self._no_history(key)

    def _no_history(self, key: str) -> FsError:
        return FsError(ErrorCode.FS_UNSUPPORTED, path=display(key), reason=Reason.no_history)

    # -- writes ------------------------------------------------------------
    def _check_writable_path(self, key: str, *, itself: bool = True) -> None:
        """Refuse a write at the root, at a directory (unless ``itself`` is known not to
        be one) and below a file."""
        if not key:
            raise _root_is_directory()
        if itself and self._is_dir(self.path(key)):
            raise map_os_error(IsADirectoryError(key), key, "write")
        parent = posixpath.dirname(key)
        while parent:
            try:
                info = self._info(parent)
            except Exception as e:
                raise map_os_error(e, key, "write") from e
            if info is None:
                parent = posixpath.dirname(parent)
                continue
            if info.get("type") != "directory":
                raise map_os_error(NotADirectoryError(key), key, "write")
            break

    def _put(self, key: str, data: bytes) -> Version:
        path = self.path(key)
        try:
            self.fs.pipe_file(path, data)
        except Exception as e:
            self._known.forget(key)
            raise map_os_error(e, key, "write") from e
        finally:
            # Whatever the filesystem remembered about this path (or its parents' listings)
            # predates the write; some forget only part of it themselves.
            self._fresh(path)
        version = digest_version(data)
        self._known.remember(key, data, version)
        return version

    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        if not key:
            raise _root_is_directory()
        with self._lock:
            if isinstance(precondition, Overwrite):
                self._check_writable_path(key)
            else:
                # The read that decides the precondition also tells a file (no further
                # checks needed) from a directory (FS_IS_DIRECTORY) or nothing.
                current = self._current(key)
                check_precondition(key, precondition, current)
                if current is None:
                    self._check_writable_path(key, itself=False)
            return self._put(key, data)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        if isinstance(precondition, CreateOnly):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, path=display(key), reason=Reason.create_only_delete
            )
        if not key:
            raise _root_is_directory()
        with self._lock:
            if isinstance(precondition, IfMatch):
                check_precondition(key, precondition, self._current(key))
            else:
                try:
                    info = self._info(key)
                except Exception as e:
                    raise map_os_error(e, key, "delete") from e
                if info is None:
                    raise map_os_error(FileNotFoundError(key), key, "delete")
                if info.get("type") == "directory":
                    raise map_os_error(IsADirectoryError(key), key, "delete")
            path = self.path(key)
            self._known.forget(key)
            try:
                self.fs.rm_file(path)
            except Exception as e:
                raise map_os_error(e, key, "delete") from e
            finally:
                self._fresh(path)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        if isinstance(source, CreateOnly):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, path=display(src), reason=Reason.create_only_copy
            )
        with self._lock:
            try:
                blob = self.read(src)
            except FsError as e:
                if e.code is ErrorCode.FS_NOT_FOUND and isinstance(source, IfMatch):
                    check_precondition(src, source, None)
                raise
            if isinstance(source, IfMatch):
                check_precondition(src, source, blob.version)
            return self.write(dst, blob.data, CreateOnly())
