"""MountBackend: the Backend protocol over child backends, each at a mount point.

    ws = Workspace.mount({"/": "memory://scratch", "/data": "s3://bucket/prefix",
                          "/repo": "/abs/dir"}, read_only={"/repo"})

:class:`MountBackend` implements the Backend protocol over child backends, one per mount
point. A key belongs to the mount with the longest path that is the key or one of its
parents (``data/x.csv`` -> the ``/data`` mount, inner key ``x.csv``); the child does the
work and its errors come back in the workspace's paths. What the router adds:

- listing a directory shows the mount points in it (a mount hides whatever its parent store
  holds under the same name), and directories on the way to a deeper mount point;
- ``walk`` merges the children's walks in key order (each child's walk is sorted, and a
  deeper mount's subtree is left out of its parent's);
- ``copy`` across mounts is a read of the source on its store (its version checked against
  the one given) and a create-only write on the target's store; the seam's move is that
  copy, then a delete on the source's store guarded by the version the agent read;
- read-only mounts refuse writes, deletes and moves with FS_READ_ONLY before anything is
  read (``check_writable``, which the seam asks first);
- capabilities: ``capabilities`` is what every mount guarantees (the weakest of each flag),
  ``capabilities_for(key)`` what the mount holding ``key`` does;
- a path under no mount (when ``/`` is not mounted) is FS_OUTSIDE_ROOT.

Versions stay each store's own (an ETag on S3, a digest on local disk): the observation
policy keeps them per path, so a version is only ever compared on the store that minted it.
"""

from __future__ import annotations

import builtins
import heapq
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from ...errors import Conflict, ErrorCode, FsError
from ...messages import Reason
from ...paths import display, to_key
from ...versions import Capabilities, CreateOnly, IfMatch, Precondition, Version
from ..base import ANY_VERSION, Backend, Blob, Entry, ReadStream, Stat, VersionInfo, WriteMeta
from .mount import Mount, weakest
from .relocate import Relocated, RelocatedStream
from .runs import read_runs, read_tree_unhashed, strictly_below

__all__ = ["Mount", "MountBackend"]


class MountBackend(Backend):
    """Child backends under one root, each at its mount point (see the module docstring).

    Build it with :meth:`fsseam.Workspace.mount`, or directly from :class:`Mount` values.
    """

    capabilities: Capabilities
    root: str

    def __init__(self, mounts: Iterable[Mount]) -> None:
        table: dict[str, Mount] = {}
        for m in mounts:
            if m.path in table:
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    reason=Reason.mount_duplicate,
                    details={"mount": m.point},
                )
            table[m.path] = m
        if not table:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.mounts_empty)
        self.mounts: tuple[Mount, ...] = tuple(sorted(table.values(), key=lambda m: m.path))
        # Deepest first: the first mount that holds a key is the one it belongs to.
        self._routing = sorted(self.mounts, key=lambda m: (-len(m.path), m.path))
        self.capabilities = weakest(self.mounts)
        self.root = "/"

    def __repr__(self) -> str:
        inside = ", ".join(
            f"{m.point}: {m.url or m.backend.root}{' (read-only)' if m.read_only else ''}"
            for m in self.mounts
        )
        return f"MountBackend({{{inside}}})"

    @classmethod
    def from_url(
        cls, url: str, storage_options: dict[str, Any], fs: Any | None = None
    ) -> MountBackend:
        # A mount table is not a URL: Workspace.mount builds it.
        raise FsError(ErrorCode.FS_UNSUPPORTED, reason=Reason.mounts_need_a_table)

    # -- routing -----------------------------------------------------------------
    def mount_of_key(self, e: Entry) -> Mount | None:
        routed = self.route(e.key)
        return routed[0] if routed else None

    def route(self, key: str) -> tuple[Mount, str] | None:
        for m in self._routing:
            if not m.path:
                return m, key
            if key == m.path:
                return m, ""
            if key.startswith(m.path + "/"):
                return m, key[len(m.path) + 1 :]
        return None

    def _points_below(self, key: str) -> dict[str, str]:
        """name -> key of the mount points (and directories on the way to deeper ones)
        directly inside the directory ``key``."""
        prefix = f"{key}/" if key else ""
        out: dict[str, str] = {}
        for m in self.mounts:
            if m.path and m.path.startswith(prefix) and m.path != key:
                name = m.path[len(prefix) :].split("/", 1)[0]
                out[name] = prefix + name
        return out

    def _is_point(self, key: str) -> bool:
        """A mount point, or a directory on the way to one: always a directory."""
        return bool(key) and (
            any(m.path == key for m in self.mounts) or bool(self._points_below(key))
        )

    def outside(self, key: str) -> FsError:
        return FsError(
            ErrorCode.FS_OUTSIDE_ROOT,
            path=display(key),
            reason=Reason.outside_mounts,
            details={"mounts": ", ".join(m.point for m in self.mounts)},
        )

    def _file(self, key: str) -> tuple[Mount, str]:
        """The mount and inner key of a path that must be a file."""
        if self._is_point(key) or not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path=display(key), reason=Reason.is_directory)
        routed = self.route(key)
        if routed is None:
            raise self.outside(key)
        return routed

    def _writable(self, key: str) -> tuple[Mount, str]:
        m, inner = self._file(key)
        if m.read_only:
            raise self._read_only(key, m)
        return m, inner

    def _read_only(self, key: str, m: Mount) -> FsError:
        return FsError(
            ErrorCode.FS_READ_ONLY,
            path=display(key),
            reason=Reason.read_only_mount,
            details={"mount": m.point},
        )

    def mount_of(self, key: str) -> Mount | None:
        """The mount holding ``key`` (None: under no mount)."""
        routed = self.route(to_key(key) if key.strip("/") else "")
        return routed[0] if routed else None

    def capabilities_for(self, key: str) -> Capabilities:
        """What the store holding ``key`` guarantees (a key or a ``/path``)."""
        m = self.mount_of(key)
        if m is None:
            raise self.outside(to_key(key))
        return m.backend.capabilities

    def check_writable(self, key: str) -> None:
        """Raise FS_READ_ONLY (a read-only mount) or FS_OUTSIDE_ROOT (under no mount) for a
        change at ``key``; the seam asks before it reads anything for the change."""
        routed = self.route(key)
        if routed is None:
            if not self._is_point(key) and key:
                raise self.outside(key)
            return
        if routed[0].read_only and not self._is_point(key):
            raise self._read_only(key, routed[0])

    # -- paths -------------------------------------------------------------------
    def native_key(self, path: str) -> str | None:
        """A real absolute path under a local mount's directory -> its workspace key."""
        for m in self._routing:
            below = m.backend.native_key(path)
            if below is not None:
                return m.outer(below)
        return None

    def resolve(self, key: str) -> str:
        routed = self.route(key)
        if routed is None:
            if not key or self._is_point(key):
                return key
            raise self.outside(key)
        m, inner = routed
        if not inner:
            return key
        with Relocated((inner, key)):
            resolved = m.outer(m.backend.resolve(inner))
        landed = self.route(resolved)
        if landed is None or landed[0] is not m or self._is_point(resolved):
            # A link in one store that points where another store is mounted: the file it
            # names is hidden by that mount, and following it would reach the other store.
            raise FsError(
                ErrorCode.FS_OUTSIDE_ROOT, path=display(key), reason=Reason.path_symlink_escapes
            )
        return resolved

    # -- reads -------------------------------------------------------------------
    def read(self, key: str) -> Blob:
        m, inner = self._file(key)
        with Relocated((inner, key)):
            return m.backend.read(inner)

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        """Whole files in the order given; runs of one mount go to that store's own
        ``read_many`` (object stores read several at once)."""
        return read_runs(self, entries, lambda m, run: m.backend.read_many(run))

    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, Blob | bytes | FsError]]:
        """``read_many``, each run on its mount's own unhashed reads (bare bytes only from
        a store whose versions are their digests, as each store's contract says)."""
        return read_runs(self, entries, lambda m, run: m.backend.read_many_unhashed(run))

    def read_tree_unhashed(
        self, key: str, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]] | None:
        """Each mount's one-pass read of its part of the tree, merged in key order (see
        :func:`.runs.read_tree_unhashed`)."""
        return read_tree_unhashed(self, key, accept, max_bytes, wanted)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        m, inner = self._file(key)
        errors = Relocated((inner, key))
        with errors:
            return RelocatedStream(m.backend.open_read(inner, chunk_size), errors)

    def stat(self, key: str) -> Stat:
        if not key or self._is_point(key):
            return Stat(key=key, kind="directory")
        m, inner = self._file(key)
        with Relocated((inner, key)):
            st = m.backend.stat(inner)
        return st.model_copy(update={"key": key})

    def list(self, key: str) -> builtins.list[Entry]:
        return sorted(self.list_lazy(key), key=lambda e: (e.name, e.kind))

    def list_lazy(self, key: str) -> Iterator[Entry]:
        """The children of ``key`` in any order: the mount points below it, then what the
        mount holding it yields, one at a time (its own ``list_lazy`` where it has one), so
        a huge directory is never gathered whole before the seam caps its listing."""
        points = self._points_below(key)
        routed = self.route(key)
        if routed is None and not points and key:
            raise self.outside(key)
        for name, k in points.items():
            yield Entry(key=k, name=name, kind="directory")
        if routed is None:
            return
        m, inner = routed
        try:
            with Relocated((inner, key)):
                for child in m.backend.list_lazy(inner):
                    if child.name not in points:  # a mount point hides what lies under it
                        yield _outer_entry(m, child)
        except FsError as e:
            # A directory that exists only on the way to a mount point.
            if not (points and e.code is ErrorCode.FS_NOT_FOUND
                    and e.reason != Reason.bucket_missing):
                raise

    def walk(self, key: str) -> Iterator[Entry]:
        routed = self.route(key)
        below = [m for m in self.mounts if m.path and strictly_below(m.path, key)]
        if routed is None and not below and key:
            raise self.outside(key)
        streams = [self._walk_mount(m, "", m.path, below, tolerate_missing=False)
                   for m in below]
        if routed is not None:
            # A directory on the way to a mount point need not exist in the parent's store.
            streams.append(self._walk_mount(*routed, key, below, tolerate_missing=bool(below)))
        return heapq.merge(*streams, key=lambda e: e.key)

    def _walk_mount(
        self, m: Mount, inner: str, key: str, below: builtins.list[Mount], *,
        tolerate_missing: bool,
    ) -> Iterator[Entry]:
        # Deeper mounts inside this one own their subtrees: the parent's files there are
        # hidden, as a listing hides them.
        hidden = [d.path for d in below if strictly_below(d.path, m.path)]
        try:
            with Relocated((inner, key)):
                for e in m.backend.walk(inner):
                    outer = _outer_entry(m, e)
                    if any(outer.key == h or outer.key.startswith(h + "/") for h in hidden):
                        continue
                    yield outer
        except FsError as e:
            if not (tolerate_missing and e.code is ErrorCode.FS_NOT_FOUND
                    and e.reason != Reason.bucket_missing):
                raise

    # -- writes ------------------------------------------------------------------
    def write(
        self, key: str, data: bytes, precondition: Precondition, *,
        meta: WriteMeta | None = None,
    ) -> Version:
        m, inner = self._writable(key)
        with Relocated((inner, key)):
            return m.backend.write(inner, data, precondition, meta=meta)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        m, inner = self._writable(key)
        with Relocated((inner, key)):
            m.backend.delete(inner, precondition, meta=meta)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        sm, s_inner = self._file(src)
        dm, d_inner = self._writable(dst)
        if sm is dm:
            with Relocated((s_inner, src), (d_inner, dst)):
                return sm.backend.copy(s_inner, d_inner, source)
        if isinstance(source, CreateOnly):
            from ..objectstore import messages

            raise messages.create_only_source(src)
        # Between stores: the source's bytes and version from one read on its store, then a
        # create-only write on the target's, which its store decides.
        try:
            with Relocated((s_inner, src)):
                blob = sm.backend.read(s_inner)
        except FsError as e:
            if isinstance(source, IfMatch) and e.code is ErrorCode.FS_NOT_FOUND and (
                e.reason != Reason.bucket_missing
            ):
                raise Conflict("missing", path=display(src)) from e
            raise
        if isinstance(source, IfMatch) and blob.version != source.version:
            raise Conflict("mismatch", path=display(src))
        with Relocated((d_inner, dst)):
            return dm.backend.write(d_inner, blob.data, CreateOnly())

    # -- history -----------------------------------------------------------------
    def read_version(self, key: str, version: Version) -> Blob:
        m, inner = self._file(key)
        with Relocated((inner, key)):
            return m.backend.read_version(inner, version)

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        m, inner = self._file(key)
        with Relocated((inner, key)):
            return m.backend.versions(inner, limit)

    def prune_directories(self, key: str) -> None:
        """The mount holding ``key`` prunes its own directories: never the mount point,
        nothing on a mount that is read-only."""
        routed = self.route(key)
        if routed is not None and routed[1] and not routed[0].read_only:
            routed[0].backend.prune_directories(routed[1])

    def read_version_id(self, key: str, version_id: str) -> Blob:
        """The mount's own read of a version by its full id, where its store has one."""
        m, inner = self._file(key)
        with Relocated((inner, key)):
            return m.backend.read_version_id(inner, version_id)


def _outer_entry(m: Mount, e: Entry) -> Entry:
    target = m.outer(e.target) if e.target is not None else None
    return e.model_copy(update={"key": m.outer(e.key), "target": target})
