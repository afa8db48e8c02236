"""The one error tree of fsseam.

    FsError                      every failure a tool call can report; carries an ErrorCode
    └── Conflict                 a precondition failed at the storage (CAS lost, object exists,
                                 object missing for IfMatch); the seam maps it to FS_STALE,
                                 FS_NOT_OBSERVED, FS_ALREADY_EXISTS or FS_NOT_FOUND

Backends translate their storage's exceptions (OSError, botocore codes, HTTP statuses) into
this tree in one function each; nothing above the backend sees a storage exception.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum, auto
from types import MappingProxyType
from typing import Any, Literal

from .messages import Vocabulary, render

__all__ = ["Conflict", "ConflictKind", "ConflictReason", "ErrorCode", "FsError"]


class ErrorCode(StrEnum):
    """Stable codes a caller (or a model) can branch on."""

    FS_NOT_FOUND = "FS_NOT_FOUND"
    FS_NOT_OBSERVED = "FS_NOT_OBSERVED"
    FS_STALE = "FS_STALE"
    FS_ALREADY_EXISTS = "FS_ALREADY_EXISTS"
    FS_IS_DIRECTORY = "FS_IS_DIRECTORY"
    FS_NOT_TEXT = "FS_NOT_TEXT"
    FS_TOO_LARGE = "FS_TOO_LARGE"
    FS_NO_MATCH = "FS_NO_MATCH"
    FS_MULTIPLE_MATCHES = "FS_MULTIPLE_MATCHES"
    FS_INVALID_ARGUMENT = "FS_INVALID_ARGUMENT"
    FS_OUTSIDE_ROOT = "FS_OUTSIDE_ROOT"
    FS_PERMISSION_DENIED = "FS_PERMISSION_DENIED"
    FS_READ_ONLY = "FS_READ_ONLY"
    FS_UNSUPPORTED = "FS_UNSUPPORTED"
    FS_BACKEND = "FS_BACKEND"


class FsError(Exception):
    """A failure with a code and a message that says what to do next.

    Two ways to make one: with a ``reason`` from the message catalogue
    (:mod:`fsseam.messages`) and the ``details`` its sentence needs, so the tools layer can
    render it in the words of the tool the model called; or with a literal ``message``
    (plugins, and one-off texts). ``path`` is always the path as the model sees it
    (``/notes.md``), never a storage key.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str | None = None,
        *,
        path: str | None = None,
        reason: str | None = None,
        details: Mapping[str, Any] | None = None,
    ) -> None:
        if message is None and reason is None:
            raise TypeError("FsError needs a message or a catalogue reason")
        super().__init__(code, message)
        self.code = code
        self._message = message
        self.path = path
        self._template = reason
        self.reason: str | None = reason
        """The catalogue entry of the message (also a finer cause than the code, for
        callers that branch on it: ``err.reason == Reason.bucket_missing``, with
        :class:`fsseam.messages.Reason`)."""
        self.details: dict[str, Any] = dict(details or {})

    @property
    def message(self) -> str:
        """The text in the default vocabulary (the file tools' argument names)."""
        return self.render()

    @property
    def literal(self) -> str | None:
        """The sentence given literally (a plugin's, a one-off text); None for one of the
        catalogue, rendered from ``reason`` and ``details``."""
        return self._message

    @literal.setter
    def literal(self, text: str) -> None:
        self._message = text
        self.args = (self.code, text)

    def render(self, vocabulary: Vocabulary | None = None) -> str:
        """The text in the words of one tool (its argument names)."""
        if self._message is not None:
            return self._message
        assert self._template is not None
        return render(self._template, self.path, self.details, vocabulary)

    def __str__(self) -> str:
        return f"{self.code.value}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code.value!r}, {self.message!r})"

    def __reduce__(self) -> Any:
        # Crosses process boundaries (multiprocessing) as the facts it carries.
        return (_rebuild, (type(self), self.code, self._message, self.path, self.reason,
                           self._template, _picklable(self.details)))


def _picklable(value: Any) -> Any:
    """``value`` with every read-only mapping in it (a catalogue sentence's details are
    one, and do not pickle) made a dict, tuples of every kind kept as they are."""
    if isinstance(value, dict | MappingProxyType):
        return {k: _picklable(v) for k, v in value.items()}
    if isinstance(value, tuple):
        items = [_picklable(v) for v in value]
        if hasattr(value, "_fields"):  # a named tuple
            return type(value)(*items)
        return type(value)(items)
    if isinstance(value, list):
        return [_picklable(v) for v in value]
    return value


def _rebuild(
    cls: type[FsError],
    code: ErrorCode,
    message: str | None,
    path: str | None,
    reason: str | None,
    template: str | None,
    details: dict[str, Any],
) -> FsError:
    err = FsError.__new__(cls)
    FsError.__init__(err, code, message, path=path, reason=template, details=details)
    err.reason = reason
    return err


ConflictReason = Literal["exists", "mismatch", "missing"]
"""Why a precondition failed: CreateOnly met an object, IfMatch met another version,
IfMatch met no object at all."""


class ConflictKind(StrEnum):
    """A :data:`ConflictReason` as a typed value, for code that branches on it
    (``c.reason == ConflictKind.missing``); equal to the string it names."""

    exists = auto()
    mismatch = auto()
    missing = auto()


_DEFAULT_CODE: dict[str, ErrorCode] = {
    "exists": ErrorCode.FS_ALREADY_EXISTS,
    "mismatch": ErrorCode.FS_STALE,
    "missing": ErrorCode.FS_NOT_FOUND,
}


class Conflict(FsError):
    """A storage-side precondition failed; nothing was written.

    ``reason`` is the conflict's kind; the message defaults to the catalogue's sentence for
    it (``conflict_exists`` ...), about ``path``.
    """

    resent: bool = False
    """Whether the refusal may answer a resend of this very request: the store's client
    sent it again after an earlier attempt's answer was lost (or cannot say it did not),
    and that attempt may have done what was asked (a delete that then finds no file). A
    refusal without it is the store's definitive answer: another writer's change."""

    def __init__(
        self, reason: ConflictReason, message: str | None = None, *, path: str | None = None,
        resent: bool = False,
    ) -> None:
        super().__init__(_DEFAULT_CODE[reason], message, path=path, reason=f"conflict_{reason}")
        self.reason: ConflictKind = ConflictKind(reason)
        self.resent = resent

    def __reduce__(self) -> Any:
        return (_rebuild_conflict, (type(self), self.reason.value, self._message, self.path,
                                    self.resent))


def _rebuild_conflict(cls: type[Conflict], reason: ConflictReason, message: str | None,
                      path: str | None, resent: bool) -> Conflict:
    err = Conflict.__new__(cls)
    Conflict.__init__(err, reason, message, path=path, resent=resent)
    return err
