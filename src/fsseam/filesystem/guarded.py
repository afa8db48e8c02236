"""One owner's context as an fsspec filesystem (``ctx.filesystem()``): every read records
what the owner saw, every change goes through ``ctx.fs`` under the tools' rules.

Names are root-relative and start with ``/`` (``/a/b.csv``); ``a/b.csv`` and
``fsseam:///a/b.csv`` name the same file. A filesystem opened from a chained URL
(:mod:`fsseam.filesystem.chain`) names files as the storage under it does
(``/proj/a.csv`` for ``memory://proj/a.csv``, ``/bucket/key`` for ``s3://bucket/key``):
``prefix`` is its root in those names.

What it raises: the builtin OSError subclasses fsspec and its users rely on for plain I/O
answers (not found, a directory, too large), and one type, :class:`GuardRefused`, for every
refusal of the guard (the file changed since this owner read it, it was never read, a
create-only path is taken, read-only, outside the root, the folders fsseam keeps beside
the files: observations, the content index, branches).
"""

from __future__ import annotations

import contextlib
import errno
import io
import posixpath
from collections.abc import Iterator
from typing import Any, ClassVar

from fsspec import AbstractFileSystem

from ..errors import ErrorCode, FsError
from ..messages import Reason, Sentence
from ..outcomes import ListEntry
from ..seam import Seam
from ..versions import Version
from .files import CodecWriteFile, ReadFile, TextWriteFile, WriteFile

__all__ = ["GuardExists", "GuardRefused", "GuardedFileSystem", "os_error"]


# -- what the guard raises ------------------------------------------------------------------
class GuardRefused(PermissionError):
    """The guard refused a change (or a path); nothing was written.

    A :class:`PermissionError` (so an :class:`OSError`), which code around fsspec already
    catches. ``code``: the :class:`~fsseam.ErrorCode` (``FS_STALE``, ``FS_NOT_OBSERVED``,
    ``FS_ALREADY_EXISTS``, ``FS_READ_ONLY``, ``FS_OUTSIDE_ROOT``,
    ``FS_PERMISSION_DENIED``); ``path``: the file, as the filesystem names it; ``diff``: for
    ``FS_STALE``, what changed since this owner's read (a unified diff, possibly cut
    short), else None; ``error``: the :class:`~fsseam.FsError` itself. The message says
    what to do next."""

    def __init__(self, error: FsError, path: str | None = None) -> None:
        self.error = error
        self.code: ErrorCode = error.code
        self.path = path if path is not None else error.path
        self.diff: str | None = _diff_of(error)
        super().__init__(self._errno, str(error), self.path)

    _errno = errno.EACCES

    def __str__(self) -> str:
        return str(self.error)

    def __reduce__(self) -> tuple[Any, ...]:
        # Crosses processes as the facts it carries (FsError pickles its own).
        return (type(self), (self.error, self.path))


class GuardExists(GuardRefused, FileExistsError):
    """A create-only change met a file already there (``FS_ALREADY_EXISTS``): a
    :class:`GuardRefused` that is also the :class:`FileExistsError` fsspec expects from
    ``open(path, "xb")`` and ``pipe_file(..., mode="create")``."""

    _errno = errno.EEXIST


def _diff_of(error: FsError) -> str | None:
    changes = error.details.get("changes")
    if isinstance(changes, Sentence):
        diff = changes.details.get("diff")
        return diff if isinstance(diff, str) else None
    return None


# The guard's refusals: whatever the reason, these codes mean "the guard said no".
_REFUSALS = frozenset({ErrorCode.FS_STALE, ErrorCode.FS_NOT_OBSERVED, ErrorCode.FS_READ_ONLY,
                       ErrorCode.FS_OUTSIDE_ROOT})

# The folders fsseam keeps beside the files (observations, the content index, branches):
# the guard's refusal too, not a permission of the storage's.
_RESERVED = frozenset({Reason.reserved_observations, Reason.reserved_index,
                       Reason.reserved_folder})

# Plain I/O answers: the builtin type fsspec (and pandas, pyarrow) branch on, and its errno.
_PLAIN: dict[ErrorCode, tuple[type[OSError], int]] = {
    ErrorCode.FS_NOT_FOUND: (FileNotFoundError, errno.ENOENT),
    ErrorCode.FS_IS_DIRECTORY: (IsADirectoryError, errno.EISDIR),
    ErrorCode.FS_PERMISSION_DENIED: (PermissionError, errno.EACCES),
    ErrorCode.FS_TOO_LARGE: (OSError, errno.EFBIG),
    ErrorCode.FS_INVALID_ARGUMENT: (OSError, errno.EINVAL),
    ErrorCode.FS_UNSUPPORTED: (OSError, errno.ENOTSUP),
    ErrorCode.FS_NOT_TEXT: (OSError, errno.EINVAL),
}


def os_error(error: FsError, path: str | None = None) -> OSError:
    """The exception the filesystem raises for ``error`` (``path``: as the filesystem names
    the file); its ``__cause__`` is set by the caller's ``raise ... from``."""
    code = error.code
    if code is ErrorCode.FS_ALREADY_EXISTS:
        return GuardExists(error, path)
    if code in _REFUSALS or error.reason in _RESERVED:
        return GuardRefused(error, path)
    kind: type[OSError]
    if error.reason in (Reason.parent_is_file, Reason.not_directory):
        kind, number = NotADirectoryError, errno.ENOTDIR
    else:
        kind, number = _PLAIN.get(code, (OSError, errno.EIO))
    return kind(number, str(error), path if path is not None else error.path)


def _on_branch(context: Any, branch: str | None) -> Any:
    """``context``'s owner on ``branch`` of its workspace (made from main's current files
    when absent), with the observation store it is bound to; ``context`` itself when
    ``branch`` is None or the branch it is on already. A context on another branch is
    refused (FS_INVALID_ARGUMENT: a branch has no branches), as ``ws.branch`` refuses."""
    ws = context.workspace
    if branch is None or ws.branch_name == branch:
        return context
    return ws.branch(branch).context(context.owner, observations=context.fs.observations)


# -- the filesystem -------------------------------------------------------------------------
_MODES = frozenset({"rb", "wb", "xb", "ab"})


class GuardedFileSystem(AbstractFileSystem):  # type: ignore[misc]  # fsspec is untyped
    """An fsspec filesystem over one owner's ``ctx.fs`` (see docs/filesystem.md).

    Reads record the version read (a byte range as a partial read); a write of an existing
    file needs this owner's observation of its current version and is conditional on it;
    a new file is create-only; ``rm``, ``mv`` and ``cp_file`` are guarded as the tools'
    delete and move are. A refusal raises :class:`~fsseam.GuardRefused`; nothing is written.
    ``branch``: the owner works on that branch of the context's workspace (made from
    main's current files when absent): reads see its changes over main, every change lands
    only on it (``ws.merge`` publishes them).
    """

    protocol: ClassVar[str | tuple[str, ...]] = "fsseam"
    root_marker = ""

    def __init__(self, *args: Any, context: Any = None, prefix: str = "",
                 branch: str | None = None, **storage_options: Any) -> None:
        super().__init__(*args, **storage_options)
        if context is not None:
            self._bind(_on_branch(context, branch), prefix)

    def _bind(self, context: Any, prefix: str) -> None:
        self.context = context
        self.seam: Seam = context.fs
        self.prefix = "/" + prefix.strip("/") if prefix.strip("/") else ""

    # -- names -------------------------------------------------------------------------
    @classmethod
    def _strip_protocol(cls, path: Any) -> Any:
        if isinstance(path, list):
            return [cls._strip_protocol(p) for p in path]
        path = str(path)
        for marker in ("fsseam://", "fsseam::"):
            if path.startswith(marker):
                path = path[len(marker):]
        if "://" in path:  # another storage's URL: the chained filesystem takes it apart
            return path.rstrip("/")
        path = path.strip("/")
        return "/" + path if path else ""

    def _model(self, path: str) -> str:
        """The model path (``/a/b``) of a name this filesystem was given."""
        name: str = self._strip_protocol(path)
        if "://" in name:
            name = "/" + name.split("://", 1)[1].strip("/")
        if not self.prefix:
            return name or "/"
        if name == self.prefix or name == "":
            return "/"
        if name.startswith(self.prefix + "/"):
            return name[len(self.prefix):]
        raise os_error(FsError(ErrorCode.FS_OUTSIDE_ROOT, path=name or "/",
                               reason=Reason.filesystem_outside_root,
                               details={"root": self.prefix}))

    def _name(self, model: str) -> str:
        """The name of a model path, as this filesystem lists it."""
        if model in ("", "/"):
            return self.prefix or "/"
        return self.prefix + model

    @contextlib.contextmanager
    def _guarded(self, path: str) -> Iterator[None]:
        """A seam call about ``path``: an FsError leaves as the exception fsspec expects."""
        try:
            yield
        except FsError as e:
            raise os_error(e, self._shown(path, e)) from e

    def _shown(self, path: str, err: FsError) -> str:
        if err.path and err.path.startswith("/"):
            return self._name(err.path)
        return path

    # -- listings ----------------------------------------------------------------------
    def _info(self, entry: ListEntry) -> dict[str, Any]:
        kind = {"file": "file", "directory": "directory"}.get(entry.type, "other")
        return {"name": self._name(entry.path), "size": entry.size or 0, "type": kind}

    def ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        model = self._model(path)
        with self._guarded(path):
            try:
                # A filesystem's ls lists every entry: the ignore files are the finders'.
                entries = self.seam.list(model, depth=1, include_ignored=True).entries
            except FsError as e:
                if e.code is ErrorCode.FS_NOT_FOUND and model == "/":
                    return []  # a root nothing was written under yet
                if e.code is not ErrorCode.FS_NOT_FOUND and e.reason != Reason.not_directory:
                    raise
                entries = []
            listed = [self._info(e) for e in self._with_files(model, entries)]
        if not listed and model != "/":
            listed = [self.info(path)]  # a file lists as itself, as fsspec's do
            if listed[0]["type"] == "directory":  # empty: implied by no file, so none
                raise os_error(FsError(ErrorCode.FS_NOT_FOUND, path=model, reason=Reason.missing),
                               path)
        return listed if detail else [i["name"] for i in listed]

    def _with_files(self, model: str, entries: list[ListEntry]) -> list[ListEntry]:
        """``entries`` but the directories with no file below them (local disk keeps a
        directory its files left), from one walk that stops once each is seen."""
        empty = {e.path for e in entries if e.type == "directory"}
        if empty and self._keeps_directories():
            top = model.rstrip("/") + "/"
            for found in self.seam.walk(model):
                empty.discard(top + found.path[len(top):].split("/", 1)[0])
                if not empty:
                    break
            return [e for e in entries if e.path not in empty]
        return entries

    def _keeps_directories(self) -> bool:
        """Whether the storage may hold a directory no file is below: local disk and memory
        (content digests as versions; mounts of several kinds may include them), not an
        object store (its own ETags or generations), where a prefix exists only while a
        key is under it, so no walk is spent telling."""
        return self.seam.backend.capabilities.version_kind in ("sha256", "mixed")

    def info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        model = self._model(path)
        with self._guarded(path):
            st = self.seam.stat(model)
            info: dict[str, Any] = {"name": self._name(st.path), "size": st.size or 0,
                                    "type": st.type}
            if st.type == "file":
                version = self.seam.version_now(model)
                info["version"] = None if version is None else version.value
        return info

    # What a path is, from one stat (``info`` also looks up the version). A directory
    # exists while a file is below it, as on an object store: one that a recursive ``rm``
    # emptied on local disk (which keeps directories) is gone here too.
    def _kind(self, path: str) -> str | None:
        model = self._model(path)
        try:
            with self._guarded(path):
                kind = self.seam.stat(model).type
                if kind == "directory" and model != "/" and self._keeps_directories():
                    return kind if next(iter(self.seam.walk(model)), None) else None
                return kind
        except FileNotFoundError:
            return None

    def exists(self, path: str, **kwargs: Any) -> bool:
        return self._kind(path) is not None

    def isdir(self, path: str) -> bool:
        return self._kind(path) == "directory"

    def isfile(self, path: str) -> bool:
        return self._kind(path) == "file"

    def find(self, path: str, maxdepth: int | None = None, withdirs: bool = False,
             detail: bool = False, **kwargs: Any) -> Any:
        model = self._model(path)
        found: dict[str, dict[str, Any]] = {}
        try:
            with self._guarded(path):
                st = self.seam.stat(model)
        except FileNotFoundError:
            return {} if detail else []
        name = self._name(st.path)
        if st.type != "directory":
            found[name] = {"name": name, "size": st.size or 0, "type": st.type}
        else:
            with self._guarded(path):
                for entry in self.seam.walk(model):
                    self._found(found, model, entry, maxdepth, withdirs)
            if withdirs and model != "/" and found:
                found[name] = {"name": name, "size": 0, "type": "directory"}
        names = sorted(found)
        return {n: found[n] for n in names} if detail else names

    def _found(self, found: dict[str, dict[str, Any]], top: str, entry: ListEntry,
               maxdepth: int | None, withdirs: bool) -> None:
        below = entry.path[len(top.rstrip("/")) + 1:].split("/")
        if maxdepth is not None and len(below) > maxdepth:
            if withdirs and maxdepth > 0:
                self._dirs(found, top, below[:maxdepth])
            return
        found[self._name(entry.path)] = self._info(entry)
        if withdirs:
            self._dirs(found, top, below[:-1])

    def _dirs(self, found: dict[str, dict[str, Any]], top: str, parts: list[str]) -> None:
        for i in range(1, len(parts) + 1):
            name = self._name(posixpath.join(top, *parts[:i]))
            found.setdefault(name, {"name": name, "size": 0, "type": "directory"})

    # Directories are implied by the files in them, as on an object store: nothing to make.
    def mkdir(self, path: str, create_parents: bool = True, **kwargs: Any) -> None:
        self._model(path)

    def makedirs(self, path: str, exist_ok: bool = False) -> None:
        self._model(path)

    def rmdir(self, path: str) -> None:
        self._model(path)

    # -- reads -------------------------------------------------------------------------
    def cat_file(self, path: str, start: int | None = None, end: int | None = None,
                 **kwargs: Any) -> bytes:
        model = self._model(path)
        with self._guarded(path):
            if (start or 0) < 0 or (end or 0) < 0:  # counted from the end: needs the size
                size = self.seam.stat(model).size or 0
                start = max(size + start, 0) if start is not None and start < 0 else start
                end = max(size + end, 0) if end is not None and end < 0 else end
            data, _ = self.seam.read_range(model, start or 0, end)
        return data

    def _open(self, path: str, mode: str = "rb", block_size: Any = None,
              autocommit: bool = True, cache_options: Any = None, **kwargs: Any) -> Any:
        if mode not in _MODES:
            raise ValueError(str(FsError(ErrorCode.FS_INVALID_ARGUMENT,
                                         reason=Reason.filesystem_mode,
                                         details={"mode": repr(mode)})))
        model, name = self._model(path), self._name(self._model(path))
        if mode == "rb":
            with self._guarded(name):
                data, version = self.seam.read_range(model)
            return ReadFile(self, name, data, version)
        if mode == "xb":
            if self.exists(name):
                with self._guarded(name):
                    raise FsError(ErrorCode.FS_ALREADY_EXISTS, path=model, reason=Reason.add_exists)
            return WriteFile(self, name, "xb", lambda data: self._create(name, data))
        if mode == "ab":
            # A guarded rewrite: the current bytes, read now (an observation of their
            # version), then the whole file written conditional on that version (the
            # handle's, not whatever this owner observed by the time it closes).
            start, base = self._start(name)
            return WriteFile(self, name, "ab", lambda data: self._rewrite(name, data, base),
                             start)
        return WriteFile(self, name, "wb", lambda data: self._write(name, data))

    def _start(self, path: str) -> tuple[bytes, Version | None]:
        """The bytes an append starts from and their version (None: no file)."""
        try:
            with self._guarded(path):
                return self.seam.read_range(self._model(path))
        except FileNotFoundError:
            return b"", None

    def open(self, path: str, mode: str = "rb", block_size: Any = None,
             cache_options: Any = None, compression: str | None = None,
             **kwargs: Any) -> Any:
        if "b" not in mode:
            # Text: a wrapper whose exit after an exception (and whose finalizer) writes
            # nothing; a plain TextIOWrapper closes, which would commit.
            text = {k: kwargs.pop(k) for k in ("encoding", "errors", "newline") if k in kwargs}
            binary = self.open(path, mode.replace("t", "") + "b", block_size, cache_options,
                               compression, **kwargs)
            kind = io.TextIOWrapper if "r" in mode else TextWriteFile
            return kind(binary, **text)
        if compression is None:
            return super().open(path, mode, block_size, cache_options, None, **kwargs)
        from fsspec.compression import compr
        from fsspec.core import get_compression

        raw = super().open(path, mode, block_size, cache_options, None, **kwargs)
        wrapped = compr[get_compression(path, compression)](raw, mode=mode[0])
        if isinstance(raw, WriteFile):
            return CodecWriteFile(wrapped, raw)
        # A codec's close leaves the file it wraps open (fsspec's OpenFile closes both);
        # here closing the codec closes the file too, as its ``with`` expects.
        closing = wrapped.close

        def close() -> None:
            try:
                closing()
            finally:
                raw.close()

        wrapped.close = close
        return wrapped

    # -- changes -----------------------------------------------------------------------
    def _write(self, path: str, data: bytes) -> Any:
        with self._guarded(path):
            return self.seam.write_bytes(self._model(path), data)

    def _rewrite(self, path: str, data: bytes, base: Version | None) -> Any:
        with self._guarded(path):
            return self.seam.rewrite_bytes(self._model(path), data, base)

    def _create(self, path: str, data: bytes) -> Any:
        with self._guarded(path):
            return self.seam.create_bytes(self._model(path), data)

    def pipe_file(self, path: str, value: bytes, mode: str = "overwrite",
                  **kwargs: Any) -> None:
        if mode == "create":
            self._create(path, value)
        else:
            self._write(path, value)

    def rm_file(self, path: str) -> None:
        with self._guarded(path):
            self.seam.delete(self._model(path))

    def rm(self, path: Any, recursive: bool = False, maxdepth: int | None = None) -> None:
        paths = self.expand_path(path, recursive=recursive, maxdepth=maxdepth)
        # Directories are implied by their files: a path with another below it is one.
        # Told apart before anything goes, since a directory vanishes with its last file.
        parents = {posixpath.dirname(p.rstrip("/")) for p in paths}
        for p in reversed(paths):
            if p.rstrip("/") in parents:
                continue
            try:
                self.rm_file(p)
            except GuardRefused:
                if not self.isdir(p):  # a directory with nothing left below it is fine
                    raise

    def cp_file(self, path1: str, path2: str, **kwargs: Any) -> None:
        try:
            data = self.cat_file(path1)
        except (IsADirectoryError, FileNotFoundError):
            if self.isdir(path1):
                return  # a directory is implied by the files copied into it
            raise
        self._write(path2, data)

    def mv(self, path1: Any, path2: Any, recursive: bool = False, maxdepth: int | None = None,
           **kwargs: Any) -> None:
        if isinstance(path1, str) and isinstance(path2, str) and not recursive \
                and self.isfile(path1) and not self.isdir(path2) and not self.exists(path2):
            with self._guarded(path1):
                self.seam.move(self._model(path1), self._model(path2))
            return
        super().mv(path1, path2, recursive=recursive, maxdepth=maxdepth, **kwargs)

    def created(self, path: str) -> Any:
        raise NotImplementedError

    def modified(self, path: str) -> Any:
        raise NotImplementedError
