"""LocalBackend: the Backend contract over a directory of the local disk.

The work is done by the modules beside this one (``tree``: descriptor walks and
listings; ``search``: the reads of a search; ``writes``: the compare-and-swap) and by
:mod:`fsseam.backends.digests` (versions); this class holds one of each for its root and
answers the contract.

``durability`` (the storage option of the same name) says what a returned write survives:
``"fsync"`` (the default) a power loss, ``"rename"`` (no fsync, as most editors publish)
a crash of the process only; see docs/backends.md, "Local durability".
"""

from __future__ import annotations

import builtins
import contextlib
import os
import stat as stat_mod
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Literal, get_args

from fsspec.implementations.local import LocalFileSystem

from ...errors import ErrorCode, FsError
from ...messages import Reason
from ...oserrors import map_os_error
from ...paths import display
from ...versions import Capabilities, Precondition, Version
from ..base import ANY_VERSION, Backend, Blob, Entry, Stat, VersionInfo, WriteMeta
from ..digests import Digests, KnownDigests, LocalStream, digest_version
from . import search
from .parts import LocalTreePart, split_tree
from .tree import Tree, kept_changing, outside_root
from .writes import Writes, is_temp

__all__ = ["DURABILITY_OPTION", "Durability", "LocalBackend"]

Durability = Literal["fsync", "rename"]
"""What a returned local write survives: ``"fsync"`` a power loss, ``"rename"`` only a
crash of the writing process (see the module docstring)."""

DURABILITY_OPTION = "durability"
"""The storage option that chooses it: ``Workspace(dir, storage_options={"durability":
"rename"})``."""


class LocalBackend(Backend):
    capabilities = Capabilities(
        create_only_atomic=True,
        if_match_atomic=True,
        version_kind="sha256",
        ranged_reads=True,
        delete_if_match_atomic=True,
        copy_create_only_atomic=True,
        history=False,
        note="fsync'd temp file, then flock on the parent directory + digest re-check + "
        "rename/link, then fsync of the directory",
    )

    def __init__(self, root: str, durability: Durability = "fsync") -> None:
        if durability not in get_args(Durability):
            raise FsError(
                ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.local_durability,
                details={"value": durability},
            )
        real = os.path.realpath(root)
        if not os.path.isdir(real):
            raise FsError(
                ErrorCode.FS_NOT_FOUND, reason=Reason.root_not_directory, details={"root": root}
            )
        self.root = real
        self.durability: Durability = durability
        if durability == "rename":
            self.capabilities = LocalBackend.capabilities.model_copy(update=dict(
                note="temp file (no fsync), then flock on the parent directory + digest "
                "re-check + rename/link (no fsync of the directory)",
            ))
        self._tree = Tree(real, os.path.abspath(root))
        self._known = KnownDigests()
        self._digests = Digests(self._known)
        self._writes = Writes(
            self._tree, self._digests, self._known, sync=durability == "fsync"
        )

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> LocalBackend:
        path = LocalFileSystem._strip_protocol(url)
        return cls(os.path.abspath(path), storage_options.get(DURABILITY_OPTION, "fsync"))

    # -- paths -------------------------------------------------------------
    def path(self, key: str) -> str:
        return self._tree.path(key)

    def native_key(self, path: str) -> str | None:
        """The part below the root of a real absolute path under it (None otherwise), so a
        model may use the paths it sees elsewhere on this machine."""
        return self._tree.native_key(path)

    def resolve(self, key: str) -> str:
        return self._tree.resolve(key)

    # -- reads -------------------------------------------------------------
    def read(self, key: str) -> Blob:
        for _ in range(5):
            fd, st = self._tree.open_file(key)
            try:
                blob = self._digests.read_fd(fd, st, key)
            except OSError as e:
                raise map_os_error(e, key, "read") from e
            finally:
                os.close(fd)
            if blob is not None:
                return blob
        raise kept_changing(key, "read")

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        """Whole files, in the order given. Consecutive files of one directory share one
        descriptor of it: a search reads thousands of small files, and walking each path
        from the root again costs more than reading the file."""
        for entry, got in self.read_many_unhashed(entries):
            if isinstance(got, bytes):
                yield entry, Blob(data=got, version=digest_version(got))
            else:
                yield entry, got

    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, bytes | FsError]]:
        """``read_many`` without the versions (see ``search.read_many_unhashed``)."""
        return search.read_many_unhashed(self._tree, entries)

    def read_tree_unhashed(
        self, key: str, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]]:
        """The walk and ``read_many_unhashed`` of its files in one pass, for a search (see
        ``search.read_tree_unhashed``)."""
        return search.read_tree_unhashed(self._tree, key, accept, max_bytes, wanted)

    def split_tree(self, key: str, want: int) -> builtins.list[LocalTreePart]:
        """The walk of the directory ``key`` as parts that other processes can search (see
        ``parts.split_tree``)."""
        return split_tree(self._tree, key, want)

    def prune_directories(self, key: str) -> None:
        """The directories left empty at and below ``key``, removed innermost first: the
        deletes of a directory's files leave the directories on disk (an object store has
        none to leave). ``rmdir`` refuses one that holds anything (another writer's file,
        written meanwhile), which stays with those above it; the root always stays."""
        if not key:
            return
        top = os.path.join(self.root, *key.split("/"))
        for directory, _, _ in os.walk(top, topdown=False):
            with contextlib.suppress(OSError):
                os.rmdir(directory)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> LocalStream:
        fd, st = self._tree.open_file(key)
        return self._digests.stream(fd, st, key, chunk_size)

    def stat(self, key: str) -> Stat:
        if not key:
            return Stat(key=key, kind="directory")
        dfd, name = self._tree.parent(key, "stat")
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except OSError as e:
            raise map_os_error(e, key, "stat") from e
        finally:
            os.close(dfd)
        if stat_mod.S_ISLNK(st.st_mode):
            raise outside_root(key)
        if stat_mod.S_ISDIR(st.st_mode):
            return Stat(key=key, kind="directory")
        return Stat(key=key, kind="file", size=st.st_size)

    def list(self, key: str) -> builtins.list[Entry]:
        return sorted(self.list_lazy(key), key=lambda e: e.name)

    def list_lazy(self, key: str) -> Iterator[Entry]:
        """The children of ``key`` in the directory's own order, one entry per
        ``readdir`` result as it comes (the directory stays open until the last), temp
        files of writes left out."""
        return (e for e in self._tree.list_lazy(key) if not is_temp(e.name))

    def walk(self, key: str) -> Iterator[Entry]:
        """Every file below ``key`` in ascending key order, by descriptors that never follow
        a link nor leave the root; directories deeper than paths may go are not entered, and
        one that cannot be opened (no permission, removed meanwhile) is skipped."""
        for _, child, d in self._tree.dirents(key):
            if not is_temp(d.name):
                yield self._tree.entry(child, d)

    def walk_names(
        self, key: str, keep_dir: Callable[[str], bool] | None = None,
        listed: Callable[[str, builtins.list[str]], None] | None = None,
    ) -> Iterator[tuple[str, builtins.list[str]]]:
        """``walk``'s files by name, in runs: each directory's types from its listing (no
        ``lstat``, no entry per file), the temp files of writes left out (see
        ``Tree.names``)."""
        return self._tree.names(key, keep_dir, listed, is_temp)

    # -- writes ------------------------------------------------------------
    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        return self._writes.write(key, data, precondition)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        self._writes.delete(key, precondition)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        """Stream ``src`` into a temp file beside ``dst`` while hashing it, check the
        source's version against what was copied, then publish create-only (a hard link)."""
        return self._writes.copy(src, dst, source)

    # -- history -----------------------------------------------------------
    @staticmethod
    def _no_history(key: str) -> FsError:
        return FsError(ErrorCode.FS_UNSUPPORTED, path=display(key), reason=Reason.no_history)

    def read_version(self, key: str, version: Version) -> Blob:
        raise self._no_history(key)

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        raise self._no_history(key)
