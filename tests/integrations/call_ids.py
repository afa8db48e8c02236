"""What the call-id tests share: a plugin recording the call each change ran as, and a
file whose one edit appends a line (a change that, made twice, shows)."""

from __future__ import annotations

from fsseam import DeletedEvent, WrittenEvent, calling, hookimpl

NOTES = b"alpha\nbeta\ngamma\n"
APPENDED = NOTES + b"delta\n"
APPEND = {"file_path": "/notes.txt", "old_string": "gamma\n", "new_string": "gamma\ndelta\n"}
"""An edit that appends a line: run twice, the file has two."""


class CallIds:
    """A plugin: the call each change ran as, ``(path, call id, tool)``, in order."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str | None, str | None]] = []

    def _note(self, path: str) -> None:
        running = calling.current()
        self.seen.append((path, None if running is None else running.call_id,
                          None if running is None else running.tool))

    @hookimpl
    def fs_written(self, event: WrittenEvent) -> None:
        self._note(event.path)

    @hookimpl
    def fs_deleted(self, event: DeletedEvent) -> None:
        self._note(event.path)
