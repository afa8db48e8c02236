"""What every part of the seam shares: its dependencies, paths, whole-file loads, what an
owner has observed, and the backend's writes made on the owner's behalf.

Each job of ``ctx.fs`` (reading, listing, finding, changing, managing, history) is a
module of functions over a :class:`Core`; :class:`fsseam.seam.Seam` is the facade.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext

from ..backends.base import Backend, WriteMeta
from ..changes import ambiguous, cause_text, landed
from ..doccache import DocCache
from ..errors import Conflict, ConflictKind, ErrorCode, FsError
from ..events import MissingEvent, ReadEvent
from ..gate import Gate
from ..history import Authors
from ..limits import Limits
from ..messages import Reason, Role
from ..observations import ObservationStore
from ..paths import display, to_key
from ..text import TextDoc, decode
from ..versions import Version

__all__ = ["Core", "Lost", "encode_checked", "text_at"]

Lost = tuple[ErrorCode | None, str | None, str | None]
"""How a lost precondition is explained: the intent's code, reason and hint."""


def encode_checked(make: Callable[[], bytes], role: str) -> bytes:
    """The new bytes, or FS_INVALID_ARGUMENT naming the argument that is not UTF-8."""
    try:
        return make()
    except UnicodeEncodeError as e:
        raise FsError(
            ErrorCode.FS_INVALID_ARGUMENT,
            reason=Reason.text_not_utf8,
            details={"arg": Role(role), "position": e.start},
        ) from None


class Core:
    """One owner's view of one workspace: the state the seam's modules work on."""

    def __init__(
        self,
        backend: Backend,
        gate: Gate,
        owner: str,
        *,
        limits: Limits | None = None,
        docs: DocCache | None = None,
        read_only: bool = False,
        authors: Authors | None = None,
        observing: Callable[[str, ObservationStore | None], AbstractContextManager[None]]
        | None = None,
        observations: ObservationStore | None = None,
    ) -> None:
        self.backend = backend
        self.owner = owner
        self.limits = limits or Limits()
        self.read_only = read_only
        self.gate = gate
        self.docs = docs or DocCache(self.limits.doc_cache_bytes)
        self.authors = authors or Authors()
        self._observing = observing
        self.observations = observations

    def observing(self) -> AbstractContextManager[None]:
        """One call of this owner: what it observes is stored once, when it ends."""
        if self._observing is None:
            return nullcontext()
        return self._observing(self.owner, self.observations)

    @property
    def backend(self) -> Backend:
        return self._backend

    @backend.setter
    def backend(self, backend: Backend) -> None:
        self._backend = backend

    # -- paths -------------------------------------------------------------
    def key(self, path: str) -> str:
        """The canonical key of a model path (raises FS_OUTSIDE_ROOT, FS_INVALID_ARGUMENT)."""
        below = self.backend.native_key(path) if isinstance(path, str) else None
        key = to_key(path if below is None else below or "/")
        return self.backend.resolve(key)

    def resolve_file(self, path: str) -> tuple[str, str]:
        """The key and shown path of a file argument (the root is a directory)."""
        key = self.key(path)
        if not key:
            raise FsError(ErrorCode.FS_IS_DIRECTORY, path="/", reason=Reason.root_is_directory)
        return key, display(key)

    def not_found(self, key: str, err: FsError) -> FsError:
        # A missing bucket is not a missing file: "create the file" would send the model
        # into writes that fail the same way, and absence must not be recorded for it.
        if err.code is ErrorCode.FS_NOT_FOUND and err.reason != Reason.bucket_missing:
            self.gate.dispatch(MissingEvent(owner=self.owner, key=key, path=display(key)))
            return FsError(ErrorCode.FS_NOT_FOUND, path=display(key), reason=Reason.not_found)
        return err

    def check_writable(self) -> None:
        if self.read_only:
            raise FsError(ErrorCode.FS_READ_ONLY, reason=Reason.read_only)

    def check_writable_at(self, *keys: str) -> None:
        """A store mounted read-only refuses a change before anything is read for it (a
        backend with ``check_writable``: mounts), as a read-only workspace does."""
        for key in keys:
            self.backend.check_writable(key)

    def keeps_history(self, key: str) -> bool:
        """Whether the store holding ``key`` keeps versions: under mounts, the mount's own
        store decides (one mount's versioned bucket keeps history where another does not)."""
        return bool(self.backend.capabilities_for(key).history)

    # -- whole files -------------------------------------------------------
    def load_text(self, key: str, record_missing: bool = True) -> tuple[TextDoc, Version]:
        """The whole file as text, for an edit: one round trip, and never more than the
        edit limit fetched (a huge object is refused, not downloaded)."""
        data, version = self.load_bytes(key, record_missing)
        return decode(data, display(key)), version

    def load_bytes(self, key: str, record_missing: bool = True) -> tuple[bytes, Version]:
        """The whole file's bytes and their version, within the edit limit."""
        shown = display(key)
        cap = self.limits.max_edit_bytes
        try:
            stream = self.backend.open_read(key, cap + 1)
        except FsError as e:
            if not record_missing:
                raise
            raise self.not_found(key, e) from None
        parts: list[bytes] = []
        size = stream.size or 0
        try:
            if size <= cap:
                total = 0
                for chunk in stream.chunks():
                    parts.append(chunk)
                    total += len(chunk)
                    if total > cap:
                        break
                size = max(size, total)
        except FsError as e:
            if not record_missing:
                raise
            raise self.not_found(key, e) from None
        finally:
            stream.close()
        if size > cap:
            raise FsError(ErrorCode.FS_TOO_LARGE, path=shown, reason=Reason.edit_too_large,
                          details={"size": size, "cap": cap})
        version = stream.version
        if version is None:  # pragma: no cover - a backend bug
            raise FsError(ErrorCode.FS_BACKEND, path=shown, reason=Reason.no_version)
        return b"".join(parts), version

    def check_edit_size(self, shown: str, n: int) -> None:
        if n > self.limits.max_edit_bytes:
            raise FsError(ErrorCode.FS_TOO_LARGE, path=shown, reason=Reason.content_too_large,
                          details={"size": n, "cap": self.limits.max_edit_bytes})

    # -- what this owner has seen -----------------------------------------
    def record_observed(self, key: str, shown: str, data: bytes, version: Version) -> None:
        """Record that this owner has seen ``data`` as the file's ``version``."""
        try:
            fmt = decode(data, shown).format
        except FsError:
            fmt = None
        if fmt is not None:
            self.docs.put(key, version, fmt, data)
        self.gate.dispatch(ReadEvent(owner=self.owner, key=key, path=shown, version=version))

    def holds(self, key: str, version: Version, data: bytes, data_version: Version | None
               ) -> bool:
        """Whether the file at ``version`` holds exactly ``data``, known without a request:
        the versions are equal, a content digest says so, or the cached bytes do."""
        if data_version is not None and data_version == version:
            return True
        # The bytes kept for ``version`` are exactly its content, so comparing with them (a
        # memcmp) answers as the digest would, without hashing every write's bytes.
        raw = self.docs.raw(key, version)
        if raw is not None:
            return raw == data
        if version.kind == "sha256":
            return hashlib.sha256(data).hexdigest() == version.value
        return False

    def probe_version(self, key: str) -> Version | None:
        """The file's version now, from the smallest read the store allows (None: gone):
        a 1-byte range where the version comes with the first response (S3, GCS, a local
        file whose digest is cached), else one whole read (a digest needs every byte)."""
        try:
            stream = self.backend.open_read(key, 1)
            try:
                known = stream.version
            finally:
                stream.close()
            return known if known is not None else self.backend.read(key).version
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND:
                return None
            raise

    def text_or_none(self, key: str, version: Version) -> TextDoc | None:
        """The text of ``version`` as the agent saw it, or None (see :func:`text_at`)."""
        text = text_at(self, key, version)
        return text if isinstance(text, TextDoc) else None

    def refusal_for(self, err: Conflict, path: str, code: ErrorCode | None, reason: str | None,
                  hint: str | None) -> FsError:
        """What a lost precondition means to this caller (the intent's code and reason)."""
        if code is None:
            return err
        if err.reason == ConflictKind.missing:
            return FsError(code, path=path, reason=Reason.deleted_since_read)
        if hint is not None:
            return FsError(code, hint, path=path)
        return FsError(code, path=path, reason=reason or err.reason)

    # -- the backend's changes, on this owner's behalf (made by the pipeline) --
    def write_meta(self) -> WriteMeta:
        return WriteMeta(owner=self.owner)

    def landed_write(self, failure: Exception, key: str, shown: str, data: bytes,
                      action: str, author: str | None) -> Version:
        """A write that failed without a refusal may have landed: the version it made when
        the file holds exactly its bytes and no store's record names another writer (one
        read, on this path only; ``author`` is noted as the writer then); else the failure,
        or, when the file cannot be read either, FS_BACKEND saying the outcome is unknown
        instead of "nothing was changed"."""
        if not ambiguous(failure):
            raise failure
        # A write back made in another's name (an undo, a restore) is not proven ours by
        # the owner the object names.
        outcome, version = landed(self.backend, key, data,
                                  owner=author if author == self.owner else None)
        if outcome == "done":
            assert version is not None
            if author is not None:
                self.authors.note(key, version, author)
            return version
        if outcome == "unknown":
            raise FsError(ErrorCode.FS_BACKEND, path=shown, reason=Reason.outcome_unknown,
                          details={"cause": cause_text(failure, shown, action)}) from failure
        raise failure


def text_at(fs: Core, key: str, version: Version) -> TextDoc | Reason:
    """The text of ``version`` as the agent saw it: cached bytes (shared by this process's
    workspaces of the store), else (on a conflict path only) the store's history; else why
    it cannot be had, a catalogue sentence for the refusal."""
    raw = fs.docs.raw(key, version)
    if raw is None and not fs.keeps_history(key):
        return Reason.unshown_not_kept
    if raw is None:
        try:
            raw = fs.backend.read_version(key, version).data
        except FsError as e:
            if e.code is ErrorCode.FS_UNSUPPORTED:  # a bucket without versioning
                return Reason.unshown_not_kept
            if e.code is ErrorCode.FS_NOT_FOUND:
                return Reason.unshown_gone
            return Reason.unshown_unreadable
    try:
        return decode(raw, display(key))
    except FsError:
        return Reason.unshown_old_not_text
