"""A branch as a backend: main's current files, with the branch's changes over them.

:class:`BranchBackend` wraps the workspace's own backend (``inner``, main). A read of a
file the branch changed returns the branch's bytes, at the version their sha256 names; any
other read is main's, as it is now. Every change lands only in the reserved folder
(:mod:`fsseam.branches.layout`): the bytes as a blob, a new manifest naming the parent
head, then the ref moved by the store's compare-and-swap. A precondition is checked
against the head the ref names when it is moved, so two agents on one branch never lose an
update: one of two changes from one head finds the ref moved, and is checked again on the
new head.

Requests (docs/branches.md has the table): a read of a file the branch did not change is
main's read plus one small GET of the ref (the manifest is immutable and cached by id); a
change is a manifest, a blob and the ref (3 writes) on the head this process last saw,
plus the base's bytes kept once for a file's first change (a fourth) and one main read
when the base was not just read through the branch.
"""

from __future__ import annotations

import builtins
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from datetime import UTC, datetime

from ..backends.base import (
    ANY_VERSION,
    Backend,
    Blob,
    BlobStream,
    ReadStream,
    Stat,
    TreePart,
    VersionInfo,
    Wrapper,
    WriteMeta,
)
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..messages import Reason
from ..paths import display, reserved
from ..versions import Capabilities, CreateOnly, Entry, IfMatch, Precondition, Version
from .layout import (
    BLOB_KIND,
    BranchFile,
    BranchStore,
    Manifest,
    Ref,
    blob_version,
    check_name,
    holds_markers,
)

__all__ = ["BranchBackend", "open_branch"]

ATTEMPTS = 20
"""A change checked again on a moved head this many times before it is reported as
contended (FS_BACKEND, retry)."""
LOG_READ = 1000
"""Heads of a branch's log a file's history reads at most."""
SERVED_BYTES = 32 << 20
"""Main's bytes this backend served lately, by (key, version): a file's first change on
the branch keeps its base from them, without reading main again."""


class _ServingStream:
    """Main's read stream, whose bytes (when whole, and small enough) the branch keeps as
    served, so a first change of the file takes its base from them."""

    def __init__(self, inner: ReadStream, done: Callable[[bytes, Version], object]) -> None:
        self.size = inner.size
        self._inner = inner
        self._done = done

    @property
    def version(self) -> Version | None:
        return self._inner.version

    def chunks(self) -> Iterator[bytes]:
        kept: list[bytes] | None = []
        total = 0
        for chunk in self._inner.chunks():
            if kept is not None:
                total += len(chunk)
                if total <= SERVED_BYTES // 8:
                    kept.append(chunk)
                else:
                    kept = None
            yield chunk
        version = self._inner.version
        if kept is not None and version is not None:
            self._done(b"".join(kept), version)

    def close(self) -> None:
        self._inner.close()


class Head:
    """One head as read: the ref, its version (for the compare-and-swap) and its
    manifest."""

    def __init__(self, ref: Ref, version: Version, manifest: Manifest) -> None:
        self.ref = ref
        self.version = version
        self.manifest = manifest

    @property
    def files(self) -> dict[str, BranchFile]:
        return self.manifest.files


class BranchBackend(Wrapper):
    """Branch ``name`` over ``inner`` (main): see the module docstring."""

    def __init__(self, inner: Backend, name: str) -> None:
        super().__init__(inner)
        self.name = check_name(name)
        self.store = BranchStore(inner)
        caps = inner.capabilities
        self.capabilities = Capabilities(
            create_only_atomic=caps.if_match_atomic,
            if_match_atomic=caps.if_match_atomic,
            version_kind=BLOB_KIND if caps.version_kind == BLOB_KIND else "mixed",
            delete_if_match_atomic=caps.if_match_atomic,
            copy_create_only_atomic=caps.if_match_atomic,
            history=True,
            write_meta=True,
            note=f"branch {name!r}: changes kept in {inner.root}/.fsseam-branches/, each "
                 "moved in by one conditional write of the branch's ref",
        )
        self._head: Head | None = None
        self._lock = threading.RLock()
        self._served: OrderedDict[tuple[str, Version], bytes] = OrderedDict()
        self._served_bytes = 0

    def __repr__(self) -> str:
        return f"BranchBackend({self.name!r}, {self.inner!r})"

    # -- the head --------------------------------------------------------------------------
    def head(self, fresh: bool = True) -> Head:
        """The branch's head: read now, or (``fresh=False``) the one last seen, if any."""
        if not fresh and self._head is not None:
            return self._head
        got = self.store.ref(self.name)
        if got is None:
            raise FsError(ErrorCode.FS_NOT_FOUND, reason=Reason.branch_missing,
                          details={"name": self.name})
        ref, version = got
        head = Head(ref, version, self.store.manifest(ref.head))
        self._head = head
        return head

    def move(self, operation: str, key: str | None, owner: str | None,
             change: Callable[[Head], dict[str, BranchFile]],
             blobs: Callable[[], Iterable[bytes]] = tuple) -> Manifest:
        """Move the branch by one change: ``change`` gives the new files from a head (and
        raises what the change meets there); the manifest is written, then the blobs
        ``blobs`` gives, then the ref is moved by compare-and-swap. A ref that moved
        meanwhile is read again and ``change`` asked again on the new head."""
        with self._lock:
            fresh = False
            put: set[str] = set()
            for _ in range(ATTEMPTS):
                head = self.head(fresh)
                try:
                    files = change(head)
                except Conflict:
                    if fresh:
                        raise
                    fresh = True  # decided on the head last seen: ask the current one
                    continue
                manifest = Manifest(branch=self.name, parent=head.ref.head,
                                    files=dict(sorted(files.items())), owner=owner,
                                    time=time.time(), operation=operation, path=key)
                # The manifest before its blobs: a blob a writer needs is named by a
                # manifest younger than collect's grace before it is written (see collect).
                ident = self.store.put_manifest(manifest)
                for data in blobs():
                    sha = hashlib.sha256(data).hexdigest()
                    if sha not in put:
                        self.store.put_blob(data)
                        put.add(sha)
                ref = head.ref.model_copy(update={"head": ident})
                try:
                    version = self.store.put_ref(ref, head.version)
                except Conflict:
                    fresh = True
                    continue
                self._head = Head(ref, version, manifest)
                return manifest
            raise FsError(ErrorCode.FS_BACKEND, reason=Reason.branch_contended,
                          details={"name": self.name, "attempts": ATTEMPTS})

    # -- main's bytes, kept as a change's base ---------------------------------------------
    def _serve(self, key: str, blob: Blob) -> Blob:
        """Remember main's bytes just read (bounded), for a first change's base."""
        size = len(blob.data)
        if size > SERVED_BYTES // 8:
            return blob
        with self._lock:
            old = self._served.pop((key, blob.version), None)
            if old is not None:
                self._served_bytes -= len(old)
            self._served[(key, blob.version)] = blob.data
            self._served_bytes += size
            while self._served_bytes > SERVED_BYTES:
                _, dropped = self._served.popitem(last=False)
                self._served_bytes -= len(dropped)
        return blob

    def _main(self, key: str) -> Blob | None:
        """Main's file now (None: absent)."""
        try:
            return self._serve(key, self.inner.read(key))
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise

    def _base(self, key: str, pre: Precondition) -> tuple[Version | None, bytes | None]:
        """What a first change of ``key`` on the branch rests on: main's version (None:
        absent) and its bytes, checked against ``pre`` (Conflict as main would raise). The
        version the agent read through the branch is taken with the bytes it read, with no
        request: a change main made since is the merge's to meet, three ways."""
        if isinstance(pre, IfMatch):
            with self._lock:
                served = self._served.get((key, pre.version))
            if served is not None:
                return pre.version, served
        found = self._main(key)
        if isinstance(pre, CreateOnly):
            if found is not None:
                raise Conflict("exists", path=display(key))
            return None, None
        if isinstance(pre, IfMatch):
            if found is None:
                raise Conflict("missing", path=display(key))
            if found.version != pre.version:
                raise Conflict("mismatch", path=display(key))
        if found is None:
            return None, None
        return found.version, found.data

    @staticmethod
    def _check(entry: BranchFile, pre: Precondition, key: str) -> None:
        """``pre`` against a path the branch changed (Conflict as a store would raise)."""
        if isinstance(pre, CreateOnly):
            if entry.blob is not None:
                raise Conflict("exists", path=display(key))
        elif isinstance(pre, IfMatch):
            if entry.blob is None:
                raise Conflict("missing", path=display(key))
            if entry.version != pre.version:
                raise Conflict("mismatch", path=display(key))

    def _changed(self, head: Head, key: str, pre: Precondition, *, blob: str | None,
                 size: int | None, owner: str | None, source: str | None,
                 bases: list[bytes], markers: bool = False) -> dict[str, BranchFile]:
        """The head's files with ``key`` now at ``blob`` (None: deleted); the base's bytes
        of a first change go to ``bases`` (kept as a blob for the merge and the review)."""
        files = dict(head.files)
        entry = files.get(key)
        if entry is not None:
            self._check(entry, pre, key)
            base, base_blob = entry.base, entry.base_blob
        else:
            base, data = self._base(key, pre)
            base_blob = None
            if data is not None:
                base_blob = hashlib.sha256(data).hexdigest()
                bases.append(data)
        if blob is None and base is None:
            files.pop(key, None)  # made on the branch and gone again: no change of main's
        else:
            # A rebase's markers stay flagged while the new bytes still hold them.
            flagged = entry is not None and entry.markers and markers
            files[key] = BranchFile(blob=blob, size=size, base=base, base_blob=base_blob,
                                    owner=owner, source=source, markers=flagged)
        return files

    # -- reads -----------------------------------------------------------------------------
    def read(self, key: str) -> Blob:
        entry = self.head().files.get(key)
        if entry is None:
            return self._serve(key, self.inner.read(key))
        return self._own(key, entry)

    def _own(self, key: str, entry: BranchFile) -> Blob:
        if entry.blob is None:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason=Reason.not_found)
        return Blob(data=self.store.blob(entry.blob), version=blob_version(entry.blob))

    def read_many(self, entries: Iterable[Entry]) -> Iterator[tuple[Entry, Blob | FsError]]:
        files = self.head().files
        entries = builtins.list(entries)
        plain = iter(self.inner.read_many([e for e in entries if e.key not in files]))
        for entry in entries:
            if entry.key not in files:
                got, blob = next(plain)
                if isinstance(blob, Blob):
                    self._serve(got.key, blob)
                yield got, blob
                continue
            try:
                yield entry, self._own(entry.key, files[entry.key])
            except FsError as e:
                yield entry, e

    def read_many_unhashed(
        self, entries: Iterable[Entry]
    ) -> Iterator[tuple[Entry, Blob | bytes | FsError]]:
        return self.read_many(entries)

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        entry = self.head().files.get(key)
        if entry is None:
            return _ServingStream(self.inner.open_read(key, chunk_size),
                                  lambda data, version: self._serve(
                                      key, Blob(data=data, version=version)))
        blob = self._own(key, entry)
        return BlobStream(blob, chunk_size)

    def _children(self, files: dict[str, BranchFile], key: str) -> dict[str, Entry]:
        """The entries the branch adds directly below the directory ``key``."""
        prefix = f"{key}/" if key else ""
        found: dict[str, Entry] = {}
        for path, entry in files.items():
            if not path.startswith(prefix) or entry.blob is None:
                continue
            name, _, deeper = path[len(prefix):].partition("/")
            if deeper:
                found[name] = Entry(key=prefix + name, name=name, kind="directory")
            else:
                found[name] = Entry(key=path, name=name, kind="file", size=entry.size)
        return found

    def stat(self, key: str) -> Stat:
        files = self.head().files
        entry = files.get(key)
        if entry is not None and entry.blob is not None:
            return Stat(key=key, kind="file", size=entry.size)
        if entry is None:
            try:
                return self.inner.stat(key)
            except FsError as e:
                if e.code is not ErrorCode.FS_NOT_FOUND or not self._children(files, key):
                    raise
        if self._children(files, key):
            return Stat(key=key, kind="directory")
        raise FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason=Reason.not_found)

    def list(self, key: str) -> builtins.list[Entry]:
        files = self.head().files
        added = self._children(files, key)
        try:
            listed = self.inner.list(key)
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND or not added:
                raise
            listed = []
        children = {e.name: e for e in listed
                    if not (e.key in files and files[e.key].blob is None)}
        children.update(added)
        return [children[n] for n in sorted(children)]

    def list_lazy(self, key: str) -> Iterable[Entry]:
        return self.list(key)

    def walk(self, key: str) -> Iterator[Entry]:
        files = self.head().files
        prefix = f"{key}/" if key else ""
        mine = sorted((k, e) for k, e in files.items() if k.startswith(prefix))
        try:
            main: Iterator[Entry] = iter(self.inner.walk(key))
            first = next(main, None)
        except FsError as e:
            if e.code is not ErrorCode.FS_NOT_FOUND or not any(
                    e.blob is not None for _, e in mine):
                raise
            main, first = iter(()), None
        pending = iter(e for e in ([first] if first is not None else []))

        def theirs() -> Iterator[Entry]:
            yield from pending
            yield from main

        ours = ((k, e) for k, e in mine if e.blob is not None)
        nxt = next(ours, None)
        for entry in theirs():
            if entry.key in files:
                continue
            while nxt is not None and nxt[0] < entry.key:
                yield self._entry(*nxt)
                nxt = next(ours, None)
            yield entry
        while nxt is not None:
            yield self._entry(*nxt)
            nxt = next(ours, None)

    @staticmethod
    def _entry(key: str, entry: BranchFile) -> Entry:
        return Entry(key=key, name=key.rpartition("/")[2], kind="file", size=entry.size)

    def read_tree_unhashed(
        self, key: str, accept: Callable[[str], bool], max_bytes: int,
        wanted: Callable[[bytes], bool] | None = None,
    ) -> Iterator[tuple[str, bytes | FsError, bool]] | None:
        return None

    def split_tree(self, key: str, want: int) -> Sequence[TreePart]:
        return []

    def walk_names(
        self, key: str, keep_dir: Callable[[str], bool] | None = None,
        listed: Callable[[str, builtins.list[str]], None] | None = None,
    ) -> Iterator[tuple[str, builtins.list[str]]] | None:
        return None  # main's walk does not hold the branch's changes

    def walk_versioned(self, key: str) -> Iterator[tuple[Entry, Version | None]] | None:
        return None

    def start_read(self, key: str) -> Callable[[], Blob] | None:
        return None

    def prune_directories(self, key: str) -> None:
        return None  # main's directories are main's; the branch's exist through files

    def writer_of(self, key: str) -> tuple[Version, str | None] | None:
        entry = self.head().files.get(key)
        if entry is None:
            return self.inner.writer_of(key)
        if entry.blob is None:
            raise FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason=Reason.not_found)
        return blob_version(entry.blob), entry.owner

    def read_version_id(self, key: str, version_id: str) -> Blob:
        return Backend.read_version_id(self, key, version_id)

    def read_version(self, key: str, version: Version) -> Blob:
        """A state the branch's log holds (its blob, by digest), or main's version a
        change rested on: from the base's bytes the branch kept, else where main keeps
        versions."""
        kept = self._kept(key, version)
        if kept is not None:
            return Blob(data=self.store.blob(kept), version=version)
        return self.inner.read_version(key, version)

    def _kept(self, key: str, version: Version) -> str | None:
        """The blob holding ``version`` of ``key`` in the branch's log (a state of the
        file, or the base a change of it rested on), if any."""
        for n, (_, manifest) in enumerate(self.store.log(self.head().ref.head)):
            entry = manifest.files.get(key)
            if n >= LOG_READ or entry is None:
                return None
            if entry.blob is not None and blob_version(entry.blob) == version:
                return entry.blob
            if entry.base == version and entry.base_blob is not None:
                return entry.base_blob
        return None

    def versions(self, key: str, limit: int | None = None) -> builtins.list[VersionInfo]:
        """The states of ``key`` in the branch's log, newest first (each dated by the head
        that made it), then the main version the branch's first change rested on."""
        found: builtins.list[VersionInfo] = []
        last: BranchFile | None = None
        base: Version | None = None
        for n, (_, manifest) in enumerate(self.store.log(self.head().ref.head)):
            entry = manifest.files.get(key)
            if n >= LOG_READ or entry is None:
                break
            if last is not None and (entry.blob, entry.owner) == (last.blob, last.owner):
                found[-1] = found[-1].model_copy(update={"modified": _when(manifest.time)})
                continue
            last, base = entry, entry.base
            found.append(VersionInfo(
                version=blob_version(entry.blob) if entry.blob else blob_version("0" * 64),
                size=entry.size, modified=_when(manifest.time), latest=not found,
                deleted=entry.blob is None, owner=entry.owner))
        if base is not None and (limit is None or len(found) < limit):
            found.append(VersionInfo(version=base, latest=not found))
        if not found:
            return self.inner.versions(key, limit)
        return found[:limit] if limit is not None else found

    def capabilities_for(self, key: str) -> Capabilities:
        """The branch's; for a file it did not change, history only where main keeps it
        (so that asking for it gets main's answer, which says how to turn it on)."""
        if key in self.head().files or self.inner.capabilities_for(key).history:
            return self.capabilities
        return self.capabilities.model_copy(update={"history": False})

    def storage_id(self) -> Hashable:
        return ("branch", self.inner.storage_id(), self.name)

    # -- changes ---------------------------------------------------------------------------
    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        self.inner.check_writable(key)
        sha = hashlib.sha256(data).hexdigest()
        owner = meta.owner if meta is not None else None
        bases: list[bytes] = []

        def change(head: Head) -> dict[str, BranchFile]:
            bases.clear()
            if head.files.get(key) is None:
                self._not_a_directory(head, key)
            return self._changed(head, key, precondition, blob=sha, size=len(data),
                                 owner=owner, source=None, bases=bases,
                                 markers=holds_markers(data))

        self.move("write", key, owner, change, lambda: [*bases, data])
        return blob_version(sha)

    def _not_a_directory(self, head: Head, key: str) -> None:
        if self._children(head.files, key):
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path=display(key),
                          reason=Reason.is_directory)

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        if reserved(key):  # fsseam's own records (a call's), kept on main's store
            self.inner.delete(key, precondition, meta=meta)
            return
        self.inner.check_writable(key)
        if isinstance(precondition, CreateOnly):
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(key),
                          reason=Reason.create_only_delete)
        owner = meta.owner if meta is not None else None
        # The deleted bytes are kept as the base, as for any first change: a merge that
        # meets main's own change of the file then shows both changes.
        bases: list[bytes] = []

        def change(head: Head) -> dict[str, BranchFile]:
            bases.clear()
            entry = head.files.get(key)
            if entry is not None and entry.blob is None:
                raise FsError(ErrorCode.FS_NOT_FOUND, path=display(key),
                              reason=Reason.not_found)
            if entry is None:
                self._not_a_directory(head, key)
                if not isinstance(precondition, IfMatch):
                    found = self.inner.stat(key)  # FS_NOT_FOUND, FS_IS_DIRECTORY as main's
                    if found.kind == "directory":
                        raise FsError(ErrorCode.FS_IS_DIRECTORY, path=display(key),
                                      reason=Reason.is_directory)
            return self._changed(head, key, precondition, blob=None, size=None,
                                 owner=owner, source=None, bases=bases)

        self.move("delete", key, owner, change, lambda: builtins.list(bases))

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        self.inner.check_writable(dst)
        taken: list[bytes] = []

        def change(head: Head) -> dict[str, BranchFile]:
            taken.clear()
            entry = head.files.get(src)
            if entry is not None:
                self._check(entry, source, src)
                data = self._own(src, entry).data
            else:
                found = self._main(src)
                if found is None:
                    raise FsError(ErrorCode.FS_NOT_FOUND, path=display(src),
                                  reason=Reason.not_found)
                if isinstance(source, IfMatch) and found.version != source.version:
                    raise Conflict("mismatch", path=display(src))
                data = found.data
            taken.append(data)
            sha = hashlib.sha256(data).hexdigest()
            bases: list[bytes] = []
            # A copy of a file the branch made keeps naming where it came from on main.
            origin = entry.source if entry is not None and entry.base is None else None
            files = self._changed(head, dst, CreateOnly(), blob=sha, size=len(data),
                                  owner=None, source=origin or src, bases=bases)
            taken.extend(bases)
            return files

        manifest = self.move("copy", dst, None, change, lambda: builtins.list(taken))
        blob = manifest.files[dst].blob
        assert blob is not None
        return blob_version(blob)

    def get_plain(self, key: str) -> Blob | None:
        return self.inner.get_plain(key)

    def put_plain(self, key: str, data: bytes, precondition: Precondition) -> Version:
        return self.inner.put_plain(key, data, precondition)


def _when(seconds: float) -> datetime:
    return datetime.fromtimestamp(seconds, UTC)


def open_branch(inner: Backend, name: str, *, owner: str | None = None,
                read_only: bool = False) -> BranchBackend:
    """Branch ``name`` over ``inner``, made from main's current files when absent (the
    same name from any process opens the same branch); ``read_only``: opened only, never
    made (FS_NOT_FOUND when absent)."""
    if isinstance(inner, BranchBackend):
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.branch_of_branch,
                      details={"name": inner.name})
    backend = BranchBackend(inner, name)
    if backend.store.ref(name) is None:
        if read_only:
            raise FsError(ErrorCode.FS_NOT_FOUND, reason=Reason.branch_missing,
                          details={"name": name})
        root = Manifest(branch=name, operation="create", time=time.time(), owner=owner)
        ident = backend.store.put_manifest(root)
        try:
            backend.store.put_ref(Ref(name=name, head=ident, created=time.time(),
                                      created_by=owner), None)
        except Conflict as e:
            if e.reason != ConflictKind.exists:
                raise  # made by another process meanwhile: the same branch
    return backend

