"""str_replace_editor: view / create / str_replace / insert, the shape Anthropic's models
are trained on, over ctx.fs and its observation policy."""

from __future__ import annotations

from types import MappingProxyType
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, model_validator

from ..errors import ErrorCode, FsError
from ..messages import DEFAULT_VOCABULARY, Clause, Reason, Sentence, render
from ..outcomes import (
    EditOutcome,
    ImageOutcome,
    ListEntry,
    ListOutcome,
    ReadOutcome,
    RestoreOutcome,
    WriteOutcome,
)
from ..seam import Seam
from .base import Tool
from .render import (
    MAX_LINE_CHARS,
    fit,
    listed,
    numbered,
    numbered_fit,
    render_image,
    shown_lines,
)

__all__ = [
    "EDITOR_VOCABULARY",
    "EditorArgs",
    "EditorOutcome",
    "StrReplaceEditor",
    "clipped_view",
]

EditorOutcome = (
    ReadOutcome | ImageOutcome | ListOutcome | WriteOutcome | EditOutcome | RestoreOutcome
)

EDITOR_VOCABULARY = MappingProxyType(
    {
        **DEFAULT_VOCABULARY,
        "old": "old_str",
        "new": "new_str",
        "content": "file_text",
        "text": "new_str",
        "all_hint": "",
        "modify": "str_replace (or insert)",
        "reread": "View",
    }
)

DEFAULT_MAX_OUTPUT_CHARS = 16_000
SKIP_DIRS = frozenset({"node_modules", ".venv", "venv", "site-packages", "__pycache__"})


class _Cmd(BaseModel):
    model_config = ConfigDict(extra="forbid")
    path: str = Field(description="Absolute path in the workspace, e.g. /src/app.py.")


class ViewCmd(_Cmd):
    command: Literal["view"]
    view_range: tuple[int, int] | None = None


class CreateCmd(_Cmd):
    command: Literal["create"]
    file_text: str


class StrReplaceCmd(_Cmd):
    command: Literal["str_replace"]
    old_str: str
    new_str: str = ""


class InsertCmd(_Cmd):
    command: Literal["insert"]
    insert_line: int
    new_str: str | None = None
    insert_text: str | None = None

    @model_validator(mode="after")
    def _one_text(self) -> InsertCmd:
        if self.new_str is None and self.insert_text is None:
            raise ValueError(render(Clause.insert_text_missing, vocabulary=EDITOR_VOCABULARY))
        if (
            self.new_str is not None
            and self.insert_text is not None
            and self.new_str != self.insert_text
        ):
            raise ValueError(render(Clause.insert_text_twice, vocabulary=EDITOR_VOCABULARY))
        return self

    @property
    def text(self) -> str:
        return self.new_str if self.new_str is not None else (self.insert_text or "")


class UndoCmd(_Cmd):
    command: Literal["undo_edit"]


class EditorArgs(RootModel[Any]):
    root: Annotated[
        ViewCmd | CreateCmd | StrReplaceCmd | InsertCmd | UndoCmd, Field(discriminator="command")
    ]


class _Flat(BaseModel):
    """The flat schema the model sees (one object; `command` selects the fields)."""

    command: Literal["view", "create", "str_replace", "insert", "undo_edit"] = Field(
        description="The command to run: view, create, str_replace, insert or undo_edit."
    )
    path: str = Field(description="Absolute path in the workspace, e.g. /src/app.py.")
    file_text: str | None = Field(
        default=None, description="create: the content of the new file."
    )
    old_str: str | None = Field(
        default=None,
        description="str_replace: the exact text to replace, copied from a view without the "
        "line-number prefix (tabs and indentation included). Must occur exactly once.",
    )
    new_str: str | None = Field(
        default=None,
        description="str_replace: the replacement text (empty to delete). insert: the text "
        "to insert.",
    )
    insert_line: int | None = Field(
        default=None,
        description="insert: where the text goes: at the start of line insert_line + 1 (0 = "
        "the start of the file, the number of lines = its end).",
    )
    insert_text: str | None = Field(
        default=None, description="insert: the text to insert (same as new_str)."
    )
    view_range: list[int] | None = Field(
        default=None,
        description="view: [start, end] 1-based line numbers to show; end -1 means the end of "
        "the file.",
    )


EDITOR_DESCRIPTION = (
    "View, create and edit files.\n"
    "* view: a file is shown in `cat -n` format (line number, tab, the line exactly as in the "
    "file, tabs kept), so shown text can be copied into old_str; a directory lists files two "
    "levels deep, without hidden, dependency and cache entries. Long output is clipped with a "
    "notice saying how to see the rest (view_range).\n"
    "* create: makes a new file; it never replaces an existing one (view it and use "
    "str_replace instead). A path that does not exist needs no view first.\n"
    "* str_replace: replaces old_str, which must occur exactly once, with new_str. No fuzzy "
    "matching; whitespace counts.\n"
    "* insert: inserts new_str verbatim at the start of line insert_line + 1 (0 = the start "
    "of the file, the number of lines = its end). No newline is added: end new_str with a "
    "newline to insert whole lines.\n"
    "* undo_edit: takes back your last change of the file (create, str_replace, insert), "
    "newest first; refused (FS_STALE, showing what changed) if someone else changed the file "
    "after your change. Needs storage that keeps versions (FS_UNSUPPORTED says how).\n"
    "Observation rules: str_replace and insert need a view of the file first, and the file "
    "must not have changed since your view (or your own last edit); otherwise they are "
    "refused (FS_NOT_OBSERVED or FS_STALE) and nothing is changed. FS_STALE shows what "
    "changed since your view: when it shows all of it and your old_str still occurs once, "
    "retry the str_replace as it is; otherwise view the file again and retry. Newline "
    "style, BOM and every byte outside your "
    "change are kept."
)


def _skip(entry: ListEntry) -> bool:
    name = entry.path.rsplit("/", 1)[-1]
    return name.startswith(".") or name in SKIP_DIRS or name.endswith(".pyc")


class StrReplaceEditor(Tool[EditorArgs, EditorOutcome]):
    name = "str_replace_editor"
    args_model = EditorArgs
    vocabulary = EDITOR_VOCABULARY

    def __init__(
        self,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        description: str = EDITOR_DESCRIPTION,
    ) -> None:
        self.max_output_chars = max_output_chars
        self.description = description

    def parameters(self) -> dict[str, Any]:
        from .schema import clean_schema

        schema = clean_schema(_Flat.model_json_schema())
        return {
            "type": "object",
            "properties": schema["properties"],
            "required": ["command", "path"],
            "additionalProperties": False,
        }

    def prepare(self, args: dict[str, Any]) -> dict[str, Any]:
        # Models often send every field, with null for those a command does not use.
        return {k: v for k, v in args.items() if v is not None}

    def run(self, fs: Seam, args: EditorArgs) -> EditorOutcome:
        cmd = args.root
        if isinstance(cmd, ViewCmd):
            return self._view(fs, cmd)
        if isinstance(cmd, CreateCmd):
            return fs.create(cmd.path, cmd.file_text)
        if isinstance(cmd, StrReplaceCmd):
            return fs.replace(cmd.path, cmd.old_str, cmd.new_str)
        if isinstance(cmd, UndoCmd):
            return fs.undo(cmd.path)
        return fs.insert(cmd.path, cmd.insert_line, cmd.text)

    def _view(self, fs: Seam, cmd: ViewCmd) -> ReadOutcome | ImageOutcome | ListOutcome:
        try:
            # Nothing past what the output can show is held (a view to the end of a
            # 256 MiB file of short lines once took 4 GiB).
            budget = {"max_chars": self.max_output_chars, "max_line_chars": MAX_LINE_CHARS}
            if cmd.view_range is None:
                # An image is shown as the read tool shows it (as Claude Code's viewer
                # does); a view_range of an image is FS_NOT_TEXT.
                return fs.read_any(cmd.path, **budget)
            start, end = cmd.view_range
            if start < 1 or (end != -1 and end < start):
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    reason=Reason.view_range_invalid,
                    details={"start": start, "end": end},
                )
            limit = None if end == -1 else end - start + 1
            if end == -1:
                limit = 1 << 30
            return fs.read(cmd.path, start, limit, **budget)
        except FsError as e:
            if e.code is not ErrorCode.FS_IS_DIRECTORY:
                raise
            if cmd.view_range is not None:
                raise FsError(
                    ErrorCode.FS_INVALID_ARGUMENT,
                    path=e.path or cmd.path,
                    reason=Reason.view_range_directory,
                ) from None
            # The editor's view of a directory is the tree as it is (hidden names aside),
            # not a finder's: the ignore files leave nothing out of it.
            return fs.list(cmd.path, depth=2, skip=_skip,
                           max_chars=self.max_output_chars, include_ignored=True)

    # -- rendering -------------------------------------------------------
    def render(self, outcome: EditorOutcome) -> str:
        if isinstance(outcome, ReadOutcome):
            return self._render_view(outcome)
        if isinstance(outcome, ImageOutcome):
            return render_image(outcome)
        if isinstance(outcome, ListOutcome):
            return self._render_listing(outcome)
        if isinstance(outcome, WriteOutcome):
            return render(Reason.editor_create_unchanged if outcome.unchanged
                          else Reason.file_created, outcome.path)
        if isinstance(outcome, RestoreOutcome):
            return self._render_undo(outcome)
        if outcome.unchanged:
            what = Reason.editor_edit_unchanged
        elif outcome.operation == "insert":
            what = Reason.editor_inserted
        else:
            what = Reason.file_edited
        snippet = "\n".join(numbered(outcome.snippet, outcome.snippet_start))
        return render(Reason.editor_snippet, outcome.path, {
            "what": Sentence(what, {"first_line": outcome.first_line}), "snippet": snippet})

    def _render_undo(self, o: RestoreOutcome) -> str:
        if o.deleted:
            return render(Reason.editor_undo_created, o.path)
        what = render(Reason.editor_undo_unchanged if o.unchanged else Reason.editor_undone,
                      o.path)
        if o.lines is None:
            return what
        head = f"{what} {render(Reason.cat_view, o.path)}\n"
        if not o.lines:
            return head + render(Reason.view_empty)
        rows = numbered(o.lines, 1)
        shown = fit(rows, self.max_output_chars - len(head))
        body = head + "\n".join(rows[:shown])
        if shown < len(rows):
            body += "\n" + clipped_view(1, shown, len(rows))
        return body

    def _render_view(self, o: ReadOutcome) -> str:
        head = render(Reason.cat_view, o.path) + "\n"
        if o.total == 0:
            return head + render(Reason.view_empty)
        text, shown = numbered_fit(o.lines, o.offset, o.cut, self.max_output_chars - len(head))
        last = o.offset + shown - 1
        body = head + text + "\n"
        more = shown < len(o.lines) or o.total is None or last < o.total
        if not more:
            return body
        return body + clipped_view(o.offset, last, o.total)

    def _render_listing(self, o: ListOutcome) -> str:
        rows = [listed(e) for e in o.entries]
        head = render(Reason.editor_listing, o.path) + "\n"
        shown = fit(rows, self.max_output_chars - len(head))
        text = head + "\n".join(rows[:shown])
        hidden = len(rows) - shown + o.more
        if hidden:
            text += "\n" + render(Reason.listing_clipped, details={"hidden": hidden})
        if o.omitted:
            text += "\n" + render(Reason.list_omitted, details={"omitted": o.omitted})
        return text


def clipped_view(first: int, last: int, total: int | None, of: bool = True) -> str:
    """The notice of a view cut short: the lines shown (``of`` the total, when known and
    wanted) and the view_range that shows the next ones."""
    return render(Reason.view_clipped, details={
        "first": first, "last": last, "total": total, "next": last + 1,
        "end": -1 if total is None else total,
        "shown": shown_lines(total if of else None)})
