"""The audit trail (docs/audit.md): every change of a workspace's files, by whom, through
which call, from which version to which as the store names them, in a hash chain kept
create-only in any store fsseam opens.

``Workspace(url, audit=...)`` records (:class:`AuditedBackend`); :class:`AuditTrail` reads
a trail, appends to it, anchors its head and checks it (:meth:`AuditTrail.verify`, an
:class:`AuditReport`).
"""

from __future__ import annotations

from .backend import AuditedBackend, Digests
from .entry import Anchor, AuditEntry
from .trail import FOLDER, AuditTarget, AuditTrail, open_target, shared_trail
from .verify import AuditProblem, AuditReport

__all__ = [
    "FOLDER",
    "Anchor",
    "AuditEntry",
    "AuditProblem",
    "AuditReport",
    "AuditTarget",
    "AuditTrail",
    "AuditedBackend",
    "Digests",
    "open_target",
    "shared_trail",
]
