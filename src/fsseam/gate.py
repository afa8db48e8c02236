"""The fs/* event gate: pluggy hookspecs, one hook per event name.

    fs/read          -> fs_read(event: ReadEvent)
    fs/missing       -> fs_missing(event: MissingEvent)
    fs/stat          -> fs_stat(event: StatEvent)
    fs/list          -> fs_list(event: ListEvent)
    fs/write-intent  -> fs_write_intent(event: WriteIntent)
    fs/edit-intent   -> fs_edit_intent(event: EditIntent)
    fs/written       -> fs_written(event: WrittenEvent)
    fs/delete-intent -> fs_delete_intent(event: DeleteIntent)
    fs/deleted       -> fs_deleted(event: DeletedEvent)
    fs/undo-intent   -> fs_undo_intent(event: UndoIntent)

Plugins are objects with ``@hookimpl`` methods, passed to the Workspace or loaded from the
entry-point group ``fsseam.plugins``. pluggy validates each implementation against the spec.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import pluggy

from .events import (
    DeletedEvent,
    DeleteIntent,
    EditIntent,
    FsEvent,
    Guard,
    Intent,
    ListEvent,
    MissingEvent,
    ReadEvent,
    StatEvent,
    UndoIntent,
    WriteIntent,
    WrittenEvent,
)

__all__ = ["EVENT_HOOKS", "PLUGIN_ENTRY_POINT_GROUP", "Gate", "hookimpl", "hookspec"]

PROJECT = "fsseam"
PLUGIN_ENTRY_POINT_GROUP = "fsseam.plugins"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)
_log = logging.getLogger("fsseam.gate")

EVENT_HOOKS: dict[str, str] = {
    "fs/read": "fs_read",
    "fs/missing": "fs_missing",
    "fs/stat": "fs_stat",
    "fs/list": "fs_list",
    "fs/write-intent": "fs_write_intent",
    "fs/edit-intent": "fs_edit_intent",
    "fs/written": "fs_written",
    "fs/delete-intent": "fs_delete_intent",
    "fs/deleted": "fs_deleted",
    "fs/undo-intent": "fs_undo_intent",
}


class FsHookSpecs:
    @hookspec
    def fs_read(self, event: ReadEvent) -> None:
        """A read succeeded (a window counts)."""

    @hookspec
    def fs_missing(self, event: MissingEvent) -> None:
        """A read, view or edit found no file at the path."""

    @hookspec
    def fs_stat(self, event: StatEvent) -> None:
        """A stat answered; raise FsError to veto (e.g. FS_NOT_FOUND to hide a path)."""

    @hookspec
    def fs_list(self, event: ListEvent) -> None:
        """Entries are about to be listed (or walked): remove from ``event.entries`` the
        ones to hide."""

    @hookspec
    def fs_write_intent(self, event: WriteIntent) -> None:
        """A whole-file write or create is about to happen: set ``event.precondition``, or
        raise FsError to veto."""

    @hookspec
    def fs_edit_intent(self, event: EditIntent) -> None:
        """An edit of the file at ``event.current`` is about to be written: set
        ``event.precondition``, or raise FsError to veto."""

    @hookspec
    def fs_written(self, event: WrittenEvent) -> None:
        """A write landed; ``event.diff`` has the change for presentation surfaces."""

    @hookspec
    def fs_delete_intent(self, event: DeleteIntent) -> None:
        """A file is about to be deleted or moved away: set ``event.precondition``, or raise
        FsError to veto."""

    @hookspec
    def fs_deleted(self, event: DeletedEvent) -> None:
        """A file was deleted (or moved away)."""

    @hookspec
    def fs_undo_intent(self, event: UndoIntent) -> None:
        """An owner asks to undo its last change of a file: set ``event.before`` and
        ``event.after`` from what you recorded, or raise FsError to veto."""


class Gate:
    def __init__(self, plugins: Iterable[Any] = (), *, load_entry_points: bool = True) -> None:
        self.pm = pluggy.PluginManager(PROJECT)
        self.pm.add_hookspecs(FsHookSpecs)
        if load_entry_points:
            self.pm.load_setuptools_entrypoints(PLUGIN_ENTRY_POINT_GROUP)
        for plugin in plugins:
            self.register(plugin)

    def register(self, plugin: Any) -> None:
        self.pm.register(plugin)
        self.pm.check_pending()

    def hooked(self, event_name: str) -> bool:
        """Whether any plugin implements the hook of ``event_name``: a caller may skip
        building events nobody receives (a search's listings of thousands of files)."""
        return bool(getattr(self.pm.hook, EVENT_HOOKS[event_name]).get_hookimpls())

    def hooking(self, event_name: str) -> list[Any]:
        """The plugins that implement the hook of ``event_name``."""
        return [i.plugin for i in getattr(self.pm.hook, EVENT_HOOKS[event_name]).get_hookimpls()]

    def decide(self, intent: Intent) -> Guard:
        """The precondition a change carries and how its loss is explained: the seam's
        proposal on ``intent`` as the plugins leave it (the observation policy decides it
        from what the owner observed; another plugin may override it, or veto by raising
        FsError)."""
        self.dispatch(intent)
        return Guard(intent.precondition, intent.conflict_code, intent.conflict_reason,
                     intent.conflict_hint)

    def dispatch(self, event: FsEvent) -> None:
        hook = getattr(self.pm.hook, EVENT_HOOKS[event.name])
        if event.name == "fs/written":
            self._notify(hook, event)
            return
        hook(event=event)

    @staticmethod
    def _notify(hook: Any, event: FsEvent) -> None:
        """Run the hooks of an event about a write that has landed: it cannot be undone, so
        a hook that raises must not turn the call into a failure (the agent would retry a
        change already made). Each failure is logged; the other hooks still run."""
        impls = hook.get_hookimpls()
        if any(i.hookwrapper or i.wrapper for i in impls):
            try:
                hook(event=event)
            except Exception:
                _log.exception("a plugin failed on %s for %s", event.name, event.path)
            return
        for impl in reversed(impls):  # pluggy's call order
            try:
                impl.function(*[{"event": event}[name] for name in impl.argnames])
            except Exception:
                _log.exception(
                    "plugin %s failed on %s for %s; the write itself succeeded",
                    impl.plugin_name, event.name, event.path,
                )
