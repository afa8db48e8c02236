"""Observations kept inside a workspace are no file of it: no tool sees or changes them.

Registered on the gate only when a workspace's observation store lies inside its root
(``s3://b/`` with observations at ``s3://b/.fsseam-observations/``): listings and walks
leave the reserved prefix out; a listing or search of it, and every read, stat, write,
edit, delete, move (either end) and undo of a key under it, is refused with
FS_PERMISSION_DENIED before anything changes.
"""

from __future__ import annotations

from ..errors import ErrorCode, FsError
from ..events import (
    DeleteIntent,
    EditIntent,
    ListEvent,
    MissingEvent,
    ReadEvent,
    StatEvent,
    UndoIntent,
    WriteIntent,
)
from ..gate import Gate, hookimpl
from ..messages import Reason

__all__ = ["ReservedKeys", "only_reservations"]


class ReservedKeys:
    """Hide and refuse the keys at or below ``prefix`` (a key relative to the root)."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix.strip("/")

    def __repr__(self) -> str:
        return f"ReservedKeys({self.prefix!r})"

    def reserved(self, key: str) -> bool:
        key = key.strip("/")
        if key == self.prefix or key.startswith(self.prefix + "/"):
            return True
        # A ledger file's lock (``FILE.lock``) and its temp files (``.FILE.*.tmp``) too.
        folder, _, name = self.prefix.rpartition("/")
        inside, _, base = key.rpartition("/")
        return inside == folder and (base == name + ".lock" or base.startswith(f".{name}."))

    def _refuse(self, key: str, path: str) -> None:
        if self.reserved(key):
            raise FsError(ErrorCode.FS_PERMISSION_DENIED, path=path,
                          reason=Reason.reserved_observations)

    @hookimpl(tryfirst=True)
    def fs_list(self, event: ListEvent) -> None:
        # A listing of the folder itself (or below it) is refused, not shown empty.
        self._refuse(event.key, event.path)
        event.entries = [e for e in event.entries if not self.reserved(e.key)]

    @hookimpl(tryfirst=True)
    def fs_read(self, event: ReadEvent) -> None:
        self._refuse(event.key, event.path)

    @hookimpl(tryfirst=True)
    def fs_missing(self, event: MissingEvent) -> None:
        self._refuse(event.key, event.path)

    @hookimpl(tryfirst=True)
    def fs_stat(self, event: StatEvent) -> None:
        self._refuse(event.key, event.path)

    @hookimpl(tryfirst=True)
    def fs_write_intent(self, event: WriteIntent) -> None:
        self._refuse(event.key, event.path)

    @hookimpl(tryfirst=True)
    def fs_edit_intent(self, event: EditIntent) -> None:
        self._refuse(event.key, event.path)

    @hookimpl(tryfirst=True)
    def fs_delete_intent(self, event: DeleteIntent) -> None:
        self._refuse(event.key, event.path)
        if event.destination is not None:
            self._refuse(event.destination, event.destination)

    @hookimpl(tryfirst=True)
    def fs_undo_intent(self, event: UndoIntent) -> None:
        self._refuse(event.key, event.path)


def only_reservations(gate: Gate) -> tuple[str, ...] | None:
    """The reserved prefixes, when only reservations filter listings (a search's fast paths
    leave their files out themselves); None when another plugin filters them."""
    prefixes = []
    for plugin in gate.hooking("fs/list"):
        if getattr(type(plugin), "fs_list", None) is not ReservedKeys.fs_list:
            return None
        prefixes.append(plugin.prefix)
    return tuple(prefixes)
