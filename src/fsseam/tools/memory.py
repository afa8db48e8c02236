"""memory: Anthropic's memory tool (``memory_20250818``) over ctx.fs, under ``/memories``.

The commands and argument names are exactly those of Anthropic's memory tool: ``view``
(``path``, ``view_range``), ``create`` (``path``, ``file_text``), ``str_replace`` (``path``,
``old_str``, ``new_str``), ``insert`` (``path``, ``insert_line``, ``insert_text``),
``delete`` (``path``) and ``rename`` (``old_path``, ``new_path``); the texts of successful
calls are those of Anthropic's reference implementation. Unlike it, every modification is
guarded like the other tools: changing, deleting or renaming a file needs a view of it
first, at its current version, and a directory is deleted or renamed as one change of all
its files, all or nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel

from ..changes import Delete, DocEdit, FileChange, Update
from ..edits import Insert, insert
from ..errors import ErrorCode, FsError
from ..messages import Reason, render
from ..outcomes import (
    ChangeOutcome,
    DeleteOutcome,
    EditOutcome,
    ListEntry,
    ListOutcome,
    MoveOutcome,
    ReadOutcome,
    WriteOutcome,
)
from ..paths import display
from ..seam import Seam, smallest
from ..text import TextDoc
from .base import Tool
from .changes import not_applied
from .editor import EDITOR_VOCABULARY, SKIP_DIRS, clipped_view
from .render import MAX_LINE_CHARS, fit, numbered, numbered_fit

__all__ = ["MEMORY_ROOT", "MEMORY_VOCABULARY", "MemoryArgs", "MemoryOutcome", "MemoryTool"]

MEMORY_ROOT = "memories"
"""The key of ``/memories``."""

MEMORY_VOCABULARY = MappingProxyType(
    {**EDITOR_VOCABULARY, "text": "insert_text", "reread": "View"}
)

DEFAULT_MAX_OUTPUT_CHARS = 16_000

MEMORY_DESCRIPTION = (
    "Your memory directory, /memories: view, create and edit files there to keep what you "
    "learn across conversations. Every path must be under /memories.\n"
    "* view: a file with line numbers (view_range [start, end] for part of it; end -1 is the "
    "end), or a directory two levels deep.\n"
    "* create: a new file with file_text; it never replaces an existing file.\n"
    "* str_replace: replaces old_str, which must occur exactly once, with new_str (exact "
    "matching, whitespace counts).\n"
    "* insert: inserts insert_text as whole lines before line insert_line + 1 (0 = the start "
    "of the file, the number of lines = its end).\n"
    "* delete: a file, or a directory with every file in it.\n"
    "* rename: moves old_path to new_path, which must not exist.\n"
    "str_replace, insert, delete and rename need a view of each file they change first, and "
    "the file must not have changed since (FS_NOT_OBSERVED or FS_STALE otherwise): view it "
    "again and retry. A directory is deleted or renamed all or nothing."
)


class _Cmd(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemView(_Cmd):
    command: Literal["view"]
    # A view that names no path shows the memory directory: a strict-mode call sends null
    # for each argument it leaves out, and the one place a view can mean is /memories.
    path: str = "/" + MEMORY_ROOT
    view_range: tuple[int, int] | None = None


class MemCreate(_Cmd):
    command: Literal["create"]
    path: str
    file_text: str


class MemStrReplace(_Cmd):
    command: Literal["str_replace"]
    path: str
    old_str: str
    new_str: str = ""


class MemInsert(_Cmd):
    command: Literal["insert"]
    path: str
    insert_line: int
    insert_text: str


class MemDelete(_Cmd):
    command: Literal["delete"]
    path: str


class MemRename(_Cmd):
    command: Literal["rename"]
    old_path: str
    new_path: str


MemoryCommand = MemView | MemCreate | MemStrReplace | MemInsert | MemDelete | MemRename


class MemoryArgs(RootModel[Any]):
    root: Annotated[MemoryCommand, Field(discriminator="command")]


class _Flat(BaseModel):
    """The flat schema the model sees (one object; ``command`` selects the fields)."""

    command: Literal["view", "create", "str_replace", "insert", "delete", "rename"] = Field(
        description="The command: view, create, str_replace, insert, delete or rename."
    )
    path: str | None = Field(
        default=None,
        description="The file or directory, under /memories (all commands but rename).",
    )
    view_range: list[int] | None = Field(
        default=None,
        description="view: [start, end] 1-based line numbers to show; end -1 means the end of "
        "the file.",
    )
    file_text: str | None = Field(default=None, description="create: the new file's content.")
    old_str: str | None = Field(
        default=None,
        description="str_replace: the exact text to replace; must occur exactly once.",
    )
    new_str: str | None = Field(default=None, description="str_replace: the replacement.")
    insert_line: int | None = Field(
        default=None,
        description="insert: the line the text goes after (0 = before the first line).",
    )
    insert_text: str | None = Field(default=None, description="insert: the lines to insert.")
    old_path: str | None = Field(default=None, description="rename: the current path.")
    new_path: str | None = Field(
        default=None, description="rename: the new path (must not exist)."
    )


MemoryResult = (
    ReadOutcome | ListOutcome | WriteOutcome | EditOutcome | DeleteOutcome | MoveOutcome
    | ChangeOutcome
)


class MemoryOutcome(BaseModel):
    """What one memory command did (``result``: the outcome of the seam call)."""

    model_config = ConfigDict(frozen=True)
    kind: Literal["memory"] = "memory"
    command: Literal["view", "create", "str_replace", "insert", "delete", "rename"]
    path: str
    new_path: str | None = None
    result: MemoryResult

    @property
    def diff(self) -> str | None:
        """The change's diff, for presentation surfaces."""
        return getattr(self.result, "diff", None)


def _key(fs: Seam, path: str) -> str:
    """The key of a path that must lie under /memories (FS_OUTSIDE_ROOT otherwise)."""
    key = fs.key(path)
    if key != MEMORY_ROOT and not key.startswith(MEMORY_ROOT + "/"):
        raise FsError(ErrorCode.FS_OUTSIDE_ROOT, path=path, reason=Reason.memory_outside)
    return key


def _inner(fs: Seam, path: str, action: str) -> str:
    """The key of a path strictly inside /memories."""
    key = _key(fs, path)
    if key == MEMORY_ROOT:
        raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.memory_root,
                      details={"action": action})
    return key


def _whole_directory(run: Callable[[], ChangeOutcome]) -> ChangeOutcome:
    """Run a change of every file of a directory; its errors say nothing was applied."""
    try:
        return run()
    except FsError as e:
        e.details["whole_directory"] = True
        raise


def _lines_edit(line: int, text: str) -> DocEdit:
    """An insert of whole lines, as the memory tool inserts: a missing final newline is
    added, and a file without one keeps it that way when the lines go at its end."""

    def edit(doc: TextDoc, path: str) -> TextDoc:
        body = text if text.endswith("\n") else text + "\n"
        view = doc.view
        if line == len(doc.lines) and view and not view.endswith("\n"):
            body = "\n" + body[:-1]
        return insert(doc, Insert(line, body), path)[0]

    return edit


# -- the views: a directory's rows from one walk, the texts of a file and a directory view,
# as Anthropic's reference memory tool shows them ----------------------------------------
def _size(n: int | None) -> str:
    """Sizes as Anthropic's reference memory tool shows them (``512B``, ``1.5K``)."""
    if n is None:
        return "-"
    if n == 0:
        return "0B"
    units = ["B", "K", "M", "G"]
    i = min((n.bit_length() - 1) // 10, len(units) - 1)
    size = n / (1024**i)
    return f"{int(size)}{units[i]}" if size == int(size) else f"{size:.1f}{units[i]}"


_Row = tuple[str, Literal["file", "directory"], int | None, int]


def _rows(fs: Seam, key: str, base: str) -> Iterator[_Row]:
    """The rows of a memory directory's view, from its walk, unsorted: each directory
    that holds a file (to two levels) once, and each file two levels deep. A walk is in
    key order, so the files below one directory come one after another: the last
    directory given at each level is all that is remembered."""
    last: dict[int, str] = {}
    for e in fs.walk(display(key)):
        if e.type != "file":
            continue
        parts = e.path[len(base) + 1:].split("/")
        if any(p.startswith(".") or p in SKIP_DIRS for p in parts):
            continue
        for depth in range(1, min(len(parts), 3)):
            d = f"{base}/{'/'.join(parts[:depth])}"
            if last.get(depth) != d:
                last[depth] = d
                yield d, "directory", None, depth
        if len(parts) <= 2:
            yield e.path, "file", e.size, len(parts)


def _row_path(row: _Row) -> str:
    return row[0]


def _row_cost(row: _Row) -> int:
    return len(row[0]) + 3  # at least "-", a tab, the path and a newline


def listing(fs: Seam, key: str, max_chars: int) -> ListOutcome:
    """Files two levels deep and the directories that hold them, from one walk: a
    directory whose files were all deleted or moved is gone, on every store (local
    empty directories are not shown). Only as many rows are kept as the output could
    show; the rest are counted."""
    base = display(key).rstrip("/")
    kept, total = smallest(_rows(fs, key, base), _row_path, _row_cost, max_chars)
    entries = [ListEntry(path=p, type=t, size=size, depth=depth)
               for p, t, size, depth in kept]
    more = total - len(kept)
    return ListOutcome(path=display(key), entries=entries, more=more)


def render_file(o: ReadOutcome, max_chars: int) -> str:
    """A file's view: its lines, numbered, in ``max_chars``."""
    head = render(Reason.memory_file, o.path) + "\n"
    if o.total == 0:
        return head + render(Reason.view_empty)
    text, shown = numbered_fit(o.lines, o.offset, o.cut, max_chars - len(head))
    last = o.offset + shown - 1
    body = head + text
    if shown < len(o.lines) or o.total is None or last < o.total:
        # Anthropic's memory tool names no total in the notice: neither does this one.
        body += "\n" + clipped_view(o.offset, last, o.total, of=False)
    return body


def render_directory(o: ListOutcome, max_chars: int) -> str:
    """A directory's view: a size and a path a row, in ``max_chars``."""
    head = render(Reason.memory_listing, o.path) + "\n"
    rows = [f"-\t{o.path}"]
    for e in o.entries:
        if e.type == "directory":
            rows.append(f"-\t{e.path}/")
        elif e.type == "file":
            rows.append(f"{_size(e.size)}\t{e.path}")
    shown = fit(rows, max_chars - len(head))
    text = head + "\n".join(rows[:shown])
    hidden = len(rows) - shown + o.more
    if hidden:
        text += "\n" + render(Reason.listing_clipped, details={"hidden": hidden})
    return text


class MemoryTool(Tool[MemoryArgs, MemoryOutcome]):
    name = "memory"
    args_model = MemoryArgs
    vocabulary = MEMORY_VOCABULARY

    def __init__(
        self,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        description: str = MEMORY_DESCRIPTION,
    ) -> None:
        self.max_output_chars = max_output_chars
        self.description = description

    def parameters(self) -> dict[str, Any]:
        from .schema import clean_schema

        schema = clean_schema(_Flat.model_json_schema())
        return {
            "type": "object",
            "properties": schema["properties"],
            "required": ["command"],
            "additionalProperties": False,
        }

    def prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        # Models often send every field, with null for those a command does not use.
        return {k: v for k, v in args.items() if v is not None}

    def run(self, fs: Seam, args: MemoryArgs) -> MemoryOutcome:
        cmd = args.root
        if isinstance(cmd, MemRename):
            return self._rename(fs, cmd)
        result: MemoryResult
        if isinstance(cmd, MemView):
            result = self._view(fs, cmd)
        elif isinstance(cmd, MemCreate):
            result = fs.create(display(_inner(fs, cmd.path, "created")), cmd.file_text)
        elif isinstance(cmd, MemStrReplace):
            key = _inner(fs, cmd.path, "edited")
            result = fs.replace(display(key), cmd.old_str, cmd.new_str)
        elif isinstance(cmd, MemInsert):
            key = _inner(fs, cmd.path, "edited")
            result = fs.change([Update(display(key), _lines_edit(cmd.insert_line,
                                                                  cmd.insert_text))])
        else:
            result = self._delete(fs, cmd)
        return MemoryOutcome(command=cmd.command, path=cmd.path, result=result)

    # -- commands ----------------------------------------------------------
    def _view(self, fs: Seam, cmd: MemView) -> ReadOutcome | ListOutcome:
        key = _key(fs, cmd.path)
        budget = {"max_chars": self.max_output_chars, "max_line_chars": MAX_LINE_CHARS}
        try:
            if cmd.view_range is None:
                return fs.read(display(key), **budget)
            start, end = cmd.view_range
            if start < 1 or (end != -1 and end < start):
                raise FsError(ErrorCode.FS_INVALID_ARGUMENT, reason=Reason.view_range_invalid,
                              details={"start": start, "end": end})
            limit = (1 << 30) if end == -1 else end - start + 1
            return fs.read(display(key), start, limit, **budget)
        except FsError as e:
            if e.code is ErrorCode.FS_NOT_FOUND and key == MEMORY_ROOT:
                # Created on first use: until a file is written there, it is empty.
                return ListOutcome(path=display(key), entries=[])
            if e.code is not ErrorCode.FS_IS_DIRECTORY:
                raise
            return listing(fs, key, self.max_output_chars)

    def _files(self, fs: Seam, key: str) -> list[str]:
        """The keys of every file below the directory ``key``."""
        return [fs.key(e.path) for e in fs.walk(display(key)) if e.type == "file"]

    def _delete(self, fs: Seam, cmd: MemDelete) -> ChangeOutcome:
        # Files go through Seam.change too: it compares the version observed with the one
        # it reads before deleting, so the guard holds even where a store ignores a
        # delete's precondition.
        key = _inner(fs, cmd.path, "deleted")
        if fs.stat(display(key)).type == "file":
            return fs.change([Delete(display(key))])
        files = self._files(fs, key)
        if not files:
            raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(key),
                          reason=Reason.memory_empty_directory, details={"action": "delete"})
        return _whole_directory(lambda: fs.change([Delete(display(k)) for k in files]))

    def _rename(self, fs: Seam, cmd: MemRename) -> MemoryOutcome:
        src = _inner(fs, cmd.old_path, "renamed")
        dst = _inner(fs, cmd.new_path, "replaced")
        result: ChangeOutcome
        if fs.stat(display(src)).type == "file":
            result = fs.change([Update(display(src), move_to=display(dst))])
        else:
            if dst == src or dst.startswith(src + "/"):
                raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(src),
                              reason=Reason.memory_into_itself,
                              details={"destination": display(dst)})
            files = self._files(fs, src)
            if not files:
                raise FsError(ErrorCode.FS_INVALID_ARGUMENT, path=display(src),
                              reason=Reason.memory_empty_directory, details={"action": "rename"})
            moves: list[FileChange] = [
                Update(display(k), move_to=display(dst + k[len(src):])) for k in files
            ]
            result = _whole_directory(lambda: fs.change(moves))
        return MemoryOutcome(command="rename", path=cmd.old_path, new_path=cmd.new_path,
                             result=result)

    # -- rendering -------------------------------------------------------
    def render(self, outcome: MemoryOutcome) -> str:
        r = outcome.result
        if isinstance(r, ReadOutcome):
            return render_file(r, self.max_output_chars)
        if isinstance(r, ListOutcome):
            return render_directory(r, self.max_output_chars)
        if outcome.command == "create":
            return render(Reason.file_created, outcome.path)
        if outcome.command == "str_replace" and isinstance(r, EditOutcome):
            rows = "\n".join(numbered(r.snippet, r.snippet_start))
            return render(Reason.memory_edited, details={"snippet": rows})
        if outcome.command == "insert":
            return render(Reason.file_edited, outcome.path)
        if outcome.command == "delete":
            return render(Reason.memory_deleted, outcome.path)
        return render(Reason.memory_renamed, outcome.path, {"new_path": outcome.new_path})

    def render_error(self, err: FsError) -> str:
        text = err.render(self.vocabulary)
        return not_applied(text, err) if err.details.get("whole_directory") else text
