"""What every part of the seam shares: its dependencies, paths, whole-file loads, what an
owner has observed, and on whose behalf its changes are written.

Each job of ``ctx.fs`` is a module of functions over a :class:`Core` (``reading``,
``finding``, ``changing``, ``commit``, ``verdicts``, ``history``); :class:`fsseam.seam.Seam`
is the facade.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import Any, TypeVar, cast

from ..backends.base import Backend, WriteMeta
from ..doccache import Authors, DocCache
from ..errors import ErrorCode, FsError
from ..events import MissingEvent, ReadEvent
from ..gate import Gate
from ..limits import Limits
from ..messages import Reason
from ..observations import ObservationStore
from ..paths import display, reserved, to_key
from ..policy.observation import ObservationPolicy
from ..text import decode
from ..versions import Version

__all__ = ["Core", "one_call"]

F = TypeVar("F", bound=Callable[..., Any])


def one_call(method: F) -> F:
    """An operation of the owner: what it observes (a grep: every file it shows) reaches
    the observation store once, at its end; an operation it calls is part of it."""

    @functools.wraps(method)
    def call(self: Core, *args: Any, **kwargs: Any) -> Any:
        with self.observing():
            return method(self, *args, **kwargs)

    return cast(F, call)


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
        policy: ObservationPolicy | None = None,
    ) -> None:
        self.backend = backend
        self.owner = owner
        self.write_meta = WriteMeta(owner=owner)
        """On whose behalf this owner's changes are written (stores that keep it)."""
        self.limits = limits or Limits()
        self.read_only = read_only
        self.gate = gate
        self.docs = docs or DocCache(self.limits.doc_cache_bytes)
        self.authors = authors or Authors()
        self._observing = observing
        self.observations = observations
        self.policy = policy
        self.call_records = True
        """Whether the store has a place at its root for call records (not so: mounts
        without a writable "/"), learnt at the first change with a call id."""
        """The observation policy, where the answers of calls with an id are kept (with
        the owner's observations); None when no policy runs."""

    def observing(self) -> AbstractContextManager[None]:
        """One call of this owner: what it observes is stored once, when it ends."""
        if self._observing is None:
            return nullcontext()
        return self._observing(self.owner, self.observations)

    # -- paths -------------------------------------------------------------
    def key(self, path: str) -> str:
        """The canonical key of a model path (raises FS_OUTSIDE_ROOT, FS_INVALID_ARGUMENT)."""
        below = self.backend.native_key(path) if isinstance(path, str) else None
        key = self.backend.resolve(to_key(path if below is None else below or "/"))
        if reserved(key):  # fsseam's own records: no file of the workspace
            raise FsError(ErrorCode.FS_PERMISSION_DENIED, path=display(key),
                          reason=Reason.reserved_folder)
        return key

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

    def keeps_history(self, key: str) -> bool:
        """Whether the store holding ``key`` keeps versions: under mounts, the mount's own
        store decides (one mount's versioned bucket keeps history where another does not)."""
        return bool(self.backend.capabilities_for(key).history)

    # -- whole files -------------------------------------------------------
    def load_bytes(self, key: str, record_missing: bool = True) -> tuple[bytes, Version]:
        """The whole file's bytes and their version, within the edit limit."""
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
            raise FsError(ErrorCode.FS_TOO_LARGE, path=display(key), reason=Reason.edit_too_large,
                          details={"size": size, "cap": cap})
        version = stream.version
        if version is None:  # pragma: no cover - a backend bug
            raise FsError(ErrorCode.FS_BACKEND, path=display(key), reason=Reason.no_version)
        return b"".join(parts), version

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
