"""Did our own write land although its call failed?"""

from __future__ import annotations

from typing import Protocol

from ...errors import FsError
from ...versions import Precondition, SameChange, Version, same_change
from .client import ObjectHead
from .errors import AMBIGUOUS, Op, StoreAction, StoreFault

__all__ = ["after_failed_write"]


class Store(Protocol):
    """What the rule asks of the object-store backend: what a failure was, a look at the
    object, and the error to raise."""

    def fault_of(self, exc: BaseException, op: Op) -> StoreFault | None: ...

    def look(self, key: str) -> tuple[bool | None, ObjectHead | None]: ...

    def error_of(self, exc: BaseException, op: Op, key: str, action: StoreAction,
                 precondition: Precondition | None = None, exists: bool | None = None
                 ) -> FsError: ...


def after_failed_write(
    b: Store,
    exc: BaseException,
    op: Op,
    key: str,
    action: StoreAction,
    precondition: Precondition,
    write_id: str,
) -> Version | FsError:
    """Our write's version if it landed, else the error to raise.

    Clients resend a request whose answer was lost: a conditional resend then meets our
    own landed write (412), and a dropped connection leaves the outcome unknown. One HEAD,
    on this error path only, reads the write id back; the same look tells a changed object
    from a vanished one. Whether the object is ours is the one rule of
    :func:`~fsseam.versions.same_change` (equal bytes are not enough: two agents
    incrementing "5" both write "6", and the loser must hear it lost).
    """
    if b.fault_of(exc, op) not in AMBIGUOUS:
        return b.error_of(exc, op, key, action, precondition)
    exists, head = b.look(key)
    if head is not None and same_change(
            equal=True, moved=True, observed=True, ours=head.write_id == write_id,
            answered=False) is SameChange.OURS:
        return head.version
    return b.error_of(exc, op, key, action, precondition, exists=exists)
