"""The backend that records every change in the audit trail: :class:`AuditedBackend`.

It is the outermost wrapper of a workspace's backend, so whatever changes a file (a tool,
``ctx.fs``, the guarded fsspec filesystem, undo, restore, a merge into main) passes through
its ``write``, ``delete`` or ``copy``. After the change landed it appends one entry; it
never raises then (the seam would read the file back and call the change a success, hiding
the failure): an entry that cannot be written is said on the running call
(``fsseam.calling.current().unaudited``), which the call's answer reports.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from ..backends.base import ANY_VERSION, Backend, Blob, ReadStream, Wrapper, WriteMeta
from ..calling import current
from ..errors import Conflict, ErrorCode, FsError
from ..messages import Reason
from ..paths import display, reserved
from ..versions import CreateOnly, IfMatch, Precondition, Version
from .entry import Action, AuditEntry
from .trail import AuditTrail

__all__ = ["AuditedBackend", "Digests"]

DIGESTS_KEPT = 1024
"""sha256 digests of what was read or written, by (key, version), kept for copies."""

_STRIPES = tuple(threading.RLock() for _ in range(64))
"""A change to a key and its entry are made under one lock of these (by key), so that in
one process two changes of one file enter the trail in the order they landed."""


class Digests:
    """The sha256 of the bytes this process read or wrote at a (key, version): a copy's
    entry names the bytes copied without reading them again."""

    def __init__(self, kept: int = DIGESTS_KEPT) -> None:
        self.kept = kept
        self._known: OrderedDict[tuple[str, Version], str] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, key: str, version: Version | None, digest: str) -> None:
        if version is None:
            return
        with self._lock:
            self._known[(key, version)] = digest
            self._known.move_to_end((key, version))
            while len(self._known) > self.kept:
                self._known.popitem(last=False)

    def get(self, key: str, version: Version | None) -> str | None:
        if version is None:
            return None
        with self._lock:
            return self._known.get((key, version))


class _HashingStream:
    """A read stream whose bytes are hashed as they pass; read to the end, the digest is
    kept for the version read."""

    def __init__(self, stream: ReadStream, key: str, digests: Digests) -> None:
        self.stream = stream
        self.key = key
        self.digests = digests
        self.size = stream.size

    @property
    def version(self) -> Version | None:
        return self.stream.version

    def chunks(self) -> Iterator[bytes]:
        h = hashlib.sha256()
        for chunk in self.stream.chunks():
            h.update(chunk)
            yield chunk
        self.digests.put(self.key, self.stream.version, h.hexdigest())

    def close(self) -> None:
        self.stream.close()


def _precondition(p: Precondition) -> tuple[str, dict[str, Any] | None]:
    if isinstance(p, IfMatch):
        return "if_match", p.version.model_dump()
    if isinstance(p, CreateOnly):
        return "create_only", None
    return "overwrite", None


class AuditedBackend(Wrapper):
    """``inner`` with every change of a file recorded in ``trail``. ``branch``: the branch
    its files are (None: main). ``owner``: who acts when a change does not say it (a
    copy); :meth:`acting_for` gives each context its own."""

    def __init__(self, inner: Backend, trail: AuditTrail, *, branch: str | None = None,
                 owner: str | None = None, digests: Digests | None = None) -> None:
        super().__init__(inner)
        self.trail = trail
        self.branch = branch
        self.owner = owner
        self.digests = digests if digests is not None else Digests()

    def acting_for(self, owner: str) -> AuditedBackend:
        """This backend, with ``owner`` named on the changes that do not name theirs."""
        return AuditedBackend(self.inner, self.trail, branch=self.branch, owner=owner,
                              digests=self.digests)

    def _stripe(self, key: str) -> threading.RLock:
        return _STRIPES[hash((self.trail.identity(), self.branch, key)) % len(_STRIPES)]

    # -- what is read: digests for a later copy ------------------------------------------
    def read(self, key: str) -> Blob:
        blob = self.inner.read(key)
        if not reserved(key):
            self.digests.put(key, blob.version, hashlib.sha256(blob.data).hexdigest())
        return blob

    def open_read(self, key: str, chunk_size: int = 1 << 20) -> ReadStream:
        stream = self.inner.open_read(key, chunk_size)
        return stream if reserved(key) else _HashingStream(stream, key, self.digests)

    # -- changes ---------------------------------------------------------------------------
    def write(self, key: str, data: bytes, precondition: Precondition, *,
              meta: WriteMeta | None = None) -> Version:
        if reserved(key):
            return self.inner.write(key, data, precondition, meta=meta)
        with self._stripe(key):
            try:
                version = self.inner.write(key, data, precondition, meta=meta)
            except Conflict:
                raise  # refused: nothing changed
            except FsError:
                self._landed_anyway(key, data, precondition, meta)
                raise
            digest = hashlib.sha256(data).hexdigest()
            self.digests.put(key, version, digest)
            kind, before = _precondition(precondition)
            action: Action = "create" if kind == "create_only" else "write"
            self._record(key, action, meta, precondition=kind, version_before=before,
                         version_after=version.model_dump(), sha256=digest)
        return version

    def delete(self, key: str, precondition: Precondition = ANY_VERSION, *,
               meta: WriteMeta | None = None) -> None:
        if reserved(key):
            self.inner.delete(key, precondition, meta=meta)
            return
        with self._stripe(key):
            try:
                self.inner.delete(key, precondition, meta=meta)
            except Conflict:
                raise
            except FsError as e:
                if e.code is not ErrorCode.FS_NOT_FOUND and self._gone(key):
                    kind, before = _precondition(precondition)
                    self._record(key, "delete", meta, precondition=kind,
                                 version_before=before, version_after=None, sha256=None)
                raise
            kind, before = _precondition(precondition)
            self._record(key, "delete", meta, precondition=kind, version_before=before,
                         version_after=None, sha256=None)

    def copy(self, src: str, dst: str, source: Precondition = ANY_VERSION) -> Version:
        if reserved(dst):
            return self.inner.copy(src, dst, source)
        with self._stripe(dst):
            version = self.inner.copy(src, dst, source)
            read = source.version if isinstance(source, IfMatch) else None
            digest = self.digests.get(src, read) or self.digests.get(src, version)
            if digest is None and version.kind == "sha256":
                digest = version.value  # the store names bytes by their sha256
            if digest is not None:
                self.digests.put(dst, version, digest)
            self._record(dst, "copy", None, precondition="create_only", version_before=None,
                         version_after=version.model_dump(), sha256=digest,
                         source=display(src))
        return version

    # -- a change whose answer was lost ----------------------------------------------------
    def _landed_anyway(self, key: str, data: bytes, precondition: Precondition,
                       meta: WriteMeta | None) -> None:
        """A write that failed without a refusal (a lost answer, a timeout) may have
        landed, and the seam then calls it done: its entry is written when the store holds
        exactly these bytes now (one read, on this failure path only)."""
        try:
            blob = self.inner.read(key)
        except FsError:
            return
        digest = hashlib.sha256(data).hexdigest()
        if hashlib.sha256(blob.data).hexdigest() != digest:
            return
        kind, before = _precondition(precondition)
        if before is not None and blob.version == Version.model_validate(before):
            return  # the bytes were there already: nothing landed
        self._record(key, "create" if kind == "create_only" else "write", meta,
                     precondition=kind, version_before=before,
                     version_after=blob.version.model_dump(), sha256=digest)

    def _gone(self, key: str) -> bool:
        try:
            self.inner.stat(key)
        except FsError as e:
            return e.code is ErrorCode.FS_NOT_FOUND
        return False

    # -- the entry -------------------------------------------------------------------------
    def _record(self, key: str, action: Action, meta: WriteMeta | None,
                **fields: Any) -> None:
        owner = meta.owner if meta is not None and meta.owner is not None else self.owner
        self.record(display(key), action, owner, **fields)

    def record(self, path: str, action: Action, owner: str | None, **fields: Any
               ) -> AuditEntry | None:
        """Append the entry of a change that landed at ``path`` (shown); never raises
        while a call is running: a failure is said on it (see the module docstring)."""
        call = current()
        made = {"owner": owner, "call_id": call.call_id if call is not None else None,
                "tool": call.tool if call is not None else action, "path": path,
                "branch": self.branch, "action": action, **fields}
        try:
            return self.trail.append(made)
        except Exception as e:  # whatever failed, the change landed: never hide it
            cause = e.message if isinstance(e, FsError) else f"{type(e).__name__}: {e}"
            after = fields.get("version_after")
            version = f"{after['kind']}:{after['value']}" if after else action
            said = f"{path} ({version}): {cause}"
            if call is None:
                raise FsError(ErrorCode.FS_BACKEND, path=path, reason=Reason.audit_unwritten,
                              details={"changes": said}) from e
            call.unaudited.append(said)
            return None

    def __repr__(self) -> str:
        return f"AuditedBackend({self.inner!r}, trail={self.trail.name!r})"
