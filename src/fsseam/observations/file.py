"""Observations in one JSON ledger file: the CLI's ``--ledger FILE``, for one machine.

The file is the :class:`~fsseam.observations.store.Ledger` format the CLI has always
written (``format`` 1), replaced atomically (a temp file in the same directory, fsync,
``os.replace``). Processes sharing the file take an exclusive lock on ``FILE.lock`` for each
update and merge into what the file holds then, so none loses another's update. A file that
is not a ledger this version reads is refused, never started over.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from pydantic import ValidationError

from ..errors import ErrorCode, FsError
from ..messages import Clause, Reason
from .sharded import corrupt, refused
from .store import DEFAULT_MAX_ENTRIES, LEDGER_FORMAT, Ledger, MemoryObservations, ObservationEntry

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: one process per ledger file
    fcntl = None  # type: ignore[assignment]

__all__ = ["FileObservations", "read_ledger", "write_ledger"]


def read_ledger(path: Path) -> Ledger:
    """The ledger stored at ``path`` (a fresh one when there is no file). Raises FsError
    (FS_BACKEND): ``observations_corrupt`` for a file that is not a ledger this version
    reads, ``observations_unreachable`` when it cannot be read."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Ledger()
    except OSError as e:
        raise FsError(ErrorCode.FS_BACKEND, reason=Reason.observations_unreachable,
                      details={"store": str(path), "detail": str(e)}) from e
    shown = str(path)
    try:
        raw = json.loads(data)
    except ValueError:  # UnicodeDecodeError included
        raise refused(shown, Clause.observations_not_json) from None
    except RecursionError:  # arrays nested past the interpreter's depth
        raise refused(shown, Clause.observations_too_deep) from None
    found = raw.get("format") if isinstance(raw, dict) else None
    if type(found) is not int or found != LEDGER_FORMAT:
        raise refused(shown, Clause.observations_format, found=repr(found),
                      expected=repr(LEDGER_FORMAT))
    try:
        return Ledger.model_validate(raw)
    except ValidationError as e:
        raise corrupt(shown, e) from None
    except RecursionError:
        raise refused(shown, Clause.observations_too_deep) from None


def write_ledger(ledger: Ledger, path: Path) -> None:
    """Write ``ledger`` atomically: a temp file in the same directory, fsync, replace."""
    text = ledger.model_dump_json(indent=2) + "\n"
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _reopen(path: str, max_entries: int) -> FileObservations:
    return FileObservations(path, max_entries=max_entries)


class FileObservations(MemoryObservations):
    """A ledger file: read when opened, merged and replaced on every update.

    ``policy.ledger`` is the ledger as this process last read or wrote it."""

    def __init__(self, path: str | os.PathLike[str], *,
                 max_entries: int = DEFAULT_MAX_ENTRIES) -> None:
        self.path = Path(path)
        self.name = str(self.path)
        super().__init__(read_ledger(self.path), max_entries=max_entries)
        self._seen = self._stamp()

    def __repr__(self) -> str:
        return f"FileObservations({self.name!r})"

    def __reduce__(self) -> tuple[object, ...]:
        # Another process opens the file again: the file, not this process's copy of it.
        return (_reopen, (str(self.path), self.max_entries))

    def get(self, owner: str, key: str, *, fresh: bool = False) -> ObservationEntry | None:
        # Without ``fresh``, one stat: a file another process replaced is read now, before
        # the change this answer checks lands, so a damaged file refuses the change instead
        # of failing the call after it. Read under the lock, as ``put`` merges: a reload
        # between its merge and its write would write the file without the merge.
        if fresh or self._stamp() != self._seen:
            with self._locked():
                self._reload()
        return super().get(owner, key)

    def put(self, owner: str, entries: Mapping[str, ObservationEntry]) -> None:
        with self._locked():
            self._reload()
            super().put(owner, entries)
            assert self.ledger is not None
            try:
                write_ledger(self.ledger, self.path)
            except OSError as e:
                raise FsError(ErrorCode.FS_BACKEND, reason=Reason.observations_unreachable,
                              details={"store": self.name, "detail": str(e)}) from e
            self._seen = self._stamp()

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns, st.st_size)

    def _reload(self) -> None:
        """Take what another process wrote since (the file is the truth; ours was saved)."""
        if self._stamp() == self._seen:
            return
        ledger = read_ledger(self.path)
        with self._lock:
            self.ledger = ledger
            self._owners = ledger.entries()
        self._seen = self._stamp()

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        if fcntl is None:
            yield
            return
        try:
            fd = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise FsError(ErrorCode.FS_BACKEND, reason=Reason.observations_unreachable,
                          details={"store": self.name, "detail": str(e)}) from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
