"""Did our own write land although its call failed?"""

from __future__ import annotations

from ...errors import FsError
from ...versions import Precondition, SameChange, Version, same_change
from .errors import AMBIGUOUS, Action, Op
from .view import StoreView

__all__ = ["after_failed_write"]


def after_failed_write(
    b: StoreView,
    exc: BaseException,
    op: Op,
    key: str,
    action: Action,
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
    if b._fault(exc, op) not in AMBIGUOUS:
        return b._error(exc, op, key, action, precondition)
    exists, head = b._look(key)
    if head is not None and same_change(
            equal=True, moved=True, observed=True, ours=head.write_id == write_id,
            answered=False) is SameChange.OURS:
        return head.version
    return b._error(exc, op, key, action, precondition, exists=exists)
